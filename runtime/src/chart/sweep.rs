//! The scaling sweep (the paper's Figure 3): runtime against input size on log-log axes, one
//! line per mode, where a mode stopped (out of memory, past the time limit) and from which
//! size the accelerator pages. plotters draws the frame, axes and lines; points, stop marks
//! and the paging line are SVG elements with `<title>` hover text, placed with the chart's own
//! coordinate mapping.

use super::*;
use plotters::coord::combinators::IntoLogRange;

/// One mode's line.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepSeries {
    pub mode: String,
    /// (log2 of the size, seconds, hover text), sizes ascending.
    pub points: Vec<(u32, f64, String)>,
    /// The size at which the mode stopped, and why ("out of memory", "time limit").
    pub stopped: Option<(u32, String)>,
}

const HEIGHT: u32 = 560;
const TEXT: u32 = 20;
const SMALL: u32 = 17;

/// `series` against size 2^k (x: `x_desc`); `paging_from`: the first size whose evaluation
/// paged through the accelerator, and the line's label.
pub fn sweep_svg(title: &str, x_desc: &str, series: &[SweepSeries], paging_from: Option<(u32, String)>) -> String {
    let ks: Vec<u32> = series.iter().flat_map(|s| s.points.iter().map(|p| p.0).chain(s.stopped.iter().map(|p| p.0))).chain(paging_from.iter().map(|p| p.0)).collect();
    let secs: Vec<f64> = series.iter().flat_map(|s| s.points.iter().map(|p| p.1)).filter(|s| *s > 0.0 && s.is_finite()).collect();
    if ks.is_empty() || secs.is_empty() {
        return bars::notice(title, "no size ran: nothing to draw");
    }
    draw(title, x_desc, series, paging_from, &ks, &secs).unwrap_or_else(bars::failed)
}

fn draw(title: &str, x_desc: &str, series: &[SweepSeries], paging_from: Option<(u32, String)>, ks: &[u32], secs: &[f64]) -> timeline::DrawResult<String> {
    let (k0, k1) = (*ks.iter().min().expect("sizes") as f64, *ks.iter().max().expect("sizes") as f64);
    let (xa, xb) = (k0 - 0.5, (k1 + 0.5).max(k0 + 1.5));
    let (lo, hi) = (secs.iter().copied().fold(f64::MAX, f64::min), secs.iter().copied().fold(0.0, f64::max));
    // Whole decades around the data, so the log axis has labelled ticks.
    // (The bottom a little under its decade: plotters labels only ticks inside the range.)
    let (ya, yb) = (0.8 * 10f64.powf((lo.log10() - 0.15).floor()), 10f64.powf((hi.log10() + 0.15).ceil()));
    // Lines must stand apart at a glance: fixed, strongly different colours by position.
    const LINES: [(u8, u8, u8); 5] = [(0x1f, 0x5f, 0xa8), (0xd9, 0x5f, 0x0e), (0x2e, 0x8b, 0x3a), (0x7b, 0x4f, 0xa6), (0x55, 0x55, 0x55)];
    let colors: Vec<(u8, u8, u8)> = (0..series.len()).map(|i| LINES[i % LINES.len()]).collect();
    let mut buf = String::new();
    let mut marks = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, HEIGHT)).into_drawing_area();
        root.fill(&WHITE)?;
        let mut chart = ChartBuilder::on(&root)
            .caption(clean(&truncate(title, 90)), (FONT, 22).into_font().style(FontStyle::Bold))
            .margin(SIDE + 8)
            .margin_right(SIDE + 150)
            .set_label_area_size(LabelAreaPosition::Left, 96)
            .set_label_area_size(LabelAreaPosition::Bottom, 56)
            .build_cartesian_2d(xa..xb, (ya..yb).log_scale())?;
        let fmt_y = |s: &f64| fmt_dur(s * 1e3);
        chart
            .configure_mesh()
            .disable_x_mesh()
            .x_labels(0)
            .y_label_formatter(&fmt_y)
            .x_desc(x_desc)
            .y_desc("time (log)")
            .label_style((FONT, SMALL))
            .axis_desc_style((FONT, SMALL))
            .bold_line_style(RGBColor(0xd8, 0xd8, 0xd8).stroke_width(1))
            .light_line_style(RGBColor(0xf0, 0xf0, 0xf0).stroke_width(1))
            .axis_style(RGBColor(0x66, 0x66, 0x66))
            .draw()?;
        let px = |k: f64, s: f64| chart.backend_coord(&(k, s.clamp(ya, yb)));
        // x ticks by hand: plotters picks its own key points on an f64 range, and sizes are
        // whole powers of two.
        let (_, top) = px(k0, yb);
        let (_, bottom) = px(k0, ya);
        for k in k0 as u32..=k1 as u32 {
            let (x, _) = px(k as f64, ya);
            let _ = write!(
                marks,
                "<line x1=\"{x}\" y1=\"{top}\" x2=\"{x}\" y2=\"{bottom}\" stroke=\"#e4e4e4\" stroke-width=\"1\"/><text x=\"{x}\" y=\"{}\" text-anchor=\"middle\" font-family=\"{FONT}\" font-size=\"{SMALL}\" fill=\"#333\">2^{k}</text>",
                bottom + SMALL as i32 + 6
            );
        }
        if let Some((k, label)) = &paging_from {
            let (x, top) = px(*k as f64 - 0.5, yb);
            let (_, bottom) = px(*k as f64, ya);
            // Two short lines beside the dashed line ("paging from 2^k", then the details), so
            // that the label stays clear of the legend.
            let (first, rest) = label.split_once(" (").map_or((label.as_str(), String::new()), |(a, b)| (a, format!("({b}")));
            let mut text =
                format!("<text x=\"{}\" y=\"{}\" font-family=\"{FONT}\" font-size=\"{}\" fill=\"#c0392b\">{}</text>", x + 6, top + 18, SMALL - 2, esc(&truncate(first, 36)));
            if !rest.is_empty() {
                let _ = write!(
                    text,
                    "<text x=\"{}\" y=\"{}\" font-family=\"{FONT}\" font-size=\"{}\" fill=\"#c0392b\">{}</text>",
                    x + 6,
                    top + 36,
                    SMALL - 2,
                    esc(&truncate(&rest, 36))
                );
            }
            let _ = write!(
                marks,
                "<g><title>{}</title><line x1=\"{x}\" y1=\"{top}\" x2=\"{x}\" y2=\"{bottom}\" stroke=\"#c0392b\" stroke-width=\"2\" stroke-dasharray=\"8 5\"/>{text}</g>",
                esc(label)
            );
        }
        for (s, &(r, g, b)) in series.iter().zip(&colors) {
            let line: Vec<String> = s.points.iter().map(|p| px(p.0 as f64, p.1)).map(|(x, y)| format!("{x},{y}")).collect();
            let _ = write!(marks, "<polyline points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"3\"/>", line.join(" "), hex((r, g, b)));
            for (k, sec, hover) in &s.points {
                let (x, y) = px(*k as f64, *sec);
                let _ = write!(marks, "<circle cx=\"{x}\" cy=\"{y}\" r=\"5\" fill=\"{}\"><title>{}</title></circle>", hex((r, g, b)), esc(hover));
            }
            if let Some((k, why)) = &s.stopped {
                // A cross where the next point would have been: at the last time reached.
                let last = s.points.last().map_or(ya, |p| p.1);
                let (x, y) = px(*k as f64, last);
                let _ = write!(
                    marks,
                    "<g><title>{}: stopped at 2^{k}: {}</title><path d=\"M{} {} L{} {} M{} {} L{} {}\" stroke=\"{}\" stroke-width=\"3\"/><text x=\"{}\" y=\"{}\" font-family=\"{FONT}\" font-size=\"{}\" fill=\"{}\">{}</text></g>",
                    esc(&s.mode),
                    esc(why),
                    x - 7,
                    y - 7,
                    x + 7,
                    y + 7,
                    x - 7,
                    y + 7,
                    x + 7,
                    y - 7,
                    hex((r, g, b)),
                    x + 10,
                    y + 5,
                    SMALL - 2,
                    hex((r, g, b)),
                    esc(&truncate(why, 24))
                );
            }
        }
        // The legend, right of the plot: one line per mode.
        let text = (FONT, TEXT).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
        let x = (WIDTH - SIDE - 150) as i32;
        for (i, (s, &(r, g, b))) in series.iter().zip(&colors).enumerate() {
            let y = 70 + 28 * i as i32;
            root.draw(&Rectangle::new([(x, y - 2), (x + 22, y + 2)], RGBColor(r, g, b).filled()))?;
            root.draw(&Text::new(clean(&truncate(&s.mode, 12)), (x + 28, y), text.clone()))?;
        }
        root.present()?;
    }
    Ok(bars::finish(buf, &marks))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(mode: &str, ks: std::ops::RangeInclusive<u32>, per_element: f64) -> SweepSeries {
        SweepSeries { mode: mode.into(), points: ks.map(|k| (k, per_element * (1u64 << k) as f64, format!("{mode} 2^{k}"))).collect(), stopped: None }
    }

    #[test]
    fn a_sweep_draws_its_lines_points_stops_and_paging_line() {
        let mut gpu = line("gpu", 10..=14, 1e-9);
        gpu.stopped = Some((15, "out of memory".into()));
        let svg =
            sweep_svg("black-scholes", "elements", &[line("cpu", 10..=16, 1e-8), line("bach", 10..=16, 5e-9), gpu], Some((14, "paging from 2^14 (device memory 1 MiB)".into())));
        assert!(svg.starts_with("<svg") && svg.contains("max-width:100%"), "{}", &svg[..200]);
        assert_eq!(svg.matches("<circle").count(), 7 + 7 + 5, "one hover point per size and mode");
        assert!(svg.contains("<title>bach 2^16</title>"));
        assert!(svg.contains("gpu: stopped at 2^15: out of memory"));
        assert!(svg.contains("stroke-dasharray") && svg.contains("paging from 2^14"));
        let t = crate::chart::tests::texts(&svg);
        for label in ["2^10", "2^16", "cpu", "bach", "gpu"] {
            assert!(t.iter().any(|s| s == label), "{label} (x tick or legend) in {t:?}");
        }
    }

    #[test]
    fn nothing_ran_says_so() {
        let svg = sweep_svg("tsvd", "rows", &[SweepSeries { mode: "cpu".into(), points: vec![], stopped: Some((10, "time limit".into())) }], None);
        assert!(svg.contains("no size ran"), "{svg}");
    }
}

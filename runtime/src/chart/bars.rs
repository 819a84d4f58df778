//! The frame the bar charts share (breakdown, predicted vs actual): plotters draws the title,
//! one labelled row per bar group, the time axis (linear or logarithmic) and a legend; the
//! bars themselves are `<rect>`s with `<title>` hover text placed by the returned mapping.

use super::*;
use plotters::coord::combinators::IntoLogRange;

/// Pixel rows and the time axis of a drawn frame.
pub(super) struct Frame {
    /// The SVG so far (bars go in before `</svg>`).
    pub(super) svg: String,
    /// Left and right pixel of the plot, and the axis's ends (seconds).
    px: (f64, f64),
    range: (f64, f64),
    log: bool,
    /// Top and bottom pixel of each row.
    pub(super) rows: Vec<(f64, f64)>,
    /// Right edge of the plot (for notes beside the bars).
    pub(super) right: f64,
}

impl Frame {
    /// Pixel of `seconds` on the time axis (clamped to it).
    pub(super) fn x(&self, seconds: f64) -> f64 {
        let (a, b) = self.range;
        let f = if self.log { (seconds.max(a).ln() - a.ln()) / (b.ln() - a.ln()) } else { (seconds - a) / (b - a) };
        self.px.0 + f.clamp(0.0, 1.0) * (self.px.1 - self.px.0)
    }
    /// Add SVG elements (bars, notes) on top and finish the document.
    pub(super) fn finish(self, marks: &str) -> String {
        finish(self.svg, marks)
    }
}

/// Add `marks` (SVG elements) on top of plotters' `svg` and let the chart scale to the output
/// area.
pub(super) fn finish(mut svg: String, marks: &str) -> String {
    if let Some(at) = svg.rfind("</svg>") {
        svg.insert_str(at, marks);
    }
    svg.replacen("<svg ", "<svg style=\"max-width:100%;height:auto\" ", 1)
}

const NOTE_W: u32 = 96;
/// Plotters' font sizes are 1/1.24 of what they say: these are about 16 and 14 px, 13 and 11
/// px when the chart is shown 900 px wide.
const TEXT: u32 = 20;
const SMALL: u32 = 17;

/// Draw the frame: `title`, rows labelled `labels` (top to bottom) of `row_h` pixels, a time
/// axis over `range` seconds (log scale when `log`), and `legend` entries under it.
pub(super) fn frame(title: &str, subtitle: &str, labels: &[String], row_h: u32, range: (f64, f64), log: bool, legend: &[(String, Rgb)]) -> timeline::DrawResult<Frame> {
    let plot_h = row_h * labels.len().max(1) as u32;
    let legend_cols = 2usize;
    let legend_row = 24;
    let legend_h = 16 + legend_row * legend.len().div_ceil(legend_cols) as u32;
    let title_h = if subtitle.is_empty() { TITLE_H + 4 } else { TITLE_H + 26 };
    let label_w = (labels.iter().map(|l| text_px(&truncate(l, 48), TEXT)).fold(0.0, f64::max) + 24.0).clamp(80.0, 420.0) as u32;
    let height = title_h + 8 + plot_h + BOTTOM_LABELS + legend_h;
    let unit = if range.1 >= 1.0 { 1.0 } else { 1e-3 };
    let mut buf = String::new();
    let (px, rows) = {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (title_area, rest) = root.split_vertically(title_h);
        let (chart_area, legend_area) = rest.split_vertically(8 + plot_h + BOTTOM_LABELS);
        let bold = (FONT, 22).into_font().style(FontStyle::Bold).color(&BLACK).pos(Pos::new(HPos::Center, VPos::Center));
        title_area.draw(&Text::new(clean(&truncate(title, 100)), (WIDTH as i32 / 2, TITLE_H as i32 / 2 + 4), bold))?;
        if !subtitle.is_empty() {
            let grey = (FONT, SMALL).into_font().color(&RGBColor(0x55, 0x55, 0x55)).pos(Pos::new(HPos::Center, VPos::Center));
            title_area.draw(&Text::new(clean(&truncate(subtitle, 120)), (WIDTH as i32 / 2, TITLE_H as i32 + 12), grey))?;
        }
        let x_desc = if unit == 1.0 { "seconds" } else { "milliseconds" };
        let fmt_x = move |v: &f64| fmt_tick(v / unit);
        let mut builder = ChartBuilder::on(&chart_area);
        builder
            .margin_left(SIDE)
            .margin_right(SIDE + NOTE_W)
            .margin_top(8)
            .set_label_area_size(LabelAreaPosition::Left, label_w)
            .set_label_area_size(LabelAreaPosition::Bottom, BOTTOM_LABELS);
        let style = Axes { plot_h: plot_h as f64, ends: range, fmt_x: &fmt_x, x_desc };
        let (x0, x1, y0, y1) = if log { style.draw(builder, (range.0..range.1).log_scale())? } else { style.draw(builder, range.0..range.1)? };
        // Rows top to bottom, labels right-aligned left of the plot.
        let h = (y1 - y0) as f64 / labels.len().max(1) as f64;
        let rows: Vec<(f64, f64)> = (0..labels.len()).map(|i| (y0 as f64 + h * i as f64, y0 as f64 + h * (i + 1) as f64)).collect();
        let label_style = (FONT, TEXT).into_font().color(&BLACK).pos(Pos::new(HPos::Right, VPos::Center));
        for (label, &(top, bottom)) in labels.iter().zip(&rows) {
            root.draw(&Text::new(clean(&truncate(label, 48)), (x0 - 8, ((top + bottom) / 2.0).round() as i32), label_style.clone()))?;
        }
        let text = (FONT, TEXT).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
        let col_w = (WIDTH - 2 * SIDE) / legend_cols as u32;
        for (i, (name, color)) in legend.iter().enumerate() {
            let (r, c) = ((i / legend_cols) as u32, (i % legend_cols) as u32);
            let (x, y) = ((SIDE + c * col_w) as i32, (12 + legend_row / 2 + r * legend_row) as i32);
            legend_area.draw(&Rectangle::new([(x, y - 7), (x + 16, y + 7)], RGBColor(color.0, color.1, color.2).filled()))?;
            let fits = ((col_w as f64 - 30.0) / text_px("x", TEXT)) as usize;
            legend_area.draw(&Text::new(clean(&truncate(name, fits)), (x + 22, y), text.clone()))?;
        }
        root.present()?;
        ((x0 as f64, x1 as f64), rows)
    };
    Ok(Frame { svg: buf, px, range, log, rows, right: px.1 })
}

/// The time axis and plot area of a frame, for a linear or a logarithmic axis alike.
struct Axes<'f> {
    plot_h: f64,
    ends: (f64, f64),
    fmt_x: &'f dyn Fn(&f64) -> String,
    x_desc: &'f str,
}

impl Axes<'_> {
    /// Draw the mesh over `x`; the plot's pixel corners (left, right, top, bottom).
    fn draw<X>(&self, mut builder: ChartBuilder<'_, '_, SVGBackend<'_>>, x: X) -> timeline::DrawResult<(i32, i32, i32, i32)>
    where
        X: plotters::coord::ranged1d::AsRangedCoord<Value = f64>,
        X::CoordDescType: plotters::coord::ranged1d::ValueFormatter<f64>,
    {
        let mut chart = builder.build_cartesian_2d(x, 0.0..self.plot_h)?;
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(10)
            .x_label_formatter(self.fmt_x)
            .x_desc(self.x_desc)
            .label_style((FONT, SMALL))
            .axis_desc_style((FONT, SMALL))
            .bold_line_style(RGBColor(0xd8, 0xd8, 0xd8).stroke_width(1))
            .axis_style(RGBColor(0x66, 0x66, 0x66))
            .draw()?;
        let (a, b) = (chart.backend_coord(&(self.ends.0, 0.0)), chart.backend_coord(&(self.ends.1, self.plot_h)));
        Ok((a.0, b.0, b.1, a.1))
    }
}

/// A small chart that only says why there is nothing to show.
pub(super) fn notice(title: &str, note: &str) -> String {
    format!(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"640\" height=\"90\" viewBox=\"0 0 640 90\" style=\"max-width:100%;height:auto\"><rect width=\"640\" height=\"90\" fill=\"#fff\"/><text x=\"320\" y=\"30\" text-anchor=\"middle\" font-family=\"{FONT}\" font-size=\"17\" font-weight=\"bold\">{}</text><text x=\"320\" y=\"62\" text-anchor=\"middle\" font-family=\"{FONT}\" font-size=\"15\" fill=\"#555\">{}</text></svg>\n",
        esc(title),
        esc(note)
    )
}

/// A chart that failed to draw says so instead of panicking.
pub(super) fn failed(e: Box<dyn std::error::Error>) -> String {
    notice("chart failed", &e.to_string())
}

//! Drawing a timeline: plotters for frame, axes, labels and legend; the bars as `<rect>`s
//! with `<title>` hover text in the same pixel mapping.

use super::*;

pub(super) type DrawResult<T> = Result<T, Box<dyn std::error::Error>>;

pub(super) fn render(evals: &[&EvalTrace], devices: &[DeviceProfile], session: bool) -> String {
    render_titled(evals, devices, session, None)
}

pub(super) fn render_titled(evals: &[&EvalTrace], devices: &[DeviceProfile], session: bool, title: Option<&str>) -> String {
    let ran = evals.iter().any(|e| !e.events.is_empty());
    let result = if ran {
        let mut m = Model::build(evals, devices, session);
        m.title = title.map(str::to_string);
        draw_timeline(&m)
    } else {
        draw_empty(evals, session)
    };
    // Shrink to the output area when it is narrower than the chart (JupyterLab beside a side
    // panel), keeping the proportions: plotters writes a viewBox.
    let result = result.map(|svg| svg.replacen("<svg ", "<svg style=\"max-width:100%;height:auto\" ", 1));
    result.unwrap_or_else(|e| {
        format!(
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"600\" height=\"40\"><text x=\"8\" y=\"24\" font-family=\"sans-serif\">chart failed: {}</text></svg>\n",
            esc(&e.to_string())
        )
    })
}

pub(super) fn draw_empty(evals: &[&EvalTrace], session: bool) -> DrawResult<String> {
    let title = match (session, evals.first()) {
        (_, None) => "No evaluations".to_string(),
        (false, Some(e)) => format!("Evaluation {} (cell {})", e.eval, e.cell),
        (true, Some(_)) => format!("{} evaluation{}", evals.len(), if evals.len() == 1 { "" } else { "s" }),
    };
    let mut buf = String::new();
    {
        let root = SVGBackend::with_string(&mut buf, (640, 90)).into_drawing_area();
        root.fill(&WHITE)?;
        let style = (FONT, 18).into_font().style(FontStyle::Bold).color(&BLACK).pos(Pos::new(HPos::Center, VPos::Center));
        root.draw(&Text::new(clean(&title), (320, 26), style))?;
        let style = (FONT, 17).into_font().color(&RGBColor(0x55, 0x55, 0x55)).pos(Pos::new(HPos::Center, VPos::Center));
        root.draw(&Text::new("nothing ran (all values were cached)", (320, 60), style))?;
        root.present()?;
    }
    Ok(buf)
}

/// Legend entries laid out in columns: (text, colour) and the column width.
pub(super) fn legend_layout(m: &Model) -> (Vec<(String, Rgb)>, u32, usize) {
    let mut entries: Vec<(String, Rgb)> =
        m.ops.iter().take(MAX_LEGEND).map(|o| (format!("{} · {} · {}", truncate(&o.name, 40), fmt_cells(&o.cells), fmt_dur(o.busy_ms)), o.color)).collect();
    if m.ops.len() > MAX_LEGEND {
        entries.push((format!("… and {} more ops (hover a bar for its op)", m.ops.len() - MAX_LEGEND), (0xff, 0xff, 0xff)));
    }
    let avail = WIDTH - 2 * SIDE;
    let widest = entries.iter().map(|(t, _)| text_px(t, LEGEND_FONT)).fold(0.0, f64::max);
    let col_w = ((widest + 18.0 + 22.0).ceil() as u32).clamp(120, avail);
    let cols = ((avail / col_w) as usize).max(1);
    (entries, col_w, cols)
}

/// The event kinds the legend shows a swatch for.
const KINDS: [&str; 3] = ["compute / transfer", "alloc (outlined)", "merge (hatched)"];

/// The legend's first line: how many events, how they are drawn.
fn legend_heading(m: &Model) -> String {
    if m.merged {
        format!(
            "{} events shown as {} bars (bars under a pixel apart merged{}) · hover a bar for details · kinds:",
            group(m.events.len() as u64),
            group(m.bars.len() as u64),
            if m.dropped > 0 { format!("; {} shortest left out", group(m.dropped as u64)) } else { String::new() }
        )
    } else {
        format!("{} events · hover a bar for details · kinds:", group(m.events.len() as u64))
    }
}

pub(super) fn draw_timeline(m: &Model) -> DrawResult<String> {
    let cell_row = if m.session { CELL_ROW } else { 8 };
    let plot_h = m.plot_height();
    let chart_h = cell_row + plot_h.ceil() as u32 + 1 + BOTTOM_LABELS + 4;
    let (entries, col_w, cols) = legend_layout(m);
    let heading = legend_heading(m);
    // The kinds follow the heading on its row, or take the next row when they would pass the
    // right edge (a long "N events shown as M bars" heading).
    let kinds_w: f64 = KINDS.iter().map(|k| 28.0 + text_px(k, LEGEND_FONT) + 16.0).sum();
    let kinds_row = u32::from((SIDE as f64 + text_px(&heading, LEGEND_FONT) + 14.0 + kinds_w) > (WIDTH - SIDE) as f64);
    let rows = entries.len().div_ceil(cols) as u32 + kinds_row;
    let legend_h = 8 + LEGEND_ROW + 6 + rows * LEGEND_ROW + 10;
    let height = TITLE_H + chart_h + legend_h;
    let grey = RGBColor(0x66, 0x66, 0x66);
    let light = RGBColor(0xf3, 0xf4, 0xf6);

    let mut buf = String::new();
    let (bars_svg, defs) = {
        let root = SVGBackend::with_string(&mut buf, (WIDTH, height)).into_drawing_area();
        root.fill(&WHITE)?;
        let (title_area, rest) = root.split_vertically(TITLE_H);
        let (chart_area, legend_area) = rest.split_vertically(chart_h);

        let style = (FONT, 17).into_font().style(FontStyle::Bold).color(&BLACK).pos(Pos::new(HPos::Center, VPos::Center));
        title_area.draw(&Text::new(clean(&m.title()), (WIDTH as i32 / 2, TITLE_H as i32 / 2 + 2), style))?;

        let mut chart = ChartBuilder::on(&chart_area)
            .margin_left(SIDE)
            .margin_right(SIDE + RIGHT)
            .margin_top(cell_row)
            .margin_bottom(4)
            .set_label_area_size(LabelAreaPosition::Left, LEFT_LABELS)
            .set_label_area_size(LabelAreaPosition::Bottom, BOTTOM_LABELS)
            .build_cartesian_2d(m.axis.clone(), LaneAxis { total: plot_h })?;

        // The chart's own pixel mapping, unrounded: the same formula plotters rounds.
        let (r0, r1) = m.axis.real_range();
        let xl = (chart.backend_coord(&(r0, 0.0)).0, chart.backend_coord(&(r1, 0.0)).0);
        let yl = (chart.backend_coord(&(r0, plot_h)).1, chart.backend_coord(&(r0, 0.0)).1);
        let fx = |t: f64| m.axis.map_f(t, xl);
        let fy = |v: f64| LaneAxis { total: plot_h }.map_f(v, yl);

        // Lane backgrounds, evaluation bands and idle cuts, under the grid.
        for (i, lane) in m.lanes.iter().enumerate() {
            if i % 2 == 0 {
                chart.plotting_area().draw(&Rectangle::new([(r0, lane.top), (r1, lane.top + lane.height)], light.filled()))?;
            }
        }
        if m.session {
            let band = RGBColor(0xe3, 0xec, 0xf7).mix(0.55);
            for (k, &(s, e, _, _)) in m.spans.iter().enumerate() {
                // Shade every other evaluation (while there are few enough to tell apart).
                if k % 2 == 1 && m.spans.len() <= 400 {
                    chart.plotting_area().draw(&Rectangle::new([(s, 0.0), (e.max(s), plot_h)], band.filled()))?;
                }
            }
            let cut = RGBColor(0xdd, 0xdd, 0xdd);
            for (a, b) in m.axis.cuts() {
                chart.plotting_area().draw(&Rectangle::new([(a, 0.0), (b, plot_h)], cut.filled()))?;
            }
        }

        let unit = m.unit;
        let fmt_x = move |v: &f64| fmt_tick(v / unit);
        let x_desc = match (m.session, unit > 1.0) {
            (false, false) => "time since the evaluation started (ms)",
            (false, true) => "time since the evaluation started (s)",
            (true, false) => "time since the first evaluation shown started (ms)",
            (true, true) => "time since the first evaluation shown started (s)",
        };
        chart
            .configure_mesh()
            .disable_y_mesh()
            .y_labels(0)
            .x_labels(12)
            .x_label_formatter(&fmt_x)
            .x_desc(x_desc)
            .label_style((FONT, 17))
            .axis_desc_style((FONT, 17))
            .bold_line_style(RGBColor(0xd0, 0xd0, 0xd0).stroke_width(1))
            .axis_style(grey)
            .draw()?;

        // Lane separators, labels, and what an empty lane means.
        let sep = RGBColor(0xbb, 0xbb, 0xbb);
        let (px0, px1) = (xl.0, xl.1);
        for (i, lane) in m.lanes.iter().enumerate() {
            if i > 0 {
                let y = fy(lane.top).round() as i32;
                let strong = i == m.lanes.len() - 2;
                let style = if strong { grey.stroke_width(1) } else { sep.stroke_width(1) };
                root.draw(&PathElement::new(vec![(px0, y), (px1, y)], style))?;
            }
            let cy = fy(lane.top + lane.height / 2.0);
            let lx = px0 - 10;
            let bold = (FONT, 17).into_font().style(FontStyle::Bold).color(&BLACK);
            // The label, then the device name's lines under it, centred on the lane as a block.
            let first = cy - LABEL_LINE * lane.sub.len() as f64 / 2.0;
            root.draw(&Text::new(clean(&lane.label), (lx, first.round() as i32), bold.pos(Pos::new(HPos::Right, VPos::Center))))?;
            let small = (FONT, 17).into_font().color(&grey).pos(Pos::new(HPos::Right, VPos::Center));
            for (k, line) in lane.sub.iter().enumerate() {
                let y = first + LABEL_LINE * (k + 1) as f64;
                root.draw(&Text::new(clean(line), (lx, y.round() as i32), small.clone()))?;
            }
            if lane.tracks == 0 {
                let note = (FONT, 17).into_font().style(FontStyle::Italic).color(&grey).pos(Pos::new(HPos::Left, VPos::Center));
                root.draw(&Text::new(lane.empty, (px0 + 8, cy.round() as i32), note))?;
            }
        }

        // Cell labels above the plot, and the length of each idle cut.
        if m.session {
            let y = fy(0.0).round() as i32 - 4;
            let mut last_right = f64::NEG_INFINITY;
            let label_style = (FONT, 17).into_font().color(&BLACK).pos(Pos::new(HPos::Center, VPos::Bottom));
            let mut labels: Vec<(f64, String)> = m.spans.iter().map(|&(s, e, cell, _)| ((fx(s) + fx(e)) / 2.0, format!("cell {cell}"))).collect();
            for (a, b) in m.axis.cuts() {
                labels.push(((fx(a) + fx(b)) / 2.0, format!("idle {}", fmt_dur(b - a))));
            }
            labels.sort_by(|a, b| a.0.total_cmp(&b.0));
            for (x, text) in labels {
                let w = text_px(&text, 12);
                let x = x.min(px1 as f64 - w / 2.0 + RIGHT as f64).max(px0 as f64 + w / 2.0);
                if x - w / 2.0 < last_right + 6.0 {
                    continue;
                }
                last_right = x + w / 2.0;
                root.draw(&Text::new(text, (x.round() as i32, y), label_style.clone()))?;
            }
        }

        // Legend: kinds, then ops by first appearance.
        let row_y = |r: u32| (8 + LEGEND_ROW / 2 + r * LEGEND_ROW) as i32;
        let text_style = (FONT, LEGEND_FONT).into_font().color(&BLACK).pos(Pos::new(HPos::Left, VPos::Center));
        let mut x = SIDE as i32;
        let mut y = row_y(0);
        legend_area.draw(&Text::new(heading.clone(), (x, y), text_style.clone()))?;
        x += text_px(&heading, LEGEND_FONT) as i32 + 14;
        if kinds_row > 0 {
            (x, y) = (SIDE as i32, row_y(kinds_row));
        }
        let swatch = RGBColor(0x8a, 0x8a, 0x8a);
        for (k, name) in KINDS.iter().enumerate() {
            let (a, b) = ((x, y - 6), (x + 22, y + 6));
            match k {
                0 => legend_area.draw(&Rectangle::new([a, b], swatch.filled()))?,
                1 => {
                    legend_area.draw(&Rectangle::new([a, b], swatch.mix(0.35).filled()))?;
                    legend_area.draw(&Rectangle::new([a, b], swatch.stroke_width(1)))?;
                }
                _ => {
                    legend_area.draw(&Rectangle::new([a, b], swatch.filled()))?;
                    for d in (0..34).step_by(5) {
                        let (sx, sy) = (a.0 + d, a.1);
                        let mut p = vec![(sx, sy), (sx - 12, sy + 12)];
                        // clip to the swatch
                        for q in &mut p {
                            if q.0 > b.0 {
                                let over = q.0 - b.0;
                                q.0 -= over;
                                q.1 += over;
                            }
                            if q.0 < a.0 {
                                let under = a.0 - q.0;
                                q.0 += under;
                                q.1 -= under;
                            }
                        }
                        if p[0].1 <= p[1].1 {
                            legend_area.draw(&PathElement::new(p, WHITE.mix(0.7).stroke_width(2)))?;
                        }
                    }
                }
            }
            x += 28;
            legend_area.draw(&Text::new(*name, (x, y), text_style.clone()))?;
            x += text_px(name, LEGEND_FONT) as i32 + 16;
        }
        for (i, (text, color)) in entries.iter().enumerate() {
            let (r, c) = ((i / cols) as u32, (i % cols) as u32);
            let x = (SIDE + c * col_w) as i32;
            let y = row_y(r + kinds_row + 1) + 6;
            if *color != (0xff, 0xff, 0xff) {
                legend_area.draw(&Rectangle::new([(x, y - 6), (x + 14, y + 6)], RGBColor(color.0, color.1, color.2).filled()))?;
            }
            legend_area.draw(&Text::new(clean(text), (x + 20, y), text_style.clone()))?;
        }

        // The bars, with hover text, in the chart's coordinates.
        let mut defs = String::new();
        let mut hatched = BTreeSet::new();
        let mut out = String::with_capacity(m.bars.len() * 260);
        let (left, right) = (px0 as f64, px1 as f64);
        let _ = writeln!(out, "<g id=\"{}-bars\">", m.prefix);
        for b in &m.bars {
            let lane = &m.lanes[b.lane];
            let (v0, v1) = lane.track_span(b.track);
            let (y0, y1) = (fy(v0), fy(v1));
            let mut x0 = fx(b.t0).clamp(left, right);
            let x1 = fx(b.t1).clamp(left, right);
            let w = (x1 - x0).max(MIN_BAR_PX);
            x0 = x0.min(right - w);
            let color = hex(m.ops[b.op].color);
            let paint = match b.kind {
                EventKind::Alloc => format!("fill=\"{color}\" fill-opacity=\"0.3\" stroke=\"{color}\" stroke-dasharray=\"3 2\""),
                EventKind::Merge => {
                    hatched.insert(b.op);
                    format!("fill=\"url(#{}-h{})\" stroke=\"#333\" stroke-width=\"0.5\"", m.prefix, b.op)
                }
                _ => format!("fill=\"{color}\""),
            };
            let _ = writeln!(out, "<rect x=\"{x0:.1}\" y=\"{y0:.1}\" width=\"{w:.1}\" height=\"{:.1}\" {paint}><title>{}</title></rect>", (y1 - y0).max(1.0), esc(&m.hover(b)));
        }
        out.push_str("</g>\n");
        if !hatched.is_empty() {
            defs.push_str("<defs>\n");
            for op in hatched {
                let _ = writeln!(
                    defs,
                    "<pattern id=\"{}-h{op}\" width=\"6\" height=\"6\" patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\"><rect width=\"6\" height=\"6\" fill=\"{}\"/><rect width=\"2.5\" height=\"6\" fill=\"#fff\" fill-opacity=\"0.65\"/></pattern>",
                    m.prefix,
                    hex(m.ops[op].color)
                );
            }
            defs.push_str("</defs>\n");
        }
        root.present()?;
        (out, defs)
    };
    let at = buf.rfind("</svg>").ok_or("plotters wrote no </svg>")?;
    buf.insert_str(at, &format!("{defs}{bars_svg}"));
    Ok(buf)
}

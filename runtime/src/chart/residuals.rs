//! Predicted vs actual: per stage of recent evaluations, the cost model's seconds (light bar)
//! beside the measured ones (solid bar) on a logarithmic axis, the ratio beside them, red
//! when the model was off by more than 2x. It shows a user when to trust a plan and when to
//! run `:bach calibrate`.

use super::bars::*;
use super::*;
use crate::trace::StageTime;

/// Stages shown at most (the most recent).
pub(super) const MAX_STAGES: usize = 30;

pub(super) fn render(evals: &[&EvalTrace], devices: &[DeviceProfile], since: u64) -> String {
    let all: Vec<(&EvalTrace, &StageTime)> = evals.iter().flat_map(|e| e.stages.iter().map(move |s| (*e, s))).filter(|(_, s)| s.predicted_s > 0.0 || s.actual_s() > 0.0).collect();
    if all.is_empty() {
        return notice("Predicted vs actual", "no evaluations yet");
    }
    let cut = all.len().saturating_sub(MAX_STAGES);
    draw(&all[cut..], cut, devices, since).unwrap_or_else(failed)
}

/// "x1.40" when actual is above predicted, "÷2.31" below.
fn ratio_text(r: f64) -> String {
    if r >= 1.0 {
        format!("×{r:.2}")
    } else {
        format!("÷{:.2}", 1.0 / r.max(1e-12))
    }
}

fn draw(stages: &[(&EvalTrace, &StageTime)], cut: usize, devices: &[DeviceProfile], since: u64) -> super::timeline::DrawResult<String> {
    let error = |s: &StageTime| {
        let r = s.ratio();
        r.max(1.0 / r.max(1e-12))
    };
    // The verdict is the current model's when it has stages here; else the earlier model's.
    let current = stages.iter().any(|(e, _)| e.eval > since);
    let judged: Vec<&(&EvalTrace, &StageTime)> = stages.iter().filter(|(e, _)| !current || e.eval > since).collect();
    let mut errors: Vec<f64> = judged.iter().map(|(_, s)| error(s)).collect();
    errors.sort_by(f64::total_cmp);
    let median = errors[errors.len() / 2];
    let (worst_e, worst_s) = judged.iter().map(|(e, s)| (error(s), (e, s))).max_by(|a, b| a.0.total_cmp(&b.0)).expect("non-empty");
    let whose = match (since > 0, current) {
        (true, true) => " since the model last changed",
        (true, false) => " (the earlier model's)",
        _ => "",
    };
    let title = format!(
        "Predicted vs actual: {} stage{}{whose}, median error {}, worst {}",
        judged.len(),
        if judged.len() == 1 { "" } else { "s" },
        format_args!("×{median:.2}"),
        format_args!("×{worst_e:.2}")
    );
    let subtitle = format!(
        "worst: {} of eval {}{} · light bar: the cost model's prediction, solid: measured",
        worst_s.1.label(),
        worst_s.0.eval,
        if cut > 0 { format!(" · {cut} older stages not shown") } else { String::new() }
    );
    let lo = stages.iter().flat_map(|(_, s)| [s.predicted_s, s.actual_s()]).filter(|v| *v > 0.0).fold(f64::INFINITY, f64::min);
    let hi = stages.iter().flat_map(|(_, s)| [s.predicted_s, s.actual_s()]).fold(0.0, f64::max);
    let lo = 10f64.powf((lo.max(1e-9) / 1.5).log10().floor());
    let hi = 10f64.powf((hi.max(lo * 10.0) * 1.5).log10().ceil());
    let labels: Vec<String> = stages.iter().map(|(e, s)| format!("eval {}{} · {}", e.eval, if e.eval <= since { " (earlier model)" } else { "" }, s.label())).collect();
    let dev_color = |d: DeviceId| -> Rgb {
        if d == CPU {
            (0x4e, 0x79, 0xa7)
        } else {
            (0xf2, 0x8e, 0x2b)
        }
    };
    let used: BTreeSet<DeviceId> = stages.iter().map(|(_, s)| s.device).collect();
    let dev_name = |d: DeviceId| devices.get(d.0 as usize).map_or_else(|| format!("device {}", d.0), |p| p.name.clone());
    let mut legend: Vec<(String, Rgb)> = used.iter().map(|&d| (format!("measured on {}", short_name(&dev_name(d))), dev_color(d))).collect();
    legend.push(("predicted (the cost model)".into(), (0xc8, 0xc8, 0xc8)));
    legend.push(("off by more than 2x".into(), (0xc0, 0x20, 0x20)));
    if current && judged.len() < stages.len() {
        legend.push(("(earlier model): planned before it changed".into(), (0xff, 0xff, 0xff)));
    }
    let f = frame(&title, &subtitle, &labels, 36, (lo, hi), true, &legend)?;
    let mut marks = String::from("<g class=\"bach-residuals\">\n");
    for ((e, s), &(top, bottom)) in stages.iter().zip(&f.rows) {
        let h = (bottom - top) * 0.36;
        let x0 = f.x(lo);
        let color = hex(dev_color(s.device));
        let r = s.ratio();
        let hover = format!(
            "eval {} (cell {}) · {}\non {}, {} elements\npredicted {} · actual {} · actual/predicted {:.2}",
            e.eval,
            e.cell,
            s.label(),
            dev_name(s.device),
            group(s.elements as u64),
            crate::cost::seconds(s.predicted_s),
            crate::cost::seconds(s.actual_s()),
            r
        );
        let (yp, ya) = (top + (bottom - top) * 0.12, top + (bottom - top) * 0.5);
        let _ = writeln!(
            marks,
            "<rect x=\"{x0:.1}\" y=\"{yp:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"{color}\" fill-opacity=\"0.25\" stroke=\"{color}\" stroke-dasharray=\"3 2\"><title>{}</title></rect>",
            (f.x(s.predicted_s) - x0).max(1.0),
            esc(&format!("predicted: {hover}"))
        );
        let _ = writeln!(
            marks,
            "<rect x=\"{x0:.1}\" y=\"{ya:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"{color}\"><title>{}</title></rect>",
            (f.x(s.actual_s()) - x0).max(1.0),
            esc(&format!("measured: {hover}"))
        );
        let off = !(0.5..=2.0).contains(&r);
        let _ = writeln!(
            marks,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-family=\"{FONT}\" font-size=\"16\" dominant-baseline=\"middle\" fill=\"{}\"{}><title>{}</title>{}</text>",
            f.right + 8.0,
            (top + bottom) / 2.0,
            if off { "#c02020" } else { "#333333" },
            if off { " font-weight=\"bold\"" } else { "" },
            esc(&format!("actual / predicted = {r:.3}{}", if off { ": off by more than 2x" } else { "" })),
            esc(&ratio_text(r))
        );
    }
    marks.push_str("</g>\n");
    Ok(f.finish(&marks))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn stage(i: usize, predicted: f64, actual: f64, device: u8) -> StageTime {
        StageTime {
            stage: Some(i),
            device: DeviceId(device),
            ops: vec!["exp".into(), "mul".into()],
            elements: 1 << 20,
            predicted_s: predicted,
            start: Duration::from_secs(1),
            end: Duration::from_secs(1) + Duration::from_secs_f64(actual),
        }
    }

    #[test]
    fn each_stage_has_its_two_bars_and_its_ratio_and_big_errors_are_flagged() {
        let stages = vec![stage(0, 1e-6, 1.5e-6, 0), stage(1, 0.2, 0.9, 1), stage(2, 3.0, 1.0, 0), stage(3, 1e-3, 1.1e-3, 0)];
        let e = EvalTrace { eval: 4, cell: 2, start: Duration::ZERO, end: Duration::from_secs(9), pieces: 1, events: vec![], plans: vec![], stages, reason: None };
        let svg = render(&[&e], &[DeviceProfile::cpu(), DeviceProfile::hypothetical_gpu("H100", 1 << 30)], 0);
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let bars = doc.descendants().filter(|n| n.has_tag_name("rect") && n.children().any(|c| c.has_tag_name("title"))).count();
        assert_eq!(bars, 8, "two bars per stage");
        assert!(svg.contains("×4.50") && svg.contains("÷3.00") && svg.contains("×1.50"), "ratios");
        assert_eq!(svg.matches("off by more than 2x</title>").count(), 2, "the two stages off by more than 2x");
        assert!(svg.contains("worst ×4.50"), "{}", &svg[..600]);
    }

    #[test]
    fn no_stages_say_so_and_many_are_cut_to_the_most_recent() {
        assert!(render(&[], &[DeviceProfile::cpu()], 0).contains("no evaluations yet"));
        let stages: Vec<StageTime> = (0..45).map(|i| stage(i, 1e-3, 2e-3, 0)).collect();
        let e = EvalTrace { eval: 1, cell: 1, start: Duration::ZERO, end: Duration::from_secs(9), pieces: 1, events: vec![], plans: vec![], stages, reason: None };
        let svg = render(&[&e], &[DeviceProfile::cpu()], 0);
        assert!(svg.contains("15 older stages not shown"));
        assert!(svg.contains("stage 44") && !svg.contains("stage 14 "));
    }

    #[test]
    fn the_title_judges_the_current_model_and_marks_the_earlier_ones_rows() {
        let eval = |n: u64, stages: Vec<StageTime>| EvalTrace {
            eval: n,
            cell: n,
            start: Duration::ZERO,
            end: Duration::from_secs(9),
            pieces: 1,
            events: vec![],
            plans: vec![],
            stages,
            reason: None,
        };
        let (old, new) = (eval(1, vec![stage(0, 1e-3, 5e-3, 0)]), eval(2, vec![stage(0, 1e-3, 1.2e-3, 0)]));
        let svg = render(&[&old, &new], &[DeviceProfile::cpu()], 1);
        if let Some(path) = crate::knobs::Knobs::from_env().chart_out {
            std::fs::write(std::path::Path::new(&path).join("cost.svg"), &svg).unwrap();
        }
        let titles = super::super::tests::texts(&svg);
        assert!(titles.iter().any(|t| t.contains("1 stage since the model last changed") && t.contains("worst ×1.20")), "{titles:?}");
        assert!(titles.iter().any(|t| t.starts_with("eval 1 (earlier model)")), "{titles:?}");
        assert!(svg.contains("×5.00"), "the earlier model's row is still drawn");
        let earlier_only = render(&[&old], &[DeviceProfile::cpu()], 1);
        assert!(super::super::tests::texts(&earlier_only).iter().any(|t| t.contains("(the earlier model's)") && t.contains("worst ×5.00")));
    }
}

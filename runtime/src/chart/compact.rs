//! An evaluation in one line: for evaluations so short (under a few milliseconds) that a
//! full timeline says little and costs a screenful. Each device with the ops that ran there
//! (each op with the colour it has in every chart, hover for its time and placement reason),
//! the copies, and how to ask for the full chart.

use super::*;

/// One evaluation as a line of text and the same line as HTML.
pub struct CompactLine {
    pub plain: String,
    pub html: String,
}

/// An op on one device: its name, the time it was busy there and why it was placed there.
struct OpOnDevice {
    name: String,
    busy: f64,
    reason: Option<String>,
}

pub(super) fn render(eval: &EvalTrace, devices: &[DeviceProfile], ask: &str) -> CompactLine {
    let names = DeviceNames::new(devices);
    let plan = eval.plan();
    let mut per_device: BTreeMap<DeviceId, Vec<OpOnDevice>> = BTreeMap::new();
    let (mut copies, mut copied) = (0usize, 0u64);
    for e in &eval.events {
        match e.kind {
            EventKind::Transfer => {
                copies += 1;
                copied += e.bytes;
            }
            EventKind::Compute | EventKind::Alloc => {
                let ops = per_device.entry(e.device).or_default();
                let busy = (e.end - e.start).as_secs_f64() * 1e3;
                match ops.iter_mut().find(|o| o.name == *e.op) {
                    Some(o) => o.busy += busy,
                    None => {
                        let reason = plan.and_then(|p| p.steps.iter().find(|s| s.id == e.node)).map(|s| s.reason.to_string());
                        ops.push(OpOnDevice { name: e.op.to_string(), busy, reason });
                    }
                }
            }
            EventKind::Merge => {}
        }
    }
    let all: Vec<&str> = per_device.values().flatten().map(|o| o.name.as_str()).collect();
    let colors = assign_colors(&all);
    let mut color_of = all.iter().zip(colors);

    let total = fmt_dur((eval.end - eval.start).as_secs_f64() * 1e3);
    let moved = match copies {
        0 => "no copies".to_string(),
        1 => format!("1 copy ({})", fmt_bytes(copied)),
        n => format!("{n} copies ({})", fmt_bytes(copied)),
    };
    let mut plain = format!("Bach: {total}");
    let mut html = format!("<div class=\"bach-compact\" style=\"font-size:13px;line-height:1.6\"><b>Bach</b>: {total}");
    if per_device.is_empty() {
        plain.push_str(" · nothing ran (the values were there already)");
        html.push_str(" · nothing ran (the values were there already)");
    }
    const SHOWN: usize = 8;
    for (dev, ops) in &per_device {
        let device = names.name(*dev);
        let full = devices.iter().find(|d| d.id == *dev).map_or(device.clone(), |d| d.name.clone());
        let listed: Vec<&str> = ops.iter().take(SHOWN).map(|o| o.name.as_str()).collect();
        let more = if ops.len() > SHOWN { format!(" +{} more", ops.len() - SHOWN) } else { String::new() };
        let _ = write!(plain, " · {device}: {}{more}", listed.join(", "));
        let _ = write!(html, " · <span title=\"{}\">{}</span>:", esc(&full), esc(&device));
        for (i, o) in ops.iter().enumerate() {
            let (_, rgb) = color_of.next().expect("a colour per op");
            if i >= SHOWN {
                continue;
            }
            let why = o.reason.as_deref().map(|r| format!("\nplaced there: {}", truncate(r, 120))).unwrap_or_default();
            let title = format!("{} on {device}: {}{why}", o.name, fmt_dur(o.busy));
            let _ = write!(
                html,
                " <span title=\"{}\" style=\"white-space:nowrap\"><span style=\"display:inline-block;width:0.8em;height:0.8em;vertical-align:-0.05em;background:{}\"></span>&#8201;{}</span>",
                esc(&title),
                hex(rgb),
                esc(&o.name)
            );
        }
        html.push_str(&esc(&more));
    }
    if let Some(why) = &eval.reason {
        let _ = write!(plain, " · {why}");
        let _ = write!(html, " · <i>{}</i>", esc(why));
    }
    let _ = write!(plain, " · {moved} · {ask}");
    let _ = write!(html, " · {moved} · <span style=\"color:#666\">{}</span></div>", esc(ask).replace('`', ""));
    CompactLine { plain, html }
}

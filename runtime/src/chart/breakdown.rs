//! Where an evaluation's time went, as one stacked bar per evaluation (the form of Figure 4
//! of the Offload Annotations paper): compute on each device, copies each way, allocation,
//! merge, and runtime overhead. Each instant of an evaluation's wall time counts once, for
//! the most important thing happening then (accelerator compute, CPU compute, copies in,
//! copies out, allocation, merge; nothing: overhead), so a bar's segments add up to its wall
//! time; hover text also gives each category's busy time (which may overlap others).

use super::bars::*;
use super::*;

/// What an instant of an evaluation was spent on, most important first.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Category {
    /// Compute on an accelerator.
    Accelerator(DeviceId),
    Cpu,
    H2d,
    D2h,
    Alloc,
    Merge,
    /// Planning, scheduling, waiting: no event running.
    Overhead,
}

impl Category {
    fn of(e: &Event) -> Category {
        match e.kind {
            EventKind::Compute if e.device == CPU => Category::Cpu,
            EventKind::Compute => Category::Accelerator(e.device),
            EventKind::Transfer if e.to == Some(CPU) => Category::D2h,
            EventKind::Transfer => Category::H2d,
            EventKind::Alloc => Category::Alloc,
            EventKind::Merge => Category::Merge,
        }
    }
    fn name(self, devices: &[DeviceProfile]) -> String {
        let dev = |d: DeviceId| devices.get(d.0 as usize).map_or_else(|| format!("device {}", d.0), |p| p.name.clone());
        match self {
            Category::Accelerator(d) => format!("compute on {}", short_name(&dev(d))),
            Category::Cpu => format!("compute on {}", short_name(&dev(CPU))),
            Category::H2d => "copies host→device".into(),
            Category::D2h => "copies device→host".into(),
            Category::Alloc => "allocation".into(),
            Category::Merge => "merge".into(),
            Category::Overhead => "runtime overhead (planning, scheduling, waiting)".into(),
        }
    }
    fn color(self) -> Rgb {
        match self {
            Category::Accelerator(_) => (0x59, 0xa1, 0x4f),
            Category::Cpu => (0x4e, 0x79, 0xa7),
            Category::H2d => (0xe1, 0x57, 0x59),
            Category::D2h => (0xf2, 0x8e, 0x2b),
            Category::Alloc => (0xed, 0xc9, 0x48),
            Category::Merge => (0xb0, 0x7a, 0xa1),
            Category::Overhead => (0xba, 0xb0, 0xac),
        }
    }
}

/// One category's share of an evaluation.
#[derive(Clone, Debug, PartialEq)]
pub(super) struct Share {
    pub(super) category: Category,
    /// Wall seconds attributed to it (the shares of an evaluation add up to its wall time).
    pub(super) seconds: f64,
    /// Seconds during which any of its events ran.
    pub(super) busy: f64,
    pub(super) events: usize,
}

/// The shares of `eval`, by a sweep over its events' ends (n log n).
pub(super) fn attribute(eval: &EvalTrace) -> Vec<Share> {
    let (t0, t1) = (eval.start.as_secs_f64(), eval.end.as_secs_f64().max(eval.start.as_secs_f64()));
    let mut cats: Vec<Category> = eval.events.iter().map(Category::of).collect::<BTreeSet<_>>().into_iter().collect();
    cats.push(Category::Overhead);
    let index: HashMap<Category, usize> = cats.iter().enumerate().map(|(i, &c)| (c, i)).collect();
    let mut marks: Vec<(f64, i32, usize)> = Vec::with_capacity(eval.events.len() * 2);
    let mut counts = vec![0usize; cats.len()];
    for e in &eval.events {
        let (s, t) = (e.start.as_secs_f64().clamp(t0, t1), e.end.as_secs_f64().clamp(t0, t1));
        let c = index[&Category::of(e)];
        counts[c] += 1;
        if t > s {
            marks.push((s, 1, c));
            marks.push((t, -1, c));
        }
    }
    marks.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
    let mut active = vec![0i64; cats.len()];
    let mut seconds = vec![0.0; cats.len()];
    let mut busy = vec![0.0; cats.len()];
    let overhead = cats.len() - 1;
    let mut at = t0;
    for (t, delta, c) in marks {
        let dt = t - at;
        if dt > 0.0 {
            // `cats` is sorted by importance: the first active one gets the time.
            let first = active.iter().position(|&n| n > 0).unwrap_or(overhead);
            seconds[first] += dt;
            for (k, &n) in active.iter().enumerate() {
                if n > 0 {
                    busy[k] += dt;
                }
            }
            at = t;
        }
        active[c] += delta as i64;
    }
    seconds[overhead] += (t1 - at).max(0.0);
    cats.into_iter()
        .enumerate()
        .map(|(i, category)| Share { category, seconds: seconds[i], busy: busy[i], events: counts[i] })
        .filter(|s| s.seconds > 0.0 || s.events > 0)
        .collect()
}

/// One category's share of an evaluation, for text and JSON ([`super::time_breakdown`]).
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize))]
pub struct TimeShare {
    /// `compute:<device>` (`compute:cpu`, `compute:gpu 0`, ...), `h2d`, `d2h`, `alloc`,
    /// `merge` or `overhead`.
    pub key: String,
    /// As the chart's legend says it.
    pub label: String,
    /// Wall seconds attributed to it.
    pub seconds: f64,
    /// Seconds during which any of its events ran (may overlap other categories).
    pub busy_seconds: f64,
    pub events: usize,
    /// Bytes its events produced or moved.
    pub bytes: u64,
}

pub(super) fn shares(eval: &EvalTrace, devices: &[DeviceProfile]) -> Vec<TimeShare> {
    let names = DeviceNames::new(devices);
    let mut bytes: HashMap<Category, u64> = HashMap::new();
    for e in &eval.events {
        *bytes.entry(Category::of(e)).or_default() += e.bytes;
    }
    attribute(eval)
        .into_iter()
        .map(|s| TimeShare {
            key: match s.category {
                Category::Accelerator(d) => format!("compute:{}", names.name(d)),
                Category::Cpu => "compute:cpu".into(),
                Category::H2d => "h2d".into(),
                Category::D2h => "d2h".into(),
                Category::Alloc => "alloc".into(),
                Category::Merge => "merge".into(),
                Category::Overhead => "overhead".into(),
            },
            label: s.category.name(devices),
            seconds: s.seconds,
            busy_seconds: s.busy,
            events: s.events,
            bytes: bytes.get(&s.category).copied().unwrap_or(0),
        })
        .collect()
}

pub(super) fn render(evals: &[&EvalTrace], devices: &[DeviceProfile]) -> String {
    if evals.is_empty() {
        return notice("Time breakdown", "no evaluations yet");
    }
    draw(evals, devices).unwrap_or_else(failed)
}

fn draw(evals: &[&EvalTrace], devices: &[DeviceProfile]) -> super::timeline::DrawResult<String> {
    let shares: Vec<Vec<Share>> = evals.iter().map(|e| attribute(e)).collect();
    let walls: Vec<f64> = evals.iter().map(|e| e.actual_s()).collect();
    let total: f64 = walls.iter().sum();
    let longest = walls.iter().copied().fold(0.0, f64::max).max(1e-6);
    let mut by_cat: BTreeMap<Category, f64> = BTreeMap::new();
    for s in shares.iter().flatten() {
        *by_cat.entry(s.category).or_default() += s.seconds;
    }
    // Rounding leaves a share a hair below zero at times: shown as 0%, never "-0%" (+ 0.0
    // turns -0.0 into 0.0).
    let pct = |c: &dyn Fn(&Category) -> bool| (100.0 * by_cat.iter().filter(|(k, _)| c(k)).map(|(_, v)| v).sum::<f64>() / total.max(1e-12)).max(0.0) + 0.0;
    let title = format!("Time breakdown: {} evaluation{}, {} in all", evals.len(), if evals.len() == 1 { "" } else { "s" }, crate::cost::seconds(total));
    let subtitle = format!(
        "compute {:.0}% · copies {:.0}% · allocation and merge {:.0}% · overhead {:.0}%",
        pct(&|c| matches!(c, Category::Cpu | Category::Accelerator(_))),
        pct(&|c| matches!(c, Category::H2d | Category::D2h)),
        pct(&|c| matches!(c, Category::Alloc | Category::Merge)),
        pct(&|c| *c == Category::Overhead)
    );
    let labels: Vec<String> = evals.iter().map(|e| format!("eval {} (cell {})", e.eval, e.cell)).collect();
    let legend: Vec<(String, Rgb)> = by_cat.keys().map(|c| (c.name(devices), c.color())).collect();
    let row_h = if evals.len() <= 4 { 48 } else { 34 };
    let f = frame(&title, &subtitle, &labels, row_h, (0.0, longest * 1.02), false, &legend)?;
    let mut marks = String::from("<g class=\"bach-breakdown\">\n");
    for ((e, shares), (&(top, bottom), &wall)) in evals.iter().zip(&shares).zip(f.rows.iter().zip(&walls)) {
        let (y, h) = (top + (bottom - top) * 0.18, (bottom - top) * 0.64);
        let mut at = 0.0;
        for s in shares.iter().filter(|s| s.seconds > 0.0) {
            let (x0, x1) = (f.x(at), f.x(at + s.seconds));
            at += s.seconds;
            let hover = format!(
                "eval {} (cell {}): {}\n{} of {} wall ({:.1}%)\nbusy {} (its events' union, which may overlap others) · {} event{}",
                e.eval,
                e.cell,
                s.category.name(devices),
                crate::cost::seconds(s.seconds),
                crate::cost::seconds(wall),
                100.0 * s.seconds / wall.max(1e-12),
                crate::cost::seconds(s.busy),
                s.events,
                if s.events == 1 { "" } else { "s" }
            );
            let _ = writeln!(
                marks,
                "<rect x=\"{x0:.1}\" y=\"{y:.1}\" width=\"{:.1}\" height=\"{h:.1}\" fill=\"{}\" stroke=\"#fff\" stroke-width=\"0.5\"><title>{}</title></rect>",
                (x1 - x0).max(0.8),
                hex(s.category.color()),
                esc(&hover)
            );
        }
        let _ = writeln!(
            marks,
            "<text x=\"{:.1}\" y=\"{:.1}\" font-family=\"{FONT}\" font-size=\"16\" dominant-baseline=\"middle\">{}</text>",
            f.x(wall) + 6.0,
            y + h / 2.0,
            esc(&crate::cost::seconds(wall))
        );
    }
    marks.push_str("</g>\n");
    Ok(f.finish(&marks))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::Duration;

    fn ev(kind: EventKind, device: u8, to: Option<u8>, start_us: u64, end_us: u64) -> Event {
        Event {
            eval: 1,
            op: Arc::from("op"),
            node: 1,
            cell: 1,
            device: DeviceId(device),
            to: to.map(DeviceId),
            piece: 0,
            kind,
            start: Duration::from_micros(start_us),
            end: Duration::from_micros(end_us),
            bytes: 8,
        }
    }

    fn eval(events: Vec<Event>, start: u64, end: u64) -> EvalTrace {
        EvalTrace { eval: 1, cell: 1, start: Duration::from_micros(start), end: Duration::from_micros(end), pieces: 1, events, plans: vec![], stages: vec![], reason: None }
    }

    fn secs(shares: &[Share], c: Category) -> f64 {
        shares.iter().find(|s| s.category == c).map_or(0.0, |s| s.seconds)
    }

    #[test]
    fn each_instant_counts_once_for_the_most_important_thing_running() {
        use EventKind::*;
        // 0-100 overhead; 100-300 h2d; 200-500 gpu compute (over the copy from 200); 400-600
        // cpu compute (under the gpu until 500); 600-700 d2h; 700-1000 overhead.
        let e = eval(vec![ev(Transfer, 0, Some(1), 100, 300), ev(Compute, 1, None, 200, 500), ev(Compute, 0, None, 400, 600), ev(Transfer, 1, Some(0), 600, 700)], 0, 1000);
        let s = attribute(&e);
        let us = |c| (secs(&s, c) * 1e6).round();
        assert_eq!(us(Category::H2d), 100.0);
        assert_eq!(us(Category::Accelerator(DeviceId(1))), 300.0);
        assert_eq!(us(Category::Cpu), 100.0);
        assert_eq!(us(Category::D2h), 100.0);
        assert_eq!(us(Category::Overhead), 400.0);
        let total: f64 = s.iter().map(|x| x.seconds).sum();
        assert!((total - 1e-3).abs() < 1e-12, "{total}");
        let cpu = s.iter().find(|x| x.category == Category::Cpu).unwrap();
        assert!((cpu.busy - 200e-6).abs() < 1e-12, "busy is the union of its own events");
    }

    #[test]
    fn the_shares_in_words_name_devices_and_count_bytes() {
        use EventKind::*;
        let devices = [DeviceProfile::cpu(), DeviceProfile::hypothetical_gpu("H100", 80 << 30)];
        let mut copy_out = ev(Transfer, 1, Some(0), 600, 700);
        copy_out.bytes = 1000;
        let e = eval(vec![ev(Transfer, 0, Some(1), 100, 300), ev(Compute, 1, None, 200, 500), ev(Compute, 1, None, 250, 260), copy_out], 0, 1000);
        let s = shares(&e, &devices);
        let keys: Vec<&str> = s.iter().map(|x| x.key.as_str()).collect();
        assert_eq!(keys, ["compute:gpu 0", "h2d", "d2h", "overhead"]);
        let gpu = &s[0];
        assert_eq!((gpu.events, gpu.bytes), (2, 16));
        assert!((gpu.seconds - 300e-6).abs() < 1e-12 && (gpu.busy_seconds - 300e-6).abs() < 1e-12, "{gpu:?}");
        assert!(gpu.label.contains("H100"), "{}", gpu.label);
        assert_eq!((s[2].bytes, s[2].label.as_str()), (1000, "copies device→host"));
        let total: f64 = s.iter().map(|x| x.seconds).sum();
        assert!((total - e.actual_s()).abs() < 1e-12);
    }

    #[test]
    fn a_hundred_thousand_events_sum_to_the_wall_time_and_draw() {
        let mut events = Vec::new();
        for i in 0..100_000u64 {
            let kind = if i % 7 == 0 { EventKind::Transfer } else { EventKind::Compute };
            events.push(ev(kind, (i % 2) as u8, (kind == EventKind::Transfer).then_some(1), i * 10, i * 10 + 15));
        }
        let e = eval(events, 0, 1_000_100);
        let t = std::time::Instant::now();
        let s = attribute(&e);
        assert!(t.elapsed().as_secs_f64() < 2.0);
        let total: f64 = s.iter().map(|x| x.seconds).sum();
        assert!((total - e.actual_s()).abs() < 1e-9, "{total} vs {}", e.actual_s());
        let svg = render(&[&e, &e], &[DeviceProfile::cpu(), DeviceProfile::hypothetical_gpu("H100", 1 << 30)]);
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let rects: Vec<_> = doc.descendants().filter(|n| n.has_tag_name("rect") && n.children().any(|c| c.has_tag_name("title"))).collect();
        assert!(rects.len() >= 6, "{}", rects.len());
        assert!(svg.contains("Time breakdown: 2 evaluations") && svg.contains("compute on H100"), "{}", &svg[..400.min(svg.len())]);
    }

    #[test]
    fn nothing_to_break_down_says_so() {
        let svg = render(&[], &[DeviceProfile::cpu()]);
        assert!(svg.contains("no evaluations yet"));
        roxmltree::Document::parse(&svg).unwrap();
    }
}

//! Placement-and-transfer timelines: where each op ran, when, and what moved between host and
//! device, drawn from a [`trace`](crate::trace) alone.
//!
//! One row ("lane") per device's compute (`cpu`, `gpu 0 compute`, ...) plus one
//! `host→device` and one `device→host` lane, always drawn so that an empty one says that
//! nothing moved. Time runs left to right in ms. Each op and piece is a bar coloured by op (a
//! palette keyed by the op's name, so an op keeps its colour from chart to chart); an
//! allocation is drawn outlined and a merge hatched. Bars that ran at the same time (pieces
//! on several workers) are stacked in tracks inside their lane. Hovering a bar shows its op,
//! node, cell, device, piece, kind, times and bytes (an SVG `<title>`). A legend maps colours
//! to ops and the cells they came from.
//!
//! plotters draws the frame, axes, labels and legend; the bars are written here as `<rect>`
//! elements with `<title>` children (plotters cannot emit those), placed with the chart's own
//! coordinate mapping so they line up with the axes. An evaluation with more events than
//! [`MAX_BARS`] has bars of the same lane, op and kind that are under a pixel apart merged into
//! one bar whose hover text says how many events it stands for, so a 100,000-event evaluation
//! stays a small, readable picture.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::ops::Range;

use plotters::coord::ranged1d::{DefaultFormatting, KeyPointHint, KeyPointWeight, Ranged};
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

use crate::profile::{DeviceId, DeviceKind, DeviceProfile, CPU};
use crate::trace::{EvalTrace, Event, EventKind};

mod axes;
mod bars;
mod breakdown;
mod chrome;
mod compact;
mod graph;
mod model;
mod palette;
mod residuals;
mod sweep;
pub use text::truncate;
mod text;

pub use chrome::chrome_trace;
mod timeline;

use axes::*;
use model::*;
use palette::*;
use text::*;
use timeline::*;

pub use breakdown::TimeShare;
pub use compact::CompactLine;
pub use sweep::{sweep_svg, SweepSeries};
pub use text::short_name;

/// Most bars (SVG rects with hover text) one chart holds; beyond it, close bars are merged.
pub const MAX_BARS: usize = 2500;

pub(super) const WIDTH: u32 = 1100;
pub(super) const TITLE_H: u32 = 34;
pub(super) const SIDE: u32 = 12;
pub(super) const LEFT_LABELS: u32 = 200;
pub(super) const RIGHT: u32 = 28;
pub(super) const BOTTOM_LABELS: u32 = 42;
/// Space above the plot for the cell labels of a session timeline.
pub(super) const CELL_ROW: u32 = 20;
/// Most tracks a lane is split into; beyond it, bars share tracks (and may overlap).
pub(super) const MAX_TRACKS: usize = 48;
/// Narrowest bar drawn, in pixels, so that a very short event is still seen and hovered.
pub(super) const MIN_BAR_PX: f64 = 0.8;
/// In plotters' units: its SVG text is 0.8 of this in pixels (13.6 px), 11.5 px when Lab
/// shows the 1100 px chart in a 930 px output area.
pub(super) const LEGEND_FONT: u32 = 17;
pub(super) const LEGEND_ROW: u32 = 22;
/// Characters of a device name per line under a lane's label (the 200 px label column).
pub(super) const SUB_CHARS: usize = 26;
/// Height of one line of a lane's label, in lane units.
pub(super) const LABEL_LINE: f64 = 19.0;
pub(super) const MAX_LEGEND: usize = 60;
pub(super) const FONT: &str = "sans-serif";

/// The timeline of one evaluation as an SVG document.
pub fn timeline_svg(eval: &EvalTrace, devices: &[DeviceProfile]) -> String {
    render(&[eval], devices, false)
}

/// The timeline of several evaluations (a session's cells) on their real time axis: the same
/// lanes, each evaluation shaded and labelled with its cell. Idle time between evaluations that
/// would squeeze them into slivers is cut short and marked ("idle 58 s").
pub fn session_timeline_svg(evals: &[&EvalTrace], devices: &[DeviceProfile]) -> String {
    render(evals, devices, true)
}

/// One evaluation in one line (devices, their ops in their chart colours, copies), ending
/// with `ask`: how to get the full chart. For evaluations too short for a timeline to say much.
pub fn compact_line(eval: &EvalTrace, devices: &[DeviceProfile], ask: &str) -> CompactLine {
    compact::render(eval, devices, ask)
}

/// [`timeline_svg`] with `title` instead of the computed one: a predicted timeline
/// (`EvalTrace::predicted`) says it is a prediction, and for what.
pub fn labelled_timeline_svg(eval: &EvalTrace, devices: &[DeviceProfile], title: &str) -> String {
    render_titled(&[eval], devices, false, Some(title))
}

/// Where the time of `evals` went, one stacked bar each: compute per device, copies each
/// way, allocation, merge and runtime overhead (`:bach breakdown`).
pub fn breakdown_svg(evals: &[&EvalTrace], devices: &[DeviceProfile]) -> String {
    breakdown::render(evals, devices)
}

/// The numbers behind one bar of [`breakdown_svg`]: where `eval`'s wall time went, most
/// important category first. Each share's `seconds` add up to the wall time.
pub fn time_breakdown(eval: &EvalTrace, devices: &[DeviceProfile]) -> Vec<TimeShare> {
    breakdown::shares(eval, devices)
}

/// A plan as a graph: ops coloured by device, inputs, transfers with bytes, paged stages
/// (`:bach graph`).
pub fn placement_graph_svg(plan: &crate::plan::Plan) -> String {
    graph::render(plan)
}

/// Per stage of `evals` (the last 30), the cost model's prediction beside the measured time,
/// on a log axis, with the ratio, flagged past 2x (`:bach cost`). Evaluations up to `since`
/// were planned with an earlier cost model: their rows say so, and the title's median and
/// worst are the later ones' when there are any (as `:bach cost`'s text judges).
pub fn predicted_vs_actual_svg(evals: &[&EvalTrace], devices: &[DeviceProfile], since: u64) -> String {
    residuals::render(evals, devices, since)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::time::{Duration, Instant};

    fn us(n: u64) -> Duration {
        Duration::from_micros(n)
    }

    #[allow(clippy::too_many_arguments)]
    fn ev(op: &str, node: u64, cell: u64, device: u8, to: Option<u8>, piece: u32, kind: EventKind, start_us: u64, end_us: u64, bytes: u64) -> Event {
        Event { eval: 1, op: Arc::from(op), node, cell, device: DeviceId(device), to: to.map(DeviceId), piece, kind, start: us(start_us), end: us(end_us), bytes }
    }

    fn devices() -> Vec<DeviceProfile> {
        vec![DeviceProfile::cpu(), DeviceProfile::hypothetical_gpu("H100", 80 << 30)]
    }

    /// A GPU evaluation as the executor would record it: inputs copied in, an allocation, a
    /// split stage on the GPU, its merge, the result copied back, a CPU stage on 4 workers.
    fn sample() -> EvalTrace {
        use EventKind::*;
        let mut events = vec![
            ev("x", 1, 2, 0, Some(1), 0, Transfer, 1000, 9000, 80 << 20),
            ev("w", 2, 2, 0, Some(1), 0, Transfer, 9000, 11000, 16 << 20),
            ev("zeros", 3, 3, 1, None, 0, Alloc, 11000, 11300, 40 << 20),
        ];
        let mut t = 11300;
        for p in 0..8 {
            for (op, node, d) in [("matmul", 4, 900), ("add", 5, 200), ("relu", 6, 150), ("softmax", 7, 400)] {
                events.push(ev(op, node, 3, 1, None, p, Compute, t, t + d, 5 << 20));
                t += d;
            }
        }
        events.push(ev("softmax", 7, 3, 1, None, 0, Merge, t, t + 600, 40 << 20));
        t += 600;
        events.push(ev("softmax", 7, 3, 1, Some(0), 0, Transfer, t, t + 4000, 40 << 20));
        t += 4000;
        for p in 0..16u32 {
            let w = p as u64 % 4;
            let s = t + (p as u64 / 4) * 1500 + w * 40;
            events.push(ev("argmax", 8, 4, 0, None, p, Compute, s, s + 900, 64 << 10));
            events.push(ev("mean", 9, 4, 0, None, p, Compute, s + 900, s + 1400, 8));
        }
        let end = t + 4 * 1500 + 200;
        events.push(ev("argmax", 8, 4, 0, None, 0, Merge, end - 150, end, 1 << 20));
        EvalTrace { eval: 1, cell: 4, start: us(500), end: us(end + 100), pieces: 24, events, plans: vec![], stages: vec![], reason: None }
    }

    /// Our bars: (x, y, width, height, title) in document order.
    fn bars(svg: &str) -> Vec<(f64, f64, f64, f64, String)> {
        let doc = roxmltree::Document::parse(svg).expect("valid XML");
        let g = doc.descendants().find(|n| n.attribute("id").is_some_and(|i| i.ends_with("-bars"))).expect("bars group");
        g.children()
            .filter(|n| n.has_tag_name("rect"))
            .map(|r| {
                let f = |a: &str| r.attribute(a).unwrap().parse::<f64>().unwrap();
                let title = r.children().find(|c| c.has_tag_name("title")).and_then(|t| t.text()).expect("a <title> per bar").to_string();
                (f("x"), f("y"), f("width"), f("height"), title)
            })
            .collect()
    }

    pub(super) fn texts(svg: &str) -> Vec<String> {
        let doc = roxmltree::Document::parse(svg).expect("valid XML");
        doc.descendants().filter(|n| n.has_tag_name("text")).map(|n| n.text().unwrap_or("").trim().to_string()).collect()
    }

    #[test]
    fn chart_has_lanes_titles_and_legend() {
        let e = sample();
        let svg = timeline_svg(&e, &devices());
        let t = texts(&svg);
        for lane in ["cpu", "gpu 0 compute", "host→device", "device→host"] {
            assert!(t.iter().any(|s| s == lane), "lane {lane} missing in {t:?}");
        }
        let b = bars(&svg);
        assert_eq!(b.len(), e.events.len(), "one bar per event");
        // Every bar's hover text names its event.
        let first = &b[0].4;
        assert!(first.contains("x · node #1 · cell 2"), "{first}");
        assert!(first.contains("transfer cpu → gpu 0 · piece 0"), "{first}");
        assert!(first.contains("0.500 ms – 8.500 ms (8.00 ms)"), "{first}");
        assert!(first.contains("80.0 MiB at 10.5 GB/s"), "{first}");
        let alloc = b.iter().find(|b| b.4.starts_with("zeros")).unwrap();
        assert!(alloc.4.contains("alloc on gpu 0"), "{}", alloc.4);
        let merge = b.iter().find(|b| b.4.contains("merge on gpu 0")).unwrap();
        assert!(merge.4.contains("softmax · node #7 · cell 3") && merge.4.contains("40.0 MiB"), "{}", merge.4);
        let back = b.iter().find(|b| b.4.contains("transfer gpu 0 → cpu")).unwrap();
        assert!(back.4.starts_with("softmax"));
        assert!(b.iter().any(|b| b.4.contains("argmax · node #8 · cell 4\ncompute on cpu · piece 15")));
        // A legend entry per op, with its cell.
        for (op, cell) in [("x", 2), ("w", 2), ("zeros", 3), ("matmul", 3), ("add", 3), ("relu", 3), ("softmax", 3), ("argmax", 4), ("mean", 4)] {
            assert!(t.iter().any(|s| s.starts_with(&format!("{op} · cell {cell} · "))), "legend for {op} missing in {t:?}");
        }
        // Title: totals.
        assert!(t.iter().any(|s| s.starts_with("Evaluation 1 (cell 4):") && s.contains("24 pieces") && s.contains("136 MiB moved")), "{t:?}");
        // Transfers both ways sit in their lanes: host→device above device→host, below compute.
        let h2d = b.iter().find(|b| b.4.contains("cpu → gpu 0")).unwrap();
        let gpu = b.iter().find(|b| b.4.starts_with("matmul")).unwrap();
        let cpu = b.iter().find(|b| b.4.starts_with("argmax")).unwrap();
        assert!(cpu.1 < gpu.1 && gpu.1 < h2d.1 && h2d.1 < back.1);
        // Colours by op: all matmul bars share one, different from add's.
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let fill_of = |op: &str| -> BTreeSet<String> {
            doc.descendants()
                .filter(|n| n.has_tag_name("rect") && n.children().any(|c| c.has_tag_name("title") && c.text().unwrap().starts_with(&format!("{op} ·"))))
                .filter(|n| !n.children().any(|c| c.has_tag_name("title") && c.text().unwrap().contains("merge")))
                .map(|n| n.attribute("fill").unwrap().to_string())
                .collect()
        };
        assert_eq!(fill_of("matmul").len(), 1);
        assert_ne!(fill_of("matmul"), fill_of("add"));
    }

    #[test]
    fn chart_bars_inside_plot_and_ordered_by_time() {
        let svg = timeline_svg(&sample(), &devices());
        let b = bars(&svg);
        // The plot area: the lane backgrounds plotters drew span it.
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let bg: Vec<(f64, f64, f64, f64)> = doc
            .descendants()
            .filter(|n| n.has_tag_name("rect") && n.attribute("fill") == Some("#F3F4F6"))
            .map(|r| {
                let f = |a: &str| r.attribute(a).unwrap().parse::<f64>().unwrap();
                (f("x"), f("y"), f("width"), f("height"))
            })
            .collect();
        assert!(!bg.is_empty());
        let left = bg.iter().map(|r| r.0).fold(f64::INFINITY, f64::min);
        let right = bg.iter().map(|r| r.0 + r.2).fold(0.0, f64::max);
        let top = bg.iter().map(|r| r.1).fold(f64::INFINITY, f64::min);
        for (x, y, w, h, t) in &b {
            assert!(*x >= left - 0.05 && x + w <= right + 1.05, "bar {t} at {x}+{w} outside {left}..{right}");
            assert!(*y >= top - 0.05 && *h > 0.0, "bar {t} at y {y}");
        }
        for pair in b.windows(2) {
            assert!(pair[0].0 <= pair[1].0, "bars out of time order: {} then {}", pair[0].4, pair[1].4);
        }
        // The first event starts at 0.5 ms of a 34.9 ms axis: near the left edge; the last
        // merge ends near the right.
        let wall = 34.9;
        let first = &b[0];
        assert!((first.0 - left - (right - left) * 0.5 / wall).abs() < 2.0, "first bar at {} (plot {left}..{right})", first.0);
        let last = b.iter().map(|b| b.0 + b.2).fold(0.0, f64::max);
        assert!((last - left - (right - left) * 34.8 / wall).abs() < 2.0, "last bar ends at {last} (plot {left}..{right})");
        // Parallel pieces on the CPU are stacked in tracks, not drawn over each other.
        let mut cpu: Vec<&(f64, f64, f64, f64, String)> = b.iter().filter(|b| b.4.contains("compute on cpu")).collect();
        cpu.sort_by(|a, b| a.0.total_cmp(&b.0));
        for (i, a) in cpu.iter().enumerate() {
            for c in &cpu[i + 1..] {
                let overlap_x = c.0 < a.0 + a.2 - 0.5;
                let overlap_y = c.1 < a.1 + a.3 && a.1 < c.1 + c.3;
                assert!(!(overlap_x && overlap_y), "{} overlaps {}", a.4, c.4);
            }
        }
    }

    #[test]
    fn chart_empty_lanes_are_drawn() {
        // A CPU-only evaluation: transfer lanes still there, saying nothing moved.
        let e = EvalTrace {
            eval: 2,
            cell: 1,
            start: us(0),
            end: us(100),
            pieces: 1,
            events: vec![ev("sum", 1, 1, 0, None, 0, EventKind::Compute, 10, 90, 8)],
            plans: vec![],
            stages: vec![],
            reason: None,
        };
        let svg = timeline_svg(&e, &[DeviceProfile::cpu()]);
        let t = texts(&svg);
        for s in ["cpu", "host→device", "device→host", "nothing moved to a device", "nothing moved back to the host"] {
            assert!(t.iter().any(|x| x == s), "{s} missing in {t:?}");
        }
        assert!(t.iter().any(|x| x.contains("nothing moved")));
        assert_eq!(bars(&svg).len(), 1);
    }

    #[test]
    fn chart_of_nothing_says_cached() {
        let e = EvalTrace { eval: 3, cell: 2, start: us(5), end: us(6), pieces: 0, events: vec![], plans: vec![], stages: vec![], reason: None };
        let svg = timeline_svg(&e, &devices());
        assert!(texts(&svg).iter().any(|t| t == "nothing ran (all values were cached)"));
        let svg = session_timeline_svg(&[], &devices());
        assert!(texts(&svg).iter().any(|t| t == "nothing ran (all values were cached)"));
    }

    #[test]
    fn chart_escapes_text() {
        let mut e = sample();
        e.events[3].op = Arc::from("a<b&c");
        e.events[0].op = Arc::from("q\"'>\u{1}");
        let svg = timeline_svg(&e, &devices());
        let b = bars(&svg);
        assert!(b.iter().any(|b| b.4.starts_with("a<b&c · node #4")));
        assert!(b.iter().any(|b| b.4.starts_with("q\"'>\u{fffd} · node #1")));
        assert!(texts(&svg).iter().any(|t| t.starts_with("a<b&c · cell 3")));
        assert!(svg.contains("a&lt;b&amp;c"));
    }

    /// 2048 pieces x 40 ops on the CPU (16 workers), fused as the executor runs them, plus
    /// transfers: bars are merged, the file stays small.
    fn big() -> EvalTrace {
        let mut events = Vec::with_capacity(100_000);
        let ops: Vec<String> = (0..40).map(|i| format!("op{i:02}")).collect();
        let mut worker_t = [0u64; 16];
        for p in 0..2048u32 {
            let w = p as usize % 16;
            for (j, op) in ops.iter().enumerate() {
                let d = 3 + (j as u64 % 5);
                let s = worker_t[w];
                events.push(ev(op, j as u64 + 10, 5, 0, None, p, EventKind::Compute, s, s + d, 65536));
                worker_t[w] = s + d;
            }
        }
        let end = worker_t.iter().copied().max().unwrap();
        for (j, op) in ops.iter().enumerate() {
            events.push(ev(op, j as u64 + 10, 5, 0, None, 0, EventKind::Merge, end + j as u64 * 10, end + j as u64 * 10 + 8, 1 << 27));
        }
        let t = end + 400;
        for p in 0..8 {
            events.push(ev("op00", 10, 5, 0, Some(1), p, EventKind::Transfer, t + p as u64 * 20, t + p as u64 * 20 + 18, 1 << 24));
        }
        let n = events.len();
        for (i, j) in (n..100_000).enumerate() {
            let s = t + 200 + i as u64;
            events.push(ev(&ops[i % 40], (j % 40) as u64 + 10, 5, 1, None, i as u32, EventKind::Compute, s, s + 1, 1024));
        }
        let end = events.iter().map(|e| e.end).max().unwrap();
        EvalTrace { eval: 9, cell: 5, start: us(0), end, pieces: 2048, events, plans: vec![], stages: vec![], reason: None }
    }

    #[test]
    fn chart_aggregates_100k_events() {
        let e = big();
        assert_eq!(e.events.len(), 100_000);
        let t = Instant::now();
        let svg = timeline_svg(&e, &devices());
        let took = t.elapsed();
        let b = bars(&svg);
        println!("100k events: {} bytes, {} bars, rendered in {:?}", svg.len(), b.len(), took);
        assert!(b.len() <= MAX_BARS, "{} bars", b.len());
        assert!(svg.len() < 1_000_000, "{} bytes", svg.len());
        assert!(b.iter().any(|b| b.4.contains("compute events on cpu, merged · pieces 0–2047")), "{:?}", &b[..3]);
        // The merged bars still account for every event and byte.
        let count: u64 = b
            .iter()
            .map(|b| {
                let l = b.4.lines().nth(1).unwrap();
                l.split(' ').next().unwrap().replace(',', "").parse::<u64>().unwrap_or(1)
            })
            .sum();
        assert_eq!(count, 100_000);
        assert!(texts(&svg).iter().any(|t| t.starts_with("100,000 events shown as")));
        // The long heading pushes the kinds to a row of their own: none passes the right edge.
        let doc = roxmltree::Document::parse(&svg).expect("valid XML");
        for kind in ["compute / transfer", "alloc (outlined)", "merge (hatched)"] {
            let n = doc.descendants().find(|n| n.has_tag_name("text") && n.text().map(str::trim) == Some(kind)).unwrap_or_else(|| panic!("{kind} missing"));
            let x: f64 = n.attribute("x").unwrap().parse().unwrap();
            assert!(x + text::text_px(kind, LEGEND_FONT) <= WIDTH as f64, "{kind} at x = {x} passes the edge");
        }
    }

    /// The worst case for size: 100,000 events of 5,000 ops with long names, spread out so
    /// that merging cannot bring them under the bound.
    #[test]
    fn chart_size_bound_worst_case() {
        let long = "x".repeat(300);
        let events: Vec<Event> = (0..100_000u64)
            .map(|i| {
                let op = format!("{long}{}", i % 5000);
                let s = (i / 5000) * 1000 + (i % 5000) / 10;
                ev(&op, i % 5000, i % 97, (i % 2) as u8, None, i as u32, EventKind::Compute, s, s + 1, 1 << 20)
            })
            .collect();
        let end = events.iter().map(|e| e.end).max().unwrap();
        let e = EvalTrace { eval: 1, cell: 1, start: us(0), end, pieces: 100_000, events, plans: vec![], stages: vec![], reason: None };
        let t = Instant::now();
        let svg = timeline_svg(&e, &devices());
        let took = t.elapsed();
        let b = bars(&svg);
        println!("worst case: {} bytes, {} bars, rendered in {:?}", svg.len(), b.len(), took);
        assert!(b.len() <= MAX_BARS);
        assert!(svg.len() < 1_000_000, "{} bytes", svg.len());
        assert!(texts(&svg).iter().any(|t| t.contains("left out")));
    }

    #[test]
    fn chart_session_timeline_labels_cells() {
        let a = sample();
        let mut b = sample();
        b.eval = 2;
        b.cell = 7;
        // Sixty seconds later.
        let shift = Duration::from_secs(60);
        b.start += shift;
        b.end += shift;
        for e in &mut b.events {
            e.start += shift;
            e.end += shift;
            e.eval = 2;
        }
        let svg = session_timeline_svg(&[&a, &b], &devices());
        let t = texts(&svg);
        assert!(t.iter().any(|s| s == "cell 4") && t.iter().any(|s| s == "cell 7"), "{t:?}");
        assert!(t.iter().any(|s| s.starts_with("idle 60.0 s") || s.starts_with("idle 1.0 min") || s.starts_with("idle 59")), "{t:?}");
        assert!(t.iter().any(|s| s.starts_with("Cells 4–7: 2 evaluations")));
        let bs = bars(&svg);
        assert_eq!(bs.len(), 2 * a.events.len());
        // The second evaluation is drawn to the right of the first, and not squeezed to a
        // sliver by the idle minute.
        let first_end = bs[..a.events.len()].iter().map(|b| b.0 + b.2).fold(0.0, f64::max);
        let second: Vec<_> = bs[a.events.len()..].iter().collect();
        let (s0, s1) = (second.iter().map(|b| b.0).fold(f64::INFINITY, f64::min), second.iter().map(|b| b.0 + b.2).fold(0.0, f64::max));
        assert!(s0 > first_end);
        assert!(s1 - s0 > 300.0, "second evaluation only {} px wide", s1 - s0);
    }

    #[test]
    fn chart_of_a_real_evaluation() {
        use crate::{annotation::oa, session::Session, value::Value};
        let session = Session::new();
        session.set_cell(3);
        let n = 200_000;
        let x = session.source(Value::from(ndarray::Array1::from_iter((0..n).map(|i| i as f64)).into_dyn()), "x");
        let double = oa("double")
            .cpu(|_ctx, args| {
                let x = args[0].array::<f64>("double")?;
                Ok(Value::from(x.mapv(|v| 2.0 * v)))
            })
            .build();
        let y = double.call(&[&x]).unwrap();
        y.eval().unwrap();
        let trace = session.trace();
        let e = trace.last().expect("an evaluation");
        let svg = timeline_svg(e, &session.devices().profiles());
        let b = bars(&svg);
        assert_eq!(b.len(), e.events.len().min(MAX_BARS));
        assert!(b.iter().any(|b| b.4.starts_with("double · node #") && b.4.contains("cell 3")));
        let t = texts(&svg);
        assert!(t.iter().any(|s| s == "cpu") && t.iter().any(|s| s == "host→device") && t.iter().any(|s| s == "device→host"));
        assert!(t.iter().any(|s| s.starts_with("double · cell 3")));
        let all: Vec<&EvalTrace> = trace.evals().collect();
        roxmltree::Document::parse(&session_timeline_svg(&all, &session.devices().profiles())).unwrap();
    }

    #[test]
    fn chart_colours_are_stable_and_distinct() {
        let a = assign_colors(&["matmul", "add", "relu"]);
        let b = assign_colors(&["relu", "matmul", "add"]);
        assert_eq!(a[0], b[1]);
        assert_eq!(a[1], b[2]);
        // Whatever else a later chart shows, an op keeps its colour.
        let c = assign_colors(&["mul", "add", "zz_first_seen_here", "aa_first_seen_here", "matmul"]);
        assert_eq!((c[1], c[4]), (a[1], a[0]));
        assert_eq!(c.iter().collect::<BTreeSet<_>>().len(), 5);
        let many: Vec<String> = (0..40).map(|i| format!("op{i}")).collect();
        let c = assign_colors(&many.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(c.iter().collect::<BTreeSet<_>>().len(), 40);
    }

    #[test]
    fn lane_labels_wrap_device_names_instead_of_cutting_them() {
        let name = crate::emulated::EMULATED_NAME;
        let lines = wrap_name(name, SUB_CHARS, 3);
        assert_eq!(lines, ["emulated accelerator", "(host memory, CPU kernels;", "not a GPU)"]);
        assert_eq!(wrap_name("cpu", SUB_CHARS, 3), ["cpu"]);
        let long = wrap_name("a very long processor name (with many many words of details that go on and on)", 12, 3);
        assert_eq!(long.len(), 3);
        assert!(long.iter().all(|l| l.chars().count() <= 12), "{long:?}");
        assert!(long[2].ends_with('…'), "{long:?}");
        // In the chart: every line of the name is there, and the lane is tall enough for them.
        let mut devs = devices();
        devs[1] = DeviceProfile { name: name.to_string(), ..devs[1].clone() };
        let t = texts(&timeline_svg(&sample(), &devs));
        for l in wrap_name(name, SUB_CHARS, 3) {
            assert!(t.contains(&l), "{l} missing in {t:?}");
        }
    }

    #[test]
    fn a_short_evaluation_in_one_line() {
        use EventKind::*;
        let events = vec![
            ev("x", 1, 2, 0, Some(1), 0, Transfer, 0, 20, 8 << 10),
            ev("exp", 2, 2, 1, None, 0, Compute, 20, 60, 8 << 10),
            ev("mul", 3, 2, 1, None, 0, Compute, 60, 90, 8 << 10),
            ev("exp", 2, 2, 1, None, 1, Compute, 90, 120, 8 << 10),
            ev("sum", 4, 3, 0, None, 0, Compute, 150, 160, 8),
            ev("sum", 4, 3, 0, None, 0, Merge, 160, 170, 8),
        ];
        let e = EvalTrace { eval: 1, cell: 3, start: us(0), end: us(310), pieces: 2, events, plans: vec![], stages: vec![], reason: None };
        let line = compact_line(&e, &devices(), "`:bach trace last` draws its timeline");
        assert_eq!(line.plain, "Bach: 310.0 µs · cpu: sum · gpu 0: exp, mul · 1 copy (8.0 KiB) · `:bach trace last` draws its timeline");
        assert!(!line.plain.contains('\n'));
        // Each op in the colour it has in the charts, its time on hover.
        let svg = timeline_svg(&e, &devices());
        for op in ["exp", "mul", "sum"] {
            let in_chart = assign_colors(&[op])[0];
            assert!(line.html.contains(&format!("background:{}\"></span>&#8201;{op}<", hex(in_chart))), "{op} in {}", line.html);
            assert!(svg.contains(&hex(in_chart)));
        }
        assert!(line.html.contains("title=\"exp on gpu 0: 70.0 µs\""), "{}", line.html);
        let nothing = EvalTrace { events: vec![], ..e };
        assert!(compact_line(&nothing, &devices(), "").plain.contains("nothing ran"));
    }

    #[test]
    fn chart_units() {
        assert_eq!(fmt_bytes(512), "512 B");
        assert_eq!(fmt_bytes(80 << 20), "80.0 MiB");
        assert_eq!(fmt_bytes(3 << 30), "3.0 GiB");
        assert_eq!(fmt_dur(0.0123), "12.3 µs");
        assert_eq!(fmt_dur(1234.0), "1.23 s");
        assert_eq!(group(1_234_567), "1,234,567");
        assert_eq!(nice_step(0.7), 1.0);
        assert_eq!(nice_step(1.3), 2.0);
        assert_eq!(nice_step(30.0), 50.0);
        assert_eq!(fmt_tick(2.5000), "2.5");
        assert_eq!(fmt_tick(10.0), "10");
    }
}

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

/// Most bars (SVG rects with hover text) one chart holds; beyond it, close bars are merged.
pub const MAX_BARS: usize = 2500;

const WIDTH: u32 = 1100;
const TITLE_H: u32 = 34;
const SIDE: u32 = 12;
const LEFT_LABELS: u32 = 150;
const RIGHT: u32 = 28;
const BOTTOM_LABELS: u32 = 42;
/// Space above the plot for the cell labels of a session timeline.
const CELL_ROW: u32 = 20;
/// Most tracks a lane is split into; beyond it, bars share tracks (and may overlap).
const MAX_TRACKS: usize = 48;
/// Narrowest bar drawn, in pixels, so that a very short event is still seen and hovered.
const MIN_BAR_PX: f64 = 0.8;
const LEGEND_FONT: u32 = 13;
const LEGEND_ROW: u32 = 18;
const MAX_LEGEND: usize = 60;
const FONT: &str = "sans-serif";

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

// ---------------------------------------------------------------------------------------------
// Axes

/// One stretch of real time shown at full scale.
#[derive(Clone, Debug)]
struct Segment {
    /// Real ms since the chart's origin.
    start: f64,
    end: f64,
    /// Where it starts on the display axis.
    at: f64,
}

/// Real time (ms since the chart's origin) to position, with long idle gaps cut short.
#[derive(Clone, Debug)]
struct TimeAxis {
    segments: Vec<Segment>,
    /// Display length.
    total: f64,
}

impl TimeAxis {
    fn linear(end: f64) -> Self {
        TimeAxis { segments: vec![Segment { start: 0.0, end, at: 0.0 }], total: end }
    }

    /// Busy intervals (sorted, disjoint) to an axis: gaps longer than a tenth of the busy time
    /// shrink to half that (and all of them together to at most a quarter of it).
    fn with_gaps(busy: &[(f64, f64)]) -> Self {
        let busy_total: f64 = busy.iter().map(|(a, b)| b - a).sum::<f64>().max(1e-6);
        let cut = busy_total * 0.1;
        let cuts = busy.windows(2).filter(|w| w[1].0 - w[0].1 > cut).count().max(1);
        let shown = (cut * 0.5).min(busy_total * 0.25 / cuts as f64);
        let mut segments: Vec<Segment> = Vec::new();
        let mut at = 0.0;
        for &(s, e) in busy {
            if let Some(last) = segments.last_mut() {
                let gap = s - last.end;
                if gap <= cut {
                    at += gap + (e - s);
                    last.end = e;
                    continue;
                }
                at += shown;
            }
            segments.push(Segment { start: s, end: e, at });
            at += e - s;
        }
        if segments.is_empty() {
            return TimeAxis::linear(1e-3);
        }
        // The axis starts at the origin (0).
        let first = &mut segments[0];
        first.at = 0.0;
        let lead = first.start;
        first.start = 0.0;
        for s in segments.iter_mut().skip(1) {
            s.at += lead;
        }
        let last = segments.last().expect("non-empty");
        TimeAxis { total: last.at + (last.end - last.start), segments }
    }

    /// The real start and end of the axis.
    fn real_range(&self) -> (f64, f64) {
        (self.segments[0].start, self.segments.last().expect("non-empty").end)
    }

    /// Idle gaps that were cut short: (real start, real end).
    fn cuts(&self) -> Vec<(f64, f64)> {
        self.segments.windows(2).map(|w| (w[0].end, w[1].start)).collect()
    }

    /// Display position of a real time.
    fn display(&self, t: f64) -> f64 {
        let i = self.segments.partition_point(|s| s.end < t);
        if i == self.segments.len() {
            let last = self.segments.last().expect("non-empty");
            return last.at + (last.end - last.start);
        }
        let s = &self.segments[i];
        if t >= s.start || i == 0 {
            return s.at + (t - s.start).max(0.0);
        }
        // Inside a cut gap: spread it linearly over its shortened width.
        let p = &self.segments[i - 1];
        let p_end = p.at + (p.end - p.start);
        let f = (t - p.end) / (s.start - p.end).max(1e-12);
        p_end + f * (s.at - p_end)
    }

    /// Position in pixels, unrounded, for pixel range `limit` (what [`Ranged::map`] rounds).
    fn map_f(&self, t: f64, limit: (i32, i32)) -> f64 {
        limit.0 as f64 + (limit.1 - limit.0) as f64 * self.display(t) / self.total
    }
}

impl Ranged for TimeAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        self.map_f(*v, limit).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if matches!(hint.weight(), KeyPointWeight::Any) {
            return Vec::new();
        }
        let n = hint.max_num_points().max(2) as f64;
        let min_gap = self.total / n * 0.7;
        let mut out: Vec<f64> = Vec::new();
        for s in &self.segments {
            let share = ((s.end - s.start) / self.total * n).floor().max(1.0);
            let step = nice_step((s.end - s.start) / share);
            let mut k = (s.start / step).ceil();
            while k * step <= s.end + step * 1e-9 {
                let t = k * step;
                let d = self.display(t);
                if out.last().is_none_or(|&p| d - self.display(p) >= min_gap) {
                    out.push(t);
                }
                k += 1.0;
            }
        }
        out
    }

    fn range(&self) -> Range<f64> {
        let (a, b) = self.real_range();
        a..b
    }
}

/// A 1-2-5 step at least `raw`.
fn nice_step(raw: f64) -> f64 {
    let raw = raw.max(1e-9);
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|&s| s >= raw * 0.999).unwrap_or(10.0 * mag)
}

/// Lanes stacked top to bottom: 0 is the top of the plot, `total` its bottom.
#[derive(Clone, Debug)]
struct LaneAxis {
    total: f64,
}

impl LaneAxis {
    /// `limit` is (bottom, top) in pixels, as plotters passes it for a y axis.
    fn map_f(&self, v: f64, limit: (i32, i32)) -> f64 {
        limit.1 as f64 + (limit.0 - limit.1) as f64 * v / self.total
    }
}

impl Ranged for LaneAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        self.map_f(*v, limit).round() as i32
    }
    fn key_points<Hint: KeyPointHint>(&self, _hint: Hint) -> Vec<f64> {
        Vec::new()
    }
    fn range(&self) -> Range<f64> {
        0.0..self.total
    }
}

// ---------------------------------------------------------------------------------------------
// Model: lanes, ops, bars

struct Lane {
    label: String,
    /// Device name under the label.
    sub: String,
    /// Said inside the lane when nothing ran there.
    empty: &'static str,
    tracks: usize,
    /// Top and height in lane units (nominally pixels).
    top: f64,
    height: f64,
}

const PAD: f64 = 4.0;

impl Lane {
    /// Vertical extent (lane units) of a bar on track `t`.
    fn track_span(&self, t: usize) -> (f64, f64) {
        let n = self.tracks.max(1) as f64;
        let h = (self.height - 2.0 * PAD) / n;
        let gap = if h >= 5.0 { 1.0 } else { 0.0 };
        let y0 = self.top + PAD + h * t as f64;
        (y0, y0 + h - gap)
    }
}

fn lane_height(tracks: usize) -> f64 {
    if tracks == 0 {
        return 30.0;
    }
    (tracks as f64 * 9.0).clamp(30.0, 200.0) + 2.0 * PAD
}

struct OpInfo {
    name: String,
    color: Rgb,
    cells: BTreeSet<u64>,
    busy_ms: f64,
    first: f64,
}

/// One drawn bar: an event, or several merged ones.
#[derive(Clone)]
struct Bar {
    lane: usize,
    op: usize,
    kind: EventKind,
    eval: u64,
    /// Real ms since the origin.
    t0: f64,
    t1: f64,
    /// Estimated pixels, for merging and stacking.
    x0: f64,
    x1: f64,
    /// The event it stands for, when only one.
    event: usize,
    count: usize,
    busy_ms: f64,
    bytes: u64,
    pieces: (u32, u32),
    nodes: BTreeSet<u64>,
    cells: BTreeSet<u64>,
    track: usize,
}

impl Bar {
    fn absorb(&mut self, o: &Bar) {
        self.t0 = self.t0.min(o.t0);
        self.t1 = self.t1.max(o.t1);
        self.x0 = self.x0.min(o.x0);
        self.x1 = self.x1.max(o.x1);
        self.count += o.count;
        self.busy_ms += o.busy_ms;
        self.bytes += o.bytes;
        self.pieces = (self.pieces.0.min(o.pieces.0), self.pieces.1.max(o.pieces.1));
        self.nodes.extend(o.nodes.iter().copied());
        self.cells.extend(o.cells.iter().copied());
    }
}

/// Names devices: `cpu`, `gpu 0`, `gpu 1`, `emulated 2`, `device 7` (no profile).
struct DeviceNames {
    names: HashMap<DeviceId, String>,
}

impl DeviceNames {
    fn new(devices: &[DeviceProfile]) -> Self {
        let mut names = HashMap::new();
        let mut gpus = 0;
        let mut sorted: Vec<&DeviceProfile> = devices.iter().collect();
        sorted.sort_by_key(|d| d.id);
        for d in sorted {
            let n = match d.kind {
                DeviceKind::Cpu => "cpu".to_string(),
                DeviceKind::Cuda => {
                    gpus += 1;
                    format!("gpu {}", gpus - 1)
                }
                DeviceKind::Emulated => format!("emulated {}", d.id.0),
            };
            names.entry(d.id).or_insert(n);
        }
        names.entry(CPU).or_insert_with(|| "cpu".into());
        DeviceNames { names }
    }
    fn name(&self, id: DeviceId) -> String {
        self.names.get(&id).cloned().unwrap_or_else(|| format!("device {}", id.0))
    }
}

struct Model<'a> {
    session: bool,
    evals: Vec<&'a EvalTrace>,
    events: Vec<&'a Event>,
    axis: TimeAxis,
    lanes: Vec<Lane>,
    ops: Vec<OpInfo>,
    bars: Vec<Bar>,
    merged: bool,
    dropped: usize,
    names: DeviceNames,
    /// Real (start, end) ms of each evaluation, with its cell and number.
    spans: Vec<(f64, f64, u64, u64)>,
    /// Unit of the time axis: 1 (ms) or 1000 (s).
    unit: f64,
    prefix: String,
}

fn ms(d: std::time::Duration, origin: std::time::Duration) -> f64 {
    d.saturating_sub(origin).as_secs_f64() * 1e3
}

fn lane_of(e: &Event, compute: &BTreeMap<DeviceId, usize>, h2d: usize, d2h: usize) -> usize {
    match e.kind {
        EventKind::Transfer => {
            let to_host = match e.to {
                Some(to) => to == CPU,
                None => e.device != CPU,
            };
            if to_host {
                d2h
            } else {
                h2d
            }
        }
        _ => compute[&e.device],
    }
}

impl<'a> Model<'a> {
    fn build(evals: &[&'a EvalTrace], devices: &[DeviceProfile], session: bool) -> Model<'a> {
        let mut evals: Vec<&EvalTrace> = evals.to_vec();
        evals.sort_by_key(|e| (e.start, e.eval));
        let events: Vec<&Event> = evals.iter().flat_map(|e| e.events.iter()).collect();
        let names = DeviceNames::new(devices);

        // Time: origin at the first evaluation (or event).
        let origin = evals.iter().map(|e| e.start).chain(events.iter().map(|e| e.start)).min().unwrap_or_default();
        let spans: Vec<(f64, f64, u64, u64)> = evals
            .iter()
            .map(|ev| {
                let s = ev.events.iter().map(|e| e.start).chain([ev.start]).min().unwrap_or_default();
                let e = ev.events.iter().map(|e| e.end).chain([ev.end]).max().unwrap_or_default();
                (ms(s, origin), ms(e, origin).max(ms(s, origin)), ev.cell, ev.eval)
            })
            .collect();
        let end = spans.iter().map(|s| s.1).fold(0.0, f64::max);
        let axis = if session {
            let mut busy: Vec<(f64, f64)> = Vec::new();
            let mut sorted: Vec<(f64, f64)> = spans.iter().map(|s| (s.0, s.1)).collect();
            sorted.sort_by(|a, b| a.0.total_cmp(&b.0));
            for (s, e) in sorted {
                match busy.last_mut() {
                    Some(last) if s <= last.1 => last.1 = last.1.max(e),
                    _ => busy.push((s, e)),
                }
            }
            // An evaluation too short to see still gets a sliver.
            let total: f64 = busy.iter().map(|(a, b)| b - a).sum::<f64>().max(1e-3);
            for i in 0..busy.len() {
                let next = busy.get(i + 1).map_or(f64::INFINITY, |n| n.0);
                busy[i].1 = busy[i].1.max((busy[i].0 + total * 0.002).min(next));
            }
            TimeAxis::with_gaps(&busy)
        } else {
            TimeAxis::linear(end.max(1e-3))
        };
        let (r0, r1) = axis.real_range();
        let unit = if r1 - r0 >= 10_000.0 { 1000.0 } else { 1.0 };

        // Lanes: each device's compute, then the two transfer lanes.
        let mut compute: BTreeMap<DeviceId, usize> = BTreeMap::new();
        let mut lanes = Vec::new();
        let mut ids: BTreeSet<DeviceId> = devices.iter().map(|d| d.id).collect();
        ids.insert(CPU);
        for e in &events {
            if e.kind != EventKind::Transfer {
                ids.insert(e.device);
            }
        }
        for id in ids {
            let name = names.name(id);
            let label = if id == CPU { name } else { format!("{name} compute") };
            let sub = devices.iter().find(|d| d.id == id).map(|d| d.name.clone()).unwrap_or_default();
            compute.insert(id, lanes.len());
            lanes.push(Lane { label, sub, empty: "idle", tracks: 0, top: 0.0, height: 0.0 });
        }
        let h2d = lanes.len();
        lanes.push(Lane { label: "host→device".into(), sub: String::new(), empty: "nothing moved to a device", tracks: 0, top: 0.0, height: 0.0 });
        let d2h = lanes.len();
        lanes.push(Lane { label: "device→host".into(), sub: String::new(), empty: "nothing moved back to the host", tracks: 0, top: 0.0, height: 0.0 });

        // Ops, in order of first appearance; colours keyed by name.
        let mut op_index: HashMap<&str, usize> = HashMap::new();
        let mut ops: Vec<OpInfo> = Vec::new();
        for e in &events {
            let t = ms(e.start, origin);
            let dur = ms(e.end, origin) - t;
            let i = *op_index.entry(&*e.op).or_insert_with(|| {
                ops.push(OpInfo { name: e.op.to_string(), color: (0, 0, 0), cells: BTreeSet::new(), busy_ms: 0.0, first: t });
                ops.len() - 1
            });
            let o = &mut ops[i];
            o.cells.insert(e.cell);
            o.busy_ms += dur.max(0.0);
            o.first = o.first.min(t);
        }
        let mut order: Vec<usize> = (0..ops.len()).collect();
        order.sort_by(|&a, &b| ops[a].first.total_cmp(&ops[b].first).then(ops[a].name.cmp(&ops[b].name)));
        let mut remap = vec![0; ops.len()];
        for (new, &old) in order.iter().enumerate() {
            remap[old] = new;
        }
        let mut ops: Vec<OpInfo> = {
            let mut slots: Vec<Option<OpInfo>> = ops.into_iter().map(Some).collect();
            order.iter().map(|&i| slots[i].take().expect("each once")).collect()
        };
        let colors = assign_colors(&ops.iter().map(|o| o.name.as_str()).collect::<Vec<_>>());
        for (o, c) in ops.iter_mut().zip(colors) {
            o.color = c;
        }

        // Bars, one per event, on an estimated pixel scale.
        let plot_px = (WIDTH - 2 * SIDE - LEFT_LABELS - RIGHT) as f64;
        let px = |t: f64| axis.display(t) / axis.total * plot_px;
        let mut bars: Vec<Bar> = events
            .iter()
            .enumerate()
            .map(|(i, e)| {
                let t0 = ms(e.start, origin);
                let t1 = ms(e.end, origin).max(t0);
                Bar {
                    lane: lane_of(e, &compute, h2d, d2h),
                    op: remap[op_index[&*e.op]],
                    kind: e.kind,
                    eval: e.eval,
                    t0,
                    t1,
                    x0: px(t0),
                    x1: px(t1),
                    event: i,
                    count: 1,
                    busy_ms: t1 - t0,
                    bytes: e.bytes,
                    pieces: (e.piece, e.piece),
                    nodes: BTreeSet::from([e.node]),
                    cells: BTreeSet::from([e.cell]),
                    track: 0,
                }
            })
            .collect();

        // Too many to draw one by one: merge bars of the same lane, op, kind and evaluation that
        // are under a pixel apart, then two, four... until they fit; then across evaluations;
        // then leave out the shortest.
        let merged = bars.len() > MAX_BARS;
        let mut dropped = 0;
        if merged {
            'merging: for by_eval in [true, false] {
                let mut gap = 1.0;
                loop {
                    bars = merge_bars(bars, gap, by_eval);
                    if bars.len() <= MAX_BARS {
                        break 'merging;
                    }
                    if gap > plot_px * 2.0 {
                        break;
                    }
                    gap *= 2.0;
                }
            }
            if bars.len() > MAX_BARS {
                bars.sort_by(|a, b| b.busy_ms.total_cmp(&a.busy_ms));
                dropped = bars.len() - MAX_BARS;
                bars.truncate(MAX_BARS);
            }
        }
        bars.sort_by(|a, b| a.t0.total_cmp(&b.t0).then(a.lane.cmp(&b.lane)).then(a.t1.total_cmp(&b.t1)));

        // Stack bars that overlap in time into tracks (first fit: pieces on parallel workers
        // land on one track per worker).
        let mut ends: Vec<Vec<f64>> = vec![Vec::new(); lanes.len()];
        for b in &mut bars {
            let tracks = &mut ends[b.lane];
            let eps = 1e-9;
            let t = match tracks.iter().position(|&end| end <= b.x0 + eps) {
                Some(t) => t,
                None if tracks.len() < MAX_TRACKS => {
                    tracks.push(f64::NEG_INFINITY);
                    tracks.len() - 1
                }
                None => (0..tracks.len()).min_by(|&a, &c| tracks[a].total_cmp(&tracks[c])).expect("non-empty"),
            };
            tracks[t] = tracks[t].max(b.x1);
            b.track = t;
        }
        let mut top = 0.0;
        for (lane, e) in lanes.iter_mut().zip(&ends) {
            lane.tracks = e.len();
            lane.top = top;
            lane.height = lane_height(e.len());
            top += lane.height;
        }

        let prefix = id_prefix(&evals);
        Model { session, evals, events, axis, lanes, ops, bars, merged, dropped, names, spans, unit, prefix }
    }

    fn plot_height(&self) -> f64 {
        self.lanes.iter().map(|l| l.height).sum()
    }

    fn title(&self) -> String {
        let moved = |to_host: bool| -> u64 { self.events.iter().filter(|e| e.kind == EventKind::Transfer && (e.to == Some(CPU)) == to_host).map(|e| e.bytes).sum() };
        let (h2d, d2h) = (moved(false), moved(true));
        let pieces: usize = self.evals.iter().map(|e| e.pieces).sum();
        let moved = if h2d + d2h == 0 { "nothing moved".to_string() } else { format!("{} moved ({} to device, {} to host)", fmt_bytes(h2d + d2h), fmt_bytes(h2d), fmt_bytes(d2h)) };
        if self.session {
            let busy: f64 = self.spans.iter().map(|s| s.1 - s.0).sum();
            let cells: BTreeSet<u64> = self.evals.iter().map(|e| e.cell).collect();
            let cells = match (cells.first(), cells.last()) {
                (Some(a), Some(b)) if a == b => format!("Cell {a}"),
                (Some(a), Some(b)) => format!("Cells {a}–{b}"),
                _ => "No cells".into(),
            };
            format!("{cells}: {} evaluation{} · {} busy · {} pieces · {moved}", self.evals.len(), if self.evals.len() == 1 { "" } else { "s" }, fmt_dur(busy), group(pieces as u64))
        } else {
            let ev = self.evals[0];
            let wall = self.spans[0].1 - self.spans[0].0;
            format!("Evaluation {} (cell {}): {} wall · {} pieces · {moved}", ev.eval, ev.cell, fmt_dur(wall), group(pieces as u64))
        }
    }

    fn fmt_t(&self, t: f64) -> String {
        if self.unit > 1.0 {
            format!("{:.4} s", t / 1000.0)
        } else {
            format!("{t:.3} ms")
        }
    }

    /// Hover text of a bar.
    fn hover(&self, b: &Bar) -> String {
        let op = &truncate(&self.ops[b.op].name, 60);
        let mut s = String::new();
        let kind = kind_name(b.kind);
        if b.count == 1 {
            let e = self.events[b.event];
            let _ = writeln!(s, "{op} · node #{} · cell {}", e.node, e.cell);
            match e.kind {
                EventKind::Transfer => {
                    let to = e.to.map(|d| self.names.name(d)).unwrap_or_else(|| "?".into());
                    let _ = writeln!(s, "transfer {} → {to} · piece {}", self.names.name(e.device), e.piece);
                }
                _ => {
                    let _ = writeln!(s, "{kind} on {} · piece {}", self.names.name(e.device), e.piece);
                }
            }
            let _ = writeln!(s, "{} – {} ({})", self.fmt_t(b.t0), self.fmt_t(b.t1), fmt_dur(b.t1 - b.t0));
            let _ = write!(s, "{}", fmt_bytes(e.bytes));
            if e.kind == EventKind::Transfer && b.t1 > b.t0 {
                let _ = write!(s, " at {}", fmt_rate(e.bytes as f64 / ((b.t1 - b.t0) / 1e3)));
            }
        } else {
            let e = self.events[b.event];
            let nodes: Vec<String> = b.nodes.iter().take(4).map(|n| format!("#{n}")).collect();
            let more = if b.nodes.len() > 4 { format!(" +{}", b.nodes.len() - 4) } else { String::new() };
            let _ = writeln!(s, "{op} · node{} {}{more} · {}", if b.nodes.len() == 1 { "" } else { "s" }, nodes.join(", "), fmt_cells(&b.cells));
            let place = match e.kind {
                EventKind::Transfer => self.lanes[b.lane].label.clone(),
                _ => format!("on {}", self.names.name(e.device)),
            };
            let pieces = if b.pieces.0 == b.pieces.1 { format!("piece {}", b.pieces.0) } else { format!("pieces {}–{}", b.pieces.0, b.pieces.1) };
            let _ = writeln!(s, "{} {kind} events {place}, merged · {pieces}", group(b.count as u64));
            let _ = writeln!(s, "{} – {} · busy {} in all", self.fmt_t(b.t0), self.fmt_t(b.t1), fmt_dur(b.busy_ms));
            let _ = write!(s, "{} in all", fmt_bytes(b.bytes));
        }
        s
    }
}

fn kind_name(k: EventKind) -> &'static str {
    match k {
        EventKind::Alloc => "alloc",
        EventKind::Transfer => "transfer",
        EventKind::Compute => "compute",
        EventKind::Merge => "merge",
    }
}

fn merge_bars(mut bars: Vec<Bar>, gap: f64, by_eval: bool) -> Vec<Bar> {
    let key = |b: &Bar| (b.lane, b.op, kind_name(b.kind), if by_eval { b.eval } else { 0 });
    bars.sort_by(|a, b| key(a).cmp(&key(b)).then(a.x0.total_cmp(&b.x0)));
    let mut out: Vec<Bar> = Vec::with_capacity(bars.len() / 4 + 1);
    for b in bars {
        if let Some(last) = out.last_mut() {
            let same = key(last) == key(&b);
            if same && b.x0 <= last.x1 + gap {
                last.absorb(&b);
                continue;
            }
        }
        out.push(b);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Colours

/// Tableau-based: eight strong, clearly distinct colours first, then twelve more.
const STRONG: usize = 8;
type Rgb = (u8, u8, u8);

const PALETTE: [Rgb; 20] = [
    (0x4e, 0x79, 0xa7), // blue
    (0xf2, 0x8e, 0x2b), // orange
    (0xe1, 0x57, 0x59), // red
    (0x49, 0x98, 0x94), // teal
    (0x59, 0xa1, 0x4f), // green
    (0xed, 0xc9, 0x48), // yellow
    (0xb0, 0x7a, 0xa1), // purple
    (0xff, 0x9d, 0xa7), // pink
    (0x9c, 0x75, 0x5f), // brown
    (0xa0, 0xcb, 0xe8), // light blue
    (0x8c, 0xd1, 0x7d), // light green
    (0xb6, 0x99, 0x2d), // olive
    (0xd4, 0xa6, 0xc8), // lilac
    (0x86, 0xbc, 0xb6), // light teal
    (0xff, 0xbe, 0x7d), // peach
    (0xd3, 0x72, 0x95), // rose
    (0x79, 0x70, 0x6e), // grey
    (0x2f, 0x4b, 0x7c), // navy
    (0xba, 0xb0, 0xac), // light grey
    (0x8f, 0x2d, 0x2d), // dark red
];

fn fnv(s: &str) -> u64 {
    s.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| (h ^ b as u64).wrapping_mul(0x0100_0000_01b3))
}

/// Colours for ops: each op's name picks its place in the palette (so an op keeps its colour
/// from chart to chart); when two ops of one chart pick the same place, the later name in
/// sorted order moves on to the next free one, the eight strong colours first. Past 20 ops,
/// colours come back darker.
fn assign_colors(names: &[&str]) -> Vec<Rgb> {
    let mut order: Vec<usize> = (0..names.len()).collect();
    order.sort_by_key(|&i| names[i]);
    let mut taken = [false; 20];
    let mut out = vec![(0, 0, 0); names.len()];
    for (used, i) in order.into_iter().enumerate() {
        let h = fnv(names[i]) as usize;
        let round = used / 20;
        if used % 20 == 0 {
            taken = [false; 20];
        }
        let rest = PALETTE.len() - STRONG;
        let pick = (0..STRONG).map(|k| (h + k) % STRONG).chain((0..rest).map(|k| STRONG + (h + k) % rest)).find(|&p| !taken[p]).expect("a free colour in this round");
        taken[pick] = true;
        let (r, g, b) = PALETTE[pick];
        let f = 0.62f64.powi(round.min(8) as i32);
        out[i] = ((r as f64 * f) as u8, (g as f64 * f) as u8, (b as f64 * f) as u8);
    }
    out
}

fn hex((r, g, b): Rgb) -> String {
    format!("#{r:02x}{g:02x}{b:02x}")
}

fn id_prefix(evals: &[&EvalTrace]) -> String {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for e in evals {
        for v in [e.eval, e.cell, e.events.len() as u64, e.start.as_nanos() as u64, e.end.as_nanos() as u64] {
            h = (h ^ v).wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("bach{:08x}", h as u32)
}

// ---------------------------------------------------------------------------------------------
// Text

/// Escape for XML text and attribute values; characters XML cannot hold become U+FFFD.
fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' | '\t' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// Text for plotters (which escapes markup itself): only characters XML cannot hold go.
fn clean(s: &str) -> String {
    s.chars().map(|c| if ((c as u32) < 0x20 && c != '\t') || c == '\u{fffe}' || c == '\u{ffff}' { '\u{fffd}' } else { c }).collect()
}

fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Width of `text` at `size` (plotters' size, before its 1/1.24), roughly, in pixels.
fn text_px(text: &str, size: u32) -> f64 {
    text.chars().count() as f64 * size as f64 / 1.24 * 0.58
}

/// "cell 3", "cells 2, 5", "cells 1, 2, 3, 4 +6".
fn fmt_cells(cells: &BTreeSet<u64>) -> String {
    let shown: Vec<String> = cells.iter().take(4).map(|c| c.to_string()).collect();
    let more = if cells.len() > 4 { format!(" +{}", cells.len() - 4) } else { String::new() };
    format!("cell{} {}{more}", if cells.len() == 1 { "" } else { "s" }, shown.join(", "))
}

fn fmt_bytes(b: u64) -> String {
    const U: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut v = b as f64 / 1024.0;
    let mut i = 0;
    while v >= 1024.0 && i < U.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if v >= 100.0 {
        format!("{v:.0} {}", U[i])
    } else {
        format!("{v:.1} {}", U[i])
    }
}

fn fmt_rate(bytes_per_s: f64) -> String {
    if bytes_per_s >= 1e9 {
        format!("{:.1} GB/s", bytes_per_s / 1e9)
    } else {
        format!("{:.1} MB/s", bytes_per_s / 1e6)
    }
}

/// A duration given in ms, in the unit that reads best.
fn fmt_dur(ms: f64) -> String {
    if ms < 1e-3 {
        format!("{:.0} ns", ms * 1e6)
    } else if ms < 1.0 {
        format!("{:.1} µs", ms * 1e3)
    } else if ms < 10.0 {
        format!("{ms:.2} ms")
    } else if ms < 1000.0 {
        format!("{ms:.1} ms")
    } else if ms < 120_000.0 {
        format!("{:.2} s", ms / 1e3)
    } else {
        format!("{:.1} min", ms / 6e4)
    }
}

/// 1234567 -> "1,234,567".
fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// An axis value without trailing zeros.
fn fmt_tick(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

// ---------------------------------------------------------------------------------------------
// Drawing

type DrawResult<T> = Result<T, Box<dyn std::error::Error>>;

fn render(evals: &[&EvalTrace], devices: &[DeviceProfile], session: bool) -> String {
    let ran = evals.iter().any(|e| !e.events.is_empty());
    let result = if ran { draw_timeline(&Model::build(evals, devices, session)) } else { draw_empty(evals, session) };
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

fn draw_empty(evals: &[&EvalTrace], session: bool) -> DrawResult<String> {
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
        let style = (FONT, 16).into_font().color(&RGBColor(0x55, 0x55, 0x55)).pos(Pos::new(HPos::Center, VPos::Center));
        root.draw(&Text::new("nothing ran (all values were cached)", (320, 60), style))?;
        root.present()?;
    }
    Ok(buf)
}

/// Legend entries laid out in columns: (text, colour) and the column width.
fn legend_layout(m: &Model) -> (Vec<(String, Rgb)>, u32, usize) {
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

fn draw_timeline(m: &Model) -> DrawResult<String> {
    let cell_row = if m.session { CELL_ROW } else { 8 };
    let plot_h = m.plot_height();
    let chart_h = cell_row + plot_h.ceil() as u32 + 1 + BOTTOM_LABELS + 4;
    let (entries, col_w, cols) = legend_layout(m);
    let rows = entries.len().div_ceil(cols) as u32;
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
            .label_style((FONT, 13))
            .axis_desc_style((FONT, 14))
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
            let bold = (FONT, 14).into_font().style(FontStyle::Bold).color(&BLACK);
            if lane.sub.is_empty() {
                root.draw(&Text::new(clean(&lane.label), (lx, cy.round() as i32), bold.pos(Pos::new(HPos::Right, VPos::Center))))?;
            } else {
                root.draw(&Text::new(clean(&lane.label), (lx, (cy - 7.0).round() as i32), bold.pos(Pos::new(HPos::Right, VPos::Center))))?;
                let small = (FONT, 11).into_font().color(&grey).pos(Pos::new(HPos::Right, VPos::Center));
                root.draw(&Text::new(clean(&truncate(&lane.sub, 24)), (lx, (cy + 8.0).round() as i32), small))?;
            }
            if lane.tracks == 0 {
                let note = (FONT, 12).into_font().style(FontStyle::Italic).color(&grey).pos(Pos::new(HPos::Left, VPos::Center));
                root.draw(&Text::new(lane.empty, (px0 + 8, cy.round() as i32), note))?;
            }
        }

        // Cell labels above the plot, and the length of each idle cut.
        if m.session {
            let y = fy(0.0).round() as i32 - 4;
            let mut last_right = f64::NEG_INFINITY;
            let label_style = (FONT, 12).into_font().color(&BLACK).pos(Pos::new(HPos::Center, VPos::Bottom));
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
        let y = row_y(0);
        let heading = if m.merged {
            format!(
                "{} events shown as {} bars (bars under a pixel apart merged{}) · hover a bar for details · kinds:",
                group(m.events.len() as u64),
                group(m.bars.len() as u64),
                if m.dropped > 0 { format!("; {} shortest left out", group(m.dropped as u64)) } else { String::new() }
            )
        } else {
            format!("{} events · hover a bar for details · kinds:", group(m.events.len() as u64))
        };
        legend_area.draw(&Text::new(heading.clone(), (x, y), text_style.clone()))?;
        x += text_px(&heading, LEGEND_FONT) as i32 + 14;
        let swatch = RGBColor(0x8a, 0x8a, 0x8a);
        for (k, name) in ["compute / transfer", "alloc (outlined)", "merge (hatched)"].iter().enumerate() {
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
            let y = row_y(r + 1) + 6;
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
        EvalTrace { eval: 1, cell: 4, start: us(500), end: us(end + 100), pieces: 24, events, plans: vec![] }
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

    fn texts(svg: &str) -> Vec<String> {
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
        let e = EvalTrace { eval: 2, cell: 1, start: us(0), end: us(100), pieces: 1, events: vec![ev("sum", 1, 1, 0, None, 0, EventKind::Compute, 10, 90, 8)], plans: vec![] };
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
        let e = EvalTrace { eval: 3, cell: 2, start: us(5), end: us(6), pieces: 0, events: vec![], plans: vec![] };
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
        EvalTrace { eval: 9, cell: 5, start: us(0), end, pieces: 2048, events, plans: vec![] }
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
        let e = EvalTrace { eval: 1, cell: 1, start: us(0), end, pieces: 100_000, events, plans: vec![] };
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
        use crate::{oa, Session, Value};
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
        let many: Vec<String> = (0..40).map(|i| format!("op{i}")).collect();
        let c = assign_colors(&many.iter().map(String::as_str).collect::<Vec<_>>());
        assert_eq!(c.iter().collect::<BTreeSet<_>>().len(), 40);
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

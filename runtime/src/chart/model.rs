//! What a timeline shows, from the trace alone: lanes, ops, bars (stacked in tracks, merged
//! when there are too many to see).

use super::*;

pub(super) struct Lane {
    pub(super) label: String,
    /// Device name under the label, wrapped to the label column ([`wrap_name`]).
    pub(super) sub: Vec<String>,
    /// Said inside the lane when nothing ran there.
    pub(super) empty: &'static str,
    pub(super) tracks: usize,
    /// Top and height in lane units (nominally pixels).
    pub(super) top: f64,
    pub(super) height: f64,
}

pub(super) const PAD: f64 = 4.0;

impl Lane {
    /// Vertical extent (lane units) of a bar on track `t`.
    pub(super) fn track_span(&self, t: usize) -> (f64, f64) {
        let n = self.tracks.max(1) as f64;
        let h = (self.height - 2.0 * PAD) / n;
        let gap = if h >= 5.0 { 1.0 } else { 0.0 };
        let y0 = self.top + PAD + h * t as f64;
        (y0, y0 + h - gap)
    }
}

pub(super) fn lane_height(tracks: usize) -> f64 {
    if tracks == 0 {
        return 30.0;
    }
    (tracks as f64 * 9.0).clamp(30.0, 200.0) + 2.0 * PAD
}

pub(super) struct OpInfo {
    pub(super) name: String,
    pub(super) color: Rgb,
    pub(super) cells: BTreeSet<u64>,
    pub(super) busy_ms: f64,
    pub(super) first: f64,
}

/// One drawn bar: an event, or several merged ones.
#[derive(Clone)]
pub(super) struct Bar {
    pub(super) lane: usize,
    pub(super) op: usize,
    pub(super) kind: EventKind,
    pub(super) eval: u64,
    /// Real ms since the origin.
    pub(super) t0: f64,
    pub(super) t1: f64,
    /// Estimated pixels, for merging and stacking.
    pub(super) x0: f64,
    pub(super) x1: f64,
    /// The event it stands for, when only one.
    pub(super) event: usize,
    pub(super) count: usize,
    pub(super) busy_ms: f64,
    pub(super) bytes: u64,
    pub(super) pieces: (u32, u32),
    pub(super) nodes: BTreeSet<u64>,
    pub(super) cells: BTreeSet<u64>,
    pub(super) track: usize,
}

impl Bar {
    pub(super) fn absorb(&mut self, o: &Bar) {
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
pub(super) struct DeviceNames {
    pub(super) names: HashMap<DeviceId, String>,
}

impl DeviceNames {
    pub(super) fn new(devices: &[DeviceProfile]) -> Self {
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
    pub(super) fn name(&self, id: DeviceId) -> String {
        self.names.get(&id).cloned().unwrap_or_else(|| format!("device {}", id.0))
    }
}

pub(super) struct Model<'a> {
    pub(super) session: bool,
    pub(super) evals: Vec<&'a EvalTrace>,
    pub(super) events: Vec<&'a Event>,
    pub(super) axis: TimeAxis,
    pub(super) lanes: Vec<Lane>,
    pub(super) ops: Vec<OpInfo>,
    pub(super) bars: Vec<Bar>,
    pub(super) merged: bool,
    pub(super) dropped: usize,
    pub(super) names: DeviceNames,
    /// Real (start, end) ms of each evaluation, with its cell and number.
    pub(super) spans: Vec<(f64, f64, u64, u64)>,
    /// Unit of the time axis: 1 (ms) or 1000 (s).
    pub(super) unit: f64,
    pub(super) prefix: String,
    /// A title given by the caller (a predicted timeline), instead of the computed one.
    pub(super) title: Option<String>,
}

pub(super) fn ms(d: std::time::Duration, origin: std::time::Duration) -> f64 {
    d.saturating_sub(origin).as_secs_f64() * 1e3
}

/// Which copy lane a link's copies go on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum CopyLane {
    /// With one accelerator: every copy to a device, and every copy to the host.
    ToDevice,
    ToHost,
    /// With several: each link (from, to) has its own lane.
    Link(DeviceId, DeviceId),
}

/// The copy lanes and their labels: with at most one accelerator, host→device and
/// device→host; with several, host→each and each→host, then every link between two
/// accelerators that moved something.
pub(super) fn copy_lanes<'e>(devices: &[DeviceProfile], events: impl Iterator<Item = &'e Event>, names: &DeviceNames) -> Vec<(CopyLane, String, &'static str)> {
    let events: Vec<&Event> = events.filter(|e| e.kind == EventKind::Transfer).collect();
    let mut accelerators: BTreeSet<DeviceId> = devices.iter().map(|d| d.id).filter(|&d| d != CPU).collect();
    for e in &events {
        accelerators.extend([Some(e.device), e.to].into_iter().flatten().filter(|&d| d != CPU));
    }
    if accelerators.len() <= 1 {
        return vec![(CopyLane::ToDevice, "host→device".into(), "nothing moved to a device"), (CopyLane::ToHost, "device→host".into(), "nothing moved back to the host")];
    }
    let mut lanes: Vec<(CopyLane, String, &'static str)> = Vec::new();
    for &a in &accelerators {
        lanes.push((CopyLane::Link(CPU, a), format!("host→{}", names.name(a)), "nothing moved there"));
        lanes.push((CopyLane::Link(a, CPU), format!("{}→host", names.name(a)), "nothing moved back"));
    }
    let between: BTreeSet<(DeviceId, DeviceId)> = events.iter().filter_map(|e| e.to.map(|to| (e.device, to))).filter(|&(a, b)| a != CPU && b != CPU && a != b).collect();
    for (a, b) in between {
        lanes.push((CopyLane::Link(a, b), format!("{}→{}", names.name(a), names.name(b)), "nothing moved"));
    }
    lanes
}

pub(super) fn lane_of(e: &Event, compute: &BTreeMap<DeviceId, usize>, copies: &BTreeMap<CopyLane, usize>) -> usize {
    match e.kind {
        EventKind::Transfer => {
            let to = e.to.unwrap_or(if e.device == CPU { DeviceId(1) } else { CPU });
            if let Some(&l) = copies.get(&CopyLane::Link(e.device, to)) {
                return l;
            }
            let lane = if to == CPU { CopyLane::ToHost } else { CopyLane::ToDevice };
            copies.get(&lane).or_else(|| copies.values().next()).copied().unwrap_or(0)
        }
        _ => compute[&e.device],
    }
}

impl<'a> Model<'a> {
    pub(super) fn build(evals: &[&'a EvalTrace], devices: &[DeviceProfile], session: bool) -> Model<'a> {
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
            let sub = devices.iter().find(|d| d.id == id).map(|d| wrap_name(&d.name, SUB_CHARS, 3)).unwrap_or_default();
            compute.insert(id, lanes.len());
            lanes.push(Lane { label, sub, empty: "idle", tracks: 0, top: 0.0, height: 0.0 });
        }
        let mut copies: BTreeMap<CopyLane, usize> = BTreeMap::new();
        for (key, label, empty) in copy_lanes(devices, events.iter().copied(), &names) {
            copies.insert(key, lanes.len());
            lanes.push(Lane { label, sub: Vec::new(), empty, tracks: 0, top: 0.0, height: 0.0 });
        }

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
                    lane: lane_of(e, &compute, &copies),
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
            // Tall enough for its label and the device name under it.
            lane.height = lane_height(e.len()).max(LABEL_LINE * (1 + lane.sub.len()) as f64);
            top += lane.height;
        }

        let prefix = id_prefix(&evals);
        Model { session, evals, events, axis, lanes, ops, bars, merged, dropped, names, spans, unit, prefix, title: None }
    }

    pub(super) fn plot_height(&self) -> f64 {
        self.lanes.iter().map(|l| l.height).sum()
    }

    pub(super) fn title(&self) -> String {
        if let Some(t) = &self.title {
            return t.clone();
        }
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
            format!("{cells}: {} evaluation{} · {} busy · {} · {moved}", self.evals.len(), if self.evals.len() == 1 { "" } else { "s" }, fmt_dur(busy), fmt_pieces(pieces))
        } else {
            let ev = self.evals[0];
            let wall = self.spans[0].1 - self.spans[0].0;
            format!("Evaluation {} (cell {}): {} wall · {} · {moved}", ev.eval, ev.cell, fmt_dur(wall), fmt_pieces(pieces))
        }
    }

    pub(super) fn fmt_t(&self, t: f64) -> String {
        if self.unit > 1.0 {
            format!("{:.4} s", t / 1000.0)
        } else {
            format!("{t:.3} ms")
        }
    }

    /// Why the planner put node `node` where it ran in evaluation `eval` (the plan that ran).
    fn reason_of(&self, eval: u64, node: u64) -> Option<String> {
        let plan = self.evals.iter().find(|e| e.eval == eval)?.plan()?;
        plan.steps.iter().find(|s| s.id == node).map(|s| s.reason.to_string())
    }

    /// Hover text of a bar.
    pub(super) fn hover(&self, b: &Bar) -> String {
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
                    if let Some(reason) = self.reason_of(e.eval, e.node) {
                        let _ = writeln!(s, "placed there: {}", truncate(&reason, 120));
                    }
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

pub(super) fn kind_name(k: EventKind) -> &'static str {
    match k {
        EventKind::Alloc => "alloc",
        EventKind::Transfer => "transfer",
        EventKind::Compute => "compute",
        EventKind::Merge => "merge",
    }
}

pub(super) fn merge_bars(mut bars: Vec<Bar>, gap: f64, by_eval: bool) -> Vec<Bar> {
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

//! The executor: runs a [`Plan`] stage by stage. A stage with a split length is cut into
//! pieces; each piece goes through every op of the stage before the next piece starts, so
//! its intermediates stay in cache (CPU) or in a bounded slice of device memory (accelerator).
//! CPU pieces run in parallel (rayon). An accelerator stage streams: each piece's split
//! arguments are copied in as it starts and its host-bound outputs copied out as it ends, and
//! the copy-out of one piece is waited for only after the next piece is queued, so a device
//! that queues work (CUDA) overlaps copies with compute. Stage outputs are merged with their
//! split type, on the host or, when they stay on the device, by the device. Every op, piece,
//! transfer and merge is traced; a device that times itself corrects the times.
//!
//! A stage that runs out of device memory is retried in smaller pieces, and then on the CPU
//! when its inputs can be had there; only then is it an error for the user.

use std::collections::{HashMap, HashSet};
use std::ops::Range;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;
use std::time::{Duration, Instant};

use rayon::prelude::*;

use crate::annotation::{OpCtx, OpKind};
use crate::cost::CostModel;
use crate::device::{Device, DeviceId, PendingCopy, PendingWrite, Tag, CPU};
use crate::devices::Devices;
use crate::error::{BachError, Result};
use crate::plan::{GraphPart, Plan, Stage};
use crate::trace::{EvalTrace, Event, EventKind, StageTime};
use crate::value::{RowsOut, Value};

/// Values of the evaluation: host values per node, and copies on accelerators.
struct Store<'v> {
    host: &'v mut [Option<Value>],
    device: HashMap<(usize, DeviceId), Value>,
}

/// What the executor needs of the session it runs for (nothing of its graph).
pub(crate) struct Env<'s> {
    pub devices: &'s Devices,
    /// The session's clock: event times are since this.
    pub epoch: Instant,
    /// Set while the evaluation should stop at the next piece boundary.
    pub interrupt: &'s AtomicBool,
    pub cost: &'s CostModel,
    /// The cell that asked for the evaluation.
    pub cell: u64,
    /// Pieces done, told to the progress hook.
    pub progress: crate::progress::Tracker,
    /// When the evaluation was asked for, before its planning: the trace's start, so that its
    /// wall time is what the user waited (the planning shows as overhead before the first
    /// event).
    pub began: std::time::Duration,
}

impl Env<'_> {
    fn epoch(&self) -> Instant {
        self.epoch
    }
    fn interrupted(&self) -> bool {
        self.interrupt.load(std::sync::atomic::Ordering::Relaxed)
    }
}

/// Run `plan` over `part`. `values[i]` holds node i's value if it has one; computed stage
/// outputs are written there (also when a later stage fails, so nothing computed is lost).
/// A value that exists only in an accelerator's memory is written as a [`Value::Device`].
/// Returns the result and the evaluation's record for the session's trace.
pub(crate) fn execute(env: &Env<'_>, eval: u64, planned: &Arc<Plan>, part: &GraphPart, values: &mut [Option<Value>]) -> (Result<()>, EvalTrace) {
    let plan: &Plan = planned;
    let mut plans = vec![planned.clone()];
    let epoch = env.epoch();
    let start = env.began;
    let mut events = Vec::new();
    let mut store = Store { host: values, device: HashMap::new() };
    // Values already resident on an accelerator (kept there by an earlier evaluation).
    for (i, node) in part.nodes.iter().enumerate() {
        if let (Some(d), Some(v)) = (node.materialized.filter(|&d| d != CPU), &store.host[i]) {
            if v.device() == Some(d) {
                store.device.insert((i, d), v.clone());
                store.host[i] = None;
            }
        }
    }
    let mut result = Ok(());
    let mut stages = Vec::with_capacity(plan.stages.len() + 1);
    for (s, stage) in plan.stages.iter().enumerate() {
        if env.interrupted() {
            result = Err(BachError::Interrupted);
            break;
        }
        // The whole values a stage reads are fetched where it runs as it starts (inside, so
        // a device out of memory for them is handled like one out of memory for pieces).
        let started = epoch.elapsed();
        let r = run_stage_with_retries(env, eval, plan, s, stage, part, &mut store, &mut events, &mut plans);
        let ran = plans.last().expect("the planner's plan comes first");
        stages.push(stage_time(env, ran, Some(s), ran.stages[s].device, started, epoch.elapsed()));
        if let Err(e) = r {
            result = Err(e);
            break;
        }
    }
    if result.is_ok() && plan.transfers.iter().any(|t| t.stage.is_none()) {
        let started = epoch.elapsed();
        result = transfer(env, eval, plan, part, &mut store, None, &mut events);
        stages.push(stage_time(env, plan, None, CPU, started, epoch.elapsed()));
    }
    // Hand back, per node, the host value, or the device value where there is no host one
    // or the evaluation asked for it to stay.
    for ((i, _), v) in std::mem::take(&mut store.device) {
        let node = &part.nodes[i];
        if store.host[i].is_none() || (node.target && node.keep_on_device) {
            store.host[i] = Some(v);
        }
    }
    env.progress.finish();
    (result, EvalTrace { eval, cell: env.cell, start, end: epoch.elapsed(), pieces: plan.total_pieces(), events, plans, stages, reason: None })
}

/// Stage `s` of `plan` (`None`: the copies at the end) as it ran on `device`: the cost
/// model's seconds for its ops there, the stage's own overhead and the copies planned for it,
/// beside the time it took.
fn stage_time(env: &Env<'_>, plan: &Plan, s: Option<usize>, device: DeviceId, start: Duration, end: Duration) -> StageTime {
    let steps: &[usize] = s.map_or(&[], |s| &plan.stages[s].steps);
    let ops_s: f64 = steps.iter().map(|&st| if device == CPU { plan.steps[st].cpu_s } else { plan.steps[st].accelerator_s }).filter(|t| t.is_finite()).sum::<f64>()
        / s.map_or(1.0, |s| plan.stage_parallel_pieces(s));
    let copies_s: f64 = plan.transfers.iter().filter(|t| t.stage == s).map(|t| plan.transfer_seconds(t, env.cost)).sum();
    let overhead_s = s.map_or(0.0, |s| plan.stage_overhead_seconds(s, env.cost));
    let elements = steps.iter().map(|&st| plan.steps[st].meta.len()).max().unwrap_or(0);
    StageTime { stage: s, device, ops: steps.iter().map(|&st| plan.steps[st].op.clone()).collect(), elements, predicted_s: ops_s + copies_s + overhead_s, start, end }
}

fn device_of<'e>(env: &Env<'e>, id: DeviceId) -> Result<&'e Arc<dyn Device>> {
    env.devices.get(id).ok_or_else(|| BachError::invalid("execute", format!("the plan uses device {} which this machine does not have", id.0)))
}

/// The whole transfers the plan places at the end (`stage == None`), or before a stage.
fn transfer(env: &Env<'_>, eval: u64, plan: &Plan, part: &GraphPart, store: &mut Store<'_>, stage: Option<usize>, events: &mut Vec<Event>) -> Result<()> {
    for t in plan.transfers.iter().filter(|t| t.stage == stage && !t.streamed) {
        whole_on(env, eval, part, store, t.node, t.to, events)?;
    }
    Ok(())
}

/// Node `u`'s whole value on `dev`, copying it there (and tracing the copy) if it is elsewhere.
fn whole_on(env: &Env<'_>, eval: u64, part: &GraphPart, store: &mut Store<'_>, u: usize, dev: DeviceId, events: &mut Vec<Event>) -> Result<Value> {
    if dev == CPU {
        if let Some(v) = &store.host[u] {
            return Ok(v.clone());
        }
    } else if let Some(v) = store.device.get(&(u, dev)) {
        return Ok(v.clone());
    }
    let node = &part.nodes[u];
    let tag = Tag { node: node.id, piece: 0 };
    let epoch = env.epoch();
    let t0 = epoch.elapsed();
    let (from, moved) = if dev == CPU {
        let ((_, from), v) =
            store.device.iter().find(|((n, _), _)| *n == u).ok_or_else(|| BachError::invalid("execute", format!("#{} was not computed before it was needed", node.id)))?;
        (*from, device_of(env, *from)?.copy_out(v.view(), tag)?.finish()?)
    } else {
        let v = store.host[u].as_ref().ok_or_else(|| BachError::invalid("execute", format!("#{} is on no device it can be copied from", node.id)))?;
        let device = device_of(env, dev)?;
        device.keep_host(v);
        (CPU, device.copy_in(v.view(), tag)?)
    };
    events.push(Event {
        eval,
        op: node.op.name().into(),
        node: node.id,
        cell: node.cell,
        device: from,
        to: Some(dev),
        piece: 0,
        kind: EventKind::Transfer,
        start: t0,
        end: epoch.elapsed(),
        bytes: node.meta.bytes() as u64,
    });
    if dev == CPU {
        store.host[u] = Some(moved.clone());
    } else {
        store.device.insert((u, dev), moved.clone());
    }
    Ok(moved)
}

/// The pieces of a stage: row ranges of at most `piece_rows` (one empty piece for 0 rows).
#[allow(clippy::single_range_in_vec_init)]
pub fn piece_ranges(len: usize, piece_rows: usize) -> Vec<Range<usize>> {
    if len == 0 {
        return vec![0..0];
    }
    let step = piece_rows.max(1);
    (0..len).step_by(step).map(|s| s..(s + step).min(len)).collect()
}

/// Run a stage; when its device runs out of memory, retry in pieces half as big (a few
/// times), then on the CPU if everything it reads can be had on the host. Each retry is a new
/// plan (the last of `plans` with this stage changed and a note saying why), recorded in the
/// trace.
#[allow(clippy::too_many_arguments)]
fn run_stage_with_retries(
    env: &Env<'_>,
    eval: u64,
    plan: &Plan,
    s: usize,
    stage: &Stage,
    part: &GraphPart,
    store: &mut Store<'_>,
    events: &mut Vec<Event>,
    plans: &mut Vec<Arc<Plan>>,
) -> Result<()> {
    let replan = |plans: &mut Vec<Arc<Plan>>, attempt: &Stage, note: String| {
        let mut p = Plan::clone(plans.last().expect("the planner's plan comes first"));
        p.stages[s] = attempt.clone();
        for &st in &attempt.steps {
            if p.steps[st].device != attempt.device {
                p.steps[st].device = attempt.device;
                p.steps[st].reason = crate::plan::Reason::OutOfMemory;
            }
        }
        p.notes.push(format!("executor: {note}"));
        plans.push(Arc::new(p));
    };
    let mut attempt = stage.clone();
    let mut halvings = 0;
    loop {
        let mark = events.len();
        match run_stage(env, eval, plan, s, &attempt, part, store, events) {
            Err(BachError::DeviceOutOfMemory { device, detail }) if attempt.device != CPU => {
                events.truncate(mark);
                let len = attempt.split_len;
                if let Some(len) = len.filter(|_| attempt.piece_rows > 1 && halvings < MAX_HALVINGS) {
                    halvings += 1;
                    attempt.piece_rows = attempt.piece_rows.div_ceil(2);
                    attempt.pieces = len.div_ceil(attempt.piece_rows).max(1);
                    attempt.paged = true;
                    attempt.kept_on_device.clear();
                    let note = format!("stage {s}: {device} ran out of memory ({detail}); retrying in {} pieces of {} rows", attempt.pieces, attempt.piece_rows);
                    env.progress.add_pieces(attempt.pieces);
                    replan(plans, &attempt, note);
                } else {
                    let note = format!("stage {s}: {device} ran out of memory ({detail}); running the stage on the CPU");
                    attempt.device = CPU;
                    if len.is_some() {
                        attempt.piece_rows = crate::plan::pieces::cpu_piece_rows(part, plan, &attempt, s, env.cost);
                    }
                    attempt.pieces = len.map_or(1, |l| l.div_ceil(attempt.piece_rows).max(1));
                    attempt.kept_on_device.clear();
                    replan(plans, &attempt, note);
                }
            }
            r => return r,
        }
    }
}

/// Times a stage that ran out of device memory is retried in pieces half as big before it
/// runs on the CPU.
const MAX_HALVINGS: usize = 4;

/// What one piece hands back: outputs kept for a device merge or a host merge, copies to the
/// host under way (into a fresh value, or into the rows of a result written in place), and
/// its events.
struct PieceOut {
    kept: Vec<Option<Value>>,
    pending: Vec<Option<PendingCopy>>,
    writes: Vec<PendingWrite>,
    events: Vec<Event>,
}

impl PieceOut {
    /// Wait for the piece's copies to the host; the values of those that made a new value.
    fn finish(&mut self) -> Result<Vec<Option<Value>>> {
        for w in self.writes.drain(..) {
            w.finish()?;
        }
        self.pending.iter_mut().map(|p| p.take().map(PendingCopy::finish).transpose()).collect()
    }
}

#[allow(clippy::too_many_arguments, clippy::single_range_in_vec_init)]
fn run_stage(env: &Env<'_>, eval: u64, plan: &Plan, s: usize, stage: &Stage, part: &GraphPart, store: &mut Store<'_>, events: &mut Vec<Event>) -> Result<()> {
    let dev_id = stage.device;
    let device = device_of(env, dev_id)?.clone();
    let accel = dev_id != CPU;
    let nodes: Vec<usize> = stage.steps.iter().map(|&st| plan.steps[st].node).collect();
    // Position of each part node within the stage, and the last step that reads it.
    let mut pos: Vec<Option<usize>> = vec![None; part.nodes.len()];
    for (j, &i) in nodes.iter().enumerate() {
        pos[i] = Some(j);
    }
    let mut last_use: Vec<usize> = (0..nodes.len()).collect();
    for (j, &i) in nodes.iter().enumerate() {
        for &u in &part.nodes[i].inputs {
            if let Some(p) = pos[u] {
                last_use[p] = last_use[p].max(j);
            }
        }
    }
    for &o in &stage.outputs {
        last_use[pos[o].expect("outputs are stage nodes")] = usize::MAX;
    }
    let split = stage.split_len.is_some();
    let ranges = match stage.split_len {
        Some(len) => piece_ranges(len, stage.piece_rows),
        None => vec![0..part.nodes[nodes[0]].meta.rows()],
    };

    // Arguments from outside the stage: split host values stream in piece by piece; the rest
    // is had whole on the stage's device first.
    let mut streamed_in: HashMap<usize, Value> = HashMap::new();
    let mut whole: HashMap<usize, Value> = HashMap::new();
    // A value the plan copies whole here (a later stage on this device reads it too).
    let copied_whole = |u: usize| plan.transfers.iter().any(|t| t.node == u && t.stage == Some(s) && t.to == dev_id && !t.streamed);
    for &i in &nodes {
        for (k, &u) in part.nodes[i].inputs.iter().enumerate() {
            if pos[u].is_some() || whole.contains_key(&u) || streamed_in.contains_key(&u) {
                continue;
            }
            let resident = if accel { store.device.get(&(u, dev_id)).cloned() } else { store.host[u].clone() };
            match resident {
                Some(v) => {
                    whole.insert(u, v);
                }
                None if accel && split && part.nodes[i].arg_splits[k].splittable() && store.host[u].is_some() && !copied_whole(u) => {
                    let v = store.host[u].clone().expect("checked");
                    device.keep_host(&v);
                    streamed_in.insert(u, v);
                }
                None => {
                    let v = whole_on(env, eval, part, store, u, dev_id, events)?;
                    whole.insert(u, v);
                }
            }
        }
    }
    let to_host: HashSet<usize> = if accel {
        let planned: HashSet<usize> = plan.transfers.iter().filter(|t| t.streamed && t.stage == Some(s) && t.to == CPU).map(|t| t.node).collect();
        stage.outputs.iter().copied().filter(|o| planned.contains(o) || !stage.kept_on_device.contains(o)).collect()
    } else {
        HashSet::new()
    };
    // Outputs that come back to the host by rows are written in place: one host array each,
    // allocated once, every piece's rows landing in it (no merge pass afterwards).
    let mut in_place: Vec<Option<RowsOut>> = stage
        .outputs
        .iter()
        .map(|&o| {
            let node = &part.nodes[o];
            let to_host_here = !accel || to_host.contains(&o);
            let by_rows = node.merges_by_rows(stage.split_len);
            // One piece on the CPU is its own result already; an accelerator's copy out lands
            // in a RowsOut even then (memory the device may keep page-locked).
            let kept_here = stage.kept_on_device.contains(&o);
            if (ranges.len() > 1 || accel) && to_host_here && by_rows && !kept_here {
                RowsOut::new(&node.meta)
            } else {
                None
            }
        })
        .collect();
    // An accelerator's results land in fresh memory: fault it in while the device works.
    if accel && device.prefaults_results() {
        let results = in_place.iter().flatten().count().max(1);
        let threads = (crate::fresh::prefault_threads() / results).max(1);
        for r in in_place.iter_mut().flatten() {
            r.prefault(threads);
        }
    }
    let names: Vec<Arc<str>> = nodes.iter().map(|&i| Arc::from(part.nodes[i].op.name())).collect();
    let epoch = env.epoch();

    let run_piece = |(p, range): (usize, &Range<usize>)| -> Result<PieceOut> {
        if env.interrupted() {
            return Err(BachError::Interrupted);
        }
        let mut local: Vec<Option<Value>> = vec![None; nodes.len()];
        let mut copied_in: HashMap<usize, Value> = HashMap::new();
        let mut piece_events = Vec::with_capacity(nodes.len() + 2);
        for (j, &i) in nodes.iter().enumerate() {
            let node = &part.nodes[i];
            for (a, &u) in node.inputs.iter().enumerate() {
                if let (Some(host), false) = (streamed_in.get(&u), copied_in.contains_key(&u)) {
                    let t0 = epoch.elapsed();
                    let piece = node.arg_splits[a].split(host.view(), range.clone())?;
                    let v = device.copy_in(piece, Tag { node: part.nodes[u].id, piece: p as u32 })?;
                    let src = &part.nodes[u];
                    piece_events.push(Event {
                        eval,
                        op: src.op.name().into(),
                        node: src.id,
                        cell: src.cell,
                        device: CPU,
                        to: Some(dev_id),
                        piece: p as u32,
                        kind: EventKind::Transfer,
                        start: t0,
                        end: epoch.elapsed(),
                        bytes: v.bytes() as u64,
                    });
                    copied_in.insert(u, v);
                }
            }
            let mut args = Vec::with_capacity(node.inputs.len());
            for (a, &u) in node.inputs.iter().enumerate() {
                args.push(if let Some(q) = pos[u] {
                    local[q].as_ref().expect("producers run first").view()
                } else if let Some(v) = copied_in.get(&u) {
                    v.view()
                } else {
                    let w = whole[&u].view();
                    if split {
                        node.arg_splits[a].split(w, range.clone())?
                    } else {
                        w
                    }
                });
            }
            let t0 = epoch.elapsed();
            let ctx = OpCtx { meta: &node.meta, rows: range.clone(), piece: p, node: node.id };
            let out = device.run(&node.op, &ctx, &args)?;
            let kind = if node.op.kind() == OpKind::Alloc { EventKind::Alloc } else { EventKind::Compute };
            piece_events.push(Event {
                eval,
                op: names[j].clone(),
                node: node.id,
                cell: node.cell,
                device: dev_id,
                to: None,
                piece: p as u32,
                kind,
                start: t0,
                end: epoch.elapsed(),
                bytes: out.bytes() as u64,
            });
            drop(args);
            local[j] = Some(out);
            for &u in &node.inputs {
                if let Some(q) = pos[u] {
                    if last_use[q] == j {
                        local[q] = None;
                    }
                }
            }
            if last_use[j] == j {
                local[j] = None;
            }
        }
        let mut kept = Vec::with_capacity(stage.outputs.len());
        let mut pending = Vec::with_capacity(stage.outputs.len());
        let mut writes = Vec::new();
        for (k, &o) in stage.outputs.iter().enumerate() {
            let v = local[pos[o].expect("stage node")].take().expect("outputs are kept");
            if let Some(dest) = &in_place[k] {
                let rows = dest.rows(range.clone())?;
                if accel {
                    let t0 = epoch.elapsed();
                    let node = &part.nodes[o];
                    writes.push(device.copy_out_into(v.view(), rows, Tag { node: node.id, piece: p as u32 })?);
                    piece_events.push(Event {
                        eval,
                        op: node.op.name().into(),
                        node: node.id,
                        cell: node.cell,
                        device: dev_id,
                        to: Some(CPU),
                        piece: p as u32,
                        kind: EventKind::Transfer,
                        start: t0,
                        end: epoch.elapsed(),
                        bytes: v.bytes() as u64,
                    });
                } else {
                    // Still in cache: this copy replaces a merge pass over cold memory.
                    rows.write(v.view())?;
                }
                pending.push(None);
                kept.push(None);
            } else if to_host.contains(&o) {
                let t0 = epoch.elapsed();
                let node = &part.nodes[o];
                pending.push(Some(device.copy_out(v.view(), Tag { node: node.id, piece: p as u32 })?));
                piece_events.push(Event {
                    eval,
                    op: node.op.name().into(),
                    node: node.id,
                    cell: node.cell,
                    device: dev_id,
                    to: Some(CPU),
                    piece: p as u32,
                    kind: EventKind::Transfer,
                    start: t0,
                    end: epoch.elapsed(),
                    bytes: v.bytes() as u64,
                });
                kept.push(stage.kept_on_device.contains(&o).then_some(v));
            } else {
                pending.push(None);
                kept.push(Some(v));
            }
        }
        env.progress.piece_done();
        Ok(PieceOut { kept, pending, writes, events: piece_events })
    };

    // Drive the pieces: in parallel where the device takes them from several threads,
    // otherwise in order with the copy-out of piece k waited for after piece k+1 is queued.
    let n_out = stage.outputs.len();
    let mut kept: Vec<Vec<Value>> = vec![Vec::with_capacity(ranges.len()); n_out];
    let mut host: Vec<Vec<Value>> = vec![Vec::with_capacity(ranges.len()); n_out];
    let mut collect = |out: PieceOut, host_pieces: Vec<Option<Value>>, events: &mut Vec<Event>| {
        events.extend(out.events);
        for (k, v) in out.kept.into_iter().enumerate() {
            if let Some(v) = v {
                kept[k].push(v);
            }
        }
        for (k, v) in host_pieces.into_iter().enumerate() {
            if let Some(v) = v {
                host[k].push(v);
            }
        }
    };
    if device.parallel_pieces() {
        let results: Vec<Result<(PieceOut, Vec<Option<Value>>)>> = {
            let go = |x: (usize, &Range<usize>)| -> Result<(PieceOut, Vec<Option<Value>>)> {
                let mut out = run_piece(x)?;
                let h = out.finish()?;
                Ok((out, h))
            };
            if ranges.len() > 1 {
                ranges.par_iter().enumerate().map(go).collect()
            } else {
                ranges.iter().enumerate().map(go).collect()
            }
        };
        for r in results {
            let (out, h) = r?;
            collect(out, h, events);
        }
    } else {
        let mut previous: Option<PieceOut> = None;
        for (p, range) in ranges.iter().enumerate() {
            let out = run_piece((p, range));
            let out = match out {
                Ok(o) => o,
                Err(e) => {
                    let _ = device.synchronize();
                    return Err(e);
                }
            };
            if let Some(mut prev) = previous.take() {
                let h = prev.finish()?;
                collect(prev, h, events);
            }
            previous = Some(out);
        }
        if let Some(mut prev) = previous.take() {
            let h = prev.finish()?;
            collect(prev, h, events);
        }
        correct_times(env, device.synchronize()?, events);
    }

    for (k, (&o, dest)) in stage.outputs.iter().zip(in_place).enumerate() {
        let node = &part.nodes[o];
        let name = names[pos[o].expect("stage node")].clone();
        if let Some(dest) = dest {
            let v = dest.into_value()?;
            if accel {
                device.results_landed(&v);
            }
            store.host[o] = Some(v);
        }
        if !host[k].is_empty() {
            let t0 = epoch.elapsed();
            let merged = node.op.result_split().merge(std::mem::take(&mut host[k]))?;
            if ranges.len() > 1 {
                events.push(Event {
                    eval,
                    op: name.clone(),
                    node: node.id,
                    cell: node.cell,
                    device: CPU,
                    to: None,
                    piece: 0,
                    kind: EventKind::Merge,
                    start: t0,
                    end: epoch.elapsed(),
                    bytes: merged.bytes() as u64,
                });
            }
            store.host[o] = Some(merged);
        }
        if !kept[k].is_empty() {
            let t0 = epoch.elapsed();
            let pieces = std::mem::take(&mut kept[k]);
            let merged = if accel { device.concat_rows(&pieces)? } else { node.op.result_split().merge(pieces)? };
            if ranges.len() > 1 {
                events.push(Event {
                    eval,
                    op: name,
                    node: node.id,
                    cell: node.cell,
                    device: dev_id,
                    to: None,
                    piece: 0,
                    kind: EventKind::Merge,
                    start: t0,
                    end: epoch.elapsed(),
                    bytes: merged.bytes() as u64,
                });
            }
            if accel {
                store.device.insert((o, dev_id), merged);
            } else {
                store.host[o] = Some(merged);
            }
        }
    }
    Ok(())
}

/// Replace the executor's clock with the device's own, for work the device timed itself.
fn correct_times(env: &Env<'_>, spans: Vec<crate::device::DeviceSpan>, events: &mut [Event]) {
    if spans.is_empty() {
        return;
    }
    let epoch = env.epoch();
    let since = |t: std::time::Instant| t.checked_duration_since(epoch).unwrap_or(Duration::ZERO);
    let index: HashMap<(u64, u32, EventKind, bool), (Duration, Duration)> =
        spans.iter().map(|sp| ((sp.tag.node, sp.tag.piece, sp.kind, sp.kind == EventKind::Transfer), (since(sp.start), since(sp.end)))).collect();
    for e in events.iter_mut() {
        if let Some(&(start, end)) = index.get(&(e.node, e.piece, e.kind, e.kind == EventKind::Transfer)) {
            e.start = start;
            e.end = end;
        }
    }
}

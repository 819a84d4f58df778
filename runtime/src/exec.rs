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

use crate::annotation::OpCtx;
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
    for wave in plan.waves() {
        if env.interrupted() {
            result = Err(BachError::Interrupted);
            break;
        }
        if wave.len() > 1 {
            if let Err(e) = run_wave(env, eval, plan, wave, part, &mut store, &mut events, &mut plans, &mut stages) {
                result = Err(e);
                break;
            }
            continue;
        }
        // The whole values a stage reads are fetched where it runs as it starts (inside, so
        // a device out of memory for them is handled like one out of memory for pieces).
        let s = wave.start;
        let started = epoch.elapsed();
        let r = run_stage_with_retries(env, eval, plan, s, &plan.stages[s], part, &mut store, &mut events, &mut plans);
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

/// Run the stages of `wave` at once ([`Plan::waves`]: each whole on an accelerator of its
/// own, none reading another's results): each gathers what it reads and places its results
/// here, in order; then each runs its pieces on a thread of its own (one thread per device);
/// then each lands, in order. A stage that runs out of device memory (gathering or running)
/// runs again alone afterwards, with its retries.
#[allow(clippy::too_many_arguments)]
fn run_wave(
    env: &Env<'_>,
    eval: u64,
    plan: &Plan,
    wave: Range<usize>,
    part: &GraphPart,
    store: &mut Store<'_>,
    events: &mut Vec<Event>,
    plans: &mut Vec<Arc<Plan>>,
    times: &mut Vec<StageTime>,
) -> Result<()> {
    let epoch = env.epoch();
    let started = epoch.elapsed();
    // The plan's whole copies of host values into each stage's accelerator, made at once: a
    // thread per device, each on its own link. One that fails is left to the stage's gather
    // (which retries, or says why).
    let mut wanted: Vec<(usize, DeviceId)> = Vec::new();
    for s in wave.clone() {
        let dev = plan.stages[s].device;
        for t in plan.transfers.iter().filter(|t| t.stage == Some(s) && !t.streamed && t.from == CPU && t.to == dev) {
            if store.host[t.node].is_some() && !store.device.contains_key(&(t.node, dev)) && !wanted.contains(&(t.node, dev)) {
                wanted.push((t.node, dev));
            }
        }
    }
    let mut to: Vec<DeviceId> = wanted.iter().map(|&(_, d)| d).collect();
    to.dedup();
    if to.len() > 1 {
        let host: &[Option<Value>] = store.host;
        let copied: Vec<Vec<CopyIn>> = std::thread::scope(|scope| {
            let workers: Vec<_> = to
                .iter()
                .map(|&d| {
                    let mine: Vec<usize> = wanted.iter().filter(|&&(_, x)| x == d).map(|&(u, _)| u).collect();
                    scope.spawn(move || mine.into_iter().map(|u| (u, d, copy_whole_in(env, eval, part, u, host[u].as_ref().expect("checked"), d))).collect::<Vec<_>>())
                })
                .collect();
            workers.into_iter().map(|w| w.join().unwrap_or_default()).collect()
        });
        for (u, d, r) in copied.into_iter().flatten() {
            if let Ok((v, event)) = r {
                events.push(event);
                store.device.insert((u, d), v);
            }
        }
    }
    let mut runs = Vec::with_capacity(wave.len());
    let mut alone: Vec<usize> = Vec::new();
    for s in wave.clone() {
        let mark = events.len();
        let mut run = StageRun::new(env, eval, plan, s, &plan.stages[s], part)?;
        match run.gather(store, events) {
            Ok(()) => {
                run.place_results();
                runs.push(run);
            }
            Err(BachError::DeviceOutOfMemory { .. }) => {
                events.truncate(mark);
                alone.push(s);
            }
            Err(e) => return Err(e),
        }
    }
    let done: Vec<(Result<StageOut>, Vec<Event>, Duration)> = std::thread::scope(|scope| {
        let workers: Vec<_> = runs
            .iter()
            .map(|run| {
                scope.spawn(move || {
                    let mut own = Vec::new();
                    let r = run.run_pieces(&mut own);
                    (r, own, epoch.elapsed())
                })
            })
            .collect();
        workers
            .into_iter()
            .map(|w| {
                w.join().unwrap_or_else(|p| {
                    (Err(BachError::invalid("execute", format!("a device's worker panicked: {}", crate::device::panic_text(&*p)))), Vec::new(), epoch.elapsed())
                })
            })
            .collect()
    });
    let mut result = Ok(());
    for (run, (r, own, end)) in runs.into_iter().zip(done) {
        let s = run.s;
        match r {
            Ok(out) => {
                events.extend(own);
                let landed = run.land(out, store, events);
                times.push(stage_time(env, plan, Some(s), plan.stages[s].device, started, end));
                if result.is_ok() {
                    result = landed;
                }
            }
            Err(BachError::DeviceOutOfMemory { .. }) => alone.push(s),
            Err(e) => {
                if result.is_ok() {
                    result = Err(e);
                }
            }
        }
    }
    result?;
    alone.sort_unstable();
    for s in alone {
        let started = epoch.elapsed();
        let r = run_stage_with_retries(env, eval, plan, s, &plan.stages[s], part, store, events, plans);
        let ran = plans.last().expect("the planner's plan comes first");
        times.push(stage_time(env, ran, Some(s), ran.stages[s].device, started, epoch.elapsed()));
        r?;
    }
    Ok(())
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
    } else if let (None, Some(((_, from), v))) = (&store.host[u], store.device.iter().find(|((n, _), _)| *n == u)) {
        // On another accelerator only: from device to device, straight where the two can,
        // else staged through host memory.
        let to = device_of(env, dev)?;
        let moved = match to.copy_from_peer(v.view(), tag) {
            Some(r) => r?,
            None => to.copy_in(device_of(env, *from)?.copy_out(v.view(), tag)?.finish()?.view(), tag)?,
        };
        (*from, moved)
    } else {
        let v = store.host[u].as_ref().ok_or_else(|| BachError::invalid("execute", format!("#{} is on no device it can be copied from", node.id)))?;
        let (moved, event) = copy_whole_in(env, eval, part, u, v, dev)?;
        events.push(event);
        store.device.insert((u, dev), moved.clone());
        return Ok(moved);
    };
    events.push(Event::transfer(eval, node, from, dev, 0, t0..epoch.elapsed(), node.meta.bytes() as u64));
    if dev == CPU {
        store.host[u] = Some(moved.clone());
    } else {
        store.device.insert((u, dev), moved.clone());
    }
    Ok(moved)
}

/// A whole copy into an accelerator made by a wave's thread: the node, the device, and the
/// value there with the copy's event.
type CopyIn = (usize, DeviceId, Result<(Value, Event)>);

/// Host value `v` of node `u` copied whole into accelerator `dev`, and the copy's event.
fn copy_whole_in(env: &Env<'_>, eval: u64, part: &GraphPart, u: usize, v: &Value, dev: DeviceId) -> Result<(Value, Event)> {
    let node = &part.nodes[u];
    let t0 = env.epoch().elapsed();
    let device = device_of(env, dev)?;
    device.keep_host(v);
    let moved = device.copy_in(v.view(), Tag { node: node.id, piece: 0 })?;
    Ok((moved, Event::transfer(eval, node, CPU, dev, 0, t0..env.epoch().elapsed(), node.meta.bytes() as u64)))
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
                    attempt.shards.clear();
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
    /// How many events it made (its events are taken out and handed back when its device's
    /// own times correct them).
    event_count: usize,
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

/// A piece run by one of a spread stage's devices: its number, what it handed back, and the
/// values its finished copies to the host made.
type PieceDone = (usize, PieceOut, Vec<Option<Value>>);

/// A stage's outputs as its pieces handed them back, per output: the pieces kept where they
/// ran and those copied to the host, each to be merged where it is.
struct StageOut {
    kept: Vec<Vec<Value>>,
    host: Vec<Vec<Value>>,
}

impl StageOut {
    /// Take in the next piece's outputs: `out`, with `host_pieces` the values its finished
    /// copies to the host made, and its events.
    fn collect(&mut self, out: PieceOut, host_pieces: Vec<Option<Value>>, events: &mut Vec<Event>) {
        events.extend(out.events);
        for (k, v) in out.kept.into_iter().enumerate() {
            if let Some(v) = v {
                self.kept[k].push(v);
            }
        }
        for (k, v) in host_pieces.into_iter().enumerate() {
            if let Some(v) = v {
                self.host[k].push(v);
            }
        }
    }
}

/// Run stage `s` of `plan` as `stage` (the planned one, or a retry of it): gather what it
/// reads, place its results, run its pieces, land its outputs.
#[allow(clippy::too_many_arguments)]
fn run_stage(env: &Env<'_>, eval: u64, plan: &Plan, s: usize, stage: &Stage, part: &GraphPart, store: &mut Store<'_>, events: &mut Vec<Event>) -> Result<()> {
    let mut run = StageRun::new(env, eval, plan, s, stage, part)?;
    run.gather(store, events)?;
    run.place_results();
    let out = run.run_pieces(events)?;
    run.land(out, store, events)
}

/// One run of a stage, built as it starts: where it runs, its nodes in order with the last
/// step that reads each, its pieces, and (from [`StageRun::gather`] and
/// [`StageRun::place_results`] on) the arguments it reads from outside and where its
/// outputs go. Its pieces only read it, so they can run in parallel.
struct StageRun<'a> {
    env: &'a Env<'a>,
    eval: u64,
    plan: &'a Plan,
    s: usize,
    stage: &'a Stage,
    part: &'a GraphPart,
    dev_id: DeviceId,
    device: Arc<dyn Device>,
    accel: bool,
    /// The devices its pieces run on (its one device, or its shards, the first being
    /// `device`), and which of them runs each piece.
    shards: Vec<(DeviceId, Arc<dyn Device>)>,
    owner: Vec<usize>,
    /// The stage's part nodes, in the order they run.
    nodes: Vec<usize>,
    /// Position of each part node within the stage.
    pos: Vec<Option<usize>>,
    /// Per position, the last step that reads it (`usize::MAX` for an output).
    last_use: Vec<usize>,
    /// Whether the stage runs in pieces of a split length.
    split: bool,
    /// Each piece's rows.
    ranges: Vec<Range<usize>>,
    /// Per position, its op's name, which its events share.
    names: Vec<Arc<str>>,
    epoch: Instant,
    /// Split host values that stream in piece by piece.
    streamed_in: HashMap<usize, Value>,
    /// The other arguments from outside the stage, whole on each of its devices (by node and
    /// index in `shards`).
    whole: HashMap<(usize, usize), Value>,
    /// The outputs an accelerator copies to the host.
    to_host: HashSet<usize>,
    /// Per output, the host array every piece's rows land in, for those written in place.
    in_place: Vec<Option<RowsOut>>,
}

impl<'a> StageRun<'a> {
    /// Stage `s` of `plan`, run as `stage`, laid out on its device; nothing gathered yet.
    #[allow(clippy::single_range_in_vec_init)]
    fn new(env: &'a Env<'a>, eval: u64, plan: &'a Plan, s: usize, stage: &'a Stage, part: &'a GraphPart) -> Result<Self> {
        let dev_id = stage.device;
        let device = device_of(env, dev_id)?.clone();
        let shards = stage.devices().into_iter().map(|d| Ok((d, device_of(env, d)?.clone()))).collect::<Result<Vec<_>>>()?;
        let nodes: Vec<usize> = stage.steps.iter().map(|&st| plan.steps[st].node).collect();
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
        let ranges = match stage.split_len {
            Some(len) => piece_ranges(len, stage.piece_rows),
            None => vec![0..part.nodes[nodes[0]].meta.rows()],
        };
        let names: Vec<Arc<str>> = nodes.iter().map(|&i| Arc::from(part.nodes[i].op.name())).collect();
        let owner = (0..ranges.len()).map(|p| crate::plan::shard_of_piece(p, ranges.len(), shards.len())).collect();
        Ok(StageRun {
            env,
            eval,
            plan,
            s,
            stage,
            part,
            dev_id,
            device,
            accel: dev_id != CPU,
            shards,
            owner,
            nodes,
            pos,
            last_use,
            split: stage.split_len.is_some(),
            ranges,
            names,
            epoch: env.epoch(),
            streamed_in: HashMap::new(),
            whole: HashMap::new(),
            to_host: HashSet::new(),
            in_place: Vec::new(),
        })
    }

    /// Gather the arguments from outside the stage: split host values stream in piece by
    /// piece (on an accelerator); the rest is had whole on the stage's device first.
    fn gather(&mut self, store: &mut Store<'_>, events: &mut Vec<Event>) -> Result<()> {
        let (plan, s, part, dev_id) = (self.plan, self.s, self.part, self.dev_id);
        // A value the plan copies whole here (a later stage on this device reads it too).
        let copied_whole = |u: usize| plan.transfers.iter().any(|t| t.node == u && t.stage == Some(s) && t.to == dev_id && !t.streamed);
        let spread = self.shards.len() > 1;
        for &i in &self.nodes {
            for (k, &u) in part.nodes[i].inputs.iter().enumerate() {
                if self.pos[u].is_some() || self.whole.contains_key(&(u, 0)) || self.streamed_in.contains_key(&u) {
                    continue;
                }
                let split_arg = self.accel && self.split && part.nodes[i].arg_splits[k].splittable();
                // Spread over several accelerators, a split host value streams to each piece's
                // device, wherever else it is; anything else is had whole on each of them.
                if spread && split_arg && store.host[u].is_some() {
                    let v = store.host[u].clone().expect("checked");
                    for (_, d) in &self.shards {
                        d.keep_host(&v);
                    }
                    self.streamed_in.insert(u, v);
                    continue;
                }
                if spread {
                    for (x, (d, _)) in self.shards.iter().enumerate() {
                        let v = whole_on(self.env, self.eval, part, store, u, *d, events)?;
                        self.whole.insert((u, x), v);
                    }
                    continue;
                }
                let resident = if self.accel { store.device.get(&(u, dev_id)).cloned() } else { store.host[u].clone() };
                match resident {
                    Some(v) => {
                        self.whole.insert((u, 0), v);
                    }
                    None if split_arg && store.host[u].is_some() && !copied_whole(u) => {
                        let v = store.host[u].clone().expect("checked");
                        self.device.keep_host(&v);
                        self.streamed_in.insert(u, v);
                    }
                    None => {
                        let v = whole_on(self.env, self.eval, part, store, u, dev_id, events)?;
                        self.whole.insert((u, 0), v);
                    }
                }
            }
        }
        Ok(())
    }

    /// Place the stage's results: which outputs an accelerator copies to the host, and the
    /// host array of each output that comes back to the host by rows.
    fn place_results(&mut self) {
        let (stage, part, accel) = (self.stage, self.part, self.accel);
        let to_host: HashSet<usize> = if accel {
            let planned: HashSet<usize> = self.plan.transfers.iter().filter(|t| t.streamed && t.stage == Some(self.s) && t.to == CPU).map(|t| t.node).collect();
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
                if (self.ranges.len() > 1 || accel) && to_host_here && by_rows && !kept_here {
                    RowsOut::new(&node.meta)
                } else {
                    None
                }
            })
            .collect();
        // An accelerator's results land in fresh memory: fault it in while the device works.
        if accel && self.device.prefaults_results() {
            let results = in_place.iter().flatten().count().max(1);
            let threads = (crate::fresh::prefault_threads() / results).max(1);
            for r in in_place.iter_mut().flatten() {
                r.prefault(threads);
            }
        }
        self.to_host = to_host;
        self.in_place = in_place;
    }

    /// Drive the pieces: in parallel where the device takes them from several threads,
    /// otherwise in order with the copy-out of piece k waited for after piece k+1 is queued.
    fn run_pieces(&self, events: &mut Vec<Event>) -> Result<StageOut> {
        let n_out = self.stage.outputs.len();
        let mut out = StageOut { kept: vec![Vec::with_capacity(self.ranges.len()); n_out], host: vec![Vec::with_capacity(self.ranges.len()); n_out] };
        if self.shards.len() > 1 {
            // One worker thread per device, each running its block of pieces as it would
            // alone; their outputs are taken in piece order (merges are by piece).
            let done: Vec<Result<Vec<PieceDone>>> = std::thread::scope(|scope| {
                let workers: Vec<_> = (0..self.shards.len()).map(|x| scope.spawn(move || self.run_shard(x))).collect();
                workers
                    .into_iter()
                    .map(|w| w.join().unwrap_or_else(|p| Err(BachError::invalid("execute", format!("a device's worker panicked: {}", crate::device::panic_text(&*p))))))
                    .collect()
            });
            let mut pieces = Vec::with_capacity(self.ranges.len());
            for d in done {
                pieces.extend(d?);
            }
            pieces.sort_by_key(|(p, _, _)| *p);
            for (_, piece, h) in pieces {
                out.collect(piece, h, events);
            }
            return Ok(out);
        }
        if self.device.parallel_pieces() {
            let results: Vec<Result<(PieceOut, Vec<Option<Value>>)>> = {
                let go = |(p, range): (usize, &Range<usize>)| -> Result<(PieceOut, Vec<Option<Value>>)> {
                    let mut piece = self.run_piece(p, range)?;
                    let h = piece.finish()?;
                    Ok((piece, h))
                };
                if self.ranges.len() > 1 {
                    self.ranges.par_iter().enumerate().map(go).collect()
                } else {
                    self.ranges.iter().enumerate().map(go).collect()
                }
            };
            for r in results {
                let (piece, h) = r?;
                out.collect(piece, h, events);
            }
        } else {
            let mut previous: Option<PieceOut> = None;
            for (p, range) in self.ranges.iter().enumerate() {
                let piece = match self.run_piece(p, range) {
                    Ok(o) => o,
                    Err(e) => {
                        let _ = self.device.synchronize();
                        return Err(e);
                    }
                };
                if let Some(mut prev) = previous.take() {
                    let h = prev.finish()?;
                    out.collect(prev, h, events);
                }
                previous = Some(piece);
            }
            if let Some(mut prev) = previous.take() {
                let h = prev.finish()?;
                out.collect(prev, h, events);
            }
            correct_times(self.env, self.device.synchronize()?, events);
        }
        Ok(out)
    }

    /// Device `x` of the shards runs its block of pieces: in parallel where it takes them from
    /// several threads, otherwise in order with the copy-out of piece k waited for after
    /// piece k+1 is queued; then its own times correct its events.
    fn run_shard(&self, x: usize) -> Result<Vec<PieceDone>> {
        let device = &self.shards[x].1;
        let mine: Vec<usize> = (0..self.ranges.len()).filter(|&p| self.owner[p] == x).collect();
        let mut done = Vec::with_capacity(mine.len());
        if device.parallel_pieces() {
            let go = |&p: &usize| -> Result<PieceDone> {
                let mut piece = self.run_piece(p, &self.ranges[p])?;
                let h = piece.finish()?;
                Ok((p, piece, h))
            };
            for r in mine.par_iter().map(go).collect::<Vec<_>>() {
                done.push(r?);
            }
            return Ok(done);
        }
        let mut previous: Option<(usize, PieceOut)> = None;
        for &p in &mine {
            let piece = match self.run_piece(p, &self.ranges[p]) {
                Ok(o) => o,
                Err(e) => {
                    let _ = device.synchronize();
                    return Err(e);
                }
            };
            if let Some((q, mut prev)) = previous.take() {
                let h = prev.finish()?;
                done.push((q, prev, h));
            }
            previous = Some((p, piece));
        }
        if let Some((q, mut prev)) = previous.take() {
            let h = prev.finish()?;
            done.push((q, prev, h));
        }
        let spans = device.synchronize()?;
        let mut events: Vec<Event> = done.iter_mut().flat_map(|(_, piece, _)| std::mem::take(&mut piece.events)).collect();
        correct_times(self.env, spans, &mut events);
        // Hand the corrected events back to their pieces, in the order they were taken.
        let mut it = events.into_iter();
        for (_, piece, _) in done.iter_mut() {
            let n = piece.event_count;
            piece.events = it.by_ref().take(n).collect();
        }
        Ok(done)
    }

    /// Run piece `p` (rows `range`) through every op of the stage: its streamed arguments are
    /// copied in as an op first reads them, and each value is dropped after its last reader.
    fn run_piece(&self, p: usize, range: &Range<usize>) -> Result<PieceOut> {
        if self.env.interrupted() {
            return Err(BachError::Interrupted);
        }
        let x = self.owner[p];
        let (dev_id, device) = (self.shards[x].0, &self.shards[x].1);
        let (part, epoch) = (self.part, self.epoch);
        let mut local: Vec<Option<Value>> = vec![None; self.nodes.len()];
        let mut copied_in: HashMap<usize, Value> = HashMap::new();
        let mut piece_events = Vec::with_capacity(self.nodes.len() + 2);
        for (j, &i) in self.nodes.iter().enumerate() {
            let node = &part.nodes[i];
            for (a, &u) in node.inputs.iter().enumerate() {
                if let (Some(host), false) = (self.streamed_in.get(&u), copied_in.contains_key(&u)) {
                    let t0 = epoch.elapsed();
                    let piece = node.arg_splits[a].split(host.view(), range.clone())?;
                    let v = device.copy_in(piece, Tag { node: part.nodes[u].id, piece: p as u32 })?;
                    piece_events.push(Event::transfer(self.eval, &part.nodes[u], CPU, dev_id, p as u32, t0..epoch.elapsed(), v.bytes() as u64));
                    copied_in.insert(u, v);
                }
            }
            let mut args = Vec::with_capacity(node.inputs.len());
            for (a, &u) in node.inputs.iter().enumerate() {
                args.push(if let Some(q) = self.pos[u] {
                    local[q].as_ref().expect("producers run first").view()
                } else if let Some(v) = copied_in.get(&u) {
                    v.view()
                } else {
                    let w = self.whole[&(u, x)].view();
                    if self.split {
                        node.arg_splits[a].split(w, range.clone())?
                    } else {
                        w
                    }
                });
            }
            let t0 = epoch.elapsed();
            let ctx = OpCtx { meta: &node.meta, rows: range.clone(), piece: p, node: node.id };
            let out = device.run(&node.op, &ctx, &args)?;
            piece_events.push(Event::op(self.eval, self.names[j].clone(), node, dev_id, p as u32, t0..epoch.elapsed(), out.bytes() as u64));
            drop(args);
            local[j] = Some(out);
            for &u in &node.inputs {
                if let Some(q) = self.pos[u] {
                    if self.last_use[q] == j {
                        local[q] = None;
                    }
                }
            }
            if self.last_use[j] == j {
                local[j] = None;
            }
        }
        let out = self.hand_back(p, range, &mut local, piece_events)?;
        self.env.progress.piece_done();
        Ok(out)
    }

    /// What piece `p` (rows `range`) hands back of its values `local`, with its `events`:
    /// each output's rows written in place, or copied to the host, or kept where it ran.
    fn hand_back(&self, p: usize, range: &Range<usize>, local: &mut [Option<Value>], mut events: Vec<Event>) -> Result<PieceOut> {
        let (stage, epoch) = (self.stage, self.epoch);
        let (dev_id, device) = (self.shards[self.owner[p]].0, &self.shards[self.owner[p]].1);
        let mut kept = Vec::with_capacity(stage.outputs.len());
        let mut pending = Vec::with_capacity(stage.outputs.len());
        let mut writes = Vec::new();
        for (k, &o) in stage.outputs.iter().enumerate() {
            let v = local[self.pos[o].expect("stage node")].take().expect("outputs are kept");
            if let Some(dest) = &self.in_place[k] {
                let rows = dest.rows(range.clone())?;
                if self.accel {
                    let t0 = epoch.elapsed();
                    let node = &self.part.nodes[o];
                    writes.push(device.copy_out_into(v.view(), rows, Tag { node: node.id, piece: p as u32 })?);
                    events.push(Event::transfer(self.eval, node, dev_id, CPU, p as u32, t0..epoch.elapsed(), v.bytes() as u64));
                } else {
                    // Still in cache: this copy replaces a merge pass over cold memory.
                    rows.write(v.view())?;
                }
                pending.push(None);
                kept.push(None);
            } else if self.to_host.contains(&o) {
                let t0 = epoch.elapsed();
                let node = &self.part.nodes[o];
                pending.push(Some(device.copy_out(v.view(), Tag { node: node.id, piece: p as u32 })?));
                events.push(Event::transfer(self.eval, node, dev_id, CPU, p as u32, t0..epoch.elapsed(), v.bytes() as u64));
                kept.push(stage.kept_on_device.contains(&o).then_some(v));
            } else {
                pending.push(None);
                kept.push(Some(v));
            }
        }
        Ok(PieceOut { kept, pending, writes, event_count: events.len(), events })
    }

    /// Land the stage's outputs in `store`: results written in place as they are, pieces
    /// copied to the host merged there, pieces kept where they ran merged there (on an
    /// accelerator, by the device, staying in its memory).
    fn land(self, mut out: StageOut, store: &mut Store<'_>, events: &mut Vec<Event>) -> Result<()> {
        let (part, device, epoch, eval, dev_id) = (self.part, &self.device, self.epoch, self.eval, self.dev_id);
        let pieces = self.ranges.len();
        for (k, (&o, dest)) in self.stage.outputs.iter().zip(self.in_place).enumerate() {
            let node = &part.nodes[o];
            let name = self.names[self.pos[o].expect("stage node")].clone();
            if let Some(dest) = dest {
                let v = dest.into_value()?;
                if self.accel {
                    device.results_landed(&v);
                }
                store.host[o] = Some(v);
            }
            if !out.host[k].is_empty() {
                let t0 = epoch.elapsed();
                let merged = node.op.result_split().merge(std::mem::take(&mut out.host[k]))?;
                if pieces > 1 {
                    events.push(Event::merge(eval, name.clone(), node, CPU, t0..epoch.elapsed(), merged.bytes() as u64));
                }
                store.host[o] = Some(merged);
            }
            if !out.kept[k].is_empty() {
                let t0 = epoch.elapsed();
                let kept = std::mem::take(&mut out.kept[k]);
                let merged = if self.accel { device.concat_rows(&kept)? } else { node.op.result_split().merge(kept)? };
                if pieces > 1 {
                    events.push(Event::merge(eval, name, node, dev_id, t0..epoch.elapsed(), merged.bytes() as u64));
                }
                if self.accel {
                    store.device.insert((o, dev_id), merged);
                } else {
                    store.host[o] = Some(merged);
                }
            }
        }
        Ok(())
    }
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

//! The planner: a pure function of (graph part, cost model, device profiles, policy) to a
//! [`Plan`]. It sees metas, split types and where values live, never their data, so a plan
//! can be printed and tested for devices this machine does not have.

mod explain;
pub(crate) mod pieces;
mod placement;
mod reason;
mod schedule;
mod shards;
mod stages;
mod transfers;

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use crate::annotation::{Annotation, OpKind};
use crate::cost::{CostModel, MemoryKind};
use crate::error::{BachError, Result};
use crate::profile::{DeviceId, DeviceKind, DeviceProfile, CPU};
use crate::split::SplitRef;
use crate::units::bytes;
use crate::value::Meta;

pub use placement::{Forced, Policy, Total};
pub use reason::Reason;

/// One node of the part of the graph an evaluation needs.
#[derive(Clone)]
pub struct PartNode {
    pub id: u64,
    pub op: Arc<Annotation>,
    /// Indices (into the part) of the arguments; empty for evaluated nodes.
    pub inputs: Vec<usize>,
    pub arg_splits: Vec<SplitRef>,
    pub meta: Meta,
    pub cell: u64,
    /// Where the value already is, for nodes evaluated earlier (the part's boundary).
    pub materialized: Option<DeviceId>,
    /// How an accelerator's copies read this value's host memory: [`MemoryKind::Pinned`]
    /// once an accelerator has page-locked it ([`crate::device::Device::host_memory`]), so that its
    /// copies are priced at the copy engine's rate; ordinary memory otherwise.
    pub host_memory: MemoryKind,
    /// The host memory a copy of this value out of an accelerator lands in, for a value
    /// still to be computed: [`MemoryKind::Pinned`] when the accelerator keeps earlier
    /// results' memory page-locked ([`crate::device::Device::results_memory`]); ordinary memory
    /// otherwise.
    pub lands_in: MemoryKind,
    /// Asked for by the evaluation.
    pub target: bool,
    /// Asked to stay in the accelerator's memory (`eval_on_device`) rather than come back.
    pub keep_on_device: bool,
    /// Asked for a device by the value or its cell.
    pub forced: Option<Forced>,
}

impl PartNode {
    /// Whether this node's result, computed by a stage split into rows of length
    /// `split_len`, merges by rows: the executor writes it in place, every piece's rows into
    /// one host array (`RowsOut`), when it comes back to the host.
    pub fn merges_by_rows(&self, split_len: Option<usize>) -> bool {
        self.op.result_split().key() == "rows" && self.meta.ndim() > 0 && split_len == Some(self.meta.rows())
    }
}

/// The nodes an evaluation needs, in topological order (arguments before users).
#[derive(Clone, Default)]
pub struct GraphPart {
    pub nodes: Vec<PartNode>,
}

impl GraphPart {
    /// For each node, the nodes that read it.
    pub fn consumers(&self) -> Vec<Vec<usize>> {
        let mut consumers: Vec<Vec<usize>> = vec![vec![]; self.nodes.len()];
        for (i, node) in self.nodes.iter().enumerate() {
            for &u in &node.inputs {
                consumers[u].push(i);
            }
        }
        consumers
    }

    /// Length of the dimension node `i` runs its pieces along, when it can run in pieces.
    pub fn split_len(&self, i: usize) -> Option<usize> {
        let n = &self.nodes[i];
        if n.materialized.is_some() || !n.op.splittable() {
            return None;
        }
        match n.op.kind() {
            OpKind::Source => None,
            OpKind::Alloc => {
                let r = n.op.result_split();
                if r.splittable() {
                    r.size(&n.meta)
                } else {
                    None
                }
            }
            OpKind::Compute => n.arg_splits.iter().zip(&n.inputs).find_map(|(s, &u)| if s.splittable() { s.size(&self.nodes[u].meta) } else { None }),
        }
    }
}

/// One op of the plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Index of the node in the graph part.
    pub node: usize,
    pub id: u64,
    pub op: String,
    /// Its op's cost family.
    pub family: crate::cost::Family,
    pub meta: Meta,
    pub cell: u64,
    pub device: DeviceId,
    pub stage: usize,
    /// Why it was placed there.
    pub reason: Reason,
    /// Estimated seconds over the whole value where it runs.
    pub estimate_s: f64,
    /// Estimated seconds on the CPU and on the accelerator (infinite: it cannot run there).
    pub cpu_s: f64,
    pub accelerator_s: f64,
    /// Seconds of the copies its arguments need to reach its device.
    pub copies_s: f64,
    /// What moving it (alone) to the other device would add to the plan's estimated total;
    /// negative when moving it would gain; `None` when it cannot move.
    pub margin_s: Option<f64>,
    /// Node ids of its arguments, in order (steps of this plan or [`Plan::inputs`]).
    pub inputs: Vec<u64>,
}

/// A value the plan reads that an earlier evaluation (or the user) made: the plan's boundary.
#[derive(Clone, Debug, PartialEq)]
pub struct PlanInput {
    pub id: u64,
    pub op: String,
    pub meta: Meta,
    pub cell: u64,
    /// Where it is.
    pub device: DeviceId,
}

/// Ops that run together: with a split length, every piece goes through all of them before
/// the next piece starts; without, the single op runs once over whole values.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    /// Where it runs: its one device, or the first of [`Stage::shards`].
    pub device: DeviceId,
    /// The accelerators its pieces are spread over, data-parallel, when there are several:
    /// block by block in piece order ([`shard_of_piece`]), `device` first. Empty: every
    /// piece on `device`.
    pub shards: Vec<DeviceId>,
    pub split_len: Option<usize>,
    pub piece_rows: usize,
    pub pieces: usize,
    /// Indices into `Plan::steps`, in execution order.
    pub steps: Vec<usize>,
    /// Nodes (part indices) whose pieces are merged at the end of the stage.
    pub outputs: Vec<usize>,
    /// The stage's data does not fit the device's memory and is streamed through it.
    pub paged: bool,
    /// Outputs merged and kept whole in the (accelerator) device's memory, for later stages
    /// there or because they were asked to stay; the others come back to the host.
    pub kept_on_device: Vec<usize>,
    /// Elements the stage streams: those of the values it reads from outside it and of the
    /// values it writes out (what the cost model's `stage` row prices per element); none for
    /// a stage of whole values (no pieces are cut or written back: its op reads what it needs,
    /// a slice of two rows two rows, and its own cost prices that).
    pub streamed_elements: usize,
    /// Where the list scheduler put it among several accelerators of one kind
    /// ([`schedule`]): `None` on the CPU, spread, or with one accelerator.
    pub slot: Option<Slot>,
}

/// A stage's place in the schedule over several accelerators: when it starts and finishes by
/// the cost model, and the accelerator placement gave it alone (the first of its kind).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Slot {
    pub start_s: f64,
    pub finish_s: f64,
    pub alone_on: DeviceId,
}

impl Stage {
    /// The devices its pieces run on: its shards, or its one device.
    pub fn devices(&self) -> Vec<DeviceId> {
        if self.shards.is_empty() {
            vec![self.device]
        } else {
            self.shards.clone()
        }
    }
}

/// Which of `shards` devices runs piece `p` of `pieces`: contiguous blocks, as even as they
/// can be (piece rows are equal, so each device gets the same share of rows, to one piece).
pub fn shard_of_piece(p: usize, pieces: usize, shards: usize) -> usize {
    if shards <= 1 || pieces == 0 {
        0
    } else {
        (p * shards / pieces).min(shards - 1)
    }
}

/// How many of `ids`' devices compute at once, so that a stage spread over them takes this
/// share of one's time: distinct GPUs (two logical devices on one GPU share it: their names
/// name the same `cuda:N`), and one for emulated accelerators (they share the host's cores,
/// whose parallelism [`Plan::stage_parallel_pieces`] counts already).
pub fn parallel_width(devices: &[DeviceProfile], ids: &[DeviceId]) -> usize {
    let profiles: Vec<&DeviceProfile> = ids.iter().filter_map(|d| devices.get(d.0 as usize)).collect();
    if profiles.iter().any(|d| d.kind != DeviceKind::Cuda) {
        return 1;
    }
    let mut names: Vec<&str> = profiles.iter().map(|d| d.name.as_str()).collect();
    names.sort_unstable();
    names.dedup();
    names.len().max(1)
}

/// Whether a copy from accelerator `a` to accelerator `b` goes straight between their
/// memories (two emulated accelerators: [`crate::device::Device::copy_from_peer`]) rather than
/// staged through host memory (every other pair; CUDA peer copies are not made yet).
pub fn peer_link(devices: &[DeviceProfile], a: DeviceId, b: DeviceId) -> bool {
    let emulated = |d: DeviceId| devices.get(d.0 as usize).is_some_and(|p| p.kind == DeviceKind::Emulated);
    a != b && a != CPU && b != CPU && emulated(a) && emulated(b)
}

/// A copy of a value between devices.
#[derive(Clone, Debug, PartialEq)]
pub struct Transfer {
    pub node: usize,
    pub id: u64,
    pub from: DeviceId,
    pub to: DeviceId,
    pub bytes: usize,
    /// The stage that needs it (`None`: the result going back to the host at the end).
    pub stage: Option<usize>,
    /// Copied piece by piece inside the stage (into an accelerator stage as its pieces start,
    /// or out of it as they finish), so copies overlap compute and a stage larger than the
    /// device's memory streams through it. Otherwise copied whole before the stage.
    pub streamed: bool,
    /// The host memory it reads or writes: page-locked host arrays are copied at the copy
    /// engine's rate ([`PartNode::host_memory`]).
    pub memory: MemoryKind,
}

/// Where a lazy allocation is created.
#[derive(Clone, Debug, PartialEq)]
pub struct Allocation {
    pub node: usize,
    pub id: u64,
    pub op: String,
    pub device: DeviceId,
    /// The node whose device decided it.
    pub first_user: Option<u64>,
}

/// Where and how an evaluation runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub steps: Vec<Step>,
    /// The values already made that the steps read.
    pub inputs: Vec<PlanInput>,
    pub stages: Vec<Stage>,
    pub transfers: Vec<Transfer>,
    pub allocations: Vec<Allocation>,
    pub devices: Vec<DeviceProfile>,
    pub policy: Policy,
    pub notes: Vec<String>,
    /// The cost model's estimate of the whole plan (compute and copies, summed).
    pub predicted: Total,
    /// The machine the cost model was measured on, when the plan's devices are not it: the
    /// estimate is a prediction for that machine.
    pub predicted_for: Option<String>,
}

impl Plan {
    /// The step of node `id`, if the plan runs it.
    pub fn step_of(&self, id: u64) -> Option<&Step> {
        self.steps.iter().find(|s| s.id == id)
    }
    /// The cost model's seconds for transfer `t` (from or to its kind of host memory, on the plan's devices).
    /// A transfer streamed in a stage spread over several accelerators moves each one's share
    /// of rows on that one's link, at once: its seconds are divided by the stage's width.
    pub fn transfer_seconds(&self, t: &Transfer, cost: &CostModel) -> f64 {
        let width = match t.stage {
            Some(s) if t.streamed => self.stage_width(s),
            _ => 1,
        };
        self.link_seconds(t, cost) / width as f64
    }
    /// The seconds of transfer `t` over one link, whole. Between two accelerators the copy is
    /// staged through host memory, out of one, then into the other, unless they copy
    /// straight ([`peer_link`]: then one copy into the other).
    fn link_seconds(&self, t: &Transfer, cost: &CostModel) -> f64 {
        use crate::cost::Direction;
        let copy = |direction: Direction, d: DeviceId, memory: MemoryKind| self.devices.get(d.0 as usize).map_or(0.0, |p| cost.copy_seconds_of(t.bytes, direction, memory, p));
        match (t.from, t.to) {
            (_, CPU) => copy(Direction::D2h, t.from, t.memory),
            (CPU, to) => copy(Direction::H2d, to, t.memory),
            (from, to) if peer_link(&self.devices, from, to) => copy(Direction::H2d, to, MemoryKind::Pageable),
            (from, to) => copy(Direction::D2h, from, MemoryKind::Pageable) + copy(Direction::H2d, to, MemoryKind::Pageable),
        }
    }
    /// How many devices compute stage `s` at once ([`parallel_width`] of its shards; 1 for a
    /// stage on one device).
    pub fn stage_width(&self, s: usize) -> usize {
        self.stages.get(s).map_or(1, |stage| if stage.shards.len() > 1 { parallel_width(&self.devices, &stage.shards) } else { 1 })
    }
    /// The stages in runs the executor starts at once: consecutive stages, each whole on an
    /// accelerator of its own (not spread), none reading another's results. Every other
    /// stage is a run of one. In execution order.
    pub fn waves(&self) -> Vec<Range<usize>> {
        let mut waves: Vec<Range<usize>> = Vec::new();
        let alone = |s: usize| self.stages[s].device != CPU && self.stages[s].shards.len() < 2;
        for s in 0..self.stages.len() {
            if let Some(w) = waves.last_mut().filter(|w| alone(s) && alone(w.start)) {
                let made: Vec<u64> = w.clone().flat_map(|t| self.stages[t].steps.iter().map(|&st| self.steps[st].id)).collect();
                let distinct = w.clone().all(|t| self.stages[t].device != self.stages[s].device);
                let independent = self.stages[s].steps.iter().all(|&st| self.steps[st].inputs.iter().all(|id| !made.contains(id)));
                if distinct && independent {
                    w.end = s + 1;
                    continue;
                }
            }
            waves.push(s..s + 1);
        }
        waves
    }
    /// The cost model's seconds for stage `s`'s ops on an accelerator, summed (those that
    /// can run there).
    fn stage_accelerator_seconds(&self, s: usize) -> f64 {
        self.stages[s].steps.iter().map(|&st| self.steps[st].accelerator_s).filter(|t| t.is_finite()).sum()
    }
    pub fn total_pieces(&self) -> usize {
        self.stages.iter().map(|s| s.pieces).sum()
    }
    /// How many of stage `s`'s pieces run at once, by which its ops' seconds divide: the
    /// emulated accelerator runs each piece's kernels on one host thread and its pieces on all
    /// of them (its rates are one thread's: one piece, as calibration times it). The CPU's
    /// rates already count all its threads, so a split stage of fewer pieces than threads
    /// divides by the share of threads it keeps busy (below 1: slower than the rates say),
    /// unless an op of its own spreads over the threads (`Family::Other`: the ML kernels).
    /// Measured on a 16-thread host: Black-Scholes and Haversine at 2^16 (8 pieces) ran 2.5x
    /// and 1.7x their all-thread prediction. A GPU's kernels run one after another; a stage
    /// spread over several GPUs runs on each at once ([`Plan::stage_width`]).
    pub fn stage_parallel_pieces(&self, s: usize) -> f64 {
        match self.stages.get(s).and_then(|stage| self.devices.get(stage.device.0 as usize).map(|d| (stage, d))) {
            Some((stage, d)) if d.kind == DeviceKind::Emulated => stage.pieces.min(d.threads).max(1) as f64,
            Some((stage, d))
                if d.kind == DeviceKind::Cpu
                    && stage.split_len.is_some()
                    && stage.pieces < d.threads
                    && stage.steps.iter().all(|&st| self.steps[st].family != crate::cost::Family::Other) =>
            {
                stage.pieces.max(1) as f64 / d.threads as f64
            }
            _ => self.stage_width(s) as f64,
        }
    }
    /// The cost model's seconds for stage `s` beyond its ops (the `stage` row of its device):
    /// its calls ([`Plan::stage_calls`]) at the row's `per_call`, plus each element it
    /// streams ([`Stage::streamed_elements`]) at its `per_element`.
    pub fn stage_overhead_seconds(&self, s: usize, cost: &CostModel) -> f64 {
        let Some((stage, device)) = self.stages.get(s).and_then(|stage| self.devices.get(stage.device.0 as usize).map(|d| (stage, d))) else { return 0.0 };
        let rate = cost.op_rate(crate::cost::Family::Stage, device.kind);
        rate.per_call * self.stage_calls(s) + rate.per_element * stage.streamed_elements as f64
    }
    /// How many times stage `s` pays its device's `stage` row's `per_call`: once on the CPU
    /// (its pieces are a few cache-sized blocks each thread runs through), once per piece on
    /// an accelerator (each piece has its own copies, launches, events and buffers: on the
    /// H100 and H200 hosts Black-Scholes 2^22 in 63 pieces of 8 MiB took 0.3 ms a piece
    /// beyond its ops and copies).
    pub fn stage_calls(&self, s: usize) -> f64 {
        match self.stages.get(s) {
            Some(stage) if stage.device != CPU => stage.pieces.max(1) as f64 / self.stage_width(s) as f64,
            Some(_) => 1.0,
            None => 0.0,
        }
    }
    /// Elements stage `s` streams, counted from its steps (see [`Stage::streamed_elements`]).
    fn count_streamed_elements(&self, s: usize) -> usize {
        let stage = &self.stages[s];
        if stage.split_len.is_none() {
            return 0;
        }
        let inside: std::collections::HashSet<u64> = stage.steps.iter().map(|&st| self.steps[st].id).collect();
        let mut read = std::collections::HashSet::new();
        let mut elements = 0usize;
        for &st in &stage.steps {
            for &id in &self.steps[st].inputs {
                if !inside.contains(&id) && read.insert(id) {
                    let meta = self.step_of(id).map(|x| &x.meta).or_else(|| self.inputs.iter().find(|i| i.id == id).map(|i| &i.meta));
                    elements += meta.map_or(0, Meta::len);
                }
            }
        }
        elements + stage.outputs.iter().filter_map(|&node| self.steps.iter().find(|st| st.node == node)).map(|st| st.meta.len()).sum::<usize>()
    }
}

/// Plan the evaluation of `part`'s targets: four passes, each a function of what the ones
/// before decided.
/// 1. [`placement`]: a device per op (the policy), each allocation where its first user runs.
/// 2. [`stages`]: ops that can pass pieces to each other unmerged run as one stage.
/// 3. [`pieces`]: how many rows a piece of each stage has (cache or device memory).
/// 4. [`transfers`]: where each value is whole after its stage, and the copies that get it
///    where it is read.
pub fn plan(part: &GraphPart, cost: &CostModel, devices: &[DeviceProfile], policy: Policy, memory_cap: Option<u64>) -> Result<Plan> {
    if devices.first().map(|d| d.kind) != Some(DeviceKind::Cpu) {
        return Err(BachError::invalid("plan", "the first device must be the CPU"));
    }
    let chosen = plan_with_policy(part, cost, devices, policy, memory_cap)?;
    // `optimal` weighs ops and copies one by one; what an accelerator's pieces cost comes
    // once stages are cut. Where the whole plan on the CPU is then the cheaper, it runs
    // instead (many small pieces of a paged stage cost more than their ops save).
    let on_accelerator = |p: &Plan| p.stages.iter().any(|s| s.device != CPU);
    if policy != Policy::Optimal || !on_accelerator(&chosen) {
        return Ok(chosen);
    }
    let mut cpu = plan_with_policy(part, cost, devices, Policy::CpuOnly, memory_cap)?;
    if cpu.predicted.seconds() >= chosen.predicted.seconds() || cpu.stages.iter().any(|s| s.device != CPU) {
        return Ok(chosen);
    }
    let pieces: usize = chosen.stages.iter().filter(|s| s.device != CPU).map(|s| s.pieces).sum();
    let why = Reason::WholePlan { cpu_s: cpu.predicted.seconds(), accelerator_s: chosen.predicted.seconds(), pieces };
    for step in cpu.steps.iter_mut().filter(|st| st.reason == Reason::Policy("cpu")) {
        step.reason = why.clone();
    }
    cpu.policy = Policy::Optimal;
    cpu.notes.push(format!(
        "optimal: the whole plan on the CPU ({}) is cheaper than with the accelerator ({}, {pieces} pieces there)",
        crate::cost::seconds(cpu.predicted.seconds()),
        crate::cost::seconds(chosen.predicted.seconds())
    ));
    Ok(cpu)
}

/// [`plan`] with `policy`'s placement as it is.
fn plan_with_policy(part: &GraphPart, cost: &CostModel, devices: &[DeviceProfile], policy: Policy, memory_cap: Option<u64>) -> Result<Plan> {
    let budget = Budget { cost, memory_cap };
    let mut notes = Vec::new();
    let consumers = part.consumers();
    let placed = placement::place(part, &consumers, devices, policy, &budget, &mut notes);
    let mut predicted = placed.problem.total(&placed.device);
    let grouped = stages::group(part, &consumers, &placed);
    let stages::Grouped { steps, mut stages, stage_of } = grouped;
    shards::spread(part, &consumers, &placed.device, &mut stages, &stage_of, devices, &mut notes);
    let mut placed = placed;
    let mut steps = steps;
    let between_accelerators_s = schedule::assign(part, &mut placed, &mut steps, &mut stages, &stage_of, devices, &mut notes);
    predicted.copies_s += between_accelerators_s;
    for (s, stage) in stages.iter_mut().enumerate() {
        pieces::size(part, &steps, stage, s, &stage_of, devices, cost, &budget, &mut notes);
    }
    let transfers = transfers::insert(part, &consumers, &placed.device, &steps, &mut stages, &stage_of, devices, &mut notes);
    // Figures measured on another machine predict for that machine, unless its GPU is here.
    let here = |m: &String| devices.iter().any(|d| d.kind == DeviceKind::Cuda && !d.is_hypothetical() && m.starts_with(d.name.split(" (").next().unwrap_or("")));
    let predicted_for = cost.measured_on.clone().filter(|m| !here(m));
    let inputs =
        part.nodes.iter().filter_map(|n| n.materialized.map(|device| PlanInput { id: n.id, op: n.op.name().to_string(), meta: n.meta.clone(), cell: n.cell, device })).collect();
    let mut plan = Plan { steps, inputs, stages, transfers, allocations: placed.allocations, devices: devices.to_vec(), policy, notes, predicted, predicted_for };
    // Placement weighs ops and copies; what each stage adds comes once stages are known.
    // A stage spread over several accelerators takes its share of their time: its ops and
    // streamed copies were priced on one.
    for s in 0..plan.stages.len() {
        plan.stages[s].streamed_elements = plan.count_streamed_elements(s);
        plan.predicted.compute_s += plan.stage_overhead_seconds(s, cost);
        let width = plan.stage_width(s) as f64;
        if width > 1.0 {
            let ops = plan.stage_accelerator_seconds(s);
            let copies: f64 = plan.transfers.iter().filter(|t| t.stage == Some(s) && t.streamed).map(|t| plan.link_seconds(t, cost)).sum();
            plan.predicted.compute_s -= ops * (1.0 - 1.0 / width);
            plan.predicted.copies_s -= copies * (1.0 - 1.0 / width);
        }
    }
    // Stages the executor starts at once take the longest one's time, not their sum.
    // As many at once as distinct GPUs: two logical devices share their GPU, and emulated
    // accelerators the host's cores (their whole-value kernels, a Gram matrix, use them all:
    // two Gram matrices on two emulated accelerators took 117 ms against one's 112 ms here).
    for wave in plan.waves().into_iter().filter(|w| w.len() > 1) {
        let ids: Vec<DeviceId> = wave.clone().map(|s| plan.stages[s].device).collect();
        let at_once = parallel_width(&plan.devices, &ids);
        let ops: Vec<f64> = wave.map(|s| plan.stage_accelerator_seconds(s)).collect();
        let (sum, longest) = (ops.iter().sum::<f64>(), ops.iter().copied().fold(0.0, f64::max));
        plan.predicted.compute_s -= sum - longest.max(sum / at_once as f64);
    }
    Ok(plan)
}

/// The bytes of a device's memory the planner may fill (`None`: host memory, not paged).
pub(crate) struct Budget<'c> {
    pub(crate) cost: &'c CostModel,
    pub(crate) memory_cap: Option<u64>,
}

impl Budget<'_> {
    pub(crate) fn of(&self, d: &DeviceProfile) -> Option<u64> {
        d.memory_bytes.map(|m| {
            let m = self.memory_cap.map_or(m, |c| c.min(m));
            (m as f64 * self.cost.planner.accelerator_memory_fraction) as u64
        })
    }
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let several = self.devices.iter().filter(|d| d.kind != DeviceKind::Cpu).count() > 1;
        let dev = |d: DeviceId| match self.devices.get(d.0 as usize) {
            Some(p) if several && d != CPU => format!("{} [{}]", p.name, d.0),
            Some(p) => p.name.clone(),
            None => format!("device {}", d.0),
        };
        writeln!(
            f,
            "plan: {} ops in {} stages, policy {}, devices: {}",
            self.steps.len(),
            self.stages.len(),
            self.policy,
            self.devices.iter().map(|d| d.name.as_str()).collect::<Vec<_>>().join(", ")
        )?;
        for (s, stage) in self.stages.iter().enumerate() {
            match stage.split_len {
                Some(len) => writeln!(
                    f,
                    "stage {s} on {}: {len} rows in {} piece(s) of {} rows{}{}",
                    dev(stage.device),
                    stage.pieces,
                    stage.piece_rows,
                    if stage.paged { " (paged)" } else { "" },
                    if stage.shards.len() > 1 {
                        format!(", spread over devices {}", stage.shards.iter().map(|d| d.0.to_string()).collect::<Vec<_>>().join(", "))
                    } else {
                        String::new()
                    }
                )?,
                None => writeln!(f, "stage {s} on {}: whole values", dev(stage.device))?,
            }
            for &i in &stage.steps {
                let st = &self.steps[i];
                writeln!(f, "  #{:<5} {:<14} {:<18} cell {:<3} {}", st.id, st.op, st.meta.to_string(), st.cell, st.reason)?;
            }
            if !stage.outputs.is_empty() && stage.pieces > 1 {
                let ids: Vec<String> = stage.outputs.iter().map(|&o| format!("#{}", self.steps.iter().find(|s| s.node == o).map_or(0, |s| s.id))).collect();
                writeln!(f, "  merge {}", ids.join(", "))?;
            }
            if !stage.kept_on_device.is_empty() {
                let ids: Vec<String> = stage.kept_on_device.iter().map(|&o| format!("#{}", self.steps.iter().find(|s| s.node == o).map_or(0, |s| s.id))).collect();
                writeln!(f, "  kept on {}: {}", dev(stage.device), ids.join(", "))?;
            }
        }
        if self.transfers.is_empty() {
            writeln!(f, "transfers: none")?;
        }
        for t in &self.transfers {
            let when = match (t.stage, t.streamed) {
                (None, _) => "at the end".to_string(),
                (Some(s), true) => format!("piece by piece in stage {s}"),
                (Some(s), false) => format!("before stage {s}"),
            };
            writeln!(f, "transfer #{} {} -> {}: {}, {when}", t.id, dev(t.from), dev(t.to), bytes(t.bytes))?;
        }
        for a in &self.allocations {
            writeln!(f, "allocation #{} {} on {}{}", a.id, a.op, dev(a.device), a.first_user.map(|u| format!(" (first user #{u})")).unwrap_or_default())?;
        }
        let t = &self.predicted;
        let against = self.predicted_for.as_ref().map(|m| format!(", a prediction for {m}")).unwrap_or_default();
        writeln!(f, "predicted: {} (compute {}, copies {}{against})", crate::cost::seconds(t.seconds()), crate::cost::seconds(t.compute_s), crate::cost::seconds(t.copies_s))?;
        for n in &self.notes {
            writeln!(f, "note: {n}")?;
        }
        Ok(())
    }
}

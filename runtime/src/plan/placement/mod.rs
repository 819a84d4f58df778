//! Pass 1, placement: a device per computation (the policy decides among what is free to
//! move), then each lazy allocation on the device of its first user.
//!
//! The pass first states the [`Problem`]: for every node where it must be or that it is free,
//! its estimated seconds on each device (the annotation's estimator, else the cost model's
//! table) and the seconds to copy its value each way. A policy is one file here behind
//! [`PlacementPolicy`] and chooses a device per free op; [`Problem::total`] prices any
//! choice the same way for every policy, so policies can be compared (and `optimal` checked
//! against brute force).

mod cpu_only;
mod greedy;
pub(crate) mod maxflow;
mod optimal;
mod problem;
mod threshold;

use std::fmt;
use std::str::FromStr;

use super::{Allocation, Budget, GraphPart, Reason};
use crate::annotation::{broadcast_index, Launch, OpKind};
use crate::cost::{CostModel, Direction};
use crate::profile::{DeviceId, DeviceKind, DeviceProfile, CPU};
use crate::units::bytes;
use crate::value::Meta;

pub use problem::Total;
pub(crate) use problem::{At, Problem, ProblemNode};

/// How the planner chooses a device per op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Every op with an accelerator version on the accelerator when one is present (the
    /// paper's default).
    Greedy,
    /// Per op, the accelerator when its estimate plus the transfers its inputs need is at
    /// most the CPU's estimate (the paper's estimator rule).
    Threshold,
    /// Devices for all ops at once, minimising the estimated total time with every copy
    /// (a minimum cut).
    Optimal,
    /// Everything on the CPU.
    CpuOnly,
}

impl Policy {
    pub const NAMES: &'static str = "optimal, greedy, threshold, cpu";
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Policy::Greedy => "greedy",
            Policy::Threshold => "threshold",
            Policy::Optimal => "optimal",
            Policy::CpuOnly => "cpu",
        })
    }
}

impl FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "greedy" => Ok(Policy::Greedy),
            "threshold" => Ok(Policy::Threshold),
            "optimal" => Ok(Policy::Optimal),
            "cpu" | "cpu-only" => Ok(Policy::CpuOnly),
            _ => Err(format!("unknown policy `{s}` (known: {})", Policy::NAMES)),
        }
    }
}

/// A value or a cell asked for a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Forced {
    /// The accelerator (else the CPU).
    pub accelerator: bool,
    /// Which accelerator, when one was named (`Device::Accelerator(2)`, `:bach cell device:2`):
    /// its ops are not spread over the others. `None`: the first, spread as the plan decides.
    pub device: Option<DeviceId>,
    /// By the cell (`:bach cell gpu`), else by the value (`.on(...)`).
    pub by_cell: bool,
}

impl fmt::Display for Forced {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let to = match (self.accelerator, self.device) {
            (true, Some(d)) => format!("device {}", d.0),
            (true, None) => "the accelerator".to_string(),
            (false, _) => "the CPU".to_string(),
        };
        let by = if self.by_cell { "by the cell" } else { "by .on(...)" };
        write!(f, "forced to {to} {by}")
    }
}

/// Where each node of the part runs, and why.
pub(super) struct Placement {
    pub device: Vec<DeviceId>,
    pub reason: Vec<Reason>,
    pub allocations: Vec<Allocation>,
    pub problem: Problem,
}

/// A device and why.
pub(crate) type Choice = (DeviceId, Reason);

/// How devices are chosen for the ops free to move.
pub(crate) trait PlacementPolicy {
    fn name(&self) -> &'static str;
    /// A choice per free op of `problem` ([`Problem::free`]), in that order.
    fn place(&self, problem: &Problem) -> Vec<Choice>;
}

pub(crate) fn policy(p: Policy) -> &'static dyn PlacementPolicy {
    match p {
        Policy::Greedy => &greedy::Greedy,
        Policy::Threshold => &threshold::Threshold,
        Policy::Optimal => &optimal::Optimal,
        Policy::CpuOnly => &cpu_only::CpuOnly,
    }
}

/// Seconds of node `i` on `device`: the annotation's estimate, else the cost model's table.
pub(crate) fn estimate(part: &GraphPart, i: usize, device: &DeviceProfile, cost: &CostModel) -> f64 {
    let node = &part.nodes[i];
    let args: Vec<Meta> = node.inputs.iter().map(|&u| part.nodes[u].meta.clone()).collect();
    node.op.estimate(&args, &node.meta, device).unwrap_or_else(|| cost.op_seconds(node.op.family(), node.op.weight(), node.op.work(&args, &node.meta), device))
}

/// Seconds of node `i` on accelerator `a` when it is inside a fused chain: `a` fuses
/// elementwise ops into one kernel, `i` is such an op (for its arguments' dtypes), has no
/// estimator of its own, is not asked for, and every op that reads it is fusable too. Then
/// its result never takes the device's memory, and it costs its arithmetic beyond one
/// operation per element (its family's per-flop rate) and nothing for memory traffic or a
/// launch of its own: those are the chain's, charged to the ops whose results leave it. The
/// CUDA device ran Black-Scholes 2^24's 32 ops as fused kernels in 1.8 ms on the H100; priced
/// op by op they came to 14 ms, and the stage's prediction to twice its time. `None`: not
/// inside a chain.
fn fused_seconds(part: &GraphPart, consumers: &[Vec<usize>], i: usize, a: &DeviceProfile, cost: &CostModel) -> Option<f64> {
    let fusable = |j: usize| {
        let node = &part.nodes[j];
        let dtypes: Vec<_> = node.inputs.iter().map(|&u| part.nodes[u].meta.dtype).collect();
        node.materialized.is_none() && node.op.fused_expr(&dtypes).is_some()
    };
    let node = &part.nodes[i];
    if !a.fuses_elementwise || node.target || consumers[i].is_empty() || !fusable(i) || !consumers[i].iter().all(|&c| fusable(c)) {
        return None;
    }
    let args: Vec<Meta> = node.inputs.iter().map(|&u| part.nodes[u].meta.clone()).collect();
    if node.op.estimate(&args, &node.meta, a).is_some() {
        return None;
    }
    Some(cost.op_rate(node.op.family(), a.kind).per_flop * node.op.work(&args, &node.meta).flops)
}

/// State the problem: where each node must be, or that it is free, and what everything costs.
pub(crate) fn problem(part: &GraphPart, consumers: &[Vec<usize>], devices: &[DeviceProfile], budget: &Budget<'_>, notes: &mut Vec<String>) -> Problem {
    let cost = budget.cost;
    let accel = devices.iter().find(|d| d.kind != DeviceKind::Cpu);
    let cpu = &devices[0];
    let mut nodes: Vec<ProblemNode> = Vec::with_capacity(part.nodes.len());
    for (i, node) in part.nodes.iter().enumerate() {
        let readers: Vec<usize> = consumers[i].iter().copied().filter(|&c| part.nodes[c].materialized.is_none()).collect();
        // A value's copy: the first reader's transfer estimator, else the cost model.
        // Copies in read the value's host memory; copies out land in `lands_in`.
        let copy = |direction: Direction, a: &DeviceProfile| {
            let memory = if direction == Direction::H2d { node.host_memory } else { node.lands_in };
            readers.iter().find_map(|&c| part.nodes[c].op.estimate_transfer(&node.meta, a)).unwrap_or_else(|| cost.copy_seconds_of(node.meta.bytes(), direction, memory, a))
        };
        let (to_accelerator_s, to_host_s) = accel.map_or((0.0, 0.0), |a| (copy(Direction::H2d, a), copy(Direction::D2h, a)));
        let mut n = ProblemNode {
            at: At::Fixed(CPU),
            reason: Reason::Evaluated,
            cpu_s: 0.0,
            accelerator_s: f64::INFINITY,
            inputs: node.inputs.clone(),
            readers,
            to_accelerator_s,
            to_host_s,
            bytes: node.meta.bytes(),
            needed_on_host: node.target && !node.keep_on_device,
        };
        if let Some(d) = node.materialized {
            n.at = At::Fixed(d);
            n.cpu_s = 0.0;
            n.accelerator_s = 0.0;
            nodes.push(n);
            continue;
        }
        n.cpu_s = estimate(part, i, cpu, cost);
        let has_version = node.op.accelerator().is_some();
        if let (Some(a), true) = (accel, has_version) {
            n.accelerator_s = fused_seconds(part, consumers, i, a, cost).unwrap_or_else(|| estimate(part, i, a, cost));
        }
        match node.op.kind() {
            OpKind::Source => {}
            OpKind::Alloc => {
                let first = consumers[i].iter().copied().find(|&c| part.nodes[c].materialized.is_none());
                (n.at, n.reason) = match first {
                    Some(c) if has_version => (At::FollowsFirstUser(c), Reason::FirstUser(part.nodes[c].id)),
                    Some(c) => (At::Fixed(CPU), Reason::FirstUser(part.nodes[c].id)),
                    None => (At::Fixed(CPU), Reason::UnusedAllocation),
                };
            }
            OpKind::Compute => {
                let whole: usize = node.inputs.iter().map(|&u| part.nodes[u].meta.bytes()).sum::<usize>() + node.meta.bytes();
                let fits = match accel.and_then(|a| budget.of(a)) {
                    Some(b) => node.op.splittable() || whole as u64 <= b,
                    None => true,
                };
                let forced = node.forced;
                // Elementwise kernels index each argument as `(i / div) % mod`: an elementwise
                // op's broadcast that is not one run of the result's axes stays on the CPU.
                let unindexable = match node.op.accelerator().map(|k| &k.launch) {
                    Some(Launch::Elementwise { .. }) if accel.is_some() && node.op.elementwise => {
                        node.inputs.iter().find_map(|&u| broadcast_index(&part.nodes[u].meta.shape, &node.meta.shape).err())
                    }
                    _ => None,
                };
                (n.at, n.reason) = match (node.op.cpu_only_reason().map(str::to_string).or(unindexable), accel, has_version) {
                    (Some(why), _, _) => (At::Fixed(CPU), Reason::CpuOnly(why)),
                    (None, None, _) => (At::Fixed(CPU), forced.filter(|f| f.accelerator).map_or(Reason::NoAcceleratorPresent, Reason::ForcedUnavailable)),
                    (None, Some(_), false) => (At::Fixed(CPU), forced.filter(|f| f.accelerator).map_or(Reason::NoAcceleratorVersion, Reason::ForcedUnavailable)),
                    (None, Some(a), true) if !fits => {
                        let b = budget.of(a).unwrap_or(0);
                        notes.push(format!(
                            "#{} {} needs {} whole, more than the {} budget of {}: runs on the CPU",
                            node.id,
                            node.op.name(),
                            bytes(whole),
                            bytes(b as usize),
                            a.name
                        ));
                        (At::Fixed(CPU), Reason::DoesNotFit)
                    }
                    (None, Some(a), true) => match forced {
                        // A named accelerator must be one of the session's, of the first one's kind.
                        Some(f) if f.accelerator && f.device.is_some_and(|d| !devices.iter().any(|x| x.id == d && x.kind == a.kind)) => {
                            (At::Fixed(CPU), Reason::ForcedUnavailable(f))
                        }
                        Some(f) => (At::Fixed(if f.accelerator { f.device.unwrap_or(a.id) } else { CPU }), Reason::Forced(f)),
                        None => (At::Free, Reason::Evaluated),
                    },
                };
            }
        }
        nodes.push(n);
    }
    Problem::new(nodes, accel.map(|a| a.id))
}

pub(super) fn place(part: &GraphPart, consumers: &[Vec<usize>], devices: &[DeviceProfile], policy_name: Policy, budget: &Budget<'_>, notes: &mut Vec<String>) -> Placement {
    let problem = problem(part, consumers, devices, budget, notes);
    let choices = policy(policy_name).place(&problem);
    let mut device: Vec<DeviceId> = problem.nodes.iter().map(|n| if let At::Fixed(d) = n.at { d } else { CPU }).collect();
    let mut reason: Vec<Reason> = problem.nodes.iter().map(|n| n.reason.clone()).collect();
    for (&i, (d, why)) in problem.free.iter().zip(choices) {
        (device[i], reason[i]) = (d, why);
    }
    let device = problem.resolve(device);
    let mut allocations = Vec::new();
    for (i, node) in part.nodes.iter().enumerate() {
        if node.materialized.is_none() && node.op.kind() == OpKind::Alloc {
            let first = consumers[i].iter().copied().find(|&c| part.nodes[c].materialized.is_none());
            if let (Some(c), At::Fixed(CPU)) = (first, problem.nodes[i].at) {
                if device[c] != CPU {
                    reason[i] = Reason::HostOnlyAllocation;
                }
            }
            allocations.push(Allocation { node: i, id: node.id, op: node.op.name().to_string(), device: device[i], first_user: first.map(|c| part.nodes[c].id) });
        }
    }
    Placement { device, reason, allocations, problem }
}

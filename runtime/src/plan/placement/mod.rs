//! Pass 1, placement: a device per computation (the policy decides among what is free to
//! move), then each lazy allocation on the device of its first user.
//!
//! A policy is one file here behind [`PlacementPolicy`]; it sees only the ops it may place
//! (not evaluated, not kept on the CPU by their annotation, with an accelerator version when
//! the policy wants an accelerator).

mod cpu_only;
mod greedy;
mod threshold;

use super::{Allocation, Budget, GraphPart, Reason};
use crate::annotation::OpKind;
use crate::cost::{CostModel, Policy};
use crate::profile::{DeviceId, DeviceKind, DeviceProfile, CPU};
use crate::units::bytes;
use crate::value::Meta;

/// Where each node of the part runs, and why.
pub(super) struct Placement {
    pub device: Vec<DeviceId>,
    pub reason: Vec<Reason>,
    pub allocations: Vec<Allocation>,
}

/// A device and why.
pub(crate) type Choice = (DeviceId, Reason);

/// An op a policy may place.
pub(crate) struct Free<'a> {
    /// Index of the node in the part.
    pub node: usize,
    /// The accelerator it could run on (`None` when the session has none).
    pub accelerator: Option<&'a DeviceProfile>,
    /// Whether it fits the accelerator's memory budget (an op that can be cut into pieces
    /// always fits; pieces are sized for the budget).
    pub fits: bool,
    /// Estimated seconds over the whole value on the CPU and on the accelerator (the
    /// annotation's estimator, else the cost model's default).
    pub cpu_s: f64,
    pub accelerator_s: f64,
    /// Its arguments: where each is when the policy does not decide it, and the seconds to
    /// copy it to the accelerator.
    pub inputs: Vec<Input>,
}

/// An argument of a free op.
pub(crate) struct Input {
    pub node: usize,
    /// Where it is, if it is not itself a free op: evaluated, kept on the CPU, or an
    /// allocation (made where its first user runs: `None` too, and never copied).
    pub fixed_on: Option<DeviceId>,
    pub allocation: bool,
    pub transfer_s: f64,
}

/// How devices are chosen for the ops free to move.
pub(crate) trait PlacementPolicy {
    fn name(&self) -> &'static str;
    /// Whether only ops with an accelerator version on a session with an accelerator are free
    /// (others get "no accelerator present" / "no accelerator version").
    fn wants_accelerator(&self) -> bool {
        true
    }
    /// A choice per free op, in the order given.
    fn place(&self, free: &[Free<'_>]) -> Vec<Choice>;
}

fn policy(p: Policy) -> &'static dyn PlacementPolicy {
    match p {
        Policy::Greedy => &greedy::Greedy,
        Policy::Threshold => &threshold::Threshold,
        Policy::CpuOnly => &cpu_only::CpuOnly,
    }
}

/// Seconds of `op`'s node `i` on `device`: the annotation's estimate, else the model's default.
fn estimate(part: &GraphPart, i: usize, device: &DeviceProfile, cost: &CostModel) -> f64 {
    let node = &part.nodes[i];
    let args: Vec<Meta> = node.inputs.iter().map(|&u| part.nodes[u].meta.clone()).collect();
    node.op.estimate(&args, &node.meta, device).unwrap_or_else(|| cost.default_estimate(&node.meta, device))
}

pub(super) fn place(part: &GraphPart, consumers: &[Vec<usize>], devices: &[DeviceProfile], policy_name: Policy, budget: &Budget<'_>, notes: &mut Vec<String>) -> Placement {
    let cost = budget.cost;
    let n = part.nodes.len();
    let policy = policy(policy_name);
    let accel = devices.iter().find(|d| d.kind != DeviceKind::Cpu);
    let mut device: Vec<DeviceId> = vec![CPU; n];
    let mut reason: Vec<Reason> = vec![Reason::Evaluated; n];
    let mut free = Vec::new();
    for (i, node) in part.nodes.iter().enumerate() {
        if let Some(d) = node.materialized {
            device[i] = d;
            continue;
        }
        if node.op.kind() != OpKind::Compute {
            continue;
        }
        let wants = policy.wants_accelerator();
        reason[i] = match (node.op.cpu_only_reason(), accel, node.op.accelerator()) {
            (Some(why), _, _) => Reason::CpuOnly(why.to_string()),
            (None, None, _) if wants => Reason::NoAcceleratorPresent,
            (None, Some(_), None) if wants => Reason::NoAcceleratorVersion,
            _ => {
                let whole: usize = node.inputs.iter().map(|&u| part.nodes[u].meta.bytes()).sum::<usize>() + node.meta.bytes();
                let fits = match accel.and_then(|a| budget.of(a)) {
                    Some(b) => node.op.splittable() || whole as u64 <= b,
                    None => true,
                };
                let cpu = &devices[0];
                let on_accel = |a: &DeviceProfile| estimate(part, i, a, cost);
                let inputs = node
                    .inputs
                    .iter()
                    .map(|&u| {
                        let m = &part.nodes[u].meta;
                        let transfer_s = accel.map_or(0.0, |a| node.op.estimate_transfer(m, a).unwrap_or_else(|| cost.transfer_seconds(m.bytes(), a)));
                        let allocation = part.nodes[u].materialized.is_none() && part.nodes[u].op.kind() == OpKind::Alloc;
                        Input { node: u, fixed_on: None, allocation, transfer_s }
                    })
                    .collect();
                free.push(Free { node: i, accelerator: accel, fits, cpu_s: estimate(part, i, cpu, cost), accelerator_s: accel.map_or(f64::INFINITY, on_accel), inputs });
                continue;
            }
        };
    }
    let is_free: std::collections::HashSet<usize> = free.iter().map(|f| f.node).collect();
    for f in free.iter_mut() {
        for input in f.inputs.iter_mut() {
            if !is_free.contains(&input.node) && !input.allocation {
                input.fixed_on = Some(device[input.node]);
            }
        }
    }
    for (op, (d, why)) in free.iter().zip(policy.place(&free)) {
        let node = &part.nodes[op.node];
        if why == Reason::DoesNotFit {
            if let Some(a) = op.accelerator {
                let whole: usize = node.inputs.iter().map(|&u| part.nodes[u].meta.bytes()).sum::<usize>() + node.meta.bytes();
                let b = budget.of(a).unwrap_or(0);
                notes.push(format!("#{} {} needs {} whole, more than the {} budget of {}: runs on the CPU", node.id, node.op.name(), bytes(whole), bytes(b as usize), a.name));
            }
        }
        (device[op.node], reason[op.node]) = (d, why);
    }
    let mut allocations = Vec::new();
    for (i, node) in part.nodes.iter().enumerate() {
        if node.materialized.is_none() && node.op.kind() == OpKind::Alloc {
            let first = consumers[i].iter().copied().find(|&c| part.nodes[c].materialized.is_none());
            let on = first.map_or(CPU, |c| device[c]);
            (device[i], reason[i]) = match first {
                Some(_) if on != CPU && node.op.accelerator().is_none() => (CPU, Reason::HostOnlyAllocation),
                Some(c) => (on, Reason::FirstUser(part.nodes[c].id)),
                None => (CPU, Reason::UnusedAllocation),
            };
            allocations.push(Allocation { node: i, id: node.id, op: node.op.name().to_string(), device: device[i], first_user: first.map(|c| part.nodes[c].id) });
        }
    }
    Placement { device, reason, allocations }
}

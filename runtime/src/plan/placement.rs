//! Pass 1, placement: a device per computation (the policy decides), then each lazy
//! allocation on the device of its first user.

use super::{Allocation, Budget, GraphPart};
use crate::annotation::OpKind;
use crate::cost::Policy;
use crate::profile::{DeviceId, DeviceKind, DeviceProfile, CPU};
use crate::units::bytes;

/// Where each node of the part runs, and why.
pub(super) struct Placement {
    pub device: Vec<DeviceId>,
    pub reason: Vec<String>,
    pub allocations: Vec<Allocation>,
}

pub(super) fn place(part: &GraphPart, consumers: &[Vec<usize>], devices: &[DeviceProfile], policy: Policy, budget: &Budget<'_>, notes: &mut Vec<String>) -> Placement {
    let n = part.nodes.len();
    let accel = match policy {
        Policy::Greedy => devices.iter().find(|d| d.kind != DeviceKind::Cpu),
        Policy::CpuOnly => None,
    };
    let mut device: Vec<DeviceId> = vec![CPU; n];
    let mut reason: Vec<String> = vec![String::new(); n];
    for (i, node) in part.nodes.iter().enumerate() {
        if let Some(d) = node.materialized {
            device[i] = d;
            continue;
        }
        if node.op.kind() != OpKind::Compute {
            continue;
        }
        (device[i], reason[i]) = match (accel, node.op.accelerator(), node.op.cpu_only_reason()) {
            (_, _, Some(why)) => (CPU, why.to_string()),
            (None, _, _) if policy == Policy::CpuOnly => (CPU, "policy cpu".into()),
            (None, _, _) => (CPU, "no accelerator present".into()),
            (Some(_), None, _) => (CPU, "no accelerator version".into()),
            (Some(a), Some(_), _) => {
                let whole: usize = node.inputs.iter().map(|&u| part.nodes[u].meta.bytes()).sum::<usize>() + node.meta.bytes();
                match budget.of(a) {
                    Some(b) if !node.op.splittable() && whole as u64 > b => {
                        notes.push(format!(
                            "#{} {} needs {} whole, more than the {} budget of {}: runs on the CPU",
                            node.id,
                            node.op.name(),
                            bytes(whole),
                            bytes(b as usize),
                            a.name
                        ));
                        (CPU, "does not fit accelerator memory".into())
                    }
                    _ => (a.id, "accelerator version (greedy)".into()),
                }
            }
        };
    }
    let mut allocations = Vec::new();
    for (i, node) in part.nodes.iter().enumerate() {
        if node.materialized.is_none() && node.op.kind() == OpKind::Alloc {
            let first = consumers[i].iter().copied().find(|&c| part.nodes[c].materialized.is_none());
            let on = first.map_or(CPU, |c| device[c]);
            (device[i], reason[i]) = match first {
                Some(_) if on != CPU && node.op.accelerator().is_none() => (CPU, "created on the host: no accelerator version".into()),
                Some(c) => (on, format!("allocated where its first user #{} runs", part.nodes[c].id)),
                None => (CPU, "allocation with no user: on the host".into()),
            };
            allocations.push(Allocation { node: i, id: node.id, op: node.op.name().to_string(), device: device[i], first_user: first.map(|c| part.nodes[c].id) });
        }
    }
    Placement { device, reason, allocations }
}

//! `threshold`: per op, in order, the accelerator when its estimate plus the copies its
//! arguments need to get there is at most the CPU's estimate (the paper's estimator rule).
//! An argument already on the accelerator (placed there just before, or kept there) and a
//! lazy allocation (made where its first user runs) cost no copy; results coming back are
//! not counted.

use super::{At, Choice, PlacementPolicy, Problem};
use crate::plan::Reason;
use crate::profile::{DeviceId, CPU};

pub(crate) struct Threshold;

impl PlacementPolicy for Threshold {
    fn name(&self) -> &'static str {
        "threshold"
    }
    fn place(&self, p: &Problem) -> Vec<Choice> {
        let Some(accel) = p.accelerator else {
            return p.free.iter().map(|_| (CPU, Reason::NoAcceleratorPresent)).collect();
        };
        // Devices decided so far (free ops not reached yet count as on the CPU).
        let mut device: Vec<DeviceId> = p.nodes.iter().map(|n| if let At::Fixed(d) = n.at { d } else { CPU }).collect();
        p.free
            .iter()
            .map(|&i| {
                let op = &p.nodes[i];
                let mut inputs = op.inputs.clone();
                inputs.sort_unstable();
                inputs.dedup();
                let transfers_s: f64 =
                    inputs.iter().filter(|&&u| !matches!(p.nodes[u].at, At::FollowsFirstUser(_)) && device[u] != accel).map(|&u| p.nodes[u].to_accelerator_s).sum();
                let why = Reason::Estimates { cpu_s: op.cpu_s, accelerator_s: op.accelerator_s, transfers_s };
                let d = if op.accelerator_s + transfers_s <= op.cpu_s { accel } else { CPU };
                device[i] = d;
                (d, why)
            })
            .collect()
    }
}

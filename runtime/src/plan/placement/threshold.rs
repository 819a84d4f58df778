//! `threshold`: per op, in order, the accelerator when its estimate plus the copies its
//! arguments need to get there is at most the CPU's estimate (the paper's estimator rule).
//! An argument already on the accelerator (placed there just before, or kept there) costs no
//! copy; results coming back are not counted.

use std::collections::HashMap;

use super::{Choice, Free, PlacementPolicy};
use crate::plan::Reason;
use crate::profile::{DeviceId, CPU};

pub(crate) struct Threshold;

impl PlacementPolicy for Threshold {
    fn name(&self) -> &'static str {
        "threshold"
    }
    fn place(&self, free: &[Free<'_>]) -> Vec<Choice> {
        let mut placed: HashMap<usize, DeviceId> = HashMap::new();
        free.iter()
            .map(|op| {
                let choice = match op.accelerator {
                    None => (CPU, Reason::NoAcceleratorPresent),
                    Some(_) if !op.fits => (CPU, Reason::DoesNotFit),
                    Some(a) => {
                        let transfers_s: f64 =
                            op.inputs.iter().filter(|i| !i.allocation && i.fixed_on.or_else(|| placed.get(&i.node).copied()) != Some(a.id)).map(|i| i.transfer_s).sum();
                        let why = Reason::Estimates { cpu_s: op.cpu_s, accelerator_s: op.accelerator_s, transfers_s };
                        (if op.accelerator_s + transfers_s <= op.cpu_s { a.id } else { CPU }, why)
                    }
                };
                placed.insert(op.node, choice.0);
                choice
            })
            .collect()
    }
}

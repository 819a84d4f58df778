//! `greedy`: every op with an accelerator version runs on the accelerator (the paper's
//! default). Ops that cannot be cut into pieces and do not fit its memory are not free: they
//! stay on the CPU whatever the policy.

use super::{Choice, PlacementPolicy, Problem};
use crate::plan::Reason;
use crate::profile::CPU;

pub(crate) struct Greedy;

impl PlacementPolicy for Greedy {
    fn name(&self) -> &'static str {
        "greedy"
    }
    fn place(&self, p: &Problem) -> Vec<Choice> {
        p.free.iter().map(|_| p.accelerator.map_or((CPU, Reason::NoAcceleratorPresent), |a| (a, Reason::Policy(self.name())))).collect()
    }
}

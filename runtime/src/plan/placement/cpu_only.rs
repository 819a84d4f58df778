//! `cpu`: everything on the CPU, accelerator or not.

use super::{Choice, PlacementPolicy, Problem};
use crate::plan::Reason;
use crate::profile::CPU;

pub(crate) struct CpuOnly;

impl PlacementPolicy for CpuOnly {
    fn name(&self) -> &'static str {
        "cpu"
    }
    fn place(&self, p: &Problem) -> Vec<Choice> {
        p.free.iter().map(|_| (CPU, Reason::Policy(self.name()))).collect()
    }
}

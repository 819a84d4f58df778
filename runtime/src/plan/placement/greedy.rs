//! `greedy`: every op with an accelerator version runs on the accelerator (the paper's
//! default), unless it cannot be cut into pieces and does not fit its memory.

use super::{Choice, Free, PlacementPolicy};
use crate::plan::Reason;
use crate::profile::CPU;

pub(crate) struct Greedy;

impl PlacementPolicy for Greedy {
    fn name(&self) -> &'static str {
        "greedy"
    }
    fn place(&self, free: &[Free<'_>]) -> Vec<Choice> {
        free.iter()
            .map(|op| match op.accelerator {
                Some(a) if op.fits => (a.id, Reason::Policy(self.name())),
                Some(_) => (CPU, Reason::DoesNotFit),
                None => (CPU, Reason::NoAcceleratorPresent),
            })
            .collect()
    }
}

//! What happened: one event per op and piece, per allocation, transfer and merge. Charts read
//! only this (never the graph).

use std::sync::Arc;
use std::time::Duration;

use crate::plan::Plan;
use crate::profile::DeviceId;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EventKind {
    Alloc,
    Transfer,
    Compute,
    Merge,
}

/// One timed thing the executor did.
#[derive(Clone, Debug)]
pub struct Event {
    /// Which evaluation this belongs to.
    pub eval: u64,
    /// Op name (for transfers, the name of the op whose value moved).
    pub op: Arc<str>,
    /// Graph node id.
    pub node: u64,
    /// Cell the node was created in.
    pub cell: u64,
    pub device: DeviceId,
    /// For transfers: the device the bytes went to.
    pub to: Option<DeviceId>,
    pub piece: u32,
    pub kind: EventKind,
    /// Since the session started.
    pub start: Duration,
    pub end: Duration,
    /// Bytes produced (compute, alloc, merge) or moved (transfer).
    pub bytes: u64,
}

/// One evaluation's record.
#[derive(Clone, Debug)]
pub struct EvalTrace {
    pub eval: u64,
    /// The cell that asked for the evaluation.
    pub cell: u64,
    pub start: Duration,
    pub end: Duration,
    pub pieces: usize,
    pub events: Vec<Event>,
    /// The plans that ran, oldest first: the planner's, then one more each time the executor
    /// re-planned a stage (its device ran out of memory; the new plan's last note says so).
    pub plans: Vec<Arc<Plan>>,
}

impl EvalTrace {
    /// The plan as it finally ran.
    pub fn plan(&self) -> Option<&Plan> {
        self.plans.last().map(|p| &**p)
    }
    /// That plan as text (empty when there is none).
    pub fn plan_text(&self) -> String {
        self.plan().map(|p| p.to_string()).unwrap_or_default()
    }
}

/// The session's timeline: the most recent evaluations, bounded so a long notebook does not
/// grow without limit.
#[derive(Default, Debug)]
pub struct Trace {
    evals: std::collections::VecDeque<EvalTrace>,
    events: usize,
}

/// Evaluations kept; older ones are dropped first.
const MAX_EVENTS: usize = 2_000_000;

impl Trace {
    pub fn push(&mut self, e: EvalTrace) {
        self.events += e.events.len();
        self.evals.push_back(e);
        while self.events > MAX_EVENTS && self.evals.len() > 1 {
            let old = self.evals.pop_front().expect("non-empty");
            self.events -= old.events.len();
        }
    }
    pub fn evals(&self) -> impl Iterator<Item = &EvalTrace> {
        self.evals.iter()
    }
    pub fn last(&self) -> Option<&EvalTrace> {
        self.evals.back()
    }
    pub fn clear(&mut self) {
        self.evals.clear();
        self.events = 0;
    }
}

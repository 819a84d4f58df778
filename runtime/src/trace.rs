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
    /// Each stage that ran (and the copies back at the end): the cost model's prediction
    /// beside the time it took.
    pub stages: Vec<StageTime>,
}

/// One stage of an evaluation, predicted and measured: what `:bach cost` and the
/// predicted-vs-actual chart show, so a user sees when the cost model is off.
#[derive(Clone, Debug, PartialEq)]
pub struct StageTime {
    /// The plan's stage; `None` for the copies of results to the host after the last stage.
    pub stage: Option<usize>,
    /// Where it ran (after any retry).
    pub device: DeviceId,
    /// Names of its ops in order (empty for the final copies).
    pub ops: Vec<String>,
    /// Elements of its longest value (rows times row length), for labels.
    pub elements: usize,
    /// The cost model's seconds for its ops on that device and the copies it needed.
    pub predicted_s: f64,
    /// Since the session started: from the stage's first fetch to its last merge.
    pub start: Duration,
    pub end: Duration,
}

impl StageTime {
    pub fn actual_s(&self) -> f64 {
        (self.end - self.start).as_secs_f64()
    }
    /// Actual over predicted: above 1 the model was optimistic, below 1 pessimistic.
    pub fn ratio(&self) -> f64 {
        self.actual_s() / self.predicted_s.max(1e-12)
    }
    /// "stage 0 (div, log2, ... 32 ops)" or "copies to host".
    pub fn label(&self) -> String {
        match self.stage {
            None => "copies to host".into(),
            Some(s) => {
                let shown: Vec<&str> = self.ops.iter().take(3).map(String::as_str).collect();
                let more = if self.ops.len() > 3 { format!(", ... {} ops", self.ops.len()) } else { String::new() };
                format!("stage {s} ({}{more})", shown.join(", "))
            }
        }
    }
}

impl EvalTrace {
    /// The plan as it finally ran.
    pub fn plan(&self) -> Option<&Plan> {
        self.plans.last().map(|p| &**p)
    }
    /// The cost model's seconds for the stages that ran.
    pub fn predicted_s(&self) -> f64 {
        self.stages.iter().map(|s| s.predicted_s).sum()
    }
    /// Seconds from the evaluation's start to its end.
    pub fn actual_s(&self) -> f64 {
        (self.end - self.start).as_secs_f64()
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

//! What happened: one event per op and piece, per allocation, transfer and merge. Charts read
//! only this (never the graph).

use std::ops::Range;
use std::sync::Arc;
use std::time::Duration;

use crate::annotation::OpKind;
use crate::cost::CostModel;
use crate::plan::{PartNode, Plan};
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

/// The executor's events, each of one node of the part it runs, over `time` (since the
/// session started).
impl Event {
    /// `bytes` of `node`'s value copied from `from` to `to`: the rows of piece `piece`, or
    /// the whole value (piece 0).
    pub(crate) fn transfer(eval: u64, node: &PartNode, from: DeviceId, to: DeviceId, piece: u32, time: Range<Duration>, bytes: u64) -> Event {
        Event {
            eval,
            op: node.op.name().into(),
            node: node.id,
            cell: node.cell,
            device: from,
            to: Some(to),
            piece,
            kind: EventKind::Transfer,
            start: time.start,
            end: time.end,
            bytes,
        }
    }

    /// `node`'s op, named `op` (a name its events share), run over piece `piece` on `device`:
    /// an allocation or a compute as the op is, producing `bytes`.
    pub(crate) fn op(eval: u64, op: Arc<str>, node: &PartNode, device: DeviceId, piece: u32, time: Range<Duration>, bytes: u64) -> Event {
        let kind = if node.op.kind() == OpKind::Alloc { EventKind::Alloc } else { EventKind::Compute };
        Event { eval, op, node: node.id, cell: node.cell, device, to: None, piece, kind, start: time.start, end: time.end, bytes }
    }

    /// The pieces of `node`'s result, named `op`, merged on `device` into `bytes`.
    pub(crate) fn merge(eval: u64, op: Arc<str>, node: &PartNode, device: DeviceId, time: Range<Duration>, bytes: u64) -> Event {
        Event { eval, op, node: node.id, cell: node.cell, device, to: None, piece: 0, kind: EventKind::Merge, start: time.start, end: time.end, bytes }
    }
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
    /// Why the value was asked for, when code said (see [`because`]): "ndarray code
    /// (iteration, indexing, a view, a closure) needs its values on the host".
    pub reason: Option<String>,
}

thread_local! {
    static REASON: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Run `f`, recording `reason` on each evaluation it starts on this thread (the trace,
/// `:bach trace` and `:bach explain` show it): what made a lazy value compute there.
pub fn because<T>(reason: String, f: impl FnOnce() -> T) -> T {
    let before = REASON.with(|r| r.replace(Some(reason)));
    struct Restore(Option<String>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let before = self.0.take();
            REASON.with(|r| *r.borrow_mut() = before);
        }
    }
    let _restore = Restore(before);
    f()
}

/// The reason [`because`] set on this thread, if any.
pub(crate) fn current_reason() -> Option<String> {
    REASON.with(|r| r.borrow().clone())
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
    /// What `plan` is predicted to do, as a trace a timeline chart draws (labelled a
    /// prediction by the caller): stages one after the other, each op over the whole value for
    /// its estimate on its device, whole copies before their stage, copies streamed piece by
    /// piece beside the stage's compute (one after another in each direction), results
    /// copied back at the end; `stages` holds each
    /// stage's prediction (measured and predicted alike). Nothing runs.
    pub fn predicted(plan: &Plan, cost: &CostModel, cell: u64) -> EvalTrace {
        let mut events = Vec::new();
        let mut stages = Vec::new();
        let name_of = |id: u64| -> Arc<str> {
            let name = plan.step_of(id).map(|s| s.op.as_str()).or_else(|| plan.inputs.iter().find(|i| i.id == id).map(|i| i.op.as_str()));
            Arc::from(name.unwrap_or("value"))
        };
        let cell_of = |id: u64| plan.step_of(id).map(|s| s.cell).or_else(|| plan.inputs.iter().find(|i| i.id == id).map(|i| i.cell)).unwrap_or(cell);
        let copy = |t: &crate::plan::Transfer, start: f64| -> (Event, f64) {
            let secs = plan.transfer_seconds(t, cost);
            let e = Event {
                eval: 0,
                op: name_of(t.id),
                node: t.id,
                cell: cell_of(t.id),
                device: t.from,
                to: Some(t.to),
                piece: 0,
                kind: EventKind::Transfer,
                start: Duration::from_secs_f64(start),
                end: Duration::from_secs_f64(start + secs),
                bytes: t.bytes as u64,
            };
            (e, secs)
        };
        let mut t = 0.0;
        for (s, stage) in plan.stages.iter().enumerate() {
            let begin = t;
            for tr in plan.transfers.iter().filter(|tr| tr.stage == Some(s) && !tr.streamed) {
                let (e, secs) = copy(tr, t);
                events.push(e);
                t += secs;
            }
            // Streamed copies share their direction's link: one after another, beside compute.
            let (mut h2d, mut d2h) = (t, t);
            for tr in plan.transfers.iter().filter(|tr| tr.stage == Some(s) && tr.streamed) {
                let at = if tr.to == crate::profile::CPU { &mut d2h } else { &mut h2d };
                let (e, secs) = copy(tr, *at);
                events.push(e);
                *at += secs;
            }
            let streamed_end = h2d.max(d2h);
            for &st in &stage.steps {
                let step = &plan.steps[st];
                let secs = if step.estimate_s.is_finite() { step.estimate_s / plan.stage_parallel_pieces(s) } else { 0.0 };
                events.push(Event {
                    eval: 0,
                    op: Arc::from(step.op.as_str()),
                    node: step.id,
                    cell: step.cell,
                    device: stage.device,
                    to: None,
                    piece: 0,
                    kind: EventKind::Compute,
                    start: Duration::from_secs_f64(t),
                    end: Duration::from_secs_f64(t + secs),
                    bytes: step.meta.bytes() as u64,
                });
                t += secs;
            }
            t += plan.stage_overhead_seconds(s, cost);
            t = t.max(streamed_end);
            let predicted_s = t - begin;
            stages.push(StageTime {
                stage: Some(s),
                device: stage.device,
                ops: stage.steps.iter().map(|&st| plan.steps[st].op.clone()).collect(),
                elements: stage.steps.iter().map(|&st| plan.steps[st].meta.len()).max().unwrap_or(0),
                predicted_s,
                start: Duration::from_secs_f64(begin),
                end: Duration::from_secs_f64(t),
            });
        }
        let begin = t;
        for tr in plan.transfers.iter().filter(|tr| tr.stage.is_none()) {
            let (e, secs) = copy(tr, t);
            events.push(e);
            t += secs;
        }
        if t > begin {
            stages.push(StageTime {
                stage: None,
                device: crate::profile::CPU,
                ops: vec![],
                elements: 0,
                predicted_s: t - begin,
                start: Duration::from_secs_f64(begin),
                end: Duration::from_secs_f64(t),
            });
        }
        EvalTrace {
            eval: 0,
            cell,
            start: Duration::ZERO,
            end: Duration::from_secs_f64(t),
            pieces: plan.total_pieces(),
            events,
            plans: vec![Arc::new(plan.clone())],
            stages,
            reason: None,
        }
    }

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
/// grow without limit (the last [`Trace::keep`] evaluations, and at most [`MAX_EVENTS`]
/// events), plus running totals over every evaluation since the session started.
#[derive(Debug)]
pub struct Trace {
    evals: std::collections::VecDeque<std::sync::Arc<EvalTrace>>,
    events: usize,
    keep: usize,
    totals: TraceTotals,
}

/// Every evaluation of the session, kept or not.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct TraceTotals {
    pub evals: u64,
    pub events: u64,
    pub pieces: u64,
    /// Wall time of all evaluations.
    pub seconds: f64,
    /// Evaluations no longer kept.
    pub dropped: u64,
}

/// Evaluations kept by default (`:bach trace keep N` changes it).
pub const KEEP_EVALS: usize = 500;
/// Events kept at most, whatever `keep` says (112 bytes each: 5.6 MB at the bound). One
/// evaluation of a long chain over many pieces records tens of thousands (400 ops over 2^23
/// elements: 30,000-65,000), so the count of evaluations alone does not bound the trace; the
/// newest evaluation is kept whole whatever its size.
pub const MAX_EVENTS: usize = 50_000;

impl Default for Trace {
    fn default() -> Self {
        Trace { evals: Default::default(), events: 0, keep: KEEP_EVALS, totals: TraceTotals::default() }
    }
}

impl Trace {
    /// Records an evaluation; returns it as the trace holds it (shared: the caller shows it,
    /// the trace keeps it while it is among the last kept).
    pub fn push(&mut self, mut e: EvalTrace) -> std::sync::Arc<EvalTrace> {
        // Its events are all in: no room for more (a vector grown by doubling holds up to
        // twice what it needs, 14 MB more for an interrupted evaluation of 65,000 events).
        e.events.shrink_to_fit();
        self.totals.evals += 1;
        self.totals.events += e.events.len() as u64;
        self.totals.pieces += e.pieces as u64;
        self.totals.seconds += e.end.saturating_sub(e.start).as_secs_f64();
        self.events += e.events.len();
        let e = std::sync::Arc::new(e);
        self.evals.push_back(e.clone());
        self.trim();
        e
    }
    fn trim(&mut self) {
        while self.evals.len() > 1 && (self.events > MAX_EVENTS || self.evals.len() > self.keep) {
            let old = self.evals.pop_front().expect("non-empty");
            self.events -= old.events.len();
            self.totals.dropped += 1;
        }
    }
    /// Keep the last `n` evaluations (at least 1).
    pub fn set_keep(&mut self, n: usize) {
        self.keep = n.max(1);
        self.trim();
    }
    pub fn keep(&self) -> usize {
        self.keep
    }
    pub fn totals(&self) -> TraceTotals {
        self.totals
    }
    /// Events held by the kept evaluations.
    pub fn events_kept(&self) -> usize {
        self.events
    }
    pub fn evals(&self) -> impl DoubleEndedIterator<Item = &EvalTrace> {
        self.evals.iter().map(|e| &**e)
    }
    pub fn last(&self) -> Option<&EvalTrace> {
        self.evals.back().map(|e| &**e)
    }
    pub fn clear(&mut self) {
        self.evals.clear();
        self.events = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(n: u64) -> EvalTrace {
        let at = Duration::from_millis(n);
        EvalTrace { eval: n, cell: n, start: at, end: at + Duration::from_millis(2), pieces: 3, events: vec![], plans: vec![], stages: vec![], reason: None }
    }

    #[test]
    fn the_trace_keeps_the_last_evaluations_and_totals_of_all() {
        let mut t = Trace::default();
        t.set_keep(10);
        for n in 1..=25 {
            t.push(eval(n));
        }
        assert_eq!(t.evals().count(), 10);
        assert_eq!(t.evals().next().unwrap().eval, 16, "the oldest go first");
        let totals = t.totals();
        assert_eq!((totals.evals, totals.pieces, totals.dropped), (25, 75, 15));
        assert!((totals.seconds - 0.050).abs() < 1e-9);
        t.set_keep(0);
        assert_eq!(t.evals().count(), 1, "at least the last is kept");
        assert_eq!(t.last().unwrap().eval, 25);
    }

    #[test]
    fn the_trace_keeps_at_most_max_events_but_always_the_last_evaluation() {
        let event = Event {
            eval: 0,
            op: "exp".into(),
            node: 0,
            cell: 0,
            device: crate::profile::CPU,
            to: None,
            piece: 0,
            kind: EventKind::Compute,
            start: Duration::ZERO,
            end: Duration::ZERO,
            bytes: 8,
        };
        let with_events = |n: u64, count: usize| {
            // Recorded as an evaluation records them: pushed one by one, with room to spare.
            let mut events = Vec::new();
            events.resize(count, event.clone());
            events.push(event.clone());
            events.pop();
            EvalTrace { events, ..eval(n) }
        };
        let mut t = Trace::default();
        for n in 1..=5 {
            t.push(with_events(n, MAX_EVENTS / 3));
        }
        assert!(t.events_kept() <= MAX_EVENTS && t.evals().count() == 3, "{} events in {} evaluations", t.events_kept(), t.evals().count());
        assert_eq!(t.totals().events, 5 * (MAX_EVENTS / 3) as u64);
        t.push(with_events(6, MAX_EVENTS + 1));
        assert_eq!((t.evals().count(), t.events_kept()), (1, MAX_EVENTS + 1), "the newest stays whole");
        // MAX_EVENTS's memory as its doc says it (and no spare room in a kept evaluation).
        assert!(std::mem::size_of::<Event>() <= 112, "{}", std::mem::size_of::<Event>());
        let newest = t.evals().last().expect("kept");
        assert_eq!(newest.events.capacity(), newest.events.len());
    }
}

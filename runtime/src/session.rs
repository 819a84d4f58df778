//! The process-wide session: one lazy task graph for the whole notebook, shared by every cell.
//!
//! Annotated calls add nodes; nodes record op, arguments, result meta and the cell they came
//! from. A node is removed when no handle points at it and no pending node needs it. A node
//! that has been evaluated keeps its value and lets go of its inputs.

use std::cell::RefCell;
use std::collections::HashSet;
use std::fmt;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};
use std::time::Instant;

use petgraph::stable_graph::{NodeIndex, StableDiGraph};
use petgraph::Direction;

use crate::annotation::{source_annotation, Annotation, OpKind};
use crate::cost::{CostModel, MemoryKind};
use crate::device::{DeviceProfile, CPU};
use crate::devices::Devices;
use crate::error::{BachError, Result};
use crate::exec;
use crate::plan::{self, Forced, GraphPart, PartNode, Plan, Policy};
use crate::profile::DeviceKind;
use crate::split::SplitRef;
use crate::trace::{EvalTrace, Trace};
use crate::value::{Meta, Value};

/// What [`Session::evaluate`] gives: the targets' values, on the host, and the record of the
/// evaluation that computed them (the one the trace keeps; `None` when every value was
/// computed already and nothing ran). Display draws the record it is given rather than
/// looking for the last one in the shared trace.
#[derive(Debug)]
pub struct Evaluated {
    pub values: Vec<Value>,
    pub record: Option<Arc<EvalTrace>>,
}

/// One node of the task graph.
pub struct Node {
    /// Unique for the session's life (graph indices are reused after removal).
    pub id: u64,
    pub op: Arc<Annotation>,
    /// Pending inputs, in argument order; emptied once the node holds its value.
    inputs: Vec<NodeIndex>,
    /// Ids of the arguments, kept for display after the inputs are released.
    pub arg_ids: Vec<u64>,
    pub arg_splits: Vec<SplitRef>,
    pub meta: Meta,
    pub cell: u64,
    pub value: Option<Value>,
    handles: usize,
    /// Pending nodes that read this one (kept as a count: walking the adjacency list of a
    /// value read by thousands of nodes would make collection quadratic).
    consumers: usize,
    /// Asked for a device by the value (`.on(...)`) or by its cell (`:bach cell gpu`).
    pub forced: Option<Forced>,
}

/// A node as seen from outside the session (for display and tests).
#[derive(Clone, Debug, PartialEq)]
pub struct NodeInfo {
    pub id: u64,
    pub op: String,
    pub args: Vec<u64>,
    pub meta: Meta,
    pub cell: u64,
    pub evaluated: bool,
    /// Where its value lives: `None` while pending, [`CPU`] in host memory, else the device
    /// holding it.
    pub location: Option<crate::device::DeviceId>,
}

#[derive(Default)]
struct Graph {
    g: StableDiGraph<Node, u32>,
    next_id: u64,
}

impl Graph {
    fn node(&self, idx: NodeIndex, id: u64) -> Option<&Node> {
        self.g.node_weight(idx).filter(|n| n.id == id)
    }

    /// Remove `start` and then every input that it was the last reason to keep.
    fn collect(&mut self, start: NodeIndex) {
        let mut stack = vec![start];
        while let Some(idx) = stack.pop() {
            let Some(node) = self.g.node_weight(idx) else { continue };
            if node.handles == 0 && node.consumers == 0 {
                let node = self.g.remove_node(idx).expect("present");
                for &i in &node.inputs {
                    self.g[i].consumers -= 1;
                }
                stack.extend(node.inputs);
            }
        }
    }

    /// The node now holds its value: drop its edges to its inputs and collect them.
    fn materialize(&mut self, idx: NodeIndex, value: Value) {
        let node = &mut self.g[idx];
        node.value = Some(value);
        let inputs = std::mem::take(&mut node.inputs);
        let edges: Vec<_> = self.g.edges_directed(idx, Direction::Incoming).map(|e| petgraph::visit::EdgeRef::id(&e)).collect();
        for e in edges {
            self.g.remove_edge(e);
        }
        for &i in &inputs {
            self.g[i].consumers -= 1;
        }
        for i in inputs {
            self.collect(i);
        }
    }
}

/// What an evaluation needs from the graph: the part, the values at its boundary, and each
/// part node's graph index and id (to store results back).
type Extract = (GraphPart, Vec<Option<Value>>, Vec<(NodeIndex, u64)>);

/// What a session holds, from [`Session::memory`].
#[derive(Clone, Debug, Default)]
pub struct MemoryReport {
    /// Graph nodes alive (each is reachable from a handle or a pending node).
    pub nodes: usize,
    /// Of them, nodes not computed yet.
    pub pending: usize,
    /// Bytes of the values cached on nodes in host memory (arrays shared with a handle
    /// counted here too).
    pub host_bytes: usize,
    /// Bytes of values cached on each accelerator (by its [`crate::devices::Devices::label`]).
    pub device_bytes: Vec<(String, usize)>,
    /// Evaluations the trace keeps, their events, and how many it keeps at most.
    pub trace_kept: usize,
    pub trace_events: usize,
    pub trace_keep: usize,
    pub trace_totals: crate::trace::TraceTotals,
}

/// Settings a user changes from the notebook.
#[derive(Clone, Debug)]
pub struct Config {
    pub policy: Policy,
    pub cost: CostModel,
    /// Cap on the accelerator memory the planner may use (bytes).
    pub memory_cap: Option<u64>,
    /// Ops over host values of at most this many elements run at once on the CPU, outside
    /// the graph (the `bach` library's arrays; 0 turns it off). `BACH_EAGER_MAX` sets it;
    /// 4096 by default.
    pub eager_max_elements: usize,
}

/// `BACH_EAGER_MAX`, else 4096 ([`crate::knobs::Knobs::eager_max`], read each time a session is made).
fn eager_max_from_env() -> usize {
    crate::knobs::Knobs::from_env().eager_max
}

/// A Bach session: the graph, the devices, the settings and the timeline.
pub struct Session {
    graph: Mutex<Graph>,
    cell: AtomicU64,
    interrupt: AtomicBool,
    evals: AtomicU64,
    devices: Devices,
    config: RwLock<Config>,
    /// The number of the last evaluation before the cost model last changed (see
    /// [`Session::cost_model_since`]).
    cost_since: AtomicU64,
    /// The device the current cell asked for (`:bach cell cpu|gpu`), until the next cell.
    cell_forced: Mutex<Option<Forced>>,
    /// `eager_max_elements()`, kept up to date as the config and the cell's pinning change
    /// (read on every op of the `bach` library's arrays).
    eager_max: AtomicUsize,
    trace: Mutex<Trace>,
    epoch: Instant,
}

/// The process-wide session, made (devices detected, cost model loaded) on first use: a kernel
/// waiting in standby has not touched a device.
static GLOBAL: OnceLock<Arc<Session>> = OnceLock::new();
/// The notebook's cell number, kept for the process-wide session until it is made.
static GLOBAL_CELL: AtomicU64 = AtomicU64::new(0);

thread_local! {
    static CURRENT: RefCell<Option<Arc<Session>>> = const { RefCell::new(None) };
}

/// The session new values are created in: the process-wide one, unless [`with_session`]
/// says otherwise on this thread.
pub fn current() -> Arc<Session> {
    CURRENT.with(|c| c.borrow().clone()).unwrap_or_else(global)
}

/// The session a host value belongs to (a node made of it later goes there), kept at no
/// cost where it is the process-wide one: no reference count to change. The small-array
/// path makes one for each op's result.
#[derive(Clone, Default)]
pub struct Home(Option<Arc<Session>>);

impl Home {
    /// The session new values are created in now ([`current`]).
    pub fn current() -> Home {
        Home(CURRENT.with(|c| c.borrow().clone()))
    }
    /// The most elements the current session computes at once
    /// ([`Session::eager_max_elements`]), read with no reference taken: what the small-array
    /// path checks for each op's operands.
    pub fn current_eager_max() -> usize {
        CURRENT.with(|c| c.borrow().as_ref().map(|s| s.eager_max_elements())).unwrap_or_else(|| global_ref().eager_max_elements())
    }
    /// `session` as a home.
    pub fn of(session: &Arc<Session>) -> Home {
        Home(Some(session.clone()))
    }
    /// The session.
    pub fn session(&self) -> &Arc<Session> {
        match &self.0 {
            Some(s) => s,
            None => global_ref(),
        }
    }
}

/// The process-wide session (the notebook's).
pub fn global() -> Arc<Session> {
    global_ref().clone()
}

/// The process-wide session, borrowed for the life of the process (made on first use).
pub fn global_ref() -> &'static Arc<Session> {
    GLOBAL.get_or_init(|| {
        let s = Session::new();
        s.set_cell(GLOBAL_CELL.load(Ordering::SeqCst));
        s
    })
}

/// The process-wide session if something has made it (a signal handler may call this: it
/// is one atomic load).
pub fn global_if_made() -> Option<&'static Arc<Session>> {
    GLOBAL.get()
}

/// Record the notebook's cell number on the process-wide session without making it.
pub fn set_global_cell(n: u64) {
    GLOBAL_CELL.store(n, Ordering::SeqCst);
    if let Some(s) = GLOBAL.get() {
        s.set_cell(n);
    }
}

/// Run `f` with `session` as the current session of this thread (isolated tests, tools).
pub fn with_session<R>(session: &Arc<Session>, f: impl FnOnce() -> R) -> R {
    let previous = CURRENT.with(|c| c.replace(Some(session.clone())));
    struct Restore(Option<Arc<Session>>);
    impl Drop for Restore {
        fn drop(&mut self) {
            let prev = self.0.take();
            CURRENT.with(|c| *c.borrow_mut() = prev);
        }
    }
    let _restore = Restore(previous);
    f()
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic elsewhere never makes the session unusable.
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// Calling an op is adding a node to the session its arguments belong to.
impl Annotation {
    /// Add a node calling this op on `args` to their session's graph. Shapes and dtypes are
    /// checked now: a mismatch is an error here, not at evaluation.
    pub fn call(self: &Arc<Self>, args: &[&Lazy]) -> Result<Lazy> {
        let first = args.first().ok_or_else(|| BachError::invalid(&self.name, "an op needs at least one argument (use oa_alloc for allocations)"))?;
        first.session().add_node(self, args)
    }
}

impl Session {
    /// A session on this machine's devices.
    pub fn new() -> Arc<Session> {
        Self::with_devices(Devices::detect())
    }

    /// A session on the given devices (a device plugged in by hand, tests).
    pub fn with_devices(devices: Devices) -> Arc<Session> {
        crate::fresh::keep_freed_memory();
        let (cost, _) = CostModel::for_this_machine(&devices.profiles());
        let eager_max = eager_max_from_env();
        Arc::new(Session {
            graph: Mutex::new(Graph::default()),
            cell: AtomicU64::new(0),
            interrupt: AtomicBool::new(false),
            evals: AtomicU64::new(0),
            devices,
            config: RwLock::new(Config { policy: Policy::Optimal, cost, memory_cap: None, eager_max_elements: eager_max }),
            cost_since: AtomicU64::new(0),
            cell_forced: Mutex::new(None),
            eager_max: AtomicUsize::new(eager_max),
            trace: Mutex::new(Trace::default()),
            epoch: Instant::now(),
        })
    }

    /// The kernel calls this before each cell: nodes created from now on belong to cell `n`.
    /// It also clears an interrupt left over from the previous cell.
    pub fn set_cell(&self, n: u64) {
        if self.cell.swap(n, Ordering::SeqCst) != n {
            *lock(&self.cell_forced) = None;
            self.update_eager_max();
        }
        self.interrupt.store(false, Ordering::SeqCst);
    }
    pub fn cell(&self) -> u64 {
        self.cell.load(Ordering::SeqCst)
    }

    /// Ops the current cell creates from now on run on the accelerator (`Some(true)`), the
    /// CPU (`Some(false)`), or where the policy puts them (`None`); the next cell resets it.
    pub fn force_cell(&self, accelerator: Option<bool>) {
        *lock(&self.cell_forced) = accelerator.map(|accelerator| Forced { accelerator, device: None, by_cell: true });
        self.update_eager_max();
    }

    /// Ops the current cell creates from now on run on accelerator `device` (a number
    /// `:bach devices` lists), not spread over the others; the next cell resets it. A number
    /// that is not one of the session's accelerators leaves them on the CPU, and plans say why.
    pub fn force_cell_device(&self, device: crate::profile::DeviceId) {
        *lock(&self.cell_forced) = Some(Forced { accelerator: true, device: Some(device), by_cell: true });
        self.update_eager_max();
    }

    /// The cost model this session started with (what `:bach cost reset` restores): this
    /// machine's calibrated profile when `bach::calibrate()` saved one, else the defaults.
    pub fn default_cost(&self) -> CostModel {
        CostModel::for_this_machine(&self.devices.profiles()).0
    }

    /// Ask a running evaluation to stop at the next piece boundary.
    pub fn interrupt(&self) {
        self.interrupt.store(true, Ordering::SeqCst);
    }

    pub fn devices(&self) -> &Devices {
        &self.devices
    }
    pub fn config(&self) -> Config {
        self.config.read().unwrap_or_else(|p| p.into_inner()).clone()
    }
    /// Change the settings. A change of the cost model is stamped here (whoever changes it:
    /// a magic, the panel, a calibration), so that later residuals are judged as the new
    /// model's ([`Session::cost_model_since`]).
    pub fn update_config(&self, f: impl FnOnce(&mut Config)) {
        let cost_changed = {
            let mut config = self.config.write().unwrap_or_else(|p| p.into_inner());
            let before = config.cost.clone();
            f(&mut config);
            config.cost != before
        };
        if cost_changed {
            let last = self.trace().last().map_or(0, |e| e.eval);
            self.cost_since.store(last, Ordering::SeqCst);
        }
        self.update_eager_max();
    }
    /// The number of the last evaluation planned before the cost model last changed (0 while
    /// it never did): `:bach cost` judges the model by the evaluations after it.
    pub fn cost_model_since(&self) -> u64 {
        self.cost_since.load(Ordering::SeqCst)
    }
    pub fn trace(&self) -> MutexGuard<'_, Trace> {
        lock(&self.trace)
    }

    /// What the session holds: graph nodes, the bytes of the values cached on them (host and
    /// each device), and the trace (`:bach memory`).
    pub fn memory(&self) -> MemoryReport {
        let mut r = MemoryReport::default();
        {
            let g = lock(&self.graph);
            for n in g.g.node_weights() {
                r.nodes += 1;
                match &n.value {
                    None => r.pending += 1,
                    Some(Value::Device(d)) => {
                        let name = self.devices.label(d.device);
                        match r.device_bytes.iter_mut().find(|(n, _)| *n == name) {
                            Some(e) => e.1 += d.meta.bytes(),
                            None => r.device_bytes.push((name, d.meta.bytes())),
                        }
                    }
                    Some(v) => r.host_bytes += v.bytes(),
                }
            }
        }
        let t = self.trace();
        (r.trace_kept, r.trace_events, r.trace_keep, r.trace_totals) = (t.evals().count(), t.events_kept(), t.keep(), t.totals());
        r
    }

    /// Number of nodes alive in the graph.
    pub fn node_count(&self) -> usize {
        lock(&self.graph).g.node_count()
    }
    /// Every live node, oldest first.
    pub fn nodes(&self) -> Vec<NodeInfo> {
        let g = lock(&self.graph);
        let mut v: Vec<NodeInfo> =
            g.g.node_weights()
                .map(|n| NodeInfo {
                    id: n.id,
                    op: n.op.name().to_string(),
                    args: n.arg_ids.clone(),
                    meta: n.meta.clone(),
                    cell: n.cell,
                    evaluated: n.value.is_some(),
                    location: n.value.as_ref().map(|v| v.device().unwrap_or(CPU)),
                })
                .collect();
        v.sort_by_key(|n| n.id);
        v
    }

    fn insert(self: &Arc<Self>, op: &Arc<Annotation>, inputs: &[&Lazy], meta: Meta, arg_splits: Vec<SplitRef>, value: Option<Value>) -> Lazy {
        let mut g = lock(&self.graph);
        let id = g.next_id;
        g.next_id += 1;
        let input_idx: Vec<NodeIndex> = inputs.iter().map(|l| l.inner.node).collect();
        let idx = g.g.add_node(Node {
            id,
            op: op.clone(),
            inputs: input_idx.clone(),
            arg_ids: inputs.iter().map(|l| l.inner.id).collect(),
            arg_splits,
            meta: meta.clone(),
            cell: self.cell(),
            forced: if value.is_none() && op.kind() == OpKind::Compute { *lock(&self.cell_forced) } else { None },
            value,
            handles: 1,
            consumers: 0,
        });
        for (pos, i) in input_idx.into_iter().enumerate() {
            g.g.add_edge(i, idx, pos as u32);
            g.g[i].consumers += 1;
        }
        Lazy { inner: Arc::new(LazyInner { session: self.clone(), node: idx, id, meta }) }
    }

    /// Add a node calling `op` on `args`. Checks shapes, dtypes and sessions now.
    pub fn add_node(self: &Arc<Self>, op: &Arc<Annotation>, args: &[&Lazy]) -> Result<Lazy> {
        if let Some(other) = args.iter().find(|a| !Arc::ptr_eq(&a.inner.session, self)) {
            let _ = other;
            return Err(BachError::SessionMismatch { op: op.name().to_string() });
        }
        let metas: Vec<Meta> = args.iter().map(|a| a.meta().clone()).collect();
        let meta = op.result_meta(&metas)?;
        let splits = op.resolve_splits(&metas, &meta);
        let sizes: HashSet<usize> = splits.iter().zip(&metas).filter_map(|(s, m)| if s.splittable() { s.size(m) } else { None }).collect();
        if sizes.len() > 1 {
            return Err(BachError::shape(op.name(), format!("arguments split into pieces disagree on their length: {:?}", metas.iter().map(|m| &m.shape).collect::<Vec<_>>())));
        }
        Ok(self.insert(op, args, meta, splits, None))
    }

    /// A value handed in by the user (it lives on the CPU and is already evaluated).
    pub fn source(self: &Arc<Self>, value: Value, name: &str) -> Lazy {
        let meta = value.meta();
        self.insert(&source_annotation(name), &[], meta, vec![], Some(value))
    }

    /// A stand-in for a host array of `meta` that is not here: plans treat it as a host value
    /// (so a plan can be made for sizes this machine cannot hold), evaluating what reads it
    /// is an error.
    pub fn placeholder(self: &Arc<Self>, meta: Meta, name: &str) -> Lazy {
        self.insert(&source_annotation(name), &[], meta, vec![], None)
    }

    /// A lazy allocation of `meta`, created where its first user runs.
    pub fn alloc(self: &Arc<Self>, op: &Arc<Annotation>, meta: Meta) -> Result<Lazy> {
        if op.kind() != OpKind::Alloc {
            return Err(BachError::invalid(op.name(), "not an allocation (use oa_alloc)"));
        }
        Ok(self.insert(op, &[], meta, vec![], None))
    }

    fn release(&self, node: NodeIndex, id: u64) {
        let mut g = lock(&self.graph);
        let Some(n) = g.g.node_weight_mut(node).filter(|n| n.id == id) else { return };
        n.handles -= 1;
        g.collect(node);
    }

    /// The part of the graph that `targets` need and that is not evaluated yet, in
    /// topological order, with the values already computed at its boundary.
    fn extract(&self, targets: &[&Lazy], keep_on_device: bool) -> Result<Extract> {
        for d in self.devices.all() {
            d.before_planning();
        }
        let g = lock(&self.graph);
        let mut order: Vec<NodeIndex> = Vec::new();
        let mut pos: std::collections::HashMap<NodeIndex, usize> = Default::default();
        // Iterative post-order DFS over inputs, stopping at evaluated nodes.
        for t in targets {
            if !std::ptr::eq(Arc::as_ptr(&t.inner.session), self) {
                return Err(BachError::SessionMismatch { op: "evaluate".into() });
            }
            let root = t.inner.node;
            if g.node(root, t.inner.id).is_none() || pos.contains_key(&root) {
                continue;
            }
            let mut stack = vec![(root, false)];
            while let Some((idx, done)) = stack.pop() {
                if done {
                    if let std::collections::hash_map::Entry::Vacant(e) = pos.entry(idx) {
                        e.insert(order.len());
                        order.push(idx);
                    }
                    continue;
                }
                if pos.contains_key(&idx) {
                    continue;
                }
                stack.push((idx, true));
                let n = &g.g[idx];
                if n.value.is_none() {
                    for &i in n.inputs.iter().rev() {
                        if !pos.contains_key(&i) {
                            stack.push((i, false));
                        }
                    }
                }
            }
        }
        let target_set: HashSet<NodeIndex> = targets.iter().map(|t| t.inner.node).collect();
        let mut nodes = Vec::with_capacity(order.len());
        let mut values = Vec::with_capacity(order.len());
        let mut keys = Vec::with_capacity(order.len());
        for &idx in &order {
            let n = &g.g[idx];
            nodes.push(PartNode {
                id: n.id,
                op: n.op.clone(),
                inputs: if n.value.is_some() { vec![] } else { n.inputs.iter().map(|i| pos[i]).collect() },
                arg_splits: n.arg_splits.clone(),
                meta: n.meta.clone(),
                cell: n.cell,
                // A source without a value is a placeholder: a host array that is not here.
                materialized: n.value.as_ref().map(|v| v.device().unwrap_or(CPU)).or((n.op.kind() == OpKind::Source).then_some(CPU)),
                host_memory: match &n.value {
                    Some(v) if v.device().is_none() && self.devices.all().any(|d| d.host_memory(v) == MemoryKind::Pinned) => MemoryKind::Pinned,
                    _ => MemoryKind::Pageable,
                },
                lands_in: match &n.value {
                    None if self.devices.all().any(|d| d.results_memory(n.meta.bytes()) == MemoryKind::Pinned) => MemoryKind::Pinned,
                    _ => MemoryKind::Pageable,
                },
                target: target_set.contains(&idx),
                keep_on_device: keep_on_device && target_set.contains(&idx),
                forced: n.forced,
            });
            values.push(n.value.clone());
            keys.push((idx, n.id));
        }
        Ok((GraphPart { nodes }, values, keys))
    }

    /// The plan that evaluating `targets` would run, without running it.
    /// The most elements an op on host values may have to run at once on the CPU, outside
    /// the graph (`Config::eager_max_elements`): 0 when the current cell pins its ops to a
    /// device (`:bach cell cpu|gpu`) or under the `greedy` policy (every op that can runs on
    /// the accelerator, whatever its size).
    pub fn eager_max_elements(&self) -> usize {
        self.eager_max.load(Ordering::Relaxed)
    }
    /// Recompute `eager_max` from the config and the cell's pinning (after either changes).
    fn update_eager_max(&self) {
        let c = self.config.read().unwrap_or_else(|p| p.into_inner());
        let max = if c.policy == Policy::Greedy || lock(&self.cell_forced).is_some() { 0 } else { c.eager_max_elements };
        self.eager_max.store(max, Ordering::Relaxed);
    }

    pub fn plan(&self, targets: &[&Lazy]) -> Result<Plan> {
        self.plan_for(targets, &self.devices.profiles())
    }

    /// The plan for `targets` on other devices than this machine's ("what would happen on an
    /// 80 GB H100"): planning never touches data, so no device is needed.
    pub fn plan_for(&self, targets: &[&Lazy], devices: &[DeviceProfile]) -> Result<Plan> {
        let (part, _, _) = self.extract(targets, false)?;
        let cfg = self.config();
        plan::plan(&part, &cfg.cost, devices, cfg.policy, cfg.memory_cap)
    }

    /// The plan for `targets` with another cost model on `devices` (a what-if): nothing runs
    /// and the session's own model is unchanged.
    pub fn plan_with(&self, targets: &[&Lazy], cost: &CostModel, devices: &[DeviceProfile]) -> Result<Plan> {
        let (part, _, _) = self.extract(targets, false)?;
        let cfg = self.config();
        plan::plan(&part, cost, devices, cfg.policy, cfg.memory_cap)
    }

    /// Evaluate several values in one pass (shared work is done once). Values come back on
    /// the CPU and are cached on their nodes.
    pub fn evaluate(&self, targets: &[&Lazy]) -> Result<Evaluated> {
        let (values, record) = self.evaluate_where(targets, false, true)?;
        Ok(Evaluated { values: values.into_iter().map(|v| self.to_host(v)).collect::<Result<_>>()?, record })
    }

    /// Evaluate `targets` as [`Session::evaluate`] would, recording the evaluation in the
    /// trace, but keep no value on the graph: the values stay pending, so they can be planned
    /// again (the placement panel's Run, which compares a measured run with the prediction).
    /// Returns the evaluation's record (`None`: nothing was left to compute).
    pub fn trial(&self, targets: &[&Lazy]) -> Result<Option<Arc<EvalTrace>>> {
        self.evaluate_where(targets, false, false).map(|(_, record)| record)
    }

    /// Evaluate, leaving values computed on an accelerator in its memory (a later cell that
    /// uses them there reads them with no copy). Values computed on the CPU, or that cannot
    /// stay (a paged stage), are host values; the plan's notes say why.
    pub fn evaluate_on_device(&self, targets: &[&Lazy]) -> Result<Vec<Value>> {
        self.evaluate_where(targets, true, true).map(|(values, _)| values)
    }

    /// A device value copied to the host (host values as they are).
    pub fn to_host(&self, v: Value) -> Result<Value> {
        let Value::Device(d) = &v else { return Ok(v) };
        let dev = self.devices.get(d.device).ok_or_else(|| BachError::invalid("copy out", format!("no device {}", d.device.0)))?;
        dev.copy_out(v.view(), crate::device::Tag { node: 0, piece: 0 })?.finish()
    }

    /// The targets' values and the record of the evaluation that computed them (`None` when
    /// nothing was left to compute).
    fn evaluate_where(&self, targets: &[&Lazy], keep_on_device: bool, keep: bool) -> Result<(Vec<Value>, Option<Arc<EvalTrace>>)> {
        let began = self.epoch.elapsed();
        let (part, mut values, keys) = self.extract(targets, keep_on_device)?;
        if let Some(p) = part.nodes.iter().zip(&values).find(|(n, v)| n.op.kind() == OpKind::Source && v.is_none()) {
            return Err(BachError::invalid(p.0.op.name(), format!("#{} is a placeholder for planning: it has no data to compute with", p.0.id)));
        }
        let pending = part.nodes.iter().any(|n| n.materialized.is_none());
        let mut recorded = None;
        if pending {
            let cfg = self.config();
            let plan = plan::plan(&part, &cfg.cost, &self.devices.profiles(), cfg.policy, cfg.memory_cap)?;
            self.offer_host_arrays(&part, &values);
            let eval = self.evals.fetch_add(1, Ordering::SeqCst) + 1;
            let progress = crate::progress::Tracker::new(eval, plan.total_pieces());
            let env = exec::Env { devices: &self.devices, epoch: self.epoch, interrupt: &self.interrupt, cost: &cfg.cost, cell: self.cell(), progress, began };
            let (result, mut record) = exec::execute(&env, eval, &Arc::new(plan), &part, &mut values);
            record.reason = crate::trace::current_reason();
            recorded = Some(self.trace().push(record));
            for d in self.devices.all() {
                d.evaluation_done();
            }
            crate::fresh::trim_when_holding_too_much();
            // Keep what was computed, even when a later stage failed or was interrupted.
            let mut g = lock(&self.graph);
            for (i, (idx, id)) in keys.iter().enumerate().filter(|_| keep) {
                let Some(v) = &values[i] else { continue };
                if part.nodes[i].materialized.is_some() {
                    continue;
                }
                let keep = g.node(*idx, *id).is_some_and(|n| n.handles > 0 && n.value.is_none());
                if keep {
                    g.materialize(*idx, v.clone());
                }
            }
            drop(g);
            if let Err(e) = result {
                if e == BachError::Interrupted {
                    self.interrupt.store(false, Ordering::SeqCst);
                }
                return Err(e);
            }
        }
        let values = targets
            .iter()
            .map(|t| {
                let i = keys.iter().position(|(idx, id)| *idx == t.inner.node && *id == t.inner.id);
                i.and_then(|i| values[i].clone()).ok_or_else(|| BachError::invalid("evaluate", "value is no longer in the session"))
            })
            .collect::<Result<_>>()?;
        Ok((values, recorded))
    }
}

impl Session {
    /// Hand each accelerator the host arrays it could have read in this evaluation (the
    /// arguments of ops with a version there), whichever device the plan chose: it may
    /// prepare them at idle ([`Device::may_read_later`]), and the next plan prices their
    /// copies by what it did ([`Device::host_memory`]).
    fn offer_host_arrays(&self, part: &GraphPart, values: &[Option<Value>]) {
        let accelerators: Vec<_> = self.devices.all().filter(|d| d.profile().kind != DeviceKind::Cpu).collect();
        if accelerators.is_empty() {
            return;
        }
        let mut offered = vec![false; part.nodes.len()];
        for node in part.nodes.iter().filter(|n| n.materialized.is_none() && n.op.accelerator().is_some()) {
            for &u in &node.inputs {
                let Some(v) = values[u].as_ref().filter(|v| v.device().is_none()) else { continue };
                if !std::mem::replace(&mut offered[u], true) {
                    for d in &accelerators {
                        d.may_read_later(v);
                    }
                }
            }
        }
    }
}

impl fmt::Debug for Session {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Session({} nodes, cell {})", self.node_count(), self.cell())
    }
}

struct LazyInner {
    session: Arc<Session>,
    node: NodeIndex,
    id: u64,
    meta: Meta,
}

impl Drop for LazyInner {
    fn drop(&mut self) {
        self.session.release(self.node, self.id);
    }
}

/// A handle to a node of the graph: cheap to clone, `Send + Sync`. Its value is computed
/// when asked for ([`Lazy::eval`]); the node lives while a handle or a pending user does.
#[derive(Clone)]
pub struct Lazy {
    inner: Arc<LazyInner>,
}

impl Lazy {
    pub fn meta(&self) -> &Meta {
        &self.inner.meta
    }
    pub fn id(&self) -> u64 {
        self.inner.id
    }
    pub fn session(&self) -> &Arc<Session> {
        &self.inner.session
    }
    /// Compute (or fetch the cached) value, on the CPU.
    pub fn eval(&self) -> Result<Value> {
        let mut v = self.inner.session.evaluate(&[self])?.values;
        Ok(v.pop().expect("one target, one value"))
    }
    /// Compute the value and, when it is computed on an accelerator, keep it in that device's
    /// memory: later uses there read it with no copy. Returns the device it lives on
    /// ([`CPU`] when it was computed on the host or could not stay; the plan says why).
    pub fn eval_on_device(&self) -> Result<crate::device::DeviceId> {
        let v = self.inner.session.evaluate_on_device(&[self])?;
        Ok(v[0].device().unwrap_or(CPU))
    }
    /// Where the computed value lives (`None` before it is computed).
    pub fn location(&self) -> Option<crate::device::DeviceId> {
        let g = lock(&self.inner.session.graph);
        g.node(self.inner.node, self.inner.id).and_then(|n| n.value.as_ref()).map(|v| v.device().unwrap_or(CPU))
    }
    /// The plan evaluating this value would run.
    pub fn plan(&self) -> Result<Plan> {
        self.inner.session.plan(&[self])
    }
    pub fn is_evaluated(&self) -> bool {
        let g = lock(&self.inner.session.graph);
        g.node(self.inner.node, self.inner.id).is_some_and(|n| n.value.is_some())
    }
    /// Ask for the op computing this value to run on the accelerator (`Some(true)`), the CPU
    /// (`Some(false)`), or where the policy puts it (`None`). Plans respect it and say so; an
    /// op that cannot run on the accelerator stays on the CPU and the plan says why.
    pub fn force(&self, accelerator: Option<bool>) {
        let mut g = lock(&self.inner.session.graph);
        if let Some(n) = g.g.node_weight_mut(self.inner.node).filter(|n| n.id == self.inner.id && n.value.is_none() && n.op.kind() == OpKind::Compute) {
            n.forced = accelerator.map(|accelerator| Forced { accelerator, device: None, by_cell: false });
        }
    }
    /// Ask for the op computing this value to run on accelerator `device`, not spread over
    /// the others ([`Lazy::force`] otherwise).
    pub fn force_device(&self, device: crate::profile::DeviceId) {
        let mut g = lock(&self.inner.session.graph);
        if let Some(n) = g.g.node_weight_mut(self.inner.node).filter(|n| n.id == self.inner.id && n.value.is_none() && n.op.kind() == OpKind::Compute) {
            n.forced = Some(Forced { accelerator: true, device: Some(device), by_cell: false });
        }
    }
}

impl fmt::Debug for Lazy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Lazy(#{} {})", self.inner.id, self.inner.meta)
    }
}

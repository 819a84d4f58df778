//! Calibration: measure this machine's devices and fit the cost model to them.
//!
//! For each device (the CPU, and the accelerator when there is one) small programs of one op
//! family run through the real planner and executor, in a session of their own (the user's
//! graph and trace are untouched), at a few sizes from 2^12 to 2^22 elements:
//!
//! | family | program | fits |
//! |---|---|---|
//! | alloc | `linspace(n)` | per_call, per_element |
//! | elementwise | `x` (in the device's memory) then 4 or 16 of `* x`, `+ c`, `/ x`, `- x` | per_call, per_element (what an op adds to a stage: the difference of the two chains, per op) |
//! | math | `x` then 4 or 16 of exp, ln, sqrt, sin, erf, asin | the same, per op of weight 1 (an `exp`; each function's weight in `elementwise.rs`) |
//! | stage | the 4-op chains less their ops, and one op over 16 elements | per_call (per stage), per_element (per element it reads in or writes out); on an accelerator per_call only (see below) |
//! | reduce | `linspace(n).sum()` | per_call, per_element |
//! | product | `full(r, 256) . full(256, 256)`, and `8 x 8` | per_call, per_flop (less the result's elements at the row's per_element) |
//! | layout (CPU) | `full(n/64, 64).t()` | per_call, per_element |
//! | closure (CPU) | `x` then 4 or 16 of `mapv(|v| v * 0.75 + 0.25)` | per_call, per_element (the difference of the two chains, per closure) |
//!
//! Each program's time is the sum of its stages' measured times (planning excluded), the
//! median of three runs after a warm-up (the model predicts typical runs, not lucky ones). What
//! the rows fitted earlier predict for the rest of a program (the stage's own cost, the
//! `linspace` feeding a sum) is subtracted, then `per_call + per_element * n` is fitted by
//! the least sum of `|ln(predicted / measured)|` (a factor off counts alike at every size and
//! either way; one point off the line does not drag it).
//! Copies to and from an accelerator are timed through its own `copy_in`/`copy_out` (host
//! arrays: pageable memory) at 64 KiB to 64 MiB and fitted as `latency + bytes / bandwidth`;
//! a CUDA device's pinned rates are the ones it measured as it opened. What a piece of an
//! accelerator's stage costs (its `stage` row's per_call, paid once a piece there) is the
//! difference between a 4-op chain over a 32 MiB host array in one piece and in about 20
//! (a 4 MiB memory cap), per extra piece. The `other` family
//! (ops with kernels of their own, such as `symmetric_eigen` or `dbscan`) is not measured.

use std::fmt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use bach_runtime::cost::{CopyField, OpField, Param};
use bach_runtime::{CostModel, Device, DeviceKind, Direction, Family, MemoryKind, Policy, Session, Tag, Value, CPU};

use crate::array::{Array, Array2};

/// Elements of the one-op stage that measures what a stage costs whatever its size.
const TINY: usize = 16;
/// The inner and outer size of the calibration's products.
const PRODUCT_K: usize = 256;
/// Elements of the programs (2^12 .. 2^22).
const SIZES: [usize; 4] = [1 << 12, 1 << 16, 1 << 20, 1 << 22];
/// Ops in a chain: two lengths, so that what one op adds to a stage is told apart from
/// what the stage costs whatever its length.
const CHAINS: [usize; 2] = [4, 16];
/// Bytes of the timed copies.
const COPY_BYTES: [usize; 4] = [64 << 10, 1 << 20, 16 << 20, 64 << 20];
/// Elements of the program that times an accelerator's pieces, and the memory cap that
/// cuts its stage into many (about 20 pieces of 1.6 MiB in and out).
const PIECES_N: usize = 1 << 22;
const PIECES_CAP: u64 = 4 << 20;
/// Timed runs of each program (after one warm-up); the median counts.
const RUNS: usize = 3;

/// One fitted row: a family on a device (or a copy direction), before and after.
#[derive(Clone, Debug)]
pub struct Fitted {
    /// "elementwise", "math", ... or "copy h2d" / "copy d2h".
    pub what: String,
    pub device: String,
    pub kind: DeviceKind,
    /// (per_call or latency, per_element / per_flop / seconds per byte), before and after.
    pub before: (f64, f64),
    pub after: (f64, f64),
    /// Programs timed for it.
    pub points: usize,
    /// Largest |fitted - measured| / measured over those programs (NaN: too few points, so
    /// the row kept its figures).
    pub max_error: f64,
}

/// What [`calibrate`] measured and the model it made.
#[derive(Clone, Debug)]
pub struct Calibration {
    pub model: CostModel,
    pub rows: Vec<Fitted>,
    /// Seconds the measurement took.
    pub seconds: f64,
    /// Where the profile was saved, or why it was not.
    pub saved: Result<PathBuf, String>,
}

/// Measure the global session's devices, fit the cost model, use it from the next evaluation
/// on, and save it as this machine's profile (loaded by every later session on this host and
/// these devices). `:bach calibrate` in a notebook.
pub fn calibrate() -> bach_runtime::Result<Calibration> {
    let session = bach_runtime::global();
    let path = bach_runtime::cost::saved_profile_path(&session.devices().profiles());
    calibrate_session(&session, path.as_deref())
}

/// [`calibrate`] for a given session (the bench's), saving the profile to `save_to`.
pub fn calibrate_session(session: &Arc<Session>, save_to: Option<&std::path::Path>) -> bach_runtime::Result<Calibration> {
    let started = Instant::now();
    let before = session.config().cost;
    let mut model = before.clone();
    let mut rows = Vec::new();
    // A session of its own on the same devices: the user's graph and trace stay as they were.
    let own = Session::with_devices(session.devices().clone());
    for profile in session.devices().profiles() {
        let policy = if profile.id == CPU { Policy::CpuOnly } else { Policy::Greedy };
        own.update_config(|c| {
            c.policy = policy;
            c.cost = before.clone();
            c.memory_cap = None;
        });
        let mut step = Step { on: Bench { session: &own, accelerator: profile.id != CPU }, profile: &profile, model: &mut model, rows: &mut rows };
        let stage = step.chains()?;
        step.stage(stage);
        step.alloc_and_reduce()?;
        step.products()?;
        if profile.id == CPU {
            step.layout_and_closures()?;
        } else {
            let device = session.devices().get(profile.id).expect("a device of the list").clone();
            step.copies(&device)?;
            step.pieces(&own)?;
        }
    }
    let seconds = started.elapsed().as_secs_f64();
    let host = bach_runtime::cost::host_name();
    let devices: Vec<String> = session.devices().profiles().iter().map(|p| p.name.clone()).collect();
    model.source = format!("calibrated on {host} ({}) in {seconds:.1} s", devices.join(", "));
    model.measured_on = Some(format!("{host}: {}", devices.join(", ")));
    let saved = match save_to {
        Some(path) => model.save(path).map(|()| path.to_path_buf()),
        None => Err("BACH_PROFILE_DIR=none: not saved".into()),
    };
    session.update_config(|c| c.cost = model.clone());
    Ok(Calibration { model, rows, seconds, saved })
}

/// One device's calibration, step by step ([`calibrate_session`] runs them in order): each
/// step times its programs in the calibration's own session and fits its rows of `model`,
/// recording each in `rows`.
struct Step<'a> {
    on: Bench<'a>,
    profile: &'a bach_runtime::DeviceProfile,
    model: &'a mut CostModel,
    rows: &'a mut Vec<Fitted>,
}

impl Step<'_> {
    /// Fit `what`'s row for this device to `points` (kept as it was when they are too few, or
    /// do not rise with their work), and record it.
    fn fit(&mut self, what: Family, mut points: Vec<Point>) {
        // A program's time less what the model says the rest of it took can come out at or
        // below 0 (noise, the smallest sizes): such a point says nothing about the row.
        points.retain(|p| p.seconds > 0.0);
        let kind = self.profile.kind;
        let r = self.model.op_rate(what, kind);
        let old = if what == Family::Product { (r.per_call, r.per_flop) } else { (r.per_call, r.per_element) };
        // Too few points to fit a line, or points that do not rise with their work (noise:
        // no op of these families is free per element): the row keeps its figures.
        let (a, b, max_error) = match (points.len() >= 2).then(|| fit_line(&points)) {
            Some((a, b, e)) if b > 0.0 => (a, b, e),
            _ => (old.0, old.1, f64::NAN),
        };
        let per_work = if what == Family::Product { OpField::PerFlop } else { OpField::PerElement };
        self.model.put(Param::op(what, kind, OpField::PerCall), a).expect("a fitted cost is finite and 0 or more");
        self.model.put(Param::op(what, kind, per_work), b).expect("a fitted rate is finite and above 0");
        self.record(what.name(), old, (a, b), points.len(), max_error);
    }

    fn record(&mut self, what: &str, before: (f64, f64), after: (f64, f64), points: usize, max_error: f64) {
        self.rows.push(Fitted { what: what.into(), device: self.profile.name.clone(), kind: self.profile.kind, before, after, points, max_error });
    }

    /// The alloc row's seconds for a linspace of `n`, as fitted so far.
    fn linspace(&self, n: usize) -> f64 {
        self.model.op_rate(Family::Alloc, self.profile.kind).seconds(bach_runtime::Work { elements: n as f64, flops: 0.0 })
    }

    /// The elementwise and math rows, from chains of 4 and 16 ops over the same input: what
    /// one op adds is their difference per op. Returns the stage's points: what a stage costs
    /// whatever its ops (its start, the elements it reads and writes), the short chain less
    /// its ops, and a stage of one op over a few elements.
    fn chains(&mut self) -> bach_runtime::Result<Vec<Point>> {
        let (mut arith, mut math, mut stage) = (Vec::new(), Vec::new(), Vec::new());
        for &n in &SIZES {
            // The input in the device's memory, as a workload's would be.
            let x = self.on.input(n)?;
            for (is_math, ops) in [(false, &mut arith), (true, &mut math)] {
                let short = self.on.time(|| chain(&x, CHAINS[0], is_math))?;
                let long = self.on.time(|| chain(&x, CHAINS[1], is_math))?;
                // Per op of weight 1 (the math functions' weights differ). A difference lost in
                // the noise (a loaded machine, the smallest sizes) is left out rather than fitted
                // as nearly nothing.
                let short_weight = chain_weight(CHAINS[0], is_math);
                let per_op = per_op(&short, &long, short_weight, chain_weight(CHAINS[1], is_math));
                if per_op > 0.0 {
                    ops.push(Point { calls: 1.0, work: n as f64, seconds: per_op });
                    // What the stage adds, from both chains: streaming is hidden behind math
                    // more than behind arithmetic, and workloads mix the two.
                    let base = short.seconds - short_weight * per_op;
                    let (stages, streamed) = short.stages();
                    if base > 0.0 {
                        stage.push(Point { calls: stages, work: streamed, seconds: base });
                    }
                }
            }
        }
        // A stage of one op over a few elements: almost all of it is what any stage costs
        // (its dispatch, its events), which the chains above hardly show.
        let tiny = self.on.input(TINY)?;
        let one_op = self.on.time(|| chain(&tiny, 1, false))?;
        let (stages, streamed) = one_op.stages();
        stage.push(Point { calls: stages, work: streamed, seconds: one_op.seconds });
        self.fit(Family::Elementwise, arith);
        self.fit(Family::Math, math);
        Ok(stage)
    }

    /// The stage row from the chains' stage points.
    fn stage(&mut self, stage: Vec<Point>) {
        if !self.on.accelerator {
            return self.fit(Family::Stage, stage);
        }
        // On an accelerator these programs keep each result in its memory, a fresh device
        // allocation each time, which is most of what a chain costs beyond its ops (on the
        // H200 host the fit gave 305 ps an element streamed, and stages of Black-Scholes
        // 2^24 were predicted at 3-4x what they took). The row's per_element (device
        // memory's rate) is kept; its per_call is what the points leave, per stage, until
        // the pieces' measurement ([`Step::pieces`]) replaces it.
        let kind = self.profile.kind;
        let old = self.model.op_rate(Family::Stage, kind);
        let per_call = median(stage.iter().filter(|p| p.calls > 0.0).map(|p| (p.seconds - old.per_element * p.work) / p.calls).collect()).max(0.0);
        self.model.put(Param::op(Family::Stage, kind, OpField::PerCall), per_call).expect("a median of finite times, at least 0");
        let max_error = stage.iter().map(|p| ((per_call * p.calls + old.per_element * p.work) / p.seconds).ln().abs()).fold(0.0, f64::max).exp() - 1.0;
        self.record("stage", (old.per_call, old.per_element), (per_call, old.per_element), stage.len(), max_error);
    }

    /// The alloc row (a linspace), then the reduce row (a sum of one, less the linspace):
    /// what is left once the stage's own cost (just fitted) is taken off.
    fn alloc_and_reduce(&mut self) -> bach_runtime::Result<()> {
        let alloc: Vec<Point> = SIZES
            .iter()
            .map(|&n| Ok(Point { calls: 1.0, work: n as f64, seconds: self.on.time(|| Array::<f64, _>::linspace(0.1, 0.9, n).into_dyn())?.ops_seconds(self.model) }))
            .collect::<bach_runtime::Result<_>>()?;
        self.fit(Family::Alloc, alloc);
        let reduce: Vec<Point> = SIZES
            .iter()
            .map(|&n| {
                let t = self.on.time(|| Array::<f64, _>::linspace(0.1, 0.9, n).sum_lazy().into_dyn())?;
                Ok(Point { calls: 1.0, work: n as f64, seconds: t.ops_seconds(self.model) - self.linspace(n) })
            })
            .collect::<bach_runtime::Result<_>>()?;
        self.fit(Family::Reduce, reduce);
        Ok(())
    }

    /// The product row: products as large as a GEMM runs at full speed (every dimension
    /// 256 or more), what writing the result costs (the row's per_element, not fitted)
    /// subtracted; and an 8 x 8 product, what any product costs (its dispatch), which the
    /// large ones hide. Each is `(r x k) . (k x k)`, its flops and result elements as the
    /// model counts them.
    fn products(&mut self) -> bach_runtime::Result<()> {
        let mut product = Vec::new();
        let per_result_element = self.model.op_rate(Family::Product, self.profile.kind).per_element;
        for (r, k) in [(1usize << 8, PRODUCT_K), (1 << 11, PRODUCT_K), (1 << 14, PRODUCT_K), (8, 8)] {
            let t = self.on.time(|| Array2::<f64>::full((r, k), 1.5).dot(&Array2::full((k, k), 0.5)).into_dyn())?;
            let m = |rows: usize, cols: usize| bach_runtime::Meta::new(bach_runtime::DType::F64, [rows, cols]);
            let work = bach_runtime::Work::of(Family::Product, &[m(r, k), m(k, k)], &m(r, k));
            let others = self.linspace(r * k) + self.linspace(k * k) + per_result_element * work.elements;
            product.push(Point { calls: 1.0, work: work.flops, seconds: t.ops_seconds(self.model) - others });
        }
        self.fit(Family::Product, product);
        Ok(())
    }

    /// The CPU's layout row (a transpose made contiguous, less its linspace) and closure row
    /// (as for the elementwise ops, the difference of two chains, per closure).
    fn layout_and_closures(&mut self) -> bach_runtime::Result<()> {
        let layout: Vec<Point> = SIZES
            .iter()
            .map(|&n| {
                let t = self.on.time(|| Array2::<f64>::full((n / 64, 64), 1.5).t().to_owned().into_dyn())?;
                Ok(Point { calls: 1.0, work: n as f64, seconds: t.ops_seconds(self.model) - self.linspace(n) })
            })
            .collect::<bach_runtime::Result<_>>()?;
        self.fit(Family::Layout, layout);
        let mut closure = Vec::new();
        for &n in &SIZES {
            let x = self.on.input(n)?;
            let short = self.on.time(|| closure_chain(&x, CHAINS[0]))?;
            let long = self.on.time(|| closure_chain(&x, CHAINS[1]))?;
            let per_op = per_op(&short, &long, CHAINS[0] as f64, CHAINS[1] as f64);
            if per_op > 0.0 {
                closure.push(Point { calls: 1.0, work: n as f64, seconds: per_op });
            }
        }
        self.fit(Family::Closure, closure);
        Ok(())
    }

    /// An accelerator's copy rows, each way, timed through its own copies; and the pinned
    /// rates the device measured as it opened.
    fn copies(&mut self, device: &Arc<dyn Device>) -> bach_runtime::Result<()> {
        let kind = self.profile.kind;
        for direction in [Direction::H2d, Direction::D2h] {
            let points = copy_points(device, direction)?;
            let old = self.model.copy_rate(kind, direction, MemoryKind::Pageable);
            let (latency, per_byte, max_error) = fit_line(&points);
            let dir = if direction == Direction::H2d { "h2d" } else { "d2h" };
            let bandwidth = 1.0 / per_byte.max(1e-13);
            // The emulated device's "pinned" memory is host memory like the rest.
            let memories: &[MemoryKind] = if kind == DeviceKind::Emulated { &[MemoryKind::Pageable, MemoryKind::Pinned] } else { &[MemoryKind::Pageable] };
            for &memory in memories {
                // A fitted latency below 0 (noise) is none.
                self.model.put(Param::copy(direction, memory, kind, CopyField::Latency), latency.max(0.0)).expect("a finite latency");
                self.model.put(Param::copy(direction, memory, kind, CopyField::Bandwidth), bandwidth).expect("a finite bandwidth above 0");
            }
            self.record(&format!("copy {dir}"), (old.latency, 1.0 / old.bandwidth), (latency, 1.0 / bandwidth), points.len(), max_error);
        }
        if let Some((h2d, d2h)) = self.profile.measured_copies {
            for (direction, bandwidth) in [(Direction::H2d, h2d), (Direction::D2h, d2h)] {
                self.model.put(Param::copy(direction, MemoryKind::Pinned, DeviceKind::Cuda, CopyField::Bandwidth), bandwidth).expect("a measured bandwidth above 0");
            }
        }
        Ok(())
    }

    /// What a piece of an accelerator stage costs (the `stage` row's per_call): the same
    /// short chain over the same host array in one piece and in many (a small memory cap in
    /// `own`, the calibration's session), its result brought back, so both copy the same
    /// bytes each way; the difference per extra piece.
    fn pieces(&mut self, own: &Arc<Session>) -> bach_runtime::Result<()> {
        let host = bach_runtime::with_session(own, || -> bach_runtime::Result<Array<f64>> {
            let x = Array::<f64>::random_uniform(vec![PIECES_N], 0.5, 1.5, 7);
            x.eval()?;
            Ok(x)
        })?;
        let whole = self.on.time_where(|| chain(&host, CHAINS[0], false), false)?;
        own.update_config(|c| c.memory_cap = Some(PIECES_CAP));
        let paged = self.on.time_where(|| chain(&host, CHAINS[0], false), false);
        own.update_config(|c| c.memory_cap = None);
        let paged = paged?;
        let (one, many) = (whole.accelerator_pieces(), paged.accelerator_pieces());
        let kind = self.profile.kind;
        let old = self.model.op_rate(Family::Stage, kind);
        let per_piece = (paged.seconds - whole.seconds) / (many as f64 - one as f64);
        let measured = many > one && per_piece > 0.0;
        if measured {
            self.model.put(Param::op(Family::Stage, kind, OpField::PerCall), per_piece).expect("a positive time");
        }
        let after = self.model.op_rate(Family::Stage, kind);
        let (points, max_error) = if measured { (2, 0.0) } else { (0, f64::NAN) };
        self.record("piece", (old.per_call, old.per_element), (after.per_call, after.per_element), points, max_error);
        Ok(())
    }
}

/// The math chain's functions by weight (`exp` = 1, as `MATH_WEIGHTS` in `elementwise.rs`),
/// over the values the chain gives them, measured the same way: exp 1.0, ln 0.88, sqrt 0.25,
/// sin 2.0 (over [0.7, 1.2]), erf 1.56 (over [0.65, 0.93], where it takes no random branches),
/// asin 2.0.
const CHAIN_MATH_WEIGHTS: [f64; 6] = [1.0, 0.88, 0.25, 2.0, 1.56, 2.0];

/// [`CHAIN_MATH_WEIGHTS`] on a processor with AVX2 and FMA: sin, erf and asin times their
/// AVX2 kernel's time over the one it replaces, over the chain's values, measured the same
/// way in one run (`kernel_speed` in `simd.rs`, ns): sin 1.5 against `wide`'s 5.7-5.8, erf
/// 2.8-2.9 against the scalar 3.2-3.3, asin 1.3-1.4 against `wide`'s 4.1-4.3.
const CHAIN_MATH_WEIGHTS_AVX2: [f64; 6] = [1.0, 0.88, 0.25, 0.52, 1.37, 0.67];

/// The summed weight of the first `k` ops of a chain ([`chain`]).
fn chain_weight(k: usize, math: bool) -> f64 {
    if math {
        let weights = if crate::ops::simd::avx2_kernels() { CHAIN_MATH_WEIGHTS_AVX2 } else { CHAIN_MATH_WEIGHTS };
        (0..k).map(|i| weights[i % 6]).sum()
    } else {
        k as f64
    }
}

/// `k` elementwise ops over `x` (values in 0.5..1.5), as numerical code mixes them: a cycle of
/// `* x`, `+ c`, `/ x`, `- x` (arrays and scalars, a division among them), or a cycle of math
/// functions whose values stay in their domains.
fn chain(x: &Array<f64>, k: usize, math: bool) -> Array<f64> {
    let mut y = x.clone();
    for i in 0..k {
        y = match (math, i % 6) {
            (false, i) => match i % 4 {
                0 => &y * x,
                1 => &y + 0.5,
                2 => &y / x,
                _ => &y - x,
            },
            (true, 0) => y.exp(),
            (true, 1) => y.ln(),
            (true, 2) => y.sqrt(),
            (true, 3) => y.sin(),
            (true, 4) => y.erf(),
            (true, _) => y.asin(),
        };
    }
    y
}

/// What one op of weight 1 adds to a chain: the difference of a chain of ops weighing `short`
/// and one weighing `long`, per unit of weight.
fn per_op(short: &Timed, long: &Timed, short_weight: f64, long_weight: f64) -> f64 {
    (long.seconds - short.seconds) / (long_weight - short_weight)
}

/// `k` Rust closures over `x` (`mapv`), one after another.
fn closure_chain(x: &Array<f64>, k: usize) -> Array<f64> {
    let mut y = x.clone();
    for _ in 0..k {
        y = y.mapv_lazy(|v| v * 0.75 + 0.25);
    }
    y
}

/// A timed program: `calls` ops doing `work` units (elements or flops) in `seconds`.
#[derive(Clone, Copy, Debug)]
struct Point {
    calls: f64,
    work: f64,
    seconds: f64,
}

/// `seconds ~ a * calls + b * work` with a, b >= 0 and the largest relative error left.
/// Fitted by the least sum of `|ln(predicted / measured)|`: a factor off counts the same
/// either way and one point off the line (a transpose that fits in cache at 2^12 elements
/// runs 70 times faster per element than one that does not) does not pull the line away from
/// the others, as least squares on relative error did (which priced such an op at nothing,
/// since over-predicting one point costs without bound and under-predicting at most 1). The
/// best such line passes through two of the points, or through one with a or b at 0, so
/// every such line is tried.
fn fit_line(points: &[Point]) -> (f64, f64, f64) {
    let pts: Vec<Point> = points.iter().map(|p| Point { seconds: p.seconds.max(1e-7), ..*p }).collect();
    let cost = |a: f64, b: f64| pts.iter().map(|p| ((a * p.calls + b * p.work).max(1e-300) / p.seconds).ln().abs()).sum::<f64>();
    let mut candidates = Vec::new();
    for (i, p) in pts.iter().enumerate() {
        if p.calls > 0.0 {
            candidates.push((p.seconds / p.calls, 0.0));
        }
        if p.work > 0.0 {
            candidates.push((0.0, p.seconds / p.work));
        }
        for q in &pts[i + 1..] {
            let det = p.calls * q.work - q.calls * p.work;
            if det.abs() > 1e-12 * (p.calls * q.work).abs().max((q.calls * p.work).abs()) {
                let a = (p.seconds * q.work - q.seconds * p.work) / det;
                let b = (p.calls * q.seconds - q.calls * p.seconds) / det;
                if a >= 0.0 && b >= 0.0 {
                    candidates.push((a, b));
                }
            }
        }
    }
    let (a, b) = candidates.into_iter().map(|(a, b)| (cost(a, b), a, b)).min_by(|x, y| x.0.total_cmp(&y.0)).map_or((0.0, 0.0), |(_, a, b)| (a, b));
    let max_error = pts.iter().map(|p| ((a * p.calls + b * p.work) - p.seconds).abs() / p.seconds).fold(0.0, f64::max);
    (a, b, max_error)
}

/// Runs programs on one device of a session of its own.
struct Bench<'s> {
    session: &'s Arc<Session>,
    accelerator: bool,
}

impl Bench<'_> {
    /// `n` values from 0.5 to 1.5 in random order in the device's memory (made and kept there
    /// for an accelerator). Random, as a workload's inputs are: over sorted values (a
    /// `linspace`) the math functions' branches are all predicted and they run about twice
    /// as fast as they do in Black-Scholes or Haversine.
    fn input(&self, n: usize) -> bach_runtime::Result<Array<f64>> {
        bach_runtime::with_session(self.session, || {
            let x = Array::<f64>::random_uniform(vec![n], 0.5, 1.5, 7);
            if self.accelerator {
                x.eval_on_device()?;
            } else {
                x.eval()?;
            }
            Ok(x)
        })
    }

    /// Seconds the stages of `program`'s evaluation took: the median of [`RUNS`] after a warm-up.
    /// On an accelerator the result stays there (no copy out).
    fn time(&self, program: impl Fn() -> Array<f64>) -> bach_runtime::Result<Timed> {
        self.time_where(program, self.accelerator)
    }

    /// [`Bench::time`], the result left on the accelerator (`on_device`) or brought back.
    fn time_where(&self, program: impl Fn() -> Array<f64>, on_device: bool) -> bach_runtime::Result<Timed> {
        let mut times = Vec::with_capacity(RUNS);
        let mut plan = None;
        for run in 0..=RUNS {
            let seconds = bach_runtime::with_session(self.session, || -> bach_runtime::Result<f64> {
                let a = program();
                if on_device {
                    a.eval_on_device()?;
                } else {
                    a.eval()?;
                }
                let trace = self.session.trace();
                plan = trace.last().and_then(|e| e.plans.last().cloned());
                Ok(trace.last().map_or(0.0, |e| e.stages.iter().map(|s| s.actual_s()).sum()))
            })?;
            if run > 0 {
                times.push(seconds);
            }
        }
        Ok(Timed { seconds: median(times), plan })
    }
}

/// A timed program: the median seconds of its stages, and the plan they ran.
struct Timed {
    seconds: f64,
    plan: Option<Arc<bach_runtime::Plan>>,
}

impl Timed {
    /// (calls, elements streamed): the work of the cost model's `stage` row (a call per stage
    /// on the CPU, per piece on an accelerator: [`bach_runtime::Plan::stage_calls`]).
    fn stages(&self) -> (f64, f64) {
        self.plan.as_ref().map_or((1.0, 0.0), |p| ((0..p.stages.len()).map(|s| p.stage_calls(s)).sum(), p.stages.iter().map(|s| s.streamed_elements).sum::<usize>() as f64))
    }
    /// Pieces of the accelerator's stages.
    fn accelerator_pieces(&self) -> usize {
        self.plan.as_ref().map_or(0, |p| p.stages.iter().filter(|s| s.device != CPU).map(|s| s.pieces).sum())
    }
    /// The seconds left for the ops once `model`'s estimate of the stages' own cost is taken off.
    fn ops_seconds(&self, model: &CostModel) -> f64 {
        self.seconds - self.plan.as_ref().map_or(0.0, |p| (0..p.stages.len()).map(|s| p.stage_overhead_seconds(s, model)).sum())
    }
}

/// Copies of host arrays (pageable memory) `direction` for `device` at each of [`COPY_BYTES`]:
/// in, from an array as a session holds it; out, as a stage's results come back, into the
/// rows of a whole result ([`bach_runtime::RowsOut`]) allocated once, whose memory the runs
/// after the warm-up write again (a session's results reuse the memory of the last ones:
/// [`bach_runtime::fresh::from_heap`]).
fn copy_points(device: &Arc<dyn Device>, direction: Direction) -> bach_runtime::Result<Vec<Point>> {
    let tag = Tag { node: 0, piece: 0 };
    let mut points = Vec::new();
    for &bytes in &COPY_BYTES {
        let n = bytes / 8;
        let host = Value::from(ndarray::ArrayD::<f64>::from_elem(ndarray::IxDyn(&[n]), 1.5));
        let dest = bach_runtime::RowsOut::new(&bach_runtime::Meta::new(bach_runtime::DType::F64, [n])).expect("a plain f64 array has rows");
        let mut times = Vec::with_capacity(RUNS);
        for run in 0..=RUNS {
            let t0 = Instant::now();
            let on_device = device.copy_in(host.view(), tag)?;
            device.synchronize()?;
            let t_in = t0.elapsed().as_secs_f64();
            let t1 = Instant::now();
            device.copy_out_into(on_device.view(), dest.rows(0..n)?, tag)?.finish()?;
            let t_out = t1.elapsed().as_secs_f64();
            if run > 0 {
                times.push(if direction == Direction::H2d { t_in } else { t_out });
            }
        }
        points.push(Point { calls: 1.0, work: bytes as f64, seconds: median(times) });
    }
    Ok(points)
}

/// The middle of `v` (the typical run: the model predicts typical runs, not lucky ones).
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(0.0)
}

impl fmt::Display for Calibration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use bach_runtime::cost::seconds;
        writeln!(f, "calibrated in {:.1} s: {}", self.seconds, self.model.source)?;
        writeln!(f, "  {:<12} {:<30} {:>22} {:>30} {:>9}", "family", "device", "per_call (before)", "per_element or flop (before)", "fit error")?;
        for r in &self.rows {
            let (second, before_second) = if r.what.starts_with("copy") {
                (format!("{:.2} GB/s", 1e-9 / r.after.1.max(1e-30)), format!("{:.2} GB/s", 1e-9 / r.before.1.max(1e-30)))
            } else {
                (seconds(r.after.1), seconds(r.before.1))
            };
            writeln!(
                f,
                "  {:<12} {:<30} {:>22} {:>30} {:>9}",
                r.what,
                bach_runtime::chart::truncate(&r.device, 30),
                format!("{} ({})", seconds(r.after.0), seconds(r.before.0)),
                format!("{second} ({before_second})"),
                if r.max_error.is_nan() { "kept".to_string() } else { format!("{:.0}%", r.max_error * 100.0) }
            )?;
        }
        writeln!(f, "  other: not measured (ops with kernels of their own keep their figures)")?;
        match &self.saved {
            Ok(p) => writeln!(f, "saved as {}: sessions on this host and these devices start with it", p.display()),
            Err(e) => writeln!(f, "not saved: {e}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_line_is_fitted_on_log_error_and_kept_non_negative() {
        let pts: Vec<Point> = [1e3, 1e5, 1e7].iter().map(|&n| Point { calls: 1.0, work: n, seconds: 2e-6 + 1e-9 * n }).collect();
        let (a, b, e) = fit_line(&pts);
        assert!((a - 2e-6).abs() < 1e-9 && (b - 1e-9).abs() < 1e-13 && e < 1e-6, "{a} {b} {e}");
        // Times that fall with size: no negative per-element rate.
        let pts = [Point { calls: 1.0, work: 1.0, seconds: 3.0 }, Point { calls: 1.0, work: 10.0, seconds: 2.0 }];
        let (a, b, _) = fit_line(&pts);
        assert!(b == 0.0 && (2.0..=3.0).contains(&a), "{a} {b}");
        // One point far below the others' line (a small transpose in cache) leaves the line
        // through the others, where least squares on relative error priced the op at ~0.
        let pts: Vec<Point> = [(4096.0, 8e-7), (65536.0, 1.6e-3), (1048576.0, 0.019), (4194304.0, 0.057)].iter().map(|&(n, s)| Point { calls: 1.0, work: n, seconds: s }).collect();
        let (a, b, _) = fit_line(&pts);
        for p in &pts[1..] {
            let predicted = a + b * p.work;
            assert!(predicted / p.seconds > 0.5 && predicted / p.seconds < 2.0, "{a} {b}: {predicted} for {}", p.seconds);
        }
        // Noise on an exact line moves it by about the noise.
        let pts: Vec<Point> = [1e3, 1e4, 1e5, 1e6].iter().zip([1.1, 0.95, 1.05, 0.97]).map(|(&n, f)| Point { calls: 1.0, work: n, seconds: (5e-6 + 2e-9 * n) * f }).collect();
        let (a, b, e) = fit_line(&pts);
        assert!((b / 2e-9 - 1.0).abs() < 0.1 && a < 1e-5 && e < 0.2, "{a} {b} {e}");
    }

    #[test]
    fn calibration_measures_the_cpu_and_an_emulated_accelerator_and_saves_a_profile_that_loads() {
        let dir = std::env::temp_dir().join(format!("bach-calibrate-test-{}", std::process::id()));
        let devices = bach_runtime::Devices::select(bach_runtime::DeviceChoice::Emulated(None)).unwrap();
        let session = Session::with_devices(devices);
        let c = calibrate_session(&session, Some(&dir.join("p.json"))).unwrap();
        let fams: Vec<(&str, DeviceKind)> = c.rows.iter().map(|r| (r.what.as_str(), r.kind)).collect();
        for want in [
            ("alloc", DeviceKind::Cpu),
            ("elementwise", DeviceKind::Cpu),
            ("math", DeviceKind::Cpu),
            ("reduce", DeviceKind::Cpu),
            ("product", DeviceKind::Cpu),
            ("layout", DeviceKind::Cpu),
            ("closure", DeviceKind::Cpu),
            ("math", DeviceKind::Emulated),
            ("copy h2d", DeviceKind::Emulated),
            ("copy d2h", DeviceKind::Emulated),
            ("piece", DeviceKind::Emulated),
        ] {
            assert!(fams.contains(&want), "{want:?} missing from {fams:?}");
        }
        let e = c.model.op_rate(Family::Elementwise, DeviceKind::Cpu).per_element;
        let m = c.model.op_rate(Family::Math, DeviceKind::Cpu).per_element;
        assert!(e > 1e-12 && e < 1e-7 && m > e, "elementwise {e}, math {m}");
        assert_eq!(session.config().cost, c.model, "the session plans with it");
        let path = c.saved.clone().unwrap();
        assert_eq!(CostModel::load(&path).unwrap(), c.model);
        assert!(c.to_string().contains("math"), "{c}");
        let _ = std::fs::remove_dir_all(dir);
    }
}

//! `bach-bench`: the workload benchmark harness.
//!
//! ```text
//! bach-bench run <workload> --log2 N --mode cpu|bach|gpu [--device D] [--memory SIZE]
//!                [--inputs random|reference|lazy] [--seed S] [--repeat R] [--json] [--dump DIR]
//!                [--timeline FILE] (bach's last timeline as SVG)
//! bach-bench compare <workload> --log2 N [--device D] [--memory SIZE] [--inputs ...] [--seed S] [--repeat R]
//! bach-bench plan <workload> --log2 N [--policy P] [--profile h100|default|FILE] [--device D] [--memory SIZE]
//! bach-bench cost [--profile h100|default|FILE] [--device D]
//! bach-bench calibrate [--device D] [--out FILE]
//! bach-bench bandwidth [--sizes 1MiB,64MiB,1GiB] [--repeat R] [--launches N]
//! bach-bench sweep <workload> --from A --to B [--modes cpu,bach,gpu] [--memory SIZE] [--device D]
//!                  [--repeat R] [--limit SECONDS] [--out DIR]
//! ```
//! `sweep` times each mode at sizes 2^A..=2^B (the paper's Figure 3), stops a mode that runs
//! out of memory or past the time limit (default 60 s per point), prints the table and writes
//! `sweep-<workload>.json` and `.svg` (runtime against size, log-log) into DIR (default `.`).
//! `compare` runs the modes interleaved in one process (cpu and bach, and gpu when the session
//! has a CUDA device) and ends with `ratio cpu/bach = X` (and `ratio gpu/bach = Y`).
//! `--device auto|cpu|cuda|emulated[:SIZE]` picks the bach session's devices (default: the
//! `BACH_DEVICE` variable, else auto); `--memory SIZE` caps the accelerator memory the planner
//! may use (and sizes the emulated accelerator). `--policy optimal|greedy|threshold|cpu` and
//! `--profile h100|default|FILE` (a cost model as JSON) set the session's placement. `plan`
//! prints the plan as one JSON line without running anything (inputs are placeholders, so
//! any size can be planned); with no accelerator here it plans for a hypothetical 80 GiB
//! H100. Flags are parsed by hand: the harness should build in seconds.

mod gpu;
mod ml;
mod mlgpu;
mod panel;
mod small;
mod sweep;
mod workloads;

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Instant;

use bach_runtime::chart::TimeShare;
use bach_runtime::trace::EventKind;
use bach_runtime::{CostModel, DeviceChoice, DeviceKind, DeviceProfile, Devices, Meta, Policy, Session, CPU};
use ndarray::Array1;
use serde::Serialize;
use workloads::{Columns, Inputs, Workload};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Cpu,
    Bach,
    Gpu,
}

impl Mode {
    fn parse(s: &str) -> Result<Self, String> {
        match s {
            "cpu" => Ok(Mode::Cpu),
            "bach" => Ok(Mode::Bach),
            "gpu" => Ok(Mode::Gpu),
            _ => Err(format!("unknown mode `{s}` (known: cpu, bach, gpu)")),
        }
    }
    fn name(self) -> &'static str {
        match self {
            Mode::Cpu => "cpu",
            Mode::Bach => "bach",
            Mode::Gpu => "gpu",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Command {
    Run,
    Compare,
    Plan,
    Cost,
    Calibrate,
    Bandwidth,
    Sweep,
}

/// `sweep`'s own flags.
#[derive(Debug)]
struct SweepArgs {
    from: u32,
    to: u32,
    /// `None`: cpu and bach (and gpu where CUDA is).
    modes: Option<Vec<String>>,
    /// Seconds per point.
    limit: f64,
}

#[derive(Debug)]
struct Args {
    command: Command,
    workload: Workload,
    log2: u32,
    mode: Mode,
    /// `--inputs` (and `--seed`) of the elementwise workloads.
    inputs: Inputs,
    repeat: usize,
    json: bool,
    dump: Option<PathBuf>,
    /// Where `run`/`compare` write bach's last timeline (SVG).
    timeline: Option<PathBuf>,
    /// `None`: the `BACH_DEVICE` variable, else auto.
    device: Option<DeviceChoice>,
    /// Accelerator memory cap (bytes).
    memory: Option<u64>,
    /// `bandwidth`: transfer sizes (bytes) and empty-kernel launches.
    sizes: Vec<u64>,
    launches: usize,
    /// Placement policy (`None`: the session's default) and cost model.
    policy: Option<Policy>,
    profile: Option<String>,
    /// One of the ML/CSV workloads (`ml.rs`) instead of `workload`.
    ml: Option<ml::Workload>,
    /// `--seed` as given (the ML workloads default to their reference seeds).
    explicit_seed: Option<u32>,
    sweep: SweepArgs,
}

const USAGE: &str = "usage:
  bach-bench run <black-scholes|haversine|crime-index|dbscan|pca-knn|tsvd> --log2 N --mode cpu|bach|gpu [--device auto|cpu|cuda|cuda:0,cuda:1|emulated[:SIZE]|emulated:N[:SIZE]] [--memory SIZE]
                 [--inputs random|reference|lazy] [--seed S] [--repeat R] [--json] [--dump DIR] [--timeline FILE]
  bach-bench compare <black-scholes|haversine|crime-index|dbscan|pca-knn|tsvd> --log2 N [--device D] [--memory SIZE] [--inputs random|reference|lazy] [--seed S] [--repeat R] [--timeline FILE]
             (--timeline FILE: bach's last run as a timeline chart, SVG)
  bach-bench plan <black-scholes|haversine> --log2 N [--policy P] [--profile h100|default|FILE] [--device D] [--memory SIZE]
  bach-bench cost [--profile h100|default|FILE] [--device D]   (the cost model as JSON: edit it, pass it back with --profile FILE)
  bach-bench calibrate [--device D] [--out FILE]   (measure this machine, save its profile in the cache dir (and FILE): later sessions here load it)
  bach-bench bandwidth [--sizes 1MiB,64MiB,1GiB] [--repeat R] [--launches N]
  bach-bench small-arrays [--steps N] [--repeat R] [--only lorenz|guide|oscillators]   (ndarray code on 3-element arrays in a loop, as written and ported to Bach)
  bach-bench panel [--log2 N] [--repeat R]   (a placement panel control moved: re-plan and redraw, Black-Scholes 2^N, default 20)
  bach-bench sweep <workload> --from A --to B [--modes cpu,bach,gpu] [--device D] [--memory SIZE] [--repeat R] [--limit SECONDS] [--out DIR]
             (each mode at sizes 2^A..2^B; writes sweep-<workload>.json and .svg into DIR, default .)
run, compare and plan take --policy optimal|greedy|threshold|cpu and --profile h100|default|FILE (a cost model as JSON)
SIZE: 64MiB, 1.5GiB, 500MB, ... (--memory caps the accelerator memory Bach plans with, and sizes the emulated one)";

fn parse_size(flag: &str, s: &str) -> Result<u64, String> {
    bach_runtime::units::parse_bytes(s).map_err(|e| format!("{flag} {s}: {e}"))
}

fn parse(argv: &[String]) -> Result<Args, String> {
    let mut it = argv.iter();
    let command = match it.next().ok_or("no command")?.as_str() {
        "run" => Command::Run,
        "compare" => Command::Compare,
        "plan" => Command::Plan,
        "cost" => Command::Cost,
        "calibrate" => Command::Calibrate,
        "bandwidth" => Command::Bandwidth,
        "sweep" => Command::Sweep,
        other => return Err(format!("unknown command `{other}`")),
    };
    let mut ml = None;
    let workload = match command {
        Command::Bandwidth | Command::Cost | Command::Calibrate => Workload::BlackScholes,
        _ => {
            let name = it.next().ok_or("no workload")?;
            ml = ml::Workload::parse(name);
            if ml.is_some() {
                Workload::BlackScholes
            } else {
                Workload::parse(name)?
            }
        }
    };
    let mut a = Args {
        command,
        workload,
        log2: 20,
        mode: Mode::Bach,
        inputs: Inputs::Random(1),
        repeat: 5,
        json: false,
        dump: None,
        timeline: None,
        device: None,
        memory: None,
        sizes: vec![1 << 20, 64 << 20, 1 << 30],
        launches: 2000,
        policy: None,
        profile: None,
        ml,
        explicit_seed: None,
        sweep: SweepArgs { from: 10, to: 20, modes: None, limit: 60.0 },
    };
    let mut repeat_given = false;
    let mut inputs = "random".to_string();
    let mut seed = 1u32;
    while let Some(flag) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{flag} needs a value"));
        let workload_flag = !matches!(flag.as_str(), "--repeat" | "--sizes" | "--launches");
        if command == Command::Bandwidth && workload_flag {
            return Err(format!("`bandwidth` takes --sizes, --repeat and --launches, not {flag}"));
        }
        match flag.as_str() {
            "--log2" => a.log2 = value()?.parse().map_err(|e| format!("--log2: {e}"))?,
            "--mode" => a.mode = Mode::parse(&value()?)?,
            "--inputs" => inputs = value()?,
            "--seed" => {
                seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?;
                a.explicit_seed = Some(seed);
            }
            "--repeat" => {
                a.repeat = value()?.parse::<usize>().map_err(|e| format!("--repeat: {e}"))?.max(1);
                repeat_given = true;
            }
            "--from" if command == Command::Sweep => a.sweep.from = value()?.parse().map_err(|e| format!("--from: {e}"))?,
            "--to" if command == Command::Sweep => a.sweep.to = value()?.parse().map_err(|e| format!("--to: {e}"))?,
            "--modes" if command == Command::Sweep => a.sweep.modes = Some(value()?.split(',').map(|m| m.trim().to_string()).filter(|m| !m.is_empty()).collect()),
            "--limit" if command == Command::Sweep => {
                a.sweep.limit = value()?.parse::<f64>().ok().filter(|s| *s > 0.0).ok_or("--limit: expected seconds above 0")?;
            }
            "--json" => a.json = true,
            "--dump" | "--out" => a.dump = Some(PathBuf::from(value()?)),
            "--timeline" => a.timeline = Some(PathBuf::from(value()?)),
            "--device" => a.device = Some(value()?.parse::<DeviceChoice>().map_err(|e| format!("--device: {e}"))?),
            "--memory" => a.memory = Some(parse_size("--memory", &value()?)?),
            "--policy" => a.policy = Some(value()?.parse::<Policy>().map_err(|e| format!("--policy: {e}"))?),
            "--profile" => a.profile = Some(value()?),
            "--sizes" if command == Command::Bandwidth => {
                a.sizes = value()?.split(',').map(|s| parse_size("--sizes", s)).collect::<Result<_, _>>()?;
            }
            "--launches" if command == Command::Bandwidth => a.launches = value()?.parse::<usize>().map_err(|e| format!("--launches: {e}"))?.max(1),
            other => return Err(format!("unknown flag `{other}`")),
        }
    }
    if command == Command::Sweep {
        if a.sweep.from > a.sweep.to || a.sweep.to > 34 {
            return Err(format!("--from {} --to {}: expected from <= to <= 34", a.sweep.from, a.sweep.to));
        }
        if !repeat_given {
            a.repeat = 1;
        }
    }
    if a.log2 > 34 {
        return Err("--log2 above 34 does not fit this harness".into());
    }
    if a.memory == Some(0) {
        return Err("--memory 0: the accelerator needs some memory".into());
    }
    a.inputs = match inputs.as_str() {
        "random" => Inputs::Random(seed),
        "reference" => Inputs::Reference,
        "lazy" if a.ml.is_some() => return Err("--inputs lazy: black-scholes and haversine only (the ML workloads read their own data)".into()),
        "lazy" => Inputs::Lazy,
        other => return Err(format!("--inputs {other}: expected random, reference or lazy")),
    };
    Ok(a)
}

/// The devices a bach session asks for: `--device` (else `BACH_DEVICE`, else auto), with
/// `--memory` sizing an emulated accelerator that was given no size.
fn device_choice(device: Option<DeviceChoice>, memory: Option<u64>) -> Result<DeviceChoice, String> {
    let choice = match device {
        Some(c) => c,
        None => bach_runtime::knobs::Knobs::from_env().device.parse::<DeviceChoice>().map_err(|e| format!("BACH_DEVICE: {e}"))?,
    };
    Ok(match choice {
        DeviceChoice::Emulated(None) => DeviceChoice::Emulated(memory),
        DeviceChoice::EmulatedSet { count, memory: None } => DeviceChoice::EmulatedSet { count, memory },
        c => c,
    })
}

/// A bach session on the chosen devices, with the memory cap; an error says why the devices
/// cannot be had (`--device cuda` without a GPU).
fn bach_session(choice: DeviceChoice, args: &Args) -> Result<Arc<Session>, String> {
    let devices = Devices::select(choice.clone()).map_err(|why| format!("--device {}: {why}", choice_name(choice)))?;
    let session = Session::with_devices(devices);
    let cost = match args.profile.as_deref() {
        None => None,
        Some("default") => Some(CostModel::for_devices(&session.devices().profiles())),
        Some("h100") => Some(CostModel::h100()),
        Some(file) => Some(CostModel::load(std::path::Path::new(file)).map_err(|e| format!("--profile: {e}"))?),
    };
    session.update_config(|c| {
        c.memory_cap = args.memory.or(c.memory_cap);
        c.policy = args.policy.unwrap_or(c.policy);
        if let Some(cost) = cost {
            c.cost = cost;
        }
    });
    Ok(session)
}

fn choice_name(c: DeviceChoice) -> String {
    match c {
        DeviceChoice::Auto => "auto".into(),
        DeviceChoice::Cpu => "cpu".into(),
        DeviceChoice::Cuda => "cuda".into(),
        DeviceChoice::Emulated(None) => "emulated".into(),
        DeviceChoice::Emulated(Some(b)) => format!("emulated:{b}B"),
        DeviceChoice::EmulatedSet { count, memory: None } => format!("emulated:{count}"),
        DeviceChoice::EmulatedSet { count, memory: Some(b) } => format!("emulated:{count}:{b}B"),
        DeviceChoice::CudaSet(list) => list.iter().map(|o| format!("cuda:{o}")).collect::<Vec<_>>().join(","),
    }
}

/// What the planner did in the last bach run (from the session's trace).
#[derive(Serialize, Debug, Clone, PartialEq)]
struct PlanSummary {
    stages: usize,
    pieces: usize,
    /// A stage did not fit the accelerator's memory and streamed through it.
    paged: bool,
    /// Values moved between devices, as planned.
    transfers: usize,
    /// Copies done (a streamed transfer is one copy per piece), and bytes each way.
    copies: usize,
    h2d_bytes: u64,
    d2h_bytes: u64,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    notes: Vec<String>,
    /// Each stage of the last run: the cost model's seconds beside the measured ones.
    stage_times: Vec<StageSeconds>,
}

#[derive(Serialize, Debug, Clone, PartialEq)]
pub(crate) struct StageSeconds {
    stage: String,
    device: String,
    predicted_seconds: f64,
    seconds: f64,
}

fn plan_summary(session: &Session) -> Option<PlanSummary> {
    let trace = session.trace();
    let e = trace.last()?;
    let plan = e.plan()?;
    let copies: Vec<_> = e.events.iter().filter(|ev| ev.kind == EventKind::Transfer).collect();
    Some(PlanSummary {
        stages: plan.stages.len(),
        pieces: e.pieces,
        paged: plan.stages.iter().any(|s| s.paged),
        transfers: plan.transfers.len(),
        copies: copies.len(),
        h2d_bytes: copies.iter().filter(|ev| ev.to.is_some_and(|t| t != CPU)).map(|ev| ev.bytes).sum(),
        d2h_bytes: copies.iter().filter(|ev| ev.to == Some(CPU)).map(|ev| ev.bytes).sum(),
        notes: plan.notes.clone(),
        stage_times: stage_seconds(e),
    })
}

/// The number of the session's last evaluation.
pub(crate) fn last_eval(session: &Session) -> Option<u64> {
    session.trace().last().map(|e| e.eval)
}

/// Each stage of evaluation `e`: the cost model's seconds beside the measured ones.
fn stage_seconds(e: &bach_runtime::trace::EvalTrace) -> Vec<StageSeconds> {
    let Some(plan) = e.plan() else { return vec![] };
    e.stages
        .iter()
        .map(|st| StageSeconds {
            stage: st.label(),
            device: plan.devices.get(st.device.0 as usize).map_or_else(String::new, |d| d.name.clone()),
            predicted_seconds: st.predicted_s,
            seconds: st.actual_s(),
        })
        .collect()
}

/// The stages of the evaluations after `after` (one run of a workload that evaluates more
/// than once), predicted beside measured.
pub(crate) fn stage_times_since(session: &Session, after: Option<u64>) -> Vec<StageSeconds> {
    session.trace().evals().filter(|e| after.is_none_or(|a| e.eval > a)).flat_map(stage_seconds).collect()
}

/// The cost model's seconds for the session's evaluations after evaluation `after`.
pub(crate) fn predicted_since(session: &Session, after: Option<u64>) -> f64 {
    session.trace().evals().filter(|e| after.is_none_or(|a| e.eval > a)).map(|e| e.predicted_s()).sum()
}

/// The wall seconds of the session's last evaluation and where they went.
fn last_breakdown(session: &Session) -> Option<(f64, Vec<TimeShare>)> {
    let trace = session.trace();
    let eval = trace.last()?;
    Some((eval.actual_s(), bach_runtime::chart::time_breakdown(eval, &session.devices().profiles())))
}

/// `bach's last evaluation, 12.1 ms: compute:cpu 11.0 ms, overhead 1.1 ms; busy: ...`.
fn breakdown_line(wall: f64, shares: &[TimeShare]) -> String {
    let ms = |s: f64| format!("{:.1} ms", s * 1e3);
    let parts: Vec<String> = shares.iter().map(|s| format!("{} {}", s.key, ms(s.seconds))).collect();
    let busy: Vec<String> = shares
        .iter()
        .filter(|s| s.key != "overhead")
        .map(|s| format!("{} {} ({} events, {})", s.key, ms(s.busy_seconds), s.events, bach_runtime::units::bytes(s.bytes as usize)))
        .collect();
    format!("bach's last evaluation, {}: {}; busy: {}", ms(wall), parts.join(", "), busy.join(", "))
}

/// Names of the devices that computed something in the last bach run.
fn ran_on(session: &Session) -> Vec<String> {
    let trace = session.trace();
    let Some(e) = trace.last() else { return vec![] };
    let ids: BTreeSet<u8> = e.events.iter().filter(|ev| matches!(ev.kind, EventKind::Compute | EventKind::Alloc)).map(|ev| ev.device.0).collect();
    let profiles = session.devices().profiles();
    ids.into_iter().map(|i| profiles.get(i as usize).map_or_else(|| format!("device {i}"), |p| p.name.clone())).collect()
}

#[derive(Serialize)]
struct Record {
    workload: &'static str,
    mode: &'static str,
    log2: u32,
    n: usize,
    inputs: String,
    seconds: f64,
    /// The warm-up run before the timed ones (for bach on a GPU: the evaluation that first
    /// meets the inputs, page-locking them in place; see runtime/src/cuda/memory.rs).
    first_seconds: f64,
    /// Every timed run, in order.
    runs_seconds: Vec<f64>,
    /// bach: the cost model's seconds for the evaluations of one run (beside `seconds`, so
    /// the model's error shows).
    #[serde(skip_serializing_if = "Option::is_none")]
    predicted_seconds: Option<f64>,
    runs: usize,
    checksum: f64,
    device: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    ran_on: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    memory_cap_bytes: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    plan: Option<PlanSummary>,
    /// bach: the wall time of its last evaluation, and where it went (the bar of
    /// `:bach breakdown`).
    #[serde(skip_serializing_if = "Option::is_none")]
    last_evaluation_seconds: Option<f64>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    breakdown: Vec<TimeShare>,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_rel_diff_vs_cpu: Option<f64>,
    /// How the difference to cpu is measured and bounded.
    #[serde(skip_serializing_if = "Option::is_none")]
    check: Option<String>,
}

/// What each mode needs set up before the timed runs.
struct Setup<'g> {
    cols: Columns,
    lazy_inputs: BTreeMap<&'static str, bach::Array<f64>>,
    /// `--inputs lazy`: bach makes its `n` inputs anew each run (`lazy_inputs` is empty).
    made: Option<usize>,
    session: Option<Arc<Session>>,
    gpu: Option<gpu::Runner<'g>>,
}

/// `cols` as lazy arrays of `session` (inputs already in memory: nothing to compute).
fn lazy_inputs(session: &Arc<Session>, cols: &Columns) -> BTreeMap<&'static str, bach::Array<f64>> {
    bach_runtime::with_session(session, || cols.iter().map(|(k, v)| (*k, bach::Array::from_shared(v.clone().into_dyn().into_shared()))).collect())
}

/// One timed run of a mode: from inputs in memory to outputs on the host.
fn run_once(w: Workload, mode: Mode, s: &mut Setup<'_>) -> Result<(f64, Columns), String> {
    // Inputs bach makes itself: new graph nodes each run (outside the timed region; they are
    // computed in it).
    let made = match (mode, s.made, &s.session) {
        (Mode::Bach, Some(n), Some(session)) => Some(bach_runtime::with_session(session, || w.lazy_inputs(n))),
        _ => None,
    };
    let t0 = Instant::now();
    let out: Columns = match mode {
        Mode::Cpu => w.cpu(&s.cols),
        Mode::Bach => {
            let session = s.session.as_ref().expect("a session for bach");
            let out = bach_runtime::with_session(session, || w.bach(made.as_ref().unwrap_or(&s.lazy_inputs))).map_err(|e| e.to_string())?;
            let secs = t0.elapsed().as_secs_f64();
            // Conversion to Array1 for checking is outside the timed region.
            let cols = out.into_iter().map(|(k, v)| (k, v.into_owned().into_dimensionality().expect("1-d outputs"))).collect();
            return Ok((secs, cols));
        }
        Mode::Gpu => s.gpu.as_mut().expect("a gpu runner").run(&s.cols)?,
    };
    Ok((t0.elapsed().as_secs_f64(), out))
}

fn checksum(out: &Columns) -> f64 {
    out.values().map(|c| c.sum()).sum()
}

fn max_rel_diff(a: &Columns, b: &Columns) -> f64 {
    a.iter()
        .map(|(k, x)| {
            let y: &Array1<f64> = &b[k];
            x.iter().zip(y).map(|(p, q)| (p - q).abs() / q.abs().max(1e-300)).fold(0.0, f64::max)
        })
        .fold(0.0, f64::max)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// bach's tolerance against cpu: the same libm, so only summation order may differ.
const BACH_TOLERANCE: f64 = 1e-9;

/// A command with its own flags (`small-arrays`, `panel`).
type OwnCommand = fn(&[String]) -> Result<(), String>;

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let own: Option<OwnCommand> = match argv.first().map(String::as_str) {
        Some("small-arrays") => Some(small::main),
        Some("panel") => Some(panel::main),
        _ => None,
    };
    if let Some(command) = own {
        return match command(&argv[1..]) {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("bach-bench: {e}");
                ExitCode::FAILURE
            }
        };
    }
    let args = match parse(&argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("bach-bench: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    let result = match args.command {
        Command::Bandwidth => bandwidth(&args),
        Command::Plan => plan(&args),
        Command::Cost => cost(&args),
        Command::Calibrate => calibrate(&args),
        Command::Sweep => run_sweep(&args),
        _ if args.ml.is_some() => run_ml(&args),
        _ => run(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bach-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `--timeline FILE`: the timeline of bach's last evaluation, where each op and copy ran (the
/// GPU bundle keeps one per benchmark beside its log).
fn write_timeline(args: &Args, session: Option<&Session>) -> Result<(), String> {
    if let (Some(path), Some(session)) = (&args.timeline, session) {
        let trace = session.trace();
        let eval = trace.last().ok_or("--timeline: bach did not run")?;
        std::fs::write(path, bach_runtime::chart::timeline_svg(eval, &session.devices().profiles())).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    Ok(())
}

/// `run`/`compare` of an ML/CSV workload (`ml.rs`): modes cpu, bach and gpu (`mlgpu.rs`;
/// `compare` adds it when the session has a CUDA device).
fn run_ml(args: &Args) -> Result<(), String> {
    let w = args.ml.expect("an ML workload");
    let mut modes: Vec<&'static str> = match (args.command, args.mode) {
        (Command::Compare, _) => vec!["cpu", "bach"],
        (Command::Run, Mode::Cpu) => vec!["cpu"],
        (Command::Run, Mode::Bach) => vec!["bach"],
        (Command::Run, Mode::Gpu) => vec!["gpu"],
        _ => return Err(format!("`plan` takes black-scholes or haversine, not {}", w.name())),
    };
    let session = if modes.contains(&"bach") { Some(bach_session(device_choice(args.device.clone(), args.memory)?, args)?) } else { None };
    if args.command == Command::Compare && session.as_ref().is_some_and(|s| s.devices().profiles().iter().any(|p| p.kind == DeviceKind::Cuda)) {
        modes.push("gpu");
    }
    ml::run(w, args.log2, args.explicit_seed, &modes, args.repeat, session.clone(), args.dump.as_deref(), || mlgpu::MlGpu::new().map(|g| Box::new(g) as Box<dyn ml::GpuRunner>))?;
    write_timeline(args, session.as_deref())
}

/// `sweep`: the bach session as `run` makes it, then [`sweep::run`].
fn run_sweep(args: &Args) -> Result<(), String> {
    let target = match args.ml {
        Some(w) => sweep::Target::Ml(w),
        None => sweep::Target::Elementwise(args.workload),
    };
    let session = bach_session(device_choice(args.device.clone(), args.memory)?, args)?;
    let out = args.dump.clone().unwrap_or_else(|| PathBuf::from("."));
    sweep::run(args, target, Some(session), &out).map(|_| ())
}

fn bandwidth(args: &Args) -> Result<(), String> {
    gpu::bandwidth(&args.sizes, args.repeat, args.launches, &mut |rec| println!("{}", serde_json::to_string(&rec).expect("serialisable")))
}

fn run(args: &Args) -> Result<(), String> {
    let n = 1usize << args.log2;
    let w = args.workload;
    let mut modes: Vec<Mode> = if args.command == Command::Compare { vec![Mode::Cpu, Mode::Bach] } else { vec![args.mode] };

    // Devices first: a missing GPU is reported before inputs are made.
    let session = if modes.contains(&Mode::Bach) { Some(bach_session(device_choice(args.device.clone(), args.memory)?, args)?) } else { None };
    let has_cuda = session.as_ref().is_some_and(|s| s.devices().profiles().iter().any(|p| p.kind == DeviceKind::Cuda));
    if args.command == Command::Compare && has_cuda {
        modes.push(Mode::Gpu);
    }
    let gpu = if modes.contains(&Mode::Gpu) { Some(gpu::Gpu::new()?) } else { None };

    let cols = w.inputs(n, args.inputs);
    let made = (args.inputs == Inputs::Lazy).then_some(n);
    let lazy_inputs = match &session {
        Some(s) if made.is_none() => lazy_inputs(s, &cols),
        _ => BTreeMap::new(),
    };
    let runner = match &gpu {
        Some(g) => Some(gpu::Runner::new(g, w, n)?),
        None => None,
    };
    let mut setup = Setup { cols, lazy_inputs, made, session, gpu: runner };
    let inputs = args.inputs.describe();

    // Warm-up, then `repeat` timed runs with the modes interleaved.
    let mut times: Vec<Vec<f64>> = vec![vec![]; modes.len()];
    let mut outputs: Vec<Columns> = vec![Columns::new(); modes.len()];
    let mut first = vec![0.0; modes.len()];
    let mut predicted = None;
    for round in 0..=args.repeat {
        for (m, &mode) in modes.iter().enumerate() {
            let before = setup.session.as_deref().and_then(last_eval);
            let (secs, out) = run_once(w, mode, &mut setup)?;
            if round == 0 {
                first[m] = secs;
            }
            if round > 0 {
                times[m].push(secs);
                if mode == Mode::Bach {
                    predicted = setup.session.as_deref().map(|s| predicted_since(s, before));
                }
            }
            outputs[m] = out;
        }
    }
    let mut seconds = BTreeMap::new();
    for (m, &mode) in modes.iter().enumerate() {
        let against_cpu = mode != Mode::Cpu && modes[0] == Mode::Cpu;
        // Bach on a GPU runs CUDA's transcendentals, which differ from libm by an ulp or two:
        // it is checked as the hand-written gpu mode is (a call price can cancel to nearly 0,
        // where a plain relative difference explodes).
        let bach_on_gpu = mode == Mode::Bach && setup.session.as_deref().is_some_and(|s| s.devices().profiles().iter().any(|p| p.kind == DeviceKind::Cuda));
        let (diff, check, tolerance) = match mode {
            Mode::Gpu => (max_scaled_diff_opt(against_cpu, &outputs[m], &outputs[0]), format!("|gpu - cpu| / max(|cpu|, 1) <= {:e}", gpu::GPU_TOLERANCE), gpu::GPU_TOLERANCE),
            Mode::Bach if bach_on_gpu => (
                max_scaled_diff_opt(against_cpu, &outputs[m], &outputs[0]),
                format!("|bach - cpu| / max(|cpu|, 1) <= {:e} (bach ran on a GPU)", gpu::GPU_TOLERANCE),
                gpu::GPU_TOLERANCE,
            ),
            _ => (against_cpu.then(|| max_rel_diff(&outputs[m], &outputs[0])), format!("|bach - cpu| / |cpu| <= {BACH_TOLERANCE:e}"), BACH_TOLERANCE),
        };
        let session = setup.session.as_deref().filter(|_| mode == Mode::Bach);
        let (last_evaluation_seconds, breakdown) = match session.and_then(last_breakdown) {
            Some((wall, shares)) => (Some(wall), shares),
            None => (None, vec![]),
        };
        let rec = Record {
            workload: w.name(),
            mode: mode.name(),
            log2: args.log2,
            n,
            inputs: inputs.clone(),
            seconds: median(times[m].clone()),
            first_seconds: first[m],
            runs_seconds: times[m].clone(),
            predicted_seconds: predicted.filter(|_| mode == Mode::Bach),
            runs: times[m].len(),
            checksum: checksum(&outputs[m]),
            device: match mode {
                Mode::Cpu => "cpu (1 thread, eager ndarray)".into(),
                Mode::Bach => session.expect("bach session").devices().report().trim_end().lines().collect::<Vec<_>>().join("; "),
                Mode::Gpu => gpu.as_ref().expect("gpu").name.clone(),
            },
            ran_on: session.map(ran_on),
            memory_cap_bytes: session.and_then(|s| s.config().memory_cap),
            plan: session.and_then(plan_summary),
            last_evaluation_seconds,
            breakdown,
            max_rel_diff_vs_cpu: diff,
            check: diff.map(|_| check),
        };
        seconds.insert(mode.name(), rec.seconds);
        let said = rec.last_evaluation_seconds.map(|wall| breakdown_line(wall, &rec.breakdown));
        if args.json || args.command == Command::Compare {
            println!("{}", serde_json::to_string(&rec).expect("serialisable"));
            if let Some(line) = said.filter(|_| !args.json) {
                println!("{line}");
            }
        } else {
            let plan = rec.plan.as_ref().map_or(String::new(), |p| {
                format!(
                    "; plan: {} stage(s), {} piece(s){}, {} transfer(s) in {} copies ({} in, {} out)",
                    p.stages,
                    p.pieces,
                    if p.paged { ", paged" } else { "" },
                    p.transfers,
                    p.copies,
                    bach_runtime::units::bytes(p.h2d_bytes as usize),
                    bach_runtime::units::bytes(p.d2h_bytes as usize)
                )
            });
            let ran = rec.ran_on.as_ref().map_or(String::new(), |r| format!("; ran on {}", r.join(" + ")));
            let predicted = rec.predicted_seconds.map_or(String::new(), |p| format!(" (predicted {p:.4} s)"));
            println!(
                "{} {} n=2^{} ({} inputs): {:.4} s median of {} runs{predicted}, checksum {:.10e}, on {}{ran}{plan}",
                rec.workload, rec.mode, rec.log2, rec.inputs, rec.seconds, rec.runs, rec.checksum, rec.device
            );
            if let Some(line) = said {
                println!("{line}");
            }
        }
        if let Some(d) = diff {
            if d > tolerance {
                return Err(format!("{} disagrees with cpu: max difference {d:e} ({})", mode.name(), rec.check.unwrap_or_default()));
            }
        }
    }
    if args.command == Command::Compare {
        println!("ratio cpu/bach = {:.2}", seconds["cpu"] / seconds["bach"]);
        if let Some(g) = seconds.get("gpu") {
            println!("ratio gpu/bach = {:.2}", g / seconds["bach"]);
        }
    }
    write_timeline(args, setup.session.as_deref())?;
    if let Some(dir) = &args.dump {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        for (name, col) in setup.cols.iter().chain(outputs[0].iter()) {
            let path = dir.join(format!("{name}.npy"));
            // Through Bach's own writer, so the numpy tests that load these check it too.
            bach::Array::from_array(col.clone()).write_npy(&path).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// One op of a planned workload.
#[derive(Serialize)]
struct PlannedOp {
    id: u64,
    op: String,
    /// "cpu" or "accelerator".
    device: &'static str,
    stage: usize,
    /// Estimated seconds on each device (null: it cannot run there).
    cpu_seconds: f64,
    accelerator_seconds: Option<f64>,
    reason: String,
}

#[derive(Serialize)]
struct PlannedTransfer {
    id: u64,
    to: &'static str,
    bytes: usize,
    /// The stage that needs it; null for the result's copy at the end.
    stage: Option<usize>,
    streamed: bool,
}

#[derive(Serialize)]
struct PlannedStage {
    device: &'static str,
    pieces: usize,
    piece_rows: usize,
    paged: bool,
}

#[derive(Serialize)]
struct PlanRecord {
    workload: &'static str,
    log2: u32,
    n: usize,
    policy: String,
    cost_model: String,
    /// The machine the cost model was measured on, when the plan's devices are not it.
    prediction_for: Option<String>,
    devices: Vec<String>,
    predicted_seconds: f64,
    predicted_compute_seconds: f64,
    predicted_copies_seconds: f64,
    ops: Vec<PlannedOp>,
    transfers: Vec<PlannedTransfer>,
    stages: Vec<PlannedStage>,
    pieces: usize,
    notes: Vec<String>,
}

/// `cost`: the session's cost model as a profile file (JSON; `--profile FILE` reads it back,
/// and so do `:bach cost profile FILE` and `:bach whatif profile FILE`).
fn cost(args: &Args) -> Result<(), String> {
    let session = bach_session(device_choice(args.device.clone(), args.memory)?, args)?;
    print!("{}", session.config().cost.to_json());
    Ok(())
}

/// `calibrate`: measure this machine's devices (`bach::calibrate`), print what was fitted,
/// save the profile where sessions on this host and these devices load it (and to `--out`).
fn calibrate(args: &Args) -> Result<(), String> {
    let session = bach_session(device_choice(args.device.clone(), args.memory)?, args)?;
    let path = bach_runtime::cost::saved_profile_path(&session.devices().profiles());
    let c = bach::calibrate_session(&session, path.as_deref()).map_err(|e| e.to_string())?;
    print!("{c}");
    if let Some(out) = &args.dump {
        c.model.save(out)?;
        println!("written to {}", out.display());
    }
    Ok(())
}

/// `plan`: the workload's plan as one JSON line; nothing runs and no input is made.
fn plan(args: &Args) -> Result<(), String> {
    if let Some(w) = args.ml {
        // It planned Black-Scholes instead, silently, before.
        return Err(format!(
            "`plan` plans the elementwise workloads (black-scholes, haversine) from placeholders; for {} run it (`run {} --log2 N --profile ...` prints its stages predicted and measured), or `:bach whatif` in a notebook",
            w.name(),
            w.name()
        ));
    }
    let n = 1usize << args.log2;
    let w = args.workload;
    let session = bach_session(device_choice(args.device.clone(), args.memory)?, args)?;
    let mut devices = session.devices().profiles();
    if devices.len() == 1 {
        devices.push(DeviceProfile::hypothetical_gpu("NVIDIA H100 80GB HBM3", 80 << 30));
    }
    let outputs = bach_runtime::with_session(&session, || {
        let inputs: BTreeMap<&'static str, bach::Array<f64>> =
            w.input_names().into_iter().map(|name| (name, bach::Array::from_lazy(session.placeholder(Meta::new(bach_runtime::DType::F64, [n]), name)).expect("f64"))).collect();
        w.bach_graph(&inputs)
    });
    let owned: Vec<bach_runtime::Lazy> = outputs.iter().map(|(_, a)| a.lazy()).collect();
    let targets: Vec<&bach_runtime::Lazy> = owned.iter().collect();
    let p = session.plan_for(&targets, &devices).map_err(|e| e.to_string())?;
    let side = |d: bach_runtime::DeviceId| if d == CPU { "cpu" } else { "accelerator" };
    let rec = PlanRecord {
        workload: w.name(),
        log2: args.log2,
        n,
        policy: p.policy.to_string(),
        cost_model: session.config().cost.source,
        prediction_for: p.predicted_for.clone(),
        devices: p.devices.iter().map(|d| d.name.clone()).collect(),
        predicted_seconds: p.predicted.seconds(),
        predicted_compute_seconds: p.predicted.compute_s,
        predicted_copies_seconds: p.predicted.copies_s,
        ops: p
            .steps
            .iter()
            .map(|st| PlannedOp {
                id: st.id,
                op: st.op.clone(),
                device: side(st.device),
                stage: st.stage,
                cpu_seconds: st.cpu_s,
                accelerator_seconds: st.accelerator_s.is_finite().then_some(st.accelerator_s),
                reason: st.reason.to_string(),
            })
            .collect(),
        transfers: p.transfers.iter().map(|t| PlannedTransfer { id: t.id, to: side(t.to), bytes: t.bytes, stage: t.stage, streamed: t.streamed }).collect(),
        stages: p.stages.iter().map(|s| PlannedStage { device: side(s.device), pieces: s.pieces, piece_rows: s.piece_rows, paged: s.paged }).collect(),
        pieces: p.total_pieces(),
        notes: p.notes.clone(),
    };
    println!("{}", serde_json::to_string(&rec).expect("serialisable"));
    Ok(())
}

fn max_scaled_diff_opt(against_cpu: bool, out: &Columns, cpu: &Columns) -> Option<f64> {
    against_cpu.then(|| gpu::max_scaled_diff(out, cpu))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Result<Args, String> {
        parse(&s.split_whitespace().map(String::from).collect::<Vec<_>>())
    }

    #[test]
    fn device_and_memory_flags() {
        let a = args("run black-scholes --log2 20 --device emulated --memory 16MiB").unwrap();
        assert_eq!(a.device, Some(DeviceChoice::Emulated(None)));
        assert_eq!(a.memory, Some(16 << 20));
        assert_eq!(device_choice(a.device.clone(), a.memory).unwrap(), DeviceChoice::Emulated(Some(16 << 20)));

        let a = args("compare haversine --device emulated:1GiB --memory 64MiB").unwrap();
        assert_eq!(device_choice(a.device.clone(), a.memory).unwrap(), DeviceChoice::Emulated(Some(1 << 30)), "an explicit size wins");
        assert_eq!(a.memory, Some(64 << 20));

        for (flag, want) in [("auto", DeviceChoice::Auto), ("cpu", DeviceChoice::Cpu), ("cuda", DeviceChoice::Cuda)] {
            assert_eq!(args(&format!("run haversine --device {flag}")).unwrap().device, Some(want));
        }
        assert_eq!(args("run haversine").unwrap().device, None);
        assert_eq!(args("run haversine --memory 1.5GiB").unwrap().memory, Some(3 << 29));
        assert_eq!(args("run haversine --memory 500MB").unwrap().memory, Some(500_000_000));
    }

    #[test]
    fn bad_flags_say_why() {
        for (line, want) in [
            ("run black-scholes --device tpu", "--device"),
            ("run black-scholes --memory lots", "--memory"),
            ("run black-scholes --memory 3furlongs", "unit"),
            ("run black-scholes --memory 0", "--memory 0"),
            ("run black-scholes --device", "needs a value"),
            ("run black-scholes --mode fpga", "unknown mode"),
            ("bandwidth --device cuda", "bandwidth"),
            ("run black-scholes --sizes 1MiB", "unknown flag"),
            ("bandwidth --sizes 1MiB,x", "--sizes"),
        ] {
            let e = args(line).unwrap_err();
            assert!(e.contains(want), "{line}: {e}");
        }
    }

    #[test]
    fn modes_and_bandwidth_flags() {
        assert_eq!(args("run black-scholes --mode gpu").unwrap().mode, Mode::Gpu);
        let a = args("bandwidth --sizes 1MiB,2GiB --repeat 3 --launches 100").unwrap();
        assert_eq!(a.command, Command::Bandwidth);
        assert_eq!(a.sizes, vec![1 << 20, 2 << 30]);
        assert_eq!((a.repeat, a.launches), (3, 100));
        let a = args("bandwidth").unwrap();
        assert_eq!(a.sizes, vec![1 << 20, 64 << 20, 1 << 30]);
    }

    #[test]
    fn cuda_without_a_gpu_is_an_error_with_the_reason() {
        if gpu::open().is_ok() {
            return; // a GPU host: nothing to check here
        }
        let e = bach_session(DeviceChoice::Cuda, &args("run haversine").unwrap()).expect_err("no CUDA device here");
        assert!(e.starts_with("--device cuda: ") && e.len() > "--device cuda: ".len(), "{e}");
        let e = gpu::Gpu::new().err().expect("no GPU here");
        assert!(e.starts_with("no GPU: "), "{e}");
    }

    #[test]
    fn emulated_session_gets_its_memory_and_the_cap() {
        let s = bach_session(DeviceChoice::Emulated(Some(16 << 20)), &args("run haversine --memory 16MiB --policy greedy").unwrap()).unwrap();
        let p = s.devices().profiles();
        assert_eq!(p.len(), 2);
        assert_eq!(p[1].kind, DeviceKind::Emulated);
        assert_eq!(p[1].memory_bytes, Some(16 << 20));
        assert_eq!(s.config().memory_cap, Some(16 << 20));
        assert_eq!(s.config().policy, Policy::Greedy);
    }

    #[test]
    fn bach_runs_in_its_own_session_and_reports_its_plan() {
        let s = bach_session(DeviceChoice::Emulated(Some(4 << 20)), &args("run black-scholes --memory 4MiB").unwrap()).unwrap();
        let w = Workload::BlackScholes;
        let cols = w.inputs(1 << 16, Inputs::Random(3));
        let lazy = lazy_inputs(&s, &cols);
        let mut setup = Setup { cols, lazy_inputs: lazy, made: None, session: Some(s.clone()), gpu: None };
        let (_, out) = run_once(w, Mode::Bach, &mut setup).unwrap();
        let want = w.cpu(&setup.cols);
        assert!(max_rel_diff(&out, &want) <= BACH_TOLERANCE);
        let plan = plan_summary(&s).expect("the run is in this session's trace");
        assert!(plan.stages >= 1 && plan.pieces >= 1, "{plan:?}");
        assert!(!ran_on(&s).is_empty());
        assert_eq!(bach_runtime::global().trace().evals().count(), 0, "nothing ran in the global session");
    }

    #[test]
    fn inputs_bach_makes_where_first_used_agree_with_the_same_columns_in_memory() {
        assert_eq!(args("run haversine --inputs lazy").unwrap().inputs, Inputs::Lazy);
        assert_eq!(args("run haversine --inputs reference").unwrap().inputs, Inputs::Reference);
        assert_eq!(args("run haversine --seed 4").unwrap().inputs, Inputs::Random(4));
        assert!(args("run tsvd --inputs lazy").unwrap_err().contains("black-scholes and haversine only"));
        assert!(args("run haversine --inputs nosuch").unwrap_err().contains("random, reference or lazy"));
        let s = bach_session(DeviceChoice::Emulated(Some(64 << 10)), &args("run haversine --memory 64KiB --policy greedy").unwrap()).unwrap();
        let (w, n) = (Workload::Haversine, (1 << 14) + 5);
        let cols = w.inputs(n, Inputs::Lazy);
        assert_eq!(cols["lon2"][0], std::f64::consts::PI, "every second column runs backwards");
        let mut setup = Setup { cols, lazy_inputs: BTreeMap::new(), made: Some(n), session: Some(s.clone()), gpu: None };
        for _ in 0..2 {
            let (_, out) = run_once(w, Mode::Bach, &mut setup).unwrap();
            assert!(max_rel_diff(&out, &w.cpu(&setup.cols)) <= BACH_TOLERANCE);
        }
        let (wall, shares) = last_breakdown(&s).expect("bach ran");
        let total: f64 = shares.iter().map(|x| x.seconds).sum();
        assert!((total - wall).abs() < 1e-9, "{total} vs {wall}");
        let h2d: u64 = shares.iter().filter(|x| x.key == "h2d").map(|x| x.bytes).sum();
        assert!(h2d < 1024, "the inputs were made on the accelerator, not copied in: {h2d} bytes in");
        assert!(shares.iter().any(|x| x.key == "d2h" && x.bytes == n as u64 * 8), "{}", breakdown_line(wall, &shares));
    }

    #[test]
    fn sweep_flags_and_a_tiny_sweep_of_an_elementwise_and_an_ml_workload() {
        assert!(args("sweep black-scholes --from 6 --to 4").unwrap_err().contains("from <= to"));
        assert!(args("sweep tsvd --limit 0").unwrap_err().contains("--limit"));
        assert!(args("run tsvd --from 3").unwrap_err().contains("unknown flag"));
        let a = args("sweep black-scholes --from 12 --to 15 --device emulated --memory 1MiB --policy greedy --limit 30").unwrap();
        assert_eq!((a.sweep.from, a.sweep.to, a.repeat, a.sweep.limit), (12, 15, 1, 30.0));
        let out = std::env::temp_dir().join(format!("bach-bench-sweep-test-{}", std::process::id()));
        let s = bach_session(device_choice(a.device.clone(), a.memory).unwrap(), &a).unwrap();
        let r = sweep::run(&a, sweep::Target::Elementwise(Workload::BlackScholes), Some(s), &out).unwrap();
        assert_eq!((r.ran("cpu").len(), r.ran("bach").len()), (4, 4));
        assert!(r.paging_from().is_some(), "2^15 x 5 inputs do not fit 1 MiB: {r}");
        let json: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(out.join("sweep-black-scholes.json")).unwrap()).unwrap();
        assert_eq!(json["points"].as_array().unwrap().len(), 8);
        assert!(std::fs::read_to_string(out.join("sweep-black-scholes.svg")).unwrap().contains("paging from 2^"));

        let a = args("sweep tsvd --from 5 --to 6 --modes bach,gpu").unwrap();
        let s = bach_session(DeviceChoice::Cpu, &a).unwrap();
        if gpu::open().is_err() {
            let e = sweep::run(&a, sweep::Target::Ml(ml::Workload::Tsvd), Some(s.clone()), &out).unwrap_err();
            assert!(e.contains("no GPU"), "{e}");
        }
        let a = args("sweep tsvd --from 5 --to 6 --modes cpu,bach").unwrap();
        let r = sweep::run(&a, sweep::Target::Ml(ml::Workload::Tsvd), Some(s), &out).unwrap();
        assert_eq!((r.ran("cpu").len(), r.ran("bach").len()), (2, 2), "{r}");
        let _ = std::fs::remove_dir_all(&out);
    }
}

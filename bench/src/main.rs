//! `bach-bench`: the workload benchmark harness.
//!
//! ```text
//! bach-bench run <workload> --log2 N --mode cpu|bach [--inputs random|reference] [--seed S]
//!                [--repeat R] [--json] [--dump DIR]
//! bach-bench compare <workload> --log2 N [--inputs ...] [--seed S] [--repeat R]
//! ```
//! `compare` runs the modes interleaved in one process and ends with `ratio cpu/bach = X`.
//! Flags are parsed by hand: there are six of them, and the harness should build in seconds.

mod workloads;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Instant;

use ndarray::Array1;
use serde::Serialize;
use workloads::{Columns, Workload};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Cpu,
    Bach,
}

impl Mode {
    fn parse(s: &str) -> Result<Self, String> {
        match s {
            "cpu" => Ok(Mode::Cpu),
            "bach" => Ok(Mode::Bach),
            "gpu" => Err("mode `gpu` (hand-written CUDA) arrives with the CUDA device; this build has cpu and bach".into()),
            _ => Err(format!("unknown mode `{s}` (known: cpu, bach)")),
        }
    }
    fn name(self) -> &'static str {
        match self {
            Mode::Cpu => "cpu",
            Mode::Bach => "bach",
        }
    }
}

struct Args {
    command: String,
    workload: Workload,
    log2: u32,
    mode: Mode,
    seed: Option<u32>,
    repeat: usize,
    json: bool,
    dump: Option<PathBuf>,
}

const USAGE: &str = "usage:
  bach-bench run <black-scholes|haversine> --log2 N --mode cpu|bach [--inputs random|reference] [--seed S] [--repeat R] [--json] [--dump DIR]
  bach-bench compare <black-scholes|haversine> --log2 N [--inputs random|reference] [--seed S] [--repeat R]";

fn parse(argv: &[String]) -> Result<Args, String> {
    let mut it = argv.iter();
    let command = it.next().ok_or("no command")?.clone();
    if command != "run" && command != "compare" {
        return Err(format!("unknown command `{command}`"));
    }
    let workload = Workload::parse(it.next().ok_or("no workload")?)?;
    let mut a = Args { command, workload, log2: 20, mode: Mode::Bach, seed: Some(1), repeat: 5, json: false, dump: None };
    let mut inputs = "random".to_string();
    let mut seed = 1u32;
    while let Some(flag) = it.next() {
        let mut value = || it.next().cloned().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--log2" => a.log2 = value()?.parse().map_err(|e| format!("--log2: {e}"))?,
            "--mode" => a.mode = Mode::parse(&value()?)?,
            "--inputs" => inputs = value()?,
            "--seed" => seed = value()?.parse().map_err(|e| format!("--seed: {e}"))?,
            "--repeat" => a.repeat = value()?.parse::<usize>().map_err(|e| format!("--repeat: {e}"))?.max(1),
            "--json" => a.json = true,
            "--dump" => a.dump = Some(PathBuf::from(value()?)),
            other => return Err(format!("unknown flag `{other}`")),
        }
    }
    if a.log2 > 34 {
        return Err("--log2 above 34 does not fit this harness".into());
    }
    a.seed = match inputs.as_str() {
        "random" => Some(seed),
        "reference" => None,
        other => return Err(format!("--inputs {other}: expected random or reference")),
    };
    Ok(a)
}

#[derive(Serialize)]
struct Record {
    workload: &'static str,
    mode: &'static str,
    log2: u32,
    n: usize,
    inputs: String,
    seconds: f64,
    runs: usize,
    checksum: f64,
    device: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    max_rel_diff_vs_cpu: Option<f64>,
}

/// One timed run of a mode: from inputs in memory to outputs on the host.
fn run_once(w: Workload, mode: Mode, cols: &Columns, lazy_inputs: &BTreeMap<&'static str, bach::Array<f64>>) -> Result<(f64, Columns), String> {
    let t0 = Instant::now();
    let out: Columns = match mode {
        Mode::Cpu => w.cpu(cols),
        Mode::Bach => {
            let out = w.bach(lazy_inputs).map_err(|e| e.to_string())?;
            let secs = t0.elapsed().as_secs_f64();
            // Conversion to Array1 for checking is outside the timed region.
            let cols = out.into_iter().map(|(k, v)| (k, v.into_owned().into_dimensionality().expect("1-d outputs"))).collect();
            return Ok((secs, cols));
        }
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

fn device(mode: Mode) -> String {
    match mode {
        Mode::Cpu => "cpu (1 thread, eager ndarray)".into(),
        Mode::Bach => bach::runtime::global().devices().profiles()[0].name.clone(),
    }
}

fn main() -> ExitCode {
    let argv: Vec<String> = std::env::args().skip(1).collect();
    let args = match parse(&argv) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("bach-bench: {e}\n{USAGE}");
            return ExitCode::from(2);
        }
    };
    match run(&args) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bach-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn run(args: &Args) -> Result<(), String> {
    let n = 1usize << args.log2;
    let w = args.workload;
    let cols = w.inputs(n, args.seed);
    let lazy_inputs: BTreeMap<&'static str, bach::Array<f64>> =
        cols.iter().map(|(k, v)| (*k, bach::Array::from_shared(v.clone().into_dyn().into_shared()))).collect();
    let modes: Vec<Mode> = if args.command == "compare" { vec![Mode::Cpu, Mode::Bach] } else { vec![args.mode] };
    let inputs = args.seed.map_or("reference".to_string(), |s| format!("random (seed {s})"));

    // Warm-up, then `repeat` timed runs with the modes interleaved.
    let mut times: Vec<Vec<f64>> = vec![vec![]; modes.len()];
    let mut outputs: Vec<Columns> = vec![Columns::new(); modes.len()];
    for round in 0..=args.repeat {
        for (m, &mode) in modes.iter().enumerate() {
            let (secs, out) = run_once(w, mode, &cols, &lazy_inputs)?;
            if round > 0 {
                times[m].push(secs);
            }
            outputs[m] = out;
        }
    }
    let mut seconds = vec![];
    for (m, &mode) in modes.iter().enumerate() {
        let diff = (mode != Mode::Cpu && modes[0] == Mode::Cpu).then(|| max_rel_diff(&outputs[m], &outputs[0]));
        let rec = Record {
            workload: w.name(),
            mode: mode.name(),
            log2: args.log2,
            n,
            inputs: inputs.clone(),
            seconds: median(times[m].clone()),
            runs: times[m].len(),
            checksum: checksum(&outputs[m]),
            device: device(mode),
            max_rel_diff_vs_cpu: diff,
        };
        seconds.push(rec.seconds);
        if args.json || args.command == "compare" {
            println!("{}", serde_json::to_string(&rec).expect("serialisable"));
        } else {
            println!("{} {} n=2^{} ({} inputs): {:.4} s median of {} runs, checksum {:.10e}, on {}", rec.workload, rec.mode, rec.log2, rec.inputs, rec.seconds, rec.runs, rec.checksum, rec.device);
        }
        if let Some(d) = diff {
            if d > 1e-9 {
                return Err(format!("{} disagrees with cpu: max relative difference {d:e}", mode.name()));
            }
        }
    }
    if args.command == "compare" {
        println!("ratio cpu/bach = {:.2}", seconds[0] / seconds[1]);
    }
    if let Some(dir) = &args.dump {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        for (name, col) in cols.iter().chain(outputs[0].iter()) {
            let path = dir.join(format!("{name}.npy"));
            ndarray_npy::write_npy(&path, col).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        }
    }
    Ok(())
}

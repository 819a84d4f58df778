//! `bach-bench sweep`: the paper's Figure 3 for one workload, through [`bach::sweep::Sweep`]
//! (the function a notebook calls too). Each mode makes its inputs outside the timed region;
//! cpu and bach share them at each size.

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use bach::sweep::{Sweep, SweepResult};
use bach_runtime::{BachError, DeviceKind, Session};

use crate::workloads::{Columns, Inputs};
use crate::{gpu, ml, Args};

/// Which workload a sweep runs.
#[derive(Clone, Copy)]
pub enum Target {
    Elementwise(crate::workloads::Workload),
    Ml(ml::Workload),
}

impl Target {
    fn name(self) -> &'static str {
        match self {
            Target::Elementwise(w) => w.name(),
            Target::Ml(w) => w.name(),
        }
    }
    /// What 2^k counts.
    fn x_desc(self) -> &'static str {
        match self {
            Target::Elementwise(_) => "elements",
            Target::Ml(ml::Workload::CrimeIndex | ml::Workload::Tsvd) => "rows",
            Target::Ml(ml::Workload::PcaKnn) => "test-set copies",
            Target::Ml(_) => "samples",
        }
    }
}

/// One size's columns, and the same as lazy arrays of the bach session.
type ElementwiseInputs = (u32, Columns, BTreeMap<&'static str, bach::Array<f64>>);

/// A harness error as the runtime's: "out of memory" stays recognisable, so the sweep stops
/// the mode as out of memory rather than failed.
fn as_bach(e: String) -> BachError {
    if e.to_lowercase().contains("out of memory") {
        BachError::DeviceOutOfMemory { device: "gpu".into(), detail: e }
    } else {
        BachError::Io(e)
    }
}

/// Run the sweep, print its table, write `sweep-<workload>.json` and `.svg` into `out`.
pub fn run(args: &Args, target: Target, session: Option<Arc<Session>>, out: &Path) -> Result<SweepResult, String> {
    let s = &args.sweep;
    let has_cuda = session.as_ref().is_some_and(|s| s.devices().profiles().iter().any(|p| p.kind == DeviceKind::Cuda));
    let modes: Vec<String> = match &s.modes {
        Some(m) => m.clone(),
        None if has_cuda => vec!["cpu".into(), "bach".into(), "gpu".into()],
        None => vec!["cpu".into(), "bach".into()],
    };
    for m in &modes {
        if !matches!(m.as_str(), "cpu" | "bach" | "gpu") {
            return Err(format!("unknown mode `{m}` (known: cpu, bach, gpu)"));
        }
    }
    let wants_gpu = modes.iter().any(|m| m == "gpu");
    let gpu = if wants_gpu && matches!(target, Target::Elementwise(_)) { Some(gpu::Gpu::new()?) } else { None };
    let ml_gpu = if wants_gpu && matches!(target, Target::Ml(_)) { Some(RefCell::new(crate::mlgpu::MlGpu::new()?)) } else { None };
    let session = session.ok_or("the sweep needs a bach session")?;
    let scratch = std::env::temp_dir().join(format!("bach-sweep-{}-{}", target.name(), std::process::id()));
    let inputs = args.inputs;

    // The inputs of the last size asked for, shared by the modes (they run interleaved).
    let elementwise: RefCell<Option<ElementwiseInputs>> = RefCell::new(None);
    let ml_inputs: RefCell<Option<(u32, ml::Inputs)>> = RefCell::new(None);
    let make_elementwise = |w: crate::workloads::Workload, k: u32| {
        let mut c = elementwise.borrow_mut();
        if c.as_ref().is_none_or(|c| c.0 != k) {
            *c = None; // free the last size's inputs first
            let cols = w.inputs(1 << k, inputs);
            // `--inputs lazy`: bach makes its inputs anew each run (below).
            let lazy = if inputs == Inputs::Lazy { BTreeMap::new() } else { crate::lazy_inputs(&session, &cols) };
            *c = Some((k, cols, lazy));
        }
    };
    let make_ml = |w: ml::Workload, k: u32| -> Result<(), String> {
        let mut c = ml_inputs.borrow_mut();
        if c.as_ref().is_none_or(|c| c.0 != k) {
            *c = None;
            *c = Some((k, ml::inputs(w, k, args.explicit_seed, &scratch)?));
        }
        Ok(())
    };

    let (elementwise, ml_inputs, session, gpu, ml_gpu) = (&elementwise, &ml_inputs, &session, gpu.as_ref(), ml_gpu.as_ref());
    let mut sweep = Sweep::new(target.name(), s.from..=s.to).time_limit(s.limit).repeat(args.repeat).x_desc(target.x_desc()).watch(session).progress(true);
    for mode in &modes {
        let timer: Box<dyn FnMut(u32) -> bach::Result<f64> + '_> = match (mode.as_str(), target) {
            ("cpu", Target::Elementwise(w)) => Box::new(move |k| {
                make_elementwise(w, k);
                let c = elementwise.borrow();
                let cols = &c.as_ref().expect("inputs").1;
                bach::sweep::timed(|| Ok(w.cpu(cols)))
            }),
            ("bach", Target::Elementwise(w)) => Box::new(move |k| {
                make_elementwise(w, k);
                let c = elementwise.borrow();
                let lazy = &c.as_ref().expect("inputs").2;
                bach_runtime::with_session(session, || {
                    let made = (inputs == Inputs::Lazy).then(|| w.lazy_inputs(1 << k));
                    bach::sweep::timed(|| w.bach(made.as_ref().unwrap_or(lazy)))
                })
            }),
            ("gpu", Target::Elementwise(w)) => {
                let g = gpu.expect("a gpu");
                Box::new(move |k| {
                    make_elementwise(w, k);
                    let c = elementwise.borrow();
                    let cols = &c.as_ref().expect("inputs").1;
                    // Device buffers for this size are set up outside the timed region.
                    let mut runner = gpu::Runner::new(g, w, 1 << k).map_err(as_bach)?;
                    bach::sweep::timed(|| runner.run(cols).map_err(as_bach))
                })
            }
            ("cpu", Target::Ml(w)) => Box::new(move |k| {
                make_ml(w, k).map_err(as_bach)?;
                let c = ml_inputs.borrow();
                let inp = &c.as_ref().expect("inputs").1;
                bach::sweep::timed(|| ml::cpu(w, inp).map_err(as_bach))
            }),
            ("bach", Target::Ml(w)) => Box::new(move |k| {
                make_ml(w, k).map_err(as_bach)?;
                let c = ml_inputs.borrow();
                let inp = &c.as_ref().expect("inputs").1;
                bach::sweep::timed(|| ml::bach(w, inp, session).map_err(as_bach))
            }),
            ("gpu", Target::Ml(w)) => {
                let g = ml_gpu.expect("a gpu");
                Box::new(move |k| {
                    make_ml(w, k).map_err(as_bach)?;
                    let c = ml_inputs.borrow();
                    let inp = &c.as_ref().expect("inputs").1;
                    bach::sweep::timed(|| g.borrow_mut().run(w, inp).map_err(as_bach))
                })
            }
            _ => unreachable!("modes checked above"),
        };
        sweep = sweep.mode(mode, timer);
    }
    let result = sweep.run();
    drop((elementwise.take(), ml_inputs.take()));
    let _ = std::fs::remove_dir_all(&scratch);
    print!("{result}");
    std::fs::create_dir_all(out).map_err(|e| format!("cannot create {}: {e}", out.display()))?;
    for (ext, text) in [("json", result.to_json()), ("svg", result.svg())] {
        let path = out.join(format!("sweep-{}.{ext}", target.name()));
        std::fs::write(&path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        println!("wrote {}", path.display());
    }
    Ok(result)
}

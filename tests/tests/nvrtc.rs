//! The CUDA kernels compile, on machines without a GPU: every kernel of the library
//! (`bach::kernels::all()`) is compiled with NVRTC for the H100/H200 (compute_90) and for the
//! oldest architecture NVRTC 13 supports (compute_75; it refuses compute_60), and the PTX
//! must define the function the device launches. Only NVRTC is needed: CI installs it from
//! PyPI (`nvidia-cuda-nvrtc`) and sets `BACH_REQUIRE_NVRTC=1`, so that a missing NVRTC fails
//! there; elsewhere these tests pass saying loudly that they were skipped.
//!
//! The `#[ignore]`d tests need a GPU: on a GPU host run
//! `cargo test --release -p bach-tests --test nvrtc -- --ignored --nocapture`.

use std::collections::BTreeMap;

use bach_runtime::trace::EventKind;
use bach_runtime::{cuda, oa, split, DeviceChoice, DeviceId, Devices, Launch, Session, Value};
use ndarray::{ArrayD, IxDyn};

/// The newest and the oldest architecture the kernels must compile for.
const ARCHS: [&str; 2] = ["compute_90", "compute_75"];

/// Whether NVRTC can be loaded; without it the test is skipped (or fails under
/// `BACH_REQUIRE_NVRTC=1`).
fn have_nvrtc(test: &str) -> bool {
    match cuda::nvrtc_version() {
        Ok((major, minor)) => {
            eprintln!("{test}: NVRTC {major}.{minor}");
            true
        }
        Err(why) if std::env::var("BACH_REQUIRE_NVRTC").as_deref() == Ok("1") => panic!("BACH_REQUIRE_NVRTC=1 but {why}"),
        Err(why) => {
            eprintln!("\n**** {test}: skipped: NVRTC not found ({why}) ****\n");
            false
        }
    }
}

#[test]
fn every_library_kernel_compiles_for_old_and_new_gpus() {
    if !have_nvrtc("every_library_kernel_compiles_for_old_and_new_gpus") {
        return;
    }
    let kernels = bach::kernels::all();
    assert!(kernels.len() > 20, "only {} kernels listed", kernels.len());
    // One compile per source and architecture; each function launched must be an entry.
    let mut by_source: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, k) in &kernels {
        if !k.source.trim().is_empty() {
            by_source.entry(&k.source).or_default().push(name);
        }
    }
    let mut failures = Vec::new();
    for arch in ARCHS {
        for (source, names) in &by_source {
            match cuda::nvrtc_ptx(source, arch) {
                Ok(ptx) => {
                    for name in names {
                        if !ptx.contains(&format!(".entry {name}(")) {
                            failures.push(format!("{arch}: `{name}` is not an `extern \"C\" __global__` function of its source"));
                        }
                    }
                }
                Err(log) => failures.push(format!("{arch}: the source of {names:?} does not compile:\n{log}")),
            }
        }
    }
    eprintln!("{} kernels in {} sources compiled for {ARCHS:?}", kernels.len(), by_source.len());
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

const TYPO: &str = r#"extern "C" __global__ void half_f64(unsigned long long n, double* out) {
    for (unsigned long long i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x)
        out[i] = sqrtt(0.25);
}"#;

/// The check can fail: a typo is a compile error whose log names it and its line.
#[test]
fn a_typo_fails_to_compile_with_a_log_naming_it() {
    if !have_nvrtc("a_typo_fails_to_compile_with_a_log_naming_it") {
        return;
    }
    let log = cuda::nvrtc_compile(TYPO, "compute_90").expect_err("a typo compiled");
    eprintln!("the expected compile error:\n{log}");
    assert!(log.contains("sqrtt") && log.contains("bach_kernel.cu(3)"), "{log}");
    let fixed = TYPO.replace("sqrtt", "sqrt");
    for arch in ["compute_90", "compute_75", "sm_90"] {
        assert!(cuda::nvrtc_compile(&fixed, arch).expect("the fixed source compiles") > 0, "{arch}");
    }
}

/// `2 x + b` with `b` a row broadcast over the rows, as a user annotates it in a notebook.
const AXPB: &str = r#"
extern "C" __global__ void axpb_f64(unsigned long long n, double* out,
        const double* x, unsigned long long xd, unsigned long long xm,
        const double* b, unsigned long long bd, unsigned long long bm, double a) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        out[i] = a * x[(i / xd) % xm] + b[(i / bd) % bm];
}"#;

fn gpu_session() -> std::sync::Arc<Session> {
    let devices = Devices::select(DeviceChoice::Cuda).unwrap_or_else(|why| panic!("this test needs a GPU: {why}"));
    eprintln!("{}", devices.report());
    Session::with_devices(devices)
}

#[test]
#[ignore = "needs a GPU"]
fn gpu_user_kernel_runs_in_pieces_and_is_timed_by_the_gpu() {
    let s = gpu_session();
    // Little device memory: the stage pages through the GPU in many pieces.
    s.update_config(|c| c.memory_cap = Some(16 << 20));
    let axpb = oa("axpb")
        .elementwise()
        .args([split::rows(), split::rows()])
        .cpu(|_, args| Ok(Value::from(&args[0].array::<f64>("axpb")? * 2.0 + &args[1].array::<f64>("axpb")?)))
        .accelerator_launch("axpb", AXPB, Launch::Elementwise { params: vec![2.0] })
        .build();
    let (rows, cols) = (400_001, 5);
    let x = ArrayD::from_shape_fn(IxDyn(&[rows, cols]), |i| (i[0] * cols + i[1]) as f64 * 1e-3);
    let b = ArrayD::from_shape_fn(IxDyn(&[cols]), |i| i[0] as f64);
    let (xl, bl) = (s.source(Value::from(x.clone()), "x"), s.source(Value::from(b.clone()), "b"));
    let y = axpb.call(&[&xl, &bl]).unwrap();
    let z = axpb.call(&[&y, &bl]).unwrap(); // 4 x + 3 b, chained on the GPU
    let plan = s.plan(&[&z]).unwrap();
    eprintln!("{plan}");
    assert_eq!(plan.step_of(z.id()).unwrap().device, DeviceId(1), "{plan}");
    let out = z.eval().unwrap();
    let want = &x * 4.0 + &b * 3.0;
    assert_eq!(out.array::<f64>().unwrap(), &want.into_shared());
    let trace = s.trace();
    let eval = trace.last().unwrap();
    let on_gpu = |k: EventKind| eval.events.iter().filter(|e| e.kind == k && (e.device == DeviceId(1) || e.to == Some(DeviceId(1)))).count();
    eprintln!("{} events: {} compute and {} transfers on the GPU", eval.events.len(), on_gpu(EventKind::Compute), on_gpu(EventKind::Transfer));
    assert!(on_gpu(EventKind::Compute) >= 4 && on_gpu(EventKind::Transfer) >= 4, "{:?}", eval.events);
    assert!(eval.events.iter().all(|e| e.end >= e.start));
}

#[test]
#[ignore = "needs a GPU"]
fn gpu_values_stay_on_the_device_and_come_back() {
    let s = gpu_session();
    let axpb = oa("axpb")
        .elementwise()
        .args([split::rows(), split::rows()])
        .cpu(|_, args| Ok(Value::from(&args[0].array::<f64>("axpb")? * 2.0 + &args[1].array::<f64>("axpb")?)))
        .accelerator_launch("axpb", AXPB, Launch::Elementwise { params: vec![2.0] })
        .build();
    let x = ArrayD::from_shape_fn(IxDyn(&[1000]), |i| i[0] as f64);
    let one = ArrayD::from_elem(IxDyn(&[]), 1.0);
    let (xl, ol) = (s.source(Value::from(x.clone()), "x"), s.source(Value::from(one), "one"));
    let y = axpb.call(&[&xl, &ol]).unwrap();
    assert_eq!(y.eval_on_device().unwrap(), DeviceId(1));
    let z = axpb.call(&[&y, &ol]).unwrap();
    let out = z.eval().unwrap();
    assert_eq!(out.array::<f64>().unwrap(), &(&x * 4.0 + 3.0).into_shared());
    let mem = s.devices().get(DeviceId(1)).unwrap().memory().unwrap();
    eprintln!("GPU memory: {} used of {}", mem.used, mem.capacity);
    assert!(mem.used > 0 && mem.used < mem.capacity);
}

#[test]
#[ignore = "needs a GPU"]
fn gpu_kernel_errors_name_the_op() {
    let s = gpu_session();
    let broken = oa("broken")
        .elementwise()
        .cpu(|_, args| Ok(args[0].to_value()))
        .accelerator("broken", TYPO)
        .build();
    let x = s.source(Value::from(ArrayD::from_elem(IxDyn(&[10]), 1.0)), "x");
    let y = broken.call(&[&x]).unwrap();
    let err = y.eval().expect_err("a kernel that does not compile").to_string();
    assert!(err.contains("broken") && err.contains("sqrtt"), "{err}");
}

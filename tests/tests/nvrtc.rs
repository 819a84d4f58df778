//! The CUDA kernels compile, on machines without a GPU: every kernel of the library
//! (`bach::registry::all()`) is compiled with NVRTC for the H100/H200 (compute_90) and for the
//! oldest architecture NVRTC 13 supports (compute_75; it refuses compute_60), and the PTX
//! must define the function the device launches. Only NVRTC is needed: CI installs it from
//! PyPI (`nvidia-cuda-nvrtc`) and sets `BACH_REQUIRE_NVRTC=1`, so that a missing NVRTC fails
//! there; elsewhere these tests pass saying loudly that they were skipped.
//!
//! The `#[ignore]`d tests need a GPU: on a GPU host run
//! `cargo test --release -p bach-tests --test nvrtc -- --ignored --nocapture`.

use std::collections::BTreeMap;

use bach_runtime::trace::EventKind;
use bach_runtime::{cuda, oa, split, DeviceChoice, DeviceId, Devices, Launch, Policy, Session, Value, CPU};
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
    let kernels = bach::registry::all();
    assert!(kernels.len() > 20, "only {} kernels listed", kernels.len());
    // One compile per source and architecture; each function launched must be an entry.
    let mut by_source: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for (name, k) in &kernels {
        if !k.source.trim().is_empty() {
            by_source.entry(&k.source).or_default().push(name);
        }
    }
    // The device's own kernels around cuSOLVER.
    by_source.insert(cuda::EIGEN_SOURCE, vec!["bach_eigen_check", "bach_eigen_order"]);
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
    let s = Session::with_devices(devices);
    // Greedy: every op with a kernel runs on the GPU, whatever the cost model says of these
    // small inputs (optimal placement keeps them on a 16-thread host's CPU).
    s.update_config(|c| c.policy = Policy::Greedy);
    s
}

/// The largest difference between `got` and `want`, in ulps of `max(|want|, 1)`.
fn ulps_apart(got: &ndarray::ArcArray<f64, IxDyn>, want: &ArrayD<f64>) -> f64 {
    got.iter().zip(want.iter()).map(|(g, w)| (g - w).abs() / (f64::EPSILON * w.abs().max(1.0))).fold(0.0, f64::max)
}

/// `2 x + b` as a user annotation with its own CUDA kernel (`AXPB`).
fn axpb() -> std::sync::Arc<bach_runtime::Annotation> {
    oa("axpb")
        .elementwise()
        .args([split::rows(), split::rows()])
        .cpu(|_, args| Ok(Value::from(&args[0].array::<f64>("axpb")? * 2.0 + &args[1].array::<f64>("axpb")?)))
        .accelerator_launch("axpb", AXPB, Launch::Elementwise { params: vec![2.0] })
        .build()
}

#[test]
#[ignore = "needs a GPU"]
fn gpu_user_kernel_runs_in_pieces_and_is_timed_by_the_gpu() {
    let s = gpu_session();
    // Little device memory: the stage pages through the GPU in many pieces.
    s.update_config(|c| c.memory_cap = Some(16 << 20));
    let axpb = axpb();
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
    // Within a few ulps, not exactly: NVRTC contracts `a * x + b` into one fused multiply-add,
    // which rounds once where the CPU's separate multiply and add round twice
    // (9.091999999999999 against 9.092 on an H100).
    let got = out.array::<f64>().unwrap();
    assert_eq!(got.shape(), want.shape());
    let worst = ulps_apart(got, &want);
    assert!(worst <= 4.0, "GPU and CPU results differ by {worst:.1} ulps (at most 4 allowed)");
    let trace = s.trace();
    let eval = trace.last().unwrap();
    let on_gpu = |k: EventKind| eval.events.iter().filter(|e| e.kind == k && (e.device == DeviceId(1) || e.to == Some(DeviceId(1)))).count();
    eprintln!("{} events: {} compute and {} transfers on the GPU", eval.events.len(), on_gpu(EventKind::Compute), on_gpu(EventKind::Transfer));
    assert!(on_gpu(EventKind::Compute) >= 4 && on_gpu(EventKind::Transfer) >= 4, "{:?}", eval.events);
    assert!(eval.events.iter().all(|e| e.end >= e.start));
}

/// `2 x`, reached by `iters` dependent steps of `acc = acc / 2 + x` (exact once converged): a
/// kernel long enough that the GPU, not the host, is the slower side of the pipeline.
const SPIN: &str = r#"
extern "C" __global__ void spin_f64(unsigned long long n, double* out,
        const double* x, unsigned long long xd, unsigned long long xm, double iters) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x) {
        const double v = x[(i / xd) % xm];
        double acc = v;
        for (long long k = 0; k < (long long)iters; ++k) acc = acc * 0.5 + v;
        out[i] = acc;
    }
}"#;

/// The pipeline's lanes overlap on the GPU: piece k+1's copy in runs while piece k's kernel
/// does. (The conformance suite's overlap test leaves CUDA out: library kernels on an H200
/// finish before the host has filled the next piece's copy, so nothing overlaps there.)
#[test]
#[ignore = "needs a GPU"]
fn gpu_copies_overlap_a_long_kernel_of_another_piece() {
    let s = gpu_session();
    s.update_config(|c| c.memory_cap = Some(32 << 20));
    let spin = oa("spin")
        .elementwise()
        .args([split::rows()])
        .cpu(|_, args| Ok(Value::from(&args[0].array::<f64>("spin")? * 2.0)))
        .accelerator_launch("spin", SPIN, Launch::Elementwise { params: vec![4e5] })
        .build();
    let n = 1 << 23;
    let x = ArrayD::from_shape_fn(IxDyn(&[n]), |i| (i[0] % 1000) as f64 * 0.25 - 100.0);
    let xl = s.source(Value::from(x.clone()), "x");
    let y = spin.call(&[&xl]).unwrap();
    let plan = s.plan(&[&y]).unwrap();
    eprintln!("{plan}");
    let stage = &plan.stages[plan.step_of(y.id()).unwrap().stage];
    assert!(stage.device == DeviceId(1) && stage.pieces >= 4, "{plan}");
    let out = y.eval().unwrap();
    assert_eq!(out.array::<f64>().unwrap(), &(&x * 2.0).into_shared());
    let trace = s.trace();
    let eval = trace.last().unwrap();
    let copies_in: Vec<_> = eval.events.iter().filter(|e| e.kind == EventKind::Transfer && e.to == Some(DeviceId(1))).collect();
    let kernels: Vec<_> = eval.events.iter().filter(|e| e.kind == EventKind::Compute && e.device == DeviceId(1)).collect();
    let overlapping = copies_in.iter().filter(|c| kernels.iter().any(|k| k.piece != c.piece && c.start < k.end && k.start < c.end)).count();
    eprintln!("{} copies in, {} kernels, {overlapping} copies in overlapping another piece's kernel", copies_in.len(), kernels.len());
    assert!(overlapping * 2 >= copies_in.len() - 1, "{overlapping} of {} copies in overlapped a kernel: {:?}", copies_in.len(), eval.events);
}

#[test]
#[ignore = "needs a GPU"]
fn gpu_values_stay_on_the_device_and_come_back() {
    let s = gpu_session();
    let axpb = axpb();
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
    let broken = oa("broken").elementwise().cpu(|_, args| Ok(args[0].to_value())).accelerator("broken", TYPO).build();
    let x = s.source(Value::from(ArrayD::from_elem(IxDyn(&[10]), 1.0)), "x");
    let y = broken.call(&[&x]).unwrap();
    let err = y.eval().expect_err("a kernel that does not compile").to_string();
    assert!(err.contains("broken") && err.contains("sqrtt"), "{err}");
}

/// `first + i` times a parameter: a `Launch::Fill` allocation.
const IOTA: &str = r#"
extern "C" __global__ void iota_f64(unsigned long long n, double* out, unsigned long long first, double scale) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        out[i] = scale * (double)(first + i);
}"#;

/// Sums per row (`Reduce { axis: Some(1) }`) and of everything (`Reduce { axis: None }`),
/// one block of 256 threads per output value.
const SUMS: &str = r#"
__device__ double block_sum(double s) {
    __shared__ double part[256];
    part[threadIdx.x] = s;
    __syncthreads();
    for (unsigned int w = blockDim.x / 2; w > 0; w >>= 1) {
        if (threadIdx.x < w) part[threadIdx.x] += part[threadIdx.x + w];
        __syncthreads();
    }
    return part[0];
}
extern "C" __global__ void rowsum_f64(unsigned long long rows, unsigned long long cols, const double* x, double* out) {
    double s = 0.0;
    for (unsigned long long c = threadIdx.x; c < cols; c += blockDim.x) s += x[blockIdx.x * cols + c];
    s = block_sum(s);
    if (threadIdx.x == 0) out[blockIdx.x] = s;
}
extern "C" __global__ void total_f64(unsigned long long rows, unsigned long long cols, const double* x, double* out) {
    double s = 0.0;
    for (unsigned long long i = threadIdx.x; i < rows * cols; i += blockDim.x) s += x[i];
    s = block_sum(s);
    if (threadIdx.x == 0) out[0] = s;
}"#;

/// `x > y` into bool bytes, with `y` a column `[rows, 1]` broadcast over the columns.
const GREATER: &str = r#"
extern "C" __global__ void greater_f64(unsigned long long n, unsigned char* out,
        const double* x, unsigned long long xd, unsigned long long xm,
        const double* y, unsigned long long yd, unsigned long long ym) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n;
         i += (unsigned long long)gridDim.x * blockDim.x)
        out[i] = x[(i / xd) % xm] > y[(i / yd) % ym];
}"#;

fn close(got: &ArrayD<f64>, want: &ArrayD<f64>, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}");
    for (g, w) in got.iter().zip(want) {
        assert!((g - w).abs() <= 1e-9 * w.abs().max(1.0), "{what}: {g} vs {w}");
    }
}

/// Each `Launch` convention against the CPU, on the GPU, with kernels written here (so a
/// failure points at the device, not at the library's kernels).
#[test]
#[ignore = "needs a GPU"]
fn gpu_launch_conventions() {
    use bach_runtime::{oa_alloc, DType, Meta};
    use ndarray::{Array2, Axis, Ix1, Ix2};
    let s = gpu_session();
    s.update_config(|c| c.memory_cap = Some(8 << 20));
    let f64_of = |v: &Value| v.array::<f64>().expect("f64").to_owned();

    // Fill, then an elementwise consumer on the GPU (the allocation is made where it is used).
    let n = 300_001;
    let iota = oa_alloc("iota")
        .cpu(|ctx, _| Ok(Value::from(ArrayD::from_shape_fn(IxDyn(&[ctx.rows.len()]), |i| 0.5 * (ctx.rows.start + i[0]) as f64))))
        .accelerator_launch("iota", IOTA, Launch::Fill { params: vec![0.5] })
        .build();
    let axpb = axpb();
    let filled = s.alloc(&iota, Meta::new(DType::F64, [n])).unwrap();
    let zero = s.source(Value::from(ArrayD::from_elem(IxDyn(&[]), 0.0)), "zero");
    let doubled = axpb.call(&[&filled, &zero]).unwrap();
    eprintln!("{}", s.plan(&[&doubled]).unwrap());
    close(&f64_of(&doubled.eval().unwrap()), &ArrayD::from_shape_fn(IxDyn(&[n]), |i| i[0] as f64), "fill");

    // A [rows, 1] column broadcast over the columns, into bool.
    let (rows, cols) = (20_000, 7);
    let x = ArrayD::from_shape_fn(IxDyn(&[rows, cols]), |i| ((i[0] * 7 + i[1] * 3) % 11) as f64);
    let col = ArrayD::from_shape_fn(IxDyn(&[rows, 1]), |i| (i[0] % 11) as f64);
    let greater = oa("greater")
        .elementwise()
        .args([split::rows(), split::rows()])
        .shape(|m: &[Meta]| Ok(Meta::new(DType::Bool, m[0].shape.clone())))
        .cpu(|_, args| {
            let (a, b) = (args[0].array::<f64>("greater")?, args[1].array::<f64>("greater")?);
            Ok(Value::from(ndarray::Zip::from(&a).and_broadcast(&b).map_collect(|a, b| a > b)))
        })
        .accelerator_launch("greater", GREATER, Launch::Elementwise { params: vec![] })
        .build();
    let (xl, cl) = (s.source(Value::from(x.clone()), "x"), s.source(Value::from(col.clone()), "col"));
    let g = greater.call(&[&xl, &cl]).unwrap().eval().unwrap();
    let want = ndarray::Zip::from(&x).and_broadcast(&col).map_collect(|a, b| a > b);
    assert_eq!(g.array::<bool>().unwrap(), &want.into_shared(), "greater");

    // Reductions: per row (pieces of rows), and of everything (whole).
    let rowsum = oa("rowsum")
        .shape(|m: &[Meta]| Ok(Meta::new(m[0].dtype, [m[0].shape[0]])))
        .cpu(|_, args| Ok(Value::from(args[0].array::<f64>("rowsum")?.sum_axis(Axis(1)))))
        .accelerator_launch("rowsum", SUMS, Launch::Reduce { axis: Some(1) })
        .build();
    let total = oa("total")
        .unsplittable()
        .shape(|m: &[Meta]| Ok(Meta::new(m[0].dtype, Vec::<usize>::new())))
        .cpu(|_, args| Ok(Value::from(ndarray::arr0(args[0].array::<f64>("total")?.sum()).into_dyn())))
        .accelerator_launch("total", SUMS, Launch::Reduce { axis: None })
        .build();
    let r = rowsum.call(&[&xl]).unwrap().eval().unwrap();
    close(&f64_of(&r), &x.sum_axis(Axis(1)), "rowsum");
    let t = total.call(&[&xl]).unwrap().eval().unwrap();
    close(&f64_of(&t), &ArrayD::from_elem(IxDyn(&[]), x.sum()), "total");

    // The four products through cuBLAS.
    let product = |name: &str, args: [bach_runtime::SplitRef; 2], unsplittable: bool| {
        let b = oa(name)
            .args(args)
            .shape(|m: &[Meta]| {
                let (a, b) = (&m[0].shape, &m[1].shape);
                let shape: Vec<usize> = match (a.len(), b.len()) {
                    (1, 1) => vec![],
                    (2, 1) => vec![a[0]],
                    (1, 2) => vec![b[1]],
                    _ => vec![a[0], b[1]],
                };
                Ok(Meta::new(m[0].dtype, shape))
            })
            .cpu(|_, args| {
                let (a, b) = (args[0].array::<f64>("dot")?, args[1].array::<f64>("dot")?);
                Ok(match (a.ndim(), b.ndim()) {
                    (1, 1) => Value::from(ndarray::arr0(a.into_dimensionality::<Ix1>().unwrap().dot(&b.into_dimensionality::<Ix1>().unwrap())).into_dyn()),
                    (2, 1) => Value::from(a.into_dimensionality::<Ix2>().unwrap().dot(&b.into_dimensionality::<Ix1>().unwrap()).into_dyn()),
                    (1, 2) => Value::from(a.into_dimensionality::<Ix1>().unwrap().dot(&b.into_dimensionality::<Ix2>().unwrap()).into_dyn()),
                    _ => Value::from(a.into_dimensionality::<Ix2>().unwrap().dot(&b.into_dimensionality::<Ix2>().unwrap()).into_dyn()),
                })
            })
            .accelerator_launch(name, "", Launch::Gemm);
        if unsplittable {
            b.unsplittable().build()
        } else {
            b.build()
        }
    };
    let a = Array2::from_shape_fn((3001, 200), |(i, j)| ((i * 31 + j * 17) % 101) as f64 / 101.0).into_dyn();
    let bm = Array2::from_shape_fn((200, 50), |(i, j)| ((i * 7 + j * 13) % 97) as f64 / 97.0 - 0.5).into_dyn();
    let v = ArrayD::from_shape_fn(IxDyn(&[200]), |i| (i[0] % 5) as f64 - 2.0);
    let w = ArrayD::from_shape_fn(IxDyn(&[3001]), |i| (i[0] % 3) as f64);
    let (al, bl, vl, wl) =
        (s.source(Value::from(a.clone()), "a"), s.source(Value::from(bm.clone()), "b"), s.source(Value::from(v.clone()), "v"), s.source(Value::from(w.clone()), "w"));
    let cases: [(&str, &bach_runtime::Lazy, &bach_runtime::Lazy, bool); 4] =
        [("matmul", &al, &bl, false), ("matvec", &al, &vl, false), ("vecmat", &wl, &al, true), ("dot", &vl, &vl, true)];
    for (name, l, r, whole) in cases {
        let op = product(name, [split::rows(), split::broadcast()], whole);
        let got = f64_of(&op.call(&[l, r]).unwrap().eval().unwrap());
        let want = op
            .run_cpu(&bach_runtime::OpCtx { meta: &Meta::new(DType::F64, got.shape()), rows: 0..1, piece: 0, node: 0 }, &[l.eval().unwrap().view(), r.eval().unwrap().view()])
            .unwrap();
        close(&got, &f64_of(&want), name);
    }
    let trace = s.trace();
    let gpu_ops: std::collections::BTreeSet<String> =
        trace.evals().flat_map(|e| e.events.iter()).filter(|e| e.device == DeviceId(1) && e.kind != EventKind::Transfer).map(|e| e.op.to_string()).collect();
    eprintln!("ran on the GPU: {gpu_ops:?}");
    for op in ["iota", "axpb", "greater", "rowsum", "total", "matmul", "matvec", "vecmat", "dot"] {
        assert!(gpu_ops.contains(op), "{op} did not run on the GPU: {gpu_ops:?}");
    }
}

/// The kernels of the GPU tests above compile, so that on a GPU host only the device is
/// under test.
#[test]
fn the_gpu_tests_kernels_compile() {
    if !have_nvrtc("the_gpu_tests_kernels_compile") {
        return;
    }
    for (source, entries) in [(AXPB, &["axpb_f64"][..]), (SPIN, &["spin_f64"]), (IOTA, &["iota_f64"]), (SUMS, &["rowsum_f64", "total_f64"]), (GREATER, &["greater_f64"])] {
        let ptx = cuda::nvrtc_ptx(source, "compute_90").unwrap_or_else(|log| panic!("{entries:?}: {log}"));
        for e in entries {
            assert!(ptx.contains(&format!(".entry {e}(")), "{e}");
        }
        assert!(cuda::nvrtc_compile(source, "sm_90").unwrap() > 0);
    }
}

/// A large host array the session keeps is page-locked in place at its first copy in, and its
/// pieces are copied straight from it (no staging buffer): the results are the same as
/// through staging, evaluation after evaluation, and the device report says so.
#[test]
#[ignore = "needs a GPU"]
fn gpu_kept_host_arrays_are_page_locked_and_copied_straight() {
    let s = gpu_session();
    s.update_config(|c| c.memory_cap = Some(96 << 20));
    let axpb = axpb();
    let n = (1 << 24) + 3; // 128 MiB, a length that is not a multiple of a page
    let x = ArrayD::from_shape_fn(IxDyn(&[n]), |i| (i[0] % 4099) as f64 * 0.5 - 7.0);
    let b = ArrayD::from_shape_fn(IxDyn(&[n]), |i| (i[0] % 13) as f64);
    let (xl, bl) = (s.source(Value::from(x.clone()), "x"), s.source(Value::from(b.clone()), "b"));
    let want = &x * 2.0 + &b;
    for round in 0..3 {
        let y = axpb.call(&[&xl, &bl]).unwrap();
        let out = y.eval().unwrap();
        let got = out.array::<f64>().unwrap();
        let worst = ulps_apart(got, &want);
        assert!(worst <= 4.0, "round {round}: GPU and CPU results differ by {worst:.1} ulps");
        let report = s.devices().report();
        eprintln!("round {round}: {report}");
        assert!(report.contains("page-locked in place") || report.contains("copies in go through staging buffers"), "{report}");
    }
}

/// Placement learns what page-locking does: with copies of ordinary memory priced as slow
/// (1 GB/s) and of page-locked memory as fast, the first evaluation of `2 x + b` over two
/// 128 MiB host arrays runs on the CPU; the GPU page-locks the arrays it could have read once
/// that evaluation ends, and a later evaluation (after the worker is done) runs on the GPU,
/// its copies in marked as from page-locked memory, with the same results.
#[test]
#[ignore = "needs a GPU"]
fn gpu_arrays_left_on_the_cpu_are_page_locked_and_the_next_plan_moves_them() {
    let s = gpu_session();
    s.update_config(|c| {
        c.policy = Policy::Optimal;
        for (path, value) in [
            ("elementwise.cpu.per_element", "1e-9"),
            ("other.cpu.per_element", "1e-9"),
            ("transfer.h2d.pageable.cuda.bandwidth", "1e9"),
            ("transfer.h2d.pinned.cuda.bandwidth", "50e9"),
            ("transfer.d2h.pageable.cuda.bandwidth", "50e9"),
        ] {
            c.cost.set(path, value).unwrap();
        }
    });
    let axpb = axpb();
    let n = 1 << 24; // 128 MiB a column: page-locked in place (64 MiB or more)
    let x = ArrayD::from_shape_fn(IxDyn(&[n]), |i| (i[0] % 4099) as f64 * 0.5 - 7.0);
    let b = ArrayD::from_shape_fn(IxDyn(&[n]), |i| (i[0] % 13) as f64);
    let (xl, bl) = (s.source(Value::from(x.clone()), "x"), s.source(Value::from(b.clone()), "b"));
    let want = &x * 2.0 + &b;
    let mut devices_seen = Vec::new();
    for round in 0..40 {
        let y = axpb.call(&[&xl, &bl]).unwrap();
        let plan = s.plan(&[&y]).unwrap();
        let on_gpu = plan.stages[0].device != CPU;
        if round == 0 {
            assert!(!on_gpu, "ordinary memory at 1 GB/s: the first plan keeps the CPU\n{plan}");
        }
        let out = y.eval().unwrap();
        let worst = ulps_apart(out.array::<f64>().unwrap(), &want);
        assert!(worst <= 4.0, "round {round}: results differ by {worst:.1} ulps");
        devices_seen.push(on_gpu);
        if on_gpu {
            assert!(plan.transfers.iter().filter(|t| t.to != CPU).all(|t| t.memory == bach_runtime::MemoryKind::Pinned), "{plan}");
            eprintln!("round {round}: on the GPU; {}", s.devices().report());
            return;
        }
        let report = s.devices().report();
        if report.contains("copies in go through staging buffers") {
            eprintln!("page-locking is off on this host: {report}");
            return;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    panic!("the plan never moved to the GPU once the arrays were page-locked: {devices_seen:?}; {}", s.devices().report());
}

/// Inputs streamed in small pieces (a 4 MiB memory cap: pieces of about 1 MiB, of a length
/// that divides nothing) are staged ahead in windows filled by all cores, and each piece is
/// copied from its window: every row lands where the CPU puts it, evaluation after
/// evaluation; results also land in memory faulted in ahead of the copies back.
#[test]
#[ignore = "needs a GPU"]
fn gpu_small_pieces_are_copied_from_windows_staged_ahead() {
    let s = gpu_session();
    s.update_config(|c| c.memory_cap = Some(4 << 20));
    let axpb = axpb();
    let n = (3 << 20) + 5; // 24 MiB a column
    let x = ArrayD::from_shape_fn(IxDyn(&[n]), |i| (i[0] % 4099) as f64 * 0.5 - 7.0);
    let b = ArrayD::from_shape_fn(IxDyn(&[n]), |i| (i[0] % 13) as f64 + i[0] as f64);
    let (xl, bl) = (s.source(Value::from(x.clone()), "x"), s.source(Value::from(b.clone()), "b"));
    let want = &x * 2.0 + &b;
    for round in 0..2 {
        let y = axpb.call(&[&xl, &bl]).unwrap();
        let plan = s.plan(&[&y]).unwrap();
        assert!(plan.stages[0].pieces > 16, "{plan}");
        let out = y.eval().unwrap();
        let got = out.array::<f64>().unwrap();
        let worst = ulps_apart(got, &want);
        assert!(worst <= 4.0, "round {round}: GPU and CPU results differ by {worst:.1} ulps");
    }
}

//! The registry of the library's ops: every annotation with an accelerator slot and the
//! dtypes it is launched with (`catalog`), and every kernel function the accelerator compiles
//! from source (`all`: what the NVRTC test compiles and a device loads). Each op family keeps
//! its own CUDA source beside its CPU kernels (`elementwise.rs`, `reduce.rs`, `alloc.rs`;
//! the C generators they share are `kernels.rs`); this module only lists them, so no op
//! module imports it.

use std::collections::HashSet;
use std::sync::Arc;

use bach_runtime::{AcceleratorKernel, Annotation, DType, Launch};

pub use crate::ops::elementwise::{binary_source, mask_source, unary_source, where_source};
pub use crate::ops::kernels::{cast_source, fill_source, powi_source};
use crate::ops::kernels::{CAST_FROM, ELEMENTS, FLOATS};
pub use crate::ops::reduce::reduce_source;
use crate::{ml, ops::alloc, ops::elementwise, ops::linalg, ops::reduce};

/// Every annotation of the library with an accelerator slot, and the dtypes it is launched
/// with (of its first argument; of the result for allocations). Built by the constructors
/// the library's calls use, and from the op tables.
pub(crate) fn catalog() -> Vec<(Arc<Annotation>, Vec<DType>)> {
    let mut c: Vec<(Arc<Annotation>, Vec<DType>)> = Vec::new();
    c.extend(elementwise::unary_ops().into_iter().map(|op| (op, FLOATS.to_vec())));
    c.extend(elementwise::binary_ops().into_iter().map(|op| (op, FLOATS.to_vec())));
    c.extend(elementwise::mask_ops().into_iter().map(|op| (op, vec![DType::Bool])));
    c.extend(ELEMENTS.iter().map(|&d| (elementwise::where_op(d), vec![DType::Bool])));
    c.push((elementwise::cast_op(DType::F64), CAST_FROM.to_vec()));
    c.push((elementwise::cast_op(DType::F32), CAST_FROM.to_vec()));
    c.push((elementwise::powi_op(2), FLOATS.to_vec()));
    c.extend(alloc::catalog());
    c.extend(reduce::catalog().into_iter().map(|op| (op, FLOATS.to_vec())));
    c.extend(linalg::products().into_iter().map(|op| (op, FLOATS.to_vec())));
    c.push((ml::gram_op(), vec![DType::F64]));
    c.push((ml::knn_vote_op(5), vec![DType::F64]));
    c.push((ml::radius_op(1.0), vec![DType::F64]));
    c.push((ml::eigen_op(), vec![DType::F64]));
    c
}

/// Whether a launch goes to the device's BLAS (no source of ours).
fn blas(launch: &Launch) -> bool {
    matches!(launch, Launch::Gemm | Launch::Gram | Launch::SymmetricEigen)
}

/// Every kernel the library can launch from source: (the function the device launches, its
/// entry plus dtype suffix; the accelerator slot). One entry per function (sources repeat per
/// family). `Launch::Gemm`, `Launch::Gram` and `Launch::SymmetricEigen` slots (`dot`,
/// `gram`: the device's cuBLAS; `symmetric_eigen`: its cuSOLVER) have no source and are not
/// listed.
pub fn all() -> Vec<(String, AcceleratorKernel)> {
    let mut seen = HashSet::new();
    let mut out = Vec::new();
    for (op, dtypes) in catalog() {
        let Some(k) = op.accelerator() else { continue };
        if blas(&k.launch) {
            continue;
        }
        for d in dtypes {
            let name = format!("{}_{d}", k.entry);
            if seen.insert(name.clone()) {
                out.push((name, k.clone()));
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::kernels::{c_expr, c_type, table_source};
    use std::collections::{BTreeMap, BTreeSet};
    use std::sync::Mutex;

    use bach_runtime::{CpuDevice, Device, DeviceId, DeviceKind, DeviceProfile, Devices, OpCtx, OpKind, PendingCopy, Result, Session, Tag, Value, ValueRef};
    use ndarray::Axis;

    use crate::array::Array;
    use crate::ops::elementwise::where_;

    /// The parameter types of `extern "C" __global__ void name(...)` in `src`, normalised
    /// (`const double*`, `unsigned long long`, `double`...); None when it is not defined.
    fn signature(src: &str, name: &str) -> Option<Vec<String>> {
        let head = format!("extern \"C\" __global__ void {name}(");
        let at = src.find(&head)? + head.len();
        let close = at + src[at..].find(')')?;
        Some(
            src[at..close]
                .split(',')
                .map(|p| {
                    let p = p.trim();
                    let ty = p.trim_end_matches(|c: char| c.is_ascii_alphanumeric() || c == '_').trim();
                    ty.split_whitespace().collect::<Vec<_>>().join(" ").replace(" *", "*")
                })
                .collect(),
        )
    }

    const U64: &str = "unsigned long long";

    /// The parameters a launch of `k` for these argument and result dtypes passes, in order.
    fn expected_params(k: &AcceleratorKernel, args: &[DType], out: DType) -> Vec<String> {
        let t = |d: DType| c_type(d).to_string();
        match &k.launch {
            Launch::Elementwise { params } => {
                let mut v = vec![U64.to_string(), format!("{}*", t(out))];
                for &a in args {
                    v.extend([format!("const {}*", t(a)), U64.into(), U64.into()]);
                }
                v.extend(params.iter().map(|_| "double".to_string()));
                v
            }
            Launch::Fill { params } => {
                let mut v = vec![U64.to_string(), format!("{}*", t(out)), U64.into()];
                v.extend(params.iter().map(|_| "double".to_string()));
                v
            }
            Launch::Reduce { .. } if k.entry.ends_with("_lanes") => vec![U64.into(), U64.into(), U64.into(), format!("const {}*", t(args[0])), format!("{}*", t(out))],
            Launch::Reduce { .. } => vec![U64.into(), U64.into(), format!("const {}*", t(args[0])), format!("{}*", t(out))],
            Launch::Rows { params } => {
                let mut v = vec![U64.to_string(), U64.to_string()];
                v.extend(args.iter().map(|&a| format!("const {}*", t(a))));
                v.push(format!("{}*", t(out)));
                v.extend(params.iter().map(|_| "double".to_string()));
                v
            }
            Launch::Cross { params } => {
                let mut v = vec![U64.to_string(), U64.to_string(), U64.to_string(), format!("const {}*", t(args[0]))];
                v.extend(args.iter().map(|&a| format!("const {}*", t(a))));
                v.push(format!("{}*", t(out)));
                v.extend(params.iter().map(|_| "double".to_string()));
                v
            }
            Launch::Gemm | Launch::Gram | Launch::SymmetricEigen => vec![],
        }
    }

    /// A device that checks every launch against the kernel source as the CUDA device would
    /// make it (the function exists, its parameters match the launch convention for the
    /// actual dtypes), records it, then runs the CPU kernel.
    struct Checking {
        profile: DeviceProfile,
        launched: Mutex<BTreeSet<String>>,
        problems: Mutex<Vec<String>>,
    }

    impl Device for Checking {
        fn profile(&self) -> &DeviceProfile {
            &self.profile
        }
        fn run(&self, op: &Annotation, ctx: &OpCtx<'_>, args: &[ValueRef<'_>]) -> Result<Value> {
            let k = op.accelerator().unwrap_or_else(|| panic!("{} ran on the device without an accelerator slot", op.name()));
            if !blas(&k.launch) {
                let arg_types: Vec<DType> = args.iter().map(ValueRef::dtype).collect();
                let suffix = if op.kind() == OpKind::Alloc { ctx.meta.dtype } else { arg_types[0] };
                let name = format!("{}_{suffix}", k.entry);
                let want = expected_params(k, &arg_types, ctx.meta.dtype);
                match signature(&k.source, &name) {
                    None => self.problems.lock().unwrap().push(format!("{}: {name} is not defined in its source", op.name())),
                    Some(got) if got != want => {
                        self.problems.lock().unwrap().push(format!("{}: {name}({}) but the launch passes ({})", op.name(), got.join(", "), want.join(", ")))
                    }
                    Some(_) => {}
                }
                if let Launch::Reduce { axis } = k.launch {
                    let whole = ctx.meta.ndim() == 0;
                    if whole != axis.is_none() {
                        self.problems.lock().unwrap().push(format!("{}: axis {axis:?} for a {}-d result", op.name(), ctx.meta.ndim()));
                    }
                }
                self.launched.lock().unwrap().insert(name);
            }
            op.run_cpu(ctx, args)
        }
        fn copy_in(&self, value: ValueRef<'_>, _tag: Tag) -> Result<Value> {
            Ok(value.to_value())
        }
        fn copy_out(&self, value: ValueRef<'_>, _tag: Tag) -> Result<PendingCopy> {
            Ok(PendingCopy::ready(value.to_value()))
        }
    }

    fn checking_session() -> (Arc<Session>, Arc<Checking>) {
        let dev = Arc::new(Checking {
            profile: DeviceProfile {
                id: DeviceId(1),
                kind: DeviceKind::Emulated,
                name: "kernel check (test)".into(),
                memory_bytes: Some(1 << 30),
                threads: 1,
                measured_copies: None,
                fuses_elementwise: false,
            },
            launched: Mutex::new(BTreeSet::new()),
            problems: Mutex::new(Vec::new()),
        });
        let devices = Devices::new(vec![Arc::new(CpuDevice::new()), dev.clone()], vec![]).unwrap();
        let session = Session::with_devices(devices);
        // Every op with a kernel goes to the checking device, whatever it would cost.
        session.update_config(|c| c.policy = bach_runtime::Policy::Greedy);
        (session, dev)
    }

    /// Every op of the library, for one float type, through the public API.
    fn every_op<A: crate::real::Real>() -> Vec<Array<A>> {
        let x = crate::array::Array1::<A>::from_vec((0..40).map(|i| A::of(i as f64 / 50.0 - 0.3)).collect()).into_dyn();
        let y = crate::array::Array1::<A>::from_vec((0..40).map(|i| A::of(0.7 - i as f64 / 30.0)).collect()).into_dyn();
        let m = Array::<A>::from_shape_vec(vec![8, 5], (0..40).map(|i| A::of(i as f64 * 0.25 - 3.0)).collect()).unwrap();
        let v5 = crate::array::Array1::<A>::linspace(A::of(1.0), A::of(2.0), 5).into_dyn();
        let mut out = vec![
            x.sqrt(),
            x.exp(),
            x.ln(),
            x.log2(),
            x.log10(),
            x.sin(),
            x.cos(),
            x.tan(),
            x.asin(),
            x.acos(),
            x.atan(),
            x.erf(),
            x.abs(),
            x.neg(),
            x.tanh(),
            x.sinh(),
            x.cosh(),
            x.exp_m1(),
            x.ln_1p(),
            x.cbrt(),
            x.exp2(),
            x.floor(),
            x.ceil(),
            x.round(),
            x.trunc(),
            x.recip(),
            x.signum(),
            &x + &y,
            &x - &y,
            &x * A::of(2.0),
            &x / &y,
            x.powf(&y),
            x.minimum(&y),
            x.maximum(A::of(0.1)),
            x.powi(3),
            x.powi(-2),
            where_(&x.gt(&y), &x, A::of(0.0)),
            where_(&(x.ge(&y) & x.lt(A::of(0.2))), &x, &y),
            where_(&(!&x.le(&y) | x.equal(&y)), A::of(1.0), &y),
            where_(&where_(&x.not_equal(&y), true, x.lt(&y)), &x, &y),
            where_(&(x.gt(&y) & Array::<bool>::full(vec![40], true)), &x, &y),
            x.cast::<f64>().cast::<A>(),
            x.cast::<f32>().cast::<A>(),
            &x + Array::<A>::zeros(vec![40]),
            &x + Array::<A>::ones(vec![40]),
            &x * Array::<A>::full(vec![40], A::of(3.0)),
            &x - Array::<A>::from_elem(vec![40], A::of(2.0)),
            &x + crate::array::Array1::<A>::linspace(A::of(0.0), A::of(1.0), 40).into_dyn(),
            &x + crate::array::Array1::<A>::range(A::of(0.0), A::of(40.0), A::of(1.0)).into_dyn(),
            &x + crate::array::Array1::<A>::arange(A::of(1.0), A::of(41.0), A::of(1.0)).unwrap().into_dyn(),
            x.sum_lazy().into_dyn(),
            x.min_lazy().unwrap().into_dyn(),
            x.max_lazy().unwrap().into_dyn(),
            x.sum_axis(Axis(0)),
            m.sum_axis(Axis(0)),
            m.sum_axis(Axis(1)),
            m.min_axis(Axis(0)),
            m.min_axis(Axis(1)),
            m.max_axis(Axis(0)),
            m.max_axis(Axis(1)),
            m.sum_lazy().into_dyn(),
            m.mean_lazy().unwrap().into_dyn(),
            m.var_axis(Axis(1), A::of(0.0)),
            x.dot(&y),
            v5.dot(&m.t()),
            m.dot(&v5),
            m.dot(&m.t()),
            &x * Array::<A>::random_uniform(vec![40], A::zero(), A::one(), 7),
        ];
        out.push(m.sqrt().sum_axis(Axis(1)));
        // More than two axes: whole, axis 0, the last axis and a middle one (lanes).
        let c = Array::<A>::from_shape_vec(vec![2, 4, 5], (0..40).map(|i| A::of(i as f64 * 0.5 - 7.0)).collect()).unwrap();
        out.extend([c.sum_lazy().into_dyn(), c.sum_axis(Axis(0)), c.max_axis(Axis(2)), c.sum_axis(Axis(1)), c.min_axis(Axis(1)), c.max_axis(Axis(1))]);
        out
    }

    fn run_every_op() -> (BTreeSet<String>, Vec<String>) {
        let (s, dev) = checking_session();
        bach_runtime::with_session(&s, || {
            for a in every_op::<f64>() {
                a.eval().unwrap();
            }
            for a in every_op::<f32>() {
                a.eval().unwrap();
            }
            // Integers: casts to both floats, and where over them.
            let labels = Array::from_vec(vec![3i64, -1, 7]);
            labels.cast::<f64>().eval().unwrap();
            labels.cast::<f32>().eval().unwrap();
            where_(&labels.cast::<f64>().gt(0.0), &labels, -1i64).eval().unwrap();
            // The ML library's own kernels: X^T X, the k-nearest vote, DBSCAN's neighbourhoods.
            let x = Array::<f64>::from_shape_vec(vec![6, 2], vec![0.0, 0.0, 0.1, 0.0, 0.0, 0.2, 5.0, 5.0, 5.1, 5.0, 5.0, 5.2]).unwrap();
            let y = Array::from_vec(vec![0i64, 0, 0, 1, 1, 1]);
            crate::ml::TruncatedSvd::params(1).fit(&x).unwrap().squared_singular_values.eval().unwrap();
            let knn = crate::ml::KNeighborsClassifier::params(3).fit(&x, &y).unwrap();
            assert_eq!(knn.predict(&x).unwrap().to_array().unwrap().iter().copied().collect::<Vec<i64>>(), vec![0, 0, 0, 1, 1, 1]);
            let labels = crate::ml::Dbscan::params(0.5, 2).fit_predict(&x).unwrap();
            assert_eq!(labels.to_array().unwrap().iter().copied().collect::<Vec<i64>>(), vec![0, 0, 0, 1, 1, 1]);
        });
        let launched = dev.launched.lock().unwrap().clone();
        let problems = dev.problems.lock().unwrap().clone();
        (launched, problems)
    }

    #[test]
    fn every_launch_finds_its_entry_with_the_launch_conventions_parameters() {
        let (launched, problems) = run_every_op();
        assert!(problems.is_empty(), "{}", problems.join("\n"));
        assert!(launched.contains("sqrt_f32") && launched.contains("where_f64_bool") && launched.contains("fill_f32") && launched.contains("sum_axis0_f64"), "{launched:?}");
        // all() lists exactly the kernels a program of every op launches.
        let listed: BTreeSet<String> = all().into_iter().map(|(n, _)| n).collect();
        let missing: Vec<_> = launched.difference(&listed).collect();
        assert!(missing.is_empty(), "launched but not in all(): {missing:?}");
        let unused: Vec<_> = listed.difference(&launched).collect();
        assert!(unused.is_empty(), "in all() but no op of the test program launched it (add the op to every_op): {unused:?}");
    }

    #[test]
    fn every_catalogued_entry_is_defined_for_each_dtype() {
        for (op, dtypes) in catalog() {
            let k = op.accelerator().unwrap_or_else(|| panic!("{} has no accelerator slot", op.name()));
            if blas(&k.launch) {
                assert!(["gemm", "gram", "symmetric_eigen"].contains(&k.entry.as_str()), "{}", k.entry);
                continue;
            }
            for d in dtypes {
                let name = format!("{}_{d}", k.entry);
                let sig = signature(&k.source, &name).unwrap_or_else(|| panic!("{}: {name} missing", op.name()));
                let launch_params = match &k.launch {
                    Launch::Elementwise { params } | Launch::Fill { params } | Launch::Rows { params } | Launch::Cross { params } => params.len(),
                    _ => 0,
                };
                let doubles = sig.iter().rev().take_while(|p| *p == "double").count();
                assert_eq!(doubles, launch_params, "{name}: {sig:?} for {:?}", k.launch);
            }
        }
    }

    #[test]
    fn all_covers_every_family_and_names_are_unique() {
        let all = all();
        let names: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names.len(), names.iter().collect::<HashSet<_>>().len());
        for row in elementwise::UNARY.iter().chain(elementwise::BINARY) {
            for d in FLOATS {
                assert!(names.contains(&format!("{}_{d}", row.name).as_str()), "{} {d}", row.name);
            }
        }
        for row in elementwise::MASKS {
            assert!(names.contains(&format!("{}_bool", row.name).as_str()));
        }
        let sources: BTreeSet<&str> = all.iter().map(|(_, k)| k.source.as_str()).collect();
        assert_eq!(sources.len(), 10, "one source per family, the vote's and the neighbourhoods'");
        for (name, k) in &all {
            assert!(signature(&k.source, name).is_some(), "{name}");
        }
    }

    #[test]
    fn sources_are_deterministic() {
        let a: BTreeMap<String, String> = all().into_iter().map(|(n, k)| (n, k.source)).collect();
        let b: BTreeMap<String, String> = all().into_iter().map(|(n, k)| (n, k.source)).collect();
        assert_eq!(a, b);
        assert_eq!(table_source("unary math", elementwise::UNARY, &FLOATS), unary_source());
    }

    #[test]
    fn the_elementwise_signature_follows_the_launch_doc() {
        let sig = signature(binary_source(), "lt_f32").unwrap();
        assert_eq!(sig, ["unsigned long long", "unsigned char*", "const float*", U64, U64, "const float*", U64, U64]);
        let sig = signature(powi_source(), "powi_f64").unwrap();
        assert_eq!(sig, [U64, "double*", "const double*", U64, U64, "double"]);
        let sig = signature(where_source(), "where_f32_bool").unwrap();
        assert_eq!(sig, [U64, "float*", "const unsigned char*", U64, U64, "const float*", U64, U64, "const float*", U64, U64]);
        let sig = signature(fill_source(), "sequence_f32").unwrap();
        assert_eq!(sig, [U64, "float*", U64, "double", "double"]);
        let sig = signature(reduce_source(), "max_axis1_f32").unwrap();
        assert_eq!(sig, [U64, U64, "const float*", "float*"]);
        // Arguments are read broadcast, with a grid-stride loop.
        assert!(binary_source().contains("const double x = a0[(i / div0) % mod0];"));
        assert!(binary_source().contains("i += (unsigned long long)gridDim.x * blockDim.x"));
    }

    #[test]
    fn f32_kernels_call_the_f_suffixed_functions() {
        assert_eq!(c_expr("sqrt(x)", DType::F32), "sqrtf(x)");
        assert_eq!(c_expr("pow (x, y) + log2(fabs(x))", DType::F32), "powf (x, y) + log2f(fabsf(x))");
        assert_eq!(c_expr("(x != x || x < y) ? x : y", DType::F32), "(x != x || x < y) ? x : y");
        assert_eq!(c_expr("log10(x)", DType::F64), "log10(x)");
        let src = unary_source();
        for f in ["sqrtf(x)", "expf(x)", "logf(x)", "erff(x)", "fabsf(x)", "atanf(x)"] {
            assert!(src.contains(f), "{f}");
        }
        assert!(binary_source().contains("powf(x, y)"));
        // Table expressions hold no floating literals (they would be double in f32 kernels).
        for row in elementwise::UNARY.iter().chain(elementwise::BINARY).chain(elementwise::MASKS) {
            assert!(!row.c.contains('.'), "{}: {}", row.name, row.c);
            for v in row.vars {
                assert!(!["n", "out", "i"].contains(v) && !v.starts_with("a") && !v.starts_with("div") && !v.starts_with("mod"), "{}: variable {v}", row.name);
            }
        }
    }

    #[test]
    fn reductions_propagate_nan_and_start_from_identities() {
        let src = reduce_source();
        assert!(src.contains("float acc = __int_as_float(0x7f800000);"), "min starts at +inf");
        assert!(src.contains("double acc = __longlong_as_double(0xfff0000000000000LL);"), "max starts at -inf");
        assert!(src.contains("float acc = 0.0f;"), "f32 sums accumulate in f32");
        assert!(src.contains("acc = (a != a || a <= b) ? a : b;"));
        assert!(src.contains("__shared__ double s[256];"));
        for r in reduce::Reducer::ALL {
            for layout in [reduce::Layout::Whole, reduce::Layout::Down, reduce::Layout::Across, reduce::Layout::Lanes(1)] {
                for d in FLOATS {
                    assert!(signature(src, &format!("{}_{d}", r.entry(layout))).is_some());
                }
            }
        }
    }

    /// With BACH_KERNELS_DUMP=dir: every source as dir/<n>.cu and dir/manifest.tsv (function,
    /// file), for compiling them with NVRTC outside Rust.
    #[test]
    fn dump_sources_when_asked() {
        let Ok(dir) = std::env::var("BACH_KERNELS_DUMP") else { return };
        std::fs::create_dir_all(&dir).unwrap();
        let mut files: BTreeMap<String, String> = BTreeMap::new();
        let mut manifest = String::new();
        for (name, k) in all() {
            let n = files.len();
            let file = files.entry(k.source.clone()).or_insert_with(|| format!("{n}.cu")).clone();
            manifest += &format!("{name}\t{file}\n");
        }
        for (src, file) in &files {
            std::fs::write(format!("{dir}/{file}"), src).unwrap();
        }
        std::fs::write(format!("{dir}/manifest.tsv"), manifest).unwrap();
    }
}

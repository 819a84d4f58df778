//! Fused elementwise kernels. An elementwise op with a [`Fusable`] expression does not launch
//! when it is run: the CUDA device hands back an [`Expr`] (its expression over its arguments,
//! buffers or other expressions). When something needs the value in memory (a copy to the
//! host, a reduction, a product, a merge), [`generate`] writes one kernel for the whole
//! expression DAG: each argument buffer read once per element, each op a local variable, one
//! store. Intermediates never touch device memory, and a chain of 26 ops is one launch.
//!
//! The kernel's text depends only on the DAG's ops and dtypes, not on sizes (those are
//! parameters), so NVRTC compiles each chain shape once per process.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::sync::{Arc, Mutex};

use crate::annotation::FusedExpr;
use crate::device::Tag;
use crate::value::{DType, DeviceBuffer, DeviceValue, Meta};

/// The entry of every generated kernel.
pub(super) const ENTRY: &str = "bach_fused";

/// Ops in one DAG before its arguments are computed first (a bound on kernel size).
pub(super) const MAX_OPS: usize = crate::annotation::FUSE_MAX_OPS;

/// An elementwise op not yet run. Its arguments are buffers or expressions of its own shape.
pub(super) struct Expr {
    pub op: String,
    pub vars: Vec<String>,
    pub expr: FusedExpr,
    pub args: Vec<DeviceValue>,
    pub meta: Meta,
    pub tag: Tag,
    /// Ops in the DAG (counting shared ones once per use: an upper bound).
    pub ops: usize,
    /// The value once computed, so a second use does not run the kernel again.
    pub realized: Mutex<Option<DeviceValue>>,
}

impl DeviceBuffer for Expr {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// A generated kernel: its source and the buffers it reads, in parameter order.
pub(super) struct Generated {
    pub source: String,
    pub leaves: Vec<DeviceValue>,
    /// The ops fused, in evaluation order (for error messages and hover text).
    pub ops: Vec<String>,
}

/// The C type of a dtype.
fn c_type(d: DType) -> &'static str {
    match d {
        DType::F64 => "double",
        DType::F32 => "float",
        DType::I64 => "long long",
        DType::Bool => "unsigned char",
        DType::Opaque => "void",
    }
}

/// `entry(u64 n, T_out* out, [const T_k* a_k, u64 div_k, u64 mod_k]...)`: the
/// [`Launch::Elementwise`](crate::annotation::Launch) convention with one argument per leaf;
/// a leaf that is a constant (`is_constant`: the device's own kind of value) is one parameter `T_k c_k` by
/// value instead.
pub(super) fn generate(root: &Expr, is_constant: &dyn Fn(&DeviceValue) -> bool) -> Generated {
    struct Walk {
        body: String,
        leaves: Vec<DeviceValue>,
        leaf_index: HashMap<(usize, usize, Vec<usize>), usize>,
        done: HashMap<usize, String>,
        ops: Vec<String>,
    }
    impl Walk {
        /// The C variable holding `v` at element i.
        fn value(&mut self, v: &DeviceValue) -> String {
            match v.buffer::<Expr>() {
                Some(e) if e.realized.lock().unwrap_or_else(|p| p.into_inner()).is_none() => self.op(e),
                _ => {
                    let real = v.buffer::<Expr>().and_then(|e| e.realized.lock().unwrap_or_else(|p| p.into_inner()).clone());
                    let v = real.map(|r| DeviceValue { offset: r.offset + v.offset, meta: v.meta.clone(), ..r }).unwrap_or_else(|| v.clone());
                    let key = (Arc::as_ptr(&v.buffer) as *const () as usize, v.offset, v.meta.shape.clone());
                    let k = match self.leaf_index.get(&key) {
                        Some(&k) => k,
                        None => {
                            self.leaves.push(v);
                            self.leaf_index.insert(key, self.leaves.len() - 1);
                            self.leaves.len() - 1
                        }
                    };
                    format!("l{k}")
                }
            }
        }
        fn op(&mut self, e: &Expr) -> String {
            let id = e as *const Expr as usize;
            if let Some(name) = self.done.get(&id) {
                return name.clone();
            }
            let args: Vec<String> = e.args.iter().map(|a| self.value(a)).collect();
            let name = format!("v{}", self.done.len());
            let at = c_type(e.expr.dtype);
            let ot = c_type(e.expr.out);
            let _ = write!(self.body, "        {ot} {name};\n        {{");
            for (var, arg) in e.vars.iter().zip(&args) {
                let _ = write!(self.body, " const {at} {var} = {arg};");
            }
            let _ = writeln!(self.body, " {name} = ({ot})({}); }}  // {}", e.expr.c, e.op);
            self.ops.push(e.op.clone());
            self.done.insert(id, name.clone());
            name
        }
    }
    let mut w = Walk { body: String::new(), leaves: Vec::new(), leaf_index: HashMap::new(), done: HashMap::new(), ops: Vec::new() };
    let result = w.op(root);
    let mut src = format!("// bach: fused elementwise kernel ({})\nextern \"C\" __global__ void {ENTRY}(unsigned long long n, {}* out", w.ops.join(", "), c_type(root.expr.out));
    let constant: Vec<bool> = w.leaves.iter().map(is_constant).collect();
    for (k, l) in w.leaves.iter().enumerate() {
        if constant[k] {
            let _ = write!(src, ", const {} c{k}", c_type(l.meta.dtype));
        } else {
            let _ = write!(src, ", const {}* a{k}, unsigned long long div{k}, unsigned long long mod{k}", c_type(l.meta.dtype));
        }
    }
    src += ") {\n    for (unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x) {\n";
    for (k, l) in w.leaves.iter().enumerate() {
        if constant[k] {
            let _ = writeln!(src, "        const {} l{k} = c{k};", c_type(l.meta.dtype));
        } else {
            let _ = writeln!(src, "        const {} l{k} = a{k}[(i / div{k}) % mod{k}];", c_type(l.meta.dtype));
        }
    }
    src += &w.body;
    let _ = writeln!(src, "        out[i] = {result};\n    }}\n}}");
    Generated { source: src, leaves: w.leaves, ops: w.ops }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::device::DeviceId;

    struct Leaf;
    impl DeviceBuffer for Leaf {
        fn as_any(&self) -> &dyn std::any::Any {
            self
        }
    }

    fn leaf(d: DType, shape: &[usize]) -> DeviceValue {
        DeviceValue { device: DeviceId(1), meta: Meta::new(d, shape), offset: 0, buffer: Arc::new(Leaf) }
    }

    fn op(name: &str, vars: &[&str], c: &str, d: DType, out: DType, args: Vec<DeviceValue>, shape: &[usize]) -> DeviceValue {
        let ops = 1 + args.iter().filter_map(|a| a.buffer::<Expr>()).map(|e| e.ops).sum::<usize>();
        let e = Expr {
            op: name.into(),
            vars: vars.iter().map(|v| v.to_string()).collect(),
            expr: FusedExpr { dtype: d, c: c.into(), out },
            args,
            meta: Meta::new(out, shape),
            tag: Tag { node: 1, piece: 0 },
            ops,
            realized: Mutex::new(None),
        };
        DeviceValue { device: DeviceId(1), meta: Meta::new(out, shape), offset: 0, buffer: Arc::new(e) }
    }

    /// A DAG with a shared subexpression, a leaf read twice, a broadcast scalar and a bool
    /// result: each leaf is one parameter, each op one variable, and the source compiles.
    fn dag(d: DType, f: &str) -> (DeviceValue, Generated) {
        let x = leaf(d, &[1000, 2]);
        let s = leaf(d, &[]);
        let xs = op("mul", &["x", "y"], "x * y", d, d, vec![x.clone(), s.clone()], &[1000, 2]);
        let e = op("exp", &["x"], &format!("exp{f}(x)"), d, d, vec![xs.clone()], &[1000, 2]);
        let sum = op("add", &["x", "y"], "x + y", d, d, vec![e, xs.clone()], &[1000, 2]);
        let r = op("erf", &["x"], &format!("erf{f}(x)"), d, d, vec![sum], &[1000, 2]);
        let gt = op("gt", &["x", "y"], "x > y", d, DType::Bool, vec![r, x], &[1000, 2]);
        let g = generate(gt.buffer::<Expr>().unwrap(), &crate::cuda::buffers::is_constant);
        (gt, g)
    }

    #[test]
    fn a_dag_becomes_one_kernel_with_each_leaf_and_op_once() {
        let (_, g) = dag(DType::F64, "");
        assert_eq!(g.leaves.len(), 2, "x and the scalar, once each:\n{}", g.source);
        assert_eq!(g.ops, ["mul", "exp", "add", "erf", "gt"], "the shared mul once:\n{}", g.source);
        assert!(g.source.contains("unsigned char* out"), "{}", g.source);
        assert_eq!(g.source.matches("= a0[").count() + g.source.matches("= a1[").count(), 2);
        // The text does not depend on sizes: another size gives the same kernel.
        let x = leaf(DType::F64, &[7]);
        let y = op("neg", &["x"], "-x", DType::F64, DType::F64, vec![x], &[7]);
        let z = leaf(DType::F64, &[9]);
        let w = op("neg", &["x"], "-x", DType::F64, DType::F64, vec![z], &[9]);
        assert_eq!(
            generate(y.buffer::<Expr>().unwrap(), &crate::cuda::buffers::is_constant).source,
            generate(w.buffer::<Expr>().unwrap(), &crate::cuda::buffers::is_constant).source
        );
    }

    /// A scalar constant is a parameter by value, not a pointer read at every element; the
    /// kernel still compiles (with NVRTC, where there is one).
    #[test]
    fn constants_are_parameters_by_value() {
        for (d, f, bits) in [(DType::F64, "", 2.5f64.to_bits()), (DType::F32, "f", 2.5f32.to_bits() as u64)] {
            let x = leaf(d, &[1000]);
            let c = super::super::buffers::constant_for_tests(Meta::new(d, []), bits);
            let xc = op("mul", &["x", "y"], "x * y", d, d, vec![x, c], &[1000]);
            let e = op("exp", &["x"], &format!("exp{f}(x)"), d, d, vec![xc], &[1000]);
            let g = generate(e.buffer::<Expr>().unwrap(), &crate::cuda::buffers::is_constant);
            let t = c_type(d);
            assert!(g.source.contains(&format!("const {t} c1")) && g.source.contains("const") && g.source.contains(&format!("const {t} l1 = c1;")), "{}", g.source);
            assert!(!g.source.contains("a1["), "the constant is not read from memory:\n{}", g.source);
            if super::super::nvrtc::version().is_ok() {
                super::super::nvrtc::compile(&g.source, "compute_90").unwrap_or_else(|e| panic!("{e}\n{}", g.source));
            }
        }
    }

    #[test]
    fn fused_kernels_compile_with_nvrtc() {
        if let Err(why) = super::super::nvrtc::version() {
            if crate::knobs::Knobs::from_env().require_nvrtc {
                panic!("BACH_REQUIRE_NVRTC=1 but {why}");
            }
            eprintln!("fused_kernels_compile_with_nvrtc: skipped ({why})");
            return;
        }
        for (d, f) in [(DType::F64, ""), (DType::F32, "f")] {
            let (_, g) = dag(d, f);
            for arch in ["compute_90", "compute_75"] {
                super::super::nvrtc::compile(&g.source, arch).unwrap_or_else(|e| panic!("{arch}: {e}\n{}", g.source));
            }
        }
    }
}

//! Offload annotations: for one CPU function, its accelerator equivalent, the split type of
//! each argument and of the result, whether it can run in pieces, and cost estimators.
//!
//! This is the public API for annotators: the project annotates its array library with it,
//! and a user annotates their own function from a notebook cell the same way:
//!
//! ```
//! use bach_runtime::{oa, split, Session, Value};
//! let softplus = oa("softplus")
//!     .cpu(|_ctx, args| {
//!         let x = args[0].array::<f64>("softplus")?;
//!         Ok(Value::from(x.mapv(|v| (1.0 + v.exp()).ln())))
//!     })
//!     .build();
//! let session = Session::new();
//! let x = session.source(Value::from(ndarray::arr1(&[0.0, 1.0]).into_dyn()), "x");
//! let y = softplus.call(&[&x]).unwrap();
//! let out = y.eval().unwrap();
//! assert!((out.array::<f64>().unwrap()[[1]] - 1.3132616875182228).abs() < 1e-15);
//! ```

use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use crate::cost::Family;
use crate::error::{BachError, Result};
use crate::profile::DeviceProfile;
use crate::split::{self, SplitRef};
use crate::value::{DType, Meta, Value, ValueRef};

/// What a kernel is told about the piece it computes.
#[derive(Clone, Debug)]
pub struct OpCtx<'a> {
    /// Meta of the whole result (not of the piece).
    pub meta: &'a Meta,
    /// Rows of the split dimension this piece covers (the whole range when run whole).
    pub rows: Range<usize>,
    /// Index of the piece within its stage.
    pub piece: usize,
    /// Id of the graph node being computed (for a device's own timing of its work).
    pub node: u64,
}

/// The CPU implementation of an op: piece arguments in, piece result out.
pub type CpuKernel = Arc<dyn Fn(&OpCtx<'_>, &[ValueRef<'_>]) -> Result<Value> + Send + Sync>;
/// Result meta from argument metas; errors here are errors at the line of the call.
pub type ShapeRule = Arc<dyn Fn(&[Meta]) -> Result<Meta> + Send + Sync>;
/// Estimated seconds to run the op once over whole values on a device.
pub type Estimator = Arc<dyn Fn(&[Meta], &Meta, &DeviceProfile) -> f64 + Send + Sync>;
/// An op's work in the units the cost model's table prices (see [`AnnotationBuilder::work`]).
pub type WorkRule = Arc<dyn Fn(&[Meta], &Meta) -> crate::cost::Work + Send + Sync>;
/// Seconds to move an argument of this meta between the host and a device (the paper's
/// transfer estimator); without one the cost model's bandwidth is used.
pub type TransferEstimator = Arc<dyn Fn(&Meta, &DeviceProfile) -> f64 + Send + Sync>;

/// The accelerator slot of an annotation: kernel source for the accelerator library. The
/// CUDA device compiles `source` (CUDA C) with NVRTC once per process and launches `entry`
/// with the dtype suffix `_f64`, `_f32` or `_bool` of the first argument (of the result, for
/// allocations), following `launch`.
#[derive(Clone, Debug, PartialEq)]
pub struct AcceleratorKernel {
    pub entry: String,
    pub source: String,
    pub launch: Launch,
    /// The op as a C expression, for a device that fuses chains of elementwise ops into one
    /// generated kernel (intermediates never reach device memory); `None`: launched alone.
    pub fusable: Option<Fusable>,
}

/// An elementwise op as an expression a device can fuse with its neighbours: argument k is
/// bound to `vars[k]`, and the value is `expr` (per dtype of the first argument) converted to
/// `out`. Every argument has the first argument's dtype.
#[derive(Clone, Debug, PartialEq)]
pub struct Fusable {
    pub vars: Vec<String>,
    pub exprs: Vec<FusedExpr>,
}

/// One dtype's expression of a [`Fusable`] op.
#[derive(Clone, Debug, PartialEq)]
pub struct FusedExpr {
    /// Dtype of the arguments.
    pub dtype: DType,
    /// C expression over `vars` (CUDA C, in that dtype).
    pub c: String,
    /// Dtype of the result.
    pub out: DType,
}

/// Ops in one fused expression DAG (counting shared ones once per use) before a device that
/// fuses computes its arguments first: a bound on a generated kernel's size. The CUDA device
/// fuses by it and the planner sizes pieces by it.
pub const FUSE_MAX_OPS: usize = 64;

impl Fusable {
    /// The expression for arguments of dtype `d`, if the op takes them.
    pub fn expr(&self, d: DType) -> Option<&FusedExpr> {
        self.exprs.iter().find(|e| e.dtype == d)
    }
}

/// How element `i` of an output of shape `out` finds its element in an argument of shape
/// `arg`: at `(i / div) % modulo` (the [`Launch::Elementwise`] convention). The
/// argument's axes that are not 1 must be one contiguous run of the output's axes (same
/// shape, a scalar, trailing axes such as `[cols]` under `[rows, cols]`, leading axes such
/// as `[rows, 1]` under `[rows, cols]`); anything else is refused.
pub fn broadcast_index(arg: &[usize], out: &[usize]) -> Result<(u64, u64), String> {
    if arg.len() > out.len() {
        return Err(format!("an argument of shape {arg:?} has more axes than the result {out:?}"));
    }
    let pad = out.len() - arg.len();
    let dim = |k: usize| if k < pad { 1 } else { arg[k - pad] };
    // Axes where the argument varies (its size equals the output's and is not 1).
    let mut first = None;
    let mut last = None;
    for (k, &o) in out.iter().enumerate() {
        let a = dim(k);
        if a == o && o != 1 {
            first.get_or_insert(k);
            last = Some(k);
        } else if a != 1 && a != o {
            return Err(format!("an argument of shape {arg:?} does not broadcast to {out:?}"));
        }
    }
    let (Some(first), Some(last)) = (first, last) else {
        return Ok((1, 1));
    };
    if (first..=last).any(|k| dim(k) != out[k]) {
        return Err(format!("an argument of shape {arg:?} broadcast to {out:?} is not one contiguous run of axes: the GPU kernels cannot index it (it runs on the CPU)"));
    }
    let div: usize = out[last + 1..].iter().product();
    let modulo: usize = out[first..=last].iter().product();
    Ok((div as u64, modulo as u64))
}

/// How an accelerator kernel is launched: its parameters, in order. `u64` is
/// `unsigned long long`; pointers are device pointers to row-major pieces; bool is
/// `unsigned char`; scalar `params` are passed as `double` after the fixed parameters.
#[derive(Clone, Debug, PartialEq)]
pub enum Launch {
    /// `entry(u64 n, T_out* out, [const T_k* arg_k, u64 div_k, u64 mod_k]..., double params...)`:
    /// out has n elements; argument k is read at `(i / div_k) % mod_k` (numpy broadcasting of
    /// a piece: a scalar has div 1, mod 1; a row vector under a matrix div 1, mod cols; a
    /// column vector div cols, mod rows). One thread per element, grid-stride loop.
    Elementwise { params: Vec<f64> },
    /// `entry(u64 n, T* out, u64 first, double params...)`: fills a piece of an allocation;
    /// element i of the piece is element `first + i` of the whole value.
    Fill { params: Vec<f64> },
    /// Reduces a row-major piece of any number of axes along `axis` (`None`: every axis),
    /// seen as a rows x cols matrix where it can be:
    /// `entry(u64 rows, u64 cols, const T* x, T* out)`: `None` to one value (rows x cols is
    /// every element), `Some(0)` to cols values (rows is axis 0, cols the rest), the last axis
    /// to rows values (cols is the last axis, rows the rest); each launched with one block of
    /// 256 threads per output value. A middle axis of an array of 3 or more axes is
    /// `entry(u64 outer, u64 len, u64 inner, const T* x, T* out)` (an entry named `*_lanes`):
    /// output `o = i * inner + j` reduces `x[(i * len + k) * inner + j]` over `k`, one thread
    /// per output, grid-stride loop.
    Reduce { axis: Option<usize> },
    /// A matrix product through the device's BLAS (cuBLAS): no source; the device reads the
    /// shapes of the two arguments (vector/matrix, the four cases of `dot`).
    Gemm,
    /// `X^T X` of the one `n x d` argument (f64 or f32) through the device's BLAS: no source.
    Gram,
    /// `entry(u64 rows, u64 cols, const T_0* a_0, const T_1* a_1, ..., T_out* out, double
    /// params...)`: one thread per row of argument 0 (its piece, rows x cols; a 1-D piece is
    /// rows x 1), grid-stride; the other arguments whole; the result has `rows` rows. For ops
    /// that keep state of their own along a row (the k-nearest vote).
    Rows { params: Vec<f64> },
    /// A product with an epilogue, for ops over all pairs of rows (distances, neighbourhoods)
    /// that must not hold every pair at once: the device's BLAS computes `C = A_0 · A_1^T`
    /// (argument 0's piece, `rows x k`; argument 1 whole, `cols x k`; both f64 or both f32)
    /// a block of rows at a time into scratch memory, and after each block runs
    /// `entry(u64 rows, u64 cols, u64 first, const T* c, const T_0* a_0, const T_1* a_1, ...,
    /// T_out* out, double params...)`: `c` the block's `rows x cols` products, row-major;
    /// `first` the block's first row in the piece; the argument pointers and `out` (the
    /// piece's result) as for [`Launch::Rows`], whole. Grid-stride: the kernel maps its own
    /// work onto the threads (about one per element of `c` are launched).
    Cross { params: Vec<f64> },
    /// The symmetric eigen problem of the one `d x d` f64 argument (its lower triangle, as
    /// numpy's `eigh`) through the device's solver (cuSOLVER's `syevd`): no source. The result
    /// is `(d + 1) x d`: row 0 the eigenvalues, descending; row `1 + i` the unit eigenvector of
    /// eigenvalue `i`, its largest-magnitude entry (the first of equals) positive; all NaN when
    /// the lower triangle holds a NaN or an infinity.
    SymmetricEigen,
}

/// What kind of node an annotation makes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OpKind {
    /// A computation over its arguments.
    Compute,
    /// An allocation (`oa_alloc`): no arguments, created on the device of its first user.
    Alloc,
    /// A value the user handed in; it lives on the CPU.
    Source,
}

/// One annotated function. Build with [`oa`] or [`oa_alloc`].
pub struct Annotation {
    pub(crate) name: String,
    pub(crate) kind: OpKind,
    pub(crate) cpu: CpuKernel,
    pub(crate) accelerator: Option<AcceleratorKernel>,
    pub(crate) args: Vec<SplitRef>,
    pub(crate) result: SplitRef,
    pub(crate) splittable: bool,
    pub(crate) shape: ShapeRule,
    pub(crate) estimator: Option<Estimator>,
    pub(crate) work: Option<WorkRule>,
    pub(crate) transfer_estimator: Option<TransferEstimator>,
    pub(crate) cpu_only_reason: Option<String>,
    pub(crate) elementwise: bool,
    pub(crate) family: Option<Family>,
    pub(crate) weight: f64,
}

impl fmt::Debug for Annotation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Annotation")
            .field("name", &self.name)
            .field("kind", &self.kind)
            .field("args", &self.args)
            .field("result", &self.result)
            .field("splittable", &self.splittable)
            .field("accelerator", &self.accelerator.as_ref().map(|k| &k.entry))
            .finish()
    }
}

impl Annotation {
    pub fn name(&self) -> &str {
        &self.name
    }
    pub fn kind(&self) -> OpKind {
        self.kind
    }
    pub fn splittable(&self) -> bool {
        self.splittable
    }
    pub fn accelerator(&self) -> Option<&AcceleratorKernel> {
        self.accelerator.as_ref()
    }
    /// The expression a device that fuses elementwise chains keeps this op as, for arguments
    /// of dtypes `args`: an elementwise launch without scalar parameters whose [`Fusable`]
    /// binds every argument and has an expression for their one dtype. `None`: launched alone.
    pub fn fused_expr(&self, args: &[DType]) -> Option<(&Fusable, &FusedExpr)> {
        let k = self.accelerator.as_ref()?;
        let fusable = k.fusable.as_ref().filter(|_| matches!(&k.launch, Launch::Elementwise { params } if params.is_empty()))?;
        let first = *args.first()?;
        if fusable.vars.len() != args.len() || args.iter().any(|&d| d != first) {
            return None;
        }
        Some((fusable, fusable.expr(first)?))
    }
    pub fn result_split(&self) -> &SplitRef {
        &self.result
    }
    /// Why this op never leaves the CPU, when it never does.
    pub fn cpu_only_reason(&self) -> Option<&str> {
        self.cpu_only_reason.as_deref()
    }
    /// Run the CPU implementation.
    pub fn run_cpu(&self, ctx: &OpCtx<'_>, args: &[ValueRef<'_>]) -> Result<Value> {
        (self.cpu)(ctx, args)
    }
    /// The row of the cost model's table this op is priced by: as annotated, else from its
    /// kind and launch (allocations, products, reductions, elementwise ops), else `other`.
    pub fn family(&self) -> Family {
        if let Some(f) = self.family {
            return f;
        }
        match (self.kind, self.accelerator.as_ref().map(|k| &k.launch)) {
            (OpKind::Alloc, _) => Family::Alloc,
            (_, Some(Launch::Gemm | Launch::Gram | Launch::Cross { .. })) => Family::Product,
            (_, Some(Launch::Reduce { .. })) => Family::Reduce,
            _ if self.elementwise => Family::Elementwise,
            _ => Family::Other,
        }
    }
    /// This op's cost per element on a CPU beside its family's (see [`AnnotationBuilder::weight`]).
    pub fn weight(&self) -> f64 {
        self.weight
    }
    /// The annotation's own estimate of one run on `device` (the paper's estimators); the
    /// planner uses the cost model's table when there is none.
    pub fn estimate(&self, args: &[Meta], result: &Meta, device: &DeviceProfile) -> Option<f64> {
        self.estimator.as_ref().map(|e| e(args, result, device))
    }
    /// What one run over `args` into `result` does, as the table prices it: the annotation's
    /// own rule, else its family's ([`crate::cost::Work::of`]).
    pub fn work(&self, args: &[Meta], result: &Meta) -> crate::cost::Work {
        match &self.work {
            Some(rule) => rule(args, result),
            None => crate::cost::Work::of(self.family(), args, result),
        }
    }
    /// The annotation's estimate of moving an argument of `meta` to or from `device`.
    pub fn estimate_transfer(&self, meta: &Meta, device: &DeviceProfile) -> Option<f64> {
        self.transfer_estimator.as_ref().map(|e| e(meta, device))
    }

    /// The result's meta for these argument metas (the shape rule).
    pub fn result_meta(&self, args: &[Meta]) -> Result<Meta> {
        if self.kind == OpKind::Compute && args.len() != self.args.len() {
            return Err(BachError::invalid(&self.name, format!("takes {} argument(s), got {}", self.args.len(), args.len())));
        }
        (self.shape)(args)
    }

    /// Split types of the arguments of one call. A `rows` argument without rows (0-d), or,
    /// for elementwise ops, one broadcast along the result's first axis, is handed whole to
    /// every piece instead.
    pub fn resolve_splits(&self, args: &[Meta], result: &Meta) -> Vec<SplitRef> {
        let elementwise = self.elementwise;
        self.args
            .iter()
            .zip(args)
            .map(|(declared, meta)| {
                let spans = meta.ndim() == result.ndim() && meta.ndim() > 0 && meta.shape[0] == result.shape[0];
                if declared.key() == "rows" && (meta.ndim() == 0 || (elementwise && !spans)) {
                    split::broadcast()
                } else {
                    declared.clone()
                }
            })
            .collect()
    }
}

/// Builder for an [`Annotation`].
pub struct AnnotationBuilder {
    a: Annotation,
}

/// Annotate a function: `oa(name).cpu(kernel)...build()`. Defaults: one `rows` argument,
/// `rows` result, splittable, result meta equal to the first argument's.
pub fn oa(name: impl Into<String>) -> AnnotationBuilder {
    AnnotationBuilder::new(name.into(), OpKind::Compute)
}

/// Annotate an allocation: no arguments; the kernel fills `ctx.rows` of a value of meta
/// `ctx.meta`. The node is created on the device of its first user.
pub fn oa_alloc(name: impl Into<String>) -> AnnotationBuilder {
    let mut b = AnnotationBuilder::new(name.into(), OpKind::Alloc);
    b.a.args = vec![];
    b
}

impl AnnotationBuilder {
    fn new(name: String, kind: OpKind) -> Self {
        let n = name.clone();
        AnnotationBuilder {
            a: Annotation {
                name,
                kind,
                cpu: Arc::new(move |_, _| Err(BachError::invalid(&n, "no CPU implementation was annotated"))),
                accelerator: None,
                args: vec![split::rows()],
                result: split::rows(),
                splittable: true,
                shape: Arc::new(|args: &[Meta]| args.first().cloned().ok_or_else(|| BachError::invalid("shape", "no argument to take the shape from"))),
                estimator: None,
                work: None,
                transfer_estimator: None,
                cpu_only_reason: None,
                elementwise: false,
                family: None,
                weight: 1.0,
            },
        }
    }
    /// The CPU implementation.
    pub fn cpu(mut self, f: impl Fn(&OpCtx<'_>, &[ValueRef<'_>]) -> Result<Value> + Send + Sync + 'static) -> Self {
        self.a.cpu = Arc::new(f);
        self
    }
    /// The accelerator implementation: CUDA C source and its entry point, launched as an
    /// elementwise kernel with no scalar parameters (see [`Launch::Elementwise`]).
    pub fn accelerator(self, entry: impl Into<String>, source: impl Into<String>) -> Self {
        self.accelerator_launch(entry, source, Launch::Elementwise { params: vec![] })
    }
    /// The accelerator implementation with its launch convention.
    pub fn accelerator_launch(mut self, entry: impl Into<String>, source: impl Into<String>, launch: Launch) -> Self {
        self.a.accelerator = Some(AcceleratorKernel { entry: entry.into(), source: source.into(), launch, fusable: None });
        self
    }
    /// The op as a C expression a device may fuse with neighbouring elementwise ops (set after
    /// `accelerator_launch`; an op with scalar `params` is not fused).
    pub fn fusable(mut self, fusable: Fusable) -> Self {
        if let Some(k) = self.a.accelerator.as_mut() {
            k.fusable = Some(fusable);
        }
        self
    }
    /// Split types of the arguments, in order.
    pub fn args(mut self, splits: impl IntoIterator<Item = SplitRef>) -> Self {
        self.a.args = splits.into_iter().collect();
        self
    }
    /// An elementwise op with numpy broadcasting: an argument broadcast along the first axis
    /// of the result is not split but handed whole to every piece.
    pub fn elementwise(mut self) -> Self {
        self.a.elementwise = true;
        self
    }
    /// The cost model's row for this op, when its kind and launch do not say it (see
    /// [`Annotation::family`]).
    pub fn family(mut self, family: Family) -> Self {
        self.a.family = Some(family);
        self
    }
    /// What one element of this op costs on a CPU beside the average op of its family (1):
    /// `erf` over spread-out inputs costs about 4 times an `exp`, a `sqrt` a quarter.
    pub fn weight(mut self, weight: f64) -> Self {
        self.a.weight = weight;
        self
    }
    /// Split type of the result.
    pub fn result(mut self, split: SplitRef) -> Self {
        self.a.result = split;
        self
    }
    /// The op needs whole values: it never runs in pieces.
    pub fn unsplittable(mut self) -> Self {
        self.a.splittable = false;
        self.a.result = split::unsplittable();
        self
    }
    /// How the result's meta follows from the arguments' (also where shapes are checked).
    pub fn shape(mut self, f: impl Fn(&[Meta]) -> Result<Meta> + Send + Sync + 'static) -> Self {
        self.a.shape = Arc::new(f);
        self
    }
    /// Cost estimator: seconds for one whole run on a device.
    pub fn estimate(mut self, f: impl Fn(&[Meta], &Meta, &DeviceProfile) -> f64 + Send + Sync + 'static) -> Self {
        self.a.estimator = Some(Arc::new(f));
        self
    }
    /// The op's work for its family's row of the cost model (elements, flops), where the
    /// family's own rule does not fit (an ML op whose products are not one `dot`): unlike an
    /// estimator's seconds, the table's rates are calibrated per machine and per device.
    pub fn work(mut self, f: impl Fn(&[Meta], &Meta) -> crate::cost::Work + Send + Sync + 'static) -> Self {
        self.a.work = Some(Arc::new(f));
        self
    }
    /// Transfer estimator: seconds to move one argument of this meta between the host and a
    /// device (as the paper's annotations give it).
    pub fn estimate_transfer(mut self, f: impl Fn(&Meta, &DeviceProfile) -> f64 + Send + Sync + 'static) -> Self {
        self.a.transfer_estimator = Some(Arc::new(f));
        self
    }
    /// This op stays on the CPU, and the plan says why (e.g. a Rust closure).
    pub fn cpu_only(mut self, reason: impl Into<String>) -> Self {
        self.a.cpu_only_reason = Some(reason.into());
        self.a.accelerator = None;
        self
    }
    pub fn build(self) -> Arc<Annotation> {
        Arc::new(self.a)
    }
}

/// The annotation of values handed in by the user.
pub(crate) fn source_annotation(name: &str) -> Arc<Annotation> {
    let mut b = AnnotationBuilder::new(name.to_string(), OpKind::Source);
    b.a.args = vec![];
    b.a.splittable = false;
    b.a.result = split::rows();
    b.build()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::DType;

    #[test]
    fn broadcast_args_are_not_split() {
        let add = oa("add").args([split::rows(), split::rows()]).elementwise().build();
        let res = Meta::new(DType::F64, [4, 3]);
        let splits = add.resolve_splits(&[Meta::new(DType::F64, [4, 3]), Meta::new(DType::F64, [3])], &res);
        assert_eq!(splits[0].key(), "rows");
        assert_eq!(splits[1].key(), "broadcast");
        let scalar = add.resolve_splits(&[Meta::new(DType::F64, [4, 3]), Meta::new(DType::F64, [])], &res);
        assert_eq!(scalar[1].key(), "broadcast");
    }

    #[test]
    fn wrong_arity_is_an_error() {
        let f = oa("f").build();
        assert!(f.result_meta(&[]).is_err());
    }
}

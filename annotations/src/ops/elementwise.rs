//! Elementwise ops: one table of unary math, one of binary arithmetic and comparisons, one of
//! masks, plus `where_`, casts, `powi` and `mapv`. Each row is one annotation with its f64 and
//! f32 CPU kernels and the CUDA C expression its accelerator kernels are generated from
//! (`kernels.rs`): adding an op is adding a row.

use std::sync::{Arc, LazyLock};

use bach_runtime::{oa, split, Annotation, BachError, DType, Element, Family, Launch, Lazy, Meta, Result, Value, ValueRef};
use ndarray::{ArcArray as NdArc, ArrayD, ArrayViewD, Dimension, Ix1, IxDyn, Zip};

use crate::array::BinOp;
use crate::array::{or_panic, Array, ArrayBase, Data, Host, Operand};
use crate::ops::kernels::{self, elementwise_kernel, table_source, Row, ELEMENTS, FLOATS};
use crate::ops::simd;
use crate::real::{Numeric, Real, SliceOrScalar};

/// numpy's broadcasting: the result shape of `shapes`, or a shape error naming `op`.
pub(crate) fn broadcast_shape(op: &str, shapes: &[&[usize]]) -> Result<Vec<usize>> {
    let ndim = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; ndim];
    for s in shapes {
        for (k, &d) in s.iter().rev().enumerate() {
            let o = &mut out[ndim - 1 - k];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                let listed: Vec<String> = shapes.iter().map(|s| format!("{s:?}")).collect();
                return Err(BachError::shape(op, format!("shapes {} cannot be broadcast together", listed.join(" and "))));
            }
        }
    }
    Ok(out)
}

/// Result meta of an elementwise op over `args` of one dtype; `out` overrides the dtype.
pub(crate) fn elementwise_meta(op: &str, args: &[Meta], out: Option<DType>) -> Result<Meta> {
    let dtype = args[0].dtype;
    if let Some(other) = args.iter().find(|m| m.dtype != dtype) {
        return Err(BachError::dtype(op, dtype, other.dtype));
    }
    let shapes: Vec<&[usize]> = args.iter().map(|m| m.shape.as_slice()).collect();
    Ok(Meta::new(out.unwrap_or(dtype), broadcast_shape(op, &shapes)?))
}

fn scalar<T: Copy>(a: &ArrayViewD<'_, T>) -> Option<T> {
    (a.ndim() == 0).then(|| *a.first().expect("0-d arrays hold one element"))
}

/// `f` over two arrays with broadcasting; the common cases (same shape, a scalar) are direct.
pub(crate) fn zip2<T: Copy, U: Copy, R>(op: &str, a: ArrayViewD<'_, T>, b: ArrayViewD<'_, U>, f: impl Fn(T, U) -> R) -> Result<ArrayD<R>> {
    if a.shape() == b.shape() {
        return Ok(Zip::from(&a).and(&b).map_collect(|&x, &y| f(x, y)));
    }
    if let Some(c) = scalar(&b) {
        return Ok(a.mapv(|x| f(x, c)));
    }
    if let Some(c) = scalar(&a) {
        return Ok(b.mapv(|y| f(c, y)));
    }
    // A matrix and a row vector (`x - mean` over samples x features), either way round.
    if let (Some(sa), Some(sb)) = (a.as_slice(), b.as_slice()) {
        if let Some(out) = rows_with_vector(a.shape(), sa, b.shape(), sb, &f).or_else(|| rows_with_vector(b.shape(), sb, a.shape(), sa, |y, x| f(x, y))) {
            return Ok(out);
        }
    }
    let shape = broadcast_shape(op, &[a.shape(), b.shape()])?;
    let (a, b) = (a.broadcast(shape.clone()).expect("checked"), b.broadcast(shape).expect("checked"));
    Ok(Zip::from(&a).and(&b).map_collect(|&x, &y| f(x, y)))
}

/// `f(row element, vector element)` over the rows of a standard-layout `rows x cols` matrix
/// `m` and a vector `v` of `cols` (shape `[cols]` or `[1, cols]`), row by row over slices;
/// `None` when the shapes are not that case. ndarray's broadcast `Zip` walks narrow rows
/// slowly: 13 features, a piece in cache, 1.7 ns an element against 0.45 here.
fn rows_with_vector<M: Copy, V: Copy, R>(m_shape: &[usize], m: &[M], v_shape: &[usize], v: &[V], f: impl Fn(M, V) -> R) -> Option<ArrayD<R>> {
    let &[rows, cols] = m_shape else { return None };
    if cols == 0 || !(v_shape == [cols] || v_shape == [1, cols]) {
        return None;
    }
    let mut out = Vec::with_capacity(rows * cols);
    for row in m.chunks_exact(cols) {
        out.extend(row.iter().zip(v).map(|(&x, &y)| f(x, y)));
    }
    Some(ArrayD::from_shape_vec(IxDyn(&[rows, cols]), out).expect("rows x cols elements"))
}

/// Ops that cost tens of cycles per element on a CPU: the cost model's `math` family (the
/// rest of the tables are `elementwise`, a few cycles each), and what an element of each costs
/// beside an `exp` (1) on a CPU. Measured on the 2-core development machine: f64, one thread,
/// 2^20 values in random order (branches are then taken as in a workload), over [-3, 3] or
/// the function's domain. In ns: sqrt 1.1, exp 4.5, ln 3.8, log2 3.4, log10 6.7, tan 9.7,
/// atan 8.8, erf 19.9, powf 10.2; sin 7.9, cos 8.2, asin/acos 7.1 four lanes at a time
/// (`simd.rs`; the C library's took 12.3, 14.3 and 13.0). Over narrow ranges some are
/// cheaper (erf over [0.65, 0.93] 7.0). The rest beside an `exp` in one run (2^20 values,
/// the other cores busy): tanh 2.2, sinh 1.8, cosh 1.3, exp_m1 2.1, ln_1p 2.0 (over (0, 50]),
/// cbrt 2.9, exp2 0.4, floor and ceil 1.1 (a library call without SSE4.1); round, trunc,
/// recip and signum cost what a multiplication does (the `elementwise` family).
const MATH_WEIGHTS: &[(&str, f64)] = &[
    ("sqrt", 0.25),
    ("exp", 1.0),
    ("ln", 0.85),
    ("log2", 0.75),
    ("log10", 1.5),
    ("sin", 1.75),
    ("cos", 1.8),
    ("tan", 2.2),
    ("asin", 1.6),
    ("acos", 1.6),
    ("atan", 2.0),
    ("erf", 4.4),
    ("powf", 2.3),
    ("tanh", 2.2),
    ("sinh", 1.8),
    ("cosh", 1.3),
    ("exp_m1", 2.1),
    ("ln_1p", 2.0),
    ("cbrt", 2.9),
    ("exp2", 0.4),
    ("floor", 1.1),
    ("ceil", 1.1),
];

/// The weights that differ on a processor with AVX2 and FMA, whose kernels (`simd/avx2.rs`,
/// `simd/erf.rs`) run four lanes in one instruction: each [`MATH_WEIGHTS`] weight times the
/// AVX2 kernel's time over the one it replaces, both measured the same way in one run
/// (`cargo test --release -p bach --lib kernel_speed -- --ignored --nocapture`, 8192 random
/// arguments, three runs, in ns): erf over [-3, 3] 7.3 against the scalar 17.6-21.7; sin
/// and cos over [-3.5, 3.5] 1.5-1.7 against `wide`'s SSE2 5.6-5.9; asin and acos over
/// [-1, 1] 1.9-2.0 against 5.5-6.0 (exp 4.9-6.1).
const AVX2_WEIGHTS: &[(&str, f64)] = &[("erf", 1.8), ("sin", 0.46), ("cos", 0.47), ("asin", 0.55), ("acos", 0.53)];

/// The weight of a table row within its family (see [`MATH_WEIGHTS`] and [`AVX2_WEIGHTS`];
/// 1 for the rest).
fn weight_of(name: &str) -> f64 {
    if simd::avx2_kernels() {
        if let Some(&(_, w)) = AVX2_WEIGHTS.iter().find(|(n, _)| *n == name) {
            return w;
        }
    }
    MATH_WEIGHTS.iter().find(|(n, _)| *n == name).map_or(1.0, |&(_, w)| w)
}

/// The cost family of a table row.
fn family_of(name: &str) -> Family {
    if MATH_WEIGHTS.iter().any(|(n, _)| *n == name) {
        Family::Math
    } else {
        Family::Elementwise
    }
}

/// A unary float op: kernels for f64 and f32 from the same expression; accelerator entry
/// `$name` in the unary source.
macro_rules! unary {
    ($name:literal, |$x:ident| $body:expr, $c:literal) => {{
        oa($name)
            .elementwise()
            .family(family_of($name))
            .weight(weight_of($name))
            .accelerator_launch($name, unary_source(), Launch::Elementwise { params: vec![] })
            .fusable(kernels::fusable(&[stringify!($x)], $c, None, &kernels::FLOATS))
            .shape(|m: &[Meta]| match m[0].dtype {
                DType::F64 | DType::F32 => Ok(m[0].clone()),
                d => Err(BachError::dtype($name, "f64 or f32", d)),
            })
            .cpu(|_, args| match &args[0] {
                ValueRef::F64(a) => Ok(Value::from(match simd::unary_f64($name) {
                    Some(op) => simd::map(a.view(), &op, |$x: f64| $body),
                    None => a.mapv(|$x: f64| $body),
                })),
                ValueRef::F32(a) => Ok(Value::from(a.mapv(|$x: f32| $body))),
                v => Err(BachError::dtype($name, "f64 or f32", v.dtype())),
            })
            .build()
    }};
}

/// A binary float op (`out` = Some(Bool) for comparisons); accelerator entry `$name` in the
/// binary source.
macro_rules! binary {
    ($name:literal, $out:expr, |$x:ident, $y:ident| $body:expr, $c:literal) => {{
        oa($name)
            .elementwise()
            .family(family_of($name))
            .weight(weight_of($name))
            .accelerator_launch($name, binary_source(), Launch::Elementwise { params: vec![] })
            .fusable(kernels::fusable(&[stringify!($x), stringify!($y)], $c, $out, &kernels::FLOATS))
            .args([split::rows(), split::rows()])
            .shape(|m: &[Meta]| elementwise_meta($name, m, $out))
            .cpu(|_, args| match (&args[0], &args[1]) {
                (ValueRef::F64(a), ValueRef::F64(b)) => Ok(Value::from(zip2($name, a.view(), b.view(), |$x: f64, $y: f64| $body)?)),
                (ValueRef::F32(a), ValueRef::F32(b)) => Ok(Value::from(zip2($name, a.view(), b.view(), |$x: f32, $y: f32| $body)?)),
                (a, b) => Err(BachError::dtype($name, a.dtype(), b.dtype())),
            })
            .build()
    }};
}

/// A mask op (one or two bool arguments); accelerator entry `$name` in the mask source.
macro_rules! mask {
    ($name:literal, |$x:ident| $body:expr) => {{
        oa($name)
            .elementwise()
            .accelerator_launch($name, mask_source(), Launch::Elementwise { params: vec![] })
            .cpu(|_, args| Ok(Value::from(args[0].array::<bool>($name)?.mapv(|$x: bool| $body))))
            .build()
    }};
    ($name:literal, |$x:ident, $y:ident| $body:expr) => {{
        oa($name)
            .elementwise()
            .accelerator_launch($name, mask_source(), Launch::Elementwise { params: vec![] })
            .args([split::rows(), split::rows()])
            .shape(|m: &[Meta]| elementwise_meta($name, m, None))
            .cpu(|_, args| {
                let (a, b) = (args[0].array::<bool>($name)?, args[1].array::<bool>($name)?);
                Ok(Value::from(zip2($name, a, b, |$x: bool, $y: bool| $body)?))
            })
            .build()
    }};
}

/// The unary op table: method name, annotation name, CPU expression, CUDA C expression (for
/// double, in the closure's variable; f32 kernels call the `f`-suffixed functions).
macro_rules! unary_table {
    ($($method:ident => $name:literal, |$x:ident| $body:expr, $c:literal;)*) => {
        /// Every unary annotation, in table order (the methods' own).
        static UNARY_OPS: LazyLock<Vec<Arc<Annotation>>> = LazyLock::new(|| vec![$(unary!($name, |$x| $body, $c)),*]);
        /// The unary rows for the kernel generator.
        pub(crate) const UNARY: &[Row] = &[$(Row { name: $name, vars: &[stringify!($x)], out: None, c: $c }),*];

        impl<A: Real, S: Data<Elem = A>, D: Dimension> ArrayBase<S, D> {
            $(
                #[doc = concat!("Elementwise `", $name, "` (lazy).")]
                pub fn $method(&self) -> Array<A, D> {
                    static OP: LazyLock<Arc<Annotation>> = LazyLock::new(|| unary_op($name));
                    self.call(&OP, &[]).expect("unary ops accept every float array")
                }
            )*
        }
    };
}

unary_table! {
    sqrt => "sqrt", |x| x.sqrt(), "sqrt(x)";
    exp => "exp", |x| x.exp(), "exp(x)";
    ln => "ln", |x| x.ln(), "log(x)";
    log2 => "log2", |x| x.log2(), "log2(x)";
    log10 => "log10", |x| x.log10(), "log10(x)";
    sin => "sin", |x| x.sin(), "sin(x)";
    cos => "cos", |x| x.cos(), "cos(x)";
    tan => "tan", |x| x.tan(), "tan(x)";
    asin => "asin", |x| x.asin(), "asin(x)";
    acos => "acos", |x| x.acos(), "acos(x)";
    atan => "atan", |x| x.atan(), "atan(x)";
    erf => "erf", |x| Real::erf(x), "erf(x)";
    abs => "abs", |x| x.abs(), "fabs(x)";
    neg => "neg", |x| -x, "-x";
    tanh => "tanh", |x| x.tanh(), "tanh(x)";
    sinh => "sinh", |x| x.sinh(), "sinh(x)";
    cosh => "cosh", |x| x.cosh(), "cosh(x)";
    exp_m1 => "exp_m1", |x| x.exp_m1(), "expm1(x)";
    ln_1p => "ln_1p", |x| x.ln_1p(), "log1p(x)";
    cbrt => "cbrt", |x| x.cbrt(), "cbrt(x)";
    exp2 => "exp2", |x| x.exp2(), "exp2(x)";
    floor => "floor", |x| x.floor(), "floor(x)";
    ceil => "ceil", |x| x.ceil(), "ceil(x)";
    // Halves away from zero, as Rust's `round` and C's (not numpy's half to even).
    round => "round", |x| x.round(), "round(x)";
    trunc => "trunc", |x| x.trunc(), "trunc(x)";
    recip => "recip", |x| x.recip(), "1 / x";
    // NaN stays NaN; +0 gives 1 and -0 gives -1 (1 / -0 is -inf), as Rust's `signum`. No
    // library call: `copysign(1, x)` is ambiguous in CUDA C++ and a float literal would be a
    // double in the f32 kernel.
    signum => "signum", |x| x.signum(), "(x != x) ? x : ((x < 0 || 1 / x < 0) ? -1 : 1)";
}

fn unary_op(name: &str) -> Arc<Annotation> {
    Arc::clone(UNARY_OPS.iter().find(|op| op.name() == name).expect("a row of the unary table"))
}

/// Every unary annotation (for the kernel catalogue).
pub(crate) fn unary_ops() -> Vec<Arc<Annotation>> {
    UNARY_OPS.clone()
}

/// The binary op table: static, annotation name, result dtype (None: the arguments'), CPU
/// expression, CUDA C expression.
macro_rules! binary_table {
    ($($OP:ident => $name:literal, $out:expr, |$x:ident, $y:ident| $body:expr, $c:literal;)*) => {
        $(static $OP: LazyLock<Arc<Annotation>> = LazyLock::new(|| binary!($name, $out, |$x, $y| $body, $c));)*
        /// The binary rows for the kernel generator.
        pub(crate) const BINARY: &[Row] = &[$(Row { name: $name, vars: &[stringify!($x), stringify!($y)], out: $out, c: $c }),*];
        /// Every binary annotation (for the kernel catalogue).
        pub(crate) fn binary_ops() -> Vec<Arc<Annotation>> {
            vec![$(Arc::clone(&$OP)),*]
        }
    };
}

/// The mask op table: static, annotation name, CPU expression (one or two bools), CUDA C
/// expression (over `unsigned char` 0/1).
macro_rules! mask_table {
    ($($OP:ident => $name:literal, |$($v:ident),+| $body:expr, $c:literal;)*) => {
        $(static $OP: LazyLock<Arc<Annotation>> = LazyLock::new(|| mask!($name, |$($v),+| $body));)*
        /// The mask rows for the kernel generator.
        pub(crate) const MASKS: &[Row] = &[$(Row { name: $name, vars: &[$(stringify!($v)),+], out: None, c: $c }),*];
        /// Every mask annotation (for the kernel catalogue).
        pub(crate) fn mask_ops() -> Vec<Arc<Annotation>> {
            vec![$(Arc::clone(&$OP)),*]
        }
    };
}

binary_table! {
    ADD => "add", None, |x, y| x + y, "x + y";
    SUB => "sub", None, |x, y| x - y, "x - y";
    MUL => "mul", None, |x, y| x * y, "x * y";
    DIV => "div", None, |x, y| x / y, "x / y";
    POWF => "powf", None, |x, y| x.powf(y), "pow(x, y)";
    // NaN-propagating, like numpy's minimum/maximum (`x != x`: x is NaN).
    MINIMUM => "minimum", None, |x, y| if x.is_nan() || x < y { x } else { y }, "(x != x || x < y) ? x : y";
    MAXIMUM => "maximum", None, |x, y| if x.is_nan() || x > y { x } else { y }, "(x != x || x > y) ? x : y";
    // Comparisons with NaN are false (not_equal: true), in Rust as in C.
    GT => "gt", Some(DType::Bool), |x, y| x > y, "x > y";
    GE => "ge", Some(DType::Bool), |x, y| x >= y, "x >= y";
    LT => "lt", Some(DType::Bool), |x, y| x < y, "x < y";
    LE => "le", Some(DType::Bool), |x, y| x <= y, "x <= y";
    EQ => "equal", Some(DType::Bool), |x, y| x == y, "x == y";
    NE => "not_equal", Some(DType::Bool), |x, y| x != y, "x != y";
}

mask_table! {
    AND => "and", |x, y| x & y, "x & y";
    OR => "or", |x, y| x | y, "x | y";
    NOT => "not", |x| !x, "!x";
}

impl<A: Element, S: Data<Elem = A>, D: Dimension> ArrayBase<S, D> {
    fn binary<B: Element, R: Operand<A, D>>(&self, op: &Arc<Annotation>, rhs: R) -> Result<Array<B, R::Out>> {
        if let (Some(a), Some(b)) = (self.host_value(), rhs.host_value()) {
            if let Some(r) = crate::array::eager(op, &[a, b], &|| self.home()) {
                return r;
            }
        }
        let r = rhs.node(&self.lazy());
        self.call(op, &[&r])
    }
}

impl<A: Real, S: Data<Elem = A>, D: Dimension> ArrayBase<S, D> {
    pub fn try_add<R: Operand<A, D>>(&self, rhs: R) -> Result<Array<A, R::Out>> {
        self.binary(&ADD, rhs)
    }
    pub fn try_sub<R: Operand<A, D>>(&self, rhs: R) -> Result<Array<A, R::Out>> {
        self.binary(&SUB, rhs)
    }
    pub fn try_mul<R: Operand<A, D>>(&self, rhs: R) -> Result<Array<A, R::Out>> {
        self.binary(&MUL, rhs)
    }
    pub fn try_div<R: Operand<A, D>>(&self, rhs: R) -> Result<Array<A, R::Out>> {
        self.binary(&DIV, rhs)
    }
    /// Elementwise `x.powf(y)` with an array or a scalar exponent.
    #[track_caller]
    pub fn powf<R: Operand<A, D>>(&self, rhs: R) -> Array<A, R::Out> {
        or_panic(self.binary(&POWF, rhs))
    }
    /// Elementwise `x.powi(n)`.
    pub fn powi(&self, n: i32) -> Array<A, D> {
        self.call(&powi_op(n), &[]).expect("powi accepts every float array")
    }
    /// Elementwise minimum with an array or a scalar (NaN propagates).
    #[track_caller]
    pub fn minimum<R: Operand<A, D>>(&self, rhs: R) -> Array<A, R::Out> {
        or_panic(self.binary(&MINIMUM, rhs))
    }
    /// Elementwise maximum with an array or a scalar (NaN propagates).
    #[track_caller]
    pub fn maximum<R: Operand<A, D>>(&self, rhs: R) -> Array<A, R::Out> {
        or_panic(self.binary(&MAXIMUM, rhs))
    }
    #[track_caller]
    pub fn gt<R: Operand<A, D>>(&self, rhs: R) -> Array<bool, R::Out> {
        or_panic(self.binary(&GT, rhs))
    }
    #[track_caller]
    pub fn ge<R: Operand<A, D>>(&self, rhs: R) -> Array<bool, R::Out> {
        or_panic(self.binary(&GE, rhs))
    }
    #[track_caller]
    pub fn lt<R: Operand<A, D>>(&self, rhs: R) -> Array<bool, R::Out> {
        or_panic(self.binary(&LT, rhs))
    }
    #[track_caller]
    pub fn le<R: Operand<A, D>>(&self, rhs: R) -> Array<bool, R::Out> {
        or_panic(self.binary(&LE, rhs))
    }

    /// Apply a Rust closure to every element, lazily: an op of the graph, planned with the
    /// rest, that runs on the CPU only (a closure cannot be offloaded; the plan says so).
    /// ndarray's [`Array::mapv`] runs at once on the host and takes any closure.
    pub fn mapv_lazy(&self, f: impl Fn(A) -> A + Send + Sync + 'static) -> Array<A, D> {
        let op = oa("mapv")
            .elementwise()
            .family(Family::Closure)
            .cpu_only("a Rust closure runs on the CPU only")
            .cpu(move |_, args| Ok(A::wrap(args[0].array::<A>("mapv")?.mapv(&f).into_shared())))
            .build();
        self.call(&op, &[]).expect("mapv accepts every array of its type")
    }
}

impl<A: Numeric, S: Data<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// Elementwise conversion to a float type.
    pub fn cast<B: Real>(&self) -> Array<B, D> {
        self.call(&cast_op(B::DTYPE), &[]).expect("casts accept every f64, f32 and i64 array")
    }
    /// Elementwise `==` with an array or a scalar (numpy broadcasting).
    #[track_caller]
    pub fn equal<R: Operand<A, D>>(&self, rhs: R) -> Array<bool, R::Out> {
        or_panic(self.compare(&EQ, rhs))
    }
    /// Elementwise `!=` with an array or a scalar (numpy broadcasting).
    #[track_caller]
    pub fn not_equal<R: Operand<A, D>>(&self, rhs: R) -> Array<bool, R::Out> {
        or_panic(self.compare(&NE, rhs))
    }
    /// A comparison; integers compare as f64 (exact below 2^53).
    fn compare<R: Operand<A, D>>(&self, op: &Arc<Annotation>, rhs: R) -> Result<Array<bool, R::Out>> {
        if A::DTYPE == DType::I64 {
            let r = cast_op(DType::F64).call(&[&rhs.node(&self.lazy())])?;
            return self.cast::<f64>().call(op, &[&r]);
        }
        self.binary(op, rhs)
    }
}

/// `x^n` by squaring from the exponent's lowest bit, in the order of both LLVM's inline
/// expansion of `powi` with a constant exponent and compiler-rt's `__powidf2` (what `powi`
/// with an exponent known only at run time calls), so it equals `f64::powi` bit for bit; but
/// inlined, where `powi` with a run-time exponent is a call per element (1.8 ns here, 6% of
/// Haversine's time).
#[inline(always)]
fn powi_by_squaring<T: num_traits::Float>(mut x: T, n: i32) -> T {
    let mut bits = n.unsigned_abs();
    let mut r = T::one();
    loop {
        if bits & 1 == 1 {
            r = r * x;
        }
        bits >>= 1;
        if bits == 0 {
            break;
        }
        x = x * x;
    }
    if n < 0 {
        T::one() / r
    } else {
        r
    }
}

/// `x.powi(n)` over an array; the small exponents are constants to the compiler (a multiply
/// or two, no loop).
fn powi_array<T: num_traits::Float>(a: &ArrayViewD<'_, T>, n: i32) -> ArrayD<T> {
    match n {
        2 => a.mapv(|x| powi_by_squaring(x, 2)),
        3 => a.mapv(|x| powi_by_squaring(x, 3)),
        -1 => a.mapv(|x| powi_by_squaring(x, -1)),
        -2 => a.mapv(|x| powi_by_squaring(x, -2)),
        n => a.mapv(|x| powi_by_squaring(x, n)),
    }
}

/// `x.powi(n)`: accelerator entry `powi` with `n` as its parameter.
pub(crate) fn powi_op(n: i32) -> Arc<Annotation> {
    // An element is |n|'s bit count of multiplies (and a divide below 0): as one elementwise
    // op up to |n| = 3, a few more above.
    let weight = if n.unsigned_abs() <= 3 { 1.0 } else { 1.0 + 0.5 * (32 - n.unsigned_abs().leading_zeros()) as f64 };
    oa("powi")
        .weight(weight)
        .elementwise()
        .accelerator_launch("powi", kernels::powi_source(), Launch::Elementwise { params: vec![f64::from(n)] })
        .cpu(move |_, args| match &args[0] {
            ValueRef::F64(a) => Ok(Value::from(powi_array(a, n))),
            ValueRef::F32(a) => Ok(Value::from(powi_array(a, n))),
            v => Err(BachError::dtype("powi", "f64 or f32", v.dtype())),
        })
        .build()
}

/// Conversion to `to` (f64 or f32): accelerator entry `cast_to_<to>` (launched with the
/// argument's suffix). Not generic, so its kernel is compiled here, not in the calling cell.
pub(crate) fn cast_op(to: DType) -> Arc<Annotation> {
    fn build<B: Real>() -> Arc<Annotation> {
        oa(format!("cast_{}", B::DTYPE))
            .elementwise()
            .accelerator_launch(kernels::cast_entry(B::DTYPE), kernels::cast_source(), Launch::Elementwise { params: vec![] })
            .shape(|m: &[Meta]| Ok(m[0].with_dtype(B::DTYPE)))
            .cpu(|_, args| match &args[0] {
                ValueRef::F64(a) => Ok(B::wrap(a.mapv(B::of).into_shared())),
                ValueRef::F32(a) => Ok(B::wrap(a.mapv(|x| B::of(x as f64)).into_shared())),
                ValueRef::I64(a) => Ok(B::wrap(a.mapv(|x| B::of(x as f64)).into_shared())),
                v => Err(BachError::dtype("cast", "f64, f32 or i64", v.dtype())),
            })
            .build()
    }
    match to {
        DType::F64 => build::<f64>(),
        DType::F32 => build::<f32>(),
        d => unreachable!("casts go to f64 or f32, not {d}"),
    }
}

/// `where`'s row: the mask `c`, then the two values (the CPU's `select` below).
pub(crate) const WHERE: Row = Row { name: "where", vars: &["c", "x", "y"], out: None, c: "c ? x : y" };

/// The `where` annotation for values of dtype `d`: one per value dtype, since the device names
/// an entry by its first argument (the mask): `where_<d>`, launched as `where_<d>_bool`.
pub(crate) fn where_op(d: DType) -> Arc<Annotation> {
    static OPS: LazyLock<Vec<Arc<Annotation>>> = LazyLock::new(|| kernels::ELEMENTS.iter().map(|&d| build_where(d)).collect());
    let k = kernels::ELEMENTS.iter().position(|&e| e == d).expect("where accepts f64, f32, i64 and bool values");
    Arc::clone(&OPS[k])
}

/// The dimension type two arrays broadcast to (ndarray's `DimMax`).
pub type Wider<D, E> = <D as ndarray::DimMax<E>>::Output;

/// numpy's `where`: elements of `a` where `mask` is true, else of `b` (arrays or scalars,
/// broadcast together).
#[track_caller]
pub fn where_<A: Element, D: Dimension, Ra: Operand<A, D>, Rb: Operand<A, D>>(mask: &Array<bool, D>, a: Ra, b: Rb) -> Array<A, Wider<Ra::Out, Rb::Out>>
where
    Ra::Out: ndarray::DimMax<Rb::Out>,
{
    or_panic(try_where(mask, a, b))
}

#[allow(clippy::type_complexity)]
pub fn try_where<A: Element, D: Dimension, Ra: Operand<A, D>, Rb: Operand<A, D>>(mask: &Array<bool, D>, a: Ra, b: Rb) -> Result<Array<A, Wider<Ra::Out, Rb::Out>>>
where
    Ra::Out: ndarray::DimMax<Rb::Out>,
{
    let like: &Lazy = &mask.lazy();
    let (a, b) = (a.node(like), b.node(like));
    mask.call(&where_op(A::DTYPE), &[&a, &b])
}

fn build_where(d: DType) -> Arc<Annotation> {
    oa(WHERE.name)
        .elementwise()
        .accelerator_launch(where_entry(d), where_source(), Launch::Elementwise { params: vec![] })
        .args([split::rows(), split::rows(), split::rows()])
        .shape(|m: &[Meta]| {
            if m[0].dtype != DType::Bool {
                return Err(BachError::dtype("where", DType::Bool, m[0].dtype));
            }
            elementwise_meta("where", &m[1..], None)?;
            let shapes: Vec<&[usize]> = m.iter().map(|x| x.shape.as_slice()).collect();
            Ok(Meta::new(m[1].dtype, broadcast_shape("where", &shapes)?))
        })
        .cpu(|_, args| {
            let m = args[0].array::<bool>("where")?;
            match (&args[1], &args[2]) {
                (ValueRef::F64(a), ValueRef::F64(b)) => Ok(Value::from(select(m, a.view(), b.view())?)),
                (ValueRef::F32(a), ValueRef::F32(b)) => Ok(Value::from(select(m, a.view(), b.view())?)),
                (ValueRef::I64(a), ValueRef::I64(b)) => Ok(Value::from(select(m, a.view(), b.view())?)),
                (ValueRef::Bool(a), ValueRef::Bool(b)) => Ok(Value::from(select(m, a.view(), b.view())?)),
                (a, b) => Err(BachError::dtype("where", a.dtype(), b.dtype())),
            }
        })
        .build()
}

fn select<T: Copy>(m: ArrayViewD<'_, bool>, a: ArrayViewD<'_, T>, b: ArrayViewD<'_, T>) -> Result<ArrayD<T>> {
    match (scalar(&a), scalar(&b)) {
        (Some(x), Some(y)) => return Ok(m.mapv(|c| if c { x } else { y })),
        (Some(x), None) if b.shape() == m.shape() => return Ok(Zip::from(&m).and(&b).map_collect(|&c, &y| if c { x } else { y })),
        (None, Some(y)) if a.shape() == m.shape() => return Ok(Zip::from(&m).and(&a).map_collect(|&c, &x| if c { x } else { y })),
        _ => {}
    }
    let shape = broadcast_shape("where", &[m.shape(), a.shape(), b.shape()])?;
    let (m, a, b) = (m.broadcast(IxDyn(&shape)).expect("checked"), a.broadcast(IxDyn(&shape)).expect("checked"), b.broadcast(IxDyn(&shape)).expect("checked"));
    Ok(Zip::from(&m).and(&a).and(&b).map_collect(|&c, &x, &y| if c { x } else { y }))
}

/// `x op y` at once on the host (the operators' path for small host values, and `%`'s for
/// every value: no annotation, no node; the same arithmetic as the ops' CPU kernels, so the
/// same bits), broadcast; `None` when `y` is an array of more than `max` elements or the
/// shapes do not broadcast (the graph path says why). Instantiated in Bach for f64 and f32
/// only ([`Real::arith_at_once`]): one closure per operator, so each element's arithmetic is
/// inlined, without multiplying what every cell compiles.
pub(crate) fn arith_at_once<A: Real>(op: BinOp, x: ArrayViewD<'_, A>, y: Host<'_, A>, max: usize) -> Option<ArrayD<A>> {
    match op {
        BinOp::Add => at_once(x, y, max, "add", |x, y| x + y),
        BinOp::Sub => at_once(x, y, max, "sub", |x, y| x - y),
        BinOp::Mul => at_once(x, y, max, "mul", |x, y| x * y),
        BinOp::Div => at_once(x, y, max, "div", |x, y| x / y),
        BinOp::Rem => at_once(x, y, max, "rem", |x, y| x % y),
    }
}
/// `x op y` over a slice and a slice of the same length or a scalar (instantiated in Bach for
/// f64 and f32 only: [`Real::arith_slices`]), into a spent value of that length when this
/// thread keeps one (`array/pool.rs`).
pub(crate) fn arith_slices<A: Real>(op: BinOp, x: &[A], y: SliceOrScalar<'_, A>) -> NdArc<A, Ix1> {
    let out = crate::array::pool::take::<A>(x.len());
    match op {
        BinOp::Add => into_value(out, x, y, |x, y| x + y),
        BinOp::Sub => into_value(out, x, y, |x, y| x - y),
        BinOp::Mul => into_value(out, x, y, |x, y| x * y),
        BinOp::Div => into_value(out, x, y, |x, y| x / y),
        BinOp::Rem => into_value(out, x, y, |x, y| x % y),
    }
}
/// `x = x op y` in place (`x = y op x` when `swapped`; see [`Real::arith_in_place`]).
pub(crate) fn arith_in_place<A: Real>(op: BinOp, x: &mut [A], y: SliceOrScalar<'_, A>, swapped: bool) {
    match (op, swapped) {
        (BinOp::Add, false) => over_in_place(x, y, |x, y| x + y),
        (BinOp::Add, true) => over_in_place(x, y, |x, y| y + x),
        (BinOp::Mul, false) => over_in_place(x, y, |x, y| x * y),
        (BinOp::Mul, true) => over_in_place(x, y, |x, y| y * x),
        (BinOp::Sub, false) => over_in_place(x, y, |x, y| x - y),
        (BinOp::Sub, true) => over_in_place(x, y, |x, y| y - x),
        (BinOp::Div, false) => over_in_place(x, y, |x, y| x / y),
        (BinOp::Div, true) => over_in_place(x, y, |x, y| y / x),
        (BinOp::Rem, false) => over_in_place(x, y, |x, y| x % y),
        (BinOp::Rem, true) => over_in_place(x, y, |x, y| y % x),
    }
}
fn over_in_place<A: Copy>(x: &mut [A], y: SliceOrScalar<'_, A>, f: impl Fn(A, A) -> A) {
    match y {
        SliceOrScalar::Slice(y) => x.iter_mut().zip(y).for_each(|(x, &v)| *x = f(*x, v)),
        SliceOrScalar::Scalar(s) => x.iter_mut().for_each(|x| *x = f(*x, s)),
    }
}
/// `f(x, y)` written into `out` (of `x`'s length, held by no one else), or into a new value.
fn into_value<A: Copy>(out: Option<NdArc<A, Ix1>>, x: &[A], y: SliceOrScalar<'_, A>, f: impl Fn(A, A) -> A) -> NdArc<A, Ix1> {
    let Some(mut out) = out else { return NdArc::from_vec(over_slices(x, y, f)) };
    let o = crate::array::pool::elements(&mut out);
    match y {
        SliceOrScalar::Slice(y) => o.iter_mut().zip(x.iter().zip(y)).for_each(|(o, (&u, &v))| *o = f(u, v)),
        SliceOrScalar::Scalar(s) => o.iter_mut().zip(x).for_each(|(o, &u)| *o = f(u, s)),
    }
    out
}
/// `f(x, y)` over a slice and a slice of the same length, or a scalar.
fn over_slices<A: Copy>(x: &[A], y: SliceOrScalar<'_, A>, f: impl Fn(A, A) -> A) -> Vec<A> {
    match y {
        SliceOrScalar::Slice(y) => x.iter().zip(y).map(|(&u, &v)| f(u, v)).collect(),
        SliceOrScalar::Scalar(s) => x.iter().map(|&u| f(u, s)).collect(),
    }
}
fn at_once<A: Real>(x: ArrayViewD<'_, A>, y: Host<'_, A>, max: usize, name: &str, f: impl Fn(A, A) -> A) -> Option<ArrayD<A>> {
    match y {
        Host::Scalar(s) => Some(match x.as_slice() {
            Some(xs) => ArrayD::from_shape_vec(x.raw_dim(), over_slices(xs, SliceOrScalar::Scalar(s), f)).expect("x's shape"),
            None => x.mapv(|v| f(v, s)),
        }),
        Host::Array(y) if y.len() <= max => match (x.as_slice(), y.as_slice()) {
            // The same shape in row-major order: over the slices (no dimensions walked).
            (Some(xs), Some(ys)) if x.shape() == y.shape() => Some(ArrayD::from_shape_vec(x.raw_dim(), over_slices(xs, SliceOrScalar::Slice(ys), f)).expect("x's shape")),
            _ => zip2(name, x, y, f).ok(),
        },
        Host::Array(_) => None,
    }
}

/// How arrays of Bach's float types compute `lhs op rhs` (see `array/operators.rs`): at once
/// for small host values ([`Real::arith_at_once`]), else a lazy graph op; `%` on the host.
#[track_caller]
pub(crate) fn real_arith<A: Real, S: Data<Elem = A>, D: Dimension, R: Operand<A, D>>(op: BinOp, lhs: &ArrayBase<S, D>, rhs: R) -> Array<A, R::Out> {
    if let Some((x, max)) = lhs.small_host() {
        // One shape in row-major order, or a scalar: over the slices, in `x`'s own dimension
        // type (no dynamic dimensions: the small-array path).
        if let Some(xs) = x.as_slice() {
            let same = rhs.host_as::<D>().filter(|y| y.shape() == x.shape());
            let y = match same.as_ref().map(|y| y.as_slice()) {
                Some(Some(ys)) => Some(SliceOrScalar::Slice(ys)),
                Some(None) => None,
                None => match rhs.host() {
                    Some(Host::Scalar(s)) => Some(SliceOrScalar::Scalar(s)),
                    _ => None,
                },
            };
            if let Some(y) = y {
                if let Some(dim) = R::Out::from_dimension(&x.raw_dim()) {
                    let v = A::arith_slices(op, xs, y);
                    // A 1-d result only changes its dimension type (a reshape's checks cost
                    // as much as a 3-vector's op); others take `x`'s shape.
                    let v = if x.ndim() == 1 { v.into_dimensionality::<R::Out>().ok() } else { v.into_shape_with_order(dim).ok() };
                    return Array::from_kept(v.expect("x's shape"), lhs.home());
                }
            }
        }
        if let Some(out) = rhs.host().and_then(|y| A::arith_at_once(op, x.view().into_dyn(), y, max)) {
            if let Ok(out) = out.into_dimensionality::<R::Out>() {
                return Array::from_host_in(out.into_shared(), lhs.home());
            }
        }
    }
    or_panic(match op {
        BinOp::Rem => remainder(lhs, rhs),
        _ => lhs.binary(arith_op(op), rhs),
    })
}

/// The annotated op of an arithmetic operator (`%` has none: it runs on the host).
fn arith_op(op: BinOp) -> &'static Arc<Annotation> {
    match op {
        BinOp::Add => &ADD,
        BinOp::Sub => &SUB,
        BinOp::Mul => &MUL,
        BinOp::Div => &DIV,
        BinOp::Rem => unreachable!("`%` runs on the host"),
    }
}

/// `lhs % rhs` of floats, on the host (no accelerator kernel: a remainder is rare in array
/// code, a periodic boundary or a phase): the operands' values, evaluated where they are not
/// on the host, then [`remainder_values`].
fn remainder<A: Real, S: Data<Elem = A>, D: Dimension, R: Operand<A, D>>(lhs: &ArrayBase<S, D>, rhs: R) -> Result<Array<A, R::Out>> {
    let x = match lhs.host_value() {
        Some(v) => v,
        None => lhs.lazy().eval()?,
    };
    let y = match rhs.host_value() {
        Some(v) => v,
        None => rhs.node(&lhs.lazy()).eval()?,
    };
    crate::array::host_of("rem", remainder_values(&x, &y)?, lhs.home())
}
/// `x % y` of two values of one float type, broadcast (compiled once, in Bach).
fn remainder_values(x: &Value, y: &Value) -> Result<Value> {
    fn of<A: Real>(x: &Value, y: &Value) -> Option<Result<Value>> {
        let (x, y) = (A::array_of(x)?, A::array_of(y)?);
        let run = || {
            let shape = broadcast_shape("rem", &[x.shape(), y.shape()])?;
            let out = A::arith_at_once(BinOp::Rem, x.view(), Host::Array(y.view()), usize::MAX).ok_or_else(|| BachError::shape("rem", format!("{shape:?}")))?;
            Ok(A::wrap(out.into_shared()))
        };
        Some(run())
    }
    of::<f64>(x, y).or_else(|| of::<f32>(x, y)).unwrap_or_else(|| Err(BachError::dtype("rem", x.meta().dtype, y.meta().dtype)))
}

/// `-a` of a float array: at once for a small host value, else a lazy op.
pub(crate) fn real_negate<A: Real, S: Data<Elem = A>, D: Dimension>(a: &ArrayBase<S, D>) -> Array<A, D> {
    if let Some((x, _)) = a.small_host() {
        return Array::from_host_in(x.map(|&v| -v).into_shared(), a.home());
    }
    a.neg()
}

macro_rules! operator {
    ($Trait:ident, $method:ident, $try:ident, $OP:ident, $Assign:ident, $assign:ident, $op:tt) => {
        operator!(@scalar_left $Trait, $method, $OP, f64, $op);
        operator!(@scalar_left $Trait, $method, $OP, f32, $op);
    };
    (@scalar_left $Trait:ident, $method:ident, $OP:ident, $t:ty, $op:tt) => {
        impl<S: Data<Elem = $t>, D: Dimension> std::ops::$Trait<&ArrayBase<S, D>> for $t {
            type Output = Array<$t, D>;
            #[track_caller]
            fn $method(self, rhs: &ArrayBase<S, D>) -> Array<$t, D> {
                if let Some((y, _)) = rhs.small_host() {
                    return Array::from_host_in(y.map(|&v| self $op v).into_shared(), rhs.home());
                }
                let s = <$t as Operand<$t, D>>::node(&self, &rhs.lazy());
                or_panic($OP.call(&[&s, &rhs.lazy()]).map(Array::wrap))
            }
        }
        impl<S: Data<Elem = $t>, D: Dimension> std::ops::$Trait<ArrayBase<S, D>> for $t {
            type Output = Array<$t, D>;
            #[track_caller]
            fn $method(self, mut rhs: ArrayBase<S, D>) -> Array<$t, D> {
                // In `rhs`'s own buffer when it alone holds a small value (as ndarray's).
                if let Some(xs) = rhs.handle_mut().and_then(|h| h.small_unique_mut()) {
                    <$t as Real>::arith_in_place(BinOp::$Trait, xs, SliceOrScalar::Scalar(self), true);
                    return rhs.into_array_as();
                }
                self.$method(&rhs)
            }
        }
    };
}
operator!(Add, add, try_add, ADD, AddAssign, add_assign, +);
operator!(Sub, sub, try_sub, SUB, SubAssign, sub_assign, -);
operator!(Mul, mul, try_mul, MUL, MulAssign, mul_assign, *);
operator!(Div, div, try_div, DIV, DivAssign, div_assign, /);

macro_rules! bool_operator {
    ($Trait:ident, $method:ident, $OP:ident) => {
        impl<S: Data<Elem = bool>, D: Dimension, R: Operand<bool, D>> std::ops::$Trait<R> for &ArrayBase<S, D> {
            type Output = Array<bool, R::Out>;
            #[track_caller]
            fn $method(self, rhs: R) -> Array<bool, R::Out> {
                or_panic(self.binary(&$OP, rhs))
            }
        }
        impl<S: Data<Elem = bool>, D: Dimension, R: Operand<bool, D>> std::ops::$Trait<R> for ArrayBase<S, D> {
            type Output = Array<bool, R::Out>;
            #[track_caller]
            fn $method(self, rhs: R) -> Array<bool, R::Out> {
                or_panic(self.binary(&$OP, rhs))
            }
        }
    };
}
bool_operator!(BitAnd, bitand, AND);
bool_operator!(BitOr, bitor, OR);

impl<S: Data<Elem = bool>, D: Dimension> std::ops::Not for &ArrayBase<S, D> {
    type Output = Array<bool, D>;
    fn not(self) -> Array<bool, D> {
        self.call(&NOT, &[]).expect("not accepts every mask")
    }
}
impl<S: Data<Elem = bool>, D: Dimension> std::ops::Not for ArrayBase<S, D> {
    type Output = Array<bool, D>;
    fn not(self) -> Array<bool, D> {
        !&self
    }
}

// The accelerator (CUDA C) sources of the op tables above (helpers in `kernels.rs`).

/// Unary math (`sqrt`, `exp`, ... `neg`): entries `<op>_f64`, `<op>_f32`.
pub fn unary_source() -> &'static str {
    static SRC: LazyLock<String> = LazyLock::new(|| table_source("unary math", UNARY, &FLOATS));
    &SRC
}

/// Binary arithmetic, powf, minimum/maximum and comparisons (bool results):
/// entries `<op>_f64`, `<op>_f32`.
pub fn binary_source() -> &'static str {
    static SRC: LazyLock<String> = LazyLock::new(|| table_source("binary", BINARY, &FLOATS));
    &SRC
}

/// Mask ops `and`, `or`, `not`: entries `<op>_bool`.
pub fn mask_source() -> &'static str {
    static SRC: LazyLock<String> = LazyLock::new(|| table_source("mask", MASKS, &[DType::Bool]));
    &SRC
}

/// `where(mask, a, b)`: the device names an entry by its first argument, the mask, so the
/// value dtype is part of the entry: `where_<T>` launched as `where_<T>_bool`.
pub fn where_source() -> &'static str {
    static SRC: LazyLock<String> = LazyLock::new(|| {
        let row = WHERE;
        let mut src = String::from("// bach: where kernels (entry where_<value dtype>, launched with the mask's suffix _bool)\n\n");
        for d in ELEMENTS {
            let types = [DType::Bool, d, d];
            let args: Vec<(&str, DType)> = row.vars.iter().copied().zip(types).collect();
            elementwise_kernel(&mut src, &format!("{}_bool", where_entry(d)), d, &args, &[], row.c);
        }
        src
    });
    &SRC
}

/// The entry of `where` over values of dtype `d`.
pub(crate) fn where_entry(d: DType) -> String {
    format!("{}_{d}", WHERE.name)
}

/// The float types' at-once arithmetic, compiled here once for each, and their `erf`.
macro_rules! real {
    ($($t:ty, $erf:path;)*) => {$(
        impl Real for $t {
            fn arith_slices(op: BinOp, x: &[Self], y: SliceOrScalar<'_, Self>) -> NdArc<Self, Ix1> {
                arith_slices(op, x, y)
            }
            fn arith_at_once(op: BinOp, x: ArrayViewD<'_, Self>, y: Host<'_, Self>, max: usize) -> Option<ArrayD<Self>> {
                arith_at_once(op, x, y, max)
            }
            fn arith_in_place(op: BinOp, x: &mut [Self], y: SliceOrScalar<'_, Self>, swapped: bool) {
                arith_in_place(op, x, y, swapped)
            }
            fn erf(self) -> Self {
                $erf(self)
            }
            fn of(v: f64) -> Self {
                v as $t
            }
        }
    )*};
}
real! {
    f64, libm::erf;
    f32, libm::erff;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn broadcasting_follows_numpy() {
        assert_eq!(broadcast_shape("t", &[&[4, 3], &[3]]).unwrap(), vec![4, 3]);
        assert_eq!(broadcast_shape("t", &[&[4, 1], &[1, 3]]).unwrap(), vec![4, 3]);
        assert_eq!(broadcast_shape("t", &[&[], &[5]]).unwrap(), vec![5]);
        let e = broadcast_shape("add", &[&[4], &[3]]).unwrap_err();
        assert!(e.to_string().contains("shape mismatch in `add`"), "{e}");
    }

    #[test]
    fn powi_by_squaring_equals_powi_bit_for_bit() {
        // `std::hint::black_box` keeps the exponent a run-time value: `powi` then calls
        // compiler-rt, the function the inlined loop stands in for.
        let mut x = 0.731_f64;
        let specials = [0.0, -0.0, 1.0, -1.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, f64::MIN_POSITIVE, 1e300, -1e-300];
        for step in 0..2000 {
            x = (x * 3.917 + 0.123).fract() * if step % 3 == 0 { -40.0 } else { 7.0 };
            for v in specials.iter().copied().chain([x, x as f32 as f64]) {
                for n in [-33, -9, -4, -3, -2, -1, 0, 1, 2, 3, 4, 5, 8, 13, 31, 64, i32::MAX, i32::MIN] {
                    let want = v.powi(std::hint::black_box(n));
                    let got = powi_by_squaring(v, n);
                    assert!(want.to_bits() == got.to_bits() || (want.is_nan() && got.is_nan()), "{v}^{n}: {got} vs {want}");
                    let (w32, g32) = ((v as f32).powi(std::hint::black_box(n)), powi_by_squaring(v as f32, n));
                    assert!(w32.to_bits() == g32.to_bits() || (w32.is_nan() && g32.is_nan()), "{v}f32^{n}: {g32} vs {w32}");
                }
            }
        }
    }

    #[test]
    fn a_matrix_and_a_row_vector_zip_as_broadcasting_does() {
        let m = ndarray::Array2::from_shape_fn((5, 3), |(i, j)| (i * 3 + j) as f64 * 0.5 - 2.0).into_dyn();
        let v = ndarray::arr1(&[1.5, -0.25, 4.0]).into_dyn();
        let v2 = v.clone().into_shape_with_order(IxDyn(&[1, 3])).unwrap();
        let want = |a: &ArrayD<f64>, b: &ArrayD<f64>| {
            let shape = broadcast_shape("t", &[a.shape(), b.shape()]).unwrap();
            Zip::from(&a.broadcast(shape.clone()).unwrap()).and(&b.broadcast(shape).unwrap()).map_collect(|&x, &y| x / y - x)
        };
        for vec in [&v, &v2] {
            assert_eq!(zip2("t", m.view(), vec.view(), |x, y| x / y - x).unwrap(), want(&m, vec));
            assert_eq!(zip2("t", vec.view(), m.view(), |x, y| x / y - x).unwrap(), want(vec, &m));
        }
        // Not that case: a column vector, a transposed (not standard-layout) matrix, empty rows.
        let col = ndarray::arr2(&[[1.0], [2.0], [3.0], [4.0], [5.0]]).into_dyn();
        assert_eq!(zip2("t", m.view(), col.view(), |x, y| x - y).unwrap(), &m - &col);
        let t = m.t().to_owned().reversed_axes();
        assert_eq!(zip2("t", t.view(), v.view(), |x, y| x * y).unwrap(), &m * &v);
        let empty = ArrayD::<f64>::zeros(IxDyn(&[4, 0]));
        assert_eq!(zip2("t", empty.view(), ArrayD::<f64>::zeros(IxDyn(&[0])).view(), |x, y| x + y).unwrap().shape(), &[4, 0]);
        assert!(zip2("t", m.view(), ndarray::arr1(&[1.0, 2.0]).into_dyn().view(), |x, y| x + y).is_err());
    }

    #[test]
    fn powi_array_takes_each_exponent() {
        let a = ndarray::arr1(&[1.5f64, -2.0, 0.25]).into_dyn();
        for n in [-2, -1, 0, 2, 3, 7] {
            assert_eq!(powi_array(&a.view(), n), a.mapv(|x| x.powi(std::hint::black_box(n))), "n = {n}");
        }
    }
}

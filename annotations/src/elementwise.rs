//! Elementwise ops: one table of unary math, one of binary arithmetic and comparisons, plus
//! `where_`, casts and `mapv`. Each row is one annotation with f64 and f32 CPU kernels.

use std::sync::{Arc, LazyLock};

use bach_runtime::{oa, split, Annotation, BachError, DType, Element, Lazy, Meta, Result, Value, ValueRef};
use ndarray::{ArrayD, ArrayViewD, IxDyn, Zip};

use crate::array::{Array, Operand};
use crate::real::Real;

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
                return Err(BachError::shape(op, format!("shapes {:?} cannot be broadcast together", shapes)));
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
    let shape = broadcast_shape(op, &[a.shape(), b.shape()])?;
    let (a, b) = (a.broadcast(shape.clone()).expect("checked"), b.broadcast(shape).expect("checked"));
    Ok(Zip::from(&a).and(&b).map_collect(|&x, &y| f(x, y)))
}

/// A unary float op: kernels for f64 and f32 from the same expression.
macro_rules! unary {
    ($name:literal, |$x:ident| $body:expr) => {{
        oa($name)
            .elementwise()
            .shape(|m: &[Meta]| match m[0].dtype {
                DType::F64 | DType::F32 => Ok(m[0].clone()),
                d => Err(BachError::dtype($name, "f64 or f32", d)),
            })
            .cpu(|_, args| match &args[0] {
                ValueRef::F64(a) => Ok(Value::from(a.mapv(|$x: f64| $body))),
                ValueRef::F32(a) => Ok(Value::from(a.mapv(|$x: f32| $body))),
                v => Err(BachError::dtype($name, "f64 or f32", v.dtype())),
            })
            .build()
    }};
}

/// A binary float op (`out` = Some(Bool) for comparisons).
macro_rules! binary {
    ($name:literal, $out:expr, |$x:ident, $y:ident| $body:expr) => {{
        oa($name)
            .elementwise()
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

macro_rules! bool_binary {
    ($name:literal, |$x:ident, $y:ident| $body:expr) => {{
        oa($name)
            .elementwise()
            .args([split::rows(), split::rows()])
            .shape(|m: &[Meta]| elementwise_meta($name, m, None))
            .cpu(|_, args| {
                let (a, b) = (args[0].array::<bool>($name)?, args[1].array::<bool>($name)?);
                Ok(Value::from(zip2($name, a, b, |$x: bool, $y: bool| $body)?))
            })
            .build()
    }};
}

/// The unary op table: method name, annotation.
macro_rules! unary_table {
    ($($method:ident => $name:literal, |$x:ident| $body:expr;)*) => {
        impl<A: Real> Array<A> {
            $(
                #[doc = concat!("Elementwise `", $name, "` (lazy).")]
                pub fn $method(&self) -> Array<A> {
                    static OP: LazyLock<Arc<Annotation>> = LazyLock::new(|| unary!($name, |$x| $body));
                    self.call(&OP, &[]).expect("unary ops accept every float array")
                }
            )*
        }
    };
}

unary_table! {
    sqrt => "sqrt", |x| x.sqrt();
    exp => "exp", |x| x.exp();
    ln => "ln", |x| x.ln();
    log2 => "log2", |x| x.log2();
    log10 => "log10", |x| x.log10();
    sin => "sin", |x| x.sin();
    cos => "cos", |x| x.cos();
    tan => "tan", |x| x.tan();
    asin => "asin", |x| x.asin();
    acos => "acos", |x| x.acos();
    atan => "atan", |x| x.atan();
    erf => "erf", |x| Real::erf(x);
    abs => "abs", |x| x.abs();
    neg => "neg", |x| -x;
}

static ADD: LazyLock<Arc<Annotation>> = LazyLock::new(|| binary!("add", None, |x, y| x + y));
static SUB: LazyLock<Arc<Annotation>> = LazyLock::new(|| binary!("sub", None, |x, y| x - y));
static MUL: LazyLock<Arc<Annotation>> = LazyLock::new(|| binary!("mul", None, |x, y| x * y));
static DIV: LazyLock<Arc<Annotation>> = LazyLock::new(|| binary!("div", None, |x, y| x / y));
static POWF: LazyLock<Arc<Annotation>> = LazyLock::new(|| binary!("powf", None, |x, y| x.powf(y)));
// NaN-propagating, like numpy's minimum/maximum.
static MINIMUM: LazyLock<Arc<Annotation>> = LazyLock::new(|| binary!("minimum", None, |x, y| if x.is_nan() || x < y { x } else { y }));
static MAXIMUM: LazyLock<Arc<Annotation>> = LazyLock::new(|| binary!("maximum", None, |x, y| if x.is_nan() || x > y { x } else { y }));
static GT: LazyLock<Arc<Annotation>> = LazyLock::new(|| binary!("gt", Some(DType::Bool), |x, y| x > y));
static GE: LazyLock<Arc<Annotation>> = LazyLock::new(|| binary!("ge", Some(DType::Bool), |x, y| x >= y));
static LT: LazyLock<Arc<Annotation>> = LazyLock::new(|| binary!("lt", Some(DType::Bool), |x, y| x < y));
static LE: LazyLock<Arc<Annotation>> = LazyLock::new(|| binary!("le", Some(DType::Bool), |x, y| x <= y));
static EQ: LazyLock<Arc<Annotation>> = LazyLock::new(|| binary!("equal", Some(DType::Bool), |x, y| x == y));
static NE: LazyLock<Arc<Annotation>> = LazyLock::new(|| binary!("not_equal", Some(DType::Bool), |x, y| x != y));
static AND: LazyLock<Arc<Annotation>> = LazyLock::new(|| bool_binary!("and", |x, y| x & y));
static OR: LazyLock<Arc<Annotation>> = LazyLock::new(|| bool_binary!("or", |x, y| x | y));
static NOT: LazyLock<Arc<Annotation>> = LazyLock::new(|| {
    oa("not").elementwise().cpu(|_, args| Ok(Value::from(args[0].array::<bool>("not")?.mapv(|x| !x)))).build()
});

impl<A: Element> Array<A> {
    fn binary<B: Element>(&self, op: &Arc<Annotation>, rhs: impl Operand<A>) -> Result<Array<B>> {
        let r = rhs.node(self.lazy());
        self.call(op, &[&r])
    }
}

#[track_caller]
fn or_panic<T>(r: Result<T>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

impl<A: Real> Array<A> {
    pub fn try_add(&self, rhs: impl Operand<A>) -> Result<Array<A>> {
        self.binary(&ADD, rhs)
    }
    pub fn try_sub(&self, rhs: impl Operand<A>) -> Result<Array<A>> {
        self.binary(&SUB, rhs)
    }
    pub fn try_mul(&self, rhs: impl Operand<A>) -> Result<Array<A>> {
        self.binary(&MUL, rhs)
    }
    pub fn try_div(&self, rhs: impl Operand<A>) -> Result<Array<A>> {
        self.binary(&DIV, rhs)
    }
    /// Elementwise `x.powf(y)` with an array or a scalar exponent.
    #[track_caller]
    pub fn powf(&self, rhs: impl Operand<A>) -> Array<A> {
        or_panic(self.binary(&POWF, rhs))
    }
    /// Elementwise `x.powi(n)`.
    pub fn powi(&self, n: i32) -> Array<A> {
        let op = oa("powi")
            .elementwise()
            .cpu(move |_, args| match &args[0] {
                ValueRef::F64(a) => Ok(Value::from(a.mapv(|x| x.powi(n)))),
                ValueRef::F32(a) => Ok(Value::from(a.mapv(|x| x.powi(n)))),
                v => Err(BachError::dtype("powi", "f64 or f32", v.dtype())),
            })
            .build();
        self.call(&op, &[]).expect("powi accepts every float array")
    }
    /// Elementwise minimum with an array or a scalar (NaN propagates).
    #[track_caller]
    pub fn minimum(&self, rhs: impl Operand<A>) -> Array<A> {
        or_panic(self.binary(&MINIMUM, rhs))
    }
    /// Elementwise maximum with an array or a scalar (NaN propagates).
    #[track_caller]
    pub fn maximum(&self, rhs: impl Operand<A>) -> Array<A> {
        or_panic(self.binary(&MAXIMUM, rhs))
    }
    #[track_caller]
    pub fn gt(&self, rhs: impl Operand<A>) -> Array<bool> {
        or_panic(self.binary(&GT, rhs))
    }
    #[track_caller]
    pub fn ge(&self, rhs: impl Operand<A>) -> Array<bool> {
        or_panic(self.binary(&GE, rhs))
    }
    #[track_caller]
    pub fn lt(&self, rhs: impl Operand<A>) -> Array<bool> {
        or_panic(self.binary(&LT, rhs))
    }
    #[track_caller]
    pub fn le(&self, rhs: impl Operand<A>) -> Array<bool> {
        or_panic(self.binary(&LE, rhs))
    }
    #[track_caller]
    pub fn equal(&self, rhs: impl Operand<A>) -> Array<bool> {
        or_panic(self.binary(&EQ, rhs))
    }
    #[track_caller]
    pub fn not_equal(&self, rhs: impl Operand<A>) -> Array<bool> {
        or_panic(self.binary(&NE, rhs))
    }

    /// Elementwise conversion to another float type.
    pub fn cast<B: Real>(&self) -> Array<B> {
        let op = oa(format!("cast_{}", B::DTYPE))
            .elementwise()
            .shape(|m: &[Meta]| Ok(m[0].with_dtype(B::DTYPE)))
            .cpu(|_, args| match &args[0] {
                ValueRef::F64(a) => Ok(B::wrap(a.mapv(B::of).into_shared())),
                ValueRef::F32(a) => Ok(B::wrap(a.mapv(|x| B::of(x as f64)).into_shared())),
                v => Err(BachError::dtype("cast", "f64 or f32", v.dtype())),
            })
            .build();
        self.call(&op, &[]).expect("casts accept every float array")
    }

    /// Apply a Rust closure to every element. It runs on the CPU only (a closure cannot be
    /// offloaded); the plan says so.
    pub fn mapv(&self, f: impl Fn(A) -> A + Send + Sync + 'static) -> Array<A> {
        let op = oa("mapv")
            .elementwise()
            .cpu_only("a Rust closure runs on the CPU only")
            .cpu(move |_, args| Ok(A::wrap(args[0].array::<A>("mapv")?.mapv(&f).into_shared())))
            .build();
        self.call(&op, &[]).expect("mapv accepts every array of its type")
    }
}

/// numpy's `where`: elements of `a` where `mask` is true, else of `b` (arrays or scalars,
/// broadcast together).
#[track_caller]
pub fn where_<A: Element>(mask: &Array<bool>, a: impl Operand<A>, b: impl Operand<A>) -> Array<A> {
    or_panic(try_where(mask, a, b))
}

pub fn try_where<A: Element>(mask: &Array<bool>, a: impl Operand<A>, b: impl Operand<A>) -> Result<Array<A>> {
    static WHERE: LazyLock<Arc<Annotation>> = LazyLock::new(|| {
        oa("where")
            .elementwise()
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
                    (ValueRef::Bool(a), ValueRef::Bool(b)) => Ok(Value::from(select(m, a.view(), b.view())?)),
                    (a, b) => Err(BachError::dtype("where", a.dtype(), b.dtype())),
                }
            })
            .build()
    });
    let like: &Lazy = mask.lazy();
    let (a, b) = (a.node(like), b.node(like));
    mask.call(&WHERE, &[&a, &b])
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

/// Operators: `&a + &b`, `&a * 2.0`, `2.0 - &a`, `-&a`... A shape mismatch panics at the
/// line of the operator with a clear message (as in ndarray); `try_add` etc. return it.
macro_rules! operator {
    ($Trait:ident, $method:ident, $try:ident, $OP:ident) => {
        impl<A: Real, R: Operand<A>> std::ops::$Trait<R> for &Array<A> {
            type Output = Array<A>;
            #[track_caller]
            fn $method(self, rhs: R) -> Array<A> {
                or_panic(self.$try(rhs))
            }
        }
        impl<A: Real, R: Operand<A>> std::ops::$Trait<R> for Array<A> {
            type Output = Array<A>;
            #[track_caller]
            fn $method(self, rhs: R) -> Array<A> {
                or_panic(self.$try(rhs))
            }
        }
        operator!(@scalar_left $Trait, $method, $OP, f64);
        operator!(@scalar_left $Trait, $method, $OP, f32);
    };
    (@scalar_left $Trait:ident, $method:ident, $OP:ident, $t:ty) => {
        impl std::ops::$Trait<&Array<$t>> for $t {
            type Output = Array<$t>;
            #[track_caller]
            fn $method(self, rhs: &Array<$t>) -> Array<$t> {
                let s = self.node(rhs.lazy());
                or_panic($OP.call(&[&s, rhs.lazy()]).map(Array::wrap))
            }
        }
        impl std::ops::$Trait<Array<$t>> for $t {
            type Output = Array<$t>;
            #[track_caller]
            fn $method(self, rhs: Array<$t>) -> Array<$t> {
                self.$method(&rhs)
            }
        }
    };
}
operator!(Add, add, try_add, ADD);
operator!(Sub, sub, try_sub, SUB);
operator!(Mul, mul, try_mul, MUL);
operator!(Div, div, try_div, DIV);

impl<A: Real> std::ops::Neg for &Array<A> {
    type Output = Array<A>;
    fn neg(self) -> Array<A> {
        Array::neg(self)
    }
}
impl<A: Real> std::ops::Neg for Array<A> {
    type Output = Array<A>;
    fn neg(self) -> Array<A> {
        Array::neg(&self)
    }
}

macro_rules! bool_operator {
    ($Trait:ident, $method:ident, $OP:ident) => {
        impl<R: Operand<bool>> std::ops::$Trait<R> for &Array<bool> {
            type Output = Array<bool>;
            #[track_caller]
            fn $method(self, rhs: R) -> Array<bool> {
                or_panic(self.binary(&$OP, rhs))
            }
        }
        impl<R: Operand<bool>> std::ops::$Trait<R> for Array<bool> {
            type Output = Array<bool>;
            #[track_caller]
            fn $method(self, rhs: R) -> Array<bool> {
                or_panic(self.binary(&$OP, rhs))
            }
        }
    };
}
bool_operator!(BitAnd, bitand, AND);
bool_operator!(BitOr, bitor, OR);

impl std::ops::Not for &Array<bool> {
    type Output = Array<bool>;
    fn not(self) -> Array<bool> {
        self.call(&NOT, &[]).expect("not accepts every mask")
    }
}
impl std::ops::Not for Array<bool> {
    type Output = Array<bool>;
    fn not(self) -> Array<bool> {
        !&self
    }
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
}

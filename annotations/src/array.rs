//! `Array<A>`: a lazy n-d array (1-D and 2-D, plus 0-d results of reductions).

use std::fmt;
use std::marker::PhantomData;
use std::ops::Index;
use std::sync::{Arc, OnceLock};

use bach_runtime::{session, Annotation, BachError, Element, Lazy, Meta, Plan, Result, Value};
use ndarray::{ArcArray, Dimension, Ix1, Ix2, IxDyn};

/// A lazy n-d array of `A` (f64, f32 or bool). Cheap to clone, `Send + Sync`.
pub struct Array<A: Element> {
    lazy: Lazy,
    /// The evaluated value, kept by the handle so indexing can hand out references.
    value: OnceLock<ArcArray<A, IxDyn>>,
    _elem: PhantomData<A>,
}

/// Aliases so that code written against ndarray's names reads the same.
pub type Array1<A> = Array<A>;
pub type Array2<A> = Array<A>;
pub type ArrayD<A> = Array<A>;

impl<A: Element> Clone for Array<A> {
    fn clone(&self) -> Self {
        Array { lazy: self.lazy.clone(), value: self.value.clone(), _elem: PhantomData }
    }
}

/// Anything that is a handle to a graph node.
pub trait AsLazy {
    fn as_lazy(&self) -> &Lazy;
}
impl AsLazy for Lazy {
    fn as_lazy(&self) -> &Lazy {
        self
    }
}
impl<A: Element> AsLazy for Array<A> {
    fn as_lazy(&self) -> &Lazy {
        &self.lazy
    }
}

/// Evaluate several values in one pass: work they share is done once, each is cached.
pub fn evaluate(values: &[&dyn AsLazy]) -> Result<()> {
    let Some(first) = values.first() else { return Ok(()) };
    let lazies: Vec<&Lazy> = values.iter().map(|v| v.as_lazy()).collect();
    first.as_lazy().session().evaluate(&lazies).map(|_| ())
}

/// A shape argument: `n`, `(rows, cols)`, `[rows, cols]` or a `Vec`.
pub trait ShapeArg {
    fn dims(self) -> Vec<usize>;
}
impl ShapeArg for usize {
    fn dims(self) -> Vec<usize> {
        vec![self]
    }
}
impl ShapeArg for (usize, usize) {
    fn dims(self) -> Vec<usize> {
        vec![self.0, self.1]
    }
}
impl<const N: usize> ShapeArg for [usize; N] {
    fn dims(self) -> Vec<usize> {
        self.to_vec()
    }
}
impl ShapeArg for Vec<usize> {
    fn dims(self) -> Vec<usize> {
        self
    }
}
impl ShapeArg for &[usize] {
    fn dims(self) -> Vec<usize> {
        self.to_vec()
    }
}

/// The right-hand side of a binary op: an array or a scalar.
pub trait Operand<A: Element> {
    /// A node for this operand in `like`'s session.
    fn node(&self, like: &Lazy) -> Lazy;
}
impl<A: Element> Operand<A> for Array<A> {
    fn node(&self, _like: &Lazy) -> Lazy {
        self.lazy.clone()
    }
}
impl<A: Element> Operand<A> for &Array<A> {
    fn node(&self, _like: &Lazy) -> Lazy {
        self.lazy.clone()
    }
}
macro_rules! scalar_operand {
    ($($t:ty),*) => {$(
        impl Operand<$t> for $t {
            fn node(&self, like: &Lazy) -> Lazy {
                like.session().source(Value::from(ndarray::ArrayD::from_elem(IxDyn(&[]), *self)), "scalar")
            }
        }
    )*};
}
scalar_operand!(f64, f32, i64, bool);

impl<A: Element> Array<A> {
    /// Wrap a node whose dtype is `A`.
    pub fn from_lazy(lazy: Lazy) -> Result<Self> {
        if lazy.meta().dtype != A::DTYPE {
            return Err(BachError::dtype("Array", A::DTYPE, lazy.meta().dtype));
        }
        Ok(Array { lazy, value: OnceLock::new(), _elem: PhantomData })
    }
    pub(crate) fn wrap(lazy: Lazy) -> Self {
        debug_assert_eq!(lazy.meta().dtype, A::DTYPE);
        Array { lazy, value: OnceLock::new(), _elem: PhantomData }
    }

    /// An array holding `a`'s data (copied once into the session; evaluated already).
    pub fn from_array<D: Dimension>(a: ndarray::Array<A, D>) -> Self {
        Self::from_shared(a.into_dyn().into_shared())
    }
    /// An array holding a shared ndarray array (no copy).
    pub fn from_shared(a: ArcArray<A, IxDyn>) -> Self {
        Self::wrap(session::current().source(A::wrap(a), "from_array"))
    }
    /// A 1-D array of `v`.
    pub fn from_vec(v: Vec<A>) -> Self {
        Self::from_array(ndarray::Array1::from_vec(v))
    }
    /// An array of `shape` from `v` in row-major order.
    pub fn from_shape_vec(shape: impl ShapeArg, v: Vec<A>) -> Result<Self> {
        let dims = shape.dims();
        let a = ndarray::ArrayD::from_shape_vec(IxDyn(&dims), v).map_err(|e| BachError::shape("from_shape_vec", e.to_string()))?;
        Ok(Self::from_array(a))
    }

    pub fn lazy(&self) -> &Lazy {
        &self.lazy
    }
    pub fn meta(&self) -> &Meta {
        self.lazy.meta()
    }
    pub fn shape(&self) -> &[usize] {
        &self.lazy.meta().shape
    }
    pub fn ndim(&self) -> usize {
        self.shape().len()
    }
    pub fn len(&self) -> usize {
        self.meta().len()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Compute the value (once; later calls and other handles reuse it), on the CPU.
    pub fn eval(&self) -> Result<ArcArray<A, IxDyn>> {
        if let Some(v) = self.value.get() {
            return Ok(v.clone());
        }
        let v = self.lazy.eval()?;
        let a = v.array::<A>().ok_or_else(|| BachError::dtype("eval", A::DTYPE, v.meta().dtype))?.clone();
        Ok(self.value.get_or_init(|| a).clone())
    }
    /// Compute the value and keep it in the accelerator's memory when it is computed there,
    /// so that later cells using it on the accelerator read it with no copy (reading it on the
    /// host, e.g. printing, copies it back each time). Returns the device it lives on.
    pub fn eval_on_device(&self) -> Result<bach_runtime::DeviceId> {
        self.lazy.eval_on_device()
    }
    /// Where the computed value lives, by device name (`None` before it is computed).
    pub fn location(&self) -> Option<String> {
        let d = self.lazy.location()?;
        let s = self.lazy.session();
        Some(s.devices().get(d).map_or_else(|| format!("device {}", d.0), |dev| dev.profile().name.clone()))
    }
    /// The value as an owned `ndarray` array.
    pub fn to_array(&self) -> Result<ndarray::ArrayD<A>> {
        Ok(self.eval()?.into_owned())
    }
    pub fn to_array1(&self) -> Result<ndarray::Array1<A>> {
        self.to_array()?.into_dimensionality::<Ix1>().map_err(|e| BachError::shape("to_array1", format!("{e}: shape {:?}", self.shape())))
    }
    pub fn to_array2(&self) -> Result<ndarray::Array2<A>> {
        self.to_array()?.into_dimensionality::<Ix2>().map_err(|e| BachError::shape("to_array2", format!("{e}: shape {:?}", self.shape())))
    }
    /// The single element of a 0-d (or one-element) array, e.g. the result of `sum()`.
    pub fn to_scalar(&self) -> Result<A> {
        let v = self.eval()?;
        match v.first() {
            Some(x) if v.len() == 1 => Ok(*x),
            _ => Err(BachError::shape("to_scalar", format!("array of shape {:?} is not a scalar", v.shape()))),
        }
    }
    /// The element at `index` (evaluates).
    pub fn get(&self, index: &[usize]) -> Result<A> {
        let v = self.eval()?;
        v.get(IxDyn(index)).copied().ok_or_else(|| BachError::invalid("index", format!("{index:?} is out of bounds for shape {:?}", v.shape())))
    }
    /// The plan that evaluating this array would run (nothing runs).
    pub fn plan(&self) -> Result<Plan> {
        self.lazy.plan()
    }
    /// Why each op of this array's plan runs where it runs: the estimates on each device, the
    /// copies, the margin, the reason in words (nothing runs).
    pub fn explain(&self) -> Result<crate::Explanation> {
        self.lazy.plan().map(|p| crate::Explanation(p.explain()))
    }
    /// Ask for the op computing this array to run on `device` (`Device::Auto`: where the
    /// policy puts it). Plans respect it and say so; an op with no accelerator version stays
    /// on the CPU and its plan says why. An array already computed keeps its value.
    pub fn on(self, device: crate::Device) -> Self {
        self.lazy.force(match device {
            crate::Device::Cpu => Some(false),
            crate::Device::Gpu => Some(true),
            crate::Device::Auto => None,
        });
        self
    }
    /// Whether the value has been computed.
    pub fn is_evaluated(&self) -> bool {
        self.value.get().is_some() || self.lazy.is_evaluated()
    }

    fn evaluated(&self) -> &ArcArray<A, IxDyn> {
        if self.value.get().is_none() {
            if let Err(e) = self.eval() {
                panic!("bach: cannot evaluate {}: {e}", self.meta());
            }
        }
        self.value.get().expect("just evaluated")
    }

    /// Call annotated `op` with `self` and `others` as arguments.
    pub(crate) fn call<B: Element>(&self, op: &Arc<Annotation>, others: &[&Lazy]) -> Result<Array<B>> {
        let mut args = vec![&self.lazy];
        args.extend_from_slice(others);
        Ok(Array::wrap(op.call(&args)?))
    }
}

impl<A: Element, D: Dimension> From<ndarray::Array<A, D>> for Array<A> {
    fn from(a: ndarray::Array<A, D>) -> Self {
        Array::from_array(a)
    }
}

/// Indexing evaluates; an index out of bounds panics as in ndarray.
impl<A: Element, const N: usize> Index<[usize; N]> for Array<A> {
    type Output = A;
    #[track_caller]
    fn index(&self, index: [usize; N]) -> &A {
        &self.evaluated()[IxDyn(&index)]
    }
}
impl<A: Element> Index<usize> for Array<A> {
    type Output = A;
    #[track_caller]
    fn index(&self, index: usize) -> &A {
        &self.evaluated()[IxDyn(&[index])]
    }
}

/// Display evaluates and prints like ndarray.
impl<A: Element> fmt::Display for Array<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        display_lazy(&self.lazy, f)
    }
}
impl<A: Element> fmt::Debug for Array<A> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        debug_lazy(&self.lazy, f)
    }
}

// Formatting is not generic: ndarray's formatting code is compiled here once, not again in
// every notebook cell that prints an array.

fn display_lazy(lazy: &Lazy, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match lazy.eval() {
        Ok(Value::F64(a)) => fmt::Display::fmt(&a, f),
        Ok(Value::F32(a)) => fmt::Display::fmt(&a, f),
        Ok(Value::I64(a)) => fmt::Display::fmt(&a, f),
        Ok(Value::Bool(a)) => fmt::Display::fmt(&a, f),
        Ok(_) => write!(f, "<{}: not a host array>", lazy.meta()),
        Err(e) => write!(f, "<{} not evaluated: {e}>", lazy.meta()),
    }
}

fn debug_lazy(lazy: &Lazy, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    match lazy.eval() {
        Ok(Value::F64(a)) => write!(f, "{a:?}, bach #{}", lazy.id()),
        Ok(Value::F32(a)) => write!(f, "{a:?}, bach #{}", lazy.id()),
        Ok(Value::I64(a)) => write!(f, "{a:?}, bach #{}", lazy.id()),
        Ok(Value::Bool(a)) => write!(f, "{a:?}, bach #{}", lazy.id()),
        Ok(_) => write!(f, "<{} #{}: not a host array>", lazy.meta(), lazy.id()),
        Err(e) => write!(f, "<{} #{} not evaluated: {e}>", lazy.meta(), lazy.id()),
    }
}

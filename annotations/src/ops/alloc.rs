//! Allocations (`oa_alloc`): constant fills, ranges and seeded random arrays. They are lazy
//! and created on the device of their first user; fills and ranges are made piece by piece
//! (on an accelerator by the `fill` and `sequence` kernels). Random arrays stay on the host.

use std::sync::Arc;

use bach_runtime::{oa_alloc, session, Annotation, BachError, DType, Element, Launch, Lazy, Meta, Result};
use ndarray::{ArrayD, Dimension, Ix1, Ix2, IxDyn};
use num_traits::{One, Zero};

use crate::array::{same_type, type_id, Array, Array1, ArrayBase, DataOwned, ShapeArg};
use crate::io::random::RandomState;
use crate::ops::kernels;
use crate::real::Real;

/// An element of a graph element type as the `double` parameter of a fill kernel (bool: 0 or
/// 1).
fn param<A>(v: &A) -> f64 {
    use crate::array::same;
    same::<A, f64>(v)
        .or_else(|| same::<A, f32>(v).map(f64::from))
        .or_else(|| same::<A, i64>(v).map(|x| x as f64))
        .or_else(|| same::<A, bool>(v).map(|b| f64::from(u8::from(b))))
        .expect("elements are f64, f32, i64 or bool")
}

/// The session to make an allocation of `shape` in at once on the host, when it is small
/// enough (the session's `eager_max_elements`); `None`: a lazy allocation, made where its
/// first user runs.
fn small_at_once(shape: &[usize]) -> Option<bach_runtime::Home> {
    let n: usize = shape.iter().product();
    if n > crate::array::EAGER_MAX_ELEMENTS {
        return None;
    }
    let home = bach_runtime::Home::current();
    (n <= home.session().eager_max_elements()).then_some(home)
}

/// A constant fill `name` of `value`: accelerator entry `fill`.
fn fill_op<A: Element>(name: &str, value: A) -> Arc<Annotation> {
    oa_alloc(name)
        .accelerator_launch(kernels::FILL, kernels::fill_source(), Launch::Fill { params: vec![param(&value)] })
        .cpu(move |ctx, _| Ok(A::wrap(ArrayD::from_elem(IxDyn(&piece_shape(ctx.meta, &ctx.rows)), value).into_shared())))
        .build()
}

/// `start + step * i`: accelerator entry `sequence`.
fn arithmetic_op<A: Real>(name: &str, start: A, step: A) -> Arc<Annotation> {
    oa_alloc(name)
        .accelerator_launch(kernels::SEQUENCE, kernels::fill_source(), Launch::Fill { params: vec![param(&start), param(&step)] })
        .cpu(move |ctx, _| {
            let v: Vec<A> = ctx.rows.clone().map(|i| start + step * A::of(i as f64)).collect();
            Ok(A::wrap(ArrayD::from_shape_vec(IxDyn(&[v.len()]), v).expect("1-d").into_shared()))
        })
        .build()
}

/// Every allocation with an accelerator version and the dtype it makes (for the kernel
/// catalogue).
pub(crate) fn catalog() -> Vec<(Arc<Annotation>, Vec<DType>)> {
    fn floats<A: Real>() -> Vec<(Arc<Annotation>, Vec<DType>)> {
        [
            fill_op("zeros", A::zero()),
            fill_op("ones", A::one()),
            fill_op("full", A::of(2.0)),
            arithmetic_op("linspace", A::zero(), A::one()),
            arithmetic_op("range", A::one(), A::one()),
        ]
        .into_iter()
        .map(|op| (op, vec![A::DTYPE]))
        .collect()
    }
    let mut c = floats::<f64>();
    c.extend(floats::<f32>());
    c.push((fill_op("full", true), vec![DType::Bool]));
    c
}

/// Shape of the piece covering `rows` of a value of `meta`.
fn piece_shape(meta: &Meta, rows: &std::ops::Range<usize>) -> Vec<usize> {
    let mut shape = meta.shape.clone();
    if let Some(first) = shape.first_mut() {
        *first = rows.len();
    }
    shape
}

/// The generic `Array<A>` constructors below are thin shells over these non-generic cores, so
/// the kernels (fills, sequences, the random stream) are compiled here, optimised, and not
/// again, at the notebook cell's optimisation level, in every cell that calls a constructor.
fn fill_node(name: &str, dtype: DType, shape: Vec<usize>, value: f64) -> Lazy {
    let op = match dtype {
        DType::F64 => fill_op(name, value),
        DType::F32 => fill_op(name, value as f32),
        DType::I64 => fill_op(name, value as i64),
        DType::Bool => fill_op(name, value != 0.0),
        DType::Opaque => unreachable!("arrays are f64, f32, i64 or bool"),
    };
    session::current().alloc(&op, Meta::new(dtype, shape)).expect("an oa_alloc annotation")
}

/// `start + step * i` for `n` elements of `dtype` (f32 parameters come in exactly as f64).
fn arithmetic_node(name: &str, dtype: DType, start: f64, step: f64, n: usize) -> Lazy {
    let op = match dtype {
        DType::F64 => arithmetic_op(name, start, step),
        DType::F32 => arithmetic_op(name, start as f32, step as f32),
        d => unreachable!("sequences are f64 or f32, not {d}"),
    };
    session::current().alloc(&op, Meta::new(dtype, [n])).expect("an oa_alloc annotation")
}

/// How a random array draws each value from numpy's stream.
#[derive(Clone, Copy)]
enum Draw {
    Uniform { low: f64, high: f64 },
    Normal { mean: f64, std: f64 },
}

fn random_node(name: &str, dtype: DType, shape: Vec<usize>, seed: u32, draw: Draw) -> Lazy {
    fn op<A: Real>(name: &str, seed: u32, draw: Draw) -> Arc<Annotation> {
        // numpy's stream is one sequence, drawn on one thread whatever the machine: priced by
        // the value, as measured on the 2-core development machine (uniform 4.5-6.9 ns,
        // normal 17 ns a value, the evaluation included), not by the `alloc` row that parallel
        // fills are fitted to.
        let per_value = match draw {
            Draw::Uniform { .. } => 5e-9,
            Draw::Normal { .. } => 15e-9,
        };
        oa_alloc(name)
            .unsplittable()
            .cpu_only("numpy-compatible MT19937 stream: generated on the host")
            .estimate(move |_, result, _| 2e-6 + per_value * result.len() as f64)
            .cpu(move |ctx, _| {
                let mut rs = RandomState::new(seed);
                let v: Vec<A> = (0..ctx.meta.len())
                    .map(|_| {
                        A::of(match draw {
                            Draw::Uniform { low, high } => rs.uniform(low, high),
                            Draw::Normal { mean, std } => rs.normal(mean, std),
                        })
                    })
                    .collect();
                Ok(A::wrap(ArrayD::from_shape_vec(IxDyn(&ctx.meta.shape), v).expect("meta shape").into_shared()))
            })
            .build()
    }
    let op = match dtype {
        DType::F64 => op::<f64>(name, seed, draw),
        DType::F32 => op::<f32>(name, seed, draw),
        d => unreachable!("random arrays are f64 or f32, not {d}"),
    };
    session::current().alloc(&op, Meta::new(dtype, shape)).expect("an oa_alloc annotation")
}

/// Constant arrays of any element type: a lazy allocation node for the graph's element types
/// (made where its first user runs), a host array for the others.
/// Of either owned kind (`Array`, `ArcArray`), so that library code generic over
/// `S: DataOwned` calls them as it calls ndarray's.
impl<A: Clone, S: DataOwned<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// An array of `shape` filled with `value` (ndarray's `from_elem`).
    pub fn from_elem<Sh: ShapeArg<Dim = D>>(shape: Sh, value: A) -> Self {
        S::of_array(Array::fill("full", shape.dims_order(), value))
    }
    /// Same as [`ArrayBase::from_elem`] (numpy's name).
    pub fn full<Sh: ShapeArg<Dim = D>>(shape: Sh, value: A) -> Self {
        S::of_array(Array::fill("full", shape.dims_order(), value))
    }
}

impl<A: Clone, D: Dimension> Array<A, D> {
    /// An array of `shape` (in column-major order when it asks: `(m, n).f()`) filled with
    /// `value`.
    fn fill(name: &str, (shape, f): (Vec<usize>, bool), value: A) -> Self {
        let graph = crate::array::graph_element::<A>();
        if let (Some(g), None) = (graph, small_at_once(&shape)) {
            return Self::from_node(fill_node(name, g.dtype, shape, param(&value)), g.read);
        }
        // Made here and now (small, see `EAGER_MAX_ELEMENTS`, or not a graph element type).
        let a = ArrayD::from_elem(ndarray::ShapeBuilder::set_f(IxDyn(&shape), f), value).into_shared().into_dimensionality::<D>().expect("a shape of D's axes");
        Self::from_host(a)
    }
}

impl<A: Clone + Zero, S: DataOwned<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// An array of `shape` filled with zeros (ndarray's `zeros`).
    pub fn zeros<Sh: ShapeArg<Dim = D>>(shape: Sh) -> Self {
        S::of_array(Array::fill("zeros", shape.dims_order(), A::zero()))
    }
}

impl<A: Default, S: DataOwned<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// An array of `shape` filled with `A::default()` (ndarray's `default`), made on the host.
    pub fn default<Sh: ndarray::ShapeBuilder<Dim = D>>(shape: Sh) -> Self {
        S::of_nd(ndarray::Array::default(shape))
    }
}

impl<A: Clone + One, S: DataOwned<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// An array of `shape` filled with ones (ndarray's `ones`).
    pub fn ones<Sh: ShapeArg<Dim = D>>(shape: Sh) -> Self {
        S::of_array(Array::fill("ones", shape.dims_order(), A::one()))
    }
}

impl<A: Real, D: Dimension> Array<A, D> {
    /// Uniform values in [low, high) from numpy's `RandomState(seed).uniform(low, high, shape)`.
    /// Generated whole (one random stream) on the host. The bounds give the element type, so
    /// `Array::random_uniform(n, 0.0, 1.0, seed)` is an `f64` array (numpy's default) and
    /// `let x: Array1<f32> = Array::random_uniform(..)` an `f32` one; numbers are drawn in
    /// `f64` either way, as numpy does, and rounded to `f32`.
    pub fn random_uniform<Sh: ShapeArg<Dim = D>>(shape: Sh, low: A, high: A, seed: u32) -> Self {
        let (low, high) = (low.to_f64().unwrap_or(f64::NAN), high.to_f64().unwrap_or(f64::NAN));
        Self::wrap(random_node("random_uniform", A::DTYPE, shape.dims(), seed, Draw::Uniform { low, high }))
    }
    /// Normal values from numpy's `RandomState(seed).normal(mean, std, shape)` (the element
    /// type as in [`Array::random_uniform`]).
    pub fn random_normal<Sh: ShapeArg<Dim = D>>(shape: Sh, mean: A, std: A, seed: u32) -> Self {
        let (mean, std) = (mean.to_f64().unwrap_or(f64::NAN), std.to_f64().unwrap_or(f64::NAN));
        Self::wrap(random_node("random_normal", A::DTYPE, shape.dims(), seed, Draw::Normal { mean, std }))
    }
}

/// `range` and `linspace` for every float type, as ndarray's (`A: Float`), so that code
/// generic over its float type calls them: f64 and f32 (Bach's [`Real`] types) take Bach's
/// path (at once when small, else a lazy node); any other float type is made by ndarray.
impl<A: num_traits::Float, S: DataOwned<Elem = A>> ArrayBase<S, Ix1> {
    /// `n` evenly spaced values from `start` to `end` inclusive (as ndarray and numpy).
    pub fn linspace(start: A, end: A, n: usize) -> Self {
        S::of_array(real_or_host(
            || Array1::<f64>::real_linspace(same_type(start), same_type(end), n),
            || Array1::<f32>::real_linspace(same_type(start), same_type(end), n),
            || ndarray::Array1::linspace(start, end, n),
        ))
    }
    /// Values from `start` to `end` (exclusive) by `step` (ndarray's `range`, numpy's
    /// `arange`). A step the wrong way or zero gives an empty array, as ndarray's.
    pub fn range(start: A, end: A, step: A) -> Self {
        S::of_array(real_or_host(
            || Array1::<f64>::real_range(same_type(start), same_type(end), same_type(step)),
            || Array1::<f32>::real_range(same_type(start), same_type(end), same_type(step)),
            || ndarray::Array1::range(start, end, step),
        ))
    }
}

/// `f64()` when `A` is f64, `f32()` when it is f32, else `host()` as a host array.
fn real_or_host<A: Clone>(f64: impl FnOnce() -> Array1<f64>, f32: impl FnOnce() -> Array1<f32>, host: impl FnOnce() -> ndarray::Array1<A>) -> Array1<A> {
    crate::array::f64_or_f32::<A, _>(|| (type_id::<A>() == type_id::<f64>()).then(|| same_type(f64())), || (type_id::<A>() == type_id::<f32>()).then(|| same_type(f32())))
        .unwrap_or_else(|| Array1::from_host(host().into_shared()))
}

impl<A: Real> Array<A, Ix1> {
    /// [`Array::linspace`] of f64 or f32.
    fn real_linspace(start: A, end: A, n: usize) -> Self {
        let step = if n > 1 { (end - start) / A::of((n - 1) as f64) } else { A::zero() };
        Self::sequence("linspace", start, step, n)
    }

    /// `start + step * i` for `i` in `0..n`: made here and now when small, else lazily.
    fn sequence(name: &str, start: A, step: A, n: usize) -> Self {
        if let Some(home) = small_at_once(&[n]) {
            let v: Vec<A> = (0..n).map(|i| start + step * A::of(i as f64)).collect();
            return Self::from_host_in(ndarray::Array1::from_vec(v).into_shared(), home);
        }
        Self::wrap(arithmetic_node(name, A::DTYPE, param(&start), param(&step), n))
    }

    /// [`Array::range`] of f64 or f32.
    fn real_range(start: A, end: A, step: A) -> Self {
        let steps = ((end - start) / step).ceil();
        let n = if step == A::zero() || steps.is_nan() || steps < A::zero() { 0 } else { steps.max(A::zero()).to_usize().unwrap_or(0) };
        Self::sequence("range", start, step, n)
    }

    /// Values from `start` to `end` (exclusive) by `step` (numpy's `arange`); an error when
    /// the step goes the wrong way or is zero.
    pub fn arange(start: A, end: A, step: A) -> Result<Self> {
        let steps = ((end - start) / step).ceil();
        if step == A::zero() || steps.is_nan() || steps < A::zero() {
            return Err(BachError::invalid("range", format!("from {start} to {end} by {step}")));
        }
        Ok(Self::real_range(start, end, step))
    }

    /// `n` values from `base^start` to `base^end`, their exponents evenly spaced (ndarray's
    /// `logspace`).
    pub fn logspace(base: A, start: A, end: A, n: usize) -> Self {
        Self::real_linspace(start, end, n).mapv_host(move |e| base.powf(e))
    }

    /// `n` values from `start` to `end` in geometric progression (ndarray's `geomspace`);
    /// `None` when the two are of different signs or one is zero.
    pub fn geomspace(start: A, end: A, n: usize) -> Option<Self> {
        if start == A::zero() || end == A::zero() || (start < A::zero()) != (end < A::zero()) {
            return None;
        }
        let sign = if start < A::zero() { -A::one() } else { A::one() };
        let (ls, le) = ((start * sign).ln(), (end * sign).ln());
        Some(Self::real_linspace(ls, le, n).mapv_host(move |e| sign * e.exp()))
    }

    fn mapv_host(&self, f: impl FnMut(A) -> A) -> Self {
        crate::host::host(self.evaluated().mapv(f))
    }
}

impl<A: Clone + Zero + One, S: DataOwned<Elem = A>> ArrayBase<S, Ix2> {
    /// The `n` x `n` identity matrix (ndarray's `eye`).
    pub fn eye(n: usize) -> Self {
        Self::from_shape_fn((n, n), |(i, j)| if i == j { A::one() } else { A::zero() })
    }
}
impl<A: Clone + Zero, S: DataOwned<Elem = A>> ArrayBase<S, Ix2> {
    /// The square matrix with `diag` on its diagonal (ndarray's `from_diag`; a Bach array is
    /// evaluated).
    #[track_caller]
    pub fn from_diag<T: ndarray::Data<Elem = A>>(diag: &ndarray::ArrayBase<T, Ix1>) -> Self {
        S::of_array(Array::from_array(ndarray::Array2::from_diag(diag)))
    }
}

//! Allocations (`oa_alloc`): constant fills, ranges and seeded random arrays. They are lazy
//! and created on the device of their first user; fills and ranges are made piece by piece
//! (on an accelerator by the `fill` and `sequence` kernels). Random arrays stay on the host.

use std::sync::Arc;

use bach_runtime::{oa_alloc, session, Annotation, BachError, DType, Element, Launch, Meta, Result};
use ndarray::{ArrayD, IxDyn};

use crate::array::{Array, ShapeArg};
use crate::kernels;
use crate::random::RandomState;
use crate::real::Real;

/// An element as the `double` parameter of a fill kernel (bool: 0 or 1).
fn param<A: Element>(v: A) -> f64 {
    let any: &dyn std::any::Any = &v;
    if let Some(x) = any.downcast_ref::<f64>() {
        *x
    } else if let Some(x) = any.downcast_ref::<f32>() {
        f64::from(*x)
    } else if let Some(b) = any.downcast_ref::<bool>() {
        f64::from(u8::from(*b))
    } else {
        unreachable!("elements are f64, f32 or bool")
    }
}

/// A constant fill `name` of `value`: accelerator entry `fill`.
fn fill_op<A: Element>(name: &str, value: A) -> Arc<Annotation> {
    oa_alloc(name)
        .accelerator_launch(kernels::FILL, kernels::fill_source(), Launch::Fill { params: vec![param(value)] })
        .cpu(move |ctx, _| Ok(A::wrap(ArrayD::from_elem(IxDyn(&piece_shape(ctx.meta, &ctx.rows)), value).into_shared())))
        .build()
}

/// `start + step * i`: accelerator entry `sequence`.
fn arithmetic_op<A: Real>(name: &str, start: A, step: A) -> Arc<Annotation> {
    oa_alloc(name)
        .accelerator_launch(kernels::SEQUENCE, kernels::fill_source(), Launch::Fill { params: vec![param(start), param(step)] })
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
        [fill_op("zeros", A::zero()), fill_op("ones", A::one()), fill_op("full", A::of(2.0)), arithmetic_op("linspace", A::zero(), A::one()), arithmetic_op("range", A::one(), A::one())]
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

impl<A: Element> Array<A> {
    /// An array of `shape` filled with `value` (ndarray's `from_elem`).
    pub fn from_elem(shape: impl ShapeArg, value: A) -> Self {
        Self::fill("full", shape.dims(), value)
    }
    /// Same as [`Array::from_elem`] (numpy's name).
    pub fn full(shape: impl ShapeArg, value: A) -> Self {
        Self::fill("full", shape.dims(), value)
    }
    fn fill(name: &str, shape: Vec<usize>, value: A) -> Self {
        let op = fill_op(name, value);
        Self::wrap(session::current().alloc(&op, Meta::new(A::DTYPE, shape)).expect("an oa_alloc annotation"))
    }
}

impl<A: Real> Array<A> {
    pub fn zeros(shape: impl ShapeArg) -> Self {
        Self::fill("zeros", shape.dims(), A::zero())
    }
    pub fn ones(shape: impl ShapeArg) -> Self {
        Self::fill("ones", shape.dims(), A::one())
    }

    /// `n` evenly spaced values from `start` to `end` inclusive (as ndarray and numpy).
    pub fn linspace(start: A, end: A, n: usize) -> Self {
        let step = if n > 1 { (end - start) / A::of((n - 1) as f64) } else { A::zero() };
        Self::arithmetic("linspace", start, step, n)
    }

    /// Values from `start` to `end` (exclusive) by `step` (ndarray's `range`, numpy's
    /// `arange`); an error when the step goes the wrong way or is zero.
    pub fn range(start: A, end: A, step: A) -> Result<Self> {
        let steps = ((end - start) / step).ceil();
        if step == A::zero() || steps.is_nan() || steps < A::zero() {
            return Err(BachError::invalid("range", format!("from {start} to {end} by {step}")));
        }
        Ok(Self::arithmetic("range", start, step, steps.max(A::zero()).to_usize().unwrap_or(0)))
    }

    /// Same as [`Array::range`] (numpy's name).
    pub fn arange(start: A, end: A, step: A) -> Result<Self> {
        Self::range(start, end, step)
    }

    fn arithmetic(name: &str, start: A, step: A, n: usize) -> Self {
        let op = arithmetic_op(name, start, step);
        Self::wrap(session::current().alloc(&op, Meta::new(A::DTYPE, [n])).expect("an oa_alloc annotation"))
    }

    /// Uniform values in [low, high) from numpy's `RandomState(seed).uniform(low, high, shape)`.
    /// Generated whole (one random stream) on the host.
    pub fn random_uniform(shape: impl ShapeArg, low: f64, high: f64, seed: u32) -> Self {
        Self::random("random_uniform", shape.dims(), seed, move |rs| rs.uniform(low, high))
    }
    /// Normal values from numpy's `RandomState(seed).normal(mean, std, shape)`.
    pub fn random_normal(shape: impl ShapeArg, mean: f64, std: f64, seed: u32) -> Self {
        Self::random("random_normal", shape.dims(), seed, move |rs| rs.normal(mean, std))
    }

    fn random(name: &str, shape: Vec<usize>, seed: u32, draw: impl Fn(&mut RandomState) -> f64 + Send + Sync + 'static) -> Self {
        let op = oa_alloc(name)
            .unsplittable()
            .cpu_only("numpy-compatible MT19937 stream: generated on the host")
            .cpu(move |ctx, _| {
                let mut rs = RandomState::new(seed);
                let v: Vec<A> = (0..ctx.meta.len()).map(|_| A::of(draw(&mut rs))).collect();
                Ok(A::wrap(ArrayD::from_shape_vec(IxDyn(&ctx.meta.shape), v).expect("meta shape").into_shared()))
            })
            .build();
        Self::wrap(session::current().alloc(&op, Meta::new(A::DTYPE, shape)).expect("an oa_alloc annotation"))
    }
}

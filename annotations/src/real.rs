//! The floating-point element types (f64, f32) and the math ndarray's element types lack.

use std::iter::Sum;

use bach_runtime::Element;
use ndarray::{LinalgScalar, ScalarOperand};
use num_traits::{Float, FromPrimitive};

/// f64 or f32: the element types arithmetic and math ops accept.
pub trait Real: Element + crate::elementwise::Numeric + crate::array::Scalar + Float + FromPrimitive + ScalarOperand + LinalgScalar + Sum + Default {
    /// The error function.
    fn erf(self) -> Self;
    /// Conversion from f64 (rounding for f32).
    fn of(v: f64) -> Self;
    /// `x op y` of a row-major slice and a slice of the same length, or a scalar: the
    /// operators' path for small host values of one shape (see [`Real::arith_at_once`]).
    ///
    /// `x op y` of host values at once, broadcast; `None` when `y` is an array of more than
    /// `max` elements or the shapes do not broadcast (`elementwise::arith_at_once`). One
    /// function per float type, compiled in Bach: a notebook cell that uses an operator calls
    /// it and compiles none of it.
    #[doc(hidden)]
    fn arith_slices(op: crate::BinOp, x: &[Self], y: crate::elementwise::SliceOrScalar<'_, Self>) -> ndarray::ArcArray<Self, ndarray::Ix1>;
    /// [`Real::arith_slices`]'s general case.
    #[doc(hidden)]
    fn arith_at_once(op: crate::BinOp, x: ndarray::ArrayViewD<'_, Self>, y: crate::Host<'_, Self>, max: usize) -> Option<ndarray::ArrayD<Self>>;
    /// This thread's spent small values of this type (`array/pool.rs`).
    #[doc(hidden)]
    fn buffers() -> &'static std::thread::LocalKey<std::cell::RefCell<crate::array::pool::Pool<Self>>>;
    /// A spent value back to [`Real::buffers`] when no one else holds it.
    #[doc(hidden)]
    fn give_back(v: ndarray::ArcArray<Self, ndarray::Ix1>);
}

impl Real for f64 {
    fn arith_slices(op: crate::BinOp, x: &[Self], y: crate::elementwise::SliceOrScalar<'_, Self>) -> ndarray::ArcArray<Self, ndarray::Ix1> {
        crate::elementwise::arith_slices(op, x, y)
    }
    fn buffers() -> &'static std::thread::LocalKey<std::cell::RefCell<crate::array::pool::Pool<Self>>> {
        thread_local!(static BUFFERS: std::cell::RefCell<crate::array::pool::Pool<f64>> = const { std::cell::RefCell::new(crate::array::pool::Pool::new()) });
        &BUFFERS
    }
    fn give_back(v: ndarray::ArcArray<Self, ndarray::Ix1>) {
        crate::array::pool::keep(v)
    }
    fn arith_at_once(op: crate::BinOp, x: ndarray::ArrayViewD<'_, Self>, y: crate::Host<'_, Self>, max: usize) -> Option<ndarray::ArrayD<Self>> {
        crate::elementwise::arith_at_once(op, x, y, max)
    }
    fn erf(self) -> Self {
        libm::erf(self)
    }
    fn of(v: f64) -> Self {
        v
    }
}

impl Real for f32 {
    fn arith_slices(op: crate::BinOp, x: &[Self], y: crate::elementwise::SliceOrScalar<'_, Self>) -> ndarray::ArcArray<Self, ndarray::Ix1> {
        crate::elementwise::arith_slices(op, x, y)
    }
    fn buffers() -> &'static std::thread::LocalKey<std::cell::RefCell<crate::array::pool::Pool<Self>>> {
        thread_local!(static BUFFERS: std::cell::RefCell<crate::array::pool::Pool<f32>> = const { std::cell::RefCell::new(crate::array::pool::Pool::new()) });
        &BUFFERS
    }
    fn give_back(v: ndarray::ArcArray<Self, ndarray::Ix1>) {
        crate::array::pool::keep(v)
    }
    fn arith_at_once(op: crate::BinOp, x: ndarray::ArrayViewD<'_, Self>, y: crate::Host<'_, Self>, max: usize) -> Option<ndarray::ArrayD<Self>> {
        crate::elementwise::arith_at_once(op, x, y, max)
    }
    fn erf(self) -> Self {
        libm::erff(self)
    }
    fn of(v: f64) -> Self {
        v as f32
    }
}

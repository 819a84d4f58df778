//! The floating-point element types (f64, f32) and the math ndarray's element types lack.

use std::iter::Sum;

use bach_runtime::Element;
use ndarray::{LinalgScalar, ScalarOperand};
use num_traits::{Float, FromPrimitive};

/// f64 or f32: the element types arithmetic and math ops accept.
pub trait Real: Element + Numeric + crate::array::Scalar + crate::array::pool::Pooled + Float + FromPrimitive + ScalarOperand + LinalgScalar + Sum + Default {
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
    fn arith_slices(op: crate::array::BinOp, x: &[Self], y: SliceOrScalar<'_, Self>) -> ndarray::ArcArray<Self, ndarray::Ix1>;
    /// `x = x op y` (`x = y op x` when `swapped`) in place, over a row-major slice and a
    /// slice of its length or a scalar: the operators' path for an owned operand whose small
    /// value no one else holds (ndarray's operators reuse such an operand's buffer too). The
    /// same arithmetic as [`Real::arith_slices`], so the same bits.
    #[doc(hidden)]
    fn arith_in_place(op: crate::array::BinOp, x: &mut [Self], y: SliceOrScalar<'_, Self>, swapped: bool);
    /// [`Real::arith_slices`]'s general case.
    #[doc(hidden)]
    fn arith_at_once(op: crate::array::BinOp, x: ndarray::ArrayViewD<'_, Self>, y: crate::array::Host<'_, Self>, max: usize) -> Option<ndarray::ArrayD<Self>>;
}

/// The element types with a number's comparisons and casts: f64, f32 and i64. Integer
/// arrays (class and cluster labels, indices) are cast to a float type to compute with them;
/// comparisons compare them as f64 (exact below 2^53).
pub trait Numeric: Element {}
impl Numeric for f64 {}
impl Numeric for f32 {}
impl Numeric for i64 {}

/// The right side of [`Real::arith_slices`]: a slice of the left's length, or a scalar.
#[doc(hidden)]
pub enum SliceOrScalar<'a, A> {
    Slice(&'a [A]),
    Scalar(A),
}

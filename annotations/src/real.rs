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
}

impl Real for f64 {
    fn erf(self) -> Self {
        libm::erf(self)
    }
    fn of(v: f64) -> Self {
        v
    }
}

impl Real for f32 {
    fn erf(self) -> Self {
        libm::erff(self)
    }
    fn of(v: f64) -> Self {
        v as f32
    }
}

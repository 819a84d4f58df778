//! Arithmetic of integer arrays (`i8`..`i128`, `u8`..`u128`, `isize`, `usize`, and `i64`):
//! at once, on the host, as ndarray computes it, so the results, the broadcasting and the
//! panics (a shape that does not broadcast, an integer overflow in a debug build) are
//! ndarray's. Bach's graph computes with floats (`Real`); integer arrays in ndarray code are
//! counts, labels, indices and tables, small and touched element by element.
//!
//! The operators between arrays, and with a scalar on the right, are the family's
//! (`array/operators.rs`: every element type); here are a scalar on the left (`1 + &a`) and
//! the operator names.

use std::ops::{Add, Div, Mul, Rem, Sub};

use ndarray::Dimension;

use crate::array::{Array, ArrayBase, BinOp, Data};

/// Integer element types.
pub trait Integer: Copy + Add<Output = Self> + Sub<Output = Self> + Mul<Output = Self> + Div<Output = Self> + Rem<Output = Self> + 'static {}

impl BinOp {
    fn scalar<A: Integer>(self, x: A, y: A) -> A {
        match self {
            BinOp::Add => x + y,
            BinOp::Sub => x - y,
            BinOp::Mul => x * y,
            BinOp::Div => x / y,
            BinOp::Rem => x % y,
        }
    }
    /// The operator's method name (`add`...), for messages.
    pub fn name(self) -> &'static str {
        match self {
            BinOp::Add => "add",
            BinOp::Sub => "sub",
            BinOp::Mul => "mul",
            BinOp::Div => "div",
            BinOp::Rem => "rem",
        }
    }
}

macro_rules! integer {
    ($($t:ty),*) => {$(
        impl Integer for $t {}
        integer!(@op $t, Add, add);
        integer!(@op $t, Sub, sub);
        integer!(@op $t, Mul, mul);
        integer!(@op $t, Div, div);
        integer!(@op $t, Rem, rem);
    )*};
    (@op $t:ty, $Trait:ident, $method:ident) => {
        impl<BS: Data<Elem = $t>, D: Dimension> std::ops::$Trait<&ArrayBase<BS, D>> for $t {
            type Output = Array<$t, D>;
            #[track_caller]
            fn $method(self, rhs: &ArrayBase<BS, D>) -> Array<$t, D> {
                rhs.mapv(|x| BinOp::$Trait.scalar(self, x))
            }
        }
        impl<BS: Data<Elem = $t>, D: Dimension> std::ops::$Trait<ArrayBase<BS, D>> for $t {
            type Output = Array<$t, D>;
            #[track_caller]
            fn $method(self, rhs: ArrayBase<BS, D>) -> Array<$t, D> {
                self.$method(&rhs)
            }
        }
    };
}
integer!(i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);

//! Arithmetic of integer arrays (`i8`..`i128`, `u8`..`u128`, `isize`, `usize`, and `i64`):
//! at once, on the host, through ndarray's own operators, so the results, the broadcasting
//! and the panics (a shape that does not broadcast, an integer overflow in a debug build) are
//! ndarray's. Bach's graph computes with floats (`Real`); integer arrays in ndarray code are
//! counts, labels, indices and tables, small and touched element by element.
//!
//! `&a + &b`, `&a + 1`, `1 + &a`, `&a + &view`, `&view + &a`, `a += &b`, `a += 1`, with `-`,
//! `*`, `/`, `%`, and `-&a` for signed types; the result is a Bach array holding the host
//! value (`Array<i32, D>` etc.).

use std::ops::{Add, Div, Mul, Rem, Sub};

use ndarray::{ArcArray, DimMax, Dimension};
use ndarray::{ArrayBase as NdBase, Data as NdData};

use crate::array::{Array, ArrayBase, Data};
use crate::host::host;

/// One of the five arithmetic operators.
#[derive(Clone, Copy, Debug)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// Integer element types: what the operators below need of them.
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
    /// `l op r` as ndarray computes it (broadcasting both; a panic when they do not).
    #[track_caller]
    fn arrays<A: Integer, S: NdData<Elem = A>, S2: NdData<Elem = A>, D: Dimension + DimMax<E>, E: Dimension>(
        self,
        l: &NdBase<S, D>,
        r: &NdBase<S2, E>,
    ) -> ndarray::Array<A, <D as DimMax<E>>::Output> {
        match self {
            BinOp::Add => l + r,
            BinOp::Sub => l - r,
            BinOp::Mul => l * r,
            BinOp::Div => l / r,
            BinOp::Rem => l % r,
        }
    }
}

/// The right-hand side of an integer array's operator: a Bach array, an ndarray array or view
/// (by reference or value), or a scalar of the element type.
pub trait IntegerOperand<A, D: Dimension> {
    /// The dimension type of the result (ndarray's `DimMax`).
    type Out: Dimension;
    fn apply(self, lhs: &ArcArray<A, D>, op: BinOp) -> ndarray::Array<A, Self::Out>;
}

impl<A: Integer, BS: Data<Elem = A>, D: Dimension + DimMax<E>, E: Dimension> IntegerOperand<A, D> for &ArrayBase<BS, E> {
    type Out = <D as DimMax<E>>::Output;
    #[track_caller]
    fn apply(self, lhs: &ArcArray<A, D>, op: BinOp) -> ndarray::Array<A, Self::Out> {
        op.arrays(lhs, &**self)
    }
}
impl<A: Integer, BS: Data<Elem = A>, D: Dimension + DimMax<E>, E: Dimension> IntegerOperand<A, D> for ArrayBase<BS, E> {
    type Out = <D as DimMax<E>>::Output;
    #[track_caller]
    fn apply(self, lhs: &ArcArray<A, D>, op: BinOp) -> ndarray::Array<A, Self::Out> {
        op.arrays(lhs, &*self)
    }
}
impl<A: Integer, S: NdData<Elem = A>, D: Dimension + DimMax<E>, E: Dimension> IntegerOperand<A, D> for &NdBase<S, E> {
    type Out = <D as DimMax<E>>::Output;
    #[track_caller]
    fn apply(self, lhs: &ArcArray<A, D>, op: BinOp) -> ndarray::Array<A, Self::Out> {
        op.arrays(lhs, self)
    }
}
impl<A: Integer, S: NdData<Elem = A>, D: Dimension + DimMax<E>, E: Dimension> IntegerOperand<A, D> for NdBase<S, E> {
    type Out = <D as DimMax<E>>::Output;
    #[track_caller]
    fn apply(self, lhs: &ArcArray<A, D>, op: BinOp) -> ndarray::Array<A, Self::Out> {
        op.arrays(lhs, &self)
    }
}

macro_rules! integer {
    ($($t:ty),*) => {$(
        impl Integer for $t {}
        impl<D: Dimension> IntegerOperand<$t, D> for $t {
            type Out = D;
            #[track_caller]
            fn apply(self, lhs: &ArcArray<$t, D>, op: BinOp) -> ndarray::Array<$t, D> {
                lhs.mapv(|x| op.scalar(x, self))
            }
        }
        integer!(@op $t, Add, add, AddAssign, add_assign);
        integer!(@op $t, Sub, sub, SubAssign, sub_assign);
        integer!(@op $t, Mul, mul, MulAssign, mul_assign);
        integer!(@op $t, Div, div, DivAssign, div_assign);
        integer!(@op $t, Rem, rem, RemAssign, rem_assign);
        impl<BS: Data<Elem = $t>, D: Dimension, R: IntegerOperand<$t, D>> crate::array::Arith<BS, D, R> for $t {
            type Output = Array<$t, R::Out>;
            #[track_caller]
            fn arith(op: BinOp, lhs: &ArrayBase<BS, D>, rhs: R) -> Array<$t, R::Out> {
                host(rhs.apply(lhs, op))
            }
        }
    )*};
    (@op $t:ty, $Trait:ident, $method:ident, $Assign:ident, $assign:ident) => {
        /// `a op= rhs` binds `a` to the new values (no other handle sees a change); the result
        /// keeps `a`'s shape, as in ndarray.
        impl<D: Dimension, R: IntegerOperand<$t, D, Out = D>> std::ops::$Assign<R> for Array<$t, D> {
            #[track_caller]
            fn $assign(&mut self, rhs: R) {
                let r = rhs.apply(self, BinOp::$Trait);
                if r.shape() != self.shape() {
                    panic!("{}: the result's shape {:?} is not the array's {:?}", stringify!($assign), r.shape(), self.shape());
                }
                *self = host(r);
            }
        }
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

macro_rules! negate {
    ($($t:ty),*) => {$(
        impl<BS: Data<Elem = $t>, D: Dimension> crate::array::Negate<BS, D> for $t {
            #[track_caller]
            fn negate(a: &ArrayBase<BS, D>) -> Array<$t, D> {
                host(a.evaluated().mapv(|x| -x))
            }
        }
    )*};
}
negate!(i8, i16, i32, i64, i128, isize);

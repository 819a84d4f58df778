//! The arithmetic operators of the array family: `&a + &b`, `a - b`, `&view * 2.0`,
//! `2.0 - &a`, `-&a`, `&nd_view / &a`, with `+ - * / %`, between any two members of the
//! family (arrays, views, shared and copy-on-write arrays, by reference or value) and with
//! scalars on either side; the result is always a Bach [`Array`].
//!
//! One impl per operator, over every storage kind; how it computes is the element type's
//! ([`Arith`]): Bach's float types add lazy graph ops (or compute small host values at once,
//! `elementwise.rs`), integer types compute at once on the host through ndarray
//! (`host_ops.rs`).

use ndarray::Dimension;

use super::{Array, ArrayBase, Data, OwnedRepr};
use crate::host_ops::BinOp;

/// How arrays of an element type compute `lhs op rhs` for a right-hand side `R`.
pub trait Arith<S: Data<Elem = Self>, D: Dimension, R>: Sized {
    /// The result (an `Array` of the broadcast dimension).
    type Output;
    fn arith(op: BinOp, lhs: &ArrayBase<S, D>, rhs: R) -> Self::Output;
}

/// How arrays of an element type compute `-a`.
pub trait Negate<S: Data<Elem = Self>, D: Dimension>: Sized {
    fn negate(a: &ArrayBase<S, D>) -> Array<Self, D>;
}

macro_rules! operators {
    ($($Trait:ident, $method:ident, $Op:ident;)*) => {$(
        impl<S: Data, D: Dimension, R> std::ops::$Trait<R> for &ArrayBase<S, D>
        where
            S::Elem: Arith<S, D, R>,
        {
            type Output = <S::Elem as Arith<S, D, R>>::Output;
            #[track_caller]
            fn $method(self, rhs: R) -> Self::Output {
                <S::Elem as Arith<S, D, R>>::arith(BinOp::$Op, self, rhs)
            }
        }
        impl<S: Data, D: Dimension, R> std::ops::$Trait<R> for ArrayBase<S, D>
        where
            S::Elem: Arith<S, D, R>,
        {
            type Output = <S::Elem as Arith<S, D, R>>::Output;
            #[track_caller]
            fn $method(self, rhs: R) -> Self::Output {
                <S::Elem as Arith<S, D, R>>::arith(BinOp::$Op, &self, rhs)
            }
        }
        /// An ndarray array or view on the left of a Bach array gives a Bach array.
        impl<'a, A, S: ndarray::Data<Elem = A>, BS: Data<Elem = A>, D: Dimension, E: Dimension> std::ops::$Trait<&'a ArrayBase<BS, E>> for &ndarray::ArrayBase<S, D>
        where
            A: Clone + Arith<OwnedRepr<A>, D, &'a ArrayBase<BS, E>>,
        {
            type Output = <A as Arith<OwnedRepr<A>, D, &'a ArrayBase<BS, E>>>::Output;
            #[track_caller]
            fn $method(self, rhs: &'a ArrayBase<BS, E>) -> Self::Output {
                let left = Array::<A, D>::from_host_in(self.to_owned().into_shared(), rhs.home());
                A::arith(BinOp::$Op, &left, rhs)
            }
        }
    )*};
}
operators! {
    Add, add, Add;
    Sub, sub, Sub;
    Mul, mul, Mul;
    Div, div, Div;
    Rem, rem, Rem;
}

impl<S: Data, D: Dimension> std::ops::Neg for &ArrayBase<S, D>
where
    S::Elem: Negate<S, D>,
{
    type Output = Array<S::Elem, D>;
    #[track_caller]
    fn neg(self) -> Self::Output {
        <S::Elem as Negate<S, D>>::negate(self)
    }
}
impl<S: Data, D: Dimension> std::ops::Neg for ArrayBase<S, D>
where
    S::Elem: Negate<S, D>,
{
    type Output = Array<S::Elem, D>;
    #[track_caller]
    fn neg(self) -> Self::Output {
        <S::Elem as Negate<S, D>>::negate(&self)
    }
}

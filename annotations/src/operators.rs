//! The arithmetic operators of the array family: `&a + &b`, `a - b`, `&view * 2.0`,
//! `2.0 - &a`, `-&a`, `&nd_view / &a`, `a += &b`, with `+ - * / %`, between any two members
//! of the family (arrays, views, shared and copy-on-write arrays, by reference or value),
//! ndarray arrays and views, and scalars; the result is always a Bach [`Array`].
//!
//! One impl per operator, over every storage kind and every element type ndarray's operators
//! take (`A: Clone + Add<Output = A>`, a scalar `A: ScalarOperand`), so code generic over its
//! element type (`A: NdFloat`, `A: LinalgScalar`) ports too. How it computes is chosen by the
//! element type when it runs: Bach's float types (f64, f32) add lazy graph ops, or compute
//! small host values at once (`elementwise.rs`); every other type computes at once on the
//! host, as ndarray does.

use std::ops::{Add, Div, Mul, Neg, Rem, Sub};

use ndarray::{Dimension, IxDyn, Zip};

use crate::array::{float_parts, same_type, Array, ArrayBase, AssignOperand, BinOp, Data, DataMut, FloatParts, Handle, Host, Operand};
use crate::real::{Real, SliceOrScalar};

/// An operand of `A`s seen as an operand of `F`s, where `A` is `F` (checked by the caller).
struct AsElem<'r, F, A, R>(&'r R, std::marker::PhantomData<(F, A)>);

impl<F, A, D: Dimension, R: Operand<A, D>> Operand<F, D> for AsElem<'_, F, A, R> {
    type Out = R::Out;
    fn node(&self, like: &bach_runtime::Lazy) -> bach_runtime::Lazy {
        self.0.node(like)
    }
    fn host_value(&self) -> Option<bach_runtime::Value> {
        self.0.host_value()
    }
    fn host(&self) -> Option<Host<'_, F>> {
        self.0.host().map(same_type)
    }
    fn host_as<E: Dimension>(&self) -> Option<ndarray::ArrayView<'_, F, E>> {
        self.0.host_as::<E>().map(same_type)
    }
    fn evaluated_host(&self) -> Host<'_, F> {
        same_type(self.0.evaluated_host())
    }
}

/// `lhs op rhs` in Bach's float type `F`, when `A` is `F`.
#[track_caller]
fn in_float<F: Real, A: Clone, S: Data<Elem = A>, D: Dimension, R: Operand<A, D>>(op: BinOp, lhs: &ArrayBase<S, D>, rhs: &R) -> Option<Array<A, R::Out>> {
    if crate::array::type_id::<A>() != crate::array::type_id::<F>() {
        return None;
    }
    let rhs = AsElem::<F, A, R>(rhs, std::marker::PhantomData);
    // A view computes from its elements where they are (no copy into an array first).
    let out: Array<F, R::Out> = match float_parts::<F, A, S, D>(lhs) {
        FloatParts::Array(a) => crate::ops::elementwise::real_arith(op, a, rhs),
        FloatParts::View(v) => crate::ops::elementwise::real_arith(op, &v, rhs),
    };
    Some(same_type(out))
}

/// `lhs op= rhs` computed in `lhs`'s own buffer, as ndarray's operators compute on an owned
/// operand (`a * 2.0`, `(&a + &b) + &c`, `a += &b`): when `A` is f64 or f32, `lhs` is an
/// array that alone holds its small value on the host ([`Handle::small_unique_mut`]), and
/// `rhs` is a scalar or a host value of `lhs`'s shape in row-major order. Whether it did (else
/// nothing changed: the caller computes a new value). The same arithmetic as a new value's,
/// so the same bits.
fn in_place<A, S: Data<Elem = A>, D: Dimension, R: Operand<A, D>>(op: BinOp, lhs: &mut ArrayBase<S, D>, rhs: &R) -> bool {
    // (As `f64_or_f32`: a cell working in f64 compiles only the f64 path.)
    let done = if const { std::mem::size_of::<A>() == 8 } {
        in_place_float::<f64, _, _, _, _>(op, lhs, rhs)
    } else if const { std::mem::size_of::<A>() == 4 } {
        in_place_float::<f32, _, _, _, _>(op, lhs, rhs)
    } else {
        None
    };
    done.unwrap_or(false)
}
fn in_place_float<F: Real, A, S: Data<Elem = A>, D: Dimension, R: Operand<A, D>>(op: BinOp, lhs: &mut ArrayBase<S, D>, rhs: &R) -> Option<bool> {
    if crate::array::type_id::<A>() != crate::array::type_id::<F>() {
        return None;
    }
    let rhs = AsElem::<F, A, R>(rhs, std::marker::PhantomData);
    let same = rhs.host_as::<D>();
    let y = match &same {
        Some(y) if y.shape() == lhs.shape() => SliceOrScalar::Slice(y.as_slice()?),
        Some(_) => return None,
        None => match rhs.host()? {
            Host::Scalar(s) => SliceOrScalar::Scalar(s),
            Host::Array(_) => return None,
        },
    };
    let h: &mut Handle<F, D> = same_type(lhs.handle_mut()?);
    F::arith_in_place(op, h.small_unique_mut()?, y, false);
    Some(true)
}

/// `lhs op rhs`: lazy (or at once when small) for f64 and f32, at once on the host through
/// ndarray's broadcasting for every other element type. A shape that does not broadcast
/// panics at the operator's line, as in ndarray.
#[track_caller]
pub(crate) fn arith<A: Clone, S: Data<Elem = A>, D: Dimension, R: Operand<A, D>>(op: BinOp, lhs: &ArrayBase<S, D>, rhs: R, f: impl Fn(A, A) -> A) -> Array<A, R::Out> {
    if let Some(r) = crate::array::f64_or_f32::<A, _>(|| in_float::<f64, _, _, _, _>(op, lhs, &rhs), || in_float::<f32, _, _, _, _>(op, lhs, &rhs)) {
        return r;
    }
    let out = host_arith(op, lhs.evaluated().view().into_dyn(), rhs.evaluated_host(), &f);
    let out = out.into_dimensionality::<R::Out>().unwrap_or_else(|e| panic!("bach: {}: {e}", op.name()));
    Array::from_host_in(out.into_shared(), lhs.home())
}

/// `x op y` of any element type on the host, broadcast as ndarray's operators broadcast (a
/// shape that does not panics at the operator's line). One instance per element type, the
/// operator a `dyn` closure: what a cell compiles for each operator it uses stays small.
#[track_caller]
fn host_arith<A: Clone>(op: BinOp, x: ndarray::ArrayViewD<'_, A>, y: Host<'_, A>, f: &dyn Fn(A, A) -> A) -> ndarray::ArrayD<A> {
    match y {
        Host::Scalar(s) => x.map(|v| f(v.clone(), s.clone())),
        Host::Array(y) => {
            let shape = crate::ops::elementwise::broadcast_shape(op.name(), &[x.shape(), y.shape()]).unwrap_or_else(|e| panic!("{e}"));
            let (xb, yb) = (x.broadcast(IxDyn(&shape)).expect("checked"), y.broadcast(IxDyn(&shape)).expect("checked"));
            Zip::from(&xb).and(&yb).map_collect(|a, b| f(a.clone(), b.clone()))
        }
    }
}

macro_rules! operators {
    ($($Trait:ident, $method:ident, $Op:ident, $Assign:ident, $assign:ident, $op:tt;)*) => {$(
        impl<A: Clone + $Trait<Output = A>, S: Data<Elem = A>, D: Dimension, R: Operand<A, D>> std::ops::$Trait<R> for &ArrayBase<S, D> {
            type Output = Array<A, R::Out>;
            #[track_caller]
            fn $method(self, rhs: R) -> Self::Output {
                arith(BinOp::$Op, self, rhs, |x, y| x $op y)
            }
        }
        impl<A: Clone + $Trait<Output = A>, S: Data<Elem = A>, D: Dimension, R: Operand<A, D>> std::ops::$Trait<R> for ArrayBase<S, D> {
            type Output = Array<A, R::Out>;
            #[track_caller]
            fn $method(mut self, rhs: R) -> Self::Output {
                if in_place(BinOp::$Op, &mut self, &rhs) {
                    return self.into_array_as();
                }
                arith(BinOp::$Op, &self, rhs, |x, y| x $op y)
            }
        }
        /// An ndarray array or view on the left of a Bach array gives a Bach array.
        impl<'a, A: Clone + $Trait<Output = A>, S: ndarray::Data<Elem = A>, BS: Data<Elem = A>, D: Dimension + ndarray::DimMax<E>, E: Dimension> std::ops::$Trait<&'a ArrayBase<BS, E>>
            for &ndarray::ArrayBase<S, D>
        {
            type Output = Array<A, <D as ndarray::DimMax<E>>::Output>;
            #[track_caller]
            fn $method(self, rhs: &'a ArrayBase<BS, E>) -> Self::Output {
                let left = Array::<A, D>::from_host_in(self.to_owned().into_shared(), rhs.home());
                arith(BinOp::$Op, &left, rhs, |x, y| x $op y)
            }
        }
        /// `a op= rhs` binds `a` to the new values (nothing another handle holds changes; a
        /// lazy node for the float types; a mutable view writes them into its parent). The
        /// right side is a scalar or an array of any dimension type that broadcasts to `a`'s
        /// shape, as in ndarray.
        impl<A: Clone + $Trait<Output = A>, S: DataMut<Elem = A>, D: Dimension, R: AssignOperand<A, D>> std::ops::$Assign<R> for ArrayBase<S, D> {
            #[track_caller]
            fn $assign(&mut self, rhs: R) {
                let rhs = rhs.as_operand();
                if in_place(BinOp::$Op, self, &rhs) {
                    return;
                }
                let r = arith(BinOp::$Op, &*self, rhs, |x, y| x $op y);
                self.assign_result(stringify!($assign), r);
            }
        }
    )*};
}
operators! {
    Add, add, Add, AddAssign, add_assign, +;
    Sub, sub, Sub, SubAssign, sub_assign, -;
    Mul, mul, Mul, MulAssign, mul_assign, *;
    Div, div, Div, DivAssign, div_assign, /;
    Rem, rem, Rem, RemAssign, rem_assign, %;
}

/// `view_mut op= &bach` (ndarray's mutable views, `slice_mut(..)`, `row_mut(..)`, with a Bach
/// array or view on the right), as ndarray's (the right side broadcast to the left's shape).
macro_rules! nd_assign {
    ($($Assign:ident, $assign:ident, $op:tt;)*) => {$(
        impl<'a, A: Clone + std::ops::$Assign<A>, S: ndarray::DataMut<Elem = A>, S2: Data<Elem = A>, D: Dimension, E: Dimension> std::ops::$Assign<&'a ArrayBase<S2, E>> for ndarray::ArrayBase<S, D> {
            #[track_caller]
            fn $assign(&mut self, rhs: &'a ArrayBase<S2, E>) {
                self.zip_mut_with(&rhs.as_nd(), |x, y| *x $op y.clone());
            }
        }
    )*};
}
nd_assign! {
    AddAssign, add_assign, +=;
    SubAssign, sub_assign, -=;
    MulAssign, mul_assign, *=;
    DivAssign, div_assign, /=;
    RemAssign, rem_assign, %=;
}

/// `a op= rhs` for the bitwise operators (masks, flags), on the host.
macro_rules! bit_assign {
    ($($Trait:ident, $Assign:ident, $assign:ident, $op:tt;)*) => {$(
        impl<A: Clone + std::ops::$Trait<Output = A>, S: DataMut<Elem = A>, S2: Data<Elem = A>, D: Dimension, E: Dimension> std::ops::$Assign<&ArrayBase<S2, E>> for ArrayBase<S, D> {
            #[track_caller]
            fn $assign(&mut self, rhs: &ArrayBase<S2, E>) {
                let r = rhs.evaluated_shared();
                self.evaluated_view_mut().zip_mut_with(&r, |x, y| *x = x.clone() $op y.clone());
            }
        }
        impl<A: Clone + std::ops::$Trait<Output = A>, S: DataMut<Elem = A>, S2: Data<Elem = A>, D: Dimension, E: Dimension> std::ops::$Assign<ArrayBase<S2, E>> for ArrayBase<S, D> {
            #[track_caller]
            fn $assign(&mut self, rhs: ArrayBase<S2, E>) {
                std::ops::$Assign::$assign(self, &rhs);
            }
        }
    )*};
}
bit_assign! {
    BitOr, BitOrAssign, bitor_assign, |;
    BitAnd, BitAndAssign, bitand_assign, &;
    BitXor, BitXorAssign, bitxor_assign, ^;
}

/// `-a`: lazy (or at once when small) for f64 and f32, at once on the host for every other
/// element type.
impl<A: Clone + Neg<Output = A>, S: Data<Elem = A>, D: Dimension> Neg for &ArrayBase<S, D> {
    type Output = Array<A, D>;
    #[track_caller]
    fn neg(self) -> Array<A, D> {
        fn float<F: Real, A, S: Data<Elem = A>, D: Dimension>(a: &ArrayBase<S, D>) -> Option<Array<A, D>> {
            (crate::array::type_id::<A>() == crate::array::type_id::<F>()).then(|| {
                same_type(match float_parts::<F, A, S, D>(a) {
                    FloatParts::Array(a) => crate::ops::elementwise::real_negate(a),
                    FloatParts::View(v) => crate::ops::elementwise::real_negate(&v),
                })
            })
        }
        if let Some(r) = crate::array::f64_or_f32::<A, _>(|| float::<f64, _, _, _>(self), || float::<f32, _, _, _>(self)) {
            return r;
        }
        Array::from_host_in(self.evaluated().map(|x| -x.clone()).into_shared(), self.home())
    }
}
impl<A: Clone + Neg<Output = A>, S: Data<Elem = A>, D: Dimension> Neg for ArrayBase<S, D> {
    type Output = Array<A, D>;
    #[track_caller]
    fn neg(self) -> Array<A, D> {
        -&self
    }
}

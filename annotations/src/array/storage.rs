//! The storage kinds of [`ArrayBase`](super::ArrayBase), named as ndarray names them, so that
//! library code generic over storage (`fn f<S: Data<Elem = f64>, D: Dimension>(x:
//! &ArrayBase<S, D>)`) takes Bach's arrays and views as it takes ndarray's.
//!
//! Each kind has its own representation (`RawData::Repr`) and derefs to ndarray's storage of
//! the same kind (`RawData::Nd`), so that ndarray's methods run on its values:
//!
//! | alias | storage | representation | derefs to | `Copy` |
//! |---|---|---|---|---|
//! | `Array<A, D>` | `OwnedRepr<A>` | a `Handle` (node and/or value; writes copy on write) | `ArcArray` | no |
//! | `ArcArray<A, D>` | `OwnedArcRepr<A>` | a `Handle` | `ArcArray` | no |
//! | `CowArray<'a, A, D>` | `CowRepr<'a, A>` | a `Handle` (a view's elements copied) | `ArcArray` | no |
//! | `ArrayView<'a, A, D>` | `ViewRepr<&'a A>` | a `View`: ndarray's view, or a lazy cut | ndarray's `ArrayView` | for static `D` |
//! | `ArrayViewMut<'a, A, D>` | `ViewRepr<&'a mut A>` | ndarray's `ArrayViewMut` | itself | no |
//!
//! The trait methods marked `#[doc(hidden)]` are how the family's methods reach each
//! representation; the traits are sealed.

use std::marker::PhantomData;

use ndarray::Dimension;

use super::views::{Cut, View};
use super::{Handle, Parts};

mod sealed {
    pub trait Sealed {}
}
use sealed::Sealed;

/// The element type of a storage kind (ndarray's `RawData`); sealed. `Nd` is ndarray's
/// storage of the same kind (what a Bach array derefs to: ndarray's methods on its values),
/// `Repr` the kind's representation (a handle, or a view's borrowed elements).
pub trait RawData: Sized + Sealed {
    type Elem;
    #[doc(hidden)]
    type Nd: ndarray::RawData<Elem = Self::Elem>;
    #[doc(hidden)]
    type Repr<D>;
}
/// Storage whose handle can be cloned (every Bach kind but the mutable view).
pub trait RawDataClone: RawData {
    #[doc(hidden)]
    fn clone_repr<D: Dimension>(r: &Self::Repr<D>) -> Self::Repr<D>;
}
/// Storage whose values can be read (every Bach kind; ndarray's `Data`).
pub trait Data: RawData<Nd: ndarray::Data> {
    /// The representation's handle, or its elements on the host.
    #[doc(hidden)]
    fn parts<D: Dimension>(r: &Self::Repr<D>) -> Parts<'_, Self::Elem, D>;
    /// The representation's handle, to write, when it is one (the owned kinds).
    #[doc(hidden)]
    fn handle_mut<D: Dimension>(r: &mut Self::Repr<D>) -> Option<&mut Handle<Self::Elem, D>>;
    /// The shape.
    #[doc(hidden)]
    fn shape<D: Dimension>(r: &Self::Repr<D>) -> &[usize];
    /// The values, evaluated here when they are not (a failure panics at the caller's line).
    #[doc(hidden)]
    #[track_caller]
    fn nd<D: Dimension>(r: &Self::Repr<D>) -> &ndarray::ArrayBase<Self::Nd, D>;
    /// The representation cut by `cut`, of the same kind (`slice_move`, `reversed_axes`).
    #[doc(hidden)]
    fn cut_repr<D: Dimension, E: Dimension>(r: Self::Repr<D>, cut: &Cut) -> bach_runtime::Result<Self::Repr<E>>;
    /// The representation with dimension type `E` (checked by the caller: the same axes).
    #[doc(hidden)]
    fn dim_repr<D: Dimension, E: Dimension>(r: Self::Repr<D>) -> bach_runtime::Result<Self::Repr<E>>;
    /// The representation, moved out (a placeholder of no elements is left).
    #[doc(hidden)]
    fn take_repr<D: Dimension>(r: &mut Self::Repr<D>) -> Self::Repr<D>;
    /// Axes `a` and `b` swapped (evaluates a lazy value).
    #[doc(hidden)]
    #[track_caller]
    fn swap_axes_repr<D: Dimension>(r: &mut Self::Repr<D>, a: usize, b: usize);
    /// The values as an owned array's handle (a view's elements are copied).
    #[doc(hidden)]
    fn into_handle<D: Dimension>(r: Self::Repr<D>) -> Handle<Self::Elem, D>
    where
        Self::Elem: Clone;
    /// The elements reshaped to `dims` in row-major order, of the same kind.
    #[doc(hidden)]
    #[track_caller]
    fn reshape_repr<D: Dimension, E: Dimension>(r: Self::Repr<D>, dims: &[usize]) -> Result<Self::Repr<E>, ndarray::ShapeError>;
}
/// Storage that may be written (ndarray's `DataMut`; the owned kinds: a write copies a value
/// another handle shares first).
pub trait RawDataMut: RawData {
    /// The values for writing: an array's evaluated and made its own (copied when another
    /// handle or node shares them), its node dropped (the next annotated call makes a new one
    /// from the values); a mutable view's, its parent's elements.
    #[doc(hidden)]
    #[track_caller]
    fn nd_mut<D: Dimension>(r: &mut Self::Repr<D>) -> &mut ndarray::ArrayBase<Self::Nd, D>;
}
/// Storage written through mutable views (`view_mut`, `slice_mut`, `index_axis_mut`, ...):
/// every [`DataMut`] kind, and an owned array of any element type. ndarray's `Array<A, D>`
/// asks no `A: Clone` for them, and library code generic over `A` with no bounds calls them
/// on its arrays; a shared array asks it, as ndarray's (its copy on write). Sealed.
pub trait ViewsMut: Data + RawDataMut {
    /// [`RawDataMut::nd_mut`]'s values as ndarray's mutable view.
    #[doc(hidden)]
    #[track_caller]
    fn view_mut_nd<D: Dimension>(r: &mut Self::Repr<D>) -> ndarray::ArrayViewMut<'_, Self::Elem, D>;
}
pub trait DataMut: Data<Nd: ndarray::DataMut> + ViewsMut {
    /// `r` bound to `v`, the result of `r op rhs` of its shape: an array takes the result
    /// (lazy for the float types); a mutable view writes its values into its parent.
    #[doc(hidden)]
    #[track_caller]
    fn assign_array<D: Dimension>(r: &mut Self::Repr<D>, v: super::Array<Self::Elem, D>)
    where
        Self::Elem: Clone;
}
/// Storage that owns its values (ndarray's `DataOwned`): the kinds whose constructors
/// (`ArrayBase::<S, D>::zeros`, `from_shape_vec`, `build_uninit`, ...) library code generic
/// over `S: DataOwned` calls.
pub trait DataOwned: Data {
    /// The same kind with `MaybeUninit` elements (ndarray's: what `uninit` and
    /// `build_uninit` give, and `assume_init` turns back).
    type MaybeUninit: DataOwned<Elem = std::mem::MaybeUninit<Self::Elem>> + RawDataSubst<Self::Elem, Output = Self>;
    /// An owned array as this kind (both are a handle: nothing is copied).
    #[doc(hidden)]
    fn of_array<D>(a: super::Array<Self::Elem, D>) -> super::ArrayBase<Self, D>;
    /// This kind as an owned array (nothing is copied).
    #[doc(hidden)]
    fn to_array<D>(a: super::ArrayBase<Self, D>) -> super::Array<Self::Elem, D>;
    /// An ndarray array's elements held as this kind (moved, in row- or column-major order:
    /// `shared_of`); a large one of a graph element type is a source node.
    #[doc(hidden)]
    fn of_nd<D: Dimension>(a: ndarray::Array<Self::Elem, D>) -> super::ArrayBase<Self, D> {
        Self::of_array(super::Array::from_shared_value(super::shared_of(a)))
    }
}
/// The same storage kind with elements of type `A` (ndarray's `RawDataSubst`).
pub trait RawDataSubst<A>: RawData {
    type Output: RawData<Elem = A>;
}
/// Storage shared by reference counting (ndarray's `DataShared`).
pub trait DataShared: Data + RawDataClone {}

/// An owned array's storage (`Array<A, D>`).
pub struct OwnedRepr<A>(PhantomData<A>);
/// A shared array's storage (`ArcArray<A, D>`).
pub struct OwnedArcRepr<A>(PhantomData<A>);
/// A view's storage (`ArrayView<'a, A, D>` is `ArrayBase<ViewRepr<&'a A>, D>`).
pub struct ViewRepr<A>(PhantomData<A>);
/// A borrowed-or-owned array's storage (`CowArray<'a, A, D>`).
pub struct CowRepr<'a, A>(PhantomData<&'a A>);

/// The kinds whose representation is a handle.
macro_rules! handle_kinds {
    ($([$($g:tt)*] $T:ty;)*) => {$(
        impl<$($g)*> Sealed for $T {}
        impl<$($g)*> RawData for $T {
            type Elem = A;
            type Nd = ndarray::OwnedArcRepr<A>;
            type Repr<D> = Handle<A, D>;
        }
        impl<$($g)*> Data for $T {
            fn parts<D: Dimension>(r: &Handle<A, D>) -> Parts<'_, A, D> {
                Parts::Handle(r)
            }
            fn handle_mut<D: Dimension>(r: &mut Handle<A, D>) -> Option<&mut Handle<A, D>> {
                Some(r)
            }
            fn shape<D: Dimension>(r: &Handle<A, D>) -> &[usize] {
                r.shape()
            }
            #[track_caller]
            fn nd<D: Dimension>(r: &Handle<A, D>) -> &ndarray::ArcArray<A, D> {
                r.evaluated()
            }
            fn cut_repr<D: Dimension, E: Dimension>(r: Handle<A, D>, cut: &Cut) -> bach_runtime::Result<Handle<A, E>> {
                r.cut(cut)
            }
            fn dim_repr<D: Dimension, E: Dimension>(r: Handle<A, D>) -> bach_runtime::Result<Handle<A, E>> {
                r.into_dimensionality()
            }
            fn take_repr<D: Dimension>(r: &mut Handle<A, D>) -> Handle<A, D> {
                r.take()
            }
            #[track_caller]
            fn swap_axes_repr<D: Dimension>(r: &mut Handle<A, D>, a: usize, b: usize) {
                r.swap_axes(a, b)
            }
            fn into_handle<D: Dimension>(r: Handle<A, D>) -> Handle<A, D>
            where
                A: Clone,
            {
                r
            }
            #[track_caller]
            fn reshape_repr<D: Dimension, E: Dimension>(r: Handle<A, D>, dims: &[usize]) -> Result<Handle<A, E>, ndarray::ShapeError> {
                r.reshape(dims)
            }
        }
    )*};
}
handle_kinds! {
    [A] OwnedRepr<A>;
    [A] OwnedArcRepr<A>;
    ['a, A] CowRepr<'a, A>;
}
/// A shared array's clone shares its value, as ndarray's `ArcArray` (any element type).
impl<A> RawDataClone for OwnedArcRepr<A> {
    fn clone_repr<D: Dimension>(r: &Handle<A, D>) -> Handle<A, D> {
        r.clone()
    }
}
/// An array's clone asks `A: Clone`, as ndarray's: it shares the value until either is
/// written (graph element types), or copies it (`Handle::clone_owned`).
impl<A: Clone> RawDataClone for OwnedRepr<A> {
    fn clone_repr<D: Dimension>(r: &Handle<A, D>) -> Handle<A, D> {
        r.clone_owned()
    }
}
impl<A: Clone> RawDataClone for CowRepr<'_, A> {
    fn clone_repr<D: Dimension>(r: &Handle<A, D>) -> Handle<A, D> {
        r.clone_owned()
    }
}
/// A shared array's values for writing: copied first when another handle shares them
/// (ndarray's copy on write, which asks `A: Clone`).
#[track_caller]
fn shared_view_mut<A: Clone, D: Dimension>(r: &mut Handle<A, D>) -> ndarray::ArrayViewMut<'_, A, D> {
    r.evaluated_mut().view_mut()
}
macro_rules! mut_handle {
    ($([$($v:tt)*] $T:ty, $view_mut:expr;)*) => {$(
        impl<A> RawDataMut for $T {
            #[track_caller]
            fn nd_mut<D: Dimension>(r: &mut Handle<A, D>) -> &mut ndarray::ArcArray<A, D> {
                r.evaluated_mut()
            }
        }
        impl<$($v)*> ViewsMut for $T {
            #[track_caller]
            fn view_mut_nd<D: Dimension>(r: &mut Handle<A, D>) -> ndarray::ArrayViewMut<'_, A, D> {
                $view_mut(r)
            }
        }
        impl<A: Clone> DataMut for $T {
            #[track_caller]
            fn assign_array<D: Dimension>(r: &mut Handle<A, D>, v: super::Array<A, D>) {
                *r = v.repr;
            }
        }
    )*};
}
mut_handle! {
    [A] OwnedRepr<A>, Handle::evaluated_view_mut;
    [A: Clone] OwnedArcRepr<A>, shared_view_mut;
}
macro_rules! owned_kinds {
    ($($T:ident),*) => {$(
        impl<A> DataOwned for $T<A> {
            type MaybeUninit = $T<std::mem::MaybeUninit<A>>;
            fn of_array<D>(a: super::Array<A, D>) -> super::ArrayBase<Self, D> {
                super::ArrayBase { repr: a.repr }
            }
            fn to_array<D>(a: super::ArrayBase<Self, D>) -> super::Array<A, D> {
                super::ArrayBase { repr: a.repr }
            }
        }
        impl<A, B> RawDataSubst<B> for $T<A> {
            type Output = $T<B>;
        }
    )*};
}
owned_kinds!(OwnedRepr, OwnedArcRepr);
impl<A> DataShared for OwnedArcRepr<A> {}

/// A view: the borrowed elements on the host, or a lazy cut its parent keeps (`views.rs`).
impl<A> Sealed for ViewRepr<&A> {}
impl<'a, A> RawData for ViewRepr<&'a A> {
    type Elem = A;
    type Nd = ndarray::ViewRepr<&'a A>;
    type Repr<D> = View<'a, A, D>;
}
impl<'a, A> RawDataClone for ViewRepr<&'a A> {
    fn clone_repr<D: Dimension>(r: &View<'a, A, D>) -> View<'a, A, D> {
        r.clone()
    }
}
impl<'a, A> Data for ViewRepr<&'a A> {
    fn parts<'r, D: Dimension>(r: &'r View<'a, A, D>) -> Parts<'r, A, D> {
        r.parts()
    }
    fn handle_mut<'r, D: Dimension>(_: &'r mut View<'a, A, D>) -> Option<&'r mut Handle<A, D>> {
        None
    }
    fn shape<'r, D: Dimension>(r: &'r View<'a, A, D>) -> &'r [usize] {
        r.shape()
    }
    #[track_caller]
    fn nd<'r, D: Dimension>(r: &'r View<'a, A, D>) -> &'r ndarray::ArrayView<'a, A, D> {
        r.nd()
    }
    fn cut_repr<D: Dimension, E: Dimension>(r: View<'a, A, D>, cut: &Cut) -> bach_runtime::Result<View<'a, A, E>> {
        r.cut_move(cut)
    }
    fn dim_repr<D: Dimension, E: Dimension>(r: View<'a, A, D>) -> bach_runtime::Result<View<'a, A, E>> {
        r.into_dimensionality()
    }
    fn take_repr<D: Dimension>(r: &mut View<'a, A, D>) -> View<'a, A, D> {
        let empty = ndarray::ArrayView::from_shape(D::zeros(r.nd_len()), &[]).expect("an empty view");
        std::mem::replace(r, View::Host(empty))
    }
    #[track_caller]
    fn swap_axes_repr<D: Dimension>(r: &mut View<'a, A, D>, a: usize, b: usize) {
        let mut v = r.nd().clone();
        v.swap_axes(a, b);
        *r = View::Host(v);
    }
    fn into_handle<D: Dimension>(r: View<'a, A, D>) -> Handle<A, D>
    where
        A: Clone,
    {
        r.into_handle()
    }
    #[track_caller]
    fn reshape_repr<D: Dimension, E: Dimension>(r: View<'a, A, D>, dims: &[usize]) -> Result<View<'a, A, E>, ndarray::ShapeError> {
        let e = E::from_dimension(&ndarray::IxDyn(dims)).ok_or_else(|| ndarray::ShapeError::from_kind(ndarray::ErrorKind::IncompatibleShape))?;
        r.into_nd().into_shape_with_order(e).map(View::Host)
    }
}

/// A mutable view: ndarray's mutable view of its parent's elements (`views_mut.rs`).
impl<A> Sealed for ViewRepr<&mut A> {}
impl<'a, A> RawData for ViewRepr<&'a mut A> {
    type Elem = A;
    type Nd = ndarray::ViewRepr<&'a mut A>;
    type Repr<D> = ndarray::ArrayViewMut<'a, A, D>;
}
impl<'a, A> Data for ViewRepr<&'a mut A> {
    fn parts<'r, D: Dimension>(r: &'r ndarray::ArrayViewMut<'a, A, D>) -> Parts<'r, A, D> {
        Parts::Host(r.view())
    }
    fn handle_mut<'r, D: Dimension>(_: &'r mut ndarray::ArrayViewMut<'a, A, D>) -> Option<&'r mut Handle<A, D>> {
        None
    }
    fn shape<'r, D: Dimension>(r: &'r ndarray::ArrayViewMut<'a, A, D>) -> &'r [usize] {
        r.shape()
    }
    fn nd<'r, D: Dimension>(r: &'r ndarray::ArrayViewMut<'a, A, D>) -> &'r ndarray::ArrayViewMut<'a, A, D> {
        r
    }
    fn cut_repr<D: Dimension, E: Dimension>(r: ndarray::ArrayViewMut<'a, A, D>, cut: &Cut) -> bach_runtime::Result<ndarray::ArrayViewMut<'a, A, E>> {
        let c = cut.apply(r.into_dyn());
        super::check_ndim::<E>("view_mut", c.shape())?;
        c.into_dimensionality::<E>().map_err(|e| bach_runtime::BachError::shape("view_mut", e.to_string()))
    }
    fn dim_repr<D: Dimension, E: Dimension>(r: ndarray::ArrayViewMut<'a, A, D>) -> bach_runtime::Result<ndarray::ArrayViewMut<'a, A, E>> {
        r.into_dimensionality::<E>().map_err(|e| bach_runtime::BachError::shape("into_dimensionality", e.to_string()))
    }
    fn take_repr<D: Dimension>(r: &mut ndarray::ArrayViewMut<'a, A, D>) -> ndarray::ArrayViewMut<'a, A, D> {
        let empty = ndarray::ArrayViewMut::from_shape(D::zeros(r.ndim()), &mut []).expect("an empty view");
        std::mem::replace(r, empty)
    }
    fn swap_axes_repr<D: Dimension>(r: &mut ndarray::ArrayViewMut<'a, A, D>, a: usize, b: usize) {
        r.swap_axes(a, b)
    }
    fn into_handle<D: Dimension>(r: ndarray::ArrayViewMut<'a, A, D>) -> Handle<A, D>
    where
        A: Clone,
    {
        super::Array::from_nd_view(&r.view()).repr
    }
    fn reshape_repr<D: Dimension, E: Dimension>(r: ndarray::ArrayViewMut<'a, A, D>, dims: &[usize]) -> Result<ndarray::ArrayViewMut<'a, A, E>, ndarray::ShapeError> {
        let e = E::from_dimension(&ndarray::IxDyn(dims)).ok_or_else(|| ndarray::ShapeError::from_kind(ndarray::ErrorKind::IncompatibleShape))?;
        r.into_shape_with_order(e)
    }
}
impl<'a, A> RawDataMut for ViewRepr<&'a mut A> {
    fn nd_mut<'r, D: Dimension>(r: &'r mut ndarray::ArrayViewMut<'a, A, D>) -> &'r mut ndarray::ArrayViewMut<'a, A, D> {
        r
    }
}
impl<'a, A> ViewsMut for ViewRepr<&'a mut A> {
    fn view_mut_nd<'r, D: Dimension>(r: &'r mut ndarray::ArrayViewMut<'a, A, D>) -> ndarray::ArrayViewMut<'r, A, D> {
        r.view_mut()
    }
}
impl<'a, A> DataMut for ViewRepr<&'a mut A> {
    #[track_caller]
    fn assign_array<D: Dimension>(r: &mut ndarray::ArrayViewMut<'a, A, D>, v: super::Array<A, D>)
    where
        A: Clone,
    {
        r.assign(&v.evaluated().view());
    }
}

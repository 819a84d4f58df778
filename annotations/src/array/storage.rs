//! The storage kinds of [`ArrayBase`](super::ArrayBase), named as ndarray names them, so that
//! library code generic over storage (`fn f<S: Data<Elem = f64>, D: Dimension>(x:
//! &ArrayBase<S, D>)`) takes Bach's arrays and views as it takes ndarray's.
//!
//! Every kind has one representation (a graph node and/or a shared host value: see
//! `ArrayBase`); the kind is a type-level tag that says what the value may do, as in ndarray:
//!
//! | alias | storage | reads | writes | owns |
//! |---|---|---|---|---|
//! | `Array<A, D>` | `OwnedRepr<A>` | yes | yes (copy on write) | yes |
//! | `ArcArray<A, D>` | `OwnedArcRepr<A>` | yes | yes (copy on write) | yes |
//! | `ArrayView<'a, A, D>` | `ViewRepr<&'a A>` | yes | no | borrows for `'a` |
//! | `CowArray<'a, A, D>` | `CowRepr<'a, A>` | yes | no | either |
//!
//! Mutable views stay ndarray's (`ArrayViewMut`: `view_mut()`, `row_mut()`,
//! `slice_mut()`..., which write into the array's own host value).

use std::marker::PhantomData;

mod sealed {
    pub trait Sealed {}
}
use sealed::Sealed;

/// The element type of a storage kind (ndarray's `RawData`); sealed.
pub trait RawData: Sized + Sealed {
    type Elem;
}
/// Storage whose handle can be cloned (every Bach kind).
pub trait RawDataClone: RawData {}
/// Storage whose values can be read (every Bach kind; ndarray's `Data`).
pub trait Data: RawData {}
/// Storage that may be written (ndarray's `DataMut`; the owned kinds: a write copies a value
/// another handle shares first).
pub trait RawDataMut: RawData {}
pub trait DataMut: Data + RawDataMut {}
/// Storage that owns its values (ndarray's `DataOwned`).
pub trait DataOwned: Data {}
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

macro_rules! kinds {
    ($([$($g:tt)*] $T:ty: [$($Trait:ident),*];)*) => {$(
        impl<$($g)*> Sealed for $T {}
        impl<$($g)*> RawData for $T {
            type Elem = A;
        }
        kinds!(@traits [$($g)*] $T: $($Trait),*);
    )*};
    (@traits $g:tt $T:ty: $($Trait:ident),*) => {
        $(kinds!(@one $g $T: $Trait);)*
    };
    (@one [$($g:tt)*] $T:ty: $Trait:ident) => {
        impl<$($g)*> $Trait for $T {}
    };
}
kinds! {
    [A] OwnedRepr<A>: [RawDataClone, Data, RawDataMut, DataMut, DataOwned];
    [A] OwnedArcRepr<A>: [RawDataClone, Data, RawDataMut, DataMut, DataOwned, DataShared];
    ['a, A] ViewRepr<&'a A>: [RawDataClone, Data];
    ['a, A] ViewRepr<&'a mut A>: [Data, RawDataMut, DataMut];
    ['a, A] CowRepr<'a, A>: [RawDataClone, Data];
}

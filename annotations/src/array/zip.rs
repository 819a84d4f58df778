//! `Zip`: ndarray's lock-step iteration over several producers, whose collecting methods
//! (`map_collect`, `par_map_collect`) give Bach arrays, so that `Zip::from(x.rows()).
//! map_collect(..)` fits a function that returns `Array1<f64>`, and whose closures are handed
//! Bach's views where ndarray's hand ndarray's ([`ZipItem`]: `Zip::from(a.lanes_mut(ax))
//! .for_each(|lane| ..)` gets a Bach `ArrayViewMut1`, which fits a function of the same
//! family). Everything else is ndarray's `Zip` as it is (the same methods and bounds): the
//! wrapper only hands each call on. Bach's arrays and views are producers as ndarray's are (`&a`,
//! `&mut a`, views by value, `rows()`, `lanes_mut()`...). ndarray's `azip!` keeps ndarray's
//! own `Zip`, with which it gives nothing back.

use ndarray::iter::Indices;
use ndarray::{AssignElem, Dimension, FoldWhile, IntoNdProducer, NdProducer};

use super::Array;

/// An item a `Zip` hands its closures, as Bach's family gives it: ndarray's views become
/// Bach's (no copy), elements and indices stay as they are.
#[doc(hidden)]
pub trait ZipItem {
    type Bach;
    fn bach(self) -> Self::Bach;
}
impl<'a, A> ZipItem for &'a A {
    type Bach = &'a A;
    fn bach(self) -> Self::Bach {
        self
    }
}
impl<'a, A> ZipItem for &'a mut A {
    type Bach = &'a mut A;
    fn bach(self) -> Self::Bach {
        self
    }
}
impl<A> ZipItem for *const A {
    type Bach = *const A;
    fn bach(self) -> Self::Bach {
        self
    }
}
impl<A> ZipItem for *mut A {
    type Bach = *mut A;
    fn bach(self) -> Self::Bach {
        self
    }
}
impl<'a, A, E: Dimension> ZipItem for ndarray::ArrayView<'a, A, E> {
    type Bach = super::ArrayView<'a, A, E>;
    fn bach(self) -> Self::Bach {
        self.into()
    }
}
impl<'a, A, E: Dimension> ZipItem for ndarray::ArrayViewMut<'a, A, E> {
    type Bach = super::ArrayViewMut<'a, A, E>;
    fn bach(self) -> Self::Bach {
        self.into()
    }
}
/// The indices of `Zip::indexed`.
macro_rules! index_items {
    ($($t:ty),*) => {$(
        impl ZipItem for $t {
            type Bach = $t;
            fn bach(self) -> Self::Bach {
                self
            }
        }
    )*};
}
index_items!(
    (),
    usize,
    (usize, usize),
    (usize, usize, usize),
    (usize, usize, usize, usize),
    (usize, usize, usize, usize, usize),
    (usize, usize, usize, usize, usize, usize),
    ndarray::IxDyn
);

/// ndarray's `Zip` with Bach arrays out of `map_collect`.
#[must_use = "zipping producers is lazy and does nothing unless consumed"]
pub struct Zip<Parts, D>(ndarray::Zip<Parts, D>);

impl<P: NdProducer<Dim = D>, D: Dimension> Zip<(P,), D> {
    /// A `Zip` of the producer `p` (ndarray's `Zip::from`): its shape is `p`'s.
    pub fn from<IP: IntoNdProducer<Dim = D, Output = P, Item = P::Item>>(p: IP) -> Self {
        Zip(ndarray::Zip::from(p))
    }
}
impl<P: NdProducer<Dim = D>, D: Dimension + Copy> Zip<(Indices<D>, P), D> {
    /// A `Zip` of each element's index and the producer `p` (ndarray's `Zip::indexed`).
    pub fn indexed<IP: IntoNdProducer<Dim = D, Output = P, Item = P::Item>>(p: IP) -> Self {
        Zip(ndarray::Zip::indexed(p))
    }
}
impl<Parts, D: Dimension> Zip<Parts, D> {
    /// The number of elements each producer gives.
    pub fn size(&self) -> usize {
        self.0.size()
    }
    /// ndarray's own `Zip` (for a method this wrapper does not hand on).
    pub fn into_nd(self) -> ndarray::Zip<Parts, D> {
        self.0
    }
}
impl<Parts, D> From<ndarray::Zip<Parts, D>> for Zip<Parts, D> {
    fn from(z: ndarray::Zip<Parts, D>) -> Self {
        Zip(z)
    }
}

/// ndarray's `map_collect` result as a Bach array (its elements moved, not cloned; Bach's
/// graph element types in row-major order, as Bach's values are).
fn collected<R, D: Dimension>(a: ndarray::Array<R, D>) -> Array<R, D> {
    let v = super::shared_of(a);
    let v = if v.is_standard_layout() { v } else { super::layout::standard_layout(v.clone()).unwrap_or(v) };
    Array::from_shared_value(v)
}

macro_rules! zip_methods {
    ($([$($p:ident)*];)*) => {$(
        #[allow(non_snake_case)]
        impl<D: Dimension, $($p: NdProducer<Dim = D, Item: ZipItem>),*> Zip<($($p,)*), D> {
            /// `function` of each element tuple in lock step (ndarray's `for_each`).
            pub fn for_each<F: FnMut($(<$p::Item as ZipItem>::Bach),*)>(self, mut function: F) {
                self.0.for_each(|$($p),*| function($($p.bach()),*))
            }
            /// Folds the element tuples into `acc` (ndarray's `fold`).
            pub fn fold<F: FnMut(Acc, $(<$p::Item as ZipItem>::Bach),*) -> Acc, Acc>(self, acc: Acc, mut function: F) -> Acc {
                self.0.fold(acc, |acc, $($p),*| function(acc, $($p.bach()),*))
            }
            /// [`Zip::fold`] that may stop early (ndarray's `fold_while`).
            pub fn fold_while<F: FnMut(Acc, $(<$p::Item as ZipItem>::Bach),*) -> FoldWhile<Acc>, Acc>(self, acc: Acc, mut function: F) -> FoldWhile<Acc> {
                self.0.fold_while(acc, |acc, $($p),*| function(acc, $($p.bach()),*))
            }
            /// Whether `predicate` holds for every element tuple (ndarray's `all`).
            pub fn all<F: FnMut($(<$p::Item as ZipItem>::Bach),*) -> bool>(self, mut predicate: F) -> bool {
                self.0.all(|$($p),*| predicate($($p.bach()),*))
            }
            /// Whether `predicate` holds for some element tuple (ndarray's `any`).
            pub fn any<F: FnMut($(<$p::Item as ZipItem>::Bach),*) -> bool>(self, mut predicate: F) -> bool {
                self.0.any(|$($p),*| predicate($($p.bach()),*))
            }
            /// Two halves (ndarray's `split`).
            pub fn split(self) -> (Self, Self) {
                let (a, b) = self.0.split();
                (Zip(a), Zip(b))
            }
        }

        /// The parallel methods (ndarray's, with its `rayon` feature).
        #[allow(non_snake_case)]
        impl<D: Dimension, $($p: NdProducer<Dim = D, Item: ZipItem> + Send),*> Zip<($($p,)*), D>
        where
            $($p::Item: Send,)*
        {
            /// [`Zip::for_each`] on rayon's threads (ndarray's `par_for_each`).
            pub fn par_for_each<F: Fn($(<$p::Item as ZipItem>::Bach),*) + Sync + Send>(self, function: F) {
                self.0.par_for_each(|$($p),*| function($($p.bach()),*))
            }
        }

        #[allow(non_snake_case)]
        impl<D: Dimension, $($p: NdProducer<Dim = D> + Send),*> rayon::iter::IntoParallelIterator for Zip<($($p,)*), D>
        where
            $($p::Item: Send,)*
        {
            type Item = ($($p::Item,)*);
            type Iter = ndarray::parallel::Parallel<ndarray::Zip<($($p,)*), D>>;
            fn into_par_iter(self) -> Self::Iter {
                self.0.into_par_iter()
            }
        }
    )*};
}

/// What a `Zip` of fewer than six producers adds: one more producer.
macro_rules! zip_and {
    ($([$($p:ident)*];)*) => {$(
        #[allow(non_snake_case)]
        impl<D: Dimension, $($p: NdProducer<Dim = D, Item: ZipItem>),*> Zip<($($p,)*), D> {
            /// `f` of each element tuple, collected into a new Bach array of the common shape
            /// (ndarray's `map_collect`), on the host.
            pub fn map_collect<R>(self, mut f: impl FnMut($(<$p::Item as ZipItem>::Bach),*) -> R) -> Array<R, D> {
                collected(self.0.map_collect(|$($p),*| f($($p.bach()),*)))
            }
            /// `f` of each element tuple, assigned into `into` (ndarray's `map_assign_into`).
            pub fn map_assign_into<R, Q: IntoNdProducer<Dim = D>>(self, into: Q, mut f: impl FnMut($(<$p::Item as ZipItem>::Bach),*) -> R)
            where
                Q::Item: AssignElem<R>,
            {
                self.0.map_assign_into(into, |$($p),*| f($($p.bach()),*))
            }
            /// `p` in lock step too; panics when its shape is not the `Zip`'s (ndarray's `and`).
            #[track_caller]
            pub fn and<P: IntoNdProducer<Dim = D>>(self, p: P) -> Zip<($($p,)* P::Output,), D> {
                Zip(self.0.and(p))
            }
            /// `p` in lock step, broadcast to the `Zip`'s shape (ndarray's `and_broadcast`).
            #[track_caller]
            pub fn and_broadcast<'a, P, D2: Dimension, Elem>(self, p: P) -> Zip<($($p,)* ndarray::ArrayView<'a, Elem, D>,), D>
            where
                P: IntoNdProducer<Dim = D2, Output = ndarray::ArrayView<'a, Elem, D2>, Item = &'a Elem>,
            {
                Zip(self.0.and_broadcast(p))
            }
        }

        #[allow(non_snake_case)]
        impl<D: Dimension, $($p: NdProducer<Dim = D, Item: ZipItem> + Send),*> Zip<($($p,)*), D>
        where
            $($p::Item: Send,)*
        {
            /// [`Zip::map_collect`] on rayon's threads (ndarray's `par_map_collect`).
            pub fn par_map_collect<R: Send>(self, f: impl Fn($(<$p::Item as ZipItem>::Bach),*) -> R + Sync + Send) -> Array<R, D> {
                collected(self.0.par_map_collect(|$($p),*| f($($p.bach()),*)))
            }
            /// A parallel fold (ndarray's `par_fold`).
            pub fn par_fold<ID, F, R, T>(self, identity: ID, fold: F, reduce: R) -> T
            where
                ID: Fn() -> T + Send + Sync + Clone,
                F: Fn(T, $(<$p::Item as ZipItem>::Bach),*) -> T + Send + Sync,
                R: Fn(T, T) -> T + Send + Sync,
                T: Send,
            {
                self.0.par_fold(identity, |acc, $($p),*| fold(acc, $($p.bach()),*), reduce)
            }
            /// [`Zip::map_assign_into`] on rayon's threads (ndarray's `par_map_assign_into`).
            pub fn par_map_assign_into<R, Q: IntoNdProducer<Dim = D>>(self, into: Q, f: impl Fn($(<$p::Item as ZipItem>::Bach),*) -> R + Sync + Send)
            where
                Q::Item: AssignElem<R> + Send,
                Q::Output: Send,
            {
                self.0.par_map_assign_into(into, |$($p),*| f($($p.bach()),*))
            }
        }
    )*};
}

zip_methods! {
    [P1];
    [P1 P2];
    [P1 P2 P3];
    [P1 P2 P3 P4];
    [P1 P2 P3 P4 P5];
    [P1 P2 P3 P4 P5 P6];
}
zip_and! {
    [P1];
    [P1 P2];
    [P1 P2 P3];
    [P1 P2 P3 P4];
    [P1 P2 P3 P4 P5];
}

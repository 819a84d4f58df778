//! `Zip`: ndarray's lock-step iteration over several producers, whose collecting methods
//! (`map_collect`, `par_map_collect`) give Bach arrays, so that `Zip::from(x.rows()).
//! map_collect(..)` fits a function that returns `Array1<f64>`. Everything else is ndarray's
//! `Zip` as it is (the same methods, bounds and closures' argument types): the wrapper only
//! hands each call on. Bach's arrays and views are producers as ndarray's are (`&a`,
//! `&mut a`, views by value, `rows()`, `lanes_mut()`...). ndarray's `azip!` keeps ndarray's
//! own `Zip`, with which it gives nothing back.

use ndarray::iter::Indices;
use ndarray::{AssignElem, Dimension, FoldWhile, IntoNdProducer, NdProducer};

use super::Array;

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
    let v = if v.is_standard_layout() { v } else { crate::host::standard_layout(v.clone()).unwrap_or(v) };
    Array::from_shared_value(v)
}

macro_rules! zip_methods {
    ($([$($p:ident)*];)*) => {$(
        #[allow(non_snake_case)]
        impl<D: Dimension, $($p: NdProducer<Dim = D>),*> Zip<($($p,)*), D> {
            /// `function` of each element tuple in lock step (ndarray's `for_each`).
            pub fn for_each<F: FnMut($($p::Item),*)>(self, function: F) {
                self.0.for_each(function)
            }
            /// Folds the element tuples into `acc` (ndarray's `fold`).
            pub fn fold<F: FnMut(Acc, $($p::Item),*) -> Acc, Acc>(self, acc: Acc, function: F) -> Acc {
                self.0.fold(acc, function)
            }
            /// [`Zip::fold`] that may stop early (ndarray's `fold_while`).
            pub fn fold_while<F: FnMut(Acc, $($p::Item),*) -> FoldWhile<Acc>, Acc>(self, acc: Acc, function: F) -> FoldWhile<Acc> {
                self.0.fold_while(acc, function)
            }
            /// Whether `predicate` holds for every element tuple (ndarray's `all`).
            pub fn all<F: FnMut($($p::Item),*) -> bool>(self, predicate: F) -> bool {
                self.0.all(predicate)
            }
            /// Whether `predicate` holds for some element tuple (ndarray's `any`).
            pub fn any<F: FnMut($($p::Item),*) -> bool>(self, predicate: F) -> bool {
                self.0.any(predicate)
            }
            /// Two halves (ndarray's `split`).
            pub fn split(self) -> (Self, Self) {
                let (a, b) = self.0.split();
                (Zip(a), Zip(b))
            }
        }

        /// The parallel methods (ndarray's, with its `rayon` feature).
        #[allow(non_snake_case)]
        impl<D: Dimension, $($p: NdProducer<Dim = D> + Send),*> Zip<($($p,)*), D>
        where
            $($p::Item: Send,)*
        {
            /// [`Zip::for_each`] on rayon's threads (ndarray's `par_for_each`).
            pub fn par_for_each<F: Fn($($p::Item),*) + Sync + Send>(self, function: F) {
                self.0.par_for_each(function)
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
        impl<D: Dimension, $($p: NdProducer<Dim = D>),*> Zip<($($p,)*), D> {
            /// `f` of each element tuple, collected into a new Bach array of the common shape
            /// (ndarray's `map_collect`), on the host.
            pub fn map_collect<R>(self, f: impl FnMut($($p::Item),*) -> R) -> Array<R, D> {
                collected(self.0.map_collect(f))
            }
            /// `f` of each element tuple, assigned into `into` (ndarray's `map_assign_into`).
            pub fn map_assign_into<R, Q: IntoNdProducer<Dim = D>>(self, into: Q, f: impl FnMut($($p::Item),*) -> R)
            where
                Q::Item: AssignElem<R>,
            {
                self.0.map_assign_into(into, f)
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
        impl<D: Dimension, $($p: NdProducer<Dim = D> + Send),*> Zip<($($p,)*), D>
        where
            $($p::Item: Send,)*
        {
            /// [`Zip::map_collect`] on rayon's threads (ndarray's `par_map_collect`).
            pub fn par_map_collect<R: Send>(self, f: impl Fn($($p::Item),*) -> R + Sync + Send) -> Array<R, D> {
                collected(self.0.par_map_collect(f))
            }
            /// A parallel fold (ndarray's `par_fold`).
            pub fn par_fold<ID, F, R, T>(self, identity: ID, fold: F, reduce: R) -> T
            where
                ID: Fn() -> T + Send + Sync + Clone,
                F: Fn(T, $($p::Item),*) -> T + Send + Sync,
                R: Fn(T, T) -> T + Send + Sync,
                T: Send,
            {
                self.0.par_fold(identity, fold, reduce)
            }
            /// [`Zip::map_assign_into`] on rayon's threads (ndarray's `par_map_assign_into`).
            pub fn par_map_assign_into<R, Q: IntoNdProducer<Dim = D>>(self, into: Q, f: impl Fn($($p::Item),*) -> R + Sync + Send)
            where
                Q::Item: AssignElem<R> + Send,
                Q::Output: Send,
            {
                self.0.par_map_assign_into(into, f)
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

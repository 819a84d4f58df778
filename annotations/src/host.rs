//! Where ndarray code that is not annotated touches an array's values: the array is evaluated
//! (planned and run as any evaluation) and the code runs on its host value, through ndarray.
//!
//! `Array<A, D>` derefs to the evaluated `ArcArray<A, D>`, so every ndarray method Bach does
//! not annotate works as in ndarray (`iter`, `fold`, `indexed_iter`, `outer_iter`,
//! `axis_iter`, `rows`, `lanes`, `windows`, `to_vec`, `as_slice`, `view`, indexing), and
//! `DerefMut` gives its mutating methods (`mapv_inplace`, `fill`, `slice_mut`, `row_mut`,
//! `iter_mut`, `a[[i, j]] = v`, `accumulate_axis_inplace`): the handle's value is made its own
//! first (copy on write: no other handle or graph node sees it change) and its node is
//! dropped, so the next annotated call works on the mutated value. Annotated methods (Bach's
//! own, `sum`, `dot`, `exp`, ...) are inherent and come first, so they stay lazy and placed.
//! The methods here that return arrays give Bach arrays, holding a host value.

use std::ops::{Deref, DerefMut};

use ndarray::{ArrayView, ArrayViewMut, Axis, Dimension, IntoNdProducer, Ix1, RemoveAxis};

use crate::array::{Array, ArrayBase, Data, DataMut, RawDataMut};

impl<S: Data, D: Dimension> Deref for ArrayBase<S, D> {
    type Target = ndarray::ArrayBase<S::Nd, D>;
    /// The evaluated value (evaluates; a failure panics at the caller's line): an array's
    /// shared value, or a view's elements (ndarray's view).
    #[track_caller]
    fn deref(&self) -> &Self::Target {
        self.evaluated()
    }
}

impl<S: Data + RawDataMut, D: Dimension> DerefMut for ArrayBase<S, D> {
    /// The value for writing: this handle's own from here on.
    #[track_caller]
    fn deref_mut(&mut self) -> &mut Self::Target {
        self.evaluated_mut()
    }
}

impl<'a, A: 'a, S: Data<Elem = A>, D: Dimension> IntoIterator for &'a ArrayBase<S, D> {
    type Item = &'a A;
    type IntoIter = ndarray::iter::Iter<'a, A, D>;
    #[track_caller]
    fn into_iter(self) -> Self::IntoIter {
        self.evaluated().iter()
    }
}

impl<'a, A: Clone + 'a, S: DataMut<Elem = A>, D: Dimension> IntoIterator for &'a mut ArrayBase<S, D> {
    type Item = &'a mut A;
    type IntoIter = ndarray::iter::IterMut<'a, A, D>;
    fn into_iter(self) -> Self::IntoIter {
        self.evaluated_view_mut().into_iter()
    }
}

/// `Zip::from(&a).and(&mut b)` over Bach arrays, as over ndarray's.
impl<'a, A: 'a, S: Data<Elem = A>, D: Dimension> IntoNdProducer for &'a ArrayBase<S, D> {
    type Item = &'a A;
    type Dim = D;
    type Output = ArrayView<'a, A, D>;
    fn into_producer(self) -> Self::Output {
        self.evaluated().view()
    }
}
impl<'a, A: Clone + 'a, S: DataMut<Elem = A>, D: Dimension> IntoNdProducer for &'a mut ArrayBase<S, D> {
    type Item = &'a mut A;
    type Dim = D;
    type Output = ArrayViewMut<'a, A, D>;
    fn into_producer(self) -> Self::Output {
        self.evaluated_view_mut()
    }
}

/// `==` compares shapes and values, as ndarray's (evaluates both).
impl<A: PartialEq, S: Data<Elem = A>, S2: Data<Elem = A>, D: Dimension, E: Dimension> PartialEq<ArrayBase<S2, E>> for ArrayBase<S, D> {
    fn eq(&self, other: &ArrayBase<S2, E>) -> bool {
        self.shape() == other.shape() && self.evaluated().iter().eq(other.evaluated().iter())
    }
}
impl<A: PartialEq, D: Dimension, S: ndarray::Data<Elem = A>, BS: Data<Elem = A>> PartialEq<ndarray::ArrayBase<S, D>> for ArrayBase<BS, D> {
    fn eq(&self, other: &ndarray::ArrayBase<S, D>) -> bool {
        self.shape() == other.shape() && self.evaluated().iter().eq(other.iter())
    }
}

/// `ndarray == bach`, as ndarray's `==`.
impl<A: PartialEq, D: Dimension, S: ndarray::Data<Elem = A>, BS: Data<Elem = A>> PartialEq<ArrayBase<BS, D>> for ndarray::ArrayBase<S, D> {
    fn eq(&self, other: &ArrayBase<BS, D>) -> bool {
        other == self
    }
}

impl<A: Eq, S: Data<Elem = A>, D: Dimension> Eq for ArrayBase<S, D> {}
/// `a == &b` and `&a == b`, as ndarray's.
impl<A: PartialEq, S: Data<Elem = A>, S2: Data<Elem = A>, D: Dimension, E: Dimension> PartialEq<&ArrayBase<S2, E>> for ArrayBase<S, D> {
    fn eq(&self, other: &&ArrayBase<S2, E>) -> bool {
        *self == **other
    }
}
impl<A: PartialEq, S: Data<Elem = A>, S2: Data<Elem = A>, D: Dimension, E: Dimension> PartialEq<ArrayBase<S2, E>> for &ArrayBase<S, D> {
    fn eq(&self, other: &ArrayBase<S2, E>) -> bool {
        **self == *other
    }
}
/// Hashes the shape and the elements, as ndarray's (evaluates).
impl<A: std::hash::Hash, S: Data<Elem = A>, D: Dimension> std::hash::Hash for ArrayBase<S, D> {
    #[track_caller]
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        self.evaluated().hash(state)
    }
}

/// `ArrayView::from(&a)`: a view of the evaluated value (what ndarray's `stack!` and
/// `concatenate!` take).
impl<'a, A, S: Data<Elem = A>, D: Dimension> From<&'a ArrayBase<S, D>> for ArrayView<'a, A, D> {
    #[track_caller]
    fn from(a: &'a ArrayBase<S, D>) -> Self {
        a.evaluated().view()
    }
}

/// `iter.collect::<Array1<_>>()` and `Array::from_iter(..)`.
impl<A: Clone> FromIterator<A> for Array<A, Ix1> {
    fn from_iter<I: IntoIterator<Item = A>>(iter: I) -> Self {
        Array::from_host(ndarray::Array1::from_iter(iter).into_shared())
    }
}

/// A Bach array into an owned ndarray array (evaluates; no copy when this handle holds the
/// only reference to the value).
impl<A: Clone, S: Data<Elem = A>, D: Dimension> From<ArrayBase<S, D>> for ndarray::Array<A, D> {
    #[track_caller]
    fn from(a: ArrayBase<S, D>) -> Self {
        a.into_nd()
    }
}
impl<A: Clone, S: Data<Elem = A>, D: Dimension> From<&ArrayBase<S, D>> for ndarray::Array<A, D> {
    #[track_caller]
    fn from(a: &ArrayBase<S, D>) -> Self {
        a.evaluated().to_owned()
    }
}
impl<A: Clone> From<Vec<A>> for Array<A, Ix1> {
    fn from(v: Vec<A>) -> Self {
        Array::from_vec(v)
    }
}

/// Reshaping, for any element type (`Clone` or not, as ndarray's).
impl<A, S: Data<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// The elements in a new shape, read in row-major order (ndarray's
    /// `into_shape_with_order`); an error when the lengths differ.
    #[track_caller]
    ///
    /// The result is of this array's storage kind: an array of an array; of a view, a view
    /// of the same elements (an error of ndarray's kind when they are not contiguous in
    /// row-major order, as ndarray's).
    pub fn into_shape_with_order<Sh: crate::array::ShapeArg>(self, shape: Sh) -> std::result::Result<ArrayBase<S, Sh::Dim>, ndarray::ShapeError> {
        let dims = shape.dims();
        self.reshape(&dims)
    }
    /// [`ArrayBase::into_shape_with_order`] (ndarray's deprecated `into_shape`).
    #[track_caller]
    pub fn into_shape<Sh: crate::array::ShapeArg>(self, shape: Sh) -> std::result::Result<ArrayBase<S, Sh::Dim>, ndarray::ShapeError> {
        self.into_shape_with_order(shape)
    }
}

/// An ndarray result as a Bach array holding its host value.
pub(crate) fn host<A: Clone, D: Dimension>(a: ndarray::Array<A, D>) -> Array<A, D> {
    Array::from_host(a.into_shared())
}

impl<A: Clone, S: Data<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// `f` of each element, into a new array (ndarray's `mapv`): on the host, with any
    /// closure (borrowing locals, returning another element type: `|x| x > 0.5` gives an
    /// `Array<bool, D>`, `|x| x as usize` a host array of `usize`). The annotated math
    /// (`x.exp()`, `&x * 2.0`) stays lazy and can run on an accelerator; a closure cannot.
    #[track_caller]
    pub fn mapv<B: Clone, F: FnMut(A) -> B>(&self, f: F) -> Array<B, D> {
        host(self.evaluated().mapv(f))
    }
    /// `f` of a reference to each element (ndarray's `map`), on the host.
    #[track_caller]
    pub fn map<'a, B: Clone, F: FnMut(&'a A) -> B>(&'a self, f: F) -> Array<B, D>
    where
        A: 'a,
    {
        host(self.evaluated().map(f))
    }
    /// [`ArrayBase::mapv`] consuming the array (ndarray's `mapv_into`).
    #[track_caller]
    pub fn mapv_into<F: FnMut(A) -> A>(self, f: F) -> Array<A, D> {
        let mut a = self.into_owned();
        a.evaluated_mut().mapv_inplace(f);
        a
    }
    /// Copy `rhs`'s values into this array, broadcasting them (ndarray's `assign`).
    #[track_caller]
    pub fn assign<R: crate::array::AssignFrom<A>>(&mut self, rhs: R)
    where
        S: DataMut,
    {
        rhs.assign_into(self.evaluated_view_mut());
    }
    /// Folds along `axis` (ndarray's `fold_axis`), on the host: a Bach array of the results.
    #[track_caller]
    pub fn fold_axis<B: Clone, F: FnMut(&B, &A) -> B>(&self, axis: Axis, init: B, fold: F) -> Array<B, D::Smaller>
    where
        D: RemoveAxis,
    {
        host(self.evaluated().fold_axis(axis, init, fold))
    }
    /// The elements at `indices` along `axis` (ndarray's `select`), on the host.
    #[track_caller]
    pub fn select(&self, axis: Axis, indices: &[usize]) -> Array<A, D>
    where
        D: RemoveAxis,
    {
        host(self.evaluated().select(axis, indices))
    }
    /// `f` of each 1-d lane along `axis` (ndarray's `map_axis`; the lanes are Bach views), on
    /// the host.
    #[track_caller]
    pub fn map_axis<'a, B: Clone, F: FnMut(crate::array::ArrayView<'a, A, Ix1>) -> B>(&'a self, axis: Axis, f: F) -> Array<B, D::Smaller>
    where
        A: 'a,
        D: RemoveAxis,
    {
        let outer = self.raw_dim().remove_axis(axis);
        let values: Vec<B> = self.lanes(axis).map(f).collect();
        host(ndarray::Array::from_shape_vec(outer, values).expect("one value per lane"))
    }
    /// [`ArrayBase::into_shape_with_order`] without consuming the array (ndarray's `to_shape`
    /// gives a view; this gives an array).
    #[track_caller]
    pub fn to_shape<Sh: crate::array::ShapeArg>(&self, shape: Sh) -> std::result::Result<Array<A, Sh::Dim>, ndarray::ShapeError> {
        self.to_owned().into_shape_with_order(shape)
    }
    /// Every element in row-major order, as a 1-d array (ndarray's `flatten`).
    #[track_caller]
    pub fn flatten(&self) -> Array<A, Ix1> {
        host(self.evaluated().flatten().into_owned())
    }
    /// The axes in the order `axes` (ndarray's `permuted_axes`), on the host.
    #[track_caller]
    pub fn permuted_axes<T: ndarray::IntoDimension<Dim = D>>(self, axes: T) -> Array<A, D> {
        host(self.evaluated().view().permuted_axes(axes).as_standard_layout().into_owned())
    }
}

#[cfg(test)]
mod tests {
    use ndarray::{s, Array, ArrayView, Axis, Dimension, IxDyn};

    /// `row_major` against ndarray's own `as_standard_layout`.
    fn same<A: Clone + PartialEq + std::fmt::Debug, D: Dimension>(v: ArrayView<'_, A, D>) {
        let ours = crate::array::layout::row_major(&v).expect("a graph element type");
        assert!(ours.is_standard_layout());
        assert_eq!(ours, v.as_standard_layout().into_owned().into_shared(), "{:?} strides {:?}", v.shape(), v.strides());
    }

    #[test]
    fn row_major_copies_any_strides_in_order_for_every_element_type() {
        let a = Array::from_shape_fn((4, 5, 6), |(i, j, k)| (i * 100 + j * 10 + k) as f64);
        same(a.view());
        same(a.t());
        same(a.slice(s![..;2, 1..4, ..;-3]));
        same(a.view().permuted_axes([1, 2, 0]));
        same(a.index_axis(Axis(2), 3));
        same(a.slice(s![.., 2.., 0]).reversed_axes());
        same(a.slice(s![..0, .., ..]));
        same(a.slice(s![1, 2, 3]));
        same(a.view().into_dyn().slice(s![.., ..;-1, 1]).into_dimensionality::<IxDyn>().unwrap());
        let f = a.mapv(|x| x as f32);
        same(f.t());
        let i = a.mapv(|x| x as i64);
        same(i.slice(s![..;-1, .., ..;2]));
        let b = a.mapv(|x| (x as i64) % 3 == 0);
        same(b.view().permuted_axes([2, 0, 1]));
    }

    #[test]
    fn row_major_is_none_for_other_element_types() {
        let a = Array::from_shape_fn((2, 3), |(i, j)| (i * 3 + j) as u8);
        assert!(crate::array::layout::row_major(&a.t()).is_none());
    }
}

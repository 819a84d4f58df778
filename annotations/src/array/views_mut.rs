//! Mutable views: `view_mut()`, `slice_mut(s![..])`, `row_mut()`, `column_mut()`,
//! `index_axis_mut()`, `slice_axis_mut()`, `axis_iter_mut()`/`outer_iter_mut()`,
//! `lanes_mut()` and `aview_mut1()` give Bach's `ArrayViewMut` (an [`ArrayBase`] tagged
//! `ViewRepr<&'a mut A>`), so that library code generic over `S: DataMut` or written against
//! `ArrayViewMut1<f64>` takes them, and a view of a mutable view (`v.view()`, `v.t()`) is
//! Bach's too.
//!
//! A mutable view is ndarray's mutable view of its parent's elements, where they are: the
//! parent is evaluated and its value made its own first (copy on write: no other handle or
//! node sees the writes), and it stays mutably borrowed for the view's lifetime. Reading it
//! through an annotated call computes with its elements at once (small) or makes a graph source
//! of them.

use ndarray::{Axis, Dimension, Ix1, IxDyn, RemoveAxis, Slice, SliceArg, SliceInfoElem};

use super::layout::{cut_host_mut, describe, fits_slice};
use super::views::Cut;
use super::{ArrayBase, ViewRepr, ViewsMut};
use bach_runtime::BachError;

/// A mutable view borrowing an array for `'a` (ndarray's `ArrayViewMut`).
pub type ArrayViewMut<'a, A, D> = ArrayBase<ViewRepr<&'a mut A>, D>;
pub type ArrayViewMut0<'a, A> = ArrayViewMut<'a, A, ndarray::Ix0>;
pub type ArrayViewMut1<'a, A> = ArrayViewMut<'a, A, Ix1>;
pub type ArrayViewMut2<'a, A> = ArrayViewMut<'a, A, ndarray::Ix2>;
pub type ArrayViewMut3<'a, A> = ArrayViewMut<'a, A, ndarray::Ix3>;
pub type ArrayViewMut4<'a, A> = ArrayViewMut<'a, A, ndarray::Ix4>;
pub type ArrayViewMut5<'a, A> = ArrayViewMut<'a, A, ndarray::Ix5>;
pub type ArrayViewMut6<'a, A> = ArrayViewMut<'a, A, ndarray::Ix6>;
pub type ArrayViewMutD<'a, A> = ArrayViewMut<'a, A, IxDyn>;

/// A Bach mutable view of ndarray's.
fn wrap<A, E>(v: ndarray::ArrayViewMut<'_, A, E>) -> ArrayViewMut<'_, A, E> {
    ArrayBase { repr: v }
}

impl<A, S: ViewsMut<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// The elements for a mutable view (evaluated and made this array's own), cut by `f`.
    #[track_caller]
    fn mut_with<E: Dimension>(&mut self, f: impl FnOnce(ndarray::ArrayViewMut<'_, A, D>) -> ndarray::ArrayViewMut<'_, A, E>) -> ArrayViewMut<'_, A, E> {
        wrap(f(self.evaluated_view_mut()))
    }

    /// A mutable view of the whole array (ndarray's `view_mut`; evaluates).
    #[track_caller]
    pub fn view_mut(&mut self) -> ArrayViewMut<'_, A, D> {
        self.mut_with(|t| t)
    }
    /// A mutable view of `info` (ndarray's `slice_mut`); panics at this line when the slice
    /// does not fit the shape, as ndarray's does.
    #[track_caller]
    pub fn slice_mut<I: SliceArg<D>>(&mut self, info: I) -> ArrayViewMut<'_, A, I::OutDim> {
        // Cut and checked in one pass where it can be (`cut_host_mut`); else checked, to say
        // why not, and cut by ndarray.
        let v = self.evaluated_view_mut();
        match cut_host_mut(v, info.as_ref()) {
            Ok(cut) => wrap(cut),
            Err(v) => {
                if let Err(why) = fits_slice(v.shape(), info.as_ref()) {
                    panic!("{}", BachError::invalid("slice_mut", format!("{} of shape {:?}: {why}", describe(info.as_ref()), v.shape())));
                }
                wrap(v.slice_move(info))
            }
        }
    }
    /// A mutable view of the slice `slice` of axis `axis` (ndarray's `slice_axis_mut`).
    #[track_caller]
    pub fn slice_axis_mut(&mut self, axis: Axis, slice: Slice) -> ArrayViewMut<'_, A, D> {
        let elems: Vec<SliceInfoElem> = (0..self.ndim()).map(|k| if k == axis.index() { SliceInfoElem::from(slice) } else { SliceInfoElem::from(..) }).collect();
        if let Err(why) = fits_slice(self.shape(), &elems) {
            panic!("{}", BachError::invalid("slice_axis_mut", format!("{} of shape {:?}: {why}", describe(&elems), self.shape())));
        }
        self.mut_with(move |t| t.slice_axis_move(axis, slice))
    }
    /// A mutable view of the subview at `index` along `axis` (ndarray's `index_axis_mut`).
    #[track_caller]
    pub fn index_axis_mut(&mut self, axis: Axis, index: usize) -> ArrayViewMut<'_, A, D::Smaller>
    where
        D: RemoveAxis,
    {
        if axis.index() >= self.ndim() || index >= self.shape()[axis.index()] {
            panic!("{}", BachError::invalid("index_axis_mut", format!("index {index} of axis {} of shape {:?}", axis.index(), self.shape())));
        }
        self.mut_with(move |t| t.index_axis_move(axis, index))
    }
    /// Row `index` of a matrix, a mutable view (ndarray's `row_mut`).
    #[track_caller]
    pub fn row_mut(&mut self, index: usize) -> ArrayViewMut<'_, A, D::Smaller> {
        self.lane_mut("row_mut", 0, index)
    }
    /// Column `index` of a matrix, a mutable view (ndarray's `column_mut`).
    #[track_caller]
    pub fn column_mut(&mut self, index: usize) -> ArrayViewMut<'_, A, D::Smaller> {
        self.lane_mut("column_mut", 1, index)
    }
    #[track_caller]
    fn lane_mut(&mut self, what: &str, axis: usize, index: usize) -> ArrayViewMut<'_, A, D::Smaller> {
        if self.ndim() != 2 || index >= self.shape()[axis] {
            panic!("{}", BachError::invalid(what, format!("{what} {index} of an array of shape {:?} (a lane of a 2-d array)", self.shape())));
        }
        let cut = Cut::Index(Axis(axis), index);
        self.mut_with(move |t| cut.apply(t.into_dyn()).into_dimensionality::<D::Smaller>().expect("a 1-d lane"))
    }
    /// Mutable views of the subviews along `axis` (ndarray's `axis_iter_mut`).
    #[track_caller]
    pub fn axis_iter_mut(&mut self, axis: Axis) -> AxisViewsMut<'_, A, D::Smaller>
    where
        D: RemoveAxis,
    {
        if axis.index() >= self.ndim() {
            panic!("{}", BachError::invalid("axis_iter_mut", format!("axis {} of an array of shape {:?}", axis.index(), self.shape())));
        }
        let mut v = self.evaluated_view_mut();
        let it = v.axis_iter_mut(axis);
        // ndarray's `AxisIterMut` holds the elements' address, shape and strides by value, not
        // a reference to the local view: it lives as long as the elements' borrow.
        AxisViewsMut(crate::array::same_type(it))
    }
    /// [`ArrayBase::axis_iter_mut`] along the first axis (ndarray's `outer_iter_mut`).
    #[track_caller]
    pub fn outer_iter_mut(&mut self) -> AxisViewsMut<'_, A, D::Smaller>
    where
        D: RemoveAxis,
    {
        self.axis_iter_mut(Axis(0))
    }
    /// Mutable views of the 1-d lanes along `axis` (ndarray's `lanes_mut`), in row-major
    /// order of the other axes.
    #[track_caller]
    pub fn lanes_mut(&mut self, axis: Axis) -> LanesMut<'_, A, D> {
        if axis.index() >= self.ndim() {
            panic!("{}", BachError::invalid("lanes_mut", format!("axis {} of an array of shape {:?}", axis.index(), self.shape())));
        }
        LanesMut::new(self.evaluated_view_mut(), axis)
    }
    /// The rows, mutable: lanes along the last axis (ndarray's `rows_mut`).
    #[track_caller]
    pub fn rows_mut(&mut self) -> LanesMut<'_, A, D> {
        let last = self.ndim().saturating_sub(1);
        self.lanes_mut(Axis(last))
    }
    /// The columns, mutable: lanes along the first axis (ndarray's `columns_mut`).
    #[track_caller]
    pub fn columns_mut(&mut self) -> LanesMut<'_, A, D> {
        self.lanes_mut(Axis(0))
    }
}

impl<'a, A, D: Dimension> ArrayViewMut<'a, A, D> {
    /// The view as ndarray's, over the parent's elements for all of `'a`.
    pub fn into_nd_mut(self) -> ndarray::ArrayViewMut<'a, A, D> {
        self.repr
    }
    /// The view split in two mutable views along `axis` before `index` (ndarray's
    /// `split_at`).
    #[track_caller]
    pub fn split_at(self, axis: Axis, index: usize) -> (Self, Self) {
        let n = self.shape().get(axis.index()).copied().unwrap_or(0);
        if index > n {
            panic!("{}", BachError::invalid("split_at", format!("index {index} of axis {} of shape {:?}", axis.index(), self.shape())));
        }
        let (l, r) = self.repr.split_at(axis, index);
        (wrap(l), wrap(r))
    }
    /// The same view, borrowed for a shorter time (ndarray's `reborrow`).
    pub fn reborrow<'b>(&'b mut self) -> ArrayViewMut<'b, A, D> {
        wrap(self.repr.view_mut())
    }
    /// A mutable view of the elements at `ptr` in `shape` (ndarray's
    /// `ArrayViewMut::from_shape_ptr`).
    ///
    /// # Safety
    /// As ndarray's: every element the shape and strides reach is valid for `'a`, reached
    /// once, and used through this view alone while it lives.
    pub unsafe fn from_shape_ptr<Sh: Into<ndarray::StrideShape<D>>>(shape: Sh, ptr: *mut A) -> Self {
        // SAFETY: the caller's promise, as ndarray's.
        wrap(unsafe { ndarray::ArrayViewMut::from_shape_ptr(shape, ptr) })
    }
}

/// `for x in view_mut`: references into the parent's elements, as ndarray's.
impl<'a, A, D: Dimension> IntoIterator for ArrayViewMut<'a, A, D> {
    type Item = &'a mut A;
    type IntoIter = ndarray::iter::IterMut<'a, A, D>;
    fn into_iter(self) -> Self::IntoIter {
        self.repr.into_iter()
    }
}
/// `Zip::from(view_mut)` and `azip!` over a mutable view by value.
impl<'a, A, D: Dimension> ndarray::IntoNdProducer for ArrayViewMut<'a, A, D> {
    type Item = &'a mut A;
    type Dim = D;
    type Output = ndarray::ArrayViewMut<'a, A, D>;
    fn into_producer(self) -> Self::Output {
        self.repr
    }
}

/// A mutable view of `xs` (ndarray's `aview_mut1`).
pub fn aview_mut1<A>(xs: &mut [A]) -> ArrayViewMut1<'_, A> {
    wrap(ndarray::ArrayViewMut1::from(xs))
}
impl<'a, A> From<&'a mut [A]> for ArrayViewMut1<'a, A> {
    fn from(xs: &'a mut [A]) -> Self {
        aview_mut1(xs)
    }
}
/// An ndarray mutable view as a Bach one.
impl<'a, A, D: Dimension> From<ndarray::ArrayViewMut<'a, A, D>> for ArrayViewMut<'a, A, D> {
    fn from(v: ndarray::ArrayViewMut<'a, A, D>) -> Self {
        wrap(v)
    }
}

/// The mutable subviews of an array along one axis ([`ArrayBase::axis_iter_mut`]): Bach
/// mutable views.
pub struct AxisViewsMut<'a, A, E>(ndarray::iter::AxisIterMut<'a, A, E>);
impl<'a, A, E: Dimension> Iterator for AxisViewsMut<'a, A, E> {
    type Item = ArrayViewMut<'a, A, E>;
    fn next(&mut self) -> Option<Self::Item> {
        self.0.next().map(wrap)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        self.0.size_hint()
    }
}
impl<A, E: Dimension> ExactSizeIterator for AxisViewsMut<'_, A, E> {}
impl<A, E: Dimension> DoubleEndedIterator for AxisViewsMut<'_, A, E> {
    fn next_back(&mut self) -> Option<Self::Item> {
        self.0.next_back().map(wrap)
    }
}
/// `Zip::from(a.outer_iter_mut())`, as over ndarray's `AxisIterMut` (its items ndarray's views).
impl<'a, A, E: Dimension> ndarray::IntoNdProducer for AxisViewsMut<'a, A, E> {
    type Item = ndarray::ArrayViewMut<'a, A, E>;
    type Dim = Ix1;
    type Output = ndarray::iter::AxisIterMut<'a, A, E>;
    fn into_producer(self) -> Self::Output {
        self.0
    }
}

/// The mutable 1-d lanes of an array ([`ArrayBase::lanes_mut`], `rows_mut`, `columns_mut`):
/// an iterator of Bach mutable views, and a producer for `Zip` as ndarray's.
pub struct LanesMut<'a, A, D: Dimension>(Lanes<'a, A, D>);
enum Lanes<'a, A, D: Dimension> {
    Producer(ndarray::iter::LanesMut<'a, A, D::Smaller>),
    Iter(ndarray::iter::LanesIterMut<'a, A, D::Smaller>),
    Done,
}
impl<'a, A, D: Dimension> LanesMut<'a, A, D> {
    fn new(v: ndarray::ArrayViewMut<'a, A, D>, axis: Axis) -> Self {
        LanesMut(Lanes::Producer(lanes_of(v, axis)))
    }
    fn iter(&mut self) -> &mut ndarray::iter::LanesIterMut<'a, A, D::Smaller> {
        if let Lanes::Producer(_) = self.0 {
            let Lanes::Producer(p) = std::mem::replace(&mut self.0, Lanes::Done) else { unreachable!() };
            self.0 = Lanes::Iter(p.into_iter());
        }
        match &mut self.0 {
            Lanes::Iter(it) => it,
            _ => unreachable!("made above"),
        }
    }
}

/// ndarray's mutable lanes of `v` along `axis`, for all of `'a`.
fn lanes_of<'a, A, D: Dimension>(mut v: ndarray::ArrayViewMut<'a, A, D>, axis: Axis) -> ndarray::iter::LanesMut<'a, A, D::Smaller> {
    let lanes = v.lanes_mut(axis);
    // ndarray's `LanesMut` holds the elements' address, shape and strides by value, not a
    // reference to the local view: it lives as long as the elements' borrow, `'a`.
    crate::array::same_type(lanes)
}
impl<'a, A, D: Dimension> Iterator for LanesMut<'a, A, D> {
    type Item = ArrayViewMut1<'a, A>;
    fn next(&mut self) -> Option<Self::Item> {
        self.iter().next().map(wrap)
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        match &self.0 {
            Lanes::Producer(p) => {
                let n = ndarray::NdProducer::raw_dim(p).size();
                (n, Some(n))
            }
            Lanes::Iter(it) => it.size_hint(),
            Lanes::Done => (0, Some(0)),
        }
    }
}
impl<A, D: Dimension> ExactSizeIterator for LanesMut<'_, A, D> {}
/// `Zip::from(a.rows_mut())`, as over ndarray's `LanesMut` (its items ndarray's views; the
/// lanes not yet iterated).
impl<'a, A, D: Dimension> ndarray::IntoNdProducer for LanesMut<'a, A, D> {
    type Item = ndarray::ArrayViewMut1<'a, A>;
    type Dim = D::Smaller;
    type Output = ndarray::iter::LanesMut<'a, A, D::Smaller>;
    fn into_producer(self) -> Self::Output {
        match self.0 {
            Lanes::Producer(p) => p,
            _ => panic!("bach: lanes already iterated cannot be zipped"),
        }
    }
}

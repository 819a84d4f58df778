//! Views: `view()`, `t()`, `slice(s![..])`, `row()`, `column()`, `index_axis()`,
//! `slice_axis()`, `outer_iter()`, `axis_iter()`; the owned forms (`to_owned`, `into_owned`,
//! `into_shared`, `as_standard_layout`); ndarray's free constructors (`arr1`, `aview1`...);
//! and the way out to ndarray (`as_nd`, `to_nd`, `From`).
//!
//! A view is an [`ArrayBase`] tagged `ViewRepr<&'a A>`, whose representation is a [`View`]:
//! of an array holding its value on the host, ndarray's view of the elements where they are
//! (no copy, no node; `Copy` as ndarray's views are); of a lazy array, a lazy op (`slice`,
//! `transpose`: a graph node, planned and placed like any other) held by the parent for as
//! long as it lives, so that annotated calls on the view stay lazy, and what reads its
//! elements (`for x in view`, indexing) evaluates it there.

use std::sync::{Arc, Mutex, OnceLock};

use bach_runtime::{BachError, Result};
use ndarray::{Axis, Dimension, Ix1, Ix2, IxDyn, RemoveAxis, Slice, SliceArg, SliceInfoElem};

use super::layout::{cut_host, describe, fits_slice, slice_op, sliced_shape, transpose_op};
use super::{check_ndim, ArcArray, ArrayBase, ArrayView, CowArray, Data, Handle, Parts};
use crate::array::{Array, Array0, Array1, Array2};

/// Slice elements, held inline up to six (a view is made in a loop over rows: no allocation).
#[derive(Clone, Debug)]
#[doc(hidden)]
pub enum Elems {
    Inline(u8, [SliceInfoElem; 6]),
    Heap(Arc<[SliceInfoElem]>),
}
impl Elems {
    pub(super) fn of(e: &[SliceInfoElem]) -> Elems {
        if e.len() <= 6 {
            let mut inline = [SliceInfoElem::NewAxis; 6];
            inline[..e.len()].copy_from_slice(e);
            Elems::Inline(e.len() as u8, inline)
        } else {
            Elems::Heap(e.into())
        }
    }
    pub(super) fn as_slice(&self) -> &[SliceInfoElem] {
        match self {
            Elems::Inline(n, e) => &e[..*n as usize],
            Elems::Heap(e) => e,
        }
    }
}

/// One step from an array to a view of it.
#[derive(Clone, Debug)]
#[doc(hidden)]
pub enum Cut {
    Elems(Elems),
    Index(Axis, usize),
    Reverse,
    Swap(usize, usize),
}

impl Cut {
    pub(super) fn apply<S: ndarray::RawData>(&self, a: ndarray::ArrayBase<S, IxDyn>) -> ndarray::ArrayBase<S, IxDyn> {
        match self {
            Cut::Elems(e) => a.slice_move(e.as_slice()),
            Cut::Index(axis, i) => a.index_axis_move(*axis, *i),
            Cut::Reverse => a.reversed_axes(),
            Cut::Swap(x, y) => {
                let mut a = a;
                a.swap_axes(*x, *y);
                a
            }
        }
    }
    /// The same cut as a graph op's slice elements (`None`: the transpose).
    fn elems(&self, ndim: usize) -> Option<Vec<SliceInfoElem>> {
        match self {
            Cut::Elems(e) => Some(e.as_slice().to_vec()),
            Cut::Index(axis, i) => Some((0..ndim).map(|k| if k == axis.index() { SliceInfoElem::Index(*i as isize) } else { SliceInfoElem::from(..) }).collect()),
            Cut::Reverse | Cut::Swap(..) => None,
        }
    }
}

/// A view's representation: ndarray's view of elements on the host, or a lazy cut of a lazy
/// array that the array keeps (in its [`Kept`]) for as long as it lives.
#[doc(hidden)]
pub enum View<'a, A, D> {
    Host(ndarray::ArrayView<'a, A, D>),
    Lazy(Held<'a, A, D>),
}
impl<A, D: Clone> Clone for View<'_, A, D> {
    fn clone(&self) -> Self {
        match self {
            View::Host(v) => View::Host(v.clone()),
            View::Lazy(l) => View::Lazy(*l),
        }
    }
}
impl<A, D: Copy> Copy for View<'_, A, D> {}

/// A lazy view its parent keeps, lent for `'a` (a pointer: a view's dimension type need not
/// outlive `'a`, as ndarray's need not).
#[doc(hidden)]
pub struct Held<'a, A, D>(*const LazyView<'a, A, D>, std::marker::PhantomData<&'a ()>);
impl<A, D> Clone for Held<'_, A, D> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A, D> Copy for Held<'_, A, D> {}
// SAFETY: a shared reference to a `LazyView` (an array handle and a view of its elements).
unsafe impl<A: Send + Sync, D: Send + Sync> Send for Held<'_, A, D> {}
unsafe impl<A: Send + Sync, D: Send + Sync> Sync for Held<'_, A, D> {}
impl<'a, A, D> Held<'a, A, D> {
    fn new(l: *const LazyView<'a, A, D>) -> Self {
        Held(l, std::marker::PhantomData)
    }
    fn get(&self) -> &LazyView<'a, A, D> {
        // SAFETY: kept by the parent (`Kept`) for longer than the borrow `'a`, which outlives
        // this borrow of the view.
        unsafe { &*self.0 }
    }
}

/// A view of a lazy array: the array cut by a lazy op, and its elements once evaluated.
#[doc(hidden)]
pub struct LazyView<'a, A, D> {
    array: Array<A, D>,
    nd: OnceLock<ndarray::ArrayView<'a, A, D>>,
}

impl<'a, A, D: Dimension> LazyView<'a, A, D> {
    /// The elements (evaluates the view's node once; they live in its handle).
    #[track_caller]
    fn nd(&self) -> &ndarray::ArrayView<'a, A, D> {
        // SAFETY: the values live in this view's own handle, which its parent keeps (never
        // written) for longer than `'a`.
        self.nd.get_or_init(|| unsafe { self.array.repr.evaluated().raw_view().deref_into_view() })
    }
}

/// The lazy views an array keeps while it lives (freed with it, or when it is next written:
/// no view of it lives then). Type-erased: a view may have another dimension type. Empty
/// (one null pointer) until the array's first lazy view.
#[derive(Default)]
#[doc(hidden)]
pub struct Kept(OnceLock<Box<KeptViews>>);
#[derive(Default)]
#[doc(hidden)]
pub struct KeptViews {
    views: Mutex<Vec<KeptBox>>,
    /// The whole-array view, made once (`view()` in a loop keeps one).
    whole: OnceLock<usize>,
}
/// A box given up to [`Kept::keep`] (its address) and the function that frees it.
type KeptBox = (usize, unsafe fn(usize));
/// Frees a `Box<T>` given up to [`Kept::keep`].
unsafe fn free<T>(p: usize) {
    // SAFETY: `p` is a `Box<T>` given up by `Kept::keep`, freed once.
    drop(unsafe { Box::from_raw(p as *mut T) })
}
impl Kept {
    /// Whether a lazy view has been kept.
    pub(super) fn any(&self) -> bool {
        self.0.get().is_some()
    }
    fn views(&self) -> &KeptViews {
        self.0.get_or_init(Box::default)
    }
    /// Keeps `t` for as long as `self` lives (until it is dropped or replaced, which takes
    /// `&mut self` or its owner by value: no borrow of the owner outlives it).
    fn keep<T>(&self, t: T) -> *const T {
        let p = Box::into_raw(Box::new(t));
        self.views().views.lock().unwrap_or_else(|e| e.into_inner()).push((p as usize, free::<T>));
        p
    }
}
impl Drop for KeptViews {
    fn drop(&mut self) {
        for (p, free) in self.views.get_mut().unwrap_or_else(|e| e.into_inner()).drain(..) {
            // SAFETY: see `Kept::keep`; nothing borrows the owner any more.
            unsafe { free(p) }
        }
    }
}

impl<'a, A, D: Dimension> View<'a, A, D> {
    pub(super) fn parts(&self) -> Parts<'_, A, D> {
        match self {
            View::Host(v) => Parts::Host(v.view()),
            View::Lazy(l) => Parts::Handle(&l.get().array.repr),
        }
    }
    pub(super) fn shape(&self) -> &[usize] {
        match self {
            View::Host(v) => v.shape(),
            View::Lazy(l) => l.get().array.shape(),
        }
    }
    /// The elements on the host (a lazy view is evaluated once).
    #[track_caller]
    pub(super) fn nd(&self) -> &ndarray::ArrayView<'a, A, D> {
        match self {
            View::Host(v) => v,
            View::Lazy(l) => l.get().nd(),
        }
    }
    /// The elements on the host, for all of `'a`.
    #[track_caller]
    pub(super) fn into_nd(self) -> ndarray::ArrayView<'a, A, D> {
        match self {
            View::Host(v) => v,
            View::Lazy(l) => l.get().nd().clone(),
        }
    }
    /// The view cut by `cut` (`slice_move`, `reversed_axes` of a view).
    pub(super) fn cut_move<E: Dimension>(self, cut: &Cut) -> Result<View<'a, A, E>> {
        match self {
            View::Host(v) => Ok(View::Host(host_cut(v, cut)?)),
            // SAFETY: the lazy view's handle is kept by its parent for longer than `'a`.
            View::Lazy(l) => unsafe { l.get().array.repr.view_cut_for(cut.clone(), |v| host_cut(v, cut).expect("a cut of the checked shape")) },
        }
    }
    /// The view with dimension type `E` (checked by the caller).
    pub(super) fn into_dimensionality<E: Dimension>(self) -> Result<View<'a, A, E>> {
        match self {
            View::Host(v) => Ok(View::Host(v.into_dimensionality::<E>().map_err(|e| BachError::shape("into_dimensionality", e.to_string()))?)),
            View::Lazy(l) => {
                let l = l.get();
                let array = Array::of_handle(l.array.repr.clone().into_dimensionality::<E>()?);
                Ok(View::Lazy(Held::new(l.array.repr.views.keep(LazyView { array, nd: OnceLock::new() }))))
            }
        }
    }
}

/// Elements cut by `cut`, of dimension type `E`.
fn host_cut<'a, A, D: Dimension, E: Dimension>(v: ndarray::ArrayView<'a, A, D>, cut: &Cut) -> Result<ndarray::ArrayView<'a, A, E>> {
    let c = cut.apply(v.into_dyn());
    check_ndim::<E>("view", c.shape())?;
    c.into_dimensionality::<E>().map_err(|e| BachError::shape("view", e.to_string()))
}

impl<A, D: Dimension> Handle<A, D> {
    /// A view of this array's elements cut by `cut`: of a host value, its elements where they
    /// are (`host` cuts them: ndarray's own method on the static dimension types, the
    /// small-array path); of a large array with a node, a lazy op (so plans keep their
    /// pieces and their accelerator), kept by this handle.
    pub(super) fn view_cut<'h, E: Dimension>(&'h self, cut: Cut, host: impl FnOnce(ndarray::ArrayView<'h, A, D>) -> ndarray::ArrayView<'h, A, E>) -> Result<View<'h, A, E>> {
        // SAFETY: `self` is borrowed for `'h`.
        unsafe { self.view_cut_for(cut, host) }
    }
    /// [`Handle::view_cut`] for `'h`.
    ///
    /// # Safety
    /// `self` lives, and is neither moved nor written, for `'h`.
    unsafe fn view_cut_for<'h, E: Dimension>(&self, cut: Cut, host: impl FnOnce(ndarray::ArrayView<'h, A, D>) -> ndarray::ArrayView<'h, A, E>) -> Result<View<'h, A, E>> {
        let on_host = self.host_for_views();
        if let Some(v) = on_host {
            // SAFETY: the caller's promise; the value's buffer is this handle's.
            return Ok(View::Host(host(unsafe { v.raw_view().deref_into_view() })));
        }
        let array = Array::<A, E>::of_handle(self.cut(&cut)?);
        Ok(View::Lazy(Held::new(self.views.keep(LazyView { array, nd: OnceLock::new() }))))
    }
    /// The host value views see where it is: a value with no node, or a small one (a large
    /// array with a node is cut by a lazy op, so plans keep their pieces and accelerator).
    fn host_for_views(&self) -> Option<&ndarray::ArcArray<A, D>> {
        self.value_ref().filter(|_| self.node().is_none() || self.small_host().is_some())
    }
    /// A view of the whole array: its elements, or of a lazy array a view kept once.
    fn whole_view(&self) -> View<'_, A, D> {
        let on_host = self.host_for_views();
        if let Some(v) = on_host {
            return View::Host(v.view());
        }
        let p = *self.views.views().whole.get_or_init(|| self.views.keep(LazyView::<'_, A, D> { array: Array::of_handle(self.clone()), nd: OnceLock::new() }) as usize);
        // `whole` is the address of a `LazyView<A, D>` this handle keeps (of this dimension
        // type: made here), alive while `self` is borrowed.
        View::Lazy(Held::new(p as *const LazyView<'_, A, D>))
    }

    /// The array `cut` of this one, a new handle: sharing this array's host buffer when it
    /// has one, else a lazy op of its node.
    pub(super) fn cut<E: Dimension>(&self, cut: &Cut) -> Result<Handle<A, E>> {
        let host = self.host_for_views();
        if let Some(v) = host {
            let v = cut.apply(v.clone().into_dyn());
            check_ndim::<E>("view", v.shape())?;
            let v = v.into_dimensionality::<E>().map_err(|e| BachError::shape("view", e.to_string()))?;
            return Ok(Handle::new(None, Some(v), Some(self.home()), self.read));
        }
        let lazy = self.node().expect("an array holds a node or a value");
        let shape = &lazy.meta().shape;
        let op = match cut.elems(shape.len()) {
            Some(elems) => {
                let out = sliced_shape(shape, &elems).map_err(|why| BachError::invalid("slice", format!("{} of shape {:?}: {why}", describe(&elems), shape)))?;
                slice_op(elems, out)
            }
            None if matches!(cut, Cut::Reverse) => transpose_op(),
            None => unreachable!("swapped axes are made on the host value (`swap_axes` evaluates)"),
        };
        let node = op.call(&[lazy])?;
        check_ndim::<E>(op.name(), &node.meta().shape)?;
        Ok(Handle::new(Some(node), None, None, self.read))
    }
}

impl<A, S: Data<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// The view `cut` of this array (`host` cuts elements on the host).
    fn view_with<E: Dimension>(&self, cut: Cut, host: impl for<'h> FnOnce(ndarray::ArrayView<'h, A, D>) -> ndarray::ArrayView<'h, A, E>) -> Result<ArrayView<'_, A, E>> {
        let repr = match self.parts() {
            Parts::Handle(h) => h.view_cut(cut, host)?,
            Parts::Host(v) => View::Host(host(v)),
        };
        Ok(ArrayBase { repr })
    }
    /// [`Self::view_with`] of a cut made in dynamic dimensions.
    fn view_cut<E: Dimension>(&self, cut: Cut) -> Result<ArrayView<'_, A, E>> {
        let c = cut.clone();
        if let Parts::Host(v) = self.parts() {
            return Ok(ArrayBase { repr: View::Host(host_cut(v, &c)?) });
        }
        self.view_with(cut, move |v| host_cut(v, &c).expect("a cut of the checked shape"))
    }

    /// A view of the whole array (ndarray's `view`): lazy when the array is.
    pub fn view(&self) -> ArrayView<'_, A, D> {
        let repr = match self.parts() {
            Parts::Handle(h) => h.whole_view(),
            Parts::Host(v) => View::Host(v),
        };
        ArrayBase { repr }
    }
    /// The diagonal (`a[[i, i, .., i]]`), a view of the evaluated value (ndarray's `diag`).
    #[track_caller]
    pub fn diag(&self) -> ArrayView<'_, A, ndarray::Ix1> {
        ArrayView::detached(self.evaluated().diag())
    }
    /// The array seen in the shape `dim` (ndarray's `broadcast`): a view of the evaluated
    /// value; `None` when the shapes do not broadcast.
    #[track_caller]
    pub fn broadcast<E: ndarray::IntoDimension>(&self, dim: E) -> Option<ArrayView<'_, A, E::Dim>> {
        self.evaluated().broadcast(dim).map(ArrayView::detached)
    }
    /// The transpose, a view (ndarray's `t`): shares the buffer of a host value; of a lazy
    /// array, a lazy op (a copy in standard layout when evaluated).
    pub fn t(&self) -> ArrayView<'_, A, D> {
        if let Parts::Host(v) = self.parts() {
            return ArrayBase { repr: View::Host(v.reversed_axes()) };
        }
        self.view_with(Cut::Reverse, |v| v.reversed_axes()).expect("every array has a transpose")
    }
    /// The axes reversed (ndarray's `reversed_axes`; the same as [`ArrayBase::t`]).
    pub fn reversed_axes(self) -> ArrayBase<S, D> {
        crate::array::or_panic(self.cut_move(Cut::Reverse))
    }

    /// ndarray's `slice`: `x.slice(s![1..5, ..])`, `s![.., 2]` (an index drops its axis),
    /// `s![..;2, -3..]` (steps; negative indices count from the end), `s![.., NewAxis]`. A
    /// view: of a host value it shares the buffer; of a lazy array it is a lazy op. A slice
    /// that does not fit the shape panics at this line with the reason, as ndarray's does;
    /// [`ArrayBase::try_slice`] returns it as an error.
    #[track_caller]
    pub fn slice<I: SliceArg<D>>(&self, info: I) -> ArrayView<'_, A, I::OutDim> {
        crate::array::or_panic(self.try_slice(info))
    }
    /// [`ArrayBase::slice`], with a slice that does not fit the shape as an error.
    pub fn try_slice<I: SliceArg<D>>(&self, info: I) -> Result<ArrayView<'_, A, I::OutDim>> {
        let elems = info.as_ref();
        // Elements on the host (a view's, or an array's value that views see): cut at once
        // (checked in the same pass), with no cut recorded.
        let host = match self.parts() {
            Parts::Host(v) => Some(v),
            Parts::Handle(h) => h.host_for_views().map(|v| v.view()),
        };
        if let Some(c) = host.clone().and_then(|v| cut_host(v, elems)) {
            return Ok(ArrayBase { repr: View::Host(c) });
        }
        fits_slice(self.shape(), elems).map_err(|why| BachError::invalid("slice", format!("{} of shape {:?}: {why}", describe(elems), self.shape())))?;
        if let Some(v) = host {
            return Ok(ArrayBase { repr: View::Host(v.slice_move(info)) });
        }
        let cut = Cut::Elems(Elems::of(elems));
        self.view_with(cut, move |v| v.slice_move(info))
    }
    /// `self` cut by `cut`, of the same storage kind: an array stays an array (sharing the
    /// buffer until written), a view a view of the same parent, and a mutable view keeps
    /// writing back into its parent.
    fn cut_move<E: Dimension>(self, cut: Cut) -> Result<ArrayBase<S, E>> {
        Ok(ArrayBase { repr: S::cut_repr(self.repr, &cut)? })
    }
    /// The elements reshaped to `dims` in row-major order, of the same storage kind (see
    /// `into_shape_with_order`).
    #[track_caller]
    pub(crate) fn reshape<E: Dimension>(self, dims: &[usize]) -> std::result::Result<ArrayBase<S, E>, ndarray::ShapeError> {
        Ok(ArrayBase { repr: S::reshape_repr(self.repr, dims)? })
    }
    /// [`ArrayBase::slice`] consuming `self`, of the same storage kind (ndarray's
    /// `slice_move`).
    #[track_caller]
    pub fn slice_move<I: SliceArg<D>>(self, info: I) -> ArrayBase<S, I::OutDim> {
        let elems = info.as_ref().to_vec();
        if let Err(why) = fits_slice(self.shape(), &elems) {
            panic!("{}", BachError::invalid("slice_move", format!("{} of shape {:?}: {why}", describe(&elems), self.shape())));
        }
        crate::array::or_panic(self.cut_move(Cut::Elems(Elems::of(&elems))))
    }
    /// [`ArrayBase::index_axis`] consuming `self`, of the same storage kind (ndarray's
    /// `index_axis_move`).
    #[track_caller]
    pub fn index_axis_move(self, axis: Axis, index: usize) -> ArrayBase<S, D::Smaller>
    where
        D: RemoveAxis,
    {
        if axis.index() >= self.ndim() || index >= self.shape()[axis.index()] {
            panic!("{}", BachError::invalid("index_axis_move", format!("index {index} of axis {} of shape {:?}", axis.index(), self.shape())));
        }
        crate::array::or_panic(self.cut_move(Cut::Index(axis, index)))
    }
    /// Slices in place, keeping every axis: an index leaves its axis of length 1 (ndarray's
    /// `slice_collapse`; `NewAxis` panics, as ndarray's).
    #[track_caller]
    pub fn slice_collapse<I: SliceArg<D>>(&mut self, info: I) {
        let elems = info.as_ref();
        if elems.iter().any(|e| matches!(e, SliceInfoElem::NewAxis)) {
            panic!("{}", BachError::invalid("slice_collapse", "NewAxis cannot be collapsed (as ndarray)"));
        }
        let elems: Vec<SliceInfoElem> = elems
            .iter()
            .zip(self.shape())
            .map(|(e, &len)| match *e {
                SliceInfoElem::Index(i) => {
                    let i = if i < 0 { i + len as isize } else { i };
                    SliceInfoElem::Slice { start: i, end: Some(i + 1), step: 1 }
                }
                other => other,
            })
            .collect();
        self.collapse_to(elems, "slice_collapse");
    }
    /// Axis `axis` narrowed to the one element `index` (ndarray's `collapse_axis`).
    #[track_caller]
    pub fn collapse_axis(&mut self, axis: Axis, index: usize) {
        let k = axis.index();
        let elems: Vec<SliceInfoElem> = (0..self.ndim())
            .map(|j| if j == k { SliceInfoElem::Slice { start: index as isize, end: Some(index as isize + 1), step: 1 } } else { SliceInfoElem::from(..) })
            .collect();
        if k >= self.ndim() || index >= self.shape()[k] {
            panic!("{}", BachError::invalid("collapse_axis", format!("index {index} of axis {k} of shape {:?}", self.shape())));
        }
        self.collapse_to(elems, "collapse_axis");
    }
    #[track_caller]
    fn collapse_to(&mut self, elems: Vec<SliceInfoElem>, what: &str) {
        if let Err(why) = fits_slice(self.shape(), &elems) {
            panic!("{}", BachError::invalid(what, format!("{} of shape {:?}: {why}", describe(&elems), self.shape())));
        }
        let this = ArrayBase::<S, D> { repr: S::take_repr(&mut self.repr) };
        *self = crate::array::or_panic(this.cut_move(Cut::Elems(Elems::of(&elems))));
    }
    /// The slice `slice` of axis `axis`, a view of the same dimension (ndarray's
    /// `slice_axis`).
    #[track_caller]
    pub fn slice_axis(&self, axis: Axis, slice: Slice) -> ArrayView<'_, A, D> {
        let elems: Vec<SliceInfoElem> = (0..self.ndim()).map(|k| if k == axis.index() { SliceInfoElem::from(slice) } else { SliceInfoElem::from(..) }).collect();
        if let Err(why) = fits_slice(self.shape(), &elems) {
            panic!("{}", BachError::invalid("slice_axis", format!("{} of shape {:?}: {why}", describe(&elems), self.shape())));
        }
        crate::array::or_panic(self.view_cut(Cut::Elems(Elems::of(&elems))))
    }
    /// A view sliced on each axis by `f` of the axis (ndarray's `slice_each_axis`).
    #[track_caller]
    pub fn slice_each_axis<F: FnMut(ndarray::AxisDescription) -> Slice>(&self, mut f: F) -> ArrayView<'_, A, D> {
        let elems: Vec<SliceInfoElem> =
            self.shape().iter().enumerate().map(|(k, &len)| SliceInfoElem::from(f(ndarray::AxisDescription { axis: Axis(k), len, stride: 1 }))).collect();
        if let Err(why) = fits_slice(self.shape(), &elems) {
            panic!("{}", BachError::invalid("slice_each_axis", format!("{} of shape {:?}: {why}", describe(&elems), self.shape())));
        }
        crate::array::or_panic(self.view_cut(Cut::Elems(Elems::of(&elems))))
    }
    /// The subview at `index` along `axis`, one dimension fewer (ndarray's `index_axis`).
    /// Panics at this line when the axis or index is out of bounds, as ndarray's does.
    #[track_caller]
    pub fn index_axis(&self, axis: Axis, index: usize) -> ArrayView<'_, A, D::Smaller>
    where
        D: RemoveAxis,
    {
        if axis.index() >= self.ndim() || index >= self.shape()[axis.index()] {
            panic!("{}", BachError::invalid("index_axis", format!("index {index} of axis {} of shape {:?}", axis.index(), self.shape())));
        }
        crate::array::or_panic(self.view_with(Cut::Index(axis, index), |v| v.index_axis_move(axis, index)))
    }
    /// Row `index` of a matrix, a view (ndarray's `row`). Panics at this line when the array
    /// is not 2-d or the row is past its end.
    #[track_caller]
    pub fn row(&self, index: usize) -> ArrayView<'_, A, D::Smaller> {
        self.lane("row", 0, index)
    }
    /// Column `index` of a matrix, a view (ndarray's `column`). Panics at this line when the
    /// array is not 2-d or the column is past its end.
    #[track_caller]
    pub fn column(&self, index: usize) -> ArrayView<'_, A, D::Smaller> {
        self.lane("column", 1, index)
    }
    #[track_caller]
    fn lane(&self, what: &str, axis: usize, index: usize) -> ArrayView<'_, A, D::Smaller> {
        if self.ndim() != 2 || index >= self.shape()[axis] {
            panic!("{}", BachError::invalid(what, format!("{what} {index} of an array of shape {:?} (a {what} of a 2-d array)", self.shape())));
        }
        crate::array::or_panic(self.view_with(Cut::Index(Axis(axis), index), |v| {
            let m = v.into_dimensionality::<Ix2>().expect("a 2-d array");
            m.index_axis_move(Axis(axis), index).into_dimensionality::<D::Smaller>().expect("a 1-d lane")
        }))
    }
    /// The subviews along the first axis (ndarray's `outer_iter`): Bach views.
    pub fn outer_iter(&self) -> AxisViews<'_, A, S, D>
    where
        D: RemoveAxis,
    {
        self.axis_iter(Axis(0))
    }
    /// The subviews along `axis` (ndarray's `axis_iter`): Bach views. Panics when the array
    /// has no such axis.
    #[track_caller]
    pub fn axis_iter(&self, axis: Axis) -> AxisViews<'_, A, S, D>
    where
        D: RemoveAxis,
    {
        if axis.index() >= self.ndim() {
            panic!("{}", BachError::invalid("axis_iter", format!("axis {} of an array of shape {:?}", axis.index(), self.shape())));
        }
        // Iterating evaluates (one node per subview would be a plan per row).
        self.evaluated();
        AxisViews { of: self, axis, next: 0, end: self.shape()[axis.index()] }
    }
    /// The 1-d lanes along `axis` (ndarray's `lanes`): Bach views, each sharing the array's
    /// buffer (evaluates).
    #[track_caller]
    pub fn lanes(&self, axis: Axis) -> Lanes<'_, A, S, D> {
        if axis.index() >= self.ndim() {
            panic!("{}", BachError::invalid("lanes", format!("axis {} of an array of shape {:?}", axis.index(), self.shape())));
        }
        self.evaluated();
        let outer: Vec<usize> = self.shape().iter().enumerate().filter(|&(k, _)| k != axis.index()).map(|(_, &n)| n).collect();
        let end = outer.iter().product();
        Lanes { of: self, axis: axis.index(), outer, next: 0, end }
    }
    /// The rows: lanes along the last axis (ndarray's `rows`; a 1-d array is one row).
    pub fn rows(&self) -> Lanes<'_, A, S, D> {
        self.lanes(Axis(self.ndim().saturating_sub(1)))
    }
    /// The columns: lanes along the first axis (ndarray's `columns`).
    pub fn columns(&self) -> Lanes<'_, A, S, D> {
        self.lanes(Axis(0))
    }

    /// Swaps axes `a` and `b` (ndarray's `swap_axes`): the array's value with its strides
    /// swapped, no copy (a lazy array is evaluated first).
    #[track_caller]
    pub fn swap_axes(&mut self, a: usize, b: usize) {
        S::swap_axes_repr(&mut self.repr, a, b)
    }

    /// The values as an ndarray view (evaluates; no copy): for crates that take ndarray's
    /// arrays (linfa, ndarray-stats, ndarray-npy).
    #[track_caller]
    pub fn as_nd(&self) -> ndarray::ArrayView<'_, A, D> {
        self.evaluated().view()
    }
}

/// The owned forms, of any storage kind.
impl<A: Clone, S: Data<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// The array as an owned array (ndarray's `to_owned`): an array's values shared until
    /// either is written (no copy here); a view's elements copied.
    pub fn to_owned(&self) -> Array<A, D> {
        match self.parts() {
            Parts::Handle(h) => Array::of_handle(h.clone_owned()),
            Parts::Host(v) => Array::from_nd_view(&v),
        }
    }
    /// The array as an owned array (ndarray's `into_owned`; [`ArrayBase::into_nd`] gives
    /// ndarray's).
    pub fn into_owned(self) -> Array<A, D> {
        let mut h = S::into_handle(self.repr);
        h.unshare();
        Array::of_handle(h)
    }
    /// The array as a shared array (ndarray's `into_shared`).
    pub fn into_shared(self) -> ArcArray<A, D> {
        ArrayBase { repr: S::into_handle(self.repr) }
    }
    /// The array as a shared array (ndarray's `to_shared`).
    pub fn to_shared(&self) -> ArcArray<A, D> {
        ArrayBase { repr: self.to_owned().repr }
    }
    /// The array in row-major order (ndarray's `as_standard_layout`): a copy only of a strided
    /// host value.
    pub fn as_standard_layout(&self) -> CowArray<'_, A, D> {
        match self.host_view() {
            Some(v) if !v.is_standard_layout() => ArrayBase { repr: Array::from_nd_view(&v).repr },
            _ => ArrayBase { repr: self.to_owned().repr },
        }
    }
    /// The values as an owned ndarray array (evaluates; no copy when nothing else shares
    /// them).
    #[track_caller]
    pub fn into_nd(self) -> ndarray::Array<A, D> {
        match self.parts() {
            Parts::Handle(h) => h.evaluated().clone().into_owned(),
            Parts::Host(v) => v.to_owned(),
        }
    }
}

impl<A: Clone, S: Data<Elem = A>> ArrayBase<S, ndarray::Ix0> {
    /// The element of a 0-d array (ndarray's `into_scalar`; evaluates).
    #[track_caller]
    pub fn into_scalar(self) -> A {
        self.evaluated().first().expect("a 0-d array has one element").clone()
    }
}

/// The subviews of an array along one axis ([`ArrayBase::outer_iter`],
/// [`ArrayBase::axis_iter`]): Bach views, each sharing the array's buffer.
pub struct AxisViews<'a, A: 'a, S: Data<Elem = A>, D: Dimension> {
    of: &'a ArrayBase<S, D>,
    axis: Axis,
    next: usize,
    end: usize,
}

impl<'a, A: 'a, S: Data<Elem = A>, D: RemoveAxis> Iterator for AxisViews<'a, A, S, D> {
    type Item = ArrayView<'a, A, D::Smaller>;
    fn next(&mut self) -> Option<Self::Item> {
        (self.next < self.end).then(|| {
            self.next += 1;
            self.of.index_axis(self.axis, self.next - 1)
        })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.end - self.next, Some(self.end - self.next))
    }
}
impl<A, S: Data<Elem = A>, D: RemoveAxis> ExactSizeIterator for AxisViews<'_, A, S, D> {}
impl<A, S: Data<Elem = A>, D: RemoveAxis> DoubleEndedIterator for AxisViews<'_, A, S, D> {
    fn next_back(&mut self) -> Option<Self::Item> {
        (self.next < self.end).then(|| {
            self.end -= 1;
            self.of.index_axis(self.axis, self.end)
        })
    }
}
/// `Zip::from(a.outer_iter())`, as over ndarray's `AxisIter`.
impl<'a, A: 'a, S: Data<Elem = A>, D: RemoveAxis> ndarray::IntoNdProducer for AxisViews<'a, A, S, D> {
    type Item = ndarray::ArrayView<'a, A, D::Smaller>;
    type Dim = Ix1;
    type Output = ndarray::iter::AxisIter<'a, A, D::Smaller>;
    fn into_producer(self) -> Self::Output {
        self.of.evaluated().axis_iter(self.axis)
    }
}

/// The 1-d lanes of an array along one axis ([`ArrayBase::lanes`], `rows`, `columns`): Bach
/// views in row-major order of the other axes.
pub struct Lanes<'a, A: 'a, S: Data<Elem = A>, D: Dimension> {
    of: &'a ArrayBase<S, D>,
    axis: usize,
    outer: Vec<usize>,
    next: usize,
    end: usize,
}

impl<'a, A: 'a, S: Data<Elem = A>, D: Dimension> Lanes<'a, A, S, D> {
    fn lane(&self, mut k: usize) -> ArrayView<'a, A, Ix1> {
        let mut at = vec![0; self.outer.len()];
        for (i, &n) in self.outer.iter().enumerate().rev() {
            at[i] = k % n.max(1);
            k /= n.max(1);
        }
        let mut others = at.into_iter();
        let elems: Vec<SliceInfoElem> = (0..self.outer.len() + 1)
            .map(|a| if a == self.axis { SliceInfoElem::from(..) } else { SliceInfoElem::Index(others.next().expect("one index per other axis") as isize) })
            .collect();
        crate::array::or_panic(self.of.view_cut(Cut::Elems(Elems::of(&elems))))
    }
}
impl<'a, A: 'a, S: Data<Elem = A>, D: Dimension> Iterator for Lanes<'a, A, S, D> {
    type Item = ArrayView<'a, A, Ix1>;
    fn next(&mut self) -> Option<Self::Item> {
        (self.next < self.end).then(|| {
            self.next += 1;
            self.lane(self.next - 1)
        })
    }
    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.end - self.next, Some(self.end - self.next))
    }
}
impl<'a, A: 'a, S: Data<Elem = A>, D: Dimension> ExactSizeIterator for Lanes<'a, A, S, D> {}
impl<'a, A: 'a, S: Data<Elem = A>, D: Dimension> DoubleEndedIterator for Lanes<'a, A, S, D> {
    fn next_back(&mut self) -> Option<Self::Item> {
        (self.next < self.end).then(|| {
            self.end -= 1;
            self.lane(self.end)
        })
    }
}
/// `Zip::from(a.rows())` and `azip!`, as over ndarray's `Lanes`.
impl<'a, A: 'a, S: Data<Elem = A>, D: Dimension> ndarray::IntoNdProducer for Lanes<'a, A, S, D> {
    type Item = ndarray::ArrayView<'a, A, Ix1>;
    type Dim = D::Smaller;
    type Output = ndarray::iter::Lanes<'a, A, D::Smaller>;
    fn into_producer(self) -> Self::Output {
        self.of.evaluated().lanes(Axis(self.axis))
    }
}

impl<'a, A, D: Dimension> ArrayView<'a, A, D> {
    /// The view's elements where they live, for the borrow's lifetime (evaluates a view of a
    /// lazy array).
    #[track_caller]
    pub(crate) fn nd(self) -> ndarray::ArrayView<'a, A, D> {
        self.repr.into_nd()
    }
    /// The view split in two along `axis` before `index` (ndarray's `split_at`; evaluates a
    /// view of a lazy array).
    #[track_caller]
    pub fn split_at(self, axis: Axis, index: usize) -> (Self, Self) {
        let n = self.shape().get(axis.index()).copied().unwrap_or(0);
        if index > n {
            panic!("{}", BachError::invalid("split_at", format!("index {index} of axis {} of shape {:?}", axis.index(), self.shape())));
        }
        let (l, r) = self.nd().split_at(axis, index);
        (Self::detached(l), Self::detached(r))
    }
    /// A view of elements on the host (`aview1(&v)`, `ArrayView::from(&v[..])`, an ndarray
    /// view): no copy.
    pub(crate) fn detached(v: ndarray::ArrayView<'a, A, D>) -> Self {
        ArrayBase { repr: View::Host(v) }
    }
    /// A view of `xs` in `shape` (ndarray's `ArrayView::from_shape`).
    pub fn from_shape<Sh: ndarray::ShapeBuilder<Dim = D>>(shape: Sh, xs: &'a [A]) -> std::result::Result<Self, ndarray::ShapeError> {
        ndarray::ArrayView::from_shape(shape.into_shape_with_order(), xs).map(Self::detached)
    }
    /// A view of the elements at `ptr` in `shape`, with strides where the shape gives them
    /// (ndarray's `ArrayView::from_shape_ptr`: rolling windows, memory from elsewhere).
    ///
    /// # Safety
    /// As ndarray's: every element the shape and strides reach is valid for `'a`, and nothing
    /// writes them while the view lives.
    pub unsafe fn from_shape_ptr<Sh: Into<ndarray::StrideShape<D>>>(shape: Sh, ptr: *const A) -> Self {
        // SAFETY: the caller's promise, as ndarray's.
        Self::detached(unsafe { ndarray::ArrayView::from_shape_ptr(shape, ptr) })
    }
}

impl<'a, A, D: Dimension> View<'a, A, D> {
    /// The number of axes (what a placeholder of no elements keeps).
    pub(super) fn nd_len(&self) -> usize {
        match self {
            View::Host(v) => v.ndim(),
            View::Lazy(l) => l.get().array.ndim(),
        }
    }
    /// The elements as an owned array's handle (a view of a lazy array shares its node).
    pub(super) fn into_handle(self) -> Handle<A, D>
    where
        A: Clone,
    {
        match self {
            View::Host(v) => Array::from_nd_view(&v).repr,
            View::Lazy(l) => l.get().array.repr.clone(),
        }
    }
}

/// `for x in view`: references into the viewed buffer, as ndarray's.
impl<'a, A, D: Dimension> IntoIterator for ArrayView<'a, A, D> {
    type Item = &'a A;
    type IntoIter = ndarray::iter::Iter<'a, A, D>;
    fn into_iter(self) -> Self::IntoIter {
        self.nd().into_iter()
    }
}
/// `Zip::from(view)` and `azip!` over a view by value.
impl<'a, A, D: Dimension> ndarray::IntoNdProducer for ArrayView<'a, A, D> {
    type Item = &'a A;
    type Dim = D;
    type Output = ndarray::ArrayView<'a, A, D>;
    fn into_producer(self) -> Self::Output {
        self.nd()
    }
}
/// `for x in array` (by value): the elements, as ndarray's owned arrays give them.
impl<A: Clone, D: Dimension> IntoIterator for Array<A, D> {
    type Item = A;
    type IntoIter = ndarray::iter::IntoIter<A, D>;
    #[track_caller]
    fn into_iter(self) -> Self::IntoIter {
        self.into_nd().into_iter()
    }
}

impl<'a, A> From<&'a [A]> for ArrayView<'a, A, Ix1> {
    fn from(xs: &'a [A]) -> Self {
        ArrayView::detached(ndarray::ArrayView1::from(xs))
    }
}
impl<'a, A> From<&'a Vec<A>> for ArrayView<'a, A, Ix1> {
    fn from(xs: &'a Vec<A>) -> Self {
        ArrayView::detached(ndarray::ArrayView1::from(xs))
    }
}
impl<'a, A, const N: usize> From<&'a [A; N]> for ArrayView<'a, A, Ix1> {
    fn from(xs: &'a [A; N]) -> Self {
        ArrayView::detached(ndarray::ArrayView1::from(xs))
    }
}
/// An ndarray view as a Bach view (no copy).
impl<'a, A, D: Dimension> From<ndarray::ArrayView<'a, A, D>> for ArrayView<'a, A, D> {
    fn from(v: ndarray::ArrayView<'a, A, D>) -> Self {
        ArrayView::detached(v)
    }
}
/// `ArrayView::from(&a)`: a view of a Bach array.
impl<'a, A, S: Data<Elem = A>, D: Dimension> From<&'a ArrayBase<S, D>> for ArrayView<'a, A, D> {
    fn from(a: &'a ArrayBase<S, D>) -> Self {
        a.view()
    }
}
/// An ndarray array (owned, shared, a view or copy on write) as a Bach array.
impl<A: Clone, S: ndarray::Data<Elem = A>, D: Dimension> From<&ndarray::ArrayBase<S, D>> for Array<A, D> {
    fn from(a: &ndarray::ArrayBase<S, D>) -> Self {
        Array::from_array(a.to_owned())
    }
}

/// A view as a copy-on-write array borrowing it (ndarray's `CowArray::from(view)`).
impl<'a, A: Clone, D: Dimension> From<ArrayView<'a, A, D>> for CowArray<'a, A, D> {
    fn from(v: ArrayView<'a, A, D>) -> Self {
        ArrayBase { repr: v.repr.into_handle() }
    }
}
/// A borrowed array as a copy-on-write array (ndarray's `CowArray::from(&array)`).
impl<'a, A: Clone, S: Data<Elem = A>, D: Dimension> From<&'a ArrayBase<S, D>> for CowArray<'a, A, D> {
    fn from(a: &'a ArrayBase<S, D>) -> Self {
        CowArray::from(a.view())
    }
}
/// An array as a copy-on-write array owning it (ndarray's `CowArray::from(array)`).
impl<A, D: Dimension> From<Array<A, D>> for CowArray<'_, A, D> {
    fn from(a: Array<A, D>) -> Self {
        ArrayBase { repr: a.repr }
    }
}
/// An ndarray view as a copy-on-write array.
impl<'a, A: Clone, D: Dimension> From<ndarray::ArrayView<'a, A, D>> for CowArray<'a, A, D> {
    fn from(v: ndarray::ArrayView<'a, A, D>) -> Self {
        CowArray::from(ArrayView::detached(v))
    }
}
/// An ndarray array as a Bach array (no copy).
impl<A: Clone, D: Dimension> From<ndarray::Array<A, D>> for CowArray<'_, A, D> {
    fn from(a: ndarray::Array<A, D>) -> Self {
        CowArray::from(Array::from_array(a))
    }
}

/// ndarray's `arr0`: a 0-d array.
pub fn arr0<A: Clone>(x: A) -> Array0<A> {
    Array::from_array(ndarray::arr0(x))
}
/// ndarray's `arr1`: a 1-d array of `xs`.
pub fn arr1<A: Clone>(xs: &[A]) -> Array1<A> {
    Array::from_array(ndarray::arr1(xs))
}
/// ndarray's `arr2`: a 2-d array of rows `xs`.
pub fn arr2<A: Clone, const N: usize>(xs: &[[A; N]]) -> Array2<A> {
    Array::from_array(ndarray::arr2(xs))
}
/// ndarray's `arr3`: a 3-d array of `xs`.
pub fn arr3<A: Clone, const N: usize, const M: usize>(xs: &[[[A; M]; N]]) -> Array<A, ndarray::Ix3> {
    Array::from_array(ndarray::arr3(xs))
}
/// ndarray's `aview0`: a 0-d view of `x`.
pub fn aview0<A>(x: &A) -> ArrayView<'_, A, ndarray::Ix0> {
    ArrayView::detached(ndarray::aview0(x))
}
/// ndarray's `aview1`: a 1-d view of `xs`.
pub fn aview1<A>(xs: &[A]) -> ArrayView<'_, A, Ix1> {
    ArrayView::detached(ndarray::aview1(xs))
}
/// ndarray's `aview2`: a 2-d view of rows `xs`.
pub fn aview2<A, const N: usize>(xs: &[[A; N]]) -> ArrayView<'_, A, Ix2> {
    ArrayView::detached(ndarray::aview2(xs))
}

/// ndarray's `stack`: the arrays joined along a new axis `axis` (on the host).
pub fn stack<A: Clone, D: Dimension>(axis: Axis, arrays: &[ArrayView<'_, A, D>]) -> std::result::Result<Array<A, D::Larger>, ndarray::ShapeError>
where
    D::Larger: RemoveAxis,
{
    let views: Vec<ndarray::ArrayView<'_, A, D>> = arrays.iter().map(|a| a.as_nd()).collect();
    ndarray::stack(axis, &views).map(Array::from_array)
}
/// ndarray's `concatenate`: the arrays joined along their axis `axis` (on the host).
pub fn concatenate<A: Clone, D: RemoveAxis>(axis: Axis, arrays: &[ArrayView<'_, A, D>]) -> std::result::Result<Array<A, D>, ndarray::ShapeError> {
    let views: Vec<ndarray::ArrayView<'_, A, D>> = arrays.iter().map(|a| a.as_nd()).collect();
    ndarray::concatenate(axis, &views).map(Array::from_array)
}

/// ndarray's `stack!`, giving a Bach array.
#[macro_export]
macro_rules! stack {
    ($axis:expr, $( $array:expr ),+ ,) => {
        $crate::stack!($axis, $($array),+)
    };
    ($axis:expr, $( $array:expr ),+ ) => {
        $crate::stack($axis, &[ $($crate::ArrayView::from(&$array) ),* ]).unwrap()
    };
}
/// ndarray's `concatenate!`, giving a Bach array.
#[macro_export]
macro_rules! concatenate {
    ($axis:expr, $( $array:expr ),+ ,) => {
        $crate::concatenate!($axis, $($array),+)
    };
    ($axis:expr, $( $array:expr ),+ ) => {
        $crate::concatenate($axis, &[ $($crate::ArrayView::from(&$array) ),* ]).unwrap()
    };
}

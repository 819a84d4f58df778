//! Views: `view()`, `t()`, `slice(s![..])`, `row()`, `column()`, `index_axis()`,
//! `slice_axis()`, `outer_iter()`, `axis_iter()`; the owned forms (`to_owned`, `into_owned`,
//! `into_shared`, `as_standard_layout`); ndarray's free constructors (`arr1`, `aview1`...);
//! and the way out to ndarray (`as_nd`, `to_nd`, `From`).
//!
//! A view is an [`ArrayBase`] tagged `ViewRepr<&'a A>`: the same handle as an array. Of an
//! array holding its value on the host it shares the buffer (no copy, no node); of a lazy
//! array it is a lazy op (`slice`, `transpose`: a graph node, planned and placed like any
//! other), so that annotated calls on it stay lazy. Each view also keeps an [`Anchor`]: the
//! borrowed parent and the cuts that find the view's elements in the parent's buffer. What
//! must hand out references that live as long as the borrow (`for x in view`,
//! `Zip::from(view)`) evaluates the parent and reads there, as ndarray's views do.

use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

use bach_runtime::{BachError, Result};
use ndarray::{ArcArray as NdArc, Axis, Dimension, Ix1, Ix2, IxDyn, RawArrayView, RemoveAxis, Slice, SliceArg, SliceInfoElem};

use super::views_mut::Held;
use super::{check_ndim, ArrayBase, ArrayView, CowArray, Data, OwnedArcRepr, RawData, ViewRepr};
use crate::array::{Array, Array0, Array1, Array2};
use crate::linalg::{describe, slice_op, sliced_shape, transpose_op};

/// A shared array (ndarray's `ArcArray`): every Bach array shares its buffer until written,
/// so this is an [`Array`] by another name.
pub type ArcArray<A, D> = ArrayBase<OwnedArcRepr<A>, D>;
pub type ArcArray1<A> = ArcArray<A, Ix1>;
pub type ArcArray2<A> = ArcArray<A, Ix2>;
pub type CowArray1<'a, A> = CowArray<'a, A, Ix1>;
pub type CowArray2<'a, A> = CowArray<'a, A, Ix2>;

/// Slice elements, held inline up to six (a view is made in a loop over rows: no allocation).
#[derive(Clone, Debug)]
pub(super) enum Elems {
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
pub(super) enum Cut {
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

/// Where a view's elements are, for as long as its borrow lasts: the borrowed parent (an
/// array, or memory a detached view such as `aview1(&v)` borrows) and the cuts from it.
pub struct Anchor<A> {
    pub(super) base: Base<A>,
    /// The cuts in order: the first held inline (a view of an array has one), then the rest.
    pub(super) first: Option<Cut>,
    pub(super) rest: Vec<Cut>,
}
impl<A> Clone for Anchor<A> {
    fn clone(&self) -> Self {
        Anchor { base: self.base.clone(), first: self.first.clone(), rest: self.rest.clone() }
    }
}

pub(super) enum Base<A> {
    /// An array (its address, and how to read its evaluated buffer).
    Array { at: usize, read: fn(usize) -> RawArrayView<A, IxDyn> },
    /// Borrowed memory: its first element's address and its shape and strides (elements).
    Memory { ptr: usize, shape: Vec<usize>, strides: Vec<usize> },
}

impl<A> Clone for Base<A> {
    fn clone(&self) -> Self {
        match self {
            Base::Array { at, read } => Base::Array { at: *at, read: *read },
            Base::Memory { ptr, shape, strides } => Base::Memory { ptr: *ptr, shape: shape.clone(), strides: strides.clone() },
        }
    }
}

impl<A> Anchor<A> {
    /// The view's elements where they live (evaluates the parent when it is lazy).
    ///
    /// Safety: only while the borrow the view holds lasts (the parent can neither move nor
    /// be written, so its buffer stays where it is).
    unsafe fn raw(&self) -> RawArrayView<A, IxDyn> {
        let base = match &self.base {
            Base::Array { at, read } => read(*at),
            Base::Memory { ptr, shape, strides } => {
                use ndarray::ShapeBuilder;
                // SAFETY: made from a live slice of these elements (see `detached`).
                unsafe { RawArrayView::from_shape_ptr(IxDyn(shape).strides(IxDyn(strides)), *ptr as *const A) }
            }
        };
        self.first.iter().chain(&self.rest).fold(base, |a, c| c.apply(a))
    }
    fn then(mut self, cut: Cut) -> Self {
        if self.first.is_none() {
            self.first = Some(cut);
        } else {
            self.rest.push(cut);
        }
        self
    }
}

/// The evaluated buffer of the array at `at` (an `ArrayBase<S, D>`).
fn read_array<A, S: Data<Elem = A>, D: Dimension>(at: usize) -> RawArrayView<A, IxDyn> {
    // SAFETY: `at` is the address of an array the view borrows (see `Anchor::raw`).
    let parent = unsafe { &*(at as *const ArrayBase<S, D>) };
    parent.evaluated().raw_view().into_dyn()
}

impl<A, S: Data<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// This array as the parent of a view: its own anchor when it is a view, else itself.
    fn anchor_here(&self) -> Anchor<A> {
        match &self.anchor {
            // A mutable view is the parent of its views (its values are its own until dropped).
            Some(a) if !self.writes_back() => (**a).clone(),
            _ => Anchor { base: Base::Array { at: self as *const Self as usize, read: read_array::<A, S, D> }, first: None, rest: vec![] },
        }
    }

    /// The array `cut` of this one, tagged `S2`, anchored at `anchor`: sharing this array's
    /// host buffer when it has one, else a lazy op of its node.
    fn cut<S2: RawData<Elem = A>, E: Dimension>(&self, cut: Cut, anchor: Option<Anchor<A>>) -> Result<ArrayBase<S2, E>> {
        let mut out =
            ArrayBase { lazy: OnceLock::new(), held: Held::new(None), value: OnceLock::new(), home: None, read: self.read, anchor: anchor.map(Box::new), _marker: PhantomData };
        // A host value with no node, or a small one, is viewed where it is; a large array with
        // a node is cut by a lazy op, so plans keep their pieces and their accelerator.
        let host = self.value_ref().filter(|_| self.lazy.get().is_none() || self.small_host().is_some());
        if let Some(v) = host {
            let v = cut.apply(v.clone().into_dyn());
            check_ndim::<E>("view", v.shape())?;
            *out.held = Some(v.into_dimensionality::<E>().map_err(|e| BachError::shape("view", e.to_string()))?);
            out.home = Some(self.home());
        } else {
            let lazy = self.lazy.get().expect("an array holds a node or a value");
            let op = match cut.elems(self.ndim()) {
                Some(elems) => {
                    let shape =
                        sliced_shape(self.shape(), &elems).map_err(|why| BachError::invalid("slice", format!("{} of shape {:?}: {why}", describe(&elems), self.shape())))?;
                    slice_op(elems, shape)
                }
                None if matches!(cut, Cut::Reverse) => transpose_op(),
                None => unreachable!("swapped axes are made on the host value (`swap_axes` evaluates)"),
            };
            let node = op.call(&[lazy])?;
            check_ndim::<E>(op.name(), &node.meta().shape)?;
            out.lazy = OnceLock::from(node);
        }
        Ok(out)
    }
    fn view_cut<E: Dimension>(&self, cut: Cut) -> Result<ArrayView<'_, A, E>> {
        let anchor = self.anchor_here().then(cut.clone());
        self.cut(cut, Some(anchor))
    }
    /// [`Self::view_cut`], cutting a host value with `host` (ndarray's own method on the
    /// static dimension types: the small-array fast path; no dynamic dimensions).
    fn view_with<E: Dimension>(&self, cut: Cut, host: impl FnOnce(NdArc<A, D>) -> NdArc<A, E>) -> Result<ArrayView<'_, A, E>> {
        if self.lazy.get().is_none() {
            if let Some(v) = self.value_ref() {
                let home = self.home.clone();
                let anchor = self.anchor_here().then(cut);
                return Ok(ArrayBase {
                    lazy: OnceLock::new(),
                    held: Held::new(Some(host(v.clone()))),
                    value: OnceLock::new(),
                    home,
                    read: self.read,
                    anchor: Some(Box::new(anchor)),
                    _marker: PhantomData,
                });
            }
        }
        self.view_cut(cut)
    }
    /// The same handle under another storage tag (what owning or sharing a Bach value is:
    /// its buffer is shared until written, by copy on write).
    pub(crate) fn retag<S2: RawData<Elem = A>>(mut self, anchor: Option<Anchor<A>>) -> ArrayBase<S2, D> {
        // A mutable view that becomes another kind writes its values back first.
        self.flush_back();
        let p = self.into_parts();
        ArrayBase { lazy: p.lazy, held: p.held, value: p.value, home: p.home, read: p.read, anchor: anchor.map(Box::new), _marker: PhantomData }
    }
    fn retag_ref<S2: RawData<Elem = A>>(&self, anchor: Option<Anchor<A>>) -> ArrayBase<S2, D> {
        ArrayBase {
            lazy: self.lazy.clone(),
            held: self.held.clone(),
            value: self.value.clone(),
            home: self.home.clone(),
            read: self.read,
            anchor: anchor.map(Box::new),
            _marker: PhantomData,
        }
    }

    /// A view of the whole array (ndarray's `view`): lazy when the array is.
    pub fn view(&self) -> ArrayView<'_, A, D> {
        let anchor = self.anchor_here();
        self.retag_ref(Some(anchor))
    }
    /// The transpose, a view (ndarray's `t`): shares the buffer of a host value; of a lazy
    /// array, a lazy op (a copy in standard layout when evaluated).
    pub fn t(&self) -> ArrayView<'_, A, D> {
        self.view_with(Cut::Reverse, |v| v.reversed_axes()).expect("every array has a transpose")
    }
    /// The axes reversed (ndarray's `reversed_axes`; the same as [`ArrayBase::t`]).
    pub fn reversed_axes(mut self) -> ArrayBase<S, D> {
        if self.writes_back() {
            // A mutable view stays one: its values and its parent's elements both reversed.
            self.evaluated();
            let held = self.held.take().or_else(|| self.value.take()).map(|v| v.reversed_axes());
            *self.held = held;
            if let Some(back) = self.held.back_mut() {
                back.map_target(|t| t.reversed_axes());
            }
            return self;
        }
        let anchor = self.anchor.clone().map(|a| (*a).then(Cut::Reverse));
        self.cut(Cut::Reverse, anchor).expect("every array has a transpose")
    }

    /// ndarray's `slice`: `x.slice(s![1..5, ..])`, `s![.., 2]` (an index drops its axis),
    /// `s![..;2, -3..]` (steps; negative indices count from the end), `s![.., NewAxis]`. A
    /// view: of a host value it shares the buffer; of a lazy array it is a lazy op. A slice
    /// that does not fit the shape panics at this line with the reason, as ndarray's does;
    /// [`ArrayBase::try_slice`] returns it as an error.
    #[track_caller]
    pub fn slice<I: SliceArg<D>>(&self, info: I) -> ArrayView<'_, A, I::OutDim> {
        crate::elementwise::or_panic(self.try_slice(info))
    }
    /// [`ArrayBase::slice`], with a slice that does not fit the shape as an error.
    pub fn try_slice<I: SliceArg<D>>(&self, info: I) -> Result<ArrayView<'_, A, I::OutDim>> {
        let elems = info.as_ref().to_vec();
        sliced_shape(self.shape(), &elems).map_err(|why| BachError::invalid("slice", format!("{} of shape {:?}: {why}", describe(&elems), self.shape())))?;
        self.view_with(Cut::Elems(Elems::of(&elems)), move |v| v.slice_move(info))
    }
    /// `self` cut by `cut`, of the same storage kind: an array stays an array (sharing the
    /// buffer until written), a view a view of the same parent, and a mutable view keeps
    /// writing back into its parent.
    fn cut_move<E: Dimension>(mut self, cut: Cut) -> Result<ArrayBase<S, E>> {
        if self.writes_back() {
            self.evaluated();
            let values = self.held.take().or_else(|| self.value.take());
            *self.held = values;
            let p = self.into_parts();
            let held = p.held.cut_back::<E>(&cut);
            return Ok(ArrayBase { lazy: OnceLock::new(), held, value: OnceLock::new(), home: p.home, read: p.read, anchor: None, _marker: PhantomData });
        }
        let anchor = self.anchor.as_deref().map(|a| a.clone().then(cut.clone()));
        self.cut(cut, anchor)
    }
    /// [`ArrayBase::slice`] consuming `self`, of the same storage kind (ndarray's
    /// `slice_move`).
    #[track_caller]
    pub fn slice_move<I: SliceArg<D>>(self, info: I) -> ArrayBase<S, I::OutDim> {
        let elems = info.as_ref().to_vec();
        if let Err(why) = sliced_shape(self.shape(), &elems) {
            panic!("{}", BachError::invalid("slice_move", format!("{} of shape {:?}: {why}", describe(&elems), self.shape())));
        }
        crate::elementwise::or_panic(self.cut_move(Cut::Elems(Elems::of(&elems))))
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
        crate::elementwise::or_panic(self.cut_move(Cut::Index(axis, index)))
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
        if let Err(why) = sliced_shape(self.shape(), &elems) {
            panic!("{}", BachError::invalid(what, format!("{} of shape {:?}: {why}", describe(&elems), self.shape())));
        }
        let empty = ArrayBase { lazy: OnceLock::new(), held: Held::new(None), value: OnceLock::new(), home: None, read: self.read, anchor: None, _marker: PhantomData };
        let this = std::mem::replace(self, empty);
        *self = crate::elementwise::or_panic(this.cut_move(Cut::Elems(Elems::of(&elems))));
    }
    /// The slice `slice` of axis `axis`, a view of the same dimension (ndarray's
    /// `slice_axis`).
    #[track_caller]
    pub fn slice_axis(&self, axis: Axis, slice: Slice) -> ArrayView<'_, A, D> {
        let elems: Vec<SliceInfoElem> = (0..self.ndim()).map(|k| if k == axis.index() { SliceInfoElem::from(slice) } else { SliceInfoElem::from(..) }).collect();
        if let Err(why) = sliced_shape(self.shape(), &elems) {
            panic!("{}", BachError::invalid("slice_axis", format!("{} of shape {:?}: {why}", describe(&elems), self.shape())));
        }
        crate::elementwise::or_panic(self.view_cut(Cut::Elems(Elems::of(&elems))))
    }
    /// A view sliced on each axis by `f` of the axis (ndarray's `slice_each_axis`).
    #[track_caller]
    pub fn slice_each_axis<F: FnMut(ndarray::AxisDescription) -> Slice>(&self, mut f: F) -> ArrayView<'_, A, D> {
        let elems: Vec<SliceInfoElem> =
            self.shape().iter().enumerate().map(|(k, &len)| SliceInfoElem::from(f(ndarray::AxisDescription { axis: Axis(k), len, stride: 1 }))).collect();
        if let Err(why) = sliced_shape(self.shape(), &elems) {
            panic!("{}", BachError::invalid("slice_each_axis", format!("{} of shape {:?}: {why}", describe(&elems), self.shape())));
        }
        crate::elementwise::or_panic(self.view_cut(Cut::Elems(Elems::of(&elems))))
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
        crate::elementwise::or_panic(self.view_with(Cut::Index(axis, index), |v| v.index_axis_move(axis, index)))
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
        let lane = |v: NdArc<A, D>| {
            let m = v.into_dimensionality::<Ix2>().expect("a 2-d array");
            m.index_axis_move(Axis(axis), index).into_dimensionality::<D::Smaller>().expect("a 1-d lane")
        };
        crate::elementwise::or_panic(self.view_with(Cut::Index(Axis(axis), index), lane))
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
        self.evaluated();
        if let Some(l) = self.lazy.take() {
            self.home = Some(l.session().clone());
        }
        if self.held.is_none() {
            *self.held = self.value.take();
        }
        self.held.as_mut().expect("just evaluated").swap_axes(a, b);
        if let Some(back) = self.held.back_mut() {
            back.map_target(|mut t| {
                t.swap_axes(a, b);
                t
            });
        } else if let Some(anchor) = self.anchor.take() {
            self.anchor = Some(Box::new((*anchor).then(Cut::Swap(a, b))));
        }
    }

    /// The anchor of this array reshaped to `dims` (`into_shape_with_order`): none for an
    /// array; for a view, the same elements in the parent, which must be contiguous in
    /// row-major order (an error of ndarray's kind otherwise, as ndarray's).
    pub(crate) fn reshaped_anchor(&self, dims: &[usize]) -> std::result::Result<Option<Anchor<A>>, ndarray::ShapeError> {
        let Some(anchor) = self.anchor.as_ref().filter(|_| !self.writes_back()) else { return Ok(None) };
        // SAFETY: the view's borrow lasts while `self` does.
        let raw = unsafe { anchor.raw() };
        if !raw.is_standard_layout() {
            return Err(ndarray::ShapeError::from_kind(ndarray::ErrorKind::IncompatibleLayout));
        }
        let mut strides = vec![0usize; dims.len()];
        let mut step = 1;
        for k in (0..dims.len()).rev() {
            strides[k] = step;
            step *= dims[k].max(1);
        }
        Ok(Some(Anchor { base: Base::Memory { ptr: raw.as_ptr() as usize, shape: dims.to_vec(), strides }, first: None, rest: vec![] }))
    }

    /// The array as an owned array (ndarray's `to_owned`): the same values, shared until
    /// either is written (no copy here).
    pub fn to_owned(&self) -> Array<A, D> {
        self.retag_ref(None)
    }
    /// The array as an owned array (ndarray's `into_owned`; [`ArrayBase::into_nd`] gives
    /// ndarray's).
    pub fn into_owned(self) -> Array<A, D> {
        self.retag(None)
    }
    /// The array as a shared array (ndarray's `into_shared`).
    pub fn into_shared(self) -> ArcArray<A, D> {
        self.retag(None)
    }
    /// The array as a shared array (ndarray's `to_shared`).
    pub fn to_shared(&self) -> ArcArray<A, D> {
        self.retag_ref(None)
    }
    /// The array in row-major order (ndarray's `as_standard_layout`): a copy only of a strided
    /// host view.
    pub fn as_standard_layout(&self) -> CowArray<'_, A, D>
    where
        A: Clone,
    {
        match self.value_ref() {
            Some(v) if !v.is_standard_layout() => Array::from_host_in(v.as_standard_layout().into_owned().into_shared(), self.home()).retag(None),
            _ => self.retag_ref(None),
        }
    }

    /// The values as an ndarray view (evaluates; no copy): for crates that take ndarray's
    /// arrays (linfa, ndarray-stats, ndarray-npy).
    #[track_caller]
    pub fn as_nd(&self) -> ndarray::ArrayView<'_, A, D> {
        self.evaluated().view()
    }
    /// The values as an owned ndarray array (evaluates; no copy when nothing else shares
    /// them).
    #[track_caller]
    pub fn into_nd(self) -> ndarray::Array<A, D>
    where
        A: Clone,
    {
        self.evaluated().clone().into_owned()
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
        crate::elementwise::or_panic(self.of.view_cut(Cut::Elems(Elems::of(&elems))))
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
    /// The view's elements where they live, for the borrow's lifetime.
    fn nd(&self) -> ndarray::ArrayView<'a, A, D> {
        let anchor = self.anchor.as_ref().expect("a view has an anchor");
        // SAFETY: a view exists only while its borrow lasts (`Anchor::raw`).
        let raw = unsafe { anchor.raw() };
        let raw = raw.into_dimensionality::<D>().expect("a view's anchor has its dimensions");
        // SAFETY: the parent's buffer outlives 'a and is not written while it is borrowed.
        unsafe { raw.deref_into_view() }
    }
    /// The view split in two along `axis` before `index` (ndarray's `split_at`).
    #[track_caller]
    pub fn split_at(self, axis: Axis, index: usize) -> (Self, Self) {
        let n = self.shape().get(axis.index()).copied().unwrap_or(0);
        if index > n {
            panic!("{}", BachError::invalid("split_at", format!("index {index} of axis {} of shape {:?}", axis.index(), self.shape())));
        }
        let part = |range: std::ops::Range<usize>| {
            let elems: Vec<SliceInfoElem> = (0..self.ndim()).map(|k| if k == axis.index() { SliceInfoElem::from(range.clone()) } else { SliceInfoElem::from(..) }).collect();
            let cut = Cut::Elems(Elems::of(&elems));
            let anchor = self.anchor.clone().map(|a| (*a).then(cut.clone()));
            crate::elementwise::or_panic(self.cut::<ViewRepr<&'a A>, D>(cut, anchor))
        };
        (part(0..index), part(index..n))
    }
    /// A view of borrowed memory (`aview1(&v)`, `ArrayView::from(&v[..])`): its values are
    /// copied once into the handle, and its anchor is the memory itself.
    fn detached(v: ndarray::ArrayView<'a, A, D>) -> Self
    where
        A: Clone,
    {
        let base = Base::Memory { ptr: v.as_ptr() as usize, shape: v.shape().to_vec(), strides: v.strides().iter().map(|&s| s as usize).collect() };
        Array::from_host(v.to_owned().into_shared()).retag(Some(Anchor { base, first: None, rest: vec![] }))
    }
    /// A view of `xs` in `shape` (ndarray's `ArrayView::from_shape`).
    pub fn from_shape<Sh: ndarray::ShapeBuilder<Dim = D>>(shape: Sh, xs: &'a [A]) -> std::result::Result<Self, ndarray::ShapeError>
    where
        A: Clone,
    {
        ndarray::ArrayView::from_shape(shape.into_shape_with_order(), xs).map(Self::detached)
    }
    /// A view of the elements at `ptr` in `shape`, with strides where the shape gives them
    /// (ndarray's `ArrayView::from_shape_ptr`: rolling windows, memory from elsewhere).
    ///
    /// # Safety
    /// As ndarray's: every element the shape and strides reach is valid for `'a`, and nothing
    /// writes them while the view lives.
    pub unsafe fn from_shape_ptr<Sh: Into<ndarray::StrideShape<D>>>(shape: Sh, ptr: *const A) -> Self
    where
        A: Clone,
    {
        // SAFETY: the caller's promise, as ndarray's.
        Self::detached(unsafe { ndarray::ArrayView::from_shape_ptr(shape, ptr) })
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

impl<'a, A: Clone> From<&'a [A]> for ArrayView<'a, A, Ix1> {
    fn from(xs: &'a [A]) -> Self {
        ArrayView::detached(ndarray::ArrayView1::from(xs))
    }
}
impl<'a, A: Clone> From<&'a Vec<A>> for ArrayView<'a, A, Ix1> {
    fn from(xs: &'a Vec<A>) -> Self {
        ArrayView::detached(ndarray::ArrayView1::from(xs))
    }
}
impl<'a, A: Clone, const N: usize> From<&'a [A; N]> for ArrayView<'a, A, Ix1> {
    fn from(xs: &'a [A; N]) -> Self {
        ArrayView::detached(ndarray::ArrayView1::from(xs))
    }
}
/// An ndarray view as a Bach view (its values copied once into the handle).
impl<'a, A: Clone, D: Dimension> From<ndarray::ArrayView<'a, A, D>> for ArrayView<'a, A, D> {
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
impl<'a, A, D: Dimension> From<ArrayView<'a, A, D>> for CowArray<'a, A, D> {
    fn from(v: ArrayView<'a, A, D>) -> Self {
        let anchor = v.anchor.clone().map(|a| *a);
        v.retag(anchor)
    }
}
/// A borrowed array as a copy-on-write array (ndarray's `CowArray::from(&array)`).
impl<'a, A, S: Data<Elem = A>, D: Dimension> From<&'a ArrayBase<S, D>> for CowArray<'a, A, D> {
    fn from(a: &'a ArrayBase<S, D>) -> Self {
        CowArray::from(a.view())
    }
}
/// An array as a copy-on-write array owning it (ndarray's `CowArray::from(array)`).
impl<A, D: Dimension> From<Array<A, D>> for CowArray<'_, A, D> {
    fn from(a: Array<A, D>) -> Self {
        a.retag(None)
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
pub fn aview0<A: Clone>(x: &A) -> ArrayView<'_, A, ndarray::Ix0> {
    ArrayView::detached(ndarray::aview0(x))
}
/// ndarray's `aview1`: a 1-d view of `xs`.
pub fn aview1<A: Clone>(xs: &[A]) -> ArrayView<'_, A, Ix1> {
    ArrayView::detached(ndarray::aview1(xs))
}
/// ndarray's `aview2`: a 2-d view of rows `xs`.
pub fn aview2<A: Clone, const N: usize>(xs: &[[A; N]]) -> ArrayView<'_, A, Ix2> {
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

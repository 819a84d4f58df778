//! Mutable views: `view_mut()`, `slice_mut(s![..])`, `row_mut()`, `column_mut()`,
//! `index_axis_mut()`, `slice_axis_mut()`, `axis_iter_mut()`/`outer_iter_mut()` and
//! `aview_mut1()` give Bach's `ArrayViewMut` (an [`ArrayBase`] tagged `ViewRepr<&'a mut A>`),
//! so that library code generic over `S: DataMut` or written against `ArrayViewMut1<f64>`
//! takes them, and a view of a mutable view (`v.view()`, `v.t()`) is Bach's too.
//!
//! A mutable view holds its elements as its own host value (copied once from the parent, which
//! is evaluated and made the parent handle's own first), so that every method of the family
//! works on it as on any array; the parent stays mutably borrowed for the view's lifetime, and
//! its elements are written back when the view is dropped (a [`Back`] in its [`Held`]).
//! Iterating a mutable view by value (`for x in v`, `Zip::from(v)`) hands out references into
//! the parent's own elements instead, as ndarray's do (what the view wrote before is written
//! back first).

use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

use bach_runtime::{BachError, Lazy, Result, Session};
use ndarray::{ArcArray as NdArc, Axis, Dimension, Ix1, IxDyn, RawArrayViewMut, RemoveAxis, Slice, SliceArg, SliceInfoElem};

use super::views::{Cut, Elems, Kept};
use super::{check_ndim, ArrayBase, DataMut, Handle, ReadNode, ViewRepr};
use crate::linalg::{describe, sliced_shape};

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

/// A mutable view's values and where they go back: the parent's elements (in the buffer the
/// parent handle owns, or the memory `aview_mut1` borrows), valid for the view's borrow.
pub(super) struct Back<A, D> {
    values: Option<NdArc<A, D>>,
    target: RawArrayViewMut<A, D>,
    /// `*to = from.clone()` (made where `A: Clone` is known).
    clone_into: unsafe fn(&A, *mut A),
}
unsafe fn clone_into<A: Clone>(from: &A, to: *mut A) {
    // SAFETY: `to` is an element of the parent, borrowed mutably by the view.
    unsafe { *to = from.clone() }
}
impl<A, D: Dimension> Back<A, D> {
    /// Writes the values into the parent.
    fn write(&self) {
        if let Some(v) = &self.values {
            // SAFETY: the parent's elements are still borrowed by the view being written.
            let to = unsafe { self.target.clone().deref_into_view_mut() };
            ndarray::Zip::from(to).and(v).for_each(|t, v| unsafe { (self.clone_into)(v, t) });
        }
    }
}
impl<A, D: Clone> Back<A, D> {
    /// The parent's elements seen as the view's are (`reversed_axes`, `swap_axes` of the view).
    pub(super) fn map_target(&mut self, f: impl FnOnce(RawArrayViewMut<A, D>) -> RawArrayViewMut<A, D>) {
        self.target = f(self.target.clone());
    }
}
/// Writes the `Back<A, D>` at `p` into its parent, and frees it.
unsafe fn finish<A, D: Dimension>(p: usize) {
    // SAFETY: `p` is a `Box<Back<A, D>>` given up by `Held::with_back`, finished once.
    let back = unsafe { Box::from_raw(p as *mut Back<A, D>) };
    back.write();
}

/// The `Drop` that writes a mutable view back. It names no type parameter, so a view's drop
/// is not a use of what it borrows: a view's borrow ends at its last use, as ndarray's does
/// (a generic `Drop` over the element type would keep every view's borrow to the end of its
/// scope: the element type is a projection of the storage type, `S::Elem`, which drop-check
/// does not see through).
struct Guard(Option<(usize, unsafe fn(usize))>);
// SAFETY: the guard is the view's values and its borrow of its parent; the handle holding it
// is `Send`/`Sync` only when its element type is (its `held`/`value` fields hold `A`s too).
unsafe impl Send for Guard {}
unsafe impl Sync for Guard {}
impl Drop for Guard {
    fn drop(&mut self) {
        if let Some((p, finish)) = self.0.take() {
            // SAFETY: see `finish`.
            unsafe { finish(p) }
        }
    }
}

/// A handle's own host value: of a mutable view, its values and way back (written back when
/// the handle is dropped).
pub(crate) struct Held<A, D> {
    v: Option<NdArc<A, D>>,
    back: Guard,
}
impl<A, D> Held<A, D> {
    pub(crate) fn new(v: Option<NdArc<A, D>>) -> Self {
        Held { v, back: Guard(None) }
    }
    fn with_back(back: Box<Back<A, D>>) -> Self
    where
        D: Dimension,
    {
        Held { v: None, back: Guard(Some((Box::into_raw(back) as usize, finish::<A, D>))) }
    }
    pub(super) fn back(&self) -> Option<&Back<A, D>> {
        // SAFETY: the guard holds a live `Box<Back<A, D>>` (see `with_back`).
        self.back.0.map(|(p, _)| unsafe { &*(p as *const Back<A, D>) })
    }
    pub(super) fn back_mut(&mut self) -> Option<&mut Back<A, D>> {
        // SAFETY: as `back`, borrowed mutably through `self`.
        self.back.0.map(|(p, _)| unsafe { &mut *(p as *mut Back<A, D>) })
    }
    /// The way back, taken out of the guard (nothing is written when the handle drops).
    fn take_back(&mut self) -> Option<Box<Back<A, D>>> {
        // SAFETY: as `back`; the guard gives the box up.
        self.back.0.take().map(|(p, _)| unsafe { Box::from_raw(p as *mut Back<A, D>) })
    }
    /// A mutable view's values and its parent's elements cut alike (`slice_move`,
    /// `index_axis_move` of a mutable view): the cut view still writes back.
    pub(super) fn cut_back<E: Dimension>(mut self, cut: &Cut) -> Held<A, E>
    where
        D: Dimension,
    {
        let back = self.take_back().expect("a mutable view's way back");
        let Back { values, target, clone_into } = *back;
        let target = cut.apply(target.into_dyn()).into_dimensionality::<E>().expect("a cut of the checked dimension");
        let values = values.map(|v| cut.apply(v.into_dyn()).into_dimensionality::<E>().expect("values cut as their parent's elements"));
        Held::with_back(Box::new(Back { values, target, clone_into }))
    }
    /// The value in dimension type `E` (the way back goes with it).
    pub(super) fn try_map_dim<E: Dimension, Er>(mut self, f: impl FnOnce(NdArc<A, D>) -> std::result::Result<NdArc<A, E>, Er>) -> std::result::Result<Held<A, E>, Er>
    where
        D: Dimension,
    {
        let Some(back) = self.take_back() else {
            return Ok(Held::new(self.v.take().map(f).transpose()?));
        };
        let target = back.target.clone().into_dimensionality::<E>();
        match (back.values.clone().map(f).transpose(), target) {
            (Ok(values), Ok(target)) => Ok(Held::with_back(Box::new(Back { values, target, clone_into: back.clone_into }))),
            (Err(e), _) => {
                // Written back when `self` drops: nothing the view wrote is lost.
                self.back = Guard(Some((Box::into_raw(back) as usize, finish::<A, D>)));
                Err(e)
            }
            (Ok(_), Err(_)) => unreachable!("the values and the parent's elements have one shape"),
        }
    }
}
impl<A, D> std::ops::Deref for Held<A, D> {
    type Target = Option<NdArc<A, D>>;
    fn deref(&self) -> &Self::Target {
        match self.back() {
            Some(b) => &b.values,
            None => &self.v,
        }
    }
}
impl<A, D> std::ops::DerefMut for Held<A, D> {
    fn deref_mut(&mut self) -> &mut Self::Target {
        if self.back.0.is_some() {
            &mut self.back_mut().expect("a mutable view's values").values
        } else {
            &mut self.v
        }
    }
}
impl<A, D: Clone> Clone for Held<A, D> {
    fn clone(&self) -> Self {
        Held::new((**self).clone())
    }
}

/// A handle's fields, moved out (to re-make the handle with another dimension type).
pub(super) struct Fields<A, D> {
    pub lazy: OnceLock<Lazy>,
    pub held: Held<A, D>,
    pub value: OnceLock<NdArc<A, D>>,
    pub home: Option<Arc<Session>>,
    pub read: ReadNode<A>,
}

impl<A, D> Handle<A, D> {
    /// The fields, moved out (a mutable view's way back goes with `held`; the lazy views
    /// kept go: nothing borrows a handle moved).
    pub(super) fn into_parts(self) -> Fields<A, D> {
        let Handle { lazy, held, value, home, read, views: _ } = self;
        Fields { lazy, held, value, home, read }
    }
    /// Whether this handle is a mutable view that writes back into its parent.
    pub(crate) fn writes_back(&self) -> bool {
        self.held.back().is_some()
    }
    /// The handle, moved out; a placeholder with neither node nor value is left (replaced
    /// before anything reads it).
    pub(super) fn take(&mut self) -> Handle<A, D> {
        let read = self.read;
        std::mem::replace(self, Handle::new(None, None, None, read))
    }
}

impl<A, D: Dimension> Handle<A, D> {
    /// Writes a mutable view's values back now, and ends its way back (what a view that becomes
    /// an owned array, or is iterated by value, does first); `None` for any other handle.
    pub(super) fn flush_back(&mut self) -> Option<RawArrayViewMut<A, D>> {
        let back = self.held.take_back()?;
        back.write();
        // The values stay the handle's own.
        let back = *back;
        *self.held = back.values;
        Some(back.target)
    }
    /// Swaps axes `a` and `b`: the value with its strides swapped, no copy (a lazy array is
    /// evaluated first; a mutable view's elements in its parent are swapped alike).
    #[track_caller]
    pub(super) fn swap_axes(&mut self, a: usize, b: usize) {
        self.evaluated();
        if let Some(l) = self.lazy.take() {
            self.home = Some(l.session().clone());
        }
        if self.held.is_none() {
            *self.held = self.value.take();
        }
        self.views = Kept::default();
        self.held.as_mut().expect("just evaluated").swap_axes(a, b);
        if let Some(back) = self.held.back_mut() {
            back.map_target(|mut t| {
                t.swap_axes(a, b);
                t
            });
        }
    }
}

/// A mutable view of the elements `target` (borrowed for `'a`): their values copied into the
/// handle, written back when it is dropped.
fn mut_view_of<'a, A: Clone, E: Dimension>(target: RawArrayViewMut<A, E>, home: Option<Arc<Session>>, read: ReadNode<A>) -> ArrayViewMut<'a, A, E> {
    // SAFETY: `target` is valid and unaliased for `'a` (the caller's mutable borrow).
    let value = unsafe { target.clone().deref_into_view() }.to_owned().into_shared();
    let held = Held::with_back(Box::new(Back { values: Some(value), target, clone_into: clone_into::<A> }));
    ArrayBase { repr: Handle { lazy: OnceLock::new(), held, value: OnceLock::new(), home, read, views: Kept::default() } }
}
/// [`mut_view_of`] elements cut from a parent's as a dynamic-dimension view.
fn mut_view_dyn<'a, A: Clone, E: Dimension>(target: RawArrayViewMut<A, IxDyn>, home: Option<Arc<Session>>, read: ReadNode<A>) -> Result<ArrayViewMut<'a, A, E>> {
    check_ndim::<E>("view_mut", target.shape())?;
    let target = target.into_dimensionality::<E>().map_err(|e| BachError::shape("view_mut", e.to_string()))?;
    Ok(mut_view_of(target, home, read))
}

impl<A: Clone, S: DataMut<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// The elements for a mutable view: evaluated, made this handle's own, and cut.
    fn mut_cut<E: Dimension>(&mut self, cut: Option<Cut>) -> Result<ArrayViewMut<'_, A, E>> {
        let home = Some(self.home());
        let read = self.handle_mut().read;
        let mut target = self.evaluated_mut().raw_view_mut().into_dyn();
        if let Some(c) = cut {
            target = c.apply(target);
        }
        mut_view_dyn(target, home, read)
    }
    /// The elements for a mutable view, cut by `f` in the array's own dimension type (no
    /// dynamic dimensions: the small-array path).
    fn mut_with<E: Dimension>(&mut self, f: impl FnOnce(RawArrayViewMut<A, D>) -> RawArrayViewMut<A, E>) -> ArrayViewMut<'_, A, E> {
        let home = Some(self.home());
        let read = self.handle_mut().read;
        let target = f(self.evaluated_mut().raw_view_mut());
        mut_view_of(target, home, read)
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
        let elems = info.as_ref().to_vec();
        if let Err(why) = sliced_shape(self.shape(), &elems) {
            panic!("{}", BachError::invalid("slice_mut", format!("{} of shape {:?}: {why}", describe(&elems), self.shape())));
        }
        self.mut_with(move |t| t.slice_move(info))
    }
    /// A mutable view of the slice `slice` of axis `axis` (ndarray's `slice_axis_mut`).
    #[track_caller]
    pub fn slice_axis_mut(&mut self, axis: Axis, slice: Slice) -> ArrayViewMut<'_, A, D> {
        let elems: Vec<SliceInfoElem> = (0..self.ndim()).map(|k| if k == axis.index() { SliceInfoElem::from(slice) } else { SliceInfoElem::from(..) }).collect();
        if let Err(why) = sliced_shape(self.shape(), &elems) {
            panic!("{}", BachError::invalid("slice_axis_mut", format!("{} of shape {:?}: {why}", describe(&elems), self.shape())));
        }
        crate::elementwise::or_panic(self.mut_cut(Some(Cut::Elems(Elems::of(&elems)))))
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
        crate::elementwise::or_panic(self.mut_cut(Some(Cut::Index(Axis(axis), index))))
    }
    /// Mutable views of the subviews along `axis` (ndarray's `axis_iter_mut`): each writes its
    /// elements back when it is dropped.
    #[track_caller]
    pub fn axis_iter_mut(&mut self, axis: Axis) -> AxisViewsMut<'_, A, D::Smaller>
    where
        D: RemoveAxis,
    {
        if axis.index() >= self.ndim() {
            panic!("{}", BachError::invalid("axis_iter_mut", format!("axis {} of an array of shape {:?}", axis.index(), self.shape())));
        }
        let home = Some(self.home());
        let read = self.handle_mut().read;
        let end = self.shape()[axis.index()];
        let target = self.evaluated_mut().raw_view_mut().into_dyn();
        AxisViewsMut { target, axis, next: 0, end, home, read, _marker: PhantomData }
    }
    /// [`ArrayBase::axis_iter_mut`] along the first axis (ndarray's `outer_iter_mut`).
    #[track_caller]
    pub fn outer_iter_mut(&mut self) -> AxisViewsMut<'_, A, D::Smaller>
    where
        D: RemoveAxis,
    {
        self.axis_iter_mut(Axis(0))
    }
}

impl<'a, A: Clone, D: Dimension> ArrayViewMut<'a, A, D> {
    /// The view as ndarray's, over the parent's own elements for all of `'a` (what the view
    /// wrote is written back first).
    pub fn into_nd_mut(mut self) -> ndarray::ArrayViewMut<'a, A, D> {
        let target = match self.handle_mut().flush_back() {
            Some(t) => t,
            // Not a view of a parent (never: every Bach mutable view has one).
            None => self.evaluated_mut().raw_view_mut(),
        };
        // SAFETY: the parent's elements, mutably borrowed for `'a`; the handle no longer writes.
        unsafe { target.deref_into_view_mut() }
    }
}

impl<'a, A: Clone, D: Dimension> ArrayViewMut<'a, A, D> {
    /// The view split in two mutable views along `axis` before `index` (ndarray's
    /// `split_at`).
    #[track_caller]
    pub fn split_at(mut self, axis: Axis, index: usize) -> (Self, Self) {
        let n = self.shape().get(axis.index()).copied().unwrap_or(0);
        if index > n {
            panic!("{}", BachError::invalid("split_at", format!("index {index} of axis {} of shape {:?}", axis.index(), self.shape())));
        }
        let (home, read) = (Some(self.home()), self.handle_mut().read);
        let target = self.handle_mut().flush_back().expect("a mutable view has a parent");
        let part = |range: std::ops::Range<usize>| {
            let mut t = target.clone();
            t.slice_axis_inplace(axis, Slice::from(range));
            mut_view_of(t, home.clone(), read)
        };
        (part(0..index), part(index..n))
    }
    /// The same view, borrowed for a shorter time (ndarray's `reborrow`).
    pub fn reborrow<'b>(&'b mut self) -> ArrayViewMut<'b, A, D> {
        self.view_mut()
    }
}

impl<A, D: Dimension> Handle<A, D> {
    /// The elements in a new shape, read in row-major order (ndarray's
    /// `into_shape_with_order`): an array's value (copied once into row-major order when it
    /// is strided); a mutable view's elements, still writing back into its parent (they must
    /// be contiguous in row-major order there, as ndarray's ask).
    #[track_caller]
    pub(super) fn reshape<E: Dimension>(mut self, dims: &[usize]) -> std::result::Result<Handle<A, E>, ndarray::ShapeError> {
        let incompatible = ndarray::ShapeError::from_kind;
        let e = E::from_dimension(&IxDyn(dims)).ok_or_else(|| incompatible(ndarray::ErrorKind::IncompatibleShape))?;
        if !self.writes_back() {
            let v = self.evaluated().clone();
            let v = if v.is_standard_layout() { v } else { crate::host::standard_layout(v).ok_or_else(|| incompatible(ndarray::ErrorKind::IncompatibleLayout))? };
            let home = self.home();
            return v.into_shape_with_order(e).map(|a| Handle::new(None, Some(a), Some(home), self.read));
        }
        let back = self.held.take_back().expect("a mutable view has its way back");
        let contiguous = back.target.is_standard_layout() && back.values.as_ref().is_none_or(|v| v.is_standard_layout());
        if !contiguous || dims.iter().product::<usize>() != back.target.len() {
            let kind = if contiguous { ndarray::ErrorKind::IncompatibleShape } else { ndarray::ErrorKind::IncompatibleLayout };
            // Written back when `self` drops: nothing the view wrote is lost.
            self.held.back = Guard(Some((Box::into_raw(back) as usize, finish::<A, D>)));
            return Err(incompatible(kind));
        }
        let Back { values, target, clone_into } = *back;
        // SAFETY: the same contiguous elements, still borrowed by this view.
        let target = unsafe { RawArrayViewMut::from_shape_ptr(e.clone(), target.as_ptr() as *mut A) };
        let values = values.map(|v| v.into_shape_with_order(e).expect("contiguous values of the same length"));
        let held = Held::with_back(Box::new(Back { values, target, clone_into }));
        let p = self.into_parts();
        Ok(Handle { lazy: p.lazy, held, value: OnceLock::new(), home: p.home, read: p.read, views: Kept::default() })
    }
}

/// `for x in view_mut`: references into the parent's elements, as ndarray's.
impl<'a, A: Clone, D: Dimension> IntoIterator for ArrayViewMut<'a, A, D> {
    type Item = &'a mut A;
    type IntoIter = ndarray::iter::IterMut<'a, A, D>;
    fn into_iter(self) -> Self::IntoIter {
        self.into_nd_mut().into_iter()
    }
}
/// `Zip::from(view_mut)` and `azip!` over a mutable view by value.
impl<'a, A: Clone, D: Dimension> ndarray::IntoNdProducer for ArrayViewMut<'a, A, D> {
    type Item = &'a mut A;
    type Dim = D;
    type Output = ndarray::ArrayViewMut<'a, A, D>;
    fn into_producer(self) -> Self::Output {
        self.into_nd_mut()
    }
}

/// A mutable view of `xs` (ndarray's `aview_mut1`).
pub fn aview_mut1<A: Clone>(xs: &mut [A]) -> ArrayViewMut1<'_, A> {
    let target = ndarray::ArrayViewMut1::from(xs).raw_view_mut();
    mut_view_of(target, None, super::no_node::<A>)
}
impl<'a, A: Clone> From<&'a mut [A]> for ArrayViewMut1<'a, A> {
    fn from(xs: &'a mut [A]) -> Self {
        aview_mut1(xs)
    }
}
/// An ndarray mutable view as a Bach one (its values copied into the handle, written back).
impl<'a, A: Clone, D: Dimension> From<ndarray::ArrayViewMut<'a, A, D>> for ArrayViewMut<'a, A, D> {
    fn from(mut v: ndarray::ArrayViewMut<'a, A, D>) -> Self {
        mut_view_of(v.raw_view_mut(), None, super::no_node::<A>)
    }
}
impl<'a, A: Clone, D: Dimension> ArrayViewMut<'a, A, D> {
    /// A mutable view of the elements at `ptr` in `shape` (ndarray's
    /// `ArrayViewMut::from_shape_ptr`).
    ///
    /// # Safety
    /// As ndarray's: every element the shape and strides reach is valid for `'a`, reached
    /// once, and used through this view alone while it lives.
    pub unsafe fn from_shape_ptr<Sh: Into<ndarray::StrideShape<D>>>(shape: Sh, ptr: *mut A) -> Self {
        // SAFETY: the caller's promise, as ndarray's.
        Self::from(unsafe { ndarray::ArrayViewMut::from_shape_ptr(shape, ptr) })
    }
}

/// `Iterator`, `ExactSizeIterator` and `DoubleEndedIterator` for an iterator of mutable views
/// that makes its item `i` with `self.at(i)` over `self.next..self.end`.
macro_rules! index_iterator {
    ($T:ident, $E:ident, $Item:ty) => {
        impl<'a, A: Clone, $E: Dimension> Iterator for $T<'a, A, $E> {
            type Item = $Item;
            fn next(&mut self) -> Option<Self::Item> {
                (self.next < self.end).then(|| {
                    self.next += 1;
                    self.at(self.next - 1)
                })
            }
            fn size_hint(&self) -> (usize, Option<usize>) {
                (self.end - self.next, Some(self.end - self.next))
            }
        }
        impl<A: Clone, $E: Dimension> ExactSizeIterator for $T<'_, A, $E> {}
        impl<A: Clone, $E: Dimension> DoubleEndedIterator for $T<'_, A, $E> {
            fn next_back(&mut self) -> Option<Self::Item> {
                (self.next < self.end).then(|| {
                    self.end -= 1;
                    self.at(self.end)
                })
            }
        }
    };
}

impl<A: Clone, S: DataMut<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// Mutable views of the 1-d lanes along `axis` (ndarray's `lanes_mut`), in row-major
    /// order of the other axes; each writes back when it is dropped.
    #[track_caller]
    pub fn lanes_mut(&mut self, axis: Axis) -> LanesMut<'_, A, D> {
        if axis.index() >= self.ndim() {
            panic!("{}", BachError::invalid("lanes_mut", format!("axis {} of an array of shape {:?}", axis.index(), self.shape())));
        }
        let (home, read) = (Some(self.home()), self.handle_mut().read);
        let outer: Vec<usize> = self.shape().iter().enumerate().filter(|&(k, _)| k != axis.index()).map(|(_, &n)| n).collect();
        let end = outer.iter().product();
        let target = self.evaluated_mut().raw_view_mut().into_dyn();
        LanesMut { target, axis: axis.index(), outer, next: 0, end, home, read, _marker: PhantomData }
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

/// The mutable 1-d lanes of an array ([`ArrayBase::lanes_mut`], `rows_mut`, `columns_mut`).
pub struct LanesMut<'a, A, D> {
    target: RawArrayViewMut<A, IxDyn>,
    axis: usize,
    outer: Vec<usize>,
    next: usize,
    end: usize,
    home: Option<Arc<Session>>,
    read: ReadNode<A>,
    _marker: PhantomData<(&'a mut A, D)>,
}
impl<'a, A: Clone, D: Dimension> LanesMut<'a, A, D> {
    fn at(&self, mut i: usize) -> ArrayViewMut1<'a, A> {
        // The lane's index over the other axes, last axis fastest; cut from the last axis down.
        let mut t = self.target.clone();
        for k in (0..self.outer.len()).rev() {
            let ax = if k >= self.axis { k + 1 } else { k };
            let n = self.outer[k];
            t = t.index_axis_move(Axis(ax), i % n);
            i /= n;
        }
        crate::elementwise::or_panic(mut_view_dyn(t, self.home.clone(), self.read))
    }
}
index_iterator!(LanesMut, D, ArrayViewMut1<'a, A>);
/// `Zip::from(a.rows_mut())`, as over ndarray's `LanesMut` (its items ndarray's views).
impl<'a, A: Clone + 'a, D: Dimension + 'a> ndarray::IntoNdProducer for LanesMut<'a, A, D> {
    type Item = ndarray::ArrayViewMut1<'a, A>;
    type Dim = D::Smaller;
    type Output = ndarray::iter::LanesMut<'a, A, D::Smaller>;
    fn into_producer(self) -> Self::Output {
        // SAFETY: the array's elements, mutably borrowed for `'a`.
        let v = unsafe { self.target.deref_into_view_mut() };
        let mut v = v.into_dimensionality::<D>().expect("the array's own dimension type");
        let lanes = v.lanes_mut(Axis(self.axis));
        // ndarray's `LanesMut` holds the elements' address, shape and strides by value, not a
        // reference to the local view: it lives as long as the elements' borrow, `'a`.
        crate::array::same_type(lanes)
    }
}

/// The mutable subviews of an array along one axis ([`ArrayBase::axis_iter_mut`]).
pub struct AxisViewsMut<'a, A, E> {
    target: RawArrayViewMut<A, IxDyn>,
    axis: Axis,
    next: usize,
    end: usize,
    home: Option<Arc<Session>>,
    read: ReadNode<A>,
    _marker: PhantomData<(&'a mut A, E)>,
}
impl<'a, A: Clone, E: Dimension> AxisViewsMut<'a, A, E> {
    fn at(&self, i: usize) -> ArrayViewMut<'a, A, E> {
        let t = self.target.clone().index_axis_move(self.axis, i);
        crate::elementwise::or_panic(mut_view_dyn(t, self.home.clone(), self.read))
    }
}
index_iterator!(AxisViewsMut, E, ArrayViewMut<'a, A, E>);
/// `Zip::from(a.outer_iter_mut())`, as over ndarray's `AxisIterMut` (its items ndarray's views).
impl<'a, A: Clone + 'a, E: Dimension> ndarray::IntoNdProducer for AxisViewsMut<'a, A, E> {
    type Item = ndarray::ArrayViewMut<'a, A, E>;
    type Dim = Ix1;
    type Output = ndarray::iter::AxisIterMut<'a, A, E>;
    fn into_producer(self) -> Self::Output {
        // SAFETY: the array's elements, mutably borrowed for `'a`.
        let v = unsafe { self.target.deref_into_view_mut() };
        let mut v = v.slice_axis_move(self.axis, Slice::from(self.next..self.end));
        v.swap_axes(0, self.axis.index());
        let v = v.into_dimensionality::<E::Larger>().expect("the array's own dimension type");
        // `E::Larger`'s `Smaller` is `E` for the static dimension types and `IxDyn`.
        #[allow(deprecated)] // (its replacement is `outer_iter_mut`, which borrows the local view)
        crate::array::same_type(v.into_outer_iter())
    }
}

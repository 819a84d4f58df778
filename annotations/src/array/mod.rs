//! Bach's array family: `ArrayBase<S, D>`, an n-d array of `S::Elem` with ndarray's
//! dimension type `D` (`Ix0`..`Ix6`, or `IxDyn`, the default: Bach's own dialect writes
//! `Array<f64>`) and ndarray's storage kinds `S` (`storage.rs`), so that every prelude name is
//! what ndarray's is: `Array`, `ArcArray`, `ArrayView`, `CowArray` and their `1`..`6`, `D`
//! forms, with `Data`, `DataMut`, `DataOwned`, `RawData`. Library code generic over
//! `S: Data<Elem = f64>` and `D: Dimension` takes Bach's arrays and views as it takes
//! ndarray's, and mutable views (`view_mut()`, `row_mut()`, `slice_mut()`) too.
//!
//! The room, by aspect, as ndarray organises its API:
//! - `mod.rs`: the handle, its invariants, evaluation and the way a value reaches the graph;
//! - `storage.rs`: the storage kinds and traits;
//! - `views.rs`: views (`view`, `t`, `slice`, `row`, `index_axis`, `outer_iter`...), the owned
//!   forms (`to_owned`, `into_shared`...), `arr1`/`aview1`, `stack`/`concatenate`, and the
//!   way out to ndarray crates (`as_nd`, `into_nd`, `From`);
//! - `operators.rs`: `+ - * / %` and `-` between any members of the family and scalars;
//! - constructors are `alloc.rs`, host access, iteration and mutation `host.rs`, integer
//!   arithmetic `host_ops.rs`, the annotated math `elementwise.rs`, `reduce.rs`, `linalg.rs`.
//!
//! **Which path a method takes.** Every method is one of three kinds:
//! 1. *Lazy* (the annotated ops: arithmetic, math, reductions, `dot`, `t`, `slice`, `row`,
//!    `column`, `index_axis` of a lazy array): a graph node, planned and placed when a value
//!    is needed. Small host values (at most `eager_max_elements`, 4096 by default) skip the
//!    graph and compute at once, the same arithmetic on the CPU.
//! 2. *Views of host values* (`view`, `t`, `slice`, `row`... of an array that holds its
//!    value): ndarray's view of the parent's elements, `Copy` as ndarray's; no copy and no
//!    node. Mutable views are ndarray's mutable views of the parent's own elements.
//! 3. *Through ndarray* (iteration, indexing, closures: `mapv`, `map`, `fold`, `iter`,
//!    `a[[i, j]]`, mutation): the value is evaluated where the code touches it (the trace
//!    says why), and ndarray runs on it.
//!
//! Representations (`storage.rs`): an array (and a copy-on-write array) is a [`Handle`]: a
//! graph node (`lazy`) and/or a host value (`held`, or `value` once computed). A mutation
//! makes the handle's value its own (copy on write: no other handle or node ever sees it
//! change) and drops the node; the next annotated call makes a new source node of the mutated
//! value (in standard layout). Invariant: at least one of `lazy` and `value`/`held` is set;
//! when both are, they hold the same values. A view is ndarray's view of host elements, or of
//! a lazy array a lazy cut (a `LazyView`: a handle of a slice node) that the array keeps
//! until it is dropped or written (`Kept`: no view of it lives then). A view used by an
//! annotated call computes with its elements at once (small) or becomes a graph source.

use std::fmt;
use std::marker::PhantomData;
use std::sync::{Arc, OnceLock};

use bach_runtime::{session, Annotation, BachError, Element, Family, Home, Lazy, Meta, OpCtx, Plan, Result, Value, ValueRef};
use ndarray::{ArcArray as NdArc, Dimension, Ix0, Ix1, Ix2, Ix3, Ix4, Ix5, Ix6, IxDyn};

pub(crate) mod layout;
pub(crate) mod pool;
pub mod storage;
mod views;
mod views_mut;
mod zip;

pub use storage::{CowRepr, Data, DataMut, DataOwned, OwnedArcRepr, OwnedRepr, RawData, RawDataClone, RawDataMut, ViewRepr, ViewsMut};
pub use views::{arr0, arr1, arr2, arr3, aview0, aview1, aview2, concatenate, stack, AxisViews, Lanes};
pub use views_mut::{
    aview_mut1, ArrayViewMut, ArrayViewMut0, ArrayViewMut1, ArrayViewMut2, ArrayViewMut3, ArrayViewMut4, ArrayViewMut5, ArrayViewMut6, ArrayViewMutD, AxisViewsMut, LanesMut,
};
pub use zip::Zip;

/// An n-d array of `S::Elem` with dimension type `D` and storage kind `S` (ndarray's
/// `ArrayBase`: see [`storage`] for the kinds). Cheap to clone, `Send + Sync`; a view is
/// `Copy` (for the static dimension types), as ndarray's.
///
/// Arrays of Bach's graph element types (f64, f32, i64, bool: `bach_runtime::Element`) are
/// lazy: annotated calls add graph nodes, planned and placed. Arrays of any other element
/// type (`u8`, `i32`, `usize`, `char`, a user's struct, ...) are host arrays: every op on
/// them runs at once, through ndarray, as in ndarray (`host.rs`).
///
/// The owned kinds and mutable views are a [`Handle`] (a node and/or a host value); a view is
/// the borrowed elements on the host, or, of a lazy array, a lazy cut its parent keeps
/// (`views.rs`).
#[repr(transparent)]
pub struct ArrayBase<S: RawData, D = IxDyn> {
    repr: S::Repr<D>,
}

/// What an array or mutable view holds.
///
/// In the declared order (`repr(C)`), the held value first. Left to rustc, it followed a
/// `OnceLock`'s 4-byte state, and a new handle's value was copied with that padding, 4 bytes
/// off its alignment, through a temporary read back across two stores (a store-forwarding
/// stall: a third of a small product's own time).
#[doc(hidden)]
#[repr(C)]
pub struct Handle<A, D> {
    /// The value when the handle was made with it or wrote it (a host value).
    held: Option<NdArc<A, D>>,
    /// The graph node; empty after a mutation until an annotated call needs one.
    lazy: OnceLock<Lazy>,
    /// The evaluated value, kept by the handle so indexing can hand out references (boxed:
    /// only a lazy array has one, and a handle of at most 128 bytes is moved without a call
    /// to `memmove`: the small-array path makes and drops one for every op).
    value: OnceLock<Box<NdArc<A, D>>>,
    /// The session a node made later from `value` goes to (set when `lazy` is empty).
    home: Option<Home>,
    /// How `lazy`'s value becomes an `A` array (set by the graph element types' constructors;
    /// host arrays never have a node).
    read: ReadNode<A>,
    /// The lazy views of this array, kept while it lives (`views.rs`).
    views: views::Kept,
    /// Where `held` goes when the handle is dropped: back to the thread's spent small values
    /// (`pool.rs`; set for the operators' small results), or `None`: freed.
    give_back: Option<GiveBack<A, D>>,
}

/// How a handle gives its held value back to the pool (`pool::give_back`).
pub(crate) type GiveBack<A, D> = fn(&mut Option<NdArc<A, D>>);

impl<A, D> Drop for Handle<A, D> {
    fn drop(&mut self) {
        if let (Some(give_back), false) = (self.give_back, self.views.any()) {
            // (By reference: the pool takes the value only when it keeps it, and moves it
            // once.)
            give_back(&mut self.held);
        }
    }
}

/// An owned n-d array of `A` with dimension type `D` (`IxDyn` by default: Bach's own dialect
/// writes `Array<f64>`).
pub type Array<A, D = IxDyn> = ArrayBase<OwnedRepr<A>, D>;
/// A view borrowing an array for `'a` (ndarray's `ArrayView`).
pub type ArrayView<'a, A, D> = ArrayBase<ViewRepr<&'a A>, D>;
pub type ArrayView0<'a, A> = ArrayView<'a, A, Ix0>;
pub type ArrayView1<'a, A> = ArrayView<'a, A, Ix1>;
pub type ArrayView2<'a, A> = ArrayView<'a, A, Ix2>;
pub type ArrayView3<'a, A> = ArrayView<'a, A, Ix3>;
pub type ArrayView4<'a, A> = ArrayView<'a, A, Ix4>;
pub type ArrayView5<'a, A> = ArrayView<'a, A, Ix5>;
pub type ArrayView6<'a, A> = ArrayView<'a, A, Ix6>;
pub type ArrayViewD<'a, A> = ArrayView<'a, A, IxDyn>;
/// A borrowed or owned array (ndarray's `CowArray`).
pub type CowArray<'a, A, D> = ArrayBase<CowRepr<'a, A>, D>;

/// Reads a node's computed value as an array of `A`.
pub(crate) type ReadNode<A> = fn(&Lazy) -> Result<NdArc<A, IxDyn>>;

/// The value, or a panic with the error's text at the caller's line (the infallible
/// ndarray-style methods; their `try_` twins return the error).
#[track_caller]
pub(crate) fn or_panic<T>(r: Result<T>) -> T {
    r.unwrap_or_else(|e| panic!("{e}"))
}

/// `a`, an array of `A`s of any storage kind, read as an array of `F`s, where `A` is `F`
/// (checked by the caller): an array's own handle (no handle is cloned on the operators' fast
/// path); a view's elements on the host as an array of them.
pub(crate) fn as_float<F: Clone, A, S: Data<Elem = A>, D: Dimension>(a: &ArrayBase<S, D>) -> std::borrow::Cow<'_, Array<F, D>> {
    match float_parts::<F, A, S, D>(a) {
        FloatParts::Array(a) => std::borrow::Cow::Borrowed(a),
        // A view's elements on the host: an array of them (copied).
        FloatParts::View(v) => std::borrow::Cow::Owned(Array::from_nd_view(&v.nd())),
    }
}

/// `a`, an array of `A`s of any storage kind, read as `F`s where `A` is `F` (checked by the
/// caller) with no copy: an array's own handle, or a view's elements on the host as a view
/// of the family (the operators' fast path takes either; [`as_float`] copies a view).
pub(crate) enum FloatParts<'r, F, D> {
    Array(&'r Array<F, D>),
    View(ArrayView<'r, F, D>),
}
pub(crate) fn float_parts<F, A, S: Data<Elem = A>, D: Dimension>(a: &ArrayBase<S, D>) -> FloatParts<'_, F, D> {
    assert!(crate::array::type_id::<A>() == crate::array::type_id::<F>());
    match a.parts() {
        // SAFETY: `A` is `F`, and an `Array<F, D>` is its `Handle<F, D>` (`repr(transparent)`).
        Parts::Handle(h) => FloatParts::Array(unsafe { &*(h as *const Handle<A, D>).cast::<Array<F, D>>() }),
        Parts::Host(v) => FloatParts::View(ArrayView::detached(same_type::<ndarray::ArrayView<'_, A, D>, ndarray::ArrayView<'_, F, D>>(v))),
    }
}

/// `a` as an array of `F`s (one of Bach's element types), when its elements are `F`s.
pub(crate) fn as_real<F: Clone, A, S: Data<Elem = A>, D: Dimension>(a: &ArrayBase<S, D>) -> Option<std::borrow::Cow<'_, Array<F, D>>> {
    (crate::array::type_id::<A>() == crate::array::type_id::<F>()).then(|| as_float::<F, A, S, D>(a))
}

/// A graph node's value as an `A` array (evaluates it).
pub(crate) fn read_node<A: Element>(lazy: &Lazy) -> Result<NdArc<A, IxDyn>> {
    let v = lazy.eval()?;
    v.array::<A>().cloned().ok_or_else(|| BachError::dtype("eval", A::DTYPE, v.meta().dtype))
}

/// `f64()` when `A` may be f64, `f32()` when it may be f32, else `None`: each still checks
/// `A`'s type when it runs, as before. Which one may be is decided by `A`'s size when the
/// code is compiled (`if const`), so a cell working in f64 compiles only the f64 path, not
/// an f32 twin of every Bach function it reaches (the twin was about a third of what a
/// 3-line f64 cell compiled).
#[inline(always)]
pub(crate) fn f64_or_f32<A, T>(f64: impl FnOnce() -> Option<T>, f32: impl FnOnce() -> Option<T>) -> Option<T> {
    if const { std::mem::size_of::<A>() == 8 } {
        f64()
    } else if const { std::mem::size_of::<A>() == 4 } {
        f32()
    } else {
        None
    }
}

/// `A`'s dtype and node reader when it is one of the graph's element types (f64, f32, i64,
/// bool): what code generic over any element type (`Array::zeros`) asks before it makes a
/// node.
pub(crate) fn graph_element<A>() -> Option<GraphElement<A>> {
    fn of<B: Element, A>() -> Option<GraphElement<A>> {
        if crate::array::type_id::<A>() != crate::array::type_id::<B>() {
            return None;
        }
        let g = GraphElement::<B> { dtype: B::DTYPE, read: read_node::<B>, wrap: B::wrap };
        // SAFETY: `A` is `B` (the same type id; `B` has no lifetimes to erase).
        Some(unsafe { std::mem::transmute_copy::<GraphElement<B>, GraphElement<A>>(&g) })
    }
    of::<f64, A>().or_else(of::<f32, A>).or_else(of::<i64, A>).or_else(of::<bool, A>)
}

/// `T`'s type id for any `T` (`TypeId::of` asks `T: 'static`, which code generic over its
/// element type does not give; ndarray's methods do not ask it), with lifetimes erased: what
/// [`graph_element`] compares with f64, f32, i64 and bool, which have none. The technique of
/// the `typeid` crate, in the crate to keep the notebook's dependency graph as it is.
pub(crate) fn type_id<T: ?Sized>() -> std::any::TypeId {
    trait NonStaticAny {
        fn get_type_id(&self) -> std::any::TypeId
        where
            Self: 'static;
    }
    impl<T: ?Sized> NonStaticAny for PhantomData<T> {
        fn get_type_id(&self) -> std::any::TypeId
        where
            Self: 'static,
        {
            std::any::TypeId::of::<T>()
        }
    }
    let phantom = PhantomData::<T>;
    // SAFETY: only the type id is read, and a type's id does not depend on its lifetimes.
    NonStaticAny::get_type_id(unsafe { std::mem::transmute::<&dyn NonStaticAny, &(dyn NonStaticAny + 'static)>(&phantom) })
}

/// `t` as a `U`, when they are one type (checked: a panic otherwise, never a reinterpretation).
pub(crate) fn same_type<T, U>(t: T) -> U {
    assert!(crate::array::type_id::<T>() == crate::array::type_id::<U>(), "bach: {} is not {}", std::any::type_name::<T>(), std::any::type_name::<U>());
    let t = std::mem::ManuallyDrop::new(t);
    // SAFETY: `T` and `U` are the same type (the same type id).
    unsafe { std::mem::transmute_copy::<T, U>(&t) }
}

/// A mutable view of the elements of `v`, with no `A: Clone` asked (ndarray's `view_mut` of
/// a shared array asks it, for its copy on write), in `v`'s own shape and strides.
///
/// # Safety
/// No one else holds `v`'s value (`is_unique`), so for the view's life its elements have one
/// writer.
pub(crate) unsafe fn unique_view_mut<A, D: Dimension>(v: &mut NdArc<A, D>) -> ndarray::ArrayViewMut<'_, A, D> {
    debug_assert!(v.is_unique());
    // ndarray's views are made at the lowest address with non-negative strides, then the
    // axes with negative strides turned back (`invert_axis`): the same first element.
    let (low, flipped) = lowest_address(v.shape(), v.strides());
    let mut strides = v.raw_dim();
    for (s, &t) in strides.slice_mut().iter_mut().zip(v.strides()) {
        *s = t.unsigned_abs();
    }
    use ndarray::ShapeBuilder;
    // SAFETY: the caller's promise; the shape and (absolute) strides from the lowest address
    // reach the same elements as `v`'s.
    let mut view = unsafe { ndarray::ArrayViewMut::from_shape_ptr(v.raw_dim().strides(strides), (v.as_ptr() as *mut A).offset(low)) };
    for k in (0..view.ndim()).filter(|k| flipped & (1 << k) != 0) {
        view.invert_axis(ndarray::Axis(k));
    }
    view
}

/// The offset (in elements) from the first element of a strided value to its lowest address,
/// and its axes of negative stride (a bit each; at most 64 axes).
fn lowest_address(shape: &[usize], strides: &[isize]) -> (isize, u64) {
    let (mut offset, mut flipped) = (0isize, 0u64);
    for (k, (&n, &s)) in shape.iter().zip(strides).enumerate() {
        if s < 0 && n > 0 && k < 64 {
            offset += (n as isize - 1) * s;
            flipped |= 1 << k;
        }
    }
    (offset, flipped)
}

/// `v` as a `B` when `A` is `B` (see [`graph_element`]).
pub(crate) fn same<A, B: Copy + 'static>(v: &A) -> Option<B> {
    (type_id::<A>() == type_id::<B>()).then(|| *same_type::<&A, &B>(v))
}

/// What code generic over any element type needs to make a graph node of `A`s.
pub(crate) struct GraphElement<A> {
    pub dtype: bach_runtime::DType,
    pub read: ReadNode<A>,
    pub wrap: fn(NdArc<A, IxDyn>) -> Value,
}
impl<A> Clone for GraphElement<A> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<A> Copy for GraphElement<A> {}

/// Host arrays have no node.
fn no_node<A>(lazy: &Lazy) -> Result<NdArc<A, IxDyn>> {
    Err(BachError::invalid("eval", format!("{} is not an array of a graph element type", lazy.meta())))
}

/// Ops whose arguments are all host values of at most the session's `eager_max_elements`
/// (4096 by default, never above this) elements (and whose result is no larger) run at once
/// on the CPU, with no graph node and no plan: a plan costs tens of
/// microseconds, an op on a few hundred elements well under one (ndarray code loops over
/// small arrays: a Runge-Kutta step, a 3-vector). Ops of larger arrays, or of lazy values,
/// are planned and placed. Rust closures (`mapv_lazy`), a cell that pins its ops
/// (`:bach cell gpu`) and the `greedy` policy always go through the graph.
/// The session's `eager_max_elements` (`BACH_EAGER_MAX`) lowers it; 0 turns it off.
pub const EAGER_MAX_ELEMENTS: usize = 1 << 16;

/// What a storage kind's representation is: a handle (arrays, mutable views, a view of a lazy
/// array), or elements on the host (a view of a host value).
#[doc(hidden)]
pub enum Parts<'r, A, D> {
    Handle(&'r Handle<A, D>),
    Host(ndarray::ArrayView<'r, A, D>),
}

/// A shared array (ndarray's `ArcArray`): every Bach array shares its buffer until written,
/// so this is an [`Array`] by another name.
pub type ArcArray<A, D> = ArrayBase<OwnedArcRepr<A>, D>;
pub type ArcArray1<A> = ArcArray<A, Ix1>;
pub type ArcArray2<A> = ArcArray<A, Ix2>;
pub type CowArray1<'a, A> = CowArray<'a, A, Ix1>;
pub type CowArray2<'a, A> = CowArray<'a, A, Ix2>;

/// Where a value is asked to be computed ([`Array::on`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Device {
    Cpu,
    /// The session's accelerator (a CUDA GPU, or the emulated one); with several, the first,
    /// its pieces spread over the others as the plan decides.
    Gpu,
    /// Where the placement policy puts it.
    Auto,
    /// Accelerator number `k` as `:bach devices` lists it (`[k]`, from 1), alone: its ops are
    /// not spread over the others ([`Device::gpu`]).
    Accelerator(u8),
}

impl Device {
    /// Accelerator number `k` (`Device::gpu(2)`: the second), as `:bach devices` numbers them.
    pub const fn gpu(k: u8) -> Device {
        Device::Accelerator(k)
    }
}

/// A plan's explanation ([`Array::explain`]): shown as text in a notebook.
#[derive(Clone, PartialEq)]
pub struct Explanation(pub String);

/// The text itself, as `Display`: a cell ending in `y.explain()` shows `Ok(` and the table,
/// not an escaped string.
impl std::fmt::Debug for Explanation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.trim_end())
    }
}

impl std::fmt::Display for Explanation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Explanation {
    /// How evcxr shows it when it ends a cell.
    pub fn evcxr_display(&self) {
        println!("{}", bach_wire::line::evcxr_content("text/plain", self.0.trim_end()));
    }
}

/// ndarray's aliases: the dimension is part of the type, as in ndarray.
pub type Array0<A> = Array<A, Ix0>;
pub type Array1<A> = Array<A, Ix1>;
pub type Array2<A> = Array<A, Ix2>;
pub type Array3<A> = Array<A, Ix3>;
pub type Array4<A> = Array<A, Ix4>;
pub type Array5<A> = Array<A, Ix5>;
pub type Array6<A> = Array<A, Ix6>;
pub type ArrayD<A> = Array<A, IxDyn>;

impl<S: RawDataClone, D: Dimension> Clone for ArrayBase<S, D> {
    fn clone(&self) -> Self {
        ArrayBase { repr: S::clone_repr(&self.repr) }
    }
}
/// A view is `Copy`, as ndarray's (for the static dimension types).
impl<S: RawDataClone, D: Dimension + Copy> Copy for ArrayBase<S, D> where S::Repr<D>: Copy {}

impl<A, D: Clone> Clone for Handle<A, D> {
    fn clone(&self) -> Self {
        Handle {
            lazy: self.lazy.clone(),
            held: self.held.clone(),
            value: self.value.clone(),
            home: self.home.clone(),
            read: self.read,
            views: views::Kept::default(),
            give_back: self.give_back,
        }
    }
}

/// Anything that is a handle to a graph node.
pub trait AsLazy {
    fn as_lazy(&self) -> Lazy;
}
impl AsLazy for Lazy {
    fn as_lazy(&self) -> Lazy {
        self.clone()
    }
}
impl<A: Element, S: Data<Elem = A>, D: Dimension> AsLazy for ArrayBase<S, D> {
    fn as_lazy(&self) -> Lazy {
        self.lazy()
    }
}

/// Evaluate several values in one pass: work they share is done once, each is cached.
pub fn evaluate(values: &[&dyn AsLazy]) -> Result<()> {
    let Some(first) = values.first() else { return Ok(()) };
    let lazies: Vec<Lazy> = values.iter().map(|v| v.as_lazy()).collect();
    let refs: Vec<&Lazy> = lazies.iter().collect();
    first.as_lazy().session().evaluate(&refs).map(|_| ())
}

/// A shape argument, as ndarray's (`ShapeBuilder`): `n` (1-d), `(rows, cols)` and tuples up
/// to 6 (2-d to 6-d), `[n; N]` arrays, `Ix2(..)`-style dimensions, a generic `D: Dimension`
/// (`x.raw_dim()`), `(m, n).f()`, or a `Vec`/slice/`IxDyn` (dynamic).
pub trait ShapeArg {
    /// The dimension type of an array of this shape.
    type Dim: Dimension;
    fn dims(self) -> Vec<usize>;
    /// The axes' lengths, and whether the shape asks for column-major order (`(m, n).f()`).
    fn dims_order(self) -> (Vec<usize>, bool);
    /// `v` as an ndarray array of this shape, its elements read in the order the shape asks
    /// for (row-major, or column-major for `(m, n).f()`), as ndarray's `from_shape_vec`.
    fn array_of_vec<A>(self, v: Vec<A>) -> std::result::Result<ndarray::Array<A, Self::Dim>, ndarray::ShapeError>;
}
impl<T: ndarray::ShapeBuilder> ShapeArg for T {
    type Dim = T::Dim;
    fn dims(self) -> Vec<usize> {
        self.into_shape_with_order().raw_dim().slice().to_vec()
    }
    fn dims_order(self) -> (Vec<usize>, bool) {
        let shape = self.into_shape_with_order();
        let dims = shape.raw_dim().slice().to_vec();
        // ndarray keeps the order private: an array of no-size elements in this shape says it.
        let f = dims.len() > 1 && ndarray::Array::<(), T::Dim>::from_shape_vec(shape, vec![(); dims.iter().product()]).is_ok_and(|z| !z.is_standard_layout());
        (dims, f)
    }
    fn array_of_vec<A>(self, v: Vec<A>) -> std::result::Result<ndarray::Array<A, T::Dim>, ndarray::ShapeError> {
        ndarray::Array::from_shape_vec(self, v)
    }
}

/// One of the five arithmetic operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Rem,
}

/// The right-hand side of a binary op on an `Array<A, D>`: an array or view of the family (of
/// any dimension type: the result's is ndarray's `DimMax` of the two, as broadcasting gives),
/// an ndarray array or view (of the common element types), or a scalar of the element type
/// (any `ScalarOperand`, as ndarray's operators take).
pub trait Operand<A, D: Dimension> {
    /// The dimension type of the result.
    type Out: Dimension;
    /// A node for this operand in `like`'s session (graph element types only).
    fn node(&self, like: &Lazy) -> Lazy;
    /// Its value, when it is on the host already (a scalar always is; graph element types).
    fn host_value(&self) -> Option<Value>;
    /// Its value on the host, to compute with directly (the small-array fast path).
    fn host(&self) -> Option<Host<'_, A>>;
    /// Its value on the host as a view of dimension type `E`, when it is an array of `E`'s
    /// axes (the fast path's common case: no dynamic dimensions).
    fn host_as<E: Dimension>(&self) -> Option<ndarray::ArrayView<'_, A, E>> {
        None
    }
    /// Its value on the host, evaluated here when it is not (a failure panics at the
    /// caller's line, as evaluating for ndarray code does).
    fn evaluated_host(&self) -> Host<'_, A>;
}

/// An operand's value on the host.
pub enum Host<'a, A> {
    Array(ndarray::ArrayViewD<'a, A>),
    Scalar(A),
}

/// `v` as a graph value, when `A` is a graph element type.
fn wrap_any<A>(v: NdArc<A, IxDyn>) -> Option<Value> {
    graph_element::<A>().map(|g| (g.wrap)(v))
}

impl<A: Clone, S: Data<Elem = A>, D: Dimension + ndarray::DimMax<E>, E: Dimension> Operand<A, D> for ArrayBase<S, E> {
    type Out = <D as ndarray::DimMax<E>>::Output;
    fn node(&self, like: &Lazy) -> Lazy {
        match self.handle().and_then(Handle::node) {
            Some(l) => l.clone(),
            None => like.session().source(Operand::<A, D>::host_value(self).expect("an array of a graph element type"), "host value"),
        }
    }
    fn host_value(&self) -> Option<Value> {
        match self.parts() {
            Parts::Handle(h) => h.value_ref().and_then(standard),
            Parts::Host(v) => layout::row_major(&v),
        }
        .and_then(|v| wrap_any(v.into_dyn()))
    }
    fn host(&self) -> Option<Host<'_, A>> {
        self.host_view().map(|v| Host::Array(v.into_dyn()))
    }
    fn host_as<F: Dimension>(&self) -> Option<ndarray::ArrayView<'_, A, F>> {
        self.host_view()?.into_dimensionality::<F>().ok()
    }
    #[track_caller]
    fn evaluated_host(&self) -> Host<'_, A> {
        Host::Array(self.evaluated().view().into_dyn())
    }
}
/// A reference operates as the array does.
impl<A: Clone, S: Data<Elem = A>, D: Dimension + ndarray::DimMax<E>, E: Dimension> Operand<A, D> for &ArrayBase<S, E> {
    type Out = <D as ndarray::DimMax<E>>::Output;
    fn node(&self, like: &Lazy) -> Lazy {
        Operand::<A, D>::node(*self, like)
    }
    fn host_value(&self) -> Option<Value> {
        Operand::<A, D>::host_value(*self)
    }
    fn host(&self) -> Option<Host<'_, A>> {
        Operand::<A, D>::host(*self)
    }
    fn host_as<F: Dimension>(&self) -> Option<ndarray::ArrayView<'_, A, F>> {
        Operand::<A, D>::host_as(*self)
    }
    #[track_caller]
    fn evaluated_host(&self) -> Host<'_, A> {
        Operand::<A, D>::evaluated_host(*self)
    }
}
/// The right side of `a op= rhs` (`+=`, `-=`, ...): a scalar, or an array or view of the family
/// or of ndarray of *any* dimension type, broadcast to the left's shape when it runs (as
/// ndarray's op-assign operators ask no `DimMax` of the two dimension types: generic code
/// with `D` and `E` unrelated writes `*target += source`).
pub trait AssignOperand<A, D: Dimension> {
    /// The operand, seen as an [`Operand`] whose result has the left's dimension type.
    type As<'r>: Operand<A, D, Out = D>
    where
        Self: 'r;
    fn as_operand(&self) -> Self::As<'_>;
}

/// What `a.assign(&b)` copies from: an array or view of the family or of ndarray, of any
/// dimension type that broadcasts to `a`'s shape (as ndarray's `assign`).
pub trait AssignFrom<A> {
    /// Copies these values into `to` (named apart from ndarray's `assign_to`, which a Bach
    /// array reaches through `Deref` where this trait is in scope too).
    fn assign_into<D: Dimension>(self, to: ndarray::ArrayViewMut<'_, A, D>);
}
impl<A: Clone, S: Data<Elem = A>, E: Dimension> AssignFrom<A> for &ArrayBase<S, E> {
    #[track_caller]
    fn assign_into<D: Dimension>(self, mut to: ndarray::ArrayViewMut<'_, A, D>) {
        to.assign(&self.evaluated().view());
    }
}
impl<A: Clone, S: ndarray::Data<Elem = A>, E: Dimension> AssignFrom<A> for &ndarray::ArrayBase<S, E> {
    #[track_caller]
    fn assign_into<D: Dimension>(self, mut to: ndarray::ArrayViewMut<'_, A, D>) {
        to.assign(self);
    }
}

/// An array operand read with the left's dimension type `D` (see [`AssignOperand`]).
pub struct SameDim<'r, T>(&'r T);

impl<A: ndarray::ScalarOperand, D: Dimension> AssignOperand<A, D> for A {
    type As<'r> = A;
    fn as_operand(&self) -> A {
        self.clone()
    }
}
impl<A: Clone, S: Data<Elem = A>, D: Dimension, E: Dimension> AssignOperand<A, D> for ArrayBase<S, E> {
    type As<'r>
        = SameDim<'r, ArrayBase<S, E>>
    where
        Self: 'r;
    fn as_operand(&self) -> Self::As<'_> {
        SameDim(self)
    }
}
impl<A: Clone, S: Data<Elem = A>, D: Dimension, E: Dimension> AssignOperand<A, D> for &ArrayBase<S, E> {
    type As<'r>
        = SameDim<'r, ArrayBase<S, E>>
    where
        Self: 'r;
    fn as_operand(&self) -> Self::As<'_> {
        SameDim(*self)
    }
}
/// Forwards to `T`'s own operand impl at its own dimension type (`E: DimMax<E>` always holds).
macro_rules! same_dim_forward {
    ($A:ty, $E:ident) => {
        fn node(&self, like: &Lazy) -> Lazy {
            Operand::<$A, $E>::node(self.0, like)
        }
        fn host_value(&self) -> Option<Value> {
            Operand::<$A, $E>::host_value(self.0)
        }
        fn host(&self) -> Option<Host<'_, $A>> {
            Operand::<$A, $E>::host(self.0)
        }
        fn host_as<F: Dimension>(&self) -> Option<ndarray::ArrayView<'_, $A, F>> {
            Operand::<$A, $E>::host_as::<F>(self.0)
        }
        #[track_caller]
        fn evaluated_host(&self) -> Host<'_, $A> {
            Operand::<$A, $E>::evaluated_host(self.0)
        }
    };
}
impl<A: Clone, S: Data<Elem = A>, D: Dimension, E: Dimension> Operand<A, D> for SameDim<'_, ArrayBase<S, E>> {
    type Out = D;
    same_dim_forward!(A, E);
}

/// The element types of the graph that are scalar operands of its ops (`&a * 2.0`): f64,
/// f32, i64 and bool.
pub trait Scalar: Element {}
impl Scalar for f64 {}
impl Scalar for f32 {}
impl Scalar for i64 {}
impl Scalar for bool {}

/// A scalar of the array's element type, broadcast over it.
impl<A: ndarray::ScalarOperand, D: Dimension> Operand<A, D> for A {
    type Out = D;
    fn node(&self, like: &Lazy) -> Lazy {
        like.session().source(Operand::<A, D>::host_value(self).expect("a scalar of a graph element type"), "scalar")
    }
    fn host_value(&self) -> Option<Value> {
        wrap_any(ndarray::ArrayD::from_elem(IxDyn(&[]), self.clone()).into_shared())
    }
    fn host(&self) -> Option<Host<'_, A>> {
        Some(Host::Scalar(self.clone()))
    }
    fn evaluated_host(&self) -> Host<'_, A> {
        Host::Scalar(self.clone())
    }
}

/// An ndarray array or view as an operand (`&bach + &view`): its values become a source of
/// the graph (copied once). For the common element types (a generic one would overlap the
/// scalars' impl).
macro_rules! ndarray_operand {
    ($($t:ty),*) => {$(
        impl<D: Dimension + ndarray::DimMax<E>, E: Dimension, S: ndarray::Data<Elem = $t>> Operand<$t, D> for &ndarray::ArrayBase<S, E> {
            type Out = <D as ndarray::DimMax<E>>::Output;
            fn node(&self, like: &Lazy) -> Lazy {
                like.session().source(Operand::<$t, D>::host_value(self).expect("a host array of a graph element type"), "ndarray")
            }
            fn host_value(&self) -> Option<Value> {
                wrap_any(ndarray::ArrayBase::to_owned(*self).into_dyn().into_shared())
            }
            fn host(&self) -> Option<Host<'_, $t>> {
                Some(Host::Array(self.view().into_dyn()))
            }
            fn host_as<F: Dimension>(&self) -> Option<ndarray::ArrayView<'_, $t, F>> {
                self.view().into_dimensionality::<F>().ok()
            }
            fn evaluated_host(&self) -> Host<'_, $t> {
                Host::Array(self.view().into_dyn())
            }
        }
        /// By value, as by reference.
        impl<D: Dimension + ndarray::DimMax<E>, E: Dimension, S: ndarray::Data<Elem = $t>> Operand<$t, D> for ndarray::ArrayBase<S, E> {
            type Out = <D as ndarray::DimMax<E>>::Output;
            fn node(&self, like: &Lazy) -> Lazy {
                Operand::<$t, D>::node(&self, like)
            }
            fn host_value(&self) -> Option<Value> {
                Operand::<$t, D>::host_value(&self)
            }
            fn host(&self) -> Option<Host<'_, $t>> {
                Some(Host::Array(self.view().into_dyn()))
            }
            fn host_as<F: Dimension>(&self) -> Option<ndarray::ArrayView<'_, $t, F>> {
                self.view().into_dimensionality::<F>().ok()
            }
            fn evaluated_host(&self) -> Host<'_, $t> {
                Host::Array(self.view().into_dyn())
            }
        }
    )*};
}
ndarray_operand!(f64, f32, i64, bool, i8, i16, i32, i128, isize, u8, u16, u32, u64, u128, usize);

/// ndarray arrays and views on the right of `a op= rhs`, of any dimension type.
macro_rules! ndarray_assign_operand {
    ($($t:ty),*) => {$(
        impl<D: Dimension, E: Dimension, S: ndarray::Data<Elem = $t>> AssignOperand<$t, D> for ndarray::ArrayBase<S, E> {
            type As<'r> = SameDim<'r, ndarray::ArrayBase<S, E>> where Self: 'r;
            fn as_operand(&self) -> Self::As<'_> {
                SameDim(self)
            }
        }
        impl<D: Dimension, E: Dimension, S: ndarray::Data<Elem = $t>> AssignOperand<$t, D> for &ndarray::ArrayBase<S, E> {
            type As<'r> = SameDim<'r, ndarray::ArrayBase<S, E>> where Self: 'r;
            fn as_operand(&self) -> Self::As<'_> {
                SameDim(*self)
            }
        }
        impl<D: Dimension, E: Dimension, S: ndarray::Data<Elem = $t>> Operand<$t, D> for SameDim<'_, ndarray::ArrayBase<S, E>> {
            type Out = D;
            same_dim_forward!($t, E);
        }
    )*};
}
ndarray_assign_operand!(f64, f32, i64, bool, i8, i16, i32, i128, isize, u8, u16, u32, u64, u128, usize);

/// An error unless `shape` has the number of axes of `D`.
pub(crate) fn check_ndim<D: Dimension>(op: &str, shape: &[usize]) -> Result<()> {
    check_ndim_of(D::NDIM, op, shape)
}
/// [`check_ndim`] of a dimension type's `NDIM`.
fn check_ndim_of(ndim: Option<usize>, op: &str, shape: &[usize]) -> Result<()> {
    match ndim {
        Some(n) if n != shape.len() => Err(BachError::shape(op, format!("a {}-d array (shape {shape:?}) is not {}-d (Ix{n})", shape.len(), n))),
        _ => Ok(()),
    }
}

/// `Ix2` etc. in words, for errors.
pub(crate) fn dim_name<D: Dimension>() -> String {
    match D::NDIM {
        Some(n) => format!("{n}-d (Ix{n})"),
        None => "n-d (IxDyn)".into(),
    }
}

impl<A: Element, D: Dimension> Array<A, D> {
    /// Wrap a node whose dtype is `A` (and, for a static `D`, whose shape has `D`'s axes).
    pub fn from_lazy(lazy: Lazy) -> Result<Self> {
        if lazy.meta().dtype != A::DTYPE {
            return Err(BachError::dtype("Array", A::DTYPE, lazy.meta().dtype));
        }
        check_ndim::<D>("Array", &lazy.meta().shape)?;
        Ok(Self::wrap(lazy))
    }
    pub(crate) fn wrap(lazy: Lazy) -> Self {
        debug_assert_eq!(lazy.meta().dtype, A::DTYPE);
        debug_assert!(D::NDIM.is_none_or(|n| n == lazy.meta().shape.len()), "{} is not {}", lazy.meta(), dim_name::<D>());
        Self::from_node(lazy, read_node::<A>)
    }
}

impl<A: Element, D: Dimension> Handle<A, D> {
    /// The node of this array (made from its host value when it was mutated since).
    pub(crate) fn lazy(&self) -> &Lazy {
        self.lazy.get_or_init(|| {
            let v = self.value_ref().expect("an array holds a node or a value");
            self.home().session().source(A::wrap(standard(v).expect("a graph element type").into_dyn()), "host value")
        })
    }
}

impl<A: Element, S: Data<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// The value as the runtime's, when it is on the host (in standard layout: a strided
    /// view's elements are copied once).
    pub(crate) fn host_value(&self) -> Option<Value> {
        match self.parts() {
            Parts::Handle(h) => h.value_ref().map(|v| A::wrap(standard(v).expect("a graph element type").into_dyn())),
            Parts::Host(v) => Some(A::wrap(layout::row_major(&v).expect("a graph element type").into_dyn())),
        }
    }

    /// The node of this array (made from its host value when it has none: a view of a host
    /// value becomes a source of its elements).
    pub fn lazy(&self) -> Lazy {
        match self.parts() {
            Parts::Handle(h) => h.lazy().clone(),
            Parts::Host(v) => session::current().source(A::wrap(layout::row_major(&v).expect("a graph element type").into_dyn()), "host view"),
        }
    }
    pub fn meta(&self) -> Meta {
        self.lazy().meta().clone()
    }
    /// Compute the value and keep it in the accelerator's memory when it is computed there,
    /// so that later cells using it on the accelerator read it with no copy (reading it on the
    /// host, e.g. printing, copies it back each time). Returns the device it lives on.
    pub fn eval_on_device(&self) -> Result<bach_runtime::DeviceId> {
        self.lazy().eval_on_device()
    }
    /// Where the computed value lives, by device name (`None` before it is computed).
    pub fn location(&self) -> Option<String> {
        let lazy = self.lazy();
        let d = lazy.location()?;
        let s = lazy.session();
        Some(s.devices().get(d).map_or_else(|| format!("device {}", d.0), |dev| dev.profile().name.clone()))
    }
    /// The plan that evaluating this array would run (nothing runs).
    pub fn plan(&self) -> Result<Plan> {
        self.lazy().plan()
    }
    /// Why each op of this array's plan runs where it runs: the estimates on each device, the
    /// copies, the margin, the reason in words (nothing runs).
    pub fn explain(&self) -> Result<Explanation> {
        self.lazy().plan().map(|p| Explanation(p.explain()))
    }
    /// Ask for the op computing this array to run on `device` (`Device::Auto`: where the
    /// policy puts it). Plans respect it and say so; an op with no accelerator version stays
    /// on the CPU and its plan says why. An array already computed keeps its value.
    pub fn on(self, device: Device) -> Self {
        match device {
            Device::Cpu => self.lazy().force(Some(false)),
            Device::Gpu => self.lazy().force(Some(true)),
            Device::Auto => self.lazy().force(None),
            Device::Accelerator(k) => self.lazy().force_device(bach_runtime::DeviceId(k)),
        }
        self
    }

    /// Call annotated `op` with `self` and `others` as arguments; the result has dimension
    /// type `E`.
    pub(crate) fn call<B: Element, E: Dimension>(&self, op: &Arc<Annotation>, others: &[&Lazy]) -> Result<Array<B, E>> {
        if others.is_empty() {
            if let Some(v) = self.host_value() {
                if let Some(r) = eager(op, &[v], &|| self.home()) {
                    return r;
                }
            }
        }
        let this = self.lazy();
        let mut args = vec![&this];
        args.extend_from_slice(others);
        let lazy = op.call(&args)?;
        check_ndim::<E>(op.name(), &lazy.meta().shape)?;
        Ok(Array::wrap(lazy))
    }
}

/// `v`, or its elements in standard layout when it is a strided view of another buffer
/// (`None` then for an element type that is not a graph element type).
fn standard<A, D: Dimension>(v: &NdArc<A, D>) -> Option<NdArc<A, D>> {
    match v.is_standard_layout() {
        true => Some(v.clone()),
        false => layout::row_major(&v.view()),
    }
}

/// A contiguous owned ndarray array (row- or column-major: what ndarray's constructors and
/// `map_collect` make) as a shared value, its elements moved, not cloned (ndarray's
/// `into_shared` asks `A: Clone`).
pub(crate) fn shared_of<A, D: Dimension>(a: ndarray::Array<A, D>) -> NdArc<A, D> {
    if !a.is_standard_layout() && !a.t().is_standard_layout() {
        // Other strides (`to_owned` of a permuted view keeps them): the elements moved into
        // row-major order.
        let dim = a.raw_dim();
        return NdArc::from_shape_vec(dim, a.into_iter().collect()).expect("one element per index");
    }
    let f_order = a.ndim() > 1 && !a.is_standard_layout();
    let dim = a.raw_dim();
    let (v, _) = a.into_raw_vec_and_offset();
    NdArc::from_shape_vec(ndarray::ShapeBuilder::set_f(dim, f_order), v).expect("a contiguous array's own shape")
}

/// Arrays made element by element (ndarray's `uninit` / `build_uninit` / `assume_init`), of
/// either owned kind: host arrays of `MaybeUninit<A>`, written through ndarray's own methods
/// (`uget_mut`, `Zip`, `assign_to`, indexing), then read as `A`s.
impl<A, S: DataOwned<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// An array of `shape` whose elements are not initialised yet (ndarray's `uninit`); write
    /// every one, then [`ArrayBase::assume_init`].
    pub fn uninit<Sh: ndarray::ShapeBuilder<Dim = D>>(shape: Sh) -> ArrayBase<S::MaybeUninit, D> {
        S::MaybeUninit::of_nd(ndarray::Array::<A, D>::uninit(shape))
    }
    /// An array of `shape` whose elements `builder` writes through the mutable view it is
    /// given (ndarray's `build_uninit`); then [`ArrayBase::assume_init`].
    pub fn build_uninit<Sh, F>(shape: Sh, builder: F) -> ArrayBase<S::MaybeUninit, D>
    where
        Sh: ndarray::ShapeBuilder<Dim = D>,
        F: FnOnce(ArrayViewMut<'_, std::mem::MaybeUninit<A>, D>),
    {
        let mut a = ndarray::Array::<A, D>::uninit(shape);
        builder(ArrayBase { repr: a.view_mut() });
        S::MaybeUninit::of_nd(a)
    }
}
impl<A, S, D: Dimension> ArrayBase<S, D>
where
    S: DataOwned<Elem = std::mem::MaybeUninit<A>> + storage::RawDataSubst<A>,
    S::Output: DataOwned<Elem = A>,
{
    /// The elements as `A`s, of the same kind (ndarray's `assume_init`).
    ///
    /// # Safety
    /// As ndarray's: every element has been written.
    pub unsafe fn assume_init(self) -> ArrayBase<S::Output, D> {
        let a = S::to_array(self);
        let v = a.repr.value_ref().expect("an uninit array holds its value").clone();
        drop(a);
        // SAFETY: the caller's promise; the elements were written through this value's own
        // handle (copy on write keeps it the only one when written).
        let v: NdArc<A, D> = unsafe { v.assume_init() };
        S::Output::of_array(Array::from_shared_value(v))
    }
}

impl<A, D> Handle<A, D> {
    /// A handle of a node and/or a host value.
    pub(crate) fn new(lazy: Option<Lazy>, held: Option<NdArc<A, D>>, home: Option<Home>, read: ReadNode<A>) -> Self {
        Handle { lazy: lazy.map_or_else(OnceLock::new, OnceLock::from), held, value: OnceLock::new(), home, read, views: views::Kept::default(), give_back: None }
    }
}

/// What every array has, of any element type.
impl<A, D: Dimension> Array<A, D> {
    /// A handle of `lazy`, a node of `A`s made by `read`'s element type (see
    /// [`graph_element`]).
    pub(crate) fn from_node(lazy: Lazy, read: ReadNode<A>) -> Self {
        ArrayBase { repr: Handle::new(Some(lazy), None, None, read) }
    }
    /// A handle holding a host value and no node yet (the next annotated call makes one).
    pub(crate) fn from_host(value: NdArc<A, D>) -> Self {
        Self::from_host_in(value, Home::current())
    }
    pub(crate) fn from_host_in(value: NdArc<A, D>, home: Home) -> Self {
        ArrayBase { repr: Handle::new(None, Some(value), Some(home), no_node::<A>) }
    }
    /// [`Array::from_host_in`] of a small result whose value goes back to the thread's spent
    /// values when the array is dropped (`pool.rs`).
    pub(crate) fn from_kept(value: NdArc<A, D>, home: Home) -> Self
    where
        A: pool::Pooled,
    {
        Self::from_kept_with(value, home, pool::give_back::<A, D>)
    }
    /// [`Array::from_kept`] in code generic over its element type, with the pool's
    /// `give_back` for it ([`pool::give_back_of`]).
    pub(crate) fn from_kept_with(value: NdArc<A, D>, home: Home, give_back: GiveBack<A, D>) -> Self {
        let mut a = Self::from_host_in(value, home);
        a.repr.give_back = Some(give_back);
        a
    }
    /// A handle of `h` (an array of any handle kind becomes an owned array).
    pub(crate) fn of_handle(h: Handle<A, D>) -> Self {
        ArrayBase { repr: h }
    }
    /// An array of a view's elements (copied: in the view's own order when it is row- or
    /// column-major, as ndarray's `to_owned`; else row-major).
    pub(crate) fn from_nd_view(v: &ndarray::ArrayView<'_, A, D>) -> Self
    where
        A: Clone,
    {
        // A small vector of f64 or f32 (`f = k.row(3).to_owned()` in a loop): into a spent
        // value (`pool.rs`), given back when dropped; in the same layout as ndarray's copy
        // (stride 1), so not for a reversed view, which ndarray copies reversed.
        if v.ndim() == 1 && v.strides().first().is_some_and(|&s| s >= 0) && (1..=pool::MAX_LEN).contains(&v.len()) && v.len() <= Home::current_eager_max() {
            if let Some(give_back) = pool::give_back_of::<A, D>() {
                let out = match pool::take_as::<A>(v.len()) {
                    Some(mut out) => {
                        pool::elements(&mut out).iter_mut().zip(v.iter()).for_each(|(o, x)| *o = x.clone());
                        out
                    }
                    None => NdArc::from_iter(v.iter().cloned()),
                };
                if let Ok(out) = out.into_dimensionality::<D>() {
                    return Array::from_kept_with(out, Home::current(), give_back);
                }
            }
        }
        Array::from_shared_value(shared_of(v.to_owned()))
    }

    /// An array holding `a`'s data (moved into the session; evaluated already). A large
    /// array of a graph element type is a source node from here on; a small one (see
    /// [`EAGER_MAX_ELEMENTS`]) gets its node when a planned op needs one.
    pub fn from_array(a: ndarray::Array<A, D>) -> Self
    where
        A: Clone,
    {
        Self::from_shared_value(a.into_shared())
    }
    /// [`Array::from_array`] of a shared value (any element type, `Clone` or not).
    pub(crate) fn from_shared_value(a: NdArc<A, D>) -> Self {
        let home = Home::current();
        match graph_element::<A>() {
            Some(g) if a.len() > EAGER_MAX_ELEMENTS.min(home.session().eager_max_elements()) => {
                // A graph value is row-major (a column-major one is copied for the node).
                let src = if a.is_standard_layout() { a.clone() } else { layout::standard_layout(a.clone()).expect("a graph element type") };
                let lazy = home.session().source((g.wrap)(src.into_dyn()), "from_array");
                ArrayBase { repr: Handle::new(Some(lazy), Some(a), None, g.read) }
            }
            _ => Self::from_host_in(a, home),
        }
    }
}

/// ndarray's constructors of values, for either owned kind (`Array`, `ArcArray`), so that
/// library code generic over `S: DataOwned` calls them as it calls ndarray's.
impl<A, S: DataOwned<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// An array of `shape` from `v` in row-major order (ndarray's `from_shape_vec`).
    /// An error of ndarray's kind when the lengths differ, as ndarray's.
    pub fn from_shape_vec<Sh: ShapeArg<Dim = D>>(shape: Sh, v: Vec<A>) -> std::result::Result<Self, ndarray::ShapeError> {
        // In the shape's own order, as ndarray's (a node made of it is row-major).
        Ok(S::of_nd(shape.array_of_vec(v)?))
    }
    /// An array of `shape` whose element at each index is `f(index)` (ndarray's
    /// `from_shape_fn`; the index is `usize` for 1-d, a tuple for 2-d to 6-d, `IxDyn` for
    /// dynamic arrays). Computed on the host as it is made.
    pub fn from_shape_fn<Sh: ShapeArg<Dim = D>, F: FnMut(D::Pattern) -> A>(shape: Sh, f: F) -> Self {
        let dim = D::from_dimension(&IxDyn(&shape.dims())).expect("a shape of D's axes");
        S::of_nd(ndarray::Array::from_shape_fn(dim, f))
    }
}

/// A handle's own state: its node, its value, its session.
impl<A, D: Dimension> Handle<A, D> {
    /// The session this array's node is (or will be) in.
    pub(crate) fn home(&self) -> Home {
        match (self.lazy.get(), &self.home) {
            (Some(l), _) => Home::of(l.session()),
            (None, Some(h)) => h.clone(),
            (None, None) => Home::current(),
        }
    }
    /// The value, when this handle holds it on the host and it is small enough to compute
    /// with at once (see [`EAGER_MAX_ELEMENTS`]), with the most elements the session allows.
    pub(crate) fn small_host(&self) -> Option<(&NdArc<A, D>, usize)> {
        let v = self.value_ref()?;
        if v.len() > EAGER_MAX_ELEMENTS {
            return None;
        }
        let max = match (self.lazy.get(), &self.home) {
            (Some(l), _) => l.session().eager_max_elements(),
            (None, Some(h)) => h.session().eager_max_elements(),
            (None, None) => Home::current_eager_max(),
        };
        (v.len() <= max).then_some((v, max))
    }
    /// The held value's elements in row-major order, to write in place, when this handle
    /// alone holds a small value on the host: no node, no kept view, and no other handle,
    /// node or ndarray clone sharing its buffer (what ndarray's operators on an owned operand
    /// reuse; `operators.rs`). Small as [`Handle::small_host`] says, so a session that turns
    /// the at-once path off (`eager_max_elements` 0) never gets here.
    pub(crate) fn small_unique_mut(&mut self) -> Option<&mut [A]> {
        if self.lazy.get().is_some() || self.value.get().is_some() || self.views.any() || self.small_host().is_none() {
            return None;
        }
        let v = self.held.as_mut()?;
        if !v.is_unique() || !v.is_standard_layout() {
            return None;
        }
        Some(pool::elements(v))
    }
    /// The value, when this handle holds it (made with it, wrote it, or evaluated it).
    pub(crate) fn value_ref(&self) -> Option<&NdArc<A, D>> {
        self.held.as_ref().or_else(|| self.value.get().map(|v| &**v))
    }
    pub(crate) fn node(&self) -> Option<&Lazy> {
        self.lazy.get()
    }
    pub(crate) fn shape(&self) -> &[usize] {
        match (self.lazy.get(), self.value_ref()) {
            (Some(l), _) => &l.meta().shape,
            (None, Some(v)) => v.shape(),
            (None, None) => unreachable!("an array holds a node or a value"),
        }
    }
    /// The same handle with dimension type `E`; an error when its axes are not `E`'s.
    pub(crate) fn into_dimensionality<E: Dimension>(self) -> Result<Handle<A, E>> {
        let cast = |v: NdArc<A, D>| v.into_dimensionality::<E>().map_err(|e| BachError::shape("into_dimensionality", e.to_string()));
        let mut this = self;
        let (lazy, held, home) = (std::mem::take(&mut this.lazy), this.held.take(), this.home.take());
        let value = match this.value.take() {
            Some(v) => OnceLock::from(Box::new(cast(*v)?)),
            None => OnceLock::new(),
        };
        Ok(Handle { lazy, held: held.map(cast).transpose()?, value, home, read: this.read, views: views::Kept::default(), give_back: None })
    }
    /// The handle, moved out; a placeholder with neither node nor value is left (replaced
    /// before anything reads it).
    pub(crate) fn take(&mut self) -> Handle<A, D> {
        let read = self.read;
        std::mem::replace(self, Handle::new(None, None, None, read))
    }
    /// Swaps axes `a` and `b`: the value with its strides swapped, no copy (a lazy array is
    /// evaluated first).
    #[track_caller]
    pub(crate) fn swap_axes(&mut self, a: usize, b: usize) {
        self.evaluated_mut().swap_axes(a, b);
    }
    /// The elements in a new shape, read in row-major order (ndarray's
    /// `into_shape_with_order`; copied once into row-major order when they are strided).
    #[track_caller]
    pub(crate) fn reshape<E: Dimension>(self, dims: &[usize]) -> std::result::Result<Handle<A, E>, ndarray::ShapeError> {
        let incompatible = ndarray::ShapeError::from_kind;
        let e = E::from_dimension(&IxDyn(dims)).ok_or_else(|| incompatible(ndarray::ErrorKind::IncompatibleShape))?;
        let v = self.evaluated().clone();
        let v = if v.is_standard_layout() { v } else { layout::standard_layout(v).ok_or_else(|| incompatible(ndarray::ErrorKind::IncompatibleLayout))? };
        let home = self.home();
        v.into_shape_with_order(e).map(|a| Handle::new(None, Some(a), Some(home), self.read))
    }
    /// Compute the value, as an ndarray array of this dimension type.
    pub(crate) fn eval_nd(&self) -> Result<&NdArc<A, D>> {
        if let Some(v) = self.value_ref() {
            return Ok(v);
        }
        let lazy = self.lazy.get().expect("an array holds a node or a value");
        let a = (self.read)(lazy)?;
        let a = a.into_dimensionality::<D>().map_err(|e| BachError::shape("eval", format!("{e}: shape {:?} is not {}", lazy.meta().shape, dim_name::<D>())))?;
        Ok(self.value.get_or_init(|| Box::new(a)))
    }
    fn is_evaluated(&self) -> bool {
        self.value_ref().is_some() || self.lazy.get().is_some_and(|l| l.is_evaluated())
    }
    /// The value, evaluated here if it is not yet; a failure panics at the caller's line with
    /// the reason (what ndarray-style code that touches values expects).
    #[track_caller]
    pub(crate) fn evaluated(&self) -> &NdArc<A, D> {
        if let Some(v) = self.value_ref() {
            return v;
        }
        // (No line: in a notebook the caller's line is in evcxr's generated source, not the
        // cell's; the trace names the cell.)
        let why = "ndarray code (iteration, indexing, a view, a closure) needs its values on the host".to_string();
        match bach_runtime::trace::because(why, || self.eval_nd()) {
            Ok(v) => v,
            Err(e) => panic!("bach: cannot evaluate {}: {e}", self.described()),
        }
    }
    /// The node's dtype and shape, for messages.
    fn described(&self) -> String {
        self.lazy.get().map_or_else(|| format!("an array of shape {:?}", self.shape()), |l| l.meta().to_string())
    }
    /// The value for writing: evaluated, made this handle's own (copied when any other
    /// handle or node shares it), and the node dropped (the next annotated call makes a new
    /// one from the value). Nothing another handle can see changes.
    #[track_caller]
    pub(crate) fn evaluated_mut(&mut self) -> &mut NdArc<A, D> {
        self.evaluated();
        // No view of this array lives on (this is a mutable borrow): the lazy ones go.
        self.views = views::Kept::default();
        if let Some(l) = self.lazy.take() {
            self.home = Some(Home::of(l.session()));
        }
        if self.held.is_none() {
            self.held = self.value.take().map(|v| *v);
        }
        // ArcArray copies on its first write while another handle or a node shares it.
        self.held.as_mut().expect("just evaluated")
    }
    /// [`Handle::evaluated_mut`] as a mutable view, for an element type of any kind: a value
    /// another handle or node shares is copied first (copy on write). An owned array of a
    /// type other than the graph element types never shares its value (its `clone`, and
    /// `into_owned` of a shared array, copy), so no `A: Clone` is needed: library code generic
    /// over `A` with no bounds calls `view_mut` on its arrays, as on ndarray's.
    #[track_caller]
    pub(crate) fn evaluated_view_mut(&mut self) -> ndarray::ArrayViewMut<'_, A, D> {
        let v = self.evaluated_mut();
        if !v.is_unique() {
            // Copy on write, through Bach's one non-generic copy (what a cell compiles for
            // each element and dimension type stays a thin shell).
            match layout::row_major(&v.view()) {
                Some(copy) => *v = copy,
                None => {
                    panic!("{}", BachError::invalid("view_mut", "the value of an owned array of a type without Clone is shared, so cannot be written (make it with into_owned)"))
                }
            }
        }
        // SAFETY: the value is this handle's alone (checked or just copied) and borrowed
        // mutably for the view's life.
        unsafe { unique_view_mut(v) }
    }
    /// The value copied when another handle shares it and `A` is not a graph element type:
    /// an owned array of such a type holds its value alone ([`Handle::evaluated_view_mut`]).
    pub(crate) fn unshare(&mut self)
    where
        A: Clone,
    {
        if let (None, Some(v)) = (graph_element::<A>(), &mut self.held) {
            if !v.is_unique() {
                // (`view_mut` copies a shared value.)
                v.view_mut();
            }
        }
    }
    /// A second owned array of this value, as ndarray's `clone`: the value shared until either
    /// is written (copy on write) for the graph element types; copied for any other element
    /// type, so that such a value is shared only by shared arrays (`ArcArray`), as in ndarray,
    /// and an owned one comes apart without a copy ([`Handle::into_nd_nocopy`]).
    pub(crate) fn clone_owned(&self) -> Self
    where
        A: Clone,
    {
        match (graph_element::<A>(), &self.held) {
            (None, Some(v)) => Handle::new(None, Some(shared_of(v.to_owned())), self.home.clone(), self.read),
            _ => self.clone(),
        }
    }
    /// The value, evaluated, taken out of the handle: no copy when nothing else shares it. A
    /// value shared with a node or another handle is copied when its element type is a graph
    /// element type (all `Copy`); of any other type (maybe not `Clone`: shared by `ArcArray`
    /// clones), it panics at the caller's line.
    #[track_caller]
    pub(crate) fn into_nd_nocopy(mut self) -> ndarray::Array<A, D> {
        self.evaluated();
        self.views = views::Kept::default();
        drop(self.lazy.take());
        let v = self.held.take().or_else(|| self.value.take().map(|v| *v)).expect("just evaluated");
        match v.try_into_owned_nocopy() {
            Ok(a) => a,
            Err(v) => match graph_element::<A>() {
                // SAFETY: `A` is one of the graph element types (f64, f32, i64, bool): `Copy`,
                // so a bitwise read of each element is a copy of it.
                Some(_) => v.map(|x| unsafe { std::ptr::read(x) }),
                None => panic!(
                    "bach: this array's value is shared with another array (an `ArcArray` clone of it) and its element type is not one Bach can copy without `Clone`: take the array apart before sharing it"
                ),
            },
        }
    }
}

/// What every array and view has, of any element type.
impl<S: Data, D: Dimension> ArrayBase<S, D> {
    /// The representation: a handle, or a view's elements on the host.
    pub(crate) fn parts(&self) -> Parts<'_, S::Elem, D> {
        S::parts(&self.repr)
    }
    /// The handle, when this is an array (or a view of a lazy array).
    pub(crate) fn handle(&self) -> Option<&Handle<S::Elem, D>> {
        match self.parts() {
            Parts::Handle(h) => Some(h),
            Parts::Host(_) => None,
        }
    }
    /// The handle, to write, when this is an owned array (`None` for views).
    pub(crate) fn handle_mut(&mut self) -> Option<&mut Handle<S::Elem, D>> {
        S::handle_mut(&mut self.repr)
    }
    /// This array as an owned array of dimension type `E` (the same axes: checked by the
    /// caller), sharing its handle: nothing is copied.
    pub(crate) fn into_array_as<E: Dimension>(self) -> Array<S::Elem, E>
    where
        S::Elem: Clone,
    {
        let h = S::into_handle(self.repr);
        if type_id::<D>() == type_id::<E>() {
            return Array::of_handle(same_type(h));
        }
        Array::of_handle(or_panic(h.into_dimensionality()))
    }
    /// The session this array's node is (or will be) in.
    pub(crate) fn home(&self) -> Home {
        match self.parts() {
            Parts::Handle(h) => h.home(),
            Parts::Host(_) => Home::current(),
        }
    }
    /// The value, when it is on the host and small enough to compute with at once (see
    /// [`EAGER_MAX_ELEMENTS`]), with the most elements the session allows.
    pub(crate) fn small_host(&self) -> Option<(ndarray::ArrayView<'_, S::Elem, D>, usize)> {
        match self.parts() {
            Parts::Handle(h) => h.small_host().map(|(v, max)| (v.view(), max)),
            Parts::Host(v) if v.len() <= EAGER_MAX_ELEMENTS => {
                let max = Home::current_eager_max();
                (v.len() <= max).then_some((v, max))
            }
            Parts::Host(_) => None,
        }
    }
    /// The value, when it is on the host (held, computed, or a view's elements).
    pub(crate) fn host_view(&self) -> Option<ndarray::ArrayView<'_, S::Elem, D>> {
        match self.parts() {
            Parts::Handle(h) => h.value_ref().map(|v| v.view()),
            Parts::Host(v) => Some(v),
        }
    }

    pub fn shape(&self) -> &[usize] {
        S::shape(&self.repr)
    }
    pub fn ndim(&self) -> usize {
        self.shape().len()
    }
    pub fn len(&self) -> usize {
        self.shape().iter().product()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The shape as ndarray's pattern: `usize` for 1-d, a tuple for 2-d to 6-d.
    pub fn dim(&self) -> D::Pattern {
        self.raw_dim().into_pattern()
    }
    /// The shape as a `D` (ndarray's `raw_dim`).
    pub fn raw_dim(&self) -> D {
        D::from_dimension(&IxDyn(self.shape())).expect("the shape has D's axes")
    }
    /// Rows of a 2-d array (the first axis; ndarray's `nrows`).
    pub fn nrows(&self) -> usize {
        self.shape().first().copied().unwrap_or(1)
    }
    /// Columns of a 2-d array (the second axis; ndarray's `ncols`).
    pub fn ncols(&self) -> usize {
        self.shape().get(1).copied().unwrap_or(1)
    }

    /// The same array with a dynamic dimension type (ndarray's `into_dyn`).
    pub fn into_dyn(self) -> ArrayBase<S, IxDyn> {
        ArrayBase { repr: S::dim_repr(self.repr).expect("every array is n-d") }
    }
    /// The same array with dimension type `D2`; an error when its axes are not `D2`'s.
    pub fn into_dimensionality<D2: Dimension>(self) -> Result<ArrayBase<S, D2>> {
        check_ndim::<D2>("into_dimensionality", self.shape())?;
        Ok(ArrayBase { repr: S::dim_repr(self.repr)? })
    }

    /// Compute the value (once; later calls and other handles reuse it), on the CPU.
    pub fn eval(&self) -> Result<NdArc<S::Elem, IxDyn>>
    where
        S::Elem: Clone,
    {
        match self.parts() {
            Parts::Handle(h) => Ok(h.eval_nd()?.clone().into_dyn()),
            Parts::Host(v) => Ok(v.to_shared().into_dyn()),
        }
    }
    /// Compute the value, as an ndarray view of this dimension type.
    pub(crate) fn eval_view(&self) -> Result<ndarray::ArrayView<'_, S::Elem, D>> {
        match self.parts() {
            Parts::Handle(h) => Ok(h.eval_nd()?.view()),
            Parts::Host(v) => Ok(v),
        }
    }
    /// The value as an owned `ndarray` array of this dimension type.
    pub fn to_nd(&self) -> Result<ndarray::Array<S::Elem, D>>
    where
        S::Elem: Clone,
    {
        Ok(self.eval_view()?.to_owned())
    }
    /// The value as an owned dynamic `ndarray` array.
    pub fn to_array(&self) -> Result<ndarray::ArrayD<S::Elem>>
    where
        S::Elem: Clone,
    {
        Ok(self.eval_view()?.into_dyn().to_owned())
    }
    pub fn to_array1(&self) -> Result<ndarray::Array1<S::Elem>>
    where
        S::Elem: Clone,
    {
        self.to_array()?.into_dimensionality::<Ix1>().map_err(|e| BachError::shape("to_array1", format!("{e}: shape {:?}", self.shape())))
    }
    pub fn to_array2(&self) -> Result<ndarray::Array2<S::Elem>>
    where
        S::Elem: Clone,
    {
        self.to_array()?.into_dimensionality::<Ix2>().map_err(|e| BachError::shape("to_array2", format!("{e}: shape {:?}", self.shape())))
    }
    /// The single element of a 0-d (or one-element) array, e.g. the result of `sum_lazy()`.
    pub fn to_scalar(&self) -> Result<S::Elem>
    where
        S::Elem: Clone,
    {
        let v = self.eval_view()?;
        match v.first() {
            Some(x) if v.len() == 1 => Ok(x.clone()),
            _ => Err(BachError::shape("to_scalar", format!("array of shape {:?} is not a scalar", v.shape()))),
        }
    }
    /// [`Array::to_scalar`] of a reduction whose ndarray form returns a number: the trace says
    /// so (`sum` is evaluated at its line; `sum_lazy` keeps it lazy).
    pub(crate) fn number_for(&self, op: &str) -> Result<S::Elem>
    where
        S::Elem: Clone,
    {
        if self.host_view().is_some() {
            // Computed at once (a small value): no evaluation to give a reason to.
            return self.to_scalar();
        }
        bach_runtime::trace::because(format!("`{op}` returns a number, as ndarray's (`{op}_lazy` keeps it lazy)"), || self.to_scalar())
    }
    /// A reference to the element at `index` (`i`, `(i, j)`, `[i, j]`, `&[i, j]` for a
    /// dynamic array), or `None` when it is out of bounds (ndarray's `get`; evaluates).
    #[track_caller]
    pub fn get<I: ndarray::NdIndex<D>>(&self, index: I) -> Option<&S::Elem> {
        self.evaluated().get(index)
    }
    /// The strides of the value, in elements (ndarray's `strides`; evaluates).
    #[track_caller]
    pub fn strides(&self) -> &[isize] {
        self.evaluated().strides()
    }
    /// Whether the value has been computed.
    pub fn is_evaluated(&self) -> bool {
        match self.parts() {
            Parts::Handle(h) => h.is_evaluated(),
            Parts::Host(_) => true,
        }
    }

    /// The value, evaluated here if it is not yet; a failure panics at the caller's line with
    /// the reason (what ndarray-style code that touches values expects).
    #[track_caller]
    pub(crate) fn evaluated(&self) -> &ndarray::ArrayBase<S::Nd, D> {
        S::nd(&self.repr)
    }
    /// The value as a shared ndarray array (no copy of an array's value; a view's elements
    /// are copied).
    #[track_caller]
    pub(crate) fn evaluated_shared(&self) -> NdArc<S::Elem, D>
    where
        S::Elem: Clone,
    {
        match self.parts() {
            Parts::Handle(h) => h.evaluated().clone(),
            Parts::Host(v) => v.to_shared(),
        }
    }
    /// The node's dtype and shape, for messages.
    fn described(&self) -> String {
        match self.parts() {
            Parts::Handle(h) => h.described(),
            Parts::Host(v) => format!("a view of shape {:?}", v.shape()),
        }
    }
}

impl<S: RawDataMut, D: Dimension> ArrayBase<S, D> {
    /// The values for writing: an array's evaluated, made this handle's own (copied when any
    /// other handle or node shares it), and the node dropped (the next annotated call makes
    /// a new one from the value); a mutable view's, its parent's elements. Nothing another
    /// handle can see changes.
    #[track_caller]
    pub(crate) fn evaluated_mut(&mut self) -> &mut ndarray::ArrayBase<S::Nd, D> {
        S::nd_mut(&mut self.repr)
    }
}

impl<S: ViewsMut, D: Dimension> ArrayBase<S, D> {
    /// [`ArrayBase::evaluated_mut`] as ndarray's mutable view, for any element type (an
    /// owned array asks no `Clone`: `ViewsMut::view_mut_nd`).
    #[track_caller]
    pub(crate) fn evaluated_view_mut(&mut self) -> ndarray::ArrayViewMut<'_, S::Elem, D> {
        S::view_mut_nd(&mut self.repr)
    }
}

impl<A: Clone, S: DataMut<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// `self op= rhs` given `r = self op rhs`: the result must keep the array's shape, as in
    /// ndarray. An array is bound to the result (lazy for the float types).
    #[track_caller]
    pub(crate) fn assign_result(&mut self, op: &str, r: Array<A, D>) {
        if r.shape() != self.shape() {
            panic!("{}", BachError::shape(op, format!("the result's shape {:?} is not the array's {:?}", r.shape(), self.shape())));
        }
        S::assign_array(&mut self.repr, r);
    }
}

/// `op` run at once on the CPU over the host values `args` (see [`EAGER_MAX_ELEMENTS`]), its
/// result a handle with no node yet (in `home`'s session when one is made); `None` when it
/// does not apply. A shape or dtype error is the op's own, as from the graph.
pub(crate) fn eager<B: Element, E: Dimension>(op: &Annotation, args: &[Value], home: &dyn Fn() -> Home) -> Option<Result<Array<B, E>>> {
    Some(eager_value(op, args, E::NDIM, home)?.and_then(|(v, home)| host_of(op.name(), v, home)))
}
/// A host value of the runtime's as a Bach array of `B`s of dimension type `E` (no node yet).
pub(crate) fn host_of<B: Element, E: Dimension>(op: &str, v: Value, home: Home) -> Result<Array<B, E>> {
    let a = B::array_of(&v).ok_or_else(|| BachError::dtype(op, B::DTYPE, v.meta().dtype))?.clone();
    let a = a.into_dimensionality::<E>().map_err(|e| BachError::shape(op, e.to_string()))?;
    Ok(Array::from_host_in(a, home))
}
/// [`eager`]'s work, for every element and dimension type (compiled once, in Bach): the value
/// and the session it goes to.
fn eager_value(op: &Annotation, args: &[Value], ndim: Option<usize>, home: &dyn Fn() -> Home) -> Option<Result<(Value, Home)>> {
    if op.family() == Family::Closure || args.iter().any(|a| a.meta().len() > EAGER_MAX_ELEMENTS) {
        return None;
    }
    let home = home();
    let max = home.session().eager_max_elements();
    if args.iter().any(|a| a.meta().len() > max) {
        return None;
    }
    let metas: Vec<Meta> = args.iter().map(|a| a.meta()).collect();
    let meta = match op.result_meta(&metas) {
        Ok(m) if m.len() > max => return None,
        Ok(m) => m,
        Err(e) => return Some(Err(e)),
    };
    let run = || -> Result<(Value, Home)> {
        check_ndim_of(ndim, op.name(), &meta.shape)?;
        let views: Vec<ValueRef<'_>> = args.iter().map(|a| a.view()).collect();
        let ctx = OpCtx { meta: &meta, rows: 0..meta.shape.first().copied().unwrap_or(1), piece: 0, node: 0 };
        Ok((op.run_cpu(&ctx, &views)?, home))
    };
    Some(run())
}

impl<A: Element> Array<A, IxDyn> {
    /// An array holding a shared ndarray array (no copy).
    pub fn from_shared(a: NdArc<A, IxDyn>) -> Self {
        Self::wrap(session::current().source(A::wrap(a), "from_array"))
    }
}

/// ndarray's ways to grow an owned array (`push_row`, `push_column`, `push`, `append`), on
/// the host: the value is taken out of the handle (copied only when shared), grown by
/// ndarray (its spare capacity kept for the next push), and held again with no node.
impl<A: Clone, D: Dimension> Array<A, D> {
    /// `array` appended along `axis` (ndarray's `append`); an error when the other axes'
    /// lengths differ.
    #[track_caller]
    pub fn append(&mut self, axis: ndarray::Axis, array: ArrayView<'_, A, D>) -> std::result::Result<(), ndarray::ShapeError>
    where
        D: ndarray::RemoveAxis,
    {
        self.grow(|nd| nd.append(axis, array.evaluated().view()))
    }
    /// `array` appended as one more index of `axis` (ndarray's `push`).
    #[track_caller]
    pub fn push(&mut self, axis: ndarray::Axis, array: ArrayView<'_, A, D::Smaller>) -> std::result::Result<(), ndarray::ShapeError>
    where
        D: ndarray::RemoveAxis,
    {
        self.grow(|nd| nd.push(axis, array.evaluated().view()))
    }
    #[track_caller]
    fn grow(&mut self, f: impl FnOnce(&mut ndarray::Array<A, D>) -> std::result::Result<(), ndarray::ShapeError>) -> std::result::Result<(), ndarray::ShapeError> {
        let mut nd = self.repr.take().into_nd_nocopy();
        let grown = f(&mut nd);
        *self = Array::from_host(shared_of(nd));
        grown
    }
}
impl<A: Clone> Array<A, Ix2> {
    /// `row` appended as the last row (ndarray's `push_row`).
    #[track_caller]
    pub fn push_row(&mut self, row: ArrayView<'_, A, Ix1>) -> std::result::Result<(), ndarray::ShapeError> {
        self.push(ndarray::Axis(0), row)
    }
    /// `column` appended as the last column (ndarray's `push_column`).
    #[track_caller]
    pub fn push_column(&mut self, column: ArrayView<'_, A, Ix1>) -> std::result::Result<(), ndarray::ShapeError> {
        self.push(ndarray::Axis(1), column)
    }
}

/// ndarray's methods that take an owned array apart, for either owned kind and any element
/// type (ndarray asks no `Clone` of them).
impl<A, S: DataOwned<Elem = A>, D: Dimension> ArrayBase<S, D> {
    /// The elements in memory order (ndarray's deprecated `into_raw_vec`).
    #[track_caller]
    pub fn into_raw_vec(self) -> Vec<A> {
        self.into_raw_vec_and_offset().0
    }
    /// The elements in memory order and the index of the first element in them (ndarray's
    /// `into_raw_vec_and_offset`; no copy when nothing else shares the value).
    #[track_caller]
    pub fn into_raw_vec_and_offset(self) -> (Vec<A>, Option<usize>) {
        S::to_array(self).repr.into_nd_nocopy().into_raw_vec_and_offset()
    }
}

impl<A: Clone, S: DataOwned<Elem = A>> ArrayBase<S, Ix1> {
    /// A 1-D array of `v` (ndarray's `from_vec`).
    pub fn from_vec(v: Vec<A>) -> Self {
        S::of_array(Array::from_array(ndarray::Array1::from_vec(v)))
    }
}

impl<A: Clone> Array<A, Ix1> {
    /// `array![a, b, c]`: a 1-d array of the elements. A small one of f64 or f32 is written
    /// into a spent value of its length when this thread keeps one, and goes back to them when
    /// dropped (`pool.rs`: ndarray code makes a 3-vector a step, `array![..]` in a function
    /// called in a loop), as the operators' small results do.
    #[doc(hidden)]
    pub fn from_elems<const N: usize>(elems: [A; N]) -> Self {
        fn kept<F: pool::Pooled, A, const N: usize>(elems: &[A; N]) -> Option<Array<A, Ix1>> {
            if type_id::<A>() != type_id::<F>() || N == 0 || N > pool::MAX_LEN {
                return None;
            }
            let home = Home::current();
            if N > home.session().eager_max_elements() {
                return None;
            }
            let elems: &[F; N] = same_type(elems);
            let value = match pool::take::<F>(N) {
                Some(mut v) => {
                    pool::elements(&mut v).copy_from_slice(elems);
                    v
                }
                None => NdArc::from_vec(elems.to_vec()),
            };
            Some(same_type(Array::<F, Ix1>::from_kept(value, home)))
        }
        f64_or_f32::<A, _>(|| kept::<f64, A, N>(&elems), || kept::<f32, A, N>(&elems)).unwrap_or_else(|| Array::from_array(ndarray::Array1::from(Vec::from(elems))))
    }
}

impl<A: Clone, D: Dimension> From<ndarray::Array<A, D>> for Array<A, D> {
    fn from(a: ndarray::Array<A, D>) -> Self {
        Array::from_array(a)
    }
}

/// Display evaluates and prints like ndarray (an evaluation that fails prints why).
impl<A: fmt::Display, S: Data<Elem = A>, D: Dimension> fmt::Display for ArrayBase<S, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.eval_view() {
            Ok(v) => fmt::Display::fmt(&v, f),
            Err(e) => write!(f, "<{} not evaluated: {e}>", self.described()),
        }
    }
}
/// ndarray's `Debug`, and the graph node's number when the array has one.
impl<A: fmt::Debug, S: Data<Elem = A>, D: Dimension> fmt::Debug for ArrayBase<S, D> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (self.eval_view(), self.handle().and_then(Handle::node)) {
            (Ok(v), Some(lazy)) => write!(f, "{v:?}, bach #{}", lazy.id()),
            (Ok(v), None) => fmt::Debug::fmt(&v, f),
            (Err(e), _) => write!(f, "<{} not evaluated: {e}>", self.described()),
        }
    }
}

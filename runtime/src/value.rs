//! What flows along the graph's edges: host values (`Value`), borrowed pieces of them
//! (`ValueRef`), and what is known about a value before it exists (`Meta`).

use std::any::Any;
use std::fmt;
use std::ops::Range;
use std::sync::Arc;

use ndarray::{ArcArray, ArrayD, ArrayViewD, Axis, IxDyn, Slice};

use crate::error::{BachError, Result};

/// Element type of a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum DType {
    F64,
    F32,
    /// Integers: class and cluster labels, indices.
    I64,
    Bool,
    /// Anything that is not an array: a fitted model, a user struct.
    Opaque,
}

impl DType {
    /// Bytes per element (0 for opaque values, whose size the planner does not know).
    pub fn size_of(self) -> usize {
        match self {
            DType::F64 => 8,
            DType::F32 => 4,
            DType::I64 => 8,
            DType::Bool => 1,
            DType::Opaque => 0,
        }
    }
}

impl fmt::Display for DType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DType::F64 => "f64",
            DType::F32 => "f32",
            DType::I64 => "i64",
            DType::Bool => "bool",
            DType::Opaque => "opaque",
        })
    }
}

/// Shape and dtype of a value: known when the call is made, before anything runs.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Meta {
    pub dtype: DType,
    pub shape: Vec<usize>,
}

impl Meta {
    pub fn new(dtype: DType, shape: impl Into<Vec<usize>>) -> Self {
        Meta { dtype, shape: shape.into() }
    }
    pub fn opaque() -> Self {
        Meta { dtype: DType::Opaque, shape: vec![] }
    }
    pub fn ndim(&self) -> usize {
        self.shape.len()
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Length of axis 0 (1 for a 0-d value): the dimension pieces are cut along.
    pub fn rows(&self) -> usize {
        self.shape.first().copied().unwrap_or(1)
    }
    /// Bytes of one row (all axes but the first).
    pub fn row_bytes(&self) -> usize {
        self.shape.iter().skip(1).product::<usize>() * self.dtype.size_of()
    }
    pub fn bytes(&self) -> usize {
        self.len() * self.dtype.size_of()
    }
    pub fn with_dtype(&self, dtype: DType) -> Meta {
        Meta { dtype, shape: self.shape.clone() }
    }
}

impl fmt::Display for Meta {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{:?}", self.dtype, self.shape)
    }
}

/// Memory of an accelerator holding one value (or several row pieces of one). The device that
/// made it knows its concrete type; it is freed (or returned to the device's pool) when the
/// last [`DeviceValue`] pointing at it goes.
pub trait DeviceBuffer: Any + Send + Sync {
    fn as_any(&self) -> &dyn Any;
}

/// A value (or a row range of one) in an accelerator's memory: row-major, `meta.len()`
/// elements starting `offset` elements into `buffer`.
#[derive(Clone)]
pub struct DeviceValue {
    pub device: crate::profile::DeviceId,
    pub meta: Meta,
    pub offset: usize,
    pub buffer: Arc<dyn DeviceBuffer>,
}

impl DeviceValue {
    /// The device's own buffer type, if `B` is it.
    pub fn buffer<B: DeviceBuffer>(&self) -> Option<&B> {
        self.buffer.as_any().downcast_ref::<B>()
    }
    /// Rows `range` of axis 0: same buffer, nothing copied.
    pub fn slice_rows(&self, range: Range<usize>) -> Result<DeviceValue> {
        if self.meta.ndim() == 0 || range.end > self.meta.rows() || range.start > range.end {
            return Err(BachError::invalid("split", format!("rows {range:?} of a device value of shape {:?}", self.meta.shape)));
        }
        let row_len: usize = self.meta.shape[1..].iter().product();
        let mut meta = self.meta.clone();
        meta.shape[0] = range.len();
        Ok(DeviceValue { device: self.device, meta, offset: self.offset + range.start * row_len, buffer: self.buffer.clone() })
    }
}

/// A value: an n-d array on the host (shared, so caching and handing it out copy nothing),
/// an opaque object, or an array in an accelerator's memory.
#[derive(Clone)]
pub enum Value {
    F64(ArcArray<f64, IxDyn>),
    F32(ArcArray<f32, IxDyn>),
    I64(ArcArray<i64, IxDyn>),
    Bool(ArcArray<bool, IxDyn>),
    Opaque(Arc<dyn Any + Send + Sync>),
    Device(DeviceValue),
}

impl fmt::Debug for Value {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Value::F64(a) => write!(f, "F64({a})"),
            Value::F32(a) => write!(f, "F32({a})"),
            Value::I64(a) => write!(f, "I64({a})"),
            Value::Bool(a) => write!(f, "Bool({a})"),
            Value::Opaque(_) => f.write_str("Opaque(..)"),
            Value::Device(d) => write!(f, "Device({}, {})", d.device.0, d.meta),
        }
    }
}

impl Value {
    pub fn meta(&self) -> Meta {
        self.view().meta()
    }
    pub fn view(&self) -> ValueRef<'_> {
        match self {
            Value::F64(a) => ValueRef::F64(a.view()),
            Value::F32(a) => ValueRef::F32(a.view()),
            Value::I64(a) => ValueRef::I64(a.view()),
            Value::Bool(a) => ValueRef::Bool(a.view()),
            Value::Opaque(o) => ValueRef::Opaque(o),
            Value::Device(d) => ValueRef::Device(d.clone()),
        }
    }
    /// The accelerator holding this value, or `None` for the host.
    pub fn device(&self) -> Option<crate::profile::DeviceId> {
        match self {
            Value::Device(d) => Some(d.device),
            _ => None,
        }
    }
    pub fn bytes(&self) -> usize {
        self.meta().bytes()
    }
    /// The typed array inside, if the dtype is `A`.
    pub fn array<A: Element>(&self) -> Option<&ArcArray<A, IxDyn>> {
        A::array_of(self)
    }
}

impl<A: Element> From<ArrayD<A>> for Value {
    fn from(a: ArrayD<A>) -> Self {
        A::wrap(a.into_shared())
    }
}

/// A borrowed value, possibly a piece (a range of rows) of a larger one.
#[derive(Clone)]
pub enum ValueRef<'a> {
    F64(ArrayViewD<'a, f64>),
    F32(ArrayViewD<'a, f32>),
    I64(ArrayViewD<'a, i64>),
    Bool(ArrayViewD<'a, bool>),
    Opaque(&'a Arc<dyn Any + Send + Sync>),
    /// Rows of a value in an accelerator's memory (a cheap handle, not a borrow).
    Device(DeviceValue),
}

impl<'a> ValueRef<'a> {
    pub fn meta(&self) -> Meta {
        match self {
            ValueRef::F64(a) => Meta::new(DType::F64, a.shape()),
            ValueRef::F32(a) => Meta::new(DType::F32, a.shape()),
            ValueRef::I64(a) => Meta::new(DType::I64, a.shape()),
            ValueRef::Bool(a) => Meta::new(DType::Bool, a.shape()),
            ValueRef::Opaque(_) => Meta::opaque(),
            ValueRef::Device(d) => d.meta.clone(),
        }
    }
    pub fn dtype(&self) -> DType {
        match self {
            ValueRef::F64(_) => DType::F64,
            ValueRef::F32(_) => DType::F32,
            ValueRef::I64(_) => DType::I64,
            ValueRef::Bool(_) => DType::Bool,
            ValueRef::Opaque(_) => DType::Opaque,
            ValueRef::Device(d) => d.meta.dtype,
        }
    }
    pub fn to_value(&self) -> Value {
        match self {
            ValueRef::F64(a) => Value::F64(a.to_shared()),
            ValueRef::F32(a) => Value::F32(a.to_shared()),
            ValueRef::I64(a) => Value::I64(a.to_shared()),
            ValueRef::Bool(a) => Value::Bool(a.to_shared()),
            ValueRef::Opaque(o) => Value::Opaque(Arc::clone(o)),
            ValueRef::Device(d) => Value::Device(d.clone()),
        }
    }
    /// Rows `range` of axis 0 (a view, nothing copied).
    pub fn slice_rows(self, range: Range<usize>) -> Result<ValueRef<'a>> {
        let meta = self.meta();
        if meta.ndim() == 0 || range.end > meta.rows() || range.start > range.end {
            return Err(BachError::invalid("split", format!("rows {range:?} of a value of shape {:?}", meta.shape)));
        }
        let s = Slice::from(range.start..range.end);
        Ok(match self {
            ValueRef::F64(a) => ValueRef::F64(a.slice_axis_move(Axis(0), s)),
            ValueRef::F32(a) => ValueRef::F32(a.slice_axis_move(Axis(0), s)),
            ValueRef::I64(a) => ValueRef::I64(a.slice_axis_move(Axis(0), s)),
            ValueRef::Bool(a) => ValueRef::Bool(a.slice_axis_move(Axis(0), s)),
            ValueRef::Opaque(_) => unreachable!("opaque values have no rows"),
            ValueRef::Device(d) => ValueRef::Device(d.slice_rows(range)?),
        })
    }
    /// The typed view inside, or a dtype error naming `op`.
    pub fn array<A: Element>(&self, op: &str) -> Result<ArrayViewD<'a, A>> {
        if let ValueRef::Device(d) = self {
            return Err(BachError::invalid(op, format!("the value lives on accelerator {}: copy it to the host first", d.device.0)));
        }
        A::view_of(self.clone()).ok_or_else(|| BachError::dtype(op, A::DTYPE, self.dtype()))
    }
}

/// The element types a lazy array can hold.
pub trait Element: Copy + Send + Sync + fmt::Debug + fmt::Display + PartialEq + 'static {
    const DTYPE: DType;
    fn wrap(a: ArcArray<Self, IxDyn>) -> Value;
    fn array_of(v: &Value) -> Option<&ArcArray<Self, IxDyn>>;
    fn view_of(v: ValueRef<'_>) -> Option<ArrayViewD<'_, Self>>;
}

macro_rules! element {
    ($t:ty, $variant:ident) => {
        impl Element for $t {
            const DTYPE: DType = DType::$variant;
            fn wrap(a: ArcArray<Self, IxDyn>) -> Value {
                Value::$variant(a)
            }
            fn array_of(v: &Value) -> Option<&ArcArray<Self, IxDyn>> {
                match v {
                    Value::$variant(a) => Some(a),
                    _ => None,
                }
            }
            fn view_of(v: ValueRef<'_>) -> Option<ArrayViewD<'_, Self>> {
                match v {
                    ValueRef::$variant(a) => Some(a),
                    _ => None,
                }
            }
        }
    };
}
element!(f64, F64);
element!(f32, F32);
element!(i64, I64);
element!(bool, Bool);

/// Concatenate row pieces (in order) into one value: the merge of the row split type.
/// Pieces are copied in parallel into an output that is never zero-filled first.
pub fn concat_rows(pieces: &[Value]) -> Result<Value> {
    fn cat<A: Element>(pieces: &[Value]) -> Result<Value> {
        use rayon::prelude::*;
        let views: Vec<ArrayViewD<'_, A>> = pieces.iter().map(|p| p.view().array::<A>("merge")).collect::<Result<_>>()?;
        let mut shape = views[0].shape().to_vec();
        if shape.is_empty() || views.iter().any(|v| v.shape()[1..] != shape[1..]) {
            return Err(BachError::shape("merge", "row pieces of different widths"));
        }
        shape[0] = views.iter().map(|v| v.len_of(Axis(0))).sum();
        let mut out = ndarray::ArrayD::<A>::uninit(IxDyn(&shape));
        let mut rest = out.view_mut();
        let mut chunks = Vec::with_capacity(views.len());
        for v in &views {
            let (head, tail) = rest.split_at(Axis(0), v.len_of(Axis(0)));
            chunks.push(head);
            rest = tail;
        }
        chunks.into_par_iter().zip(views.par_iter()).for_each(|(chunk, v)| v.assign_to(chunk));
        // SAFETY: the chunks cover every row of `out` and each was assigned above.
        let whole = unsafe { out.assume_init() };
        Ok(A::wrap(whole.into_shared()))
    }
    match pieces.first() {
        None => Err(BachError::invalid("merge", "no pieces")),
        Some(_) if pieces.len() == 1 => Ok(pieces[0].clone()),
        Some(Value::F64(_)) => cat::<f64>(pieces),
        Some(Value::F32(_)) => cat::<f32>(pieces),
        Some(Value::I64(_)) => cat::<i64>(pieces),
        Some(Value::Bool(_)) => cat::<bool>(pieces),
        Some(Value::Opaque(_)) => Err(BachError::invalid("merge", "opaque values cannot be concatenated")),
        Some(Value::Device(_)) => Err(BachError::invalid("merge", "device pieces are merged by their device")),
    }
}

/// A host array written in place, one row range at a time, by the pieces of a stage: the
/// result of a stage whose output merges by rows is allocated once, whole, and each piece's
/// result lands in its rows (the CPU writes it there; an accelerator copies device-to-host
/// straight into it), so no merge pass runs afterwards. The memory is not zero-filled: its
/// pages are first touched by the pieces that write them, in parallel.
pub struct RowsOut {
    /// Background threads faulting the pages in ahead of the writers, if started: declared
    /// first, so that they are stopped and joined before the memory is freed.
    prefault: Option<crate::fresh::Prefault>,
    meta: Meta,
    buf: RowsBuf,
    /// Bytes of one row.
    row_bytes: usize,
    /// Rows written so far (every row exactly once, by the executor's disjoint pieces).
    written: Arc<std::sync::atomic::AtomicUsize>,
}

enum RowsBuf {
    F64(Vec<std::mem::MaybeUninit<f64>>),
    F32(Vec<std::mem::MaybeUninit<f32>>),
    I64(Vec<std::mem::MaybeUninit<i64>>),
    /// Bytes 0 or 1 (a device's bool bytes are normalised as they land).
    Bool(Vec<std::mem::MaybeUninit<bool>>),
}

impl RowsBuf {
    fn base(&self) -> *mut u8 {
        match self {
            RowsBuf::F64(v) => v.as_ptr() as *mut u8,
            RowsBuf::F32(v) => v.as_ptr() as *mut u8,
            RowsBuf::I64(v) => v.as_ptr() as *mut u8,
            RowsBuf::Bool(v) => v.as_ptr() as *mut u8,
        }
    }
}

/// Rows of a [`RowsOut`] that one piece writes: raw, so a device can fill them from another
/// thread after the call that handed them out has returned.
pub struct HostRows {
    ptr: *mut u8,
    len: usize,
    rows: usize,
    dtype: DType,
    written: Arc<std::sync::atomic::AtomicUsize>,
    /// Bytes of the whole result these rows are part of.
    whole: usize,
}

// SAFETY: a `HostRows` is the only handle to its bytes (the executor hands out disjoint row
// ranges, each once) and its `RowsOut`'s allocation outlives it (every write is finished or
// dropped before the `RowsOut` is turned into a value or dropped).
unsafe impl Send for HostRows {}

impl HostRows {
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn dtype(&self) -> DType {
        self.dtype
    }
    /// Bytes of the whole result these rows are part of.
    pub fn whole_len(&self) -> usize {
        self.whole
    }
    /// The destination bytes (not yet initialised).
    pub fn bytes_mut(&mut self) -> &mut [std::mem::MaybeUninit<u8>] {
        // SAFETY: `len` bytes inside the RowsOut's allocation, owned by this handle alone.
        unsafe { std::slice::from_raw_parts_mut(self.ptr as *mut std::mem::MaybeUninit<u8>, self.len) }
    }
    /// Say that every byte was written (`bytes_mut` filled); bool bytes become 0 or 1.
    pub fn written(mut self) {
        if self.dtype == DType::Bool {
            for b in self.bytes_mut() {
                // SAFETY: the caller wrote every byte.
                let v = unsafe { b.assume_init() };
                b.write((v != 0) as u8);
            }
        }
        self.written.fetch_add(self.rows, std::sync::atomic::Ordering::AcqRel);
    }
    /// Write a host piece of the same dtype and row count into these rows.
    pub fn write(mut self, piece: ValueRef<'_>) -> Result<()> {
        fn put<A: Copy>(src: ArrayViewD<'_, A>, dst: &mut [std::mem::MaybeUninit<u8>]) {
            let n = std::mem::size_of::<A>();
            // SAFETY: `dst` holds exactly src.len() elements of A, suitably aligned (it is a
            // row range of an allocation of A).
            let out = unsafe { std::slice::from_raw_parts_mut(dst.as_mut_ptr() as *mut std::mem::MaybeUninit<A>, dst.len() / n) };
            match src.as_slice() {
                Some(s) => {
                    // SAFETY: equal lengths (checked by the caller), distinct memory.
                    unsafe { std::ptr::copy_nonoverlapping(s.as_ptr(), out.as_mut_ptr() as *mut A, s.len()) }
                }
                None => out.iter_mut().zip(src.iter()).for_each(|(o, &v)| {
                    o.write(v);
                }),
            }
        }
        let meta = piece.meta();
        if meta.dtype != self.dtype || meta.bytes() != self.len || meta.rows() != self.rows {
            return Err(BachError::invalid("merge", format!("a piece {meta} does not fill {} rows of {} ({} bytes)", self.rows, self.dtype, self.len)));
        }
        let dst = self.bytes_mut();
        match piece {
            ValueRef::F64(a) => put(a, dst),
            ValueRef::F32(a) => put(a, dst),
            ValueRef::I64(a) => put(a, dst),
            ValueRef::Bool(a) => put(a, dst),
            _ => return Err(BachError::invalid("merge", "only host arrays are written into host rows")),
        }
        // Bools came from a bool array: no normalising needed.
        self.written.fetch_add(self.rows, std::sync::atomic::Ordering::AcqRel);
        Ok(())
    }
}

impl RowsOut {
    /// A whole host array of `meta` to be written by row ranges; `None` for dtypes that are
    /// not plain host arrays or values without rows. Its memory comes from the heap
    /// ([`crate::fresh::from_heap`]): the memory of earlier results the session freed, else
    /// fresh (first touched by the writers, in parallel, unless [`RowsOut::prefault`] faults
    /// it in ahead of them; see [`crate::fresh`]).
    pub fn new(meta: &Meta) -> Option<RowsOut> {
        if meta.ndim() == 0 {
            return None;
        }
        let n = meta.len();
        // From the heap: the next evaluation's results reuse this memory once it is freed.
        let buf = crate::fresh::from_heap(|| match meta.dtype {
            DType::F64 => Some(RowsBuf::F64(Vec::with_capacity(n))),
            DType::F32 => Some(RowsBuf::F32(Vec::with_capacity(n))),
            DType::I64 => Some(RowsBuf::I64(Vec::with_capacity(n))),
            DType::Bool => Some(RowsBuf::Bool(Vec::with_capacity(n))),
            DType::Opaque => None,
        })?;
        crate::fresh::advise_huge_pages(buf.base(), n * meta.dtype.size_of());
        Some(RowsOut { prefault: None, meta: meta.clone(), buf, row_bytes: meta.row_bytes(), written: Arc::new(std::sync::atomic::AtomicUsize::new(0)) })
    }
    pub fn meta(&self) -> &Meta {
        &self.meta
    }
    /// Fault the memory in on `threads` background threads, in row order, while the writers
    /// are busy elsewhere (an accelerator computing the rows it will copy here): the copies
    /// then land in touched memory. Nothing happens for small results, memory that is in
    /// already ([`crate::fresh::resident`]), or where the OS cannot (see
    /// [`crate::fresh::Prefault`]).
    pub fn prefault(&mut self, threads: usize) {
        let len = self.meta.len() * self.meta.dtype.size_of();
        // Memory of earlier results, reused ([`crate::fresh::from_heap`]), is in already.
        if self.prefault.is_none() && !crate::fresh::resident(self.buf.base(), len) {
            self.prefault = crate::fresh::Prefault::start(self.buf.base(), len, threads);
        }
    }
    /// The handle through which `range` of axis 0 is written. The caller hands out each row
    /// once (the pieces of a stage are disjoint).
    pub fn rows(&self, range: Range<usize>) -> Result<HostRows> {
        if range.start > range.end || range.end > self.meta.rows() {
            return Err(BachError::invalid("merge", format!("rows {range:?} of a result of shape {:?}", self.meta.shape)));
        }
        // SAFETY: in bounds of the allocation (capacity meta.len() elements).
        let ptr = unsafe { self.buf.base().add(range.start * self.row_bytes) };
        Ok(HostRows { ptr, len: range.len() * self.row_bytes, rows: range.len(), dtype: self.meta.dtype, written: self.written.clone(), whole: self.meta.rows() * self.row_bytes })
    }
    /// The finished value; an error if some rows were never written.
    pub fn into_value(mut self) -> Result<Value> {
        if let Some(p) = self.prefault.take() {
            p.finish();
        }
        let rows = self.written.load(std::sync::atomic::Ordering::Acquire);
        if rows != self.meta.rows() {
            return Err(BachError::invalid("merge", format!("{rows} of {} rows of a result were written", self.meta.rows())));
        }
        let n = self.meta.len();
        let shape = IxDyn(&self.meta.shape);
        fn done<A: Element>(mut v: Vec<std::mem::MaybeUninit<A>>, n: usize, shape: IxDyn) -> Value {
            // SAFETY: every row was written (counted above), so the first n elements are
            // initialised; MaybeUninit<A> has A's layout.
            let v = unsafe {
                v.set_len(n);
                let mut v = std::mem::ManuallyDrop::new(v);
                Vec::from_raw_parts(v.as_mut_ptr() as *mut A, v.len(), v.capacity())
            };
            A::wrap(ArrayD::from_shape_vec(shape, v).expect("the shape of the elements").into_shared())
        }
        Ok(match self.buf {
            RowsBuf::F64(v) => done(v, n, shape),
            RowsBuf::F32(v) => done(v, n, shape),
            RowsBuf::I64(v) => done(v, n, shape),
            RowsBuf::Bool(v) => done(v, n, shape),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{array, ArrayD};

    #[test]
    fn slice_and_concat_roundtrip() {
        let a: ArrayD<f64> = array![[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]].into_dyn();
        let v = Value::from(a.clone());
        let p0 = v.view().slice_rows(0..1).unwrap().to_value();
        let p1 = v.view().slice_rows(1..3).unwrap().to_value();
        let back = concat_rows(&[p0, p1]).unwrap();
        assert_eq!(back.array::<f64>().unwrap(), &a.into_shared());
    }

    #[test]
    fn slicing_a_scalar_is_an_error() {
        let v = Value::from(ArrayD::from_elem(IxDyn(&[]), 1.0f64));
        assert!(v.view().slice_rows(0..1).is_err());
    }

    #[test]
    fn wrong_dtype_names_the_op() {
        let v = Value::from(ArrayD::from_elem(IxDyn(&[2]), 1.0f32));
        let err = v.view().array::<f64>("sqrt").unwrap_err();
        assert_eq!(err.to_string(), "dtype mismatch in `sqrt`: expected f64, got f32");
    }
}

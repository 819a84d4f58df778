//! Copies between host memory and the GPU: in, through pinned staging buffers filled by the
//! host's cores in chunks (or straight from memory page-locked in place); out, four chunks in
//! flight while the drain thread lands earlier ones in fresh memory or a result's rows.

use std::collections::VecDeque;
use std::mem::MaybeUninit;
use std::sync::Arc;

use cudarc::driver::result;
use cudarc::driver::CudaEvent;
use ndarray::{Array, CowArray, IxDyn};
use rayon::prelude::*;

use super::buffers::{constants_on, CudaConstant};
use super::device::{prefault_on, CudaDevice};
use super::gpu::Gpu;
use super::memory::{Lane, Staging};
use super::At;
use crate::device::{panic_text, PendingCopy, PendingWrite, Tag};
use crate::error::{BachError, Result};
use crate::knobs::{knobs, Fill};
use crate::trace::EventKind;
use crate::value::{DType, DeviceValue, HostRows, Meta, Value, ValueRef};

/// Bytes per chunk of a copy in by default, for [`Fill::Cores`] and [`Fill::Chunks`]
/// (`BACH_CUDA_CHUNK_IN` sets another).
pub(super) const CHUNK_IN_CORES: usize = 16 << 20;

pub(super) const CHUNK_IN_CHUNKS: usize = 4 << 20;

/// Tuning knobs read once from the environment (for measuring on a GPU host; see
/// [`crate::knobs`]): `BACH_CUDA_FILL=cores|chunks` ([`Fill`]), `BACH_CUDA_CHUNK_IN` (bytes per
/// chunk of a copy in), `BACH_CUDA_READAHEAD=0`, `BACH_PREFAULT=0` and `BACH_CUDA_FUSE=0`.
pub(super) fn fill() -> Fill {
    knobs().cuda_fill
}

pub(super) fn chunk_in() -> usize {
    knobs().cuda_chunk_in.unwrap_or(match fill() {
        Fill::Cores => CHUNK_IN_CORES,
        Fill::Chunks => CHUNK_IN_CHUNKS,
    })
}

/// Largest piece of one device-to-host copy through one staging buffer, and how many are in
/// flight while the drain thread copies earlier ones out.
pub(super) const CHUNK_OUT: usize = 16 << 20;

pub(super) const OUT_IN_FLIGHT: usize = 4;

/// What the drain thread made of a copy to the host.
pub(super) fn drained(landed: std::sync::mpsc::Receiver<Result<Landing>>, device: &str) -> Result<Landing> {
    landed.recv().unwrap_or_else(|_| Err(At { op: "copy to host", device }.fail("the thread draining copies to the host stopped")))
}

impl CudaDevice {
    /// Start copying a device value to the host, landing where `landing` says.
    pub(super) fn download(&self, value: ValueRef<'_>, tag: Tag, landing: impl FnOnce(At<'_>) -> Result<Landing>) -> Result<Download> {
        self.guard("copy to host", |at| {
            let ValueRef::Device(d) = self.realized(&value, at)? else {
                return Err(at.invalid("the value is not on the GPU"));
            };
            let buf = self.buffer(&d, at)?;
            self.wait_for(Lane::D2h, buf, at)?;
            let src = buf.block.ptr + (d.offset * d.meta.dtype.size_of()) as u64;
            let start = self.gpu.begin(Lane::D2h).map_err(|e| at.cuda("cuEventRecord", e))?;
            let mut download = Download {
                gpu: self.gpu.clone(),
                owner: self.owner,
                device: self.profile.name.clone(),
                src,
                len: d.meta.bytes(),
                next: 0,
                inflight: VecDeque::new(),
                start: Some(start),
                tag,
                prefault: None,
                out: Some(landing(at)?),
                direct: None,
                value: d,
            };
            // Rows landing in page-locked memory (a landing of earlier results): one DMA
            // straight into them, no staging buffers and no host copy.
            if let Some(Landing::Rows(rows)) = download.out.as_mut() {
                let whole = rows.whole_len();
                let dest = rows.bytes_mut();
                let at_addr = dest.as_ptr() as usize;
                if !dest.is_empty() && self.gpu.registry.covers_range(at_addr..at_addr + dest.len()) {
                    let stream = self.gpu.stream(Lane::D2h).cu_stream();
                    // SAFETY: a live block (held by `value`) into page-locked rows owned by this
                    // download until the end event, which `finish` waits for, has completed.
                    unsafe { result::memcpy_dtoh_async(dest, src, stream) }.map_err(|e| at.cuda("cuMemcpyDtoHAsync", e))?;
                    let start = download.start.take().expect("the span's start");
                    let end = self.gpu.end(Lane::D2h, self.owner, Some((tag, EventKind::Transfer)), start).map_err(|e| at.cuda("cuEventRecord", e))?;
                    self.gpu.registry.used_at(at_addr, end.clone());
                    download.next = download.len;
                    download.direct = Some(end);
                    self.gpu.registry.rows_landed(whole, true);
                    return Ok(download);
                }
                self.gpu.registry.rows_landed(whole, false);
            }
            // A fresh landing of several chunks: fault its pages in ahead of the drain, which
            // copies chunk after chunk (a smaller one is drained before threads would help).
            if let (Some(Landing::Fresh(out)), true) = (download.out.as_mut(), prefault_on()) {
                let dest = out.dest();
                if dest.len() >= OUT_IN_FLIGHT * CHUNK_OUT {
                    download.prefault = crate::fresh::Prefault::start(dest.as_mut_ptr() as *mut u8, dest.len(), crate::fresh::prefault_threads());
                }
            }
            download.pump(at)?;
            Ok(download)
        })
    }

    /// Copy a host value (or piece) into the GPU's memory, in chunks through pinned staging
    /// (or straight from memory page-locked in place).
    pub(super) fn upload(&self, value: ValueRef<'_>, tag: Tag) -> Result<Value> {
        self.guard("copy to GPU", |at| {
            let host = match &value {
                ValueRef::F64(a) => HostArray::F64(a.as_standard_layout()),
                ValueRef::F32(a) => HostArray::F32(a.as_standard_layout()),
                ValueRef::I64(a) => HostArray::I64(a.as_standard_layout()),
                ValueRef::Bool(a) => HostArray::Bool(a.as_standard_layout()),
                ValueRef::Device(d) if d.device == self.profile.id => return Ok(Value::Device(d.clone())),
                ValueRef::Device(d) => return Err(at.invalid(format!("the value is on device {}, not on the host", d.device.0))),
                ValueRef::Opaque(_) => return Err(at.invalid("opaque values cannot be copied to a GPU")),
            };
            let meta = value.meta();
            let bytes = host.bytes();
            if constants_on() && meta.len() == 1 && matches!(meta.dtype, DType::F64 | DType::F32 | DType::I64) {
                let mut le = [0u8; 8];
                le[..bytes.len()].copy_from_slice(bytes);
                let constant = CudaConstant { dtype: meta.dtype, bits: u64::from_le_bytes(le), memory: std::sync::OnceLock::new() };
                return Ok(Value::Device(DeviceValue { device: self.profile.id, meta, offset: 0, buffer: Arc::new(constant) }));
            }
            let block = self.gpu.pool.alloc(bytes.len(), at)?;
            block.touch(Lane::H2d);
            let start = self.gpu.begin(Lane::H2d).map_err(|e| at.cuda("cuEventRecord", e))?;
            // Each chunk: fill a staging buffer, queue its DMA. Their order on the stream does
            // not matter (distinct bytes); the end event follows them all.
            let dst = block.ptr;
            // One DMA straight from host memory the copy engine can read (kept until the
            // returned event, the span's end, completes: it marks the copy done too).
            let straight = |src: &[u8], start: Arc<CudaEvent>| -> Result<Arc<CudaEvent>> {
                let stream = self.gpu.stream(Lane::H2d).cu_stream();
                // SAFETY: page-locked host memory, alive until the event completes, into a live
                // block of at least src.len() bytes.
                unsafe { result::memcpy_htod_async(dst, src, stream) }.map_err(|e| at.cuda("cuMemcpyHtoDAsync", e))?;
                self.gpu.end(Lane::H2d, self.owner, Some((tag, EventKind::Transfer)), start).map_err(|e| at.cuda("cuEventRecord", e))
            };
            if self.gpu.registry.covers(bytes) {
                // Page-locked in place: straight from the array.
                let end = straight(bytes, start)?;
                self.gpu.registry.used(bytes, end.clone());
                return Ok(self.value(block, meta, end, Lane::H2d));
            }
            let chunk = chunk_in();
            // A small piece of an array streamed in: from a window staged ahead.
            let take = |n: usize| self.gpu.staging.take(n, at);
            let fill_window = |src: &[u8], staging: &mut Staging| copy_bytes(src, uninit_bytes(staging.bytes_mut(src.len())));
            if let Some(staged) = self.read_ahead.stage(bytes, chunk, take, fill_window)? {
                let end = straight(staged.bytes(), start)?;
                staged.queued(end.clone());
                return Ok(self.value(block, meta, end, Lane::H2d));
            }
            let mode = fill();
            let queue = |offset: usize| -> Result<()> {
                self.gpu.ctx.bind_to_thread().map_err(|e| at.cuda("binding the CUDA context", e))?;
                let part = &bytes[offset..(offset + chunk).min(bytes.len())];
                let mut staging = self.gpu.staging.take(part.len(), at)?;
                match mode {
                    Fill::Cores => copy_bytes(part, uninit_bytes(staging.bytes_mut(part.len()))),
                    // SAFETY: equal lengths, distinct buffers.
                    Fill::Chunks => unsafe { std::ptr::copy_nonoverlapping(part.as_ptr(), staging.bytes_mut(part.len()).as_mut_ptr(), part.len()) },
                }
                let stream = self.gpu.stream(Lane::H2d).cu_stream();
                // SAFETY: a pinned buffer (kept until the copy's event completes) into a live
                // block of at least offset + part.len() bytes.
                unsafe { result::memcpy_htod_async(dst + offset as u64, staging.bytes(part.len()), stream) }.map_err(|e| at.cuda("cuMemcpyHtoDAsync", e))?;
                staging.busy_until(self.gpu.marker(Lane::H2d).map_err(|e| at.cuda("cuEventRecord", e))?);
                Ok(())
            };
            let offsets: Vec<usize> = (0..bytes.len()).step_by(chunk).collect();
            if mode == Fill::Chunks && offsets.len() > 1 {
                // A panic in a task reaches this thread, inside `guard`.
                offsets.par_iter().try_for_each(|&o| queue(o))?;
            } else {
                offsets.iter().try_for_each(|&o| queue(o))?;
            }
            let end = self.gpu.end(Lane::H2d, self.owner, Some((tag, EventKind::Transfer)), start).map_err(|e| at.cuda("cuEventRecord", e))?;
            Ok(self.value(block, meta, end, Lane::H2d))
        })
    }

    /// Copy a value of the GPU into fresh host memory, drained on the drain thread.
    pub(super) fn download_fresh(&self, value: ValueRef<'_>, tag: Tag) -> Result<PendingCopy> {
        let meta = value.meta();
        let download = self.download(value, tag, |at| Ok(Landing::Fresh(HostOut::new(&meta, at)?)))?;
        let landed = self.gpu.drain(move || download.finish());
        let device = self.profile.name.clone();
        Ok(PendingCopy::later(move || match drained(landed, &device)? {
            Landing::Fresh(out) => Ok(out.into_value()),
            Landing::Rows(_) => unreachable!("a fresh landing stays fresh"),
        }))
    }

    /// Copy a value of the GPU into rows of a host array being written in place.
    pub(super) fn download_into(&self, value: ValueRef<'_>, dest: HostRows, tag: Tag) -> Result<PendingWrite> {
        if value.meta().bytes() != dest.len() || value.dtype() != dest.dtype() {
            return Err(BachError::invalid("copy to host", format!("a piece {} does not fill {} bytes of {}", value.meta(), dest.len(), dest.dtype())));
        }
        let download = self.download(value, tag, |_| Ok(Landing::Rows(dest)))?;
        let landed = self.gpu.drain(move || download.finish());
        let device = self.profile.name.clone();
        Ok(PendingWrite::later(move || match drained(landed, &device)? {
            Landing::Rows(rows) => {
                rows.written();
                Ok(())
            }
            Landing::Fresh(_) => unreachable!("rows stay rows"),
        }))
    }
}

/// A host array in standard layout (a copy only when the view was not), as bytes.
pub(super) enum HostArray<'a> {
    F64(CowArray<'a, f64, IxDyn>),
    F32(CowArray<'a, f32, IxDyn>),
    I64(CowArray<'a, i64, IxDyn>),
    Bool(CowArray<'a, bool, IxDyn>),
}

pub(super) fn as_bytes<T: Copy>(s: &[T]) -> &[u8] {
    // SAFETY: f64, f32, i64 and bool (0 or 1) are plain bytes; the length is the slice's size.
    unsafe { std::slice::from_raw_parts(s.as_ptr() as *const u8, std::mem::size_of_val(s)) }
}

impl HostArray<'_> {
    pub(super) fn bytes(&self) -> &[u8] {
        let std = "standard layout";
        match self {
            HostArray::F64(a) => as_bytes(a.as_slice().expect(std)),
            HostArray::F32(a) => as_bytes(a.as_slice().expect(std)),
            HostArray::I64(a) => as_bytes(a.as_slice().expect(std)),
            HostArray::Bool(a) => as_bytes(a.as_slice().expect(std)),
        }
    }
}

/// Copy `src` into `dst` (same length), in parallel when it is large.
pub(super) fn copy_bytes(src: &[u8], dst: &mut [MaybeUninit<u8>]) {
    const PART: usize = 1 << 20;
    let copy = |s: &[u8], d: &mut [MaybeUninit<u8>]| {
        // SAFETY: equal lengths, distinct buffers.
        unsafe { std::ptr::copy_nonoverlapping(s.as_ptr(), d.as_mut_ptr() as *mut u8, s.len()) }
    };
    if src.len() >= 4 * PART {
        src.par_chunks(PART).zip(dst.par_chunks_mut(PART)).for_each(|(s, d)| copy(s, d));
    } else {
        copy(src, dst);
    }
}

pub(super) fn uninit_bytes(b: &mut [u8]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: initialized bytes may be seen as maybe-uninitialized ones.
    unsafe { std::slice::from_raw_parts_mut(b.as_mut_ptr() as *mut MaybeUninit<u8>, b.len()) }
}

/// The host array a copy out fills.
pub(super) enum HostOut {
    F64(Array<MaybeUninit<f64>, IxDyn>),
    F32(Array<MaybeUninit<f32>, IxDyn>),
    I64(Array<MaybeUninit<i64>, IxDyn>),
    /// Bytes as the GPU holds them (any non-zero byte is true).
    Bool(Vec<u8>, Vec<usize>),
}

impl HostOut {
    pub(super) fn new(meta: &Meta, at: At<'_>) -> Result<HostOut> {
        let shape = IxDyn(&meta.shape);
        let mut out = match meta.dtype {
            DType::F64 => HostOut::F64(Array::uninit(shape)),
            DType::F32 => HostOut::F32(Array::uninit(shape)),
            DType::I64 => HostOut::I64(Array::uninit(shape)),
            DType::Bool => HostOut::Bool(vec![0; meta.len()], meta.shape.clone()),
            DType::Opaque => return Err(at.invalid("opaque values are not on the GPU")),
        };
        let dest = out.dest();
        crate::fresh::advise_huge_pages(dest.as_mut_ptr() as *mut u8, dest.len());
        Ok(out)
    }
    pub(super) fn dest(&mut self) -> &mut [MaybeUninit<u8>] {
        fn raw<T>(a: &mut Array<MaybeUninit<T>, IxDyn>) -> &mut [MaybeUninit<u8>] {
            let s = a.as_slice_mut().expect("a fresh array is in standard layout");
            // SAFETY: the same memory, as bytes.
            unsafe { std::slice::from_raw_parts_mut(s.as_mut_ptr() as *mut MaybeUninit<u8>, std::mem::size_of_val(s)) }
        }
        match self {
            HostOut::F64(a) => raw(a),
            HostOut::F32(a) => raw(a),
            HostOut::I64(a) => raw(a),
            HostOut::Bool(v, _) => uninit_bytes(v),
        }
    }
    /// The value; every byte of `dest` must have been written.
    pub(super) fn into_value(self) -> Value {
        match self {
            // SAFETY: the copy wrote every byte.
            HostOut::F64(a) => Value::from(unsafe { a.assume_init() }),
            HostOut::F32(a) => Value::from(unsafe { a.assume_init() }),
            HostOut::I64(a) => Value::from(unsafe { a.assume_init() }),
            HostOut::Bool(v, shape) => Value::from(Array::from_shape_vec(IxDyn(&shape), v.into_iter().map(|b| b != 0).collect()).expect("the shape of the bytes")),
        }
    }
}

/// Where a copy to the host lands: a new host array, or rows of a result written in place.
pub(super) enum Landing {
    Fresh(HostOut),
    Rows(HostRows),
}

impl Landing {
    pub(super) fn dest(&mut self) -> &mut [MaybeUninit<u8>] {
        match self {
            Landing::Fresh(h) => h.dest(),
            Landing::Rows(r) => r.bytes_mut(),
        }
    }
}

/// A copy to the host under way: chunks in flight on the D2H stream, each in its own staging
/// buffer; the rest is queued as the first ones are drained.
pub(super) struct Download {
    pub(super) gpu: Arc<Gpu>,
    pub(super) owner: u64,
    pub(super) device: String,
    /// Keeps the GPU memory alive until the copy is done.
    pub(super) value: DeviceValue,
    pub(super) src: u64,
    pub(super) len: usize,
    pub(super) next: usize,
    pub(super) inflight: VecDeque<(usize, usize, Staging, Arc<CudaEvent>)>,
    pub(super) start: Option<Arc<CudaEvent>>,
    pub(super) tag: Tag,
    /// Faulting a fresh landing's pages in ahead of the drain; before `out`, so that it is
    /// stopped before the memory can go.
    pub(super) prefault: Option<crate::fresh::Prefault>,
    pub(super) out: Option<Landing>,
    /// The end of one DMA straight into page-locked rows, when it went that way.
    pub(super) direct: Option<Arc<CudaEvent>>,
}

impl Download {
    /// Queue chunks until two are in flight; end the span once the last one is queued.
    pub(super) fn pump(&mut self, at: At<'_>) -> Result<()> {
        let stream = self.gpu.stream(Lane::D2h).cu_stream();
        while self.inflight.len() < OUT_IN_FLIGHT && self.next < self.len {
            let n = CHUNK_OUT.min(self.len - self.next);
            let mut staging = self.gpu.staging.take(n, at)?;
            // SAFETY: `n` bytes of a live block (held by `value`) into a pinned buffer held
            // in `inflight` until the copy's event has completed.
            unsafe { result::memcpy_dtoh_async(staging.bytes_mut(n), self.src + self.next as u64, stream) }.map_err(|e| at.cuda("cuMemcpyDtoHAsync", e))?;
            // The last chunk's completion is the span's end (one event fewer a copy).
            let done = match self.start.take() {
                Some(start) if self.next + n >= self.len => self.gpu.end(Lane::D2h, self.owner, Some((self.tag, EventKind::Transfer)), start),
                start => {
                    self.start = start;
                    self.gpu.marker(Lane::D2h)
                }
            }
            .map_err(|e| at.cuda("cuEventRecord", e))?;
            staging.busy_until(done.clone());
            self.inflight.push_back((self.next, n, staging, done));
            self.next += n;
        }
        if self.next >= self.len {
            if let Some(start) = self.start.take() {
                self.gpu.end(Lane::D2h, self.owner, Some((self.tag, EventKind::Transfer)), start).map_err(|e| at.cuda("cuEventRecord", e))?;
            }
        }
        Ok(())
    }

    /// Drain every chunk into the landing place; hand it back.
    pub(super) fn finish(mut self) -> Result<Landing> {
        let device = std::mem::take(&mut self.device);
        let at = At { op: "copy to host", device: &device };
        crate::device::catch_panics(move || {
            self.gpu.ctx.bind_to_thread().map_err(|e| at.cuda("binding the CUDA context", e))?;
            let mut out = self.out.take().expect("finished once");
            // Declared after `out`, so dropped (its threads stopped) before `out` on every way
            // out of here, an error included.
            let prefault = self.prefault.take();
            if let Some(done) = self.direct.take() {
                done.synchronize().map_err(|e| at.cuda("waiting for a copy to the host", e))?;
            }
            while let Some((offset, n, mut staging, done)) = self.inflight.pop_front() {
                done.synchronize().map_err(|e| at.cuda("waiting for a copy to the host", e))?;
                staging.done();
                copy_bytes(staging.bytes(n), &mut out.dest()[offset..offset + n]);
                drop(staging);
                self.pump(at)?;
            }
            debug_assert_eq!(self.value.meta.bytes(), self.len);
            if let Some(p) = prefault {
                p.finish();
            }
            Ok(out)
        })
        .unwrap_or_else(|p| Err(at.fail(format!("the CUDA library panicked: {}", panic_text(&*p)))))
    }
}

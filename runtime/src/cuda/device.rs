//! [`CudaDevice`]: the [`Device`] the executor drives on a GPU.
//!
//! Streams: copies in go on the H2D stream, kernels and cuBLAS on the compute stream, copies
//! out on the D2H stream. Every value's buffer carries the event recorded after the work that
//! wrote it; a stream that reads it first waits for that event (on the GPU, the host never
//! blocks), so piece k+1's copy in, piece k's kernels and piece k-1's copy out overlap.
//!
//! Copies go through pinned staging buffers in chunks: a copy in is cut into 16 MiB chunks,
//! each filled by all of the host's cores and queued while the next is filled; a copy out
//! keeps four 16 MiB chunks in flight and queues the rest as `PendingCopy::finish` drains
//! them.
//!
//! Timing: timing events around every copy and kernel become [`DeviceSpan`]s at
//! `synchronize`, tagged with the node and piece, so the trace shows when the GPU really ran.
//!
//! The device is split by concern, as candle's `cuda_backend/` is: values in GPU memory and
//! kernel arguments (`buffers`), kernel launches and fused chains (`launch`), cuBLAS and
//! cuSOLVER (`blas`), and copies to and from the host (`transfers`).

use std::sync::Arc;

use cudarc::driver::result;
use cudarc::driver::CudaEvent;

use super::buffers::{CudaBuffer, CudaConstant, Input};
use super::gpu::Gpu;
use super::memory::{Block, Lane};
use super::readahead::ReadAhead;
use super::At;
use crate::annotation::{Annotation, Launch, OpCtx, OpKind};
use crate::device::{panic_text, Device, DeviceId, DeviceKind, DeviceProfile, DeviceSpan, MemoryUse, PendingCopy, PendingWrite, Tag};
use crate::error::{BachError, Result};
use crate::knobs::knobs;
use crate::trace::EventKind;
use crate::value::{DeviceValue, HostRows, Meta, Value, ValueRef};

/// The longest an evaluation waits, before its planning, for page-locking under way
/// ([`super::memory::HostRegistry::settle`]).
pub(super) const SETTLE_BOUND: std::time::Duration = std::time::Duration::from_secs(1);

/// Read-ahead staging of inputs streamed in small pieces ([`crate::knobs::Knobs::cuda_readahead`]).
pub(super) fn read_ahead_on() -> bool {
    knobs().cuda_readahead
}
/// Faulting in result memory ahead of the copies back ([`crate::knobs::Knobs::prefault`]).
pub(super) fn prefault_on() -> bool {
    knobs().prefault
}
/// Fusing elementwise ops ([`crate::knobs::Knobs::cuda_fuse`]).
pub(super) fn fuse_on() -> bool {
    knobs().cuda_fuse
}

/// A GPU as a device of a session.
pub struct CudaDevice {
    pub(super) profile: DeviceProfile,
    pub(super) gpu: Arc<Gpu>,
    /// This device's spans on the shared [`Gpu`]'s timeline (one `Gpu` per process and
    /// ordinal, one `CudaDevice` per session).
    pub(super) owner: u64,
    /// Windows of host arrays streamed in small pieces, staged ahead of their pieces.
    pub(super) read_ahead: ReadAhead,
}

impl CudaDevice {
    pub(super) fn new(id: DeviceId, gpu: Arc<Gpu>) -> Self {
        // What the planner may fill: free memory (and what Bach's pool caches) less a margin
        // for CUDA's own needs (cuBLAS workspaces, modules) and other processes.
        let free = gpu.ctx.mem_get_info().map(|(free, _)| free).unwrap_or(gpu.total_memory / 2);
        let cached = gpu.pool.usage().1 as usize;
        let margin = gpu.total_memory / 20 + (256 << 20);
        let memory = (free + cached).saturating_sub(margin);
        let profile = DeviceProfile {
            id,
            kind: DeviceKind::Cuda,
            name: format!("{} (cuda:{}, sm_{}{})", gpu.name, gpu.ordinal, gpu.cc.0, gpu.cc.1),
            memory_bytes: Some(memory as u64),
            threads: 1,
            measured_copies: gpu.bandwidth.2.then_some((gpu.bandwidth.0, gpu.bandwidth.1)),
            fuses_elementwise: fuse_on(),
        };
        static OWNERS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
        CudaDevice { profile, gpu, owner: OWNERS.fetch_add(1, std::sync::atomic::Ordering::Relaxed), read_ahead: ReadAhead::default() }
    }

    /// Run `f` with the context bound to this thread; a panic becomes an error for `op`.
    pub(super) fn guard<T>(&self, op: &str, f: impl FnOnce(At<'_>) -> Result<T>) -> Result<T> {
        let at = At { op, device: &self.profile.name };
        crate::device::catch_panics(|| {
            self.gpu.ctx.bind_to_thread().map_err(|e| at.cuda("binding the CUDA context", e))?;
            f(at)
        })
        .unwrap_or_else(|p| Err(at.fail(format!("the CUDA library panicked: {}", panic_text(&*p)))))
    }

    pub(super) fn buffer<'v>(&self, d: &'v DeviceValue, at: At<'_>) -> Result<&'v CudaBuffer> {
        if d.device != self.profile.id {
            return Err(at.invalid(format!("a value of device {} was handed to {}", d.device.0, self.profile.name)));
        }
        if let Some(c) = d.buffer::<CudaConstant>() {
            if let Some(b) = c.memory.get() {
                return Ok(b);
            }
            let b = self.constant_in_memory(c, at)?;
            // Another thread may have put it there meanwhile: either copy serves.
            let _ = c.memory.set(b);
            return Ok(c.memory.get().expect("set just now"));
        }
        d.buffer::<CudaBuffer>().ok_or_else(|| at.invalid("a device value that is not in CUDA memory"))
    }

    /// A constant copied into device memory (its first use that needs a pointer).
    pub(super) fn constant_in_memory(&self, c: &CudaConstant, at: At<'_>) -> Result<CudaBuffer> {
        let size = c.dtype.size_of();
        let block = self.gpu.pool.alloc(size, at)?;
        block.touch(Lane::H2d);
        let bytes = c.bits.to_le_bytes();
        let stream = self.gpu.stream(Lane::H2d).cu_stream();
        // SAFETY: `size` (at most 8) bytes from ordinary host memory, which the driver has
        // copied aside when the call returns, into a live block of that size.
        unsafe { result::memcpy_htod_async(block.ptr, &bytes[..size], stream) }.map_err(|e| at.cuda("cuMemcpyHtoDAsync", e))?;
        let ready = self.gpu.marker(Lane::H2d).map_err(|e| at.cuda("cuEventRecord", e))?;
        Ok(CudaBuffer { block, ready: Some(ready), lane: Lane::H2d })
    }

    pub(super) fn input<'v>(&self, v: &'v ValueRef<'_>, at: At<'_>) -> Result<Input<'v>> {
        match v {
            ValueRef::Device(d) => {
                let buf = self.buffer(d, at)?;
                Ok(Input { ptr: buf.block.ptr + (d.offset * d.meta.dtype.size_of()) as u64, meta: &d.meta, buf })
            }
            _ => Err(at.invalid(format!("an argument on the host was handed to {}: copy it in first", self.profile.name))),
        }
    }

    /// Make `lane` wait for the work that wrote `buf`, and note that `lane` uses it.
    pub(super) fn wait_for(&self, lane: Lane, buf: &CudaBuffer, at: At<'_>) -> Result<()> {
        if let (Some(ready), true) = (&buf.ready, buf.lane != lane) {
            self.gpu.stream(lane).wait(ready).map_err(|e| at.cuda("cuStreamWaitEvent", e))?;
        }
        buf.block.touch(lane);
        Ok(())
    }

    pub(super) fn value(&self, block: Block, meta: Meta, ready: Arc<CudaEvent>, lane: Lane) -> Value {
        let buffer = Arc::new(CudaBuffer { block, ready: Some(ready), lane });
        Value::Device(DeviceValue { device: self.profile.id, meta, offset: 0, buffer })
    }
}

impl Device for CudaDevice {
    fn profile(&self) -> &DeviceProfile {
        &self.profile
    }

    fn cuda_ordinal(&self) -> Option<usize> {
        Some(self.gpu.ordinal)
    }

    fn run(&self, op: &Annotation, ctx: &OpCtx<'_>, args: &[ValueRef<'_>]) -> Result<Value> {
        self.guard(op.name(), |at| {
            let kernel = op.accelerator().ok_or_else(|| at.invalid("has no accelerator kernel: it cannot run on a GPU"))?;
            if fuse_on() {
                if let Some(v) = self.defer(at, op, ctx, args)? {
                    self.gpu.queued(op.name());
                    return Ok(v);
                }
            }
            let args = args.iter().map(|a| self.realized(a, at)).collect::<Result<Vec<_>>>()?;
            if kernel.launch == Launch::SymmetricEigen {
                let missing = match self.gpu.solver().as_ref() {
                    Some(Err(why)) => Some(why.clone()),
                    _ => None,
                };
                if let Some(why) = missing {
                    return self.on_host(at, op, ctx, &args, &why);
                }
            }
            let inputs = args.iter().map(|a| self.input(a, at)).collect::<Result<Vec<_>>>()?;
            let kind = if op.kind() == OpKind::Alloc { EventKind::Alloc } else { EventKind::Compute };
            let span = (Tag { node: ctx.node, piece: ctx.piece as u32 }, kind);
            self.gpu.queued(op.name());
            match &kernel.launch {
                Launch::Elementwise { params } => self.elementwise(at, kernel, ctx, &inputs, params, span),
                Launch::Fill { params } => self.fill(at, kernel, ctx, params, span),
                Launch::Reduce { axis } => self.reduce(at, kernel, ctx, &inputs, *axis, span),
                Launch::Gemm => self.gemm(at, &inputs, span),
                Launch::Gram => self.gram(at, &inputs, span),
                Launch::Rows { params } => self.rows(at, kernel, ctx, &inputs, params, span),
                Launch::Cross { params } => self.cross(at, kernel, ctx, &inputs, params, span),
                Launch::SymmetricEigen => self.symmetric_eigen(at, &inputs, span),
            }
        })
    }

    fn keep_host(&self, value: &Value) {
        self.gpu.registry.keep(value);
        if read_ahead_on() {
            self.read_ahead.keep(value);
        }
    }

    fn may_read_later(&self, value: &Value) {
        self.gpu.registry.keep(value);
    }

    fn results_landed(&self, value: &Value) {
        self.gpu.registry.land(value);
    }

    fn results_memory(&self, bytes: usize) -> crate::cost::MemoryKind {
        if self.gpu.registry.results_pinned(bytes) {
            crate::cost::MemoryKind::Pinned
        } else {
            crate::cost::MemoryKind::Pageable
        }
    }

    fn before_planning(&self) {
        self.gpu.registry.settle(SETTLE_BOUND);
    }

    fn host_memory(&self, value: &Value) -> crate::cost::MemoryKind {
        match super::memory::host_range(value) {
            Some(r) if self.gpu.registry.covers_range(r.clone()) => crate::cost::MemoryKind::Pinned,
            _ => crate::cost::MemoryKind::Pageable,
        }
    }

    fn evaluation_done(&self) {
        self.read_ahead.clear();
        self.gpu.registry.idle();
    }

    fn state_note(&self) -> Option<String> {
        let (bytes, landings, off) = self.gpu.registry.status();
        match off {
            Some(why) => Some(format!("{}: copies in go through staging buffers ({why})", self.profile.name)),
            None if bytes > landings => {
                let mut note =
                    format!("{}: {} of host arrays page-locked in place, or being (copied in straight, without staging)", self.profile.name, crate::units::bytes(bytes - landings));
                if landings > 0 {
                    note += &format!("; {} of results' memory kept page-locked (results copied out straight)", crate::units::bytes(landings));
                }
                Some(note)
            }
            None if landings > 0 => {
                Some(format!("{}: {} of results' memory kept page-locked (results copied out straight, without staging)", self.profile.name, crate::units::bytes(landings)))
            }
            None => None,
        }
    }

    fn copy_in(&self, value: ValueRef<'_>, tag: Tag) -> Result<Value> {
        self.upload(value, tag)
    }

    fn copy_out(&self, value: ValueRef<'_>, tag: Tag) -> Result<PendingCopy> {
        self.download_fresh(value, tag)
    }

    fn copy_out_into(&self, value: ValueRef<'_>, dest: HostRows, tag: Tag) -> Result<PendingWrite> {
        self.download_into(value, dest, tag)
    }

    fn concat_rows(&self, pieces: &[Value]) -> Result<Value> {
        self.guard("merge", |at| {
            let parts = pieces
                .iter()
                .map(|p| match p {
                    Value::Device(d) => self.realize(d, at),
                    _ => Err(at.invalid("a host piece among GPU pieces")),
                })
                .collect::<Result<Vec<_>>>()?;
            let parts: Vec<&DeviceValue> = parts.iter().collect();
            let first = match parts.as_slice() {
                [] => return Err(at.invalid("no pieces")),
                [one] => return Ok(Value::Device((*one).clone())),
                [first, ..] => &first.meta,
            };
            if first.ndim() == 0 || parts.iter().any(|d| d.meta.dtype != first.dtype || d.meta.shape.get(1..) != first.shape.get(1..)) {
                return Err(BachError::shape("merge", "row pieces of different widths or dtypes"));
            }
            let mut meta = first.clone();
            meta.shape[0] = parts.iter().map(|d| d.meta.shape[0]).sum();
            let out = self.gpu.pool.alloc(meta.bytes(), at)?;
            out.touch(Lane::Compute);
            self.gpu.busy().map_err(|e| at.cuda("cuEventRecord", e))?;
            let stream = self.gpu.stream(Lane::Compute).cu_stream();
            let mut offset = 0u64;
            for d in &parts {
                let buf = self.buffer(d, at)?;
                self.wait_for(Lane::Compute, buf, at)?;
                let n = d.meta.bytes();
                if n > 0 {
                    let src = buf.block.ptr + (d.offset * d.meta.dtype.size_of()) as u64;
                    // SAFETY: `n` bytes of a live piece into the new block, which has room.
                    unsafe { result::memcpy_dtod_async(out.ptr + offset, src, n, stream) }.map_err(|e| at.cuda("cuMemcpyDtoDAsync", e))?;
                }
                offset += n as u64;
            }
            let ready = self.gpu.marker(Lane::Compute).map_err(|e| at.cuda("cuEventRecord", e))?;
            Ok(self.value(out, meta, ready, Lane::Compute))
        })
    }

    fn synchronize(&self) -> Result<Vec<DeviceSpan>> {
        self.read_ahead.drop_windows();
        self.guard("synchronize", |at| self.gpu.synchronize(self.owner).map_err(|e| at.fail(e)))
    }

    fn parallel_pieces(&self) -> bool {
        false
    }

    fn prefaults_results(&self) -> bool {
        prefault_on()
    }

    fn memory(&self) -> Option<MemoryUse> {
        let (live, cached) = self.gpu.pool.usage();
        Some(MemoryUse { used: live + cached, capacity: self.profile.memory_bytes.unwrap_or(0) })
    }
}

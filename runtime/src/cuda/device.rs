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

use std::collections::VecDeque;
use std::mem::MaybeUninit;
use std::sync::{Arc, Mutex, PoisonError};

use cudarc::cublas::sys::{self as blas, cublasOperation_t};
use cudarc::cusolver::sys as solver_sys;
use cudarc::driver::result;
use cudarc::driver::{CudaEvent, CudaFunction, LaunchConfig, PushKernelArg};
use ndarray::{Array, CowArray, IxDyn};
use rayon::prelude::*;

use super::fuse::{self, Expr};
use super::gpu::Gpu;
use super::memory::{Block, Lane, Staging};
use super::readahead::ReadAhead;
use super::shapes::{
    blocks_for, broadcast_shape, cross_block_rows, cross_plan, gemm_plan, gram_plan, index_map, piece_shape, reduce_geometry, GemmPlan, Which, BLOCK, REDUCE_BLOCK,
};
use super::At;
use crate::annotation::{AcceleratorKernel, Annotation, Launch, OpCtx, OpKind};
use crate::device::{panic_text, Device, DeviceId, DeviceKind, DeviceProfile, DeviceSpan, MemoryUse, PendingCopy, PendingWrite, Tag};
use crate::error::{BachError, Result};
use crate::knobs::{knobs, Fill};
use crate::trace::EventKind;
use crate::value::{DType, DeviceBuffer, DeviceValue, HostRows, Meta, Value, ValueRef};

/// Bytes per chunk of a copy in by default, for [`Fill::Cores`] and [`Fill::Chunks`]
/// (`BACH_CUDA_CHUNK_IN` sets another).
const CHUNK_IN_CORES: usize = 16 << 20;
const CHUNK_IN_CHUNKS: usize = 4 << 20;

/// Tuning knobs read once from the environment (for measuring on a GPU host; see
/// [`crate::knobs`]): `BACH_CUDA_FILL=cores|chunks` ([`Fill`]), `BACH_CUDA_CHUNK_IN` (bytes per
/// chunk of a copy in), `BACH_CUDA_READAHEAD=0`, `BACH_PREFAULT=0` and `BACH_CUDA_FUSE=0`.
fn fill() -> Fill {
    knobs().cuda_fill
}
fn chunk_in() -> usize {
    knobs().cuda_chunk_in.unwrap_or(match fill() {
        Fill::Cores => CHUNK_IN_CORES,
        Fill::Chunks => CHUNK_IN_CHUNKS,
    })
}
/// Read-ahead staging of inputs streamed in small pieces ([`crate::knobs::Knobs::cuda_readahead`]).
fn read_ahead_on() -> bool {
    knobs().cuda_readahead
}
/// Faulting in result memory ahead of the copies back ([`crate::knobs::Knobs::prefault`]).
fn prefault_on() -> bool {
    knobs().prefault
}
/// Fusing elementwise ops ([`crate::knobs::Knobs::cuda_fuse`]).
fn fuse_on() -> bool {
    knobs().cuda_fuse
}
/// Largest piece of one device-to-host copy through one staging buffer, and how many are in
/// flight while the drain thread copies earlier ones out.
const CHUNK_OUT: usize = 16 << 20;
/// The longest an evaluation waits, before its planning, for page-locking under way
/// ([`super::memory::HostRegistry::settle`]).
const SETTLE_BOUND: std::time::Duration = std::time::Duration::from_secs(1);
const OUT_IN_FLIGHT: usize = 4;
/// The device's own kernels around cuSOLVER's `syevd` ([`Launch::SymmetricEigen`]):
/// `bach_eigen_check` flags a NaN or infinity in the lower triangle (`flags[1] = 1`; `syevd`
/// would not say), `bach_eigen_order` writes the op's result from `syevd`'s ascending
/// eigenvalues `w` and column-major eigenvectors `v`, one thread per result row: row 0 the
/// values reversed, row `1 + i` column `d - 1 - i` with its first largest-magnitude entry made
/// positive (the CPU's `canonical_signs`).
pub const EIGEN_SOURCE: &str = r#"// bach: around cuSOLVER's syevd (runtime/src/cuda/device.rs)
extern "C" __global__ void bach_eigen_check(unsigned long long d, const double* a, int* flags) {
    for (unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; t < d * d; t += (unsigned long long)gridDim.x * blockDim.x) {
        const double v = a[t];
        if (t % d <= t / d && v - v != 0.0) flags[1] = 1;
    }
}
extern "C" __global__ void bach_eigen_order(unsigned long long d, const double* w, const double* v, const int* flags, double* out) {
    const double nan = __longlong_as_double(0x7ff8000000000000LL);
    for (unsigned long long r = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; r < d + 1; r += (unsigned long long)gridDim.x * blockDim.x) {
        double* o = out + r * d;
        if (flags[1]) {
            for (unsigned long long j = 0; j < d; ++j) o[j] = nan;
        } else if (r == 0) {
            for (unsigned long long j = 0; j < d; ++j) o[j] = w[d - 1 - j];
        } else {
            const double* col = v + (d - r) * d;
            double largest = 0.0, at = 0.0;
            for (unsigned long long k = 0; k < d; ++k) {
                const double x = col[k] < 0.0 ? -col[k] : col[k];
                if (x > largest) {
                    largest = x;
                    at = col[k];
                }
            }
            const double s = at < 0.0 ? -1.0 : 1.0;
            for (unsigned long long k = 0; k < d; ++k) o[k] = s * col[k];
        }
    }
}
"#;

/// Scratch memory for the products of one block of a [`Launch::Cross`] op: 2048 rows of
/// 16384 f64 products (DBSCAN's neighbourhoods at 2^14 points in 8 blocks).
const CROSS_SCRATCH: usize = 256 << 20;

/// Memory of one value (or of several row pieces of one) on the GPU.
pub(super) struct CudaBuffer {
    block: Block,
    /// Recorded after the work that wrote the contents; `None` if nothing did (empty).
    ready: Option<Arc<CudaEvent>>,
    /// The stream that work ran on (readers on other streams wait for `ready`).
    lane: Lane,
}

impl DeviceBuffer for CudaBuffer {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// A one-element value copied to the GPU (a scalar constant of an expression): kept as its
/// bits, not copied. A fused kernel takes it as a parameter by value ([`fuse::generate`]);
/// anything that needs it in memory gets it copied there at first use (one 8-byte copy, as
/// before), `BACH_CUDA_CONST=0` copies it at once. Every scalar was its own copy and event
/// pair before: Black-Scholes has nine.
pub(super) struct CudaConstant {
    dtype: DType,
    /// The element's bytes (an f32's in the low four).
    bits: u64,
    /// The value in device memory, once something needed it there.
    memory: std::sync::OnceLock<CudaBuffer>,
}

impl DeviceBuffer for CudaConstant {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl CudaConstant {
    /// The constant as a kernel parameter of its C type.
    fn karg(&self) -> KArg {
        match self.dtype {
            DType::F32 => KArg::F32(f32::from_bits(self.bits as u32)),
            DType::F64 => KArg::F64(f64::from_bits(self.bits)),
            _ => KArg::U64(self.bits),
        }
    }
}

/// A constant of `meta` (one element) with the bits `bits`, for tests of the generated kernels.
#[cfg(test)]
pub(super) fn constant_for_tests(meta: Meta, bits: u64) -> DeviceValue {
    let dtype = meta.dtype;
    DeviceValue { device: DeviceId(1), meta, offset: 0, buffer: Arc::new(CudaConstant { dtype, bits, memory: std::sync::OnceLock::new() }) }
}

/// Whether `v` is a constant that a fused kernel takes by value.
pub(super) fn is_constant(v: &DeviceValue) -> bool {
    v.buffer::<CudaConstant>().is_some()
}

/// Whether one-element values stay constants (`BACH_CUDA_CONST=0`: copied at once;
/// [`crate::knobs::Knobs::cuda_const`], read once).
fn constants_on() -> bool {
    knobs().cuda_const
}

/// A GPU as a device of a session.
pub struct CudaDevice {
    profile: DeviceProfile,
    gpu: Arc<Gpu>,
    /// This device's spans on the shared [`Gpu`]'s timeline (one `Gpu` per process and
    /// ordinal, one `CudaDevice` per session).
    owner: u64,
    /// Windows of host arrays streamed in small pieces, staged ahead of their pieces.
    read_ahead: ReadAhead,
}

/// A kernel parameter.
enum KArg {
    U64(u64),
    F64(f64),
    F32(f32),
}

/// An argument of a kernel: where its piece starts, and its meta.
struct Input<'v> {
    ptr: u64,
    meta: &'v Meta,
    buf: &'v CudaBuffer,
}

fn suffix(dtype: DType, at: At<'_>) -> Result<&'static str> {
    match dtype {
        DType::F64 => Ok("f64"),
        DType::F32 => Ok("f32"),
        DType::I64 => Ok("i64"),
        DType::Bool => Ok("bool"),
        DType::Opaque => Err(at.invalid("opaque values have no GPU kernels")),
    }
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
    fn guard<T>(&self, op: &str, f: impl FnOnce(At<'_>) -> Result<T>) -> Result<T> {
        let at = At { op, device: &self.profile.name };
        crate::device::catch_panics(|| {
            self.gpu.ctx.bind_to_thread().map_err(|e| at.cuda("binding the CUDA context", e))?;
            f(at)
        })
        .unwrap_or_else(|p| Err(at.fail(format!("the CUDA library panicked: {}", panic_text(&*p)))))
    }

    fn buffer<'v>(&self, d: &'v DeviceValue, at: At<'_>) -> Result<&'v CudaBuffer> {
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
    fn constant_in_memory(&self, c: &CudaConstant, at: At<'_>) -> Result<CudaBuffer> {
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

    fn input<'v>(&self, v: &'v ValueRef<'_>, at: At<'_>) -> Result<Input<'v>> {
        match v {
            ValueRef::Device(d) => {
                let buf = self.buffer(d, at)?;
                Ok(Input { ptr: buf.block.ptr + (d.offset * d.meta.dtype.size_of()) as u64, meta: &d.meta, buf })
            }
            _ => Err(at.invalid(format!("an argument on the host was handed to {}: copy it in first", self.profile.name))),
        }
    }

    /// Make `lane` wait for the work that wrote `buf`, and note that `lane` uses it.
    fn wait_for(&self, lane: Lane, buf: &CudaBuffer, at: At<'_>) -> Result<()> {
        if let (Some(ready), true) = (&buf.ready, buf.lane != lane) {
            self.gpu.stream(lane).wait(ready).map_err(|e| at.cuda("cuStreamWaitEvent", e))?;
        }
        buf.block.touch(lane);
        Ok(())
    }

    fn value(&self, block: Block, meta: Meta, ready: Arc<CudaEvent>, lane: Lane) -> Value {
        let buffer = Arc::new(CudaBuffer { block, ready: Some(ready), lane });
        Value::Device(DeviceValue { device: self.profile.id, meta, offset: 0, buffer })
    }

    /// Launch `fname` of `kernel` on the compute stream after its inputs are ready.
    #[allow(clippy::too_many_arguments)]
    fn launch(
        &self,
        at: At<'_>,
        source: &str,
        fname: &str,
        grid: u32,
        block: u32,
        kargs: &[KArg],
        inputs: &[Input<'_>],
        out: Block,
        out_meta: Meta,
        span: (Tag, EventKind),
    ) -> Result<Value> {
        let f = self.gpu.function(source, fname).map_err(|e| at.fail(format!("kernel `{fname}`: {e}")))?;
        for i in inputs {
            self.wait_for(Lane::Compute, i.buf, at)?;
        }
        out.touch(Lane::Compute);
        let start = self.gpu.begin(Lane::Compute).map_err(|e| at.cuda("cuEventRecord", e))?;
        self.queue_kernel(at, &f, fname, grid, block, kargs)?;
        let end = self.gpu.end(Lane::Compute, self.owner, Some(span), start).map_err(|e| at.cuda("cuEventRecord", e))?;
        Ok(self.value(out, out_meta, end, Lane::Compute))
    }

    /// Queue `f` (`fname`) on the compute stream, `grid` blocks of `block` threads (none when
    /// `grid` is 0); the caller has made it wait for its inputs and touched its blocks.
    fn queue_kernel(&self, at: At<'_>, f: &CudaFunction, fname: &str, grid: u32, block: u32, kargs: &[KArg]) -> Result<()> {
        if grid == 0 {
            return Ok(());
        }
        let stream = self.gpu.stream(Lane::Compute);
        let mut b = stream.launch_builder(f);
        for k in kargs {
            match k {
                KArg::U64(v) => b.arg(v),
                KArg::F64(v) => b.arg(v),
                KArg::F32(v) => b.arg(v),
            };
        }
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: the parameters follow the op's `Launch` convention; every pointer is a live
        // block of the sizes the convention implies, kept alive (and not reused) until the work
        // queued on it has finished.
        unsafe { b.launch(cfg) }.map_err(|e| at.cuda(&format!("launching `{fname}`"), e))?;
        Ok(())
    }

    fn elementwise(&self, at: At<'_>, kernel: &AcceleratorKernel, ctx: &OpCtx<'_>, inputs: &[Input<'_>], params: &[f64], span: (Tag, EventKind)) -> Result<Value> {
        let first = inputs.first().ok_or_else(|| at.invalid("an elementwise kernel needs an argument"))?;
        let shapes: Vec<&[usize]> = inputs.iter().map(|i| i.meta.shape.as_slice()).collect();
        let out_shape = broadcast_shape(&shapes).map_err(|e| at.invalid(e))?;
        if out_shape.len() != ctx.meta.ndim() || out_shape.get(1..) != ctx.meta.shape.get(1..) {
            return Err(at.invalid(format!("pieces of shapes {shapes:?} do not make a piece of the result {}", ctx.meta)));
        }
        let n: usize = out_shape.iter().product();
        let out_meta = Meta::new(ctx.meta.dtype, out_shape);
        let mut kargs = Vec::with_capacity(2 + 3 * inputs.len() + params.len());
        let mut maps = Vec::with_capacity(inputs.len());
        for i in inputs {
            maps.push(index_map(&i.meta.shape, &out_meta.shape).map_err(|e| at.invalid(e))?);
        }
        let fname = format!("{}_{}", kernel.entry, suffix(first.meta.dtype, at)?);
        let out = self.gpu.pool.alloc(out_meta.bytes(), at)?;
        kargs.extend([KArg::U64(n as u64), KArg::U64(out.ptr)]);
        for (i, (div, modulo)) in inputs.iter().zip(maps) {
            kargs.extend([KArg::U64(i.ptr), KArg::U64(div), KArg::U64(modulo)]);
        }
        kargs.extend(params.iter().map(|&p| KArg::F64(p)));
        let grid = if n == 0 { 0 } else { blocks_for(n as u64, self.gpu.sms) };
        self.launch(at, &kernel.source, &fname, grid, BLOCK, &kargs, inputs, out, out_meta, span)
    }

    fn fill(&self, at: At<'_>, kernel: &AcceleratorKernel, ctx: &OpCtx<'_>, params: &[f64], span: (Tag, EventKind)) -> Result<Value> {
        let shape = piece_shape(&ctx.meta.shape, &ctx.rows);
        let row_len: usize = ctx.meta.shape.iter().skip(1).product();
        let first = if ctx.meta.ndim() == 0 { 0 } else { ctx.rows.start * row_len };
        let n: usize = shape.iter().product();
        let out_meta = Meta::new(ctx.meta.dtype, shape);
        let fname = format!("{}_{}", kernel.entry, suffix(ctx.meta.dtype, at)?);
        let out = self.gpu.pool.alloc(out_meta.bytes(), at)?;
        let mut kargs = vec![KArg::U64(n as u64), KArg::U64(out.ptr), KArg::U64(first as u64)];
        kargs.extend(params.iter().map(|&p| KArg::F64(p)));
        let grid = if n == 0 { 0 } else { blocks_for(n as u64, self.gpu.sms) };
        self.launch(at, &kernel.source, &fname, grid, BLOCK, &kargs, &[], out, out_meta, span)
    }

    fn reduce(&self, at: At<'_>, kernel: &AcceleratorKernel, ctx: &OpCtx<'_>, inputs: &[Input<'_>], axis: Option<usize>, span: (Tag, EventKind)) -> Result<Value> {
        let [x] = inputs else { return Err(at.invalid("a reduction takes one argument")) };
        let g = reduce_geometry(&x.meta.shape, axis).map_err(|e| at.invalid(e))?;
        let grid =
            u32::try_from(g.outputs).ok().filter(|&b| b < i32::MAX as u32).ok_or_else(|| at.invalid(format!("{} output values are more blocks than a launch has", g.outputs)))?;
        let out_meta = Meta::new(ctx.meta.dtype, g.out_shape);
        let fname = format!("{}_{}", kernel.entry, suffix(x.meta.dtype, at)?);
        let out = self.gpu.pool.alloc(out_meta.bytes(), at)?;
        if let Some(inner) = g.inner {
            // A middle axis: one thread per output value.
            let kargs = [KArg::U64(g.rows), KArg::U64(g.cols), KArg::U64(inner), KArg::U64(x.ptr), KArg::U64(out.ptr)];
            let grid = if g.outputs == 0 { 0 } else { blocks_for(g.outputs, self.gpu.sms) };
            return self.launch(at, &kernel.source, &fname, grid, BLOCK, &kargs, inputs, out, out_meta, span);
        }
        let kargs = [KArg::U64(g.rows), KArg::U64(g.cols), KArg::U64(x.ptr), KArg::U64(out.ptr)];
        self.launch(at, &kernel.source, &fname, grid, REDUCE_BLOCK, &kargs, inputs, out, out_meta, span)
    }

    /// A [`Launch::Rows`] kernel: one thread per row of the first argument's piece.
    fn rows(&self, at: At<'_>, kernel: &AcceleratorKernel, ctx: &OpCtx<'_>, inputs: &[Input<'_>], params: &[f64], span: (Tag, EventKind)) -> Result<Value> {
        let first = inputs.first().ok_or_else(|| at.invalid("a row kernel needs an argument"))?;
        let rows = first.meta.shape.first().copied().unwrap_or(1);
        let cols: usize = first.meta.shape.iter().skip(1).product();
        let mut out_shape = ctx.meta.shape.clone();
        match out_shape.first_mut() {
            Some(r) => *r = rows,
            None => return Err(at.invalid("a row kernel's result needs rows")),
        }
        let out_meta = Meta::new(ctx.meta.dtype, out_shape);
        let fname = format!("{}_{}", kernel.entry, suffix(first.meta.dtype, at)?);
        let out = self.gpu.pool.alloc(out_meta.bytes(), at)?;
        let mut kargs = vec![KArg::U64(rows as u64), KArg::U64(cols as u64)];
        kargs.extend(inputs.iter().map(|i| KArg::U64(i.ptr)));
        kargs.push(KArg::U64(out.ptr));
        kargs.extend(params.iter().map(|&p| KArg::F64(p)));
        let grid = if rows == 0 { 0 } else { blocks_for(rows as u64, self.gpu.sms) };
        self.launch(at, &kernel.source, &fname, grid, BLOCK, &kargs, inputs, out, out_meta, span)
    }

    /// `X^T X` through cuBLAS ([`gram_plan`]).
    fn gram(&self, at: At<'_>, inputs: &[Input<'_>], span: (Tag, EventKind)) -> Result<Value> {
        let [x] = inputs else { return Err(at.invalid("X^T X takes one argument")) };
        let dtype = x.meta.dtype;
        if !matches!(dtype, DType::F64 | DType::F32) {
            return Err(BachError::dtype(at.op, "f64 or f32", dtype));
        }
        let (plan, out_shape) = gram_plan(&x.meta.shape).map_err(|e| at.invalid(e))?;
        self.blas_product(at, inputs, dtype, plan, out_shape, span)
    }

    /// The four cases of `dot` through cuBLAS ([`gemm_plan`]).
    fn gemm(&self, at: At<'_>, inputs: &[Input<'_>], span: (Tag, EventKind)) -> Result<Value> {
        let [l, r] = inputs else { return Err(at.invalid("a product takes two arguments")) };
        let dtype = l.meta.dtype;
        if r.meta.dtype != dtype || !matches!(dtype, DType::F64 | DType::F32) {
            return Err(BachError::dtype(at.op, "two f64 or two f32 arrays", format!("{} and {}", dtype, r.meta.dtype)));
        }
        let (plan, out_shape) = gemm_plan(&l.meta.shape, &r.meta.shape).map_err(|e| at.invalid(e))?;
        self.blas_product(at, inputs, dtype, plan, out_shape, span)
    }

    /// Run a product `plan` (row-major data, column-major BLAS) over `inputs` (its `Which::Left`
    /// and `Which::Right`) into a new `out_shape` array of `dtype` (f64 or f32).
    fn blas_product(&self, at: At<'_>, inputs: &[Input<'_>], dtype: DType, plan: GemmPlan, out_shape: Vec<usize>, span: (Tag, EventKind)) -> Result<Value> {
        let out_meta = Meta::new(dtype, out_shape);
        let out = self.gpu.pool.alloc(out_meta.bytes(), at)?;
        for i in inputs {
            self.wait_for(Lane::Compute, i.buf, at)?;
        }
        out.touch(Lane::Compute);
        let start = self.gpu.begin(Lane::Compute).map_err(|e| at.cuda("cuEventRecord", e))?;
        let (left, right) = (inputs.first().map_or(0, |i| i.ptr), inputs.get(1).map_or(0, |i| i.ptr));
        self.blas_into(at, [left, right], dtype, &plan, out.ptr, out_meta.bytes())?;
        let end = self.gpu.end(Lane::Compute, self.owner, Some(span), start).map_err(|e| at.cuda("cuEventRecord", e))?;
        Ok(self.value(out, out_meta, end, Lane::Compute))
    }

    /// Queue a product `plan` on the compute stream: `ptrs` the `Which::Left` and
    /// `Which::Right` operands, into the `out_bytes` bytes at `out` (zeroed for
    /// `GemmPlan::Zeros`). The caller has made the stream wait for the operands.
    fn blas_into(&self, at: At<'_>, ptrs: [u64; 2], dtype: DType, plan: &GemmPlan, out: u64, out_bytes: usize) -> Result<()> {
        let stream = self.gpu.stream(Lane::Compute).cu_stream();
        let ptr = |w: Which| ptrs[usize::from(w == Which::Right)];
        let op = |t: bool| if t { cublasOperation_t::CUBLAS_OP_T } else { cublasOperation_t::CUBLAS_OP_N };
        let handles = self.gpu.blas.lock().unwrap_or_else(PoisonError::into_inner);
        macro_rules! blas_calls {
            ($t:ty, $dot:ident, $gemv:ident, $gemm:ident) => {{
                let (one, zero): ($t, $t) = (1.0, 0.0);
                let o = out as *mut $t;
                let p = |w: Which| ptr(w) as *const $t;
                // SAFETY: the pointers are live blocks of the shapes the plan was made from;
                // the handles run on the compute stream, after the inputs' ready events.
                unsafe {
                    match *plan {
                        GemmPlan::Dot { k } => blas::$dot(handles.device, k, p(Which::Left), 1, p(Which::Right), 1, o),
                        GemmPlan::Gemv { trans, m, n, ld, matrix, vector } => blas::$gemv(handles.host, op(trans), m, n, &one, p(matrix), ld, p(vector), 1, &zero, o, 1),
                        GemmPlan::Gemm { m, n, k, a, lda, ta, b, ldb, tb } => blas::$gemm(handles.host, op(ta), op(tb), m, n, k, &one, p(a), lda, p(b), ldb, &zero, o, m.max(1)),
                        GemmPlan::Zeros | GemmPlan::Empty => blas::cublasStatus_t::CUBLAS_STATUS_SUCCESS,
                    }
                }
            }};
        }
        let status = match dtype {
            DType::F64 => blas_calls!(f64, cublasDdot_v2_64, cublasDgemv_v2_64, cublasDgemm_v2_64),
            _ => blas_calls!(f32, cublasSdot_v2_64, cublasSgemv_v2_64, cublasSgemm_v2_64),
        };
        drop(handles);
        match status {
            blas::cublasStatus_t::CUBLAS_STATUS_SUCCESS => {}
            blas::cublasStatus_t::CUBLAS_STATUS_ALLOC_FAILED => {
                return Err(BachError::DeviceOutOfMemory { device: at.device.to_string(), detail: format!("cuBLAS could not allocate its workspace for `{}`", at.op) })
            }
            s => return Err(at.fail(format!("cuBLAS ({plan:?}): {s:?}"))),
        }
        if *plan == GemmPlan::Zeros {
            // SAFETY: the output holds out_bytes bytes.
            unsafe { result::memset_d8_async(out, 0, out_bytes, stream) }.map_err(|e| at.cuda("cuMemsetD8Async", e))?;
        }
        Ok(())
    }

    /// A [`Launch::Cross`] op: `C = A_0 · A_1^T` by cuBLAS a block of rows at a time into one
    /// scratch block ([`CROSS_SCRATCH`]), each block followed by the op's kernel over it.
    fn cross(&self, at: At<'_>, kernel: &AcceleratorKernel, ctx: &OpCtx<'_>, inputs: &[Input<'_>], params: &[f64], span: (Tag, EventKind)) -> Result<Value> {
        let [a, b, ..] = inputs else { return Err(at.invalid("a cross product takes two arguments (then any its kernel reads)")) };
        let dtype = a.meta.dtype;
        if b.meta.dtype != dtype || !matches!(dtype, DType::F64 | DType::F32) {
            return Err(BachError::dtype(at.op, "two f64 or two f32 arrays", format!("{} and {}", dtype, b.meta.dtype)));
        }
        let (&[rows, k], &[cols, kb]) = (a.meta.shape.as_slice(), b.meta.shape.as_slice()) else {
            return Err(at.invalid(format!("a cross product of shapes {:?} and {:?}: both must be matrices", a.meta.shape, b.meta.shape)));
        };
        if k != kb {
            return Err(at.invalid(format!("a cross product of {rows} x {k} and {cols} x {kb}: the rows differ in length")));
        }
        let mut out_shape = ctx.meta.shape.clone();
        match out_shape.first_mut() {
            Some(r) => *r = rows,
            None => return Err(at.invalid("a cross product's result needs rows")),
        }
        let out_meta = Meta::new(ctx.meta.dtype, out_shape);
        let fname = format!("{}_{}", kernel.entry, suffix(dtype, at)?);
        let f = self.gpu.function(&kernel.source, &fname).map_err(|e| at.fail(format!("kernel `{fname}`: {e}")))?;
        let elem = dtype.size_of();
        let block_rows = cross_block_rows(rows, cols, elem, CROSS_SCRATCH);
        let out = self.gpu.pool.alloc(out_meta.bytes(), at)?;
        let scratch = self.gpu.pool.alloc(if rows * cols == 0 { 0 } else { block_rows * cols * elem }, at)?;
        for i in inputs {
            self.wait_for(Lane::Compute, i.buf, at)?;
        }
        out.touch(Lane::Compute);
        scratch.touch(Lane::Compute);
        let start = self.gpu.begin(Lane::Compute).map_err(|e| at.cuda("cuEventRecord", e))?;
        if cols > 0 {
            for first in (0..rows).step_by(block_rows) {
                let r = block_rows.min(rows - first);
                let (plan, _) = cross_plan(r, cols, k);
                self.blas_into(at, [a.ptr + (first * k * elem) as u64, b.ptr], dtype, &plan, scratch.ptr, r * cols * elem)?;
                let mut kargs = vec![KArg::U64(r as u64), KArg::U64(cols as u64), KArg::U64(first as u64), KArg::U64(scratch.ptr)];
                kargs.extend(inputs.iter().map(|i| KArg::U64(i.ptr)));
                kargs.push(KArg::U64(out.ptr));
                kargs.extend(params.iter().map(|&p| KArg::F64(p)));
                self.queue_kernel(at, &f, &fname, blocks_for((r * cols) as u64, self.gpu.sms), BLOCK, &kargs)?;
            }
        }
        let end = self.gpu.end(Lane::Compute, self.owner, Some(span), start).map_err(|e| at.cuda("cuEventRecord", e))?;
        Ok(self.value(out, out_meta, end, Lane::Compute))
    }

    /// [`Launch::SymmetricEigen`]: the matrix copied (syevd overwrites it), checked for NaN
    /// and infinities, solved by cuSOLVER's `syevd` (upper triangle of the column-major view:
    /// the row-major lower triangle), then ordered and signed by [`EIGEN_SOURCE`]. The stream
    /// is synchronized to read `syevd`'s status: a failure is an error at the op.
    fn symmetric_eigen(&self, at: At<'_>, inputs: &[Input<'_>], span: (Tag, EventKind)) -> Result<Value> {
        let [a] = inputs else { return Err(at.invalid("the symmetric eigen problem takes one argument")) };
        if a.meta.dtype != DType::F64 {
            return Err(BachError::dtype(at.op, "f64", a.meta.dtype));
        }
        let &[d, d2] = a.meta.shape.as_slice() else { return Err(at.invalid(format!("expects a square matrix, got shape {:?}", a.meta.shape))) };
        if d != d2 {
            return Err(at.invalid(format!("expects a square matrix, got shape {:?}", a.meta.shape)));
        }
        let n = i32::try_from(d).map_err(|_| at.invalid(format!("a {d} x {d} matrix is beyond cuSOLVER's 32-bit sizes")))?;
        let out_meta = Meta::new(DType::F64, [d + 1, d]);
        let out = self.gpu.pool.alloc(out_meta.bytes(), at)?;
        let matrix = self.gpu.pool.alloc(d * d * 8, at)?;
        let values = self.gpu.pool.alloc(d * 8, at)?;
        let flags = self.gpu.pool.alloc(8, at)?;
        let check = self.gpu.function(EIGEN_SOURCE, "bach_eigen_check").map_err(|e| at.fail(format!("kernel `bach_eigen_check`: {e}")))?;
        let order = self.gpu.function(EIGEN_SOURCE, "bach_eigen_order").map_err(|e| at.fail(format!("kernel `bach_eigen_order`: {e}")))?;
        for i in inputs {
            self.wait_for(Lane::Compute, i.buf, at)?;
        }
        for b in [&out, &matrix, &values, &flags] {
            b.touch(Lane::Compute);
        }
        let stream = self.gpu.stream(Lane::Compute).cu_stream();
        let start = self.gpu.begin(Lane::Compute).map_err(|e| at.cuda("cuEventRecord", e))?;
        if d > 0 {
            // SAFETY: live blocks of the sizes given, on the compute stream.
            unsafe {
                result::memcpy_dtod_async(matrix.ptr, a.ptr, d * d * 8, stream).map_err(|e| at.cuda("cuMemcpyDtoDAsync", e))?;
                result::memset_d8_async(flags.ptr, 0, 8, stream).map_err(|e| at.cuda("cuMemsetD8Async", e))?;
            }
            self.queue_kernel(at, &check, "bach_eigen_check", blocks_for((d * d) as u64, self.gpu.sms), BLOCK, &[KArg::U64(d as u64), KArg::U64(a.ptr), KArg::U64(flags.ptr)])?;
            let guard = self.gpu.solver();
            let Some(Ok(solver)) = guard.as_ref() else { return Err(at.fail("cuSOLVER is not available")) };
            let (jobz, uplo) = (solver_sys::cusolverEigMode_t::CUSOLVER_EIG_MODE_VECTOR, solver_sys::cublasFillMode_t::CUBLAS_FILL_MODE_UPPER);
            let mut lwork = 0i32;
            // SAFETY: a live handle; the pointers are live blocks of d x d and d doubles.
            let status = unsafe { solver_sys::cusolverDnDsyevd_bufferSize(solver.handle, jobz, uplo, n, matrix.ptr as *const f64, n.max(1), values.ptr as *const f64, &mut lwork) };
            if status != solver_sys::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS {
                return Err(at.fail(format!("cuSOLVER's syevd workspace query: {status:?}")));
            }
            let work = self.gpu.pool.alloc(lwork.max(1) as usize * 8, at)?;
            work.touch(Lane::Compute);
            // SAFETY: as above, with a workspace of lwork doubles and the status int in flags.
            let status = unsafe {
                solver_sys::cusolverDnDsyevd(
                    solver.handle,
                    jobz,
                    uplo,
                    n,
                    matrix.ptr as *mut f64,
                    n.max(1),
                    values.ptr as *mut f64,
                    work.ptr as *mut f64,
                    lwork,
                    flags.ptr as *mut i32,
                )
            };
            drop(guard);
            match status {
                solver_sys::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS => {}
                solver_sys::cusolverStatus_t::CUSOLVER_STATUS_ALLOC_FAILED => {
                    return Err(BachError::DeviceOutOfMemory { device: at.device.to_string(), detail: format!("cuSOLVER could not allocate for `{}`", at.op) })
                }
                s => return Err(at.fail(format!("cuSOLVER's syevd: {s:?}"))),
            }
            let kargs = [KArg::U64(d as u64), KArg::U64(values.ptr), KArg::U64(matrix.ptr), KArg::U64(flags.ptr), KArg::U64(out.ptr)];
            self.queue_kernel(at, &order, "bach_eigen_order", blocks_for(d as u64 + 1, self.gpu.sms), BLOCK, &kargs)?;
        }
        let end = self.gpu.end(Lane::Compute, self.owner, Some(span), start).map_err(|e| at.cuda("cuEventRecord", e))?;
        if d > 0 {
            let mut status = [0i32; 2];
            self.gpu.stream(Lane::Compute).synchronize().map_err(|e| at.cuda("waiting for cuSOLVER's syevd", e))?;
            // SAFETY: flags holds two ints, written by the work just waited for.
            unsafe { result::memcpy_dtoh_sync(&mut status, flags.ptr) }.map_err(|e| at.cuda("reading syevd's status", e))?;
            if status[0] != 0 && status[1] == 0 {
                return Err(at.fail(format!(
                    "cuSOLVER's syevd did not converge (info {}: {} off-diagonal elements of an intermediate tridiagonal form did not converge to zero)",
                    status[0], status[0]
                )));
            }
        }
        Ok(self.value(out, out_meta, end, Lane::Compute))
    }

    /// An op the device has no library for (here: no cuSOLVER): its arguments copied to the
    /// host, its CPU kernel, the result copied back; said once per process, on stderr.
    fn on_host(&self, at: At<'_>, op: &Annotation, ctx: &OpCtx<'_>, args: &[ValueRef<'_>], why: &str) -> Result<Value> {
        static SAID: std::sync::Once = std::sync::Once::new();
        SAID.call_once(|| eprintln!("bach: {why}; `{}` runs on the host", at.op));
        let tag = Tag { node: ctx.node, piece: ctx.piece as u32 };
        let host = args
            .iter()
            .map(|a| match a {
                ValueRef::Device(_) => self.copy_out(a.clone(), tag)?.finish(),
                other => Ok(other.to_value()),
            })
            .collect::<Result<Vec<_>>>()?;
        let views: Vec<ValueRef<'_>> = host.iter().map(Value::view).collect();
        let result = op.run_cpu(ctx, &views)?;
        self.copy_in(result.view(), tag)
    }
}

/// What the drain thread made of a copy to the host.
fn drained(landed: std::sync::mpsc::Receiver<Result<Landing>>, device: &str) -> Result<Landing> {
    landed.recv().unwrap_or_else(|_| Err(At { op: "copy to host", device }.fail("the thread draining copies to the host stopped")))
}

impl CudaDevice {
    /// An elementwise op with an expression, not run but kept as an [`Expr`] over its
    /// arguments (fused into one kernel when its value is needed); `None` when it cannot be
    /// (arguments on the host, mixed dtypes), and it is launched alone.
    fn defer(&self, at: At<'_>, op: &Annotation, ctx: &OpCtx<'_>, args: &[ValueRef<'_>]) -> Result<Option<Value>> {
        let mut devs = Vec::with_capacity(args.len());
        for a in args {
            match a {
                ValueRef::Device(d) if d.device == self.profile.id => devs.push(d.clone()),
                _ => return Ok(None),
            }
        }
        let dtypes: Vec<DType> = devs.iter().map(|d| d.meta.dtype).collect();
        // The planner sizes pieces by the same test (`plan::pieces`).
        let Some((fusable, expr)) = op.fused_expr(&dtypes) else { return Ok(None) };
        let shapes: Vec<&[usize]> = devs.iter().map(|d| d.meta.shape.as_slice()).collect();
        let out_shape = broadcast_shape(&shapes).map_err(|e| at.invalid(e))?;
        if out_shape.len() != ctx.meta.ndim() || out_shape.get(1..) != ctx.meta.shape.get(1..) || expr.out != ctx.meta.dtype {
            return Err(at.invalid(format!("pieces of shapes {shapes:?} do not make a piece of the result {}", ctx.meta)));
        }
        // Arguments of another shape (broadcast), or a DAG grown too big, are computed first.
        let mut ops = 1;
        for d in devs.iter_mut() {
            if let Some(e) = d.buffer::<Expr>() {
                if d.meta.shape != out_shape || d.offset != 0 || e.ops + ops > fuse::MAX_OPS {
                    *d = self.realize(d, at)?;
                } else {
                    ops += e.ops;
                }
            }
        }
        let meta = Meta::new(expr.out, out_shape);
        let e = Expr {
            op: op.name().to_string(),
            vars: fusable.vars.clone(),
            expr: expr.clone(),
            args: devs,
            meta: meta.clone(),
            tag: Tag { node: ctx.node, piece: ctx.piece as u32 },
            ops,
            realized: Mutex::new(None),
        };
        Ok(Some(Value::Device(DeviceValue { device: self.profile.id, meta, offset: 0, buffer: Arc::new(e) })))
    }

    /// `v` with every expression in it computed (a host value as it is).
    fn realized<'v>(&self, v: &ValueRef<'v>, at: At<'_>) -> Result<ValueRef<'v>> {
        match v {
            ValueRef::Device(d) => Ok(ValueRef::Device(self.realize(d, at)?)),
            other => Ok(other.clone()),
        }
    }

    /// A device value in memory: an [`Expr`] is computed by one generated kernel (once).
    fn realize(&self, d: &DeviceValue, at: At<'_>) -> Result<DeviceValue> {
        let Some(e) = d.buffer::<Expr>() else { return Ok(d.clone()) };
        let mut realized = e.realized.lock().unwrap_or_else(|p| p.into_inner());
        let whole = match realized.as_ref() {
            Some(r) => r.clone(),
            None => {
                let g = fuse::generate(e, &is_constant);
                // Constants go by value; the other leaves are read from memory.
                let in_memory: Vec<ValueRef<'_>> = g.leaves.iter().filter(|l| !is_constant(l)).map(|l| ValueRef::Device(l.clone())).collect();
                let inputs = in_memory.iter().map(|a| self.input(a, at)).collect::<Result<Vec<_>>>()?;
                let n = e.meta.len();
                let mut kargs = Vec::with_capacity(2 + 3 * g.leaves.len());
                let out = self.gpu.pool.alloc(e.meta.bytes(), at)?;
                kargs.extend([KArg::U64(n as u64), KArg::U64(out.ptr)]);
                let mut read = inputs.iter();
                for l in &g.leaves {
                    if let Some(c) = l.buffer::<CudaConstant>() {
                        kargs.push(c.karg());
                        continue;
                    }
                    let i = read.next().expect("one input per leaf in memory");
                    let (div, modulo) = index_map(&i.meta.shape, &e.meta.shape).map_err(|err| at.invalid(err))?;
                    kargs.extend([KArg::U64(i.ptr), KArg::U64(div), KArg::U64(modulo)]);
                }
                let grid = if n == 0 { 0 } else { blocks_for(n as u64, self.gpu.sms) };
                let fused = At { op: &g.ops.join("+"), device: at.device };
                let v = self.launch(fused, &g.source, fuse::ENTRY, grid, BLOCK, &kargs, &inputs, out, e.meta.clone(), (e.tag, EventKind::Compute))?;
                let Value::Device(v) = v else { unreachable!("a launch makes a device value") };
                *realized = Some(v.clone());
                v
            }
        };
        if d.offset == 0 && d.meta == e.meta {
            return Ok(whole);
        }
        Ok(DeviceValue { device: whole.device, meta: d.meta.clone(), offset: whole.offset + d.offset, buffer: whole.buffer })
    }

    /// Start copying a device value to the host, landing where `landing` says.
    fn download(&self, value: ValueRef<'_>, tag: Tag, landing: impl FnOnce(At<'_>) -> Result<Landing>) -> Result<Download> {
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
}

/// A host array in standard layout (a copy only when the view was not), as bytes.
enum HostArray<'a> {
    F64(CowArray<'a, f64, IxDyn>),
    F32(CowArray<'a, f32, IxDyn>),
    I64(CowArray<'a, i64, IxDyn>),
    Bool(CowArray<'a, bool, IxDyn>),
}

fn as_bytes<T: Copy>(s: &[T]) -> &[u8] {
    // SAFETY: f64, f32, i64 and bool (0 or 1) are plain bytes; the length is the slice's size.
    unsafe { std::slice::from_raw_parts(s.as_ptr() as *const u8, std::mem::size_of_val(s)) }
}

impl HostArray<'_> {
    fn bytes(&self) -> &[u8] {
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
fn copy_bytes(src: &[u8], dst: &mut [MaybeUninit<u8>]) {
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

fn uninit_bytes(b: &mut [u8]) -> &mut [MaybeUninit<u8>] {
    // SAFETY: initialized bytes may be seen as maybe-uninitialized ones.
    unsafe { std::slice::from_raw_parts_mut(b.as_mut_ptr() as *mut MaybeUninit<u8>, b.len()) }
}

/// The host array a copy out fills.
enum HostOut {
    F64(Array<MaybeUninit<f64>, IxDyn>),
    F32(Array<MaybeUninit<f32>, IxDyn>),
    I64(Array<MaybeUninit<i64>, IxDyn>),
    /// Bytes as the GPU holds them (any non-zero byte is true).
    Bool(Vec<u8>, Vec<usize>),
}

impl HostOut {
    fn new(meta: &Meta, at: At<'_>) -> Result<HostOut> {
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
    fn dest(&mut self) -> &mut [MaybeUninit<u8>] {
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
    fn into_value(self) -> Value {
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
enum Landing {
    Fresh(HostOut),
    Rows(HostRows),
}

impl Landing {
    fn dest(&mut self) -> &mut [MaybeUninit<u8>] {
        match self {
            Landing::Fresh(h) => h.dest(),
            Landing::Rows(r) => r.bytes_mut(),
        }
    }
}

/// A copy to the host under way: chunks in flight on the D2H stream, each in its own staging
/// buffer; the rest is queued as the first ones are drained.
struct Download {
    gpu: Arc<Gpu>,
    owner: u64,
    device: String,
    /// Keeps the GPU memory alive until the copy is done.
    value: DeviceValue,
    src: u64,
    len: usize,
    next: usize,
    inflight: VecDeque<(usize, usize, Staging, Arc<CudaEvent>)>,
    start: Option<Arc<CudaEvent>>,
    tag: Tag,
    /// Faulting a fresh landing's pages in ahead of the drain; before `out`, so that it is
    /// stopped before the memory can go.
    prefault: Option<crate::fresh::Prefault>,
    out: Option<Landing>,
    /// The end of one DMA straight into page-locked rows, when it went that way.
    direct: Option<Arc<CudaEvent>>,
}

impl Download {
    /// Queue chunks until two are in flight; end the span once the last one is queued.
    fn pump(&mut self, at: At<'_>) -> Result<()> {
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
    fn finish(mut self) -> Result<Landing> {
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

impl Device for CudaDevice {
    fn profile(&self) -> &DeviceProfile {
        &self.profile
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

    fn copy_out(&self, value: ValueRef<'_>, tag: Tag) -> Result<PendingCopy> {
        let meta = value.meta();
        let download = self.download(value, tag, |at| Ok(Landing::Fresh(HostOut::new(&meta, at)?)))?;
        let landed = self.gpu.drain(move || download.finish());
        let device = self.profile.name.clone();
        Ok(PendingCopy::later(move || match drained(landed, &device)? {
            Landing::Fresh(out) => Ok(out.into_value()),
            Landing::Rows(_) => unreachable!("a fresh landing stays fresh"),
        }))
    }

    fn copy_out_into(&self, value: ValueRef<'_>, dest: HostRows, tag: Tag) -> Result<PendingWrite> {
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

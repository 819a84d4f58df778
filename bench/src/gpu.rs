//! The paper's "handwritten" baseline: Black-Scholes and Haversine as hand-written CUDA on
//! cudarc, with explicit transfers, and the `bandwidth` measurement.
//!
//! A run goes from the host inputs (ordinary pageable arrays) to host outputs: the inputs are
//! copied chunk by chunk into pinned staging buffers, copied to the GPU asynchronously, one
//! fused kernel (compiled with NVRTC at start-up) computes every output of the chunk, and the
//! outputs come back into pinned buffers and are copied into the output arrays. Two slots
//! (pinned + device buffers, one stream each) alternate, so the host copies of one chunk
//! overlap the transfers and kernel of the other; data larger than GPU memory streams through.
//! Context creation, NVRTC compilation and the buffer allocations are set-up, outside the
//! timed region (the Bach CUDA device keeps its context and pools across evaluations too).
//!
//! Without a driver or a GPU every entry point returns `Err("no GPU: ...")` and never panics:
//! cudarc with dynamic loading panics when `libcuda` is missing, so its presence is checked
//! first and the first CUDA call runs under `catch_unwind`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;
use std::time::Instant;

use cudarc::driver::sys::{CUdevice_attribute, CUdeviceptr};
use cudarc::driver::{result, CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::{compile_ptx_with_opts, CompileOptions, Ptx};
use rayon::prelude::*;
use serde::Serialize;

use crate::workloads::{Columns, Workload};

/// The kernels, one fused kernel per workload. Each line mirrors the eager ndarray program in
/// `workloads.rs` operation for operation and in the same order; the constants are kernel
/// arguments so they are the very same doubles as on the CPU. Compiled with `--fmad=false`, so
/// `a*b + c` is rounded twice as on the CPU; only the CUDA math library's `log2`, `erf`, `exp`,
/// `sin`, `cos`, `asin` differ from libm (by an ulp or two).
pub const KERNELS: &str = r#"
extern "C" __global__ void black_scholes(
    const double* __restrict__ price, const double* __restrict__ strike, const double* __restrict__ t,
    const double* __restrict__ rate, const double* __restrict__ vol,
    double* __restrict__ call, double* __restrict__ put, long long n,
    double c05, double c10, double invsqrt2)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) {
        double p = price[i], s = strike[i], tt = t[i], r = rate[i], v = vol[i];
        double rsig = v * v * c05 + r;
        double vol_sqrt = sqrt(tt) * v;
        double d1 = (log2(p / s) + rsig * tt) / vol_sqrt;
        double d2 = d1 - vol_sqrt;
        double big_d1 = erf(d1 * invsqrt2) * c05 + c05;
        double big_d2 = erf(d2 * invsqrt2) * c05 + c05;
        double e_rt = exp(-r * tt);
        call[i] = p * big_d1 - e_rt * s * big_d2;
        put[i] = e_rt * s * (c10 - big_d2) - p * (c10 - big_d1);
    }
}

extern "C" __global__ void haversine(
    const double* __restrict__ lat2, const double* __restrict__ lon2, double* __restrict__ distance,
    long long n, double lat1, double lon1, double lat1_cos, double miles)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) {
        double la = lat2[i], lo = lon2[i];
        double sdlat = sin((la - lat1) / 2.0);
        double sdlon = sin((lo - lon1) / 2.0);
        double dlat = sdlat * sdlat;
        double dlon = sdlon * sdlon;
        double a = dlat + cos(la) * lat1_cos * dlon;
        distance[i] = asin(sqrt(a)) * 2.0 * miles;
    }
}

extern "C" __global__ void empty() {}
"#;

/// How the gpu mode's outputs are checked against the cpu mode's: `|gpu - cpu| / max(|cpu|, 1)`
/// at most this. CUDA's `log2`/`erf`/`exp`/`sin`/`cos`/`asin` differ from libm by an ulp or two,
/// which the formulas amplify (erf' times the price, asin near 1): moving every transcendental
/// result by up to 2 ulps at random gives at most 2.3e-13 (Black-Scholes) and 4.2e-13
/// (Haversine) over 2^24 random inputs. A plain relative difference does not work: a call
/// price can be exactly 0. A wrong formula or operation order shows up at 1e-3 or more.
pub const GPU_TOLERANCE: f64 = 1e-11;

/// The error metric of [`GPU_TOLERANCE`] over every output column.
pub fn max_scaled_diff(gpu: &Columns, cpu: &Columns) -> f64 {
    gpu.iter().map(|(k, g)| g.iter().zip(&cpu[k]).map(|(g, c)| (g - c).abs() / c.abs().max(1.0)).fold(0.0, f64::max)).fold(0.0, f64::max)
}

/// Elements per column per chunk: 32 MiB of f64 per column.
const CHUNK: usize = 1 << 22;
pub(crate) const THREADS: u32 = 256;

/// Why there is no GPU, or the context of GPU 0. Never panics.
pub fn open() -> Result<Arc<CudaContext>, String> {
    // SAFETY: only probes whether the shared library loads.
    if !unsafe { cudarc::driver::sys::is_culib_present() } {
        return Err("no GPU: the CUDA driver library (libcuda.so) is not on this machine".into());
    }
    match catch_unwind(AssertUnwindSafe(|| {
        let count = CudaContext::device_count()?;
        if count == 0 {
            return Ok(None);
        }
        CudaContext::new(0).map(Some)
    })) {
        Ok(Ok(Some(ctx))) => Ok(ctx),
        Ok(Ok(None)) => Err("no GPU: the CUDA driver reports no device".into()),
        Ok(Err(e)) => Err(format!("no GPU: CUDA driver: {e}")),
        Err(panic) => Err(format!("no GPU: loading the CUDA driver failed: {}", panic_text(&*panic))),
    }
}

pub(crate) fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_else(|| "panic".into())
}

pub(crate) fn driver(what: &str) -> impl Fn(result::DriverError) -> String + '_ {
    move |e| format!("CUDA {what}: {e}")
}

/// Compile [`KERNELS`] to PTX for `arch` (`compute_90`, say; `None`: NVRTC's default). Needs
/// only NVRTC, not a GPU (a test checks the kernels compile wherever libnvrtc is present).
pub fn compile(arch: Option<&str>) -> Result<Ptx, String> {
    compile_source(KERNELS, "bach_bench.cu", arch)
}

/// Compile `source` (named `name` in NVRTC's messages) to PTX for `arch`, without FMA
/// contraction, as [`compile`] does for [`KERNELS`].
pub(crate) fn compile_source(source: &str, name: &str, arch: Option<&str>) -> Result<Ptx, String> {
    // SAFETY: only probes whether the shared library loads.
    if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
        return Err("NVRTC (libnvrtc.so.13) is not on this machine: install the CUDA 13 toolkit's NVRTC, or the \
                    `nvidia-cuda-nvrtc` wheel, and put its lib/ folder on LD_LIBRARY_PATH"
            .into());
    }
    let mut opts = CompileOptions { fmad: Some(false), name: Some(name.into()), ..Default::default() };
    if let Some(a) = arch {
        opts.options.push(format!("--gpu-architecture={a}"));
    }
    match catch_unwind(AssertUnwindSafe(|| compile_ptx_with_opts(source, opts))) {
        Ok(Ok(ptx)) => Ok(ptx),
        Ok(Err(e)) => Err(format!("NVRTC could not compile the kernels: {e}")),
        Err(panic) => Err(format!("NVRTC failed: {}", panic_text(&*panic))),
    }
}

/// The GPU's name, the kernels loaded, its size.
pub struct Gpu {
    pub name: String,
    sms: u32,
    black_scholes: CudaFunction,
    haversine: CudaFunction,
    empty: CudaFunction,
    ctx: Arc<CudaContext>,
}

impl Gpu {
    /// GPU 0 with the kernels compiled for it; `Err("no GPU: ...")` without one.
    pub fn new() -> Result<Gpu, String> {
        let ctx = open()?;
        let name = ctx.name().map_err(driver("device name"))?;
        let (major, minor) = ctx.compute_capability().map_err(driver("compute capability"))?;
        let sms = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).map_err(driver("attribute"))? as u32;
        // PTX for this GPU's architecture; an NVRTC older than the GPU gets its default target
        // (the driver compiles PTX for newer GPUs).
        let ptx = compile(Some(&format!("compute_{major}{minor}"))).or_else(|_| compile(None))?;
        let module = ctx.load_module(ptx).map_err(driver("load module"))?;
        let f = |n: &str| module.load_function(n).map_err(driver("load function"));
        let mut driver_version = 0;
        // SAFETY: writes one int.
        let _ = unsafe { cudarc::driver::sys::cuDriverGetVersion(&mut driver_version) };
        Ok(Gpu {
            name: format!("{name} (sm_{major}{minor}, {sms} SMs, driver CUDA {}.{}, hand-written cudarc)", driver_version / 1000, driver_version % 1000 / 10),
            sms,
            black_scholes: f("black_scholes")?,
            haversine: f("haversine")?,
            empty: f("empty")?,
            ctx,
        })
    }

    fn config(&self, n: usize) -> LaunchConfig {
        grid_for(n, self.sms)
    }
}

/// A grid-stride launch over `n` elements: blocks of [`THREADS`], at most 32 per SM.
pub(crate) fn grid_for(n: usize, sms: u32) -> LaunchConfig {
    let blocks = (n.div_ceil(THREADS as usize) as u64).clamp(1, sms as u64 * 32) as u32;
    LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 }
}

/// Page-locked host memory (`cuMemHostAlloc` with flags: 0 is plain pinned memory, readable at
/// full speed by the host; write-combined memory is not).
pub(crate) struct Pinned<T> {
    ptr: *mut T,
    len: usize,
}

// SAFETY: plain host memory owned by this value.
unsafe impl<T: Send> Send for Pinned<T> {}
unsafe impl<T: Sync> Sync for Pinned<T> {}

impl<T: Copy + Default> Pinned<T> {
    pub(crate) fn new(len: usize, flags: u32) -> Result<Self, String> {
        // SAFETY: allocation of len elements, then initialised (which also faults the pages in).
        unsafe {
            let ptr = result::malloc_host(len.max(1) * std::mem::size_of::<T>(), flags).map_err(driver("cuMemHostAlloc"))? as *mut T;
            for i in 0..len {
                ptr.add(i).write(T::default());
            }
            Ok(Pinned { ptr, len })
        }
    }
    pub(crate) fn as_slice(&self) -> &[T] {
        // SAFETY: initialised in `new`.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len) }
    }
    pub(crate) fn as_mut_slice(&mut self) -> &mut [T] {
        // SAFETY: initialised in `new`, uniquely borrowed.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len) }
    }
}

impl<T> Drop for Pinned<T> {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemHostAlloc; no copy is in flight (streams are synchronised).
        unsafe {
            let _ = result::free_host(self.ptr as *mut _);
        }
    }
}

/// Device memory (`cuMemAlloc`).
pub(crate) struct DevBuf {
    pub(crate) ptr: CUdeviceptr,
}

impl DevBuf {
    pub(crate) fn new(bytes: usize) -> Result<Self, String> {
        // SAFETY: plain allocation in the current context.
        let ptr = unsafe { result::malloc_sync(bytes.max(1)) }.map_err(driver("cuMemAlloc"))?;
        Ok(DevBuf { ptr })
    }
}

impl Drop for DevBuf {
    fn drop(&mut self) {
        // SAFETY: allocated by cuMemAlloc; streams are synchronised before buffers drop.
        unsafe {
            let _ = result::free_sync(self.ptr);
        }
    }
}

/// One slot of the pipeline: staging and device buffers for a chunk of every column.
struct Slot {
    stream: Arc<CudaStream>,
    host_in: Vec<Pinned<f64>>,
    host_out: Vec<Pinned<f64>>,
    dev_in: Vec<DevBuf>,
    dev_out: Vec<DevBuf>,
    /// The chunk in flight in this slot: (first row, rows).
    pending: Option<(usize, usize)>,
}

/// A workload set up on the GPU for inputs of `n` rows: buffers allocated once.
pub struct Runner<'g> {
    gpu: &'g Gpu,
    workload: Workload,
    n: usize,
    chunk: usize,
    slots: Vec<Slot>,
}

/// Input and output column names of a workload, in kernel argument order.
fn columns(w: Workload) -> (&'static [&'static str], &'static [&'static str]) {
    match w {
        Workload::BlackScholes => (&["price", "strike", "t", "rate", "vol"], &["call", "put"]),
        Workload::Haversine => (&["lat2", "lon2"], &["distance"]),
    }
}

/// Copy `src` into `dst` on all cores (the host side of a transfer is a memcpy).
pub(crate) fn par_copy(dst: &mut [f64], src: &[f64]) {
    const PART: usize = 1 << 16;
    dst.par_chunks_mut(PART).zip(src.par_chunks(PART)).for_each(|(d, s)| d.copy_from_slice(s));
}

impl<'g> Runner<'g> {
    pub fn new(gpu: &'g Gpu, workload: Workload, n: usize) -> Result<Self, String> {
        gpu.ctx.bind_to_thread().map_err(driver("bind context"))?;
        let (ins, outs) = columns(workload);
        let chunk = n.clamp(1, CHUNK);
        let slots = (0..2)
            .map(|_| {
                Ok(Slot {
                    stream: gpu.ctx.new_stream().map_err(driver("stream"))?,
                    host_in: ins.iter().map(|_| Pinned::new(chunk, 0)).collect::<Result<_, String>>()?,
                    host_out: outs.iter().map(|_| Pinned::new(chunk, 0)).collect::<Result<_, String>>()?,
                    dev_in: ins.iter().map(|_| DevBuf::new(chunk * 8)).collect::<Result<_, String>>()?,
                    dev_out: outs.iter().map(|_| DevBuf::new(chunk * 8)).collect::<Result<_, String>>()?,
                    pending: None,
                })
            })
            .collect::<Result<_, String>>()?;
        Ok(Runner { gpu, workload, n, chunk, slots })
    }

    /// One end-to-end run: host inputs in, host outputs out.
    pub fn run(&mut self, inputs: &Columns) -> Result<Columns, String> {
        self.gpu.ctx.bind_to_thread().map_err(driver("bind context"))?;
        let (ins, outs) = columns(self.workload);
        let src: Vec<&[f64]> = ins.iter().map(|k| inputs[k].as_slice().expect("contiguous inputs")).collect();
        if src.iter().any(|s| s.len() != self.n) {
            return Err(format!("the gpu runner was set up for {} rows", self.n));
        }
        let mut out: Vec<Vec<f64>> = outs.iter().map(|_| vec![0.0; self.n]).collect();
        let chunks = self.n.div_ceil(self.chunk).max(1);
        for c in 0..chunks {
            let slot = &mut self.slots[c % 2];
            Self::drain(slot, &mut out)?;
            let start = c * self.chunk;
            let len = self.chunk.min(self.n - start);
            for (h, s) in slot.host_in.iter_mut().zip(&src) {
                par_copy(&mut h.as_mut_slice()[..len], &s[start..start + len]);
            }
            let cu = slot.stream.cu_stream();
            for (d, h) in slot.dev_in.iter().zip(&slot.host_in) {
                // SAFETY: pinned source and device buffer of at least `len` elements; the
                // staging buffer is not written again before this slot's stream is synchronised.
                unsafe { result::memcpy_htod_async(d.ptr, &h.as_slice()[..len], cu) }.map_err(driver("copy to device"))?;
            }
            let cfg = self.gpu.config(len);
            let n = len as i64;
            let p: Vec<u64> = slot.dev_in.iter().chain(&slot.dev_out).map(|b| b.ptr).collect();
            // SAFETY: arguments match the kernels' signatures in KERNELS; buffers hold `len` rows.
            unsafe {
                match self.workload {
                    Workload::BlackScholes => {
                        let (c05, c10, invsqrt2) = crate::workloads::BLACK_SCHOLES_CONSTANTS;
                        let mut b = slot.stream.launch_builder(&self.gpu.black_scholes);
                        for ptr in &p {
                            b.arg(ptr);
                        }
                        b.arg(&n).arg(&c05).arg(&c10).arg(&invsqrt2).launch(cfg)
                    }
                    Workload::Haversine => {
                        let (lat1, lon1, miles) = crate::workloads::HAVERSINE_CONSTANTS;
                        let lat1_cos = lat1.cos();
                        let mut b = slot.stream.launch_builder(&self.gpu.haversine);
                        for ptr in &p {
                            b.arg(ptr);
                        }
                        b.arg(&n).arg(&lat1).arg(&lon1).arg(&lat1_cos).arg(&miles).launch(cfg)
                    }
                }
            }
            .map_err(driver("kernel launch"))?;
            for (h, d) in slot.host_out.iter_mut().zip(&slot.dev_out) {
                // SAFETY: as above, device to pinned host.
                unsafe { result::memcpy_dtoh_async(&mut h.as_mut_slice()[..len], d.ptr, cu) }.map_err(driver("copy to host"))?;
            }
            slot.pending = Some((start, len));
        }
        for slot in &mut self.slots {
            Self::drain(slot, &mut out)?;
        }
        Ok(outs.iter().zip(out).map(|(k, v)| (*k, ndarray::Array1::from_vec(v))).collect())
    }

    /// Wait for the slot's chunk in flight and copy its outputs into place.
    fn drain(slot: &mut Slot, out: &mut [Vec<f64>]) -> Result<(), String> {
        if let Some((start, len)) = slot.pending.take() {
            slot.stream.synchronize().map_err(driver("synchronize"))?;
            for (o, h) in out.iter_mut().zip(&slot.host_out) {
                par_copy(&mut o[start..start + len], &h.as_slice()[..len]);
            }
        }
        Ok(())
    }
}

/// One line of `bach-bench bandwidth`.
#[derive(Serialize, Debug)]
pub struct BandwidthRecord {
    pub test: &'static str,
    pub device: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bytes: Option<u64>,
    /// Median seconds of `runs`.
    pub seconds: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gb_per_s: Option<f64>,
    pub runs: usize,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

impl BandwidthRecord {
    /// `bytes` moved in `seconds` (median of `runs`), with its rate.
    fn rate(test: &'static str, device: &str, memory: &'static str, bytes: usize, seconds: f64, runs: usize, note: Option<String>) -> Self {
        BandwidthRecord { test, device: device.into(), memory: Some(memory), bytes: Some(bytes as u64), seconds, gb_per_s: Some(bytes as f64 / seconds / 1e9), runs, note }
    }
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Host-to-device and device-to-host bandwidth, pageable and pinned, for each size (capped by
/// free GPU memory and a quarter of host memory), then kernel launch latency; one record each,
/// handed to `emit` as it is measured.
pub fn bandwidth(sizes: &[u64], repeat: usize, launches: usize, emit: &mut dyn FnMut(BandwidthRecord)) -> Result<(), String> {
    let gpu = match Gpu::new() {
        Ok(gpu) => gpu,
        Err(why) => {
            // The host's side needs no GPU: measure it, then say why the rest was not.
            for &want in sizes {
                let bytes = want.min(host_memory_bytes() / 4).max(8) as usize;
                host_copies("host (no GPU)", bytes, repeat, emit);
            }
            return Err(format!("{why} (only the host's copies were measured)"));
        }
    };
    gpu.ctx.bind_to_thread().map_err(driver("bind context"))?;
    let stream = gpu.ctx.new_stream().map_err(driver("stream"))?;
    let cu = stream.cu_stream();
    let (free, _total) = gpu.ctx.mem_get_info().map_err(driver("memory info"))?;
    for &want in sizes {
        let cap = (free as u64 / 2).min(host_memory_bytes() / 4);
        let bytes = want.min(cap).max(1) as usize;
        let note = (bytes as u64) < want;
        let dev = DevBuf::new(bytes)?;
        let mut pageable = vec![1u8; bytes];
        let mut pinned = Pinned::<u8>::new(bytes, 0)?;
        for (test, memory) in [("h2d", "pageable"), ("h2d", "pinned"), ("d2h", "pageable"), ("d2h", "pinned")] {
            let mut times = Vec::with_capacity(repeat);
            for round in 0..=repeat {
                let t0 = Instant::now();
                // SAFETY: buffers of `bytes` bytes each; synchronised before the next use.
                unsafe {
                    match (test, memory) {
                        ("h2d", "pageable") => result::memcpy_htod_async(dev.ptr, &pageable[..], cu),
                        ("h2d", _) => result::memcpy_htod_async(dev.ptr, pinned.as_slice(), cu),
                        ("d2h", "pageable") => result::memcpy_dtoh_async(&mut pageable[..], dev.ptr, cu),
                        _ => result::memcpy_dtoh_async(pinned.as_mut_slice(), dev.ptr, cu),
                    }
                }
                .map_err(driver("copy"))?;
                stream.synchronize().map_err(driver("synchronize"))?;
                if round > 0 {
                    times.push(t0.elapsed().as_secs_f64());
                }
            }
            let note = note.then(|| format!("asked for {want} bytes; capped by free GPU memory / 2 and host memory / 4"));
            emit(BandwidthRecord::rate(test, &gpu.name, memory, bytes, median(times), repeat, note));
        }
        // Device to device: one buffer into another on this GPU, the copy two logical devices
        // on one GPU (`cuda:0,cuda:0`) would make between them if it went peer to peer.
        let other = DevBuf::new(bytes)?;
        let mut times = Vec::with_capacity(repeat);
        for round in 0..=repeat {
            let t0 = Instant::now();
            // SAFETY: two device buffers of `bytes` bytes each; synchronised before the next use.
            unsafe { result::memcpy_dtod_async(other.ptr, dev.ptr, bytes, cu) }.map_err(driver("copy"))?;
            stream.synchronize().map_err(driver("synchronize"))?;
            if round > 0 {
                times.push(t0.elapsed().as_secs_f64());
            }
        }
        emit(BandwidthRecord::rate("d2d", &gpu.name, "device", bytes, median(times), repeat, Some("one device buffer into another on the same GPU (cuMemcpyDtoDAsync)".into())));
        drop(other);
        host_side(&gpu, &stream, &dev, &mut pageable, repeat, emit)?;
    }
    // Launch latency: an empty kernel, launch then wait, one at a time; then back to back.
    let cfg = LaunchConfig { grid_dim: (1, 1, 1), block_dim: (1, 1, 1), shared_mem_bytes: 0 };
    let launch = || -> Result<(), String> {
        // SAFETY: the empty kernel takes no arguments.
        unsafe { stream.launch_builder(&gpu.empty).launch(cfg) }.map(|_| ()).map_err(driver("kernel launch"))
    };
    for _ in 0..100 {
        launch()?;
    }
    stream.synchronize().map_err(driver("synchronize"))?;
    let mut times = Vec::with_capacity(launches);
    for _ in 0..launches {
        let t0 = Instant::now();
        launch()?;
        stream.synchronize().map_err(driver("synchronize"))?;
        times.push(t0.elapsed().as_secs_f64());
    }
    emit(BandwidthRecord {
        test: "launch_latency",
        device: gpu.name.clone(),
        memory: None,
        bytes: None,
        seconds: median(times),
        gb_per_s: None,
        runs: launches,
        note: Some("empty kernel, launch + stream synchronize, median".into()),
    });
    let t0 = Instant::now();
    for _ in 0..launches {
        launch()?;
    }
    stream.synchronize().map_err(driver("synchronize"))?;
    emit(BandwidthRecord {
        test: "launch_throughput",
        device: gpu.name.clone(),
        memory: None,
        bytes: None,
        seconds: t0.elapsed().as_secs_f64() / launches.max(1) as f64,
        gb_per_s: None,
        runs: launches,
        note: Some("empty kernel, back-to-back launches then one synchronize, seconds per launch".into()),
    });
    Ok(())
}

/// The host's side of a result landing, for one buffer size (no GPU needed): a parallel
/// memcpy (all cores) into memory already touched; into fresh memory (each page faulted in
/// by the copy); into fresh memory advised onto huge pages; and into fresh memory faulted in
/// first by [`bach_runtime::fresh::Prefault`] (what a GPU stage's results get), with the
/// faulting-in timed on its own. One record each.
fn host_copies(device: &str, bytes: usize, repeat: usize, emit: &mut dyn FnMut(BandwidthRecord)) {
    let n = bytes / 8;
    let bytes = n * 8;
    let src = vec![1.0f64; n];
    let mut warm = vec![0.0f64; n];
    par_copy(&mut warm, &src);
    let mut record = |test: &'static str, memory: &'static str, seconds: f64, runs: usize, note: &str| {
        emit(BandwidthRecord::rate(test, device, memory, bytes, seconds, runs, Some(note.into())))
    };
    let mut times = vec![];
    for _ in 0..repeat.max(1) {
        let t0 = Instant::now();
        par_copy(&mut warm, &src);
        times.push(t0.elapsed().as_secs_f64());
    }
    record("host_copy", "touched", median(times), repeat.max(1), "memcpy on all cores into memory already touched");
    let runs = repeat.max(1);
    let times: Vec<f64> = (0..runs).filter_map(|_| copy_into_fresh(&src, |_, _| true)).map(|(none, copy)| none + copy).collect();
    record("host_copy", "fresh", median(times), runs, "memcpy on all cores into a fresh allocation (page faults included)");
    let huge = |p: *mut u8, len: usize| {
        bach_runtime::fresh::advise_huge_pages(p, len);
        true
    };
    let times: Vec<f64> = (0..runs).filter_map(|_| copy_into_fresh(&src, huge)).map(|(advise, copy)| advise + copy).collect();
    let first = times[0];
    record(
        "host_copy",
        "fresh_huge",
        median(times),
        runs,
        &format!("as fresh, the allocation advised onto transparent huge pages when BACH_HUGE_PAGES=1 (first run {:.1} ms)", first * 1e3),
    );
    let threads = bach_runtime::fresh::prefault_threads();
    let prefault = |p: *mut u8, len: usize| bach_runtime::fresh::Prefault::start(p, len, threads).is_some_and(|f| f.wait() > 0);
    let (populate, times): (Vec<f64>, Vec<f64>) = (0..runs).map_while(|_| copy_into_fresh(&src, prefault)).unzip();
    if times.is_empty() {
        record("host_populate", "fresh", 0.0, 1, "not measured: no MADV_POPULATE_WRITE here (Linux 5.14+), or under 8 MiB");
    } else {
        let runs = times.len();
        record("host_populate", "fresh", median(populate), runs, &format!("fresh memory faulted in ahead by bach's Prefault ({threads} threads, MADV_POPULATE_WRITE)"));
        record("host_copy", "prefaulted", median(times), runs, "memcpy on all cores into fresh memory faulted in ahead");
    }
}

/// A parallel copy of `src` into a fresh allocation after `prepare(pointer, bytes)` ran on
/// it: (seconds of `prepare`, seconds of the copy), `None` when `prepare` could not.
fn copy_into_fresh(src: &[f64], prepare: impl Fn(*mut u8, usize) -> bool) -> Option<(f64, f64)> {
    let n = src.len();
    let mut fresh: Vec<f64> = Vec::with_capacity(n);
    let t0 = Instant::now();
    if !prepare(fresh.as_mut_ptr() as *mut u8, n * 8) {
        return None;
    }
    let prepared = t0.elapsed().as_secs_f64();
    // SAFETY: every element is written by the copy before it is read.
    #[allow(clippy::uninit_vec)]
    unsafe {
        fresh.set_len(n)
    };
    let t1 = Instant::now();
    par_copy(&mut fresh, src);
    Some((prepared, t1.elapsed().as_secs_f64()))
}

/// The GPU's side of host memory, for one buffer size: the host copies ([`host_copies`]),
/// then page-locking the pageable buffer in place (`cuMemHostRegister`), a host-to-device
/// copy from it, and `cuMemHostUnregister`. One record each (the register records time one
/// call).
fn host_side(gpu: &Gpu, stream: &CudaStream, dev: &DevBuf, pageable: &mut [u8], repeat: usize, emit: &mut dyn FnMut(BandwidthRecord)) -> Result<(), String> {
    let bytes = pageable.len();
    host_copies(&gpu.name, bytes, repeat, emit);
    let mut record = |test: &'static str, memory: &'static str, seconds: f64, runs: usize, note: &str| {
        emit(BandwidthRecord::rate(test, &gpu.name, memory, bytes, seconds, runs, Some(note.into())))
    };
    let p = pageable.as_mut_ptr() as *mut std::ffi::c_void;
    let t0 = Instant::now();
    // SAFETY: a live allocation of `bytes` bytes, unregistered below before it is freed.
    let status = unsafe { cudarc::driver::sys::cuMemHostRegister_v2(p, bytes, 0) };
    let reg = t0.elapsed().as_secs_f64();
    if status != cudarc::driver::sys::CUresult::CUDA_SUCCESS {
        record("host_register", "pageable", reg, 1, &format!("cuMemHostRegister failed: {status:?}"));
        return Ok(());
    }
    record("host_register", "pageable", reg, 1, "cuMemHostRegister of a touched pageable buffer");
    let mut times = vec![];
    for _ in 0..repeat.max(1) {
        let t0 = Instant::now();
        // SAFETY: buffers of `bytes` bytes; synchronised before the next use.
        unsafe { result::memcpy_htod_async(dev.ptr, &pageable[..], stream.cu_stream()) }.map_err(driver("copy"))?;
        stream.synchronize().map_err(driver("synchronize"))?;
        times.push(t0.elapsed().as_secs_f64());
    }
    record("h2d", "registered", median(times), repeat.max(1), "from the pageable buffer page-locked in place");
    let t0 = Instant::now();
    // SAFETY: registered above; no copy in flight.
    let status = unsafe { cudarc::driver::sys::cuMemHostUnregister(p) };
    record("host_unregister", "pageable", t0.elapsed().as_secs_f64(), 1, &format!("cuMemHostUnregister: {status:?}"));
    Ok(())
}

/// Physical memory of this host (for capping the buffer sizes); 16 GiB when unknown.
pub(crate) fn host_memory_bytes() -> u64 {
    std::fs::read_to_string("/proc/meminfo")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("MemTotal:")).and_then(|l| l.split_whitespace().nth(1)?.parse::<u64>().ok()))
        .map_or(16 << 30, |kib| kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_gpu_is_an_error_with_a_reason_never_a_panic() {
        match Gpu::new() {
            Ok(gpu) => eprintln!("a GPU is present: {}", gpu.name),
            Err(e) => assert!(e.starts_with("no GPU: ") || e.contains("NVRTC"), "{e}"),
        }
    }

    #[test]
    fn scaled_diff_floors_the_denominator_at_one() {
        let a: Columns = [("x", ndarray::arr1(&[1e-6, 100.0]))].into_iter().collect();
        let b: Columns = [("x", ndarray::arr1(&[2e-6, 100.0 * (1.0 + 1e-12)]))].into_iter().collect();
        let d = max_scaled_diff(&a, &b);
        assert!((d - 1e-6).abs() < 1e-12, "{d}");
    }

    /// The kernels compile with NVRTC wherever libnvrtc is present (no GPU needed); skipped
    /// otherwise unless BACH_REQUIRE_NVRTC=1.
    #[test]
    fn kernels_compile_with_nvrtc() {
        for arch in [None, Some("compute_80"), Some("compute_90")] {
            match compile(arch) {
                Ok(ptx) => {
                    let src = ptx.to_src();
                    for k in ["black_scholes", "haversine", "empty"] {
                        assert!(src.contains(&format!(".entry {k}")), "{k} missing from PTX for {arch:?}");
                    }
                }
                Err(e) if e.contains("not on this machine") && !bach_runtime::knobs::Knobs::from_env().require_nvrtc => {
                    eprintln!("skipped: {e}");
                    return;
                }
                Err(e) => panic!("{arch:?}: {e}"),
            }
        }
    }
}

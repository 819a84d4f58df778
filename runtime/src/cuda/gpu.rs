//! One GPU as the process holds it: its context, three streams (copies in, kernels, copies
//! out), the memory pools, cuBLAS, compiled kernels (one module per source text), and the
//! timeline of what was queued (CUDA events, turned into [`DeviceSpan`]s at synchronize).
//! Opened once per process and ordinal, shared by every session's `CudaDevice`.
//!
//! Opening checks, in order, everything a run needs, so that a machine without it gets a
//! reason and runs on the CPU: the driver library, a driver that starts and has a device,
//! its version against NVRTC's, NVRTC, cuBLAS, a context, and a test kernel compiled,
//! launched and read back.

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use cudarc::cublas::{result as blas_result, sys as blas_sys};
use cudarc::cusolver::sys as solver_sys;
use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::{self, cudaError_enum, CUdevice_attribute, CUevent_flags};
use cudarc::driver::{CudaContext, CudaEvent, CudaFunction, CudaModule, CudaStream, LaunchConfig, PushKernelArg};
use cudarc::nvrtc::Ptx;

use super::memory::{DevicePool, HostRegistry, Lane, StagingPool};
use super::{describe, nvrtc, At};
use crate::device::{panic_text, DeviceSpan, Tag};
use crate::trace::EventKind;
use crate::units::bytes as human;

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// A GPU as the driver lists it.
struct GpuInfo {
    name: String,
    memory: usize,
    cc: (i32, i32),
}

/// Two cuBLAS handles on the compute stream: scalars on the host (gemm, gemv) and results in
/// device memory (dot, so it stays asynchronous).
pub(super) struct Blas {
    pub host: blas_sys::cublasHandle_t,
    pub device: blas_sys::cublasHandle_t,
}

// SAFETY: the handles are used under the GPU's mutex, one thread at a time.
unsafe impl Send for Blas {}

impl Blas {
    fn new(stream: &CudaStream) -> Result<Blas, String> {
        let make = |mode: blas_sys::cublasPointerMode_t| -> Result<blas_sys::cublasHandle_t, blas_result::CublasError> {
            let h = blas_result::create_handle()?;
            // SAFETY: a live handle and stream of the current context.
            unsafe {
                blas_result::set_stream(h, stream.cu_stream() as _)?;
                blas_sys::cublasSetPointerMode_v2(h, mode).result()?;
            }
            Ok(h)
        };
        let host = make(blas_sys::cublasPointerMode_t::CUBLAS_POINTER_MODE_HOST).map_err(|e| format!("cuBLAS could not start: {:?}", e.0))?;
        let mut blas = Blas { host, device: std::ptr::null_mut() };
        blas.device = make(blas_sys::cublasPointerMode_t::CUBLAS_POINTER_MODE_DEVICE).map_err(|e| format!("cuBLAS could not start: {:?}", e.0))?;
        Ok(blas)
    }
}

impl Drop for Blas {
    fn drop(&mut self) {
        for h in [self.host, self.device] {
            if !h.is_null() {
                // SAFETY: created by cublasCreate, destroyed once.
                let _ = unsafe { blas_result::destroy_handle(h) };
            }
        }
    }
}

/// A cuSOLVER dense handle on the compute stream (the symmetric eigen problem), made at first
/// use: a GPU host without cuSOLVER runs everything else, and those ops on the host.
pub(super) struct Solver {
    pub handle: solver_sys::cusolverDnHandle_t,
}

// SAFETY: the handle is used under the GPU's mutex, one thread at a time.
unsafe impl Send for Solver {}

impl Solver {
    fn new(stream: &CudaStream) -> Result<Solver, String> {
        if !crate::device::catch_panics(|| unsafe { solver_sys::is_culib_present() }).unwrap_or(false) {
            return Err("no cuSOLVER found (libcusolver): install the CUDA toolkit, or `pip install nvidia-cusolver` (the CUDA 13 line) and add its `nvidia/cu13/lib` directory to LD_LIBRARY_PATH".into());
        }
        let mut handle = std::ptr::null_mut();
        // SAFETY: a fresh handle on a live stream of the current context.
        unsafe {
            let status = solver_sys::cusolverDnCreate(&mut handle);
            if status != solver_sys::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS {
                return Err(format!("cuSOLVER could not start: {status:?}"));
            }
            let solver = Solver { handle };
            let status = solver_sys::cusolverDnSetStream(handle, stream.cu_stream() as _);
            if status != solver_sys::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS {
                return Err(format!("cuSOLVER could not use the compute stream: {status:?}"));
            }
            Ok(solver)
        }
    }
}

impl Drop for Solver {
    fn drop(&mut self) {
        if !self.handle.is_null() {
            // SAFETY: created by cusolverDnCreate, destroyed once.
            let _ = unsafe { solver_sys::cusolverDnDestroy(self.handle) };
        }
    }
}

/// A kernel source compiled and loaded, with the functions looked up in it.
struct Compiled {
    source: String,
    module: Result<Arc<CudaModule>, String>,
    functions: Mutex<HashMap<String, Result<CudaFunction, String>>>,
}

/// Where a source text lies (address, length) and the function asked for in it.
type SourceAt = (usize, usize, String);

/// Something timed on the GPU: two events around it, for the device (session) that queued it.
struct Span {
    owner: u64,
    tag: Tag,
    kind: EventKind,
    start: Arc<CudaEvent>,
    end: Arc<CudaEvent>,
}

/// Beyond this many untaken spans the oldest are dropped (nobody synchronized for long).
const MAX_SPANS: usize = 200_000;

struct Timeline {
    /// A timing event and the host instant it corresponds to.
    anchor: Option<(CudaEvent, Instant)>,
    /// Nothing is queued (just synchronized): the next work re-anchors the clock.
    idle: bool,
    spans: Vec<Span>,
    /// Ops queued since the last synchronize, for errors that surface there.
    recent: VecDeque<String>,
}

pub(super) struct Gpu {
    pub ctx: Arc<CudaContext>,
    pub ordinal: usize,
    pub name: String,
    pub cc: (i32, i32),
    /// What NVRTC compiles for: `sm_XY` (CUBIN) or `compute_XY` (PTX).
    pub arch: String,
    pub sms: u32,
    pub total_memory: usize,
    pub streams: [Arc<CudaStream>; 3],
    pub pool: Arc<DevicePool>,
    pub staging: Arc<StagingPool>,
    /// Host arrays page-locked in place (copies straight from them).
    pub registry: Arc<HostRegistry>,
    pub blas: Mutex<Blas>,
    /// cuSOLVER, made at first use ([`Gpu::solver`]); why not, when it cannot be.
    solver: Mutex<Option<Result<Solver, String>>>,
    /// Host-to-device and device-to-host bytes per second, and whether they were measured.
    pub bandwidth: (f64, f64, bool),
    /// Every GPU of the machine, one line each, and the versions in use.
    pub notes: Vec<String>,
    modules: Mutex<HashMap<String, Arc<Compiled>>>,
    /// Functions by the address and length of the source text they were asked for with (the
    /// text is compared on a hit): a launch does not hash a source of many kilobytes.
    recent_functions: Mutex<HashMap<SourceAt, (Arc<Compiled>, CudaFunction)>>,
    timeline: Mutex<Timeline>,
    /// The thread that drains copies to the host (see [`Gpu::drain`]), started at first use.
    drainer: Mutex<Option<std::sync::mpsc::Sender<DrainJob>>>,
}

/// A copy out for the drain thread to finish.
type DrainJob = Box<dyn FnOnce() + Send>;

/// The process's GPUs, opened on first use (or the reason one cannot be).
static OPENED: Mutex<BTreeMap<usize, Result<Arc<Gpu>, String>>> = Mutex::new(BTreeMap::new());

/// GPU `ordinal`, opened once per process; never panics.
pub(super) fn open(ordinal: usize) -> Result<Arc<Gpu>, String> {
    let mut opened = lock(&OPENED);
    if let Some(r) = opened.get(&ordinal) {
        return r.clone();
    }
    let r = crate::device::catch_panics(|| Gpu::open(ordinal)).unwrap_or_else(|p| Err(format!("the CUDA libraries panicked while starting: {}", panic_text(&*p))));
    opened.insert(ordinal, r.clone());
    r
}

/// How many GPUs the machine has (the driver's count), or why none can be used.
pub(super) fn count() -> Result<usize, String> {
    probe_driver().map(|(_, gpus)| gpus.len())
}

/// The driver library, started, with its version and GPUs.
fn probe_driver() -> Result<(i32, Vec<GpuInfo>), String> {
    if !crate::device::catch_panics(|| unsafe { sys::is_culib_present() }).unwrap_or(false) {
        return Err("no libcuda.so found (no NVIDIA driver on this machine)".into());
    }
    let probed = crate::device::catch_panics(|| -> Result<(i32, Vec<GpuInfo>), String> {
        if let Err(e) = result::init() {
            return Err(match e.0 {
                cudaError_enum::CUDA_ERROR_NO_DEVICE => "CUDA driver found but no device".into(),
                _ => format!("the CUDA driver failed to start: {}", describe(&e)),
            });
        }
        let mut version = 0;
        // SAFETY: a valid out-pointer.
        unsafe { sys::cuDriverGetVersion(&mut version) }.result().map_err(|e| format!("cuDriverGetVersion: {}", describe(&e)))?;
        let count = result::device::get_count().map_err(|e| format!("cuDeviceGetCount: {}", describe(&e)))?;
        let mut gpus = Vec::new();
        for i in 0..count {
            let dev = result::device::get(i).map_err(|e| format!("cuDeviceGet({i}): {}", describe(&e)))?;
            let name = result::device::get_name(dev).unwrap_or_else(|_| "unknown GPU".into());
            // SAFETY: a device handle the driver just gave.
            let memory = unsafe { result::device::total_mem(dev) }.unwrap_or(0);
            let attr = |a| unsafe { result::device::get_attribute(dev, a) }.unwrap_or(0);
            let cc = (attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR), attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR));
            gpus.push(GpuInfo { name, memory, cc });
        }
        Ok((version, gpus))
    });
    let (version, gpus) = probed.unwrap_or_else(|p| Err(format!("the CUDA driver library could not be used (it may be too old): {}", panic_text(&*p))))?;
    if gpus.is_empty() {
        return Err("CUDA driver found but no device".into());
    }
    Ok((version, gpus))
}

fn version_text(v: i32) -> String {
    format!("{}.{}", v / 1000, (v % 1000) / 10)
}

impl Gpu {
    fn open(ordinal: usize) -> Result<Arc<Gpu>, String> {
        let (driver, gpus) = probe_driver()?;
        let mut notes: Vec<String> = gpus
            .iter()
            .enumerate()
            .map(|(i, g)| format!("GPU {i}: {}, {}, sm_{}{}{}", g.name, human(g.memory), g.cc.0, g.cc.1, if i == ordinal { " (used)" } else { "" }))
            .collect();
        let Some(info) = gpus.get(ordinal) else {
            return Err(format!("BACH_CUDA_DEVICE={ordinal} but this machine has {} GPU(s): {}", gpus.len(), notes.join("; ")));
        };
        let (nv_major, nv_minor) = nvrtc::version()?;
        if driver < 12000 {
            return Err(format!("the CUDA driver ({}) is too old: Bach needs CUDA 12 or newer (driver 580 or newer for CUDA 13)", version_text(driver)));
        }
        if driver < nv_major * 1000 + nv_minor * 10 {
            return Err(format!(
                "the CUDA driver ({}) is older than NVRTC {nv_major}.{nv_minor}, which compiles the kernels: update the NVIDIA driver (580 or newer for CUDA 13)",
                version_text(driver)
            ));
        }
        if !crate::device::catch_panics(|| unsafe { blas_sys::is_culib_present() }).unwrap_or(false) {
            return Err("no cuBLAS found (libcublas.so.13): install the CUDA toolkit, or `pip install nvidia-cublas` (the CUDA 13 line) and add its `nvidia/cu13/lib` directory to LD_LIBRARY_PATH".into());
        }
        let archs = nvrtc::supported_archs()?;
        let arch = nvrtc::arch_for(info.cc, &archs)?;
        let ctx = CudaContext::new(ordinal).map_err(|e| format!("no CUDA context on GPU {ordinal}: {}", describe(&e)))?;
        // Bach orders its own work with events; cudarc's tracking is for its CudaSlice only.
        // SAFETY: no CudaSlice is made on this context.
        unsafe { ctx.disable_event_tracking() };
        let stream = || ctx.new_stream().map_err(|e| format!("cuStreamCreate: {}", describe(&e)));
        let streams = [stream()?, stream()?, stream()?];
        let blas = Blas::new(&streams[Lane::Compute as usize])?;
        let sms = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).unwrap_or(1).max(1) as u32;
        notes.push(format!(
            "CUDA driver {}, NVRTC {nv_major}.{nv_minor}: kernels compiled for {arch}{}",
            version_text(driver),
            if arch.starts_with("compute_") { " (PTX, compiled by the driver for this GPU)" } else { "" }
        ));
        let mut gpu = Gpu {
            pool: DevicePool::new(ctx.clone(), streams.clone()),
            staging: StagingPool::new(ctx.clone()),
            registry: HostRegistry::new(ctx.clone()),
            ctx,
            ordinal,
            name: info.name.clone(),
            cc: info.cc,
            arch,
            sms,
            total_memory: info.memory,
            streams,
            blas: Mutex::new(blas),
            solver: Mutex::new(None),
            bandwidth: (25e9, 25e9, false),
            notes,
            modules: Mutex::new(HashMap::new()),
            recent_functions: Mutex::new(HashMap::new()),
            timeline: Mutex::new(Timeline { anchor: None, idle: true, spans: Vec::new(), recent: VecDeque::new() }),
            drainer: Mutex::new(None),
        };
        gpu.self_test()?;
        if let Some((h2d, d2h)) = gpu.measure() {
            gpu.bandwidth = (h2d, d2h, true);
        }
        Ok(Arc::new(gpu))
    }

    pub fn stream(&self, lane: Lane) -> &Arc<CudaStream> {
        &self.streams[lane as usize]
    }

    /// The function `name` of kernel `source`, compiled at first use.
    /// The cuSOLVER handle (made on first use, on the compute stream), or why there is none.
    pub fn solver(&self) -> MutexGuard<'_, Option<Result<Solver, String>>> {
        let mut s = lock(&self.solver);
        if s.is_none() {
            let made =
                self.ctx.bind_to_thread().map_err(|e| format!("binding the CUDA context: {}", describe(&e))).and_then(|()| Solver::new(&self.streams[Lane::Compute as usize]));
            *s = Some(made);
        }
        s
    }

    pub fn function(&self, source: &str, name: &str) -> Result<CudaFunction, String> {
        let key = (source.as_ptr() as usize, source.len(), name.to_string());
        if let Some((c, f)) = lock(&self.recent_functions).get(&key) {
            if c.source == source {
                return Ok(f.clone());
            }
        }
        let compiled = {
            let mut modules = lock(&self.modules);
            match modules.get(source) {
                Some(c) => c.clone(),
                None => {
                    let module = nvrtc::compile(source, &self.arch)
                        .and_then(|image| self.ctx.load_module(Ptx::from_binary(image)).map_err(|e| format!("the GPU could not load the compiled kernel: {}", describe(&e))));
                    let c = Arc::new(Compiled { source: source.to_string(), module, functions: Mutex::new(HashMap::new()) });
                    modules.insert(source.to_string(), c.clone());
                    c
                }
            }
        };
        let module = compiled.module.as_ref().map_err(Clone::clone)?;
        let f = lock(&compiled.functions)
            .entry(name.to_string())
            .or_insert_with(|| {
                module.load_function(name).map_err(|e| match e.0 {
                    cudaError_enum::CUDA_ERROR_NOT_FOUND => format!("the kernel source defines no `extern \"C\" __global__` function `{name}`"),
                    _ => format!("cuModuleGetFunction({name}): {}", describe(&e)),
                })
            })
            .clone()?;
        let mut recent = lock(&self.recent_functions);
        if recent.len() >= 4096 {
            recent.clear();
        }
        recent.insert(key, (compiled.clone(), f.clone()));
        Ok(f)
    }

    /// Work is about to be queued: if nothing was, anchor the GPU clock to the host's first.
    pub fn busy(&self) -> Result<(), DriverError> {
        let mut tl = lock(&self.timeline);
        if tl.idle {
            // Every stream is idle, so the anchor runs at once: its GPU time is "now".
            let before = Instant::now();
            let ev = self.stream(Lane::Compute).record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?;
            ev.synchronize()?;
            let after = Instant::now();
            tl.anchor = Some((ev, before + (after - before) / 2));
            tl.idle = false;
        }
        Ok(())
    }

    /// Run `job` on this GPU's drain thread, in the order jobs were given: copies to the host
    /// are drained there (wait for a chunk, copy it out of staging, queue the next) while the
    /// executor's thread fills the copies in and queues kernels for the next piece.
    pub fn drain<T: Send + 'static>(&self, job: impl FnOnce() -> T + Send + 'static) -> std::sync::mpsc::Receiver<T> {
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        let mut job: Option<Box<dyn FnOnce() + Send>> = Some(Box::new(move || {
            let _ = tx.send(job());
        }));
        let mut drainer = lock(&self.drainer);
        if let Some(sender) = drainer.as_ref() {
            match sender.send(job.take().expect("one job")) {
                Ok(()) => return rx,
                Err(e) => job = Some(e.0),
            }
        }
        let (sender, jobs) = std::sync::mpsc::channel::<Box<dyn FnOnce() + Send>>();
        let started = std::thread::Builder::new().name("bach-cuda-drain".into()).spawn(move || {
            for j in jobs {
                j();
            }
        });
        let job = job.expect("not sent");
        match started {
            Ok(_) => {
                let _ = sender.send(job);
                *drainer = Some(sender);
            }
            // No thread to be had: drain on this one.
            Err(_) => job(),
        }
        rx
    }

    /// A timing event on `lane` (the start of a span).
    pub fn begin(&self, lane: Lane) -> Result<Arc<CudaEvent>, DriverError> {
        self.busy()?;
        Ok(Arc::new(self.stream(lane).record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?))
    }

    /// A timing event on `lane` ending what `start` began; recorded as a span of `owner` (a
    /// [`super::CudaDevice`]: one per session, several may share this GPU) when tagged.
    pub fn end(&self, lane: Lane, owner: u64, span: Option<(Tag, EventKind)>, start: Arc<CudaEvent>) -> Result<Arc<CudaEvent>, DriverError> {
        let end = Arc::new(self.stream(lane).record_event(Some(CUevent_flags::CU_EVENT_DEFAULT))?);
        if let Some((tag, kind)) = span {
            let mut tl = lock(&self.timeline);
            if tl.spans.len() >= MAX_SPANS {
                tl.spans.drain(..MAX_SPANS / 2);
            }
            tl.spans.push(Span { owner, tag, kind, start, end: end.clone() });
        }
        Ok(end)
    }

    /// An event marking the work queued on `lane` so far (no timing).
    pub fn marker(&self, lane: Lane) -> Result<Arc<CudaEvent>, DriverError> {
        Ok(Arc::new(self.stream(lane).record_event(None)?))
    }

    /// Remember an op queued since the last synchronize (named if an error surfaces there).
    pub fn queued(&self, op: &str) {
        let mut tl = lock(&self.timeline);
        if tl.recent.back().map(String::as_str) != Some(op) {
            if tl.recent.len() >= 8 {
                tl.recent.pop_front();
            }
            tl.recent.push_back(op.to_string());
        }
    }

    /// Wait for every stream; `owner`'s spans timed since its last call, in host time. Other
    /// owners' spans stay for their own call: sessions sharing the GPU (tests in parallel)
    /// each see their own work on the GPU's clock.
    pub fn synchronize(&self, owner: u64) -> Result<Vec<DeviceSpan>, String> {
        let synced: Result<(), DriverError> = self.streams.iter().try_for_each(|s| s.synchronize());
        let mut tl = lock(&self.timeline);
        let spans: Vec<Span> = tl.spans.extract_if(.., |s| s.owner == owner).collect();
        let recent: Vec<String> = tl.recent.drain(..).collect();
        if let Err(e) = synced {
            let ops = if recent.is_empty() { String::new() } else { format!(" (queued since the last synchronize: {})", recent.join(", ")) };
            return Err(format!("{}{ops}", describe(&e)));
        }
        tl.idle = true;
        let out = match &tl.anchor {
            Some((anchor, at)) => {
                let time = |e: &CudaEvent| -> Option<Instant> {
                    // SAFETY: both events were recorded with timing and have completed.
                    let ms = unsafe { result::event::elapsed(anchor.cu_event(), e.cu_event()) }.ok()? as f64;
                    let d = Duration::from_secs_f64(ms.abs() / 1e3);
                    if ms >= 0.0 {
                        at.checked_add(d)
                    } else {
                        at.checked_sub(d)
                    }
                };
                spans.iter().filter_map(|s| Some(DeviceSpan { tag: s.tag, kind: s.kind, start: time(&s.start)?, end: time(&s.end)? })).collect()
            }
            None => Vec::new(),
        };
        drop(tl);
        self.pool.after_sync();
        self.staging.after_sync();
        Ok(out)
    }

    /// Compile, launch and read back a tiny kernel: proves NVRTC, the driver's loader, a
    /// launch and a copy work together before the runtime relies on them.
    fn self_test(&self) -> Result<(), String> {
        const SOURCE: &str = r#"extern "C" __global__ void bach_self_test(unsigned long long n, double* out) {
    for (unsigned long long i = blockIdx.x * (unsigned long long)blockDim.x + threadIdx.x; i < n; i += (unsigned long long)gridDim.x * blockDim.x)
        out[i] = 0.5 * (double)i;
}"#;
        let fail = |what: &str, e: String| format!("the GPU failed a test kernel ({what}): {e}");
        let f = self.function(SOURCE, "bach_self_test").map_err(|e| fail("build", e))?;
        let n: u64 = 1000;
        let at = At { op: "self test", device: &self.name };
        let block = self.pool.alloc(n as usize * 8, at).map_err(|e| fail("allocate", e.to_string()))?;
        block.touch(Lane::Compute);
        let stream = self.stream(Lane::Compute);
        let cfg = LaunchConfig { grid_dim: (4, 1, 1), block_dim: (256, 1, 1), shared_mem_bytes: 0 };
        // SAFETY: the kernel writes n doubles into a block of n doubles.
        unsafe { stream.launch_builder(&f).arg(&n).arg(&block.ptr).launch(cfg) }.map_err(|e| fail("launch", describe(&e)))?;
        stream.synchronize().map_err(|e| fail("run", describe(&e)))?;
        let mut back = vec![0f64; n as usize];
        // SAFETY: the block holds n doubles, written by the finished kernel.
        unsafe { result::memcpy_dtoh_sync(&mut back, block.ptr) }.map_err(|e| fail("copy back", describe(&e)))?;
        match back.iter().enumerate().find(|(i, &v)| v != 0.5 * *i as f64) {
            Some((i, v)) => Err(fail("check", format!("element {i} is {v}, not {}", 0.5 * i as f64))),
            None => Ok(()),
        }
    }

    /// Host-to-device and device-to-host bandwidth through pinned memory (32 MiB, 3 times).
    fn measure(&self) -> Option<(f64, f64)> {
        const SIZE: usize = 32 << 20;
        crate::device::catch_panics(|| {
            let at = At { op: "bandwidth", device: &self.name };
            let block = self.pool.alloc(SIZE, at).ok()?;
            let mut staging = self.staging.take(SIZE, at).ok()?;
            block.touch(Lane::H2d);
            block.touch(Lane::D2h);
            let time = |lane: Lane, copy: &mut dyn FnMut(&CudaStream) -> Result<(), DriverError>| -> Option<f64> {
                let s = self.stream(lane);
                copy(s).ok()?;
                let a = s.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).ok()?;
                for _ in 0..3 {
                    copy(s).ok()?;
                }
                let b = s.record_event(Some(CUevent_flags::CU_EVENT_DEFAULT)).ok()?;
                let ms = a.elapsed_ms(&b).ok()? as f64;
                (ms > 0.0).then(|| 3.0 * SIZE as f64 / (ms / 1e3))
            };
            let ptr = block.ptr;
            // SAFETY: both buffers hold SIZE bytes and outlive the synchronized copies.
            let h2d = time(Lane::H2d, &mut |s| unsafe { result::memcpy_htod_async(ptr, staging.bytes(SIZE), s.cu_stream()) })?;
            let d2h = time(Lane::D2h, &mut |s| unsafe { result::memcpy_dtoh_async(staging.bytes_mut(SIZE), ptr, s.cu_stream()) })?;
            Some((h2d, d2h))
        })
        .ok()
        .flatten()
    }
}

//! GPU memory and the host memory that feeds it.
//!
//! [`DevicePool`]: a caching allocator. A freed block is not given back to CUDA: it waits
//! until the work queued on it has finished (an event recorded at free time on each stream
//! that touched it) and is then reused for a request of its size class, so a stage of many
//! pieces calls `cuMemAlloc` only for its first few. When CUDA runs out, the pool waits for
//! the blocks still in flight, then gives its idle blocks back, and tries once more.
//!
//! [`StagingPool`]: pinned (page-locked, plain: not write-combined, so the host reads it
//! fast) host buffers for asynchronous copies, reused the same way; a size class never has
//! more than a few buffers in flight, which bounds the pinned memory of a long transfer.
//!
//! [`HostRegistry`]: large host arrays a session keeps, page-locked in place so that copies
//! skip the staging buffers.

use std::collections::{BTreeMap, VecDeque};
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use cudarc::driver::result::{self, DriverError};
use cudarc::driver::sys::cudaError_enum;
use cudarc::driver::{CudaContext, CudaEvent, CudaStream};

use super::shapes::size_class;
use super::At;
use crate::error::{BachError, Result};
use crate::units::bytes as human;

/// The streams of a GPU. Copies in, kernels, copies out: each its own queue, so the three
/// overlap; events order them where a value crosses from one to another.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Lane {
    H2d = 0,
    Compute = 1,
    D2h = 2,
}

impl Lane {
    pub const ALL: [Lane; 3] = [Lane::H2d, Lane::Compute, Lane::D2h];
    fn bit(self) -> u8 {
        1 << self as u8
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    // A panic caught while the lock was held leaves consistent bookkeeping: keep going.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn is_oom(e: &DriverError) -> bool {
    e.0 == cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY
}

/// A freed block that queued work may still use.
struct Freed {
    ptr: u64,
    size: usize,
    /// One per stream that touched the block, recorded at free time.
    events: Vec<CudaEvent>,
}

#[derive(Default)]
struct PoolState {
    idle: BTreeMap<usize, Vec<u64>>,
    pending: Vec<Freed>,
    /// Bytes in blocks handed out.
    live: u64,
    /// Bytes in idle and pending blocks (held from CUDA, not in use).
    cached: u64,
}

impl PoolState {
    /// Pending blocks whose work has finished become idle.
    fn reclaim(&mut self) {
        let mut i = 0;
        while i < self.pending.len() {
            let f = &self.pending[i];
            if f.events.iter().all(|e| e.is_complete()) {
                let f = self.pending.swap_remove(i);
                self.idle.entry(f.size).or_default().push(f.ptr);
            } else {
                i += 1;
            }
        }
    }
    /// The smallest idle block of at least `class` bytes and at most twice that.
    fn take_idle(&mut self, class: usize) -> Option<(u64, usize)> {
        let size = *self.idle.range(class..=class.saturating_mul(2)).find(|(_, v)| !v.is_empty())?.0;
        let ptr = self.idle.get_mut(&size)?.pop()?;
        self.cached -= size as u64;
        self.live += size as u64;
        Some((ptr, size))
    }
}

/// Device memory of one GPU, cached.
pub(super) struct DevicePool {
    ctx: Arc<CudaContext>,
    streams: [Arc<CudaStream>; 3],
    state: Mutex<PoolState>,
}

/// A block of device memory; back to its pool on drop. `touch` before queueing work on it.
pub(super) struct Block {
    pub ptr: u64,
    pub size: usize,
    used: AtomicU8,
    pool: Arc<DevicePool>,
}

impl Block {
    /// Note that work using this block is queued on `lane` (the pool waits for it at free).
    pub fn touch(&self, lane: Lane) {
        self.used.fetch_or(lane.bit(), Ordering::AcqRel);
    }
}

impl Drop for Block {
    fn drop(&mut self) {
        if self.size > 0 {
            self.pool.release(self.ptr, self.size, self.used.load(Ordering::Acquire));
        }
    }
}

impl DevicePool {
    pub fn new(ctx: Arc<CudaContext>, streams: [Arc<CudaStream>; 3]) -> Arc<Self> {
        Arc::new(DevicePool { ctx, streams, state: Mutex::new(PoolState::default()) })
    }

    /// Bytes handed out, and bytes cached.
    pub fn usage(&self) -> (u64, u64) {
        let st = lock(&self.state);
        (st.live, st.cached)
    }

    /// A block of at least `bytes`; `DeviceOutOfMemory` when even an emptied pool cannot
    /// have one (the executor then retries in smaller pieces).
    pub fn alloc(self: &Arc<Self>, bytes: usize, at: At<'_>) -> Result<Block> {
        let block = |ptr, size| Block { ptr, size, used: AtomicU8::new(0), pool: self.clone() };
        if bytes == 0 {
            return Ok(block(0, 0));
        }
        let class = size_class(bytes);
        if let Some((ptr, size)) = self.reuse(class) {
            return Ok(block(ptr, size));
        }
        match self.malloc(class) {
            Ok(ptr) => return Ok(block(ptr, class)),
            Err(e) if !is_oom(&e) => return Err(at.cuda("cuMemAlloc", e)),
            Err(_) => {}
        }
        // Out of memory: wait for blocks still in flight, then give the idle ones back.
        self.wait_pending();
        if let Some((ptr, size)) = self.reuse(class) {
            return Ok(block(ptr, size));
        }
        self.trim();
        match self.malloc(class) {
            Ok(ptr) => Ok(block(ptr, class)),
            Err(e) if is_oom(&e) => {
                let (live, cached) = self.usage();
                let free = result::mem_get_info().map(|(f, _)| human(f)).unwrap_or_else(|_| "?".into());
                Err(BachError::DeviceOutOfMemory {
                    device: at.device.to_string(),
                    detail: format!("`{}` needs {} with {} in use by Bach ({} cached) and {free} free", at.op, human(class), human(live as usize), human(cached as usize)),
                })
            }
            Err(e) => Err(at.cuda("cuMemAlloc", e)),
        }
    }

    fn reuse(&self, class: usize) -> Option<(u64, usize)> {
        let mut st = lock(&self.state);
        if let Some(b) = st.take_idle(class) {
            return Some(b);
        }
        st.reclaim();
        st.take_idle(class)
    }

    fn malloc(&self, size: usize) -> std::result::Result<u64, DriverError> {
        self.ctx.bind_to_thread()?;
        // SAFETY: the context is current; the memory is only read after it is written.
        let ptr = unsafe { result::malloc_sync(size) }?;
        lock(&self.state).live += size as u64;
        Ok(ptr)
    }

    fn release(&self, ptr: u64, size: usize, used: u8) {
        let recorded = crate::device::catch_panics(|| -> std::result::Result<Vec<CudaEvent>, DriverError> {
            self.ctx.bind_to_thread()?;
            Lane::ALL.iter().filter(|l| used & l.bit() != 0).map(|&l| self.streams[l as usize].record_event(None)).collect()
        });
        // Without events, the block is safe to reuse only once the whole GPU has finished;
        // if even that fails the context is broken, and the block is left alone.
        let events = match recorded {
            Ok(Ok(events)) => Some(events),
            _ => crate::device::catch_panics(|| self.ctx.synchronize()).ok().and_then(|r| r.ok()).map(|()| Vec::new()),
        };
        let mut st = lock(&self.state);
        st.live = st.live.saturating_sub(size as u64);
        if let Some(events) = events {
            st.cached += size as u64;
            st.pending.push(Freed { ptr, size, events });
        }
    }

    /// Block until every freed block's work is done, then make them idle.
    fn wait_pending(&self) {
        let mut st = lock(&self.state);
        for f in &st.pending {
            for e in &f.events {
                let _ = e.synchronize();
            }
        }
        st.reclaim();
    }

    /// After the GPU was synchronized: the freed blocks become idle.
    pub fn after_sync(&self) {
        lock(&self.state).reclaim();
    }

    /// Give every idle block back to CUDA.
    pub fn trim(&self) {
        let idle = {
            let mut st = lock(&self.state);
            let idle = std::mem::take(&mut st.idle);
            let n: usize = idle.iter().map(|(size, v)| size * v.len()).sum();
            st.cached -= n as u64;
            idle
        };
        if self.ctx.bind_to_thread().is_ok() {
            for ptr in idle.into_values().flatten() {
                // SAFETY: allocated by cuMemAlloc, idle (no queued work uses it), freed once.
                let _ = unsafe { result::free_sync(ptr) };
            }
        }
    }
}

/// Page-locked host memory.
struct HostBlock {
    ptr: *mut u8,
    size: usize,
}

// SAFETY: a plain allocation owned by one `Staging` (or the pool) at a time.
unsafe impl Send for HostBlock {}

#[derive(Default)]
struct StagingState {
    idle: BTreeMap<usize, Vec<HostBlock>>,
    pending: VecDeque<(HostBlock, Arc<CudaEvent>)>,
    idle_bytes: usize,
}

/// Idle pinned memory kept beyond this is given back.
const STAGING_IDLE_CAP: usize = 1 << 30;
/// Bytes of one size class in flight (at least 4 buffers) before a request waits for the
/// oldest: deep enough that the copy engine never waits for the host's next chunk.
const STAGING_IN_FLIGHT_BYTES: usize = 256 << 20;

/// Pinned host buffers for the copies of one GPU.
pub(super) struct StagingPool {
    ctx: Arc<CudaContext>,
    state: Mutex<StagingState>,
}

/// A pinned buffer; back to its pool on drop (pending until its `until` event completes).
pub(super) struct Staging {
    block: Option<HostBlock>,
    until: Option<Arc<CudaEvent>>,
    pool: Arc<StagingPool>,
}

impl Staging {
    pub fn bytes_mut(&mut self, len: usize) -> &mut [u8] {
        let b = self.block.as_ref().expect("a staging buffer has its block until dropped");
        assert!(len <= b.size);
        // SAFETY: `len` bytes of an allocation this guard owns (zeroed when allocated).
        unsafe { std::slice::from_raw_parts_mut(b.ptr, len) }
    }
    pub fn bytes(&self, len: usize) -> &[u8] {
        let b = self.block.as_ref().expect("a staging buffer has its block until dropped");
        assert!(len <= b.size);
        // SAFETY: as above.
        unsafe { std::slice::from_raw_parts(b.ptr, len) }
    }
    /// Queued work reads or writes this buffer until `event` completes.
    pub fn busy_until(&mut self, event: Arc<CudaEvent>) {
        self.until = Some(event);
    }
    /// The queued work is known to be done (its event was waited for).
    pub fn done(&mut self) {
        self.until = None;
    }
}

impl Drop for Staging {
    fn drop(&mut self) {
        if let Some(block) = self.block.take() {
            self.pool.give_back(block, self.until.take());
        }
    }
}

impl StagingPool {
    pub fn new(ctx: Arc<CudaContext>) -> Arc<Self> {
        Arc::new(StagingPool { ctx, state: Mutex::new(StagingState::default()) })
    }

    fn give_back(&self, block: HostBlock, until: Option<Arc<CudaEvent>>) {
        let mut st = lock(&self.state);
        match until {
            Some(e) => st.pending.push_back((block, e)),
            None => {
                st.idle_bytes += block.size;
                st.idle.entry(block.size).or_default().push(block);
            }
        }
        let excess = self.reclaim(&mut st);
        drop(st);
        self.free(excess);
    }

    /// Finished pending buffers become idle; returns idle buffers beyond the cap, to free.
    ///
    /// Only the oldest pending buffers are looked at, up to the first whose work is not done:
    /// work queued on one stream finishes in order, so the rest are (nearly always) still
    /// busy too. This keeps each `take` and `give_back` (one per chunk of a copy, under the
    /// pool's lock) to a few event queries instead of one per buffer in flight.
    fn reclaim(&self, st: &mut StagingState) -> Vec<HostBlock> {
        while let Some((_, e)) = st.pending.front() {
            if !e.is_complete() {
                break;
            }
            let (b, _) = st.pending.pop_front().expect("a front element");
            st.idle_bytes += b.size;
            st.idle.entry(b.size).or_default().push(b);
        }
        let mut excess = Vec::new();
        while st.idle_bytes > STAGING_IDLE_CAP {
            let Some(mut largest) = st.idle.last_entry() else { break };
            match largest.get_mut().pop() {
                Some(b) => {
                    st.idle_bytes -= b.size;
                    excess.push(b);
                }
                None => {
                    largest.remove();
                }
            }
        }
        excess
    }

    fn free(&self, blocks: Vec<HostBlock>) {
        if blocks.is_empty() || self.ctx.bind_to_thread().is_err() {
            return;
        }
        for b in blocks {
            // SAFETY: allocated by cuMemHostAlloc, no queued work uses it, freed once.
            let _ = unsafe { result::free_host(b.ptr as *mut _) };
        }
    }

    /// A pinned buffer of at least `bytes` that no queued work uses.
    pub fn take(self: &Arc<Self>, bytes: usize, at: At<'_>) -> Result<Staging> {
        let class = size_class(bytes.max(1));
        let guard = |block| Staging { block: Some(block), until: None, pool: self.clone() };
        let waited = {
            let mut st = lock(&self.state);
            let excess = self.reclaim(&mut st);
            self.free(excess);
            if let Some(b) = Self::take_idle(&mut st, class) {
                return Ok(guard(b));
            }
            // Too many of this size in flight: wait for the oldest.
            let same: Vec<usize> = st.pending.iter().enumerate().filter(|(_, (b, _))| b.size == class).map(|(i, _)| i).collect();
            if same.len() >= (STAGING_IN_FLIGHT_BYTES / class).max(4) {
                st.pending.remove(same[0])
            } else {
                None
            }
        };
        if let Some((b, e)) = waited {
            e.synchronize().map_err(|err| at.cuda("waiting for a staging buffer", err))?;
            return Ok(guard(b));
        }
        match self.alloc(class) {
            Ok(b) => Ok(guard(b)),
            Err(first) => {
                // Wait for everything in flight, give the idle buffers back, try once more.
                let pending: Vec<_> = lock(&self.state).pending.iter().map(|(_, e)| e.clone()).collect();
                for e in pending {
                    let _ = e.synchronize();
                }
                let idle = {
                    let mut st = lock(&self.state);
                    let excess = self.reclaim(&mut st);
                    self.free(excess);
                    if let Some(b) = Self::take_idle(&mut st, class) {
                        return Ok(guard(b));
                    }
                    st.idle_bytes = 0;
                    std::mem::take(&mut st.idle).into_values().flatten().collect()
                };
                self.free(idle);
                self.alloc(class).map(guard).map_err(|_| at.cuda(&format!("cuMemHostAlloc of {} of pinned host memory", human(class)), first))
            }
        }
    }

    fn take_idle(st: &mut StagingState, class: usize) -> Option<HostBlock> {
        let size = *st.idle.range(class..=class.saturating_mul(2)).find(|(_, v)| !v.is_empty())?.0;
        let b = st.idle.get_mut(&size)?.pop()?;
        st.idle_bytes -= b.size;
        Some(b)
    }

    fn alloc(&self, size: usize) -> std::result::Result<HostBlock, DriverError> {
        self.ctx.bind_to_thread()?;
        // Flags 0: plain pinned memory (write-combined memory is slow for the host to read).
        // SAFETY: the context is current; the memory is zeroed before anyone reads it.
        let ptr = unsafe { result::malloc_host(size, 0) }? as *mut u8;
        unsafe { std::ptr::write_bytes(ptr, 0, size) };
        Ok(HostBlock { ptr, size })
    }

    /// After the GPU was synchronized: every buffer is idle.
    pub fn after_sync(&self) {
        let mut st = lock(&self.state);
        let excess = self.reclaim(&mut st);
        drop(st);
        self.free(excess);
    }
}

/// Host arrays below this are copied through staging buffers, never page-locked in place.
const REGISTER_MIN_BYTES: usize = 64 << 20;
/// A registration of at least this many bytes judges the host: slower than
/// [`REGISTER_SLOW_BYTES_PER_S`], and no more host arrays are page-locked in this process.
const REGISTER_JUDGE_BYTES: usize = 256 << 20;
/// Page-locking this slowly ties up pinned memory and a core for longer than it can save.
/// Measured on the H200 host: 27 GB/s for one 1 GiB buffer alone, 0.6-8 GB/s for a
/// workload's input columns; reported at 1-2 GB/s on some x86 hosts.
const REGISTER_SLOW_BYTES_PER_S: f64 = 0.5e9;

/// One host array page-locked in place, or heap memory where results land.
struct Registration {
    start: usize,
    len: usize,
    /// The array itself (a shared handle): its memory cannot be freed while registered.
    /// `None`: a landing ([`HostRegistry::land`]), heap memory that stays registered after
    /// the value in it is dropped, for the results of later evaluations.
    owner: Option<crate::value::Value>,
    /// The last copy queued from it.
    last_use: Option<Arc<CudaEvent>>,
}

#[derive(Default)]
struct RegistryState {
    entries: Vec<Registration>,
    /// Ranges asked for or handed to the worker, not registered yet.
    queued: Vec<(usize, usize)>,
    /// Arrays asked for during the evaluation under way, for the worker once it ends.
    wanted: Vec<RegisterJob>,
    /// Bytes registered or queued.
    bytes: usize,
    /// Page-locking was measured too slow here (or failed): not tried again.
    off: Option<String>,
    /// Bytes of landings registered or queued.
    landing_bytes: usize,
    /// Whether the last results written in place (of at least the page-locking threshold)
    /// were copied straight into a landing; `None` since a landing was last registered.
    rows_direct: Option<bool>,
    /// Jobs handed to the worker and not done.
    in_worker: usize,
}

impl RegistryState {
    /// Whether `len` bytes at `start` cannot be queued: page-locking is off, or they overlap
    /// an array registered or queued.
    fn refuses(&self, start: usize, len: usize) -> bool {
        let overlaps = |s: usize, l: usize| start < s + l && s < start + len;
        self.off.is_some() || self.entries.iter().any(|r| overlaps(r.start, r.len)) || self.queued.iter().any(|&(s, l)| overlaps(s, l))
    }

    /// Queue `len` bytes at `start` for the worker, once the evaluation ends (`owner`: the
    /// array; `None`: a landing).
    fn enqueue(&mut self, start: usize, len: usize, owner: Option<crate::value::Value>) {
        self.queued.push((start, len));
        self.bytes += len;
        if owner.is_none() {
            self.landing_bytes += len;
        }
        self.wanted.push((start, len, owner));
    }

    /// The job for `len` bytes at `start` (a landing if `landing`) left the queue without
    /// being registered, or to be registered (its bytes then counted again).
    fn dequeue(&mut self, start: usize, len: usize, landing: bool) {
        self.queued.retain(|&(s, _)| s != start);
        self.bytes -= len;
        self.in_worker -= 1;
        if landing {
            self.landing_bytes -= len;
        }
    }

    /// Unregister the entries `gone` picks (each after its last copy).
    fn unregister_where(&mut self, ctx: &CudaContext, gone: impl Fn(&Registration) -> bool) {
        let mut i = 0;
        while i < self.entries.len() {
            if !gone(&self.entries[i]) {
                i += 1;
                continue;
            }
            let r = self.entries.swap_remove(i);
            unregister(ctx, &r);
            self.bytes -= r.len;
            if r.owner.is_none() {
                self.landing_bytes -= r.len;
            }
        }
    }
}

/// A host array for the worker to page-lock (no array: a landing).
type RegisterJob = (usize, usize, Option<crate::value::Value>);

/// Host arrays that a session keeps and an accelerator reads, page-locked in place
/// (`cuMemHostRegister`) so that copies go straight from them at the copy engine's rate
/// instead of through staging buffers (a host memcpy, then the DMA: on the H200 host 17-21
/// GB/s against 55; straight from page-locked inputs, Black-Scholes 2^27's copies in took
/// 0.10 s instead of 0.30 s).
///
/// Page-locking takes time (on the H200 host 0.7 s for Black-Scholes 2^27's five 1 GiB
/// columns, 2.4x that evaluation) and stalls copies that run beside it, so it runs on a
/// worker thread once the evaluation has ended ([`HostRegistry::idle`]): the evaluation that
/// first meets an array copies it through staging buffers as before, and the ones after it,
/// once the worker is done, copy straight from it. Each registration holds a handle to its array,
/// so the memory stays valid while registered; it is unregistered once that handle is the
/// only one left (the session dropped the value) and its last copy has finished, checked
/// when an array is kept and when an evaluation ends. A host
/// where page-locking is very slow ([`REGISTER_SLOW_BYTES_PER_S`]) stops using it. At most
/// half the host's memory is registered at once. `BACH_CUDA_REGISTER=0` turns it off
/// ([`crate::knobs::Knobs::cuda_register`], read each time a registry is made).
///
/// Results land the same way ([`HostRegistry::land`]): a stage's results written in place
/// come from the session's heap, which keeps freed memory mapped, and the results of the
/// next evaluation reuse it; that memory, page-locked once, stays so after the values in it
/// are dropped (a *landing*), and later results copied into it go straight from the GPU
/// instead of through staging buffers and a host copy (on the H200 host Black-Scholes 2^26
/// with inputs made on the GPU: 1 GiB of results at the host copy's 25-30 GB/s, against 55
/// for the copy engine). Landings are given up before the heap is trimmed
/// ([`crate::fresh::before_trim`]) and take at most a quarter of the host's memory.
pub(super) struct HostRegistry {
    ctx: Arc<CudaContext>,
    cap: usize,
    state: Arc<Mutex<RegistryState>>,
    worker: Mutex<Option<std::sync::mpsc::Sender<RegisterJob>>>,
    /// Signalled by the worker after each job ([`HostRegistry::settle`]).
    done: Arc<std::sync::Condvar>,
    /// Whether the trim hook that gives up the landings is installed.
    trim_hook: std::sync::Once,
}

/// The addresses of a host array's elements, when it is a numeric array in standard layout.
pub(super) fn host_range(value: &crate::value::Value) -> Option<std::ops::Range<usize>> {
    use crate::value::Value;
    let (start, len) = match value {
        Value::F64(a) if a.is_standard_layout() => (a.as_ptr() as usize, a.len() * 8),
        Value::F32(a) if a.is_standard_layout() => (a.as_ptr() as usize, a.len() * 4),
        Value::I64(a) if a.is_standard_layout() => (a.as_ptr() as usize, a.len() * 8),
        _ => return None,
    };
    Some(start..start + len)
}

/// [`REGISTER_MIN_BYTES`], or `BACH_CUDA_REGISTER_MIN` for measuring ([`crate::knobs::Knobs::cuda_register_min`], read once).
fn register_min_bytes() -> usize {
    crate::knobs::knobs().cuda_register_min.unwrap_or(REGISTER_MIN_BYTES)
}

/// Whether `value` is held by nobody but the one handle looked at.
fn unique(value: &crate::value::Value) -> bool {
    use crate::value::Value;
    match value {
        Value::F64(a) => a.is_unique(),
        Value::F32(a) => a.is_unique(),
        Value::I64(a) => a.is_unique(),
        _ => false,
    }
}

fn unregister(ctx: &CudaContext, r: &Registration) {
    if let Some(e) = &r.last_use {
        let _ = e.synchronize();
    }
    if ctx.bind_to_thread().is_ok() {
        // SAFETY: registered by the worker; no copy from it is in flight (waited for above).
        let _ = unsafe { cudarc::driver::sys::cuMemHostUnregister(r.start as *mut std::ffi::c_void) };
    }
}

impl HostRegistry {
    pub fn new(ctx: Arc<CudaContext>) -> Arc<Self> {
        let off = (!crate::knobs::Knobs::from_env().cuda_register).then(|| "BACH_CUDA_REGISTER=0".to_string());
        let cap = crate::fresh::host_memory_bytes().map_or(8 << 30, |b| (b / 2) as usize);
        Arc::new(HostRegistry {
            ctx,
            cap,
            state: Arc::new(Mutex::new(RegistryState { off, ..Default::default() })),
            worker: Mutex::new(None),
            done: Arc::new(std::sync::Condvar::new()),
            trim_hook: std::sync::Once::new(),
        })
    }

    /// Wait (at most `bound`) for the worker to finish the page-locking handed to it: an
    /// evaluation about to be planned. Its copies would be stalled beside the page-locking
    /// anyway (Black-Scholes 2^26 on the H100 host: 81 ms instead of 22 while 1 GiB was being
    /// page-locked), and once it is done they go straight from and to page-locked memory,
    /// which the plan then prices. Returns how long it waited.
    pub fn settle(&self, bound: std::time::Duration) -> std::time::Duration {
        let t0 = std::time::Instant::now();
        let mut st = lock(&self.state);
        while st.in_worker > 0 {
            let Some(left) = bound.checked_sub(t0.elapsed()) else { break };
            st = self.done.wait_timeout(st, left).unwrap_or_else(|e| e.into_inner()).0;
        }
        t0.elapsed()
    }

    /// Whether a result of `bytes` written in place is expected to land in page-locked
    /// memory: a landing holds it, and the last such results landed in one (or none has been
    /// written since a landing was registered).
    pub fn results_pinned(&self, bytes: usize) -> bool {
        let st = lock(&self.state);
        st.off.is_none() && st.rows_direct != Some(false) && st.entries.iter().any(|r| r.owner.is_none() && r.len >= bytes)
    }

    /// Rows of a result of `whole` bytes written in place were copied straight into a
    /// landing (`true`) or through staging buffers. Only results that could have a landing
    /// of their own count.
    pub fn rows_landed(&self, whole: usize, direct: bool) {
        if whole >= register_min_bytes() {
            lock(&self.state).rows_direct = Some(direct);
        }
    }

    /// `value` holds a stage's results that this GPU copied to the host: have its memory
    /// page-locked in the background as a landing for later results, when it is large, lies
    /// in the session's heap and stays mapped there ([`crate::fresh::stays_in_heap`]),
    /// overlaps nothing registered or queued, and the landings' quarter of the host's memory
    /// (and the registry's cap) has room.
    pub fn land(&self, value: &crate::value::Value) {
        if !landing_on() {
            return;
        }
        let Some(range) = host_range(value) else { return };
        let (start, len) = (range.start, range.len());
        if len < register_min_bytes() || !crate::fresh::stays_in_heap(start as *const u8, len) {
            return;
        }
        let mut st = lock(&self.state);
        self.sweep(&mut st);
        if st.refuses(start, len) || st.bytes + len > self.cap || st.landing_bytes + len > self.cap / 2 {
            return;
        }
        let state = Arc::downgrade(&self.state);
        let ctx = self.ctx.clone();
        self.trim_hook.call_once(|| crate::fresh::before_trim(move || give_up_landings(&ctx, &state)));
        st.enqueue(start, len, None);
    }

    /// The host array `value` (whole) will be read by this GPU: have it page-locked in the
    /// background unless it is small, a temporary (nobody else holds it), already registered
    /// or queued, overlaps one, or would pass the cap.
    pub fn keep(&self, value: &crate::value::Value) {
        let Some(range) = host_range(value) else { return };
        let (start, len) = (range.start, range.len());
        if len < register_min_bytes() || unique(value) {
            return;
        }
        let mut st = lock(&self.state);
        if st.refuses(start, len) {
            return;
        }
        self.sweep(&mut st);
        if st.bytes + len > self.cap {
            return;
        }
        st.enqueue(start, len, Some(value.clone()));
    }

    /// The evaluation ended: hand the arrays asked for to the worker, which page-locks them
    /// while nothing else runs on this GPU (page-locking alongside an evaluation's copies
    /// stalled them: Haversine 2^24's first evaluation took 0.31 s instead of 0.02 s).
    /// Arrays the session has dropped since are unregistered first.
    pub fn idle(&self) {
        let wanted = {
            let mut st = lock(&self.state);
            self.sweep(&mut st);
            std::mem::take(&mut st.wanted)
        };
        if wanted.is_empty() {
            return;
        }
        let mut worker = lock(&self.worker);
        let tx = worker.get_or_insert_with(|| {
            let (tx, rx) = std::sync::mpsc::channel::<RegisterJob>();
            let (ctx, state, done) = (self.ctx.clone(), self.state.clone(), self.done.clone());
            std::thread::Builder::new().name("bach-cuda-register".into()).spawn(move || register_jobs(ctx, state, done, rx)).expect("spawning the page-locking thread");
            tx
        });
        for job in wanted {
            let (start, len, landing) = (job.0, job.1, job.2.is_none());
            lock(&self.state).in_worker += 1;
            if tx.send(job).is_err() {
                lock(&self.state).dequeue(start, len, landing);
            }
        }
    }

    /// Whether `bytes` lie in a registered array.
    pub fn covers(&self, bytes: &[u8]) -> bool {
        self.covers_range(bytes.as_ptr() as usize..bytes.as_ptr() as usize + bytes.len())
    }

    /// Whether the addresses `range` lie in a registered array.
    pub fn covers_range(&self, range: std::ops::Range<usize>) -> bool {
        lock(&self.state).entries.iter().any(|r| r.start <= range.start && range.end <= r.start + r.len)
    }

    /// After a copy from or to `bytes` (in a registered array) was queued: its completion
    /// event.
    pub fn used(&self, bytes: &[u8], event: Arc<CudaEvent>) {
        self.used_at(bytes.as_ptr() as usize, event)
    }

    /// [`HostRegistry::used`] for the bytes starting at address `s`.
    pub fn used_at(&self, s: usize, event: Arc<CudaEvent>) {
        if let Some(r) = lock(&self.state).entries.iter_mut().find(|r| r.start <= s && s < r.start + r.len) {
            r.last_use = Some(event);
        }
    }

    /// Unregister the arrays nobody else holds any more (after their last copies).
    fn sweep(&self, st: &mut RegistryState) {
        st.unregister_where(&self.ctx, |r| r.owner.as_ref().is_some_and(unique));
    }

    /// Bytes registered or queued (of them, landings' bytes), and why page-locking is off
    /// (if it is).
    pub fn status(&self) -> (usize, usize, Option<String>) {
        let st = lock(&self.state);
        (st.bytes, st.landing_bytes, st.off.clone())
    }
}

/// The worker: page-lock each array handed over, timed; too slow, and the registry is off.
fn register_jobs(ctx: Arc<CudaContext>, state: Arc<Mutex<RegistryState>>, done: Arc<std::sync::Condvar>, jobs: std::sync::mpsc::Receiver<RegisterJob>) {
    for (start, len, owner) in jobs {
        let landing = owner.is_none();
        let dequeue = |st: &mut RegistryState| {
            st.dequeue(start, len, landing);
            done.notify_all();
        };
        if owner.as_ref().is_some_and(unique) || lock(&state).off.is_some() || ctx.bind_to_thread().is_err() {
            dequeue(&mut lock(&state));
            continue;
        }
        // A landing is heap memory that may hold no value by now: no trim may unmap it while
        // it is page-locked and recorded (the trim gives landings up first).
        let _no_trim = landing.then(|| crate::fresh::TRIM.read().unwrap_or_else(|e| e.into_inner()));
        let t0 = std::time::Instant::now();
        // SAFETY: `len` bytes of mapped host memory: kept alive by `owner` until unregistered,
        // or (a landing) heap memory that stays mapped until a trim, which waits for this and
        // unregisters it first.
        let status = unsafe { cudarc::driver::sys::cuMemHostRegister_v2(start as *mut std::ffi::c_void, len, 0) };
        let seconds = t0.elapsed().as_secs_f64();
        let mut st = lock(&state);
        dequeue(&mut st);
        if status != cudaError_enum::CUDA_SUCCESS {
            // Registered by someone else: staging copies, as before. Otherwise: off.
            if status != cudaError_enum::CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED {
                st.off = Some(format!("cuMemHostRegister failed: {status:?}"));
            }
            continue;
        }
        st.bytes += len;
        if landing {
            st.landing_bytes += len;
            st.rows_direct = None;
        }
        st.entries.push(Registration { start, len, owner, last_use: None });
        let rate = len as f64 / seconds.max(1e-9);
        if len >= REGISTER_JUDGE_BYTES && rate < REGISTER_SLOW_BYTES_PER_S {
            st.off = Some(format!("page-locking {} in place took {:.0} ms ({:.2} GB/s)", human(len), seconds * 1e3, rate / 1e9));
        }
    }
}

/// The trim hook: unregister every landing (after its last copy), before the heap's free
/// memory is given back to the OS.
fn give_up_landings(ctx: &CudaContext, state: &std::sync::Weak<Mutex<RegistryState>>) {
    let Some(state) = state.upgrade() else { return };
    lock(&state).unregister_where(ctx, |r| r.owner.is_none());
}

/// Whether results' memory is kept page-locked as landings: `BACH_CUDA_LAND=0` turns it off
/// ([`crate::knobs::Knobs::cuda_land`], read once).
fn landing_on() -> bool {
    crate::knobs::knobs().cuda_land
}

impl Drop for HostRegistry {
    fn drop(&mut self) {
        drop(lock(&self.worker).take());
        let st = std::mem::take(&mut *lock(&self.state));
        for r in &st.entries {
            unregister(&self.ctx, r);
        }
    }
}

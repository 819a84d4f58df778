//! Fresh host memory: the memory a result lands in when an accelerator copies it back.
//!
//! A large allocation is fresh pages of the OS, and the first write to each 4 KiB page
//! faults: the kernel finds, zeroes and maps it. Landing a GPU's result there costs a fault
//! per page on top of the copy (on the H200 host a parallel copy into fresh memory ran at 21
//! GB/s against 54 GB/s into memory already touched; on this project's 2-core build machine
//! 1.0-2.0 GB/s against 9-10 GB/s). Two ways around it, both here:
//!
//! - [`Prefault`]: while the GPU works, background threads fault the pages in ahead of the
//!   writers (`madvise(MADV_POPULATE_WRITE)`, Linux 5.14+), so the copies land in touched
//!   memory. The advice never changes the memory's contents, so it needs no ordering with
//!   the writers: a page a writer reaches first is simply faulted by the writer.
//! - [`advise_huge_pages`]: opt-in transparent huge pages, a fault per 2 MiB.
//!
//! And for every evaluation, on the CPU too: [`keep_freed_memory`], so that the arrays an
//! evaluation allocates (a piece's results, op by op) land in memory freed by the ones before
//! rather than in fresh pages.
//!
//! Three libc calls, declared here rather than adding the `libc` crate to every notebook's
//! build.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

#[cfg(target_os = "linux")]
extern "C" {
    fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
}

#[cfg(all(target_os = "linux", target_env = "gnu"))]
extern "C" {
    fn mallopt(param: i32, value: i32) -> i32;
    fn malloc_trim(pad: usize) -> i32;
}

/// Whether the session keeps what it frees (all of this module's allocator policy):
/// [`Knobs::keep_freed`](crate::knobs::Knobs::keep_freed) (`BACH_KEEP_FREED=0` turns it off, read once per process).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn keep_freed() -> bool {
    crate::knobs::knobs().keep_freed
}

/// glibc's `mallopt` parameter: the size of free top past which a heap gives it back as freed.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
const M_TRIM_THRESHOLD: i32 = -1;

/// Asks glibc's allocator, once per process, to keep the memory a program frees for its
/// next allocations: blocks up to 32 MiB come from its heaps (`M_MMAP_THRESHOLD`, the
/// largest it takes; larger ones stay fresh `mmap`s, except a stage's results: see
/// [`from_heap`]), and a heap's free top is not given back to the OS as it is freed
/// (`M_TRIM_THRESHOLD` off) but after an evaluation, when the free memory the heaps hold
/// passes a quarter of the host's ([`trim_when_holding_too_much`]). Called when a session is
/// made; `BACH_KEEP_FREED=0` leaves glibc's defaults.
///
/// Why: by default glibc serves blocks from 128 KiB up with fresh `mmap`s, raising that
/// threshold only as such blocks are freed, and returns a heap's free top to the OS past
/// twice it. Until it has seen enough frees, every op's result is fresh pages, and the
/// first write to each faults (zeroed and mapped by the kernel): an element-wise op over
/// 8 MiB took 4.5-5.3 ms instead of 0.4-1.0 ms. On the 2-core machine, stages of
/// Black-Scholes and Haversine at 2^16..2^24 ran up to 3.4x slower in a process's first
/// evaluations than later (a cell runs once: most evaluations are first ones), and the
/// first evaluation of Haversine 2^24 took 299 ms against 160 ms with this policy. The
/// cost: a session keeps what it freed, up to what it used at its peak (the arrays up to 32
/// MiB and a stage's results; freeing a user's larger arrays still returns them), and at
/// most a quarter of the host's memory once an evaluation has ended.
pub fn keep_freed_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            if !keep_freed() {
                return;
            }
            const M_MMAP_THRESHOLD: i32 = -3;
            // SAFETY: plain settings of the process's allocator, valid at any time; a value
            // it refuses (returns 0) leaves its default.
            unsafe {
                mallopt(M_MMAP_THRESHOLD, 32 << 20);
                // -1: the heap's free top is never given back as it is freed (a stage's
                // results of 1 GiB and more are freed at the top of the heap, past any
                // threshold glibc takes); `trim_when_holding_too_much` gives it back.
                mallopt(M_TRIM_THRESHOLD, -1);
            }
        });
    }
}

/// Allocates with `alloc` from glibc's heap rather than a fresh `mmap`, whatever its size
/// (`M_MMAP_MAX` 0 while it runs, then glibc's default again), so that when the block is
/// freed it stays in the heap, faulted in, for the next one: a stage's whole results
/// ([`crate::value::RowsOut`]) are allocated this way, and the results of the next
/// evaluation land in the memory of the last one's once the session has dropped them. Blocks
/// of 32 MiB and more are otherwise always fresh `mmap`s (glibc takes no larger
/// `M_MMAP_THRESHOLD`), and their first writes fault every page in: 1 GiB of Black-Scholes
/// results took 50-70 ms of the kernel's time to zero and map on the H100 host, longer than
/// the GPU's copies into it (20 ms). Other allocations keep glibc's policy (a user's arrays
/// go back to the OS when freed). `BACH_KEEP_FREED=0` turns this off with
/// [`keep_freed_memory`]. The cost: freed results stay in the session's heap for the next
/// ones, up to a quarter of the host's memory ([`trim_when_holding_too_much`]). Only the
/// thread that is the process's first gets this for blocks over 64 MiB (glibc serves other
/// threads from arenas that `mmap` such blocks whatever its settings); evaluations run on it
/// in the notebook's runtime process and in `bach-bench`.
pub fn from_heap<R>(alloc: impl FnOnce() -> R) -> R {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        if keep_freed() {
            const M_MMAP_MAX: i32 = -4;
            /// glibc's `DEFAULT_MMAP_MAX`.
            const DEFAULT_MMAP_MAX: i32 = 65536;
            static TOGGLE: std::sync::Mutex<()> = std::sync::Mutex::new(());
            let _one_at_a_time = TOGGLE.lock().unwrap_or_else(|e| e.into_inner());
            // SAFETY: plain settings of the process's allocator, valid at any time. Another
            // thread allocating meanwhile is served from the heap too, which is harmless.
            unsafe { mallopt(M_MMAP_MAX, 0) };
            let r = alloc();
            unsafe { mallopt(M_MMAP_MAX, DEFAULT_MMAP_MAX) };
            return r;
        }
    }
    alloc()
}

/// After an evaluation: when the free memory glibc's heaps hold for reuse
/// ([`keep_freed_memory`], [`from_heap`]) passes a quarter of the host's memory, give it
/// back to the OS (`malloc_trim`). Returns the bytes that were free, when it trimmed. Where
/// glibc has no `mallinfo2` (before 2.33), it trims whenever the heaps hold any.
/// Before giving memory back, the hooks of [`before_trim`] run (with [`TRIM`] held for
/// writing), so that nothing keeps page-locked memory the trim unmaps.
pub fn trim_when_holding_too_much() -> Option<usize> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        if !keep_freed() {
            return None;
        }
        let limit = host_memory_bytes().map_or(4 << 30, |b| (b / 4) as usize);
        let free = heap_free_bytes();
        if free.is_none_or(|f| f > limit) {
            let _alone = TRIM.write().unwrap_or_else(|e| e.into_inner());
            for hook in TRIM_HOOKS.lock().unwrap_or_else(|e| e.into_inner()).iter() {
                hook();
            }
            // SAFETY: gives free heap memory back to the OS; valid at any time.
            unsafe { malloc_trim(0) };
            return Some(free.unwrap_or(0));
        }
    }
    None
}

/// Gives back the free top of each rayon worker's own malloc arena. [`keep_freed_memory`]
/// turns glibc's trimming of a heap's free top off, and `malloc_trim` gives back only the
/// main arena's top: what an evaluation's pieces freed at the top of a worker thread's arena
/// stayed resident for the rest of the process (the kernel's 5,000-cell soak: +26 MB at its
/// first interrupted evaluation, the largest one-time growth of a long session). Each
/// worker frees a block of 256 KiB with the trim threshold at 0, which has glibc trim that
/// arena's top (`heap_trim`), and the threshold goes back to off. For a process that runs
/// many short programs (the notebook's runtime, before each cell); `BACH_KEEP_FREED=0`
/// leaves glibc's defaults, which trim as blocks are freed. Nothing page-locked lives in a
/// worker's arena ([`stays_in_heap`] holds for the main heap only).
pub fn trim_worker_arenas() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        if !keep_freed() {
            return;
        }
        let _alone = TRIM.write().unwrap_or_else(|e| e.into_inner());
        // SAFETY: plain settings of the process's allocator, valid at any time.
        unsafe { mallopt(M_TRIM_THRESHOLD, 0) };
        rayon::broadcast(|_| {
            let block = std::hint::black_box(Vec::<u8>::with_capacity(256 << 10));
            drop(block);
        });
        // SAFETY: as above; back to `keep_freed_memory`'s setting.
        unsafe { mallopt(M_TRIM_THRESHOLD, -1) };
    }
}

/// Held for writing while the heap's free memory is given back to the OS
/// ([`trim_when_holding_too_much`]), for reading by whoever page-locks heap memory that
/// outlives the value in it ([`stays_in_heap`]): page-locked pages that the trim then
/// unmapped (`madvise`) would leave the GPU copying into pages the process no longer sees.
pub static TRIM: std::sync::RwLock<()> = std::sync::RwLock::new(());

type TrimHook = Box<dyn Fn() + Send + Sync>;
static TRIM_HOOKS: std::sync::Mutex<Vec<TrimHook>> = std::sync::Mutex::new(Vec::new());

/// Run `hook` before every trim of the heap ([`trim_when_holding_too_much`]), with [`TRIM`]
/// held for writing: it must let go of page-locked heap memory (and not take [`TRIM`]).
pub fn before_trim(hook: impl Fn() + Send + Sync + 'static) {
    TRIM_HOOKS.lock().unwrap_or_else(|e| e.into_inner()).push(Box::new(hook));
}

/// Whether the `len` bytes of an allocation at `ptr` (as `malloc` returned it) lie in
/// glibc's main heap and stay mapped after they are freed: the session keeps what it frees
/// ([`keep_freed_memory`]: the heap's top is never given back as it is freed, only by
/// [`trim_when_holding_too_much`]), and the block is neither a `mmap` of its own nor in
/// another thread's arena (whose heaps glibc shrinks as they empty). Judged by the size word
/// glibc keeps before every block (its `IS_MMAPPED` and `NON_MAIN_ARENA` bits clear, a size
/// that holds `len`) and by the block ending below the program break (`sbrk(0)`: the main
/// heap's end; `mmap`s, another allocator's included, lie above it). `false` where it cannot
/// tell.
pub fn stays_in_heap(ptr: *const u8, len: usize) -> bool {
    #[cfg(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64"))]
    {
        extern "C" {
            fn sbrk(increment: isize) -> *mut std::ffi::c_void;
        }
        if !keep_freed() || ptr.is_null() || !(ptr as usize).is_multiple_of(16) {
            return false;
        }
        // SAFETY: sbrk(0) only reads the current break.
        let brk = unsafe { sbrk(0) } as usize;
        if brk == usize::MAX || (ptr as usize).checked_add(len).is_none_or(|end| end > brk) {
            return false;
        }
        const IS_MMAPPED: usize = 0x2;
        const NON_MAIN_ARENA: usize = 0x4;
        // SAFETY: below the break, in the main heap: glibc keeps the block's size word in the
        // 8 bytes before the pointer it returned (mapped, readable memory of the heap).
        let size = unsafe { std::ptr::read_volatile((ptr as *const usize).sub(1)) };
        return size & (IS_MMAPPED | NON_MAIN_ARENA) == 0 && (size & !7) >= len;
    }
    #[allow(unreachable_code)]
    {
        let _ = (ptr, len);
        false
    }
}

/// Bytes free in glibc's heaps (`mallinfo2().fordblks`), looked up at run time so that the
/// binary still loads with a glibc older than 2.33.
#[cfg(all(target_os = "linux", target_env = "gnu"))]
fn heap_free_bytes() -> Option<usize> {
    #[repr(C)]
    #[allow(dead_code)]
    struct Mallinfo2 {
        arena: usize,
        ordblks: usize,
        smblks: usize,
        hblks: usize,
        hblkhd: usize,
        usmblks: usize,
        fsmblks: usize,
        uordblks: usize,
        fordblks: usize,
        keepcost: usize,
    }
    extern "C" {
        fn dlsym(handle: *mut std::ffi::c_void, symbol: *const std::ffi::c_char) -> *mut std::ffi::c_void;
    }
    static MALLINFO2: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    // SAFETY: RTLD_DEFAULT (null) looks the symbol up in the process's libraries.
    let f = *MALLINFO2.get_or_init(|| unsafe { dlsym(std::ptr::null_mut(), c"mallinfo2".as_ptr()) } as usize);
    if f == 0 {
        return None;
    }
    // SAFETY: glibc's `struct mallinfo2 mallinfo2(void)`: ten size_t fields, returned by value.
    let mallinfo2: extern "C" fn() -> Mallinfo2 = unsafe { std::mem::transmute(f) };
    Some(mallinfo2().fordblks)
}

/// Whether the whole pages of `[ptr, ptr + len)` are in memory already, judged by up to 64
/// pages spread over it (`mincore`): memory a session's earlier results left in its heap
/// ([`from_heap`]) is, and faulting it in again ([`Prefault`]) only competes with the copies
/// into it (on the H200 host Black-Scholes 2^26's evaluation took 49 ms with its results
/// faulted in ahead, 37 ms without, once they reused the last ones' memory). `false` where
/// it cannot tell (not Linux) or for less than a page.
pub fn resident(ptr: *const u8, len: usize) -> bool {
    #[cfg(target_os = "linux")]
    {
        extern "C" {
            fn mincore(addr: *mut std::ffi::c_void, length: usize, vec: *mut u8) -> i32;
        }
        let start = (ptr as usize).next_multiple_of(PAGE);
        let end = (ptr as usize + len) / PAGE * PAGE;
        if end <= start {
            return false;
        }
        let pages = (end - start) / PAGE;
        let samples = pages.min(64);
        return (0..samples).all(|i| {
            let page = start + (i * pages / samples) * PAGE;
            let mut state = 0u8;
            // SAFETY: one page-aligned page of a mapping the caller holds; one byte out.
            unsafe { mincore(page as *mut std::ffi::c_void, PAGE, &mut state) == 0 && state & 1 == 1 }
        });
    }
    #[allow(unreachable_code)]
    false
}

/// Physical memory of this host, from /proc/meminfo (read once: it is asked after every
/// evaluation).
pub(crate) fn host_memory_bytes() -> Option<u64> {
    static TOTAL: std::sync::OnceLock<Option<u64>> = std::sync::OnceLock::new();
    *TOTAL.get_or_init(|| {
        let text = std::fs::read_to_string("/proc/meminfo").ok()?;
        let kib: u64 = text.lines().find(|l| l.starts_with("MemTotal:"))?.split_whitespace().nth(1)?.parse().ok()?;
        Some(kib * 1024)
    })
}

const PAGE: usize = 4096;
const HUGE: usize = 2 << 20;

/// With `BACH_HUGE_PAGES=1` ([`Knobs::huge_pages`](crate::knobs::Knobs::huge_pages), read once), ask the kernel to back the fresh host memory `[ptr, ptr + len)`
/// with transparent huge pages (`madvise(MADV_HUGEPAGE)` on its 2 MiB-aligned interior; Linux
/// only, 4 MiB or more). Off by default: with the kernel's usual `defrag=madvise`, advised
/// memory is compacted synchronously when free huge pages are short, and on this project's
/// 2-core, 24 GiB build machine a copy into 1 GiB of advised fresh memory took 0.13-1.24 s
/// against 0.32-0.42 s without the advice (on the H200 host it raised copies into fresh
/// memory from 18 to 30 GB/s).
pub fn advise_huge_pages(ptr: *mut u8, len: usize) {
    #[cfg(target_os = "linux")]
    {
        const MADV_HUGEPAGE: i32 = 14;
        if len < 2 * HUGE || !crate::knobs::knobs().huge_pages {
            return;
        }
        let (start, end) = ((ptr as usize).next_multiple_of(HUGE), (ptr as usize + len) / HUGE * HUGE);
        if end > start {
            // SAFETY: advice only, on whole pages inside an allocation the caller owns; an
            // error (no THP support) leaves the memory as it was.
            let _ = unsafe { madvise(start as *mut std::ffi::c_void, end - start, MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, len);
}

/// Ranges under this are left to their writers: faulting them costs less than the threads.
pub const PREFAULT_MIN_BYTES: usize = 8 << 20;
/// Bytes one `madvise` call populates: the unit the threads take in address order, and how
/// often they look at the stop flag.
const PREFAULT_CHUNK: usize = HUGE;

/// Whether this kernel knows `MADV_POPULATE_WRITE` (Linux 5.14+): asked once, of a page of
/// this process's own heap (an error on some other range says nothing about the kernel).
fn supported() -> bool {
    static SUPPORTED: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| {
        let mut probe = vec![0u8; 2 * PAGE];
        let page = (probe.as_mut_ptr() as usize).next_multiple_of(PAGE);
        let ok = populate(page, PAGE).is_ok();
        drop(probe);
        ok
    });
    *SUPPORTED
}

/// Threads a host has for faulting in result memory: half its cores, 1 to 8 (a GPU stage
/// leaves the host's cores idle; the other half fill staging buffers and drain copies).
pub fn prefault_threads() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get() / 2).clamp(1, 8)
}

/// Background threads faulting in the pages of a fresh host range ahead of the writers that
/// will fill it, in address order (pieces land in row order). Stopped and joined when
/// finished or dropped, so it never outlives the memory's owner that holds it.
pub struct Prefault {
    stop: Arc<AtomicBool>,
    populated: Arc<AtomicUsize>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl Prefault {
    /// Start faulting in `[ptr, ptr + len)` on `threads` threads. `None` when the range is
    /// under [`PREFAULT_MIN_BYTES`], the OS cannot (not Linux, or a kernel before 5.14), or
    /// no thread could be started. The caller keeps the memory allocated until this value is
    /// finished or dropped.
    pub fn start(ptr: *mut u8, len: usize, threads: usize) -> Option<Prefault> {
        if !cfg!(target_os = "linux") || len < PREFAULT_MIN_BYTES || !supported() {
            return None;
        }
        // Whole pages only: madvise wants an aligned start; the partial pages at the ends are
        // left to the writers.
        let start = (ptr as usize).next_multiple_of(PAGE);
        let end = (ptr as usize + len) / PAGE * PAGE;
        if end <= start {
            return None;
        }
        let stop = Arc::new(AtomicBool::new(false));
        let populated = Arc::new(AtomicUsize::new(0));
        let next = Arc::new(AtomicUsize::new(0));
        let chunks = (end - start).div_ceil(PREFAULT_CHUNK);
        let mut handles = Vec::new();
        for t in 0..threads.clamp(1, chunks) {
            let (stop, populated, next) = (stop.clone(), populated.clone(), next.clone());
            let work = move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                if i >= chunks || stop.load(Ordering::Relaxed) {
                    return;
                }
                let from = start + i * PREFAULT_CHUNK;
                let n = PREFAULT_CHUNK.min(end - from);
                match populate(from, n) {
                    Ok(()) => {
                        populated.fetch_add(n, Ordering::Relaxed);
                    }
                    Err(()) => {
                        // This range only (see `supported`): the writers fault the rest.
                        stop.store(true, Ordering::Relaxed);
                        return;
                    }
                }
            };
            match std::thread::Builder::new().name(format!("bach-prefault-{t}")).spawn(work) {
                Ok(h) => handles.push(h),
                Err(_) => break,
            }
        }
        (!handles.is_empty()).then_some(Prefault { stop, populated, threads: handles })
    }

    /// Stop (pages not reached yet are left to the writers), wait for the threads, and say
    /// how many bytes were faulted in.
    pub fn finish(mut self) -> usize {
        self.join();
        self.populated.load(Ordering::Relaxed)
    }

    /// Wait until every page is faulted in (or the threads gave up), then say how many bytes
    /// were; for tests and measurements.
    pub fn wait(mut self) -> usize {
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
        self.populated.load(Ordering::Relaxed)
    }

    fn join(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        for h in self.threads.drain(..) {
            let _ = h.join();
        }
    }
}

impl Drop for Prefault {
    fn drop(&mut self) {
        self.join();
    }
}

/// `madvise(MADV_POPULATE_WRITE)` on `[addr, addr + len)`.
fn populate(addr: usize, len: usize) -> Result<(), ()> {
    #[cfg(target_os = "linux")]
    {
        const MADV_POPULATE_WRITE: i32 = 23;
        // SAFETY: advice on whole pages of a mapping the caller keeps allocated; populating
        // never changes the memory's contents (pages already there are left as they are).
        if unsafe { madvise(addr as *mut std::ffi::c_void, len, MADV_POPULATE_WRITE) } == 0 {
            return Ok(());
        }
        Err(())
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = (addr, len);
        Err(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Minor page faults of the calling thread so far (`getrusage(RUSAGE_THREAD)`).
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    fn thread_faults() -> i64 {
        extern "C" {
            fn getrusage(who: i32, usage: *mut [i64; 18]) -> i32;
        }
        const RUSAGE_THREAD: i32 = 1;
        let mut usage = [0i64; 18];
        // SAFETY: `struct rusage` on 64-bit Linux: two timevals then 14 longs, 144 bytes.
        assert_eq!(unsafe { getrusage(RUSAGE_THREAD, &mut usage) }, 0);
        usage[8] // ru_minflt
    }

    /// 4 MiB allocated, written, freed and allocated again (as a piece's results are, op
    /// after op): the second lands in the memory of the first, so writing it faults no page in;
    /// glibc's default policy serves the first from a fresh `mmap`.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn freed_memory_is_written_again_without_faults() {
        keep_freed_memory();
        if !keep_freed() {
            return;
        }
        let n = 4 << 20;
        let mut faults = Vec::new();
        for _ in 0..3 {
            let before = thread_faults();
            let mut v: Vec<u8> = Vec::with_capacity(n);
            v.spare_capacity_mut().iter_mut().step_by(PAGE).for_each(|b| {
                b.write(1);
            });
            std::hint::black_box(&mut v);
            drop(v);
            faults.push(thread_faults() - before);
        }
        // The first may fault the heap's pages in (1024 of them); the ones after must not.
        assert!(faults[1] < 64 && faults[2] < 64, "page faults writing 4 MiB three times: {faults:?}");
    }

    /// What the heaps hold free is seen (glibc 2.33+): a block freed into a heap is counted.
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    #[test]
    fn the_heaps_free_memory_is_counted() {
        keep_freed_memory();
        let Some(before) = heap_free_bytes() else { return };
        let mut v: Vec<u8> = Vec::with_capacity(16 << 20);
        v.spare_capacity_mut().iter_mut().step_by(PAGE).for_each(|b| {
            b.write(1);
        });
        std::hint::black_box(&mut v);
        drop(v);
        let after = heap_free_bytes().expect("counted before");
        assert!(after >= 16 << 20, "16 MiB freed into a heap: {before} bytes free before, {after} after");
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn written_memory_is_resident_and_fresh_memory_is_not() {
        extern "C" {
            fn mmap(addr: *mut std::ffi::c_void, len: usize, prot: i32, flags: i32, fd: i32, off: i64) -> *mut std::ffi::c_void;
            fn munmap(addr: *mut std::ffi::c_void, len: usize) -> i32;
        }
        const PROT_READ_WRITE: i32 = 0x3;
        const MAP_PRIVATE_ANONYMOUS: i32 = 0x02 | 0x20;
        let n = 16 << 20;
        // SAFETY: a new private anonymous mapping, unmapped below.
        let p = unsafe { mmap(std::ptr::null_mut(), n, PROT_READ_WRITE, MAP_PRIVATE_ANONYMOUS, -1, 0) };
        assert!(p as isize != -1, "mmap failed");
        let p = p as *mut u8;
        assert!(!resident(p, n), "a fresh mapping is not in memory");
        // SAFETY: p is valid for n bytes.
        unsafe { std::ptr::write_bytes(p, 7, n / 2) };
        assert!(!resident(p, n), "half written: the other half is not in");
        // SAFETY: as above.
        unsafe { std::ptr::write_bytes(p, 7, n) };
        assert!(resident(p, n), "written all over: in memory");
        assert!(!resident(p, 100), "under a page: cannot tell");
        // SAFETY: mapped above with this length.
        unsafe { munmap(p as *mut std::ffi::c_void, n) };
    }

    #[test]
    fn prefaulting_leaves_what_writers_wrote_and_covers_the_whole_pages() {
        // 24 MiB + 100 bytes at an address that is not page-aligned; writers fill it while
        // the prefault runs, some pages before it gets there.
        let n = (24 << 20) + 100;
        // calloc'd: its pages are fresh until written.
        let mut v = vec![0u8; n + 3];
        let base = v[3..].as_mut_ptr();
        let p = Prefault::start(base, n, 3);
        let dst = &mut v[3..];
        for (i, b) in dst.iter_mut().enumerate().rev() {
            *b = (i % 251) as u8;
        }
        if let Some(p) = p {
            let whole = (base as usize + n) / PAGE * PAGE - (base as usize).next_multiple_of(PAGE);
            assert_eq!(p.wait(), whole, "every whole page was faulted in");
        } else {
            assert!(!cfg!(target_os = "linux") || !supported(), "on Linux 5.14+ a prefault starts");
        }
        assert!(v[3..].iter().enumerate().all(|(i, &b)| b == (i % 251) as u8), "the writers' bytes are intact");
    }

    #[test]
    fn small_ranges_and_stopped_prefaults() {
        let mut small = vec![0u8; PREFAULT_MIN_BYTES - 1];
        assert!(Prefault::start(small.as_mut_ptr(), small.len(), 2).is_none());
        let mut big: Vec<u8> = Vec::with_capacity(256 << 20);
        if let Some(p) = Prefault::start(big.as_mut_ptr(), big.capacity(), 1) {
            // Stopped at once: at most the whole range, and the threads are joined.
            assert!(p.finish() <= 256 << 20);
        }
        big.extend(std::iter::repeat_n(7u8, 1 << 20));
        assert!(big.iter().all(|&b| b == 7));
    }
}

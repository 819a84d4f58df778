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
//! Two libc calls, declared here rather than adding the `libc` crate to every notebook's
//! build.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;

#[cfg(target_os = "linux")]
extern "C" {
    fn madvise(addr: *mut std::ffi::c_void, len: usize, advice: i32) -> i32;
}

const PAGE: usize = 4096;
const HUGE: usize = 2 << 20;

/// With `BACH_HUGE_PAGES=1`, ask the kernel to back the fresh host memory `[ptr, ptr + len)`
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
        static ON: std::sync::LazyLock<bool> = std::sync::LazyLock::new(|| std::env::var("BACH_HUGE_PAGES").as_deref() == Ok("1"));
        if len < 2 * HUGE || !*ON {
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

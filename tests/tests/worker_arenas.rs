//! What rayon's workers freed at the top of their own malloc arenas goes back to the system
//! with `bach_runtime::fresh::trim_worker_arenas` (the notebook's runtime calls it before each
//! cell), which `malloc_trim` alone does not do while `keep_freed_memory` has glibc keep a
//! heap's free top. A test of its own, with no test harness: it reads the process's resident
//! memory, which other tests running beside it would move.

/// Resident memory of the process, in bytes (`/proc/self/statm`).
fn resident() -> i64 {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("/proc/self/statm");
    let pages: i64 = statm.split_whitespace().nth(1).and_then(|p| p.parse().ok()).expect("resident pages");
    pages * 4096
}

/// Each worker allocates `mib` MiB in blocks of 64 KiB (below `keep_freed_memory`'s
/// `mmap` threshold: from its own arena), writes every page, and frees them all.
fn churn_on_workers(mib: usize) {
    rayon::broadcast(|_| {
        let blocks: Vec<Vec<u8>> = (0..mib * 16).map(|i| vec![(i % 251) as u8 + 1; 64 << 10]).collect();
        assert!(blocks.iter().all(|b| b[4096] != 0));
        drop(std::hint::black_box(blocks));
    });
}

fn main() {
    if !cfg!(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")) {
        println!("worker_arenas: glibc on 64-bit Linux only; nothing to check here");
        return;
    }
    if std::env::var("BACH_KEEP_FREED").as_deref() == Ok("0") {
        println!("worker_arenas: BACH_KEEP_FREED=0 leaves glibc's trimming on; nothing to check here");
        return;
    }
    bach_runtime::fresh::keep_freed_memory();
    let workers = rayon::current_num_threads() as i64;
    let mib = 32;
    let churned = (workers * mib as i64) << 20;
    churn_on_workers(1); // the workers and their arenas exist
    extern "C" {
        fn malloc_trim(pad: usize) -> i32;
    }
    // SAFETY: gives free heap memory back to the OS; valid at any time.
    unsafe { malloc_trim(0) };
    bach_runtime::fresh::trim_worker_arenas();
    let base = resident();

    churn_on_workers(mib);
    // SAFETY: as above.
    unsafe { malloc_trim(0) };
    let kept = resident() - base;
    println!("worker_arenas: {workers} workers churned {} MiB; after malloc_trim {} MiB stay resident", churned >> 20, kept >> 20);
    assert!(kept > churned / 2, "the premise: glibc keeps a worker arena's free top through malloc_trim ({} of {} MiB kept)", kept >> 20, churned >> 20);

    bach_runtime::fresh::trim_worker_arenas();
    let left = resident() - base;
    println!("worker_arenas: after trim_worker_arenas {} MiB", left >> 20);
    assert!(left < churned / 8, "trim_worker_arenas gives the workers' free tops back ({} of {} MiB still resident)", left >> 20, churned >> 20);

    // The trim threshold is off again: the next churn's memory is kept for reuse.
    churn_on_workers(mib);
    let again = resident() - base;
    println!("worker_arenas: churned again, {} MiB kept", again >> 20);
    assert!(again > churned / 2, "keep_freed_memory's setting is back after the trim ({} of {} MiB kept)", again >> 20, churned >> 20);
    bach_runtime::fresh::trim_worker_arenas();
}

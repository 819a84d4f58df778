//! The memory a stage's whole results land in is reused by the next evaluation's results once
//! the session has dropped them (`bach_runtime::fresh::from_heap`): writing them again faults
//! no page in. A test of its own, with no test harness, because the allocator behaves so for
//! the thread that evaluates when it is the process's main thread (as in the notebook's
//! runtime process and `bach-bench`): glibc serves other threads from arenas that take blocks
//! over 64 MiB from fresh `mmap`s whatever its settings.

use bach::prelude::*;
use bach_runtime::{with_session, Session};

/// Minor page faults of the whole process so far (the results are written by every thread).
fn process_faults() -> i64 {
    extern "C" {
        fn getrusage(who: i32, usage: *mut [i64; 18]) -> i32;
    }
    const RUSAGE_SELF: i32 = 0;
    let mut usage = [0i64; 18];
    // SAFETY: `struct rusage` on 64-bit Linux: two timevals then 14 longs, 144 bytes.
    assert_eq!(unsafe { getrusage(RUSAGE_SELF, &mut usage) }, 0);
    usage[8] // ru_minflt
}

fn main() {
    if !cfg!(all(target_os = "linux", target_env = "gnu", target_pointer_width = "64")) {
        println!("results_memory: glibc on 64-bit Linux only; nothing to check here");
        return;
    }
    let keep = std::env::var("BACH_KEEP_FREED").as_deref() != Ok("0");
    let s = Session::new();
    // 1 GiB of results (262144 pages): freed at the top of the heap, past any threshold at
    // which glibc gives a heap's free top back on its own.
    let n = 1usize << 27;
    let pages = (n * 8 / 4096) as i64;
    let x = ndarray::ArrayD::from_shape_fn(ndarray::IxDyn(&[n]), |i| (i[0] % 1013) as f64 * 0.25);
    // Each value of x is exact in binary and so is 2 x + 1: the sums agree exactly.
    let want: f64 = x.iter().map(|v| v * 2.0 + 1.0).sum();
    let faults: Vec<i64> = with_session(&s, || {
        let lx = Array::from_array(x.clone());
        (0..4)
            .map(|round| {
                let y = &lx * 2.0 + 1.0;
                let before = process_faults();
                let v = y.eval().unwrap();
                let after = process_faults() - before;
                let got: f64 = v.iter().sum();
                assert!((got - want).abs() <= want.abs() * 1e-9, "round {round}: {got} against {want}");
                let plan = s.trace().last().and_then(|e| e.plans.last().cloned()).expect("a plan");
                assert!(plan.stages.iter().any(|st| st.pieces > 1), "the result is written by pieces:\n{plan}");
                drop(v);
                drop(y);
                after
            })
            .collect()
    });
    println!("results_memory: page faults per evaluation of 2^27 results ({pages} pages): {faults:?}");
    if keep {
        // The first evaluation faults its results in; the ones after write into that memory.
        for (round, &f) in faults.iter().enumerate().skip(1) {
            assert!(f < pages / 8, "round {round}: {f} page faults writing {pages} pages of results again: {faults:?}");
        }
    } else {
        assert!(faults[1..].iter().all(|&f| f >= pages / 2), "BACH_KEEP_FREED=0: results are fresh memory each time: {faults:?}");
    }
    println!("results_memory: ok");
}

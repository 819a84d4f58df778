//! A cell's life in the cells' process: the call the kernel puts first in every cell
//! ([`cell`]: the panic hook, the interrupt handler and the progress hook on first use, the
//! cell number on the session), and how an interrupt stops it ([`tick`], [`sleep`]).

use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once};

use bach_runtime::session;
use bach_wire::line::{field, Line};

use super::magics;
use super::protocol::{json_object, progress_line};
use super::INTERRUPTED;

/// A cell's life's state, one per process.
struct Life {
    /// Set by the interrupt signal, cleared when a cell starts; [`tick`] stops the cell on it.
    interrupt: AtomicBool,
    /// The process set up (hooks, the signal handler) by the first cell.
    set_up: Once,
}

static LIFE: Life = Life { interrupt: AtomicBool::new(false), set_up: Once::new() };

thread_local! {
    /// Whether this thread runs the cells (evcxr's runtime thread): only it stops on an
    /// interrupt, so a thread a cell started (a background loop) keeps running.
    static CELL_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

// signal(2), declared here rather than through the `libc` crate: notebooks compile against
// this crate, and evcxr's rust-analyzer analyses every crate in their dependency graph at
// start-up; `libc` alone took 0.8 s of it (measured). Linux numbers SIGUSR1 10, macOS 30.
const SIGUSR1: c_int = if cfg!(target_os = "macos") { 30 } else { 10 };
unsafe extern "C" {
    fn signal(signum: c_int, handler: extern "C" fn(c_int)) -> usize;
}

extern "C" fn on_interrupt(_signal: c_int) {
    // Only atomic operations here: a signal handler may run between any two instructions.
    LIFE.interrupt.store(true, Ordering::SeqCst);
    if let Some(s) = session::global_if_made() {
        s.interrupt();
    }
}

/// Called by the kernel before each cell: records the cell number on the session's new
/// nodes, and sets up the process on first use.
pub fn cell(n: u64) {
    LIFE.set_up.call_once(|| {
        bach_runtime::progress::set_progress_hook(Some(Arc::new(progress_line)));
        // SAFETY: installing a handler that only performs atomic stores.
        unsafe {
            signal(SIGUSR1, on_interrupt);
        }
        std::panic::set_hook(Box::new(|info| {
            if bach_runtime::device::panic_is_caught() {
                return; // a device turns it into a BachError for the op
            }
            let message = bach_runtime::device::panic_text(info.payload());
            let location = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
            println!("{}", Line::Panic(&json_object(&[(field::MESSAGE, message), (field::LOCATION, &location)])));
        }));
    });
    session::set_global_cell(n);
    if n > 0 {
        // What the last cell's evaluations freed in the worker threads' arenas goes back to
        // the system (the kernel's runtime trims the main arena after each cell).
        bach_runtime::fresh::trim_worker_arenas();
        magics::refresh_live_vars();
    }
    LIFE.interrupt.store(false, Ordering::SeqCst);
    CELL_THREAD.with(|c| c.set(true));
    // Not for the prelude (cell 0): evcxr waits for a cell's output to be read, and the kernel
    // reads the prelude's output from no one.
    if n > 0 {
        println!("{}", Line::Run(&n.to_string()));
    }
}

/// Stops the cell if the user interrupted it: the kernel puts a call at the top of each loop
/// body and closure of a cell (kernel/src/interruptible.rs). One relaxed load while nothing is
/// interrupted. The panic it raises ends the cell like any panic in it: variables of earlier
/// cells and the Bach session are kept, and the kernel shows it as an interrupt at this line.
#[inline]
#[track_caller]
pub fn tick() {
    if LIFE.interrupt.load(Ordering::Relaxed) {
        interrupted();
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn interrupted() {
    if CELL_THREAD.with(|c| c.get()) && LIFE.interrupt.swap(false, Ordering::SeqCst) {
        panic!("{INTERRUPTED}");
    }
}

/// `std::thread::sleep` that an interrupt stops: the kernel calls this for the cell's
/// `std::thread::sleep` and `thread::sleep` (std's sleeps on through signals).
#[track_caller]
pub fn sleep(duration: std::time::Duration) {
    let end = std::time::Instant::now() + duration;
    loop {
        tick();
        let now = std::time::Instant::now();
        if now >= end {
            return;
        }
        std::thread::sleep((end - now).min(std::time::Duration::from_millis(20)));
    }
}

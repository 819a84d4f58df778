//! Read-ahead staging for host arrays streamed in small pieces.
//!
//! A stage paged in small pieces (Black-Scholes 2^22 under an 8 MiB memory cap: 107 pieces
//! of 307 KiB per input) copied each piece through its own staging buffer: a single-threaded
//! fill of a few hundred KiB, then the DMA, five times a piece, on the one thread that queues
//! the GPU's work. Instead, the first piece of an array that misses fills a window of
//! [`super::device`]'s copy-in chunk (16 MiB, or to the array's end) with all of the host's
//! cores at once, and that piece and the ones after it go to the GPU straight from the
//! window, one DMA each, until a piece falls outside it. The window holds a handle to its
//! array (the bytes it was filled from stay valid and unchanged: values in the graph are
//! immutable) and is dropped when the GPU is synchronized, its staging buffer going back to
//! the pool once the last DMA from it has finished.

use std::ops::Range;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use cudarc::driver::CudaEvent;

use super::memory::{host_range, Staging};
use crate::value::Value;

/// Where the bytes of one piece are copied from.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Source {
    /// The current window, at this offset.
    Window(usize),
    /// A new window over these addresses (the piece first), filled before the copy.
    NewWindow(Range<usize>),
}

/// Where `piece` (addresses) of `array` is copied from, given the current `window`, for
/// windows of `size` bytes; `None` when read-ahead does not apply: the piece is not inside
/// the array, is the whole array, or is at least half a window (copied through staging as
/// it is, with all cores).
pub(super) fn source(array: &Range<usize>, piece: &Range<usize>, window: Option<&Range<usize>>, size: usize) -> Option<Source> {
    let inside = array.start <= piece.start && piece.end <= array.end && piece.start < piece.end;
    if !inside || piece.len() >= array.len() || piece.len() * 2 > size {
        return None;
    }
    if let Some(w) = window.filter(|w| w.start <= piece.start && piece.end <= w.end) {
        return Some(Source::Window(piece.start - w.start));
    }
    Some(Source::NewWindow(piece.start..(piece.start + size).min(array.end)))
}

/// A host array being streamed in, and its current window.
struct Streamed {
    range: Range<usize>,
    /// Keeps the array's memory alive while a window may still be filled from it.
    array: Value,
    window: Option<(Range<usize>, Staging)>,
}

/// The arrays of the evaluation under way that stream in pieces, with their windows.
#[derive(Default)]
pub(super) struct ReadAhead {
    arrays: Mutex<Vec<Streamed>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The staged bytes a piece is copied from: call `queued` with the DMA's completion event
/// once it is queued.
pub(super) struct Staged<'a> {
    guard: MutexGuard<'a, Vec<Streamed>>,
    at: usize,
    offset: usize,
    len: usize,
}

impl Staged<'_> {
    pub fn bytes(&self) -> &[u8] {
        let (_, staging) = self.guard[self.at].window.as_ref().expect("a window was made");
        &staging.bytes(self.offset + self.len)[self.offset..]
    }
    /// The copy from the window is queued: the window's buffer is busy until `event`.
    pub fn queued(mut self, event: Arc<CudaEvent>) {
        let at = self.at;
        if let Some((_, staging)) = self.guard[at].window.as_mut() {
            staging.busy_until(event);
        }
    }
}

impl ReadAhead {
    /// `array` is about to be copied in (whole or in pieces) this evaluation.
    pub fn keep(&self, array: &Value) {
        let Some(range) = host_range(array) else { return };
        let mut arrays = lock(&self.arrays);
        if !arrays.iter().any(|s| s.range == range) {
            arrays.push(Streamed { range, array: array.clone(), window: None });
        }
    }

    /// The staged bytes to copy `piece` from, when it is a small piece of a kept array:
    /// from its window, or from a new one that `fill` fills (`fill(window_bytes, buffer)`:
    /// `take(len)` gives a staging buffer). `None`: copy it as usual.
    pub fn stage<E>(&self, piece: &[u8], size: usize, take: impl FnOnce(usize) -> Result<Staging, E>, fill: impl FnOnce(&[u8], &mut Staging)) -> Result<Option<Staged<'_>>, E> {
        let p = piece.as_ptr() as usize..piece.as_ptr() as usize + piece.len();
        let find = |arrays: &[Streamed]| arrays.iter().position(|s| s.range.start <= p.start && p.end <= s.range.end);
        let (w, array) = {
            let guard = lock(&self.arrays);
            let Some(at) = find(&guard) else { return Ok(None) };
            let s = &guard[at];
            match source(&s.range, &p, s.window.as_ref().map(|w| &w.0), size) {
                None => return Ok(None),
                Some(Source::Window(offset)) => return Ok(Some(Staged { guard, at, offset, len: piece.len() })),
                Some(Source::NewWindow(w)) => (w, s.array.clone()),
            }
        };
        // A new window, taken and filled outside the lock (the fill runs on the host's cores).
        let mut staging = take(w.len())?;
        // SAFETY: `w` lies inside `array` (`source` keeps it within the array's range), alive
        // through this handle and not written while in the graph.
        let src = unsafe { std::slice::from_raw_parts(w.start as *const u8, w.len()) };
        fill(src, &mut staging);
        drop(array);
        let mut guard = lock(&self.arrays);
        let Some(at) = find(&guard) else { return Ok(None) };
        // The old window goes back to the pool, pending its last copy.
        guard[at].window = Some((w, staging));
        Ok(Some(Staged { guard, at, offset: 0, len: piece.len() }))
    }

    /// A stage ended: its windows go back to the pool (each pending until its last copy).
    pub fn drop_windows(&self) {
        for s in lock(&self.arrays).iter_mut() {
            s.window = None;
        }
    }

    /// The evaluation ended: forget its arrays.
    pub fn clear(&self) {
        lock(&self.arrays).clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_of_an_array_come_from_windows_filled_ahead() {
        let array = 1000..1000 + 32 * 300;
        let size = 1000;
        let piece = |k: usize| array.start + k * 300..array.start + (k + 1) * 300;
        // The first piece makes a window of `size` bytes; the next two fit in it at their
        // offsets; the fourth does not (it would end at 1200) and starts a new window.
        assert_eq!(source(&array, &piece(0), None, size), Some(Source::NewWindow(1000..2000)));
        let w = 1000..2000;
        assert_eq!(source(&array, &piece(1), Some(&w), size), Some(Source::Window(300)));
        assert_eq!(source(&array, &piece(2), Some(&w), size), Some(Source::Window(600)));
        assert_eq!(source(&array, &piece(3), Some(&w), size), Some(Source::NewWindow(1900..2900)));
        // A window stops at the array's end; the last piece may be short.
        let last = array.end - 100..array.end;
        assert_eq!(source(&array, &last, None, size), Some(Source::NewWindow(last.clone())));
    }

    #[test]
    fn whole_arrays_big_pieces_and_strangers_are_copied_as_usual() {
        let array = 0..10_000;
        assert_eq!(source(&array, &(0..10_000), None, 4096), None, "the whole array");
        assert_eq!(source(&array, &(0..2049), None, 4096), None, "over half a window");
        assert_eq!(source(&array, &(9_000..10_001), None, 4096), None, "past the array's end");
        assert_eq!(source(&array, &(5..5), None, 4096), None, "empty");
        assert_eq!(source(&array, &(0..2048), None, 4096), Some(Source::NewWindow(0..4096)));
    }
}

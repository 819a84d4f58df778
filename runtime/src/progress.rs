//! Progress of a running evaluation: pieces done of the plan's total, told to a hook (the
//! notebook's shows a line in the cell, updated in place). The executor calls
//! [`Tracker::piece_done`] after each piece, from whichever thread ran it, and
//! [`Tracker::finish`] at the end; the hook decides what to show and how often.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, RwLock};
use std::time::{Duration, Instant};

/// Where an evaluation stands.
#[derive(Clone, Debug, PartialEq)]
pub struct Progress {
    /// The evaluation's number in the session (as in the trace).
    pub eval: u64,
    /// Pieces run so far, of `total` (the plan's; retries in smaller pieces add to both).
    pub done: usize,
    pub total: usize,
    /// Since the evaluation started.
    pub elapsed: Duration,
    /// The evaluation ended (well or not).
    pub finished: bool,
}

impl Progress {
    /// The time left at the rate so far, once a piece has run.
    pub fn remaining(&self) -> Option<Duration> {
        (self.done > 0 && self.done < self.total).then(|| self.elapsed.mul_f64((self.total - self.done) as f64 / self.done as f64))
    }
}

pub type ProgressHook = Arc<dyn Fn(&Progress) + Send + Sync>;

static HOOK: RwLock<Option<ProgressHook>> = RwLock::new(None);

/// Set (or clear) the hook every evaluation of this process reports to.
pub fn set_progress_hook(hook: Option<ProgressHook>) {
    *HOOK.write().unwrap_or_else(|p| p.into_inner()) = hook;
}

/// One evaluation's counter.
pub(crate) struct Tracker {
    eval: u64,
    start: Instant,
    done: AtomicUsize,
    total: AtomicUsize,
    hook: Option<ProgressHook>,
}

impl Tracker {
    pub(crate) fn new(eval: u64, total: usize) -> Tracker {
        let hook = HOOK.read().unwrap_or_else(|p| p.into_inner()).clone();
        Tracker { eval, start: Instant::now(), done: AtomicUsize::new(0), total: AtomicUsize::new(total), hook }
    }

    fn tell(&self, finished: bool) {
        if let Some(hook) = &self.hook {
            let done = self.done.load(Ordering::SeqCst);
            let total = self.total.load(Ordering::SeqCst).max(done);
            hook(&Progress { eval: self.eval, done, total, elapsed: self.start.elapsed(), finished });
        }
    }

    pub(crate) fn piece_done(&self) {
        self.done.fetch_add(1, Ordering::SeqCst);
        self.tell(false);
    }

    /// A stage retried in `more` extra pieces (smaller ones after running out of memory).
    pub(crate) fn add_pieces(&self, more: usize) {
        self.total.fetch_add(more, Ordering::SeqCst);
    }

    pub(crate) fn finish(&self) {
        self.tell(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remaining_time_at_the_rate_so_far() {
        let p = Progress { eval: 1, done: 25, total: 100, elapsed: Duration::from_secs(2), finished: false };
        assert_eq!(p.remaining(), Some(Duration::from_secs(6)));
        assert_eq!(Progress { done: 0, ..p.clone() }.remaining(), None);
        assert_eq!(Progress { done: 100, ..p }.remaining(), None);
    }
}

//! Devices behind one trait. The executor calls only [`Device`]; the CPU device is here, and
//! an accelerator plugs in beside it (the CUDA device: only its module calls cudarc).
//!
//! Seam for an accelerator: implement [`Device`] (run an annotation's accelerator kernel on
//! device-resident pieces, `copy_in`/`copy_out` for transfers), give it a [`DeviceProfile`]
//! with `kind != Cpu` and its memory, and add it in [`crate::devices::Devices::detect`]. The planner already
//! places ops with an accelerator version on it (greedy), inserts transfers, places lazy
//! allocations, and pages stages that do not fit its memory.

use std::panic::{catch_unwind, AssertUnwindSafe};

use crate::annotation::{Annotation, OpCtx};
use crate::error::{BachError, Result};
use crate::value::{HostRows, Value, ValueRef};

pub use crate::profile::{DeviceId, DeviceKind, DeviceProfile, CPU};

/// Which node and piece a device call is for, so a device that times its work itself (CUDA
/// events) can say afterwards when each thing really ran.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Tag {
    pub node: u64,
    pub piece: u32,
}

/// When a device really ran something, as the device measured it.
#[derive(Clone, Copy, Debug)]
pub struct DeviceSpan {
    pub tag: Tag,
    pub kind: crate::trace::EventKind,
    pub start: std::time::Instant,
    pub end: std::time::Instant,
}

/// A copy to the host that may still be under way; [`PendingCopy::finish`] waits for it.
pub struct PendingCopy(Box<dyn FnOnce() -> Result<Value> + Send>);

impl PendingCopy {
    pub fn ready(value: Value) -> Self {
        PendingCopy(Box::new(move || Ok(value)))
    }
    pub fn later(f: impl FnOnce() -> Result<Value> + Send + 'static) -> Self {
        PendingCopy(Box::new(f))
    }
    pub fn finish(self) -> Result<Value> {
        (self.0)()
    }
}

/// A copy into host rows that may still be under way; [`PendingWrite::finish`] waits for it.
/// Dropped unfinished (a piece given up on after an error), it waits too: the copy writes into
/// a result's rows, which must not be freed under it.
pub struct PendingWrite(Option<Box<dyn FnOnce() -> Result<()> + Send>>);

impl Drop for PendingWrite {
    fn drop(&mut self) {
        if let Some(wait) = self.0.take() {
            let _ = wait();
        }
    }
}

impl PendingWrite {
    pub fn done() -> Self {
        PendingWrite(None)
    }
    pub fn later(f: impl FnOnce() -> Result<()> + Send + 'static) -> Self {
        PendingWrite(Some(Box::new(f)))
    }
    pub fn finish(mut self) -> Result<()> {
        self.0.take().map_or(Ok(()), |wait| wait())
    }
}

/// Memory of a device as its allocator sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemoryUse {
    pub used: u64,
    pub capacity: u64,
}

/// What a device must do for the executor. The CPU works on host values; an accelerator on
/// [`Value::Device`] values it made itself. An accelerator may queue work and return before it
/// is done (copies and kernels in order per value); `synchronize` waits for everything.
pub trait Device: Send + Sync {
    fn profile(&self) -> &DeviceProfile;
    /// Run `op` on one piece (or the whole) of its arguments, which live on this device.
    /// An allocation (no arguments) fills `ctx.rows` of a value of meta `ctx.meta`.
    fn run(&self, op: &Annotation, ctx: &OpCtx<'_>, args: &[ValueRef<'_>]) -> Result<Value>;
    /// A host value this device is about to copy in (whole or in pieces), which the session
    /// may keep for later evaluations: the device may prepare it for fast copies (the CUDA
    /// device page-locks large arrays in place). The default does nothing.
    fn keep_host(&self, _value: &Value) {}
    /// A host value that this device could have read in the evaluation just planned (an
    /// argument of an op with a version here), wherever the plan put that op: the device may
    /// prepare it as [`Device::keep_host`] does, once the evaluation has ended, so that the
    /// next plan prices its copies at the fast rate ([`Device::host_memory`]). Without this a
    /// plan that leaves an array on the CPU because its copies are slow would never learn
    /// that they need not be. The default does nothing.
    fn may_read_later(&self, _value: &Value) {}
    /// `value` is a stage's result that this device copied into host memory, written in
    /// place ([`crate::value::RowsOut`]): the device may prepare that memory for the results
    /// of later evaluations, which land in it once the session has dropped this one (the CUDA
    /// device page-locks it, once the evaluation has ended, as a landing that outlives the
    /// value). The default does nothing.
    fn results_landed(&self, _value: &Value) {}
    /// How this device's copies read the host memory of `value`: page-locked (the copy
    /// engine reads it straight, at the pinned rate) or ordinary memory (through staging).
    /// The default: ordinary.
    fn host_memory(&self, _value: &Value) -> crate::cost::MemoryKind {
        crate::cost::MemoryKind::Pageable
    }
    /// What host memory a stage's result of `bytes`, written in place, is expected to land
    /// in when this device copies it out: page-locked when the device keeps earlier results'
    /// memory so ([`Device::results_landed`]) and the last results landed there. The default:
    /// ordinary.
    fn results_memory(&self, _bytes: usize) -> crate::cost::MemoryKind {
        crate::cost::MemoryKind::Pageable
    }
    /// An evaluation is about to be planned: work the device does between evaluations
    /// (the CUDA device page-locking host memory) should finish first, within a bound, so
    /// that the plan sees its outcome and the evaluation's copies do not compete with it.
    /// The default does nothing.
    fn before_planning(&self) {}
    /// An evaluation ended (successfully or not): work saved for idle time may start (the
    /// CUDA device page-locks the arrays `keep_host` was given). The default does nothing.
    fn evaluation_done(&self) {}
    /// A line on the device's state for reports (the CUDA device: host memory page-locked
    /// in place), if any.
    fn state_note(&self) -> Option<String> {
        None
    }
    /// Whether the host results of this device's stages should have their pages faulted in
    /// ahead of its copies back, on threads of their own ([`crate::fresh::Prefault`]): an
    /// accelerator whose work leaves the host's cores idle. The default: no (the CPU's own
    /// writers touch their pages in parallel, and the emulated accelerator's copies are the
    /// CPU's).
    fn prefaults_results(&self) -> bool {
        false
    }
    /// The CUDA ordinal of the GPU this device is (or is a logical device on), for
    /// `:bach cell cuda:K`; `None` for devices that are not CUDA GPUs.
    fn cuda_ordinal(&self) -> Option<usize> {
        None
    }
    /// Copy a host value (or piece) into this device's memory.
    fn copy_in(&self, value: ValueRef<'_>, tag: Tag) -> Result<Value>;
    /// Copy a value held by another accelerator straight into this one's memory, where the
    /// two can (the emulated accelerators: one copy between their memories); `None` where
    /// they cannot, and the executor stages the copy through host memory (the default; CUDA
    /// peer copies are not made yet).
    fn copy_from_peer(&self, _value: ValueRef<'_>, _tag: Tag) -> Option<Result<Value>> {
        None
    }
    /// Copy a value (or piece) of this device to the host.
    fn copy_out(&self, value: ValueRef<'_>, tag: Tag) -> Result<PendingCopy>;
    /// Copy a value (or piece) of this device into `dest`, rows of a host array being written
    /// in place (the result of a stage). The default copies out, then writes the rows.
    fn copy_out_into(&self, value: ValueRef<'_>, dest: HostRows, tag: Tag) -> Result<PendingWrite> {
        let pending = self.copy_out(value, tag)?;
        Ok(PendingWrite::later(move || dest.write(pending.finish()?.view())))
    }
    /// Concatenate row pieces living on this device into one value there.
    fn concat_rows(&self, pieces: &[Value]) -> Result<Value> {
        crate::value::concat_rows(pieces)
    }
    /// Wait for all queued work; return what the device timed itself since the last call
    /// (empty for devices that run synchronously: the executor's own clock is right then).
    fn synchronize(&self) -> Result<Vec<DeviceSpan>> {
        Ok(Vec::new())
    }
    /// Whether pieces may be handed to this device from several threads at once (the CPU and
    /// the emulated accelerator); otherwise one thread queues them in order.
    fn parallel_pieces(&self) -> bool {
        true
    }
    /// Memory in use and capacity, for devices with their own memory.
    fn memory(&self) -> Option<MemoryUse> {
        None
    }
}

/// The CPU: runs annotations' CPU kernels; a panicking kernel (a user closure, say) becomes
/// an error for that op, never a crash of the session.
pub struct CpuDevice {
    profile: DeviceProfile,
}

impl CpuDevice {
    pub fn new() -> Self {
        CpuDevice { profile: DeviceProfile::cpu() }
    }
}

impl Default for CpuDevice {
    fn default() -> Self {
        Self::new()
    }
}

thread_local! {
    static CATCHING: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Whether a panic on this thread now will be caught by a device and become a `BachError`
/// (a notebook's panic hook uses this to report only the panics that end a cell).
pub fn panic_is_caught() -> bool {
    CATCHING.with(|c| c.get())
}

impl Device for CpuDevice {
    fn profile(&self) -> &DeviceProfile {
        &self.profile
    }
    fn run(&self, op: &Annotation, ctx: &OpCtx<'_>, args: &[ValueRef<'_>]) -> Result<Value> {
        run_cpu_kernel(op, ctx, args, "cpu")
    }
    fn copy_in(&self, value: ValueRef<'_>, _tag: Tag) -> Result<Value> {
        Ok(value.to_value())
    }
    fn copy_out(&self, value: ValueRef<'_>, _tag: Tag) -> Result<PendingCopy> {
        Ok(PendingCopy::ready(value.to_value()))
    }
}

/// The message of a panic payload.
pub fn panic_text(panic: &(dyn std::any::Any + Send)) -> &str {
    panic.downcast_ref::<String>().map(String::as_str).or_else(|| panic.downcast_ref::<&str>().copied()).unwrap_or("panic with a non-text payload")
}

/// Run `f`, catching a panic as a device does: while it runs, [`panic_is_caught`] is true, so
/// a notebook's panic hook does not report a panic that becomes a `BachError`.
pub fn catch_panics<R>(f: impl FnOnce() -> R) -> std::thread::Result<R> {
    let outer = CATCHING.with(|c| c.replace(true));
    let result = catch_unwind(AssertUnwindSafe(f));
    CATCHING.with(|c| c.set(outer));
    result
}

/// Run a CPU kernel, turning a panic into an error for that op on `device`.
pub(crate) fn run_cpu_kernel(op: &Annotation, ctx: &OpCtx<'_>, args: &[ValueRef<'_>], device: &str) -> Result<Value> {
    match catch_panics(|| op.run_cpu(ctx, args)) {
        Ok(r) => r,
        Err(panic) => Err(BachError::Kernel { op: op.name().to_string(), device: device.into(), detail: format!("panicked: {}", panic_text(&*panic)) }),
    }
}

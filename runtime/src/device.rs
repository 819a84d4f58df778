//! Devices behind one trait. The executor calls only [`Device`]; the CPU device is here, and
//! an accelerator plugs in beside it (the CUDA device: only its module calls cudarc).
//!
//! Seam for an accelerator: implement [`Device`] (run an annotation's accelerator kernel on
//! device-resident pieces, `copy_in`/`copy_out` for transfers), give it a [`DeviceProfile`]
//! with `kind != Cpu` and its memory, and add it in [`Devices::detect`]. The planner already
//! places ops with an accelerator version on it (greedy), inserts transfers, places lazy
//! allocations, and pages stages that do not fit its memory.

use std::fmt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use crate::annotation::{Annotation, OpCtx};
use crate::error::{BachError, Result};
use crate::value::{HostRows, Value, ValueRef};

/// Index of a device in the session's device list; the CPU is always 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeviceId(pub u8);

pub const CPU: DeviceId = DeviceId(0);

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceKind {
    Cpu,
    Cuda,
    /// A second memory space in host memory that runs CPU kernels: never a GPU, it exists
    /// so that transfers, placement and paging run on machines without one.
    Emulated,
}

/// What the planner knows about a device: never its data, only its capacities.
#[derive(Clone, Debug, PartialEq)]
pub struct DeviceProfile {
    pub id: DeviceId,
    pub kind: DeviceKind,
    pub name: String,
    /// Memory the planner may fill; `None` for host memory (not paged).
    pub memory_bytes: Option<u64>,
    /// Parallel workers the device runs pieces on.
    pub threads: usize,
    /// Host-to-device and device-to-host bandwidth, bytes per second (infinite for the CPU).
    pub h2d_bytes_per_s: f64,
    pub d2h_bytes_per_s: f64,
    /// Elementwise throughput, elements per second, for default estimates.
    pub elems_per_s: f64,
}

impl DeviceProfile {
    /// This machine's CPU.
    pub fn cpu() -> Self {
        let threads = rayon::current_num_threads();
        DeviceProfile {
            id: CPU,
            kind: DeviceKind::Cpu,
            name: format!("cpu ({threads} threads)"),
            memory_bytes: None,
            threads,
            h2d_bytes_per_s: f64::INFINITY,
            d2h_bytes_per_s: f64::INFINITY,
            elems_per_s: 5e8 * threads as f64,
        }
    }
    /// A GPU the planner can plan for without one being present ("what would happen on an
    /// 80 GB H100"): nominal figures, never used to execute.
    pub fn hypothetical_gpu(name: &str, memory_bytes: u64) -> Self {
        DeviceProfile {
            id: DeviceId(1),
            kind: DeviceKind::Cuda,
            name: format!("{name} (hypothetical)"),
            memory_bytes: Some(memory_bytes),
            threads: 1,
            h2d_bytes_per_s: 25e9,
            d2h_bytes_per_s: 25e9,
            elems_per_s: 2e11,
        }
    }
}

impl fmt::Display for DeviceProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}]", self.name, self.id.0)?;
        if let Some(m) = self.memory_bytes {
            write!(f, ", {}", crate::plan::bytes(m as usize))?;
        }
        Ok(())
    }
}

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
pub struct PendingWrite(Box<dyn FnOnce() -> Result<()> + Send>);

impl PendingWrite {
    pub fn done() -> Self {
        PendingWrite(Box::new(|| Ok(())))
    }
    pub fn later(f: impl FnOnce() -> Result<()> + Send + 'static) -> Self {
        PendingWrite(Box::new(f))
    }
    pub fn finish(self) -> Result<()> {
        (self.0)()
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
    /// Copy a host value (or piece) into this device's memory.
    fn copy_in(&self, value: ValueRef<'_>, tag: Tag) -> Result<Value>;
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
pub(crate) fn panic_text(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| panic.downcast_ref::<&str>().copied())
        .unwrap_or("panic with a non-text payload")
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

/// Memory of the emulated accelerator when none is given.
pub const DEFAULT_EMULATED_MEMORY: u64 = 4 << 30;

/// Which devices a session (or a benchmark) asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// A GPU when there is one, else the CPU.
    Auto,
    Cpu,
    /// A CUDA GPU, or an error saying why there is none.
    Cuda,
    /// The emulated accelerator (host memory, CPU kernels), with this much memory.
    Emulated(Option<u64>),
}

impl std::str::FromStr for DeviceChoice {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let t = s.trim();
        match t {
            "auto" | "" => Ok(DeviceChoice::Auto),
            "cpu" => Ok(DeviceChoice::Cpu),
            "cuda" | "gpu" => Ok(DeviceChoice::Cuda),
            "emulated" => Ok(DeviceChoice::Emulated(None)),
            _ => match t.strip_prefix("emulated:") {
                Some(size) => crate::plan::parse_bytes(size).map(|b| DeviceChoice::Emulated(Some(b))).map_err(|e| e.to_string()),
                None => Err(format!("unknown device `{t}` (auto, cpu, cuda, emulated, emulated:SIZE)")),
            },
        }
    }
}

/// The devices of a session, and why there is no accelerator when there is none.
pub struct Devices {
    devices: Vec<Arc<dyn Device>>,
    notes: Vec<String>,
}

impl Devices {
    /// Find this machine's devices, as `BACH_DEVICE` says (`auto`, the default: a GPU if
    /// there is one; `cpu`; `cuda`; `emulated` or `emulated:SIZE`). No accelerator is a normal
    /// case: the runtime runs on the CPU and says why. A choice that cannot be had falls back
    /// to the CPU with the reason in the notes (a session must always start).
    pub fn detect() -> Self {
        let choice = std::env::var("BACH_DEVICE").unwrap_or_else(|_| "auto".into());
        match choice.parse::<DeviceChoice>().and_then(Devices::select) {
            Ok(d) => d,
            Err(why) => Devices { devices: vec![Arc::new(CpuDevice::new())], notes: vec![format!("no GPU: running on CPU ({why})")] },
        }
    }
    /// The devices for `choice`; an error says why they cannot be had (no GPU, say).
    pub fn select(choice: DeviceChoice) -> std::result::Result<Self, String> {
        let cpu: Arc<dyn Device> = Arc::new(CpuDevice::new());
        match choice {
            DeviceChoice::Cpu => Ok(Devices { devices: vec![cpu], notes: vec!["running on CPU (asked for the CPU only)".into()] }),
            DeviceChoice::Emulated(memory) => {
                let memory = memory.unwrap_or(DEFAULT_EMULATED_MEMORY);
                Ok(Devices {
                    devices: vec![cpu, Arc::new(crate::emulated::EmulatedDevice::new(DeviceId(1), memory))],
                    notes: vec!["the accelerator is emulated in host memory with CPU kernels: it is not a GPU".into()],
                })
            }
            DeviceChoice::Cuda | DeviceChoice::Auto => match crate::cuda::detect(DeviceId(1)) {
                Ok(found) => Ok(Devices { devices: vec![cpu, found.device], notes: found.notes }),
                Err(why) if choice == DeviceChoice::Auto => Ok(Devices { devices: vec![cpu], notes: vec![format!("no GPU: running on CPU ({why})")] }),
                Err(why) => Err(why),
            },
        }
    }
    /// A device list of one's own: the CPU first, each device's id its position.
    pub fn new(devices: Vec<Arc<dyn Device>>, notes: Vec<String>) -> Result<Self> {
        if devices.first().map(|d| d.profile().kind) != Some(DeviceKind::Cpu) {
            return Err(BachError::invalid("devices", "the first device must be the CPU"));
        }
        if let Some((i, d)) = devices.iter().enumerate().find(|(i, d)| d.profile().id.0 as usize != *i) {
            return Err(BachError::invalid("devices", format!("device {} at position {i} has id {}", d.profile().name, d.profile().id.0)));
        }
        Ok(Devices { devices, notes })
    }
    pub fn get(&self, id: DeviceId) -> Option<&Arc<dyn Device>> {
        self.devices.get(id.0 as usize)
    }
    pub fn profiles(&self) -> Vec<DeviceProfile> {
        self.devices.iter().map(|d| d.profile().clone()).collect()
    }
    /// Human-readable report: each device, then notes (why no GPU).
    pub fn report(&self) -> String {
        let mut s = String::new();
        for d in &self.devices {
            s += &format!("{}\n", d.profile());
        }
        for n in &self.notes {
            s += &format!("{n}\n");
        }
        s
    }
}

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
use crate::value::{Value, ValueRef};

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
            write!(f, ", {:.1} GiB", m as f64 / (1u64 << 30) as f64)?;
        }
        Ok(())
    }
}

/// What a device must do for the executor.
pub trait Device: Send + Sync {
    fn profile(&self) -> &DeviceProfile;
    /// Run `op` on one piece (or the whole) of its arguments, which live on this device.
    fn run(&self, op: &Annotation, ctx: &OpCtx<'_>, args: &[ValueRef<'_>]) -> Result<Value>;
    /// Copy a host value into this device's memory.
    fn copy_in(&self, value: &Value) -> Result<Value>;
    /// Copy a value of this device back to the host.
    fn copy_out(&self, value: &Value) -> Result<Value>;
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
        let outer = CATCHING.with(|c| c.replace(true));
        let result = catch_unwind(AssertUnwindSafe(|| op.run_cpu(ctx, args)));
        CATCHING.with(|c| c.set(outer));
        match result {
            Ok(r) => r,
            Err(panic) => {
                let detail = panic
                    .downcast_ref::<String>()
                    .map(String::as_str)
                    .or_else(|| panic.downcast_ref::<&str>().copied())
                    .unwrap_or("panic with a non-text payload");
                Err(BachError::Kernel { op: op.name().to_string(), device: "cpu".into(), detail: format!("panicked: {detail}") })
            }
        }
    }
    fn copy_in(&self, value: &Value) -> Result<Value> {
        Ok(value.clone())
    }
    fn copy_out(&self, value: &Value) -> Result<Value> {
        Ok(value.clone())
    }
}

/// The devices of a session, and why there is no accelerator when there is none.
pub struct Devices {
    devices: Vec<Arc<dyn Device>>,
    notes: Vec<String>,
}

impl Devices {
    /// Find this machine's devices. No accelerator is a normal case: the runtime runs on the
    /// CPU and says why.
    pub fn detect() -> Self {
        Devices {
            devices: vec![Arc::new(CpuDevice::new())],
            notes: vec!["no GPU: running on CPU (this build has no accelerator device: the CUDA device is not built yet)".into()],
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

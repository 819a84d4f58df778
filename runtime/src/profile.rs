//! What the planner knows of a device: its id, kind and capacities, never its data. Imports
//! nothing of the crate but byte units, so plans can be made and tested for devices this
//! machine does not have.

use std::fmt;

use crate::units::bytes;

/// Index of a device in the session's device list; the CPU is always 0.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DeviceId(pub u8);

pub const CPU: DeviceId = DeviceId(0);

/// The most accelerators a session takes (emulated or CUDA).
pub const MAX_ACCELERATORS: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "lowercase"))]
pub enum DeviceKind {
    Cpu,
    Cuda,
    /// A second memory space in host memory that runs CPU kernels: never a GPU, it exists
    /// so that transfers, placement and paging run on machines without one.
    Emulated,
}

impl DeviceKind {
    /// The kind as paths and tables write it: `cpu`, `cuda`, `emulated`.
    pub fn name(self) -> &'static str {
        match self {
            DeviceKind::Cpu => "cpu",
            DeviceKind::Cuda => "cuda",
            DeviceKind::Emulated => "emulated",
        }
    }
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
    /// Host-to-device and device-to-host bytes per second through pinned memory, when the
    /// device measured them as it opened (the cost model's figures otherwise).
    pub measured_copies: Option<(f64, f64)>,
    /// Whether the device fuses chains of elementwise ops into one kernel (the CUDA device),
    /// so that their intermediates never take its memory: the planner sizes pieces by what it
    /// really holds.
    pub fuses_elementwise: bool,
}

impl DeviceProfile {
    /// This machine's CPU.
    pub fn cpu() -> Self {
        let threads = rayon::current_num_threads();
        DeviceProfile { id: CPU, kind: DeviceKind::Cpu, name: format!("cpu ({threads} threads)"), memory_bytes: None, threads, measured_copies: None, fuses_elementwise: false }
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
            measured_copies: None,
            fuses_elementwise: true,
        }
    }
}

impl DeviceProfile {
    /// A device made up for planning ([`DeviceProfile::hypothetical_gpu`]), not one opened here.
    pub fn is_hypothetical(&self) -> bool {
        self.name.ends_with("(hypothetical)")
    }
}

impl fmt::Display for DeviceProfile {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} [{}]", self.name, self.id.0)?;
        if let Some(m) = self.memory_bytes {
            write!(f, ", {}", bytes(m as usize))?;
        }
        Ok(())
    }
}

//! The cost model and placement policies the planner reads.

use std::fmt;
use std::str::FromStr;

use crate::profile::DeviceProfile;
use crate::value::Meta;

/// How the planner chooses a device per op.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Policy {
    /// Every op with an accelerator version on the accelerator when one is present.
    Greedy,
    /// Per op, the accelerator when its estimate plus the transfers its inputs need is at
    /// most the CPU's estimate (the paper's estimator rule).
    Threshold,
    /// Everything on the CPU.
    CpuOnly,
}

impl fmt::Display for Policy {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Policy::Greedy => "greedy",
            Policy::Threshold => "threshold",
            Policy::CpuOnly => "cpu",
        })
    }
}

impl FromStr for Policy {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "greedy" => Ok(Policy::Greedy),
            "threshold" => Ok(Policy::Threshold),
            "cpu" | "cpu-only" => Ok(Policy::CpuOnly),
            _ => Err(format!("unknown policy `{s}` (known: greedy, threshold, cpu)")),
        }
    }
}

/// Parameters of the cost model.
#[derive(Clone, Debug, PartialEq)]
pub struct CostModel {
    /// Bytes of the widest value of a CPU stage per piece: small enough that a piece's live
    /// values stay in the core's cache while every op of the stage runs over it.
    pub cpu_piece_bytes: usize,
    /// Fraction of an accelerator's memory the planner fills (the rest is headroom).
    pub accelerator_memory_fraction: f64,
    /// Bytes per row times rows of one accelerator piece when the stage fits: pieces this big
    /// keep launches few while copies of one piece overlap compute of another.
    pub accelerator_piece_bytes: usize,
}

impl Default for CostModel {
    fn default() -> Self {
        CostModel { cpu_piece_bytes: 64 * 1024, accelerator_memory_fraction: 0.9, accelerator_piece_bytes: 256 << 20 }
    }
}

impl CostModel {
    /// Default estimate of one op over whole values when its annotation gives none.
    pub fn default_estimate(&self, result: &Meta, device: &DeviceProfile) -> f64 {
        result.len().max(1) as f64 / device.elems_per_s
    }
    /// Seconds to move `bytes` between host and `device` (0 for the CPU itself).
    pub fn transfer_seconds(&self, bytes: usize, device: &DeviceProfile) -> f64 {
        bytes as f64 / device.h2d_bytes_per_s
    }
}

//! Why an op runs where it runs: a value the plan, the trace and explain carry, shown in
//! words.

use std::fmt;

use super::Forced;
use crate::cost::seconds;
use crate::units::bytes;

/// The reason for one placement.
#[derive(Clone, Debug, PartialEq)]
pub enum Reason {
    /// The annotation keeps the op on the CPU; its words (e.g. "a Rust closure runs on the CPU only").
    CpuOnly(String),
    /// No accelerator in the session.
    NoAcceleratorPresent,
    /// The op has no accelerator version.
    NoAcceleratorVersion,
    /// An unsplittable op whose arguments and result do not fit the accelerator's budget.
    DoesNotFit,
    /// The policy's choice, by the policy's name ("greedy", "cpu").
    Policy(&'static str),
    /// The estimates a cost-based policy compared: seconds on the CPU, on the accelerator,
    /// and of the copies the accelerator would need first.
    Estimates { cpu_s: f64, accelerator_s: f64, transfers_s: f64 },
    /// `optimal`'s choice for this op within the cheapest placement of all: its own estimates,
    /// the copies its arguments need to reach each device (with their bytes, to the
    /// accelerator), and the margin: what moving it alone would add to the total.
    Optimal { on_accelerator: bool, cpu_s: f64, accelerator_s: f64, copies_cpu_s: f64, copies_accelerator_s: f64, copy_bytes: usize, margin_s: f64 },
    /// `optimal`'s placement put ops on the accelerator, but once its stages were cut into
    /// pieces (each with a fixed cost) the whole plan on the CPU was predicted cheaper.
    WholePlan { cpu_s: f64, accelerator_s: f64, pieces: usize },
    /// A value or the cell asked for this device.
    Forced(Forced),
    /// Asked for the accelerator, but the op has no accelerator version or there is none.
    ForcedUnavailable(Forced),
    /// A lazy allocation made where its first user (this node id) runs.
    FirstUser(u64),
    /// A lazy allocation whose first user runs on an accelerator it has no version for.
    HostOnlyAllocation,
    /// A lazy allocation nothing reads.
    UnusedAllocation,
    /// The executor moved the op's stage to the CPU: its accelerator ran out of memory.
    OutOfMemory,
    /// Already computed (the part's boundary): it is where its value is.
    Evaluated,
}

impl fmt::Display for Reason {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Reason::CpuOnly(why) => f.write_str(why),
            Reason::NoAcceleratorPresent => f.write_str("no accelerator present"),
            Reason::NoAcceleratorVersion => f.write_str("no accelerator version"),
            Reason::DoesNotFit => f.write_str("does not fit accelerator memory"),
            Reason::Policy("greedy") => f.write_str("accelerator version (greedy)"),
            Reason::Policy(p) => write!(f, "policy {p}"),
            Reason::Estimates { cpu_s, accelerator_s, transfers_s } => {
                let (accel_total, sign) = (accelerator_s + transfers_s, if accelerator_s + transfers_s <= *cpu_s { "<=" } else { ">" });
                write!(f, "estimated accelerator {} + copies {} = {} {sign} cpu {}", seconds(*accelerator_s), seconds(*transfers_s), seconds(accel_total), seconds(*cpu_s))
            }
            Reason::Optimal { on_accelerator, cpu_s, accelerator_s, copies_cpu_s, copies_accelerator_s, copy_bytes, margin_s } => {
                let (acc, cpu) = (accelerator_s + copies_accelerator_s, cpu_s + copies_cpu_s);
                let margin = if margin_s.is_finite() { format!("; moving it costs {} more", seconds(*margin_s)) } else { String::new() };
                if *on_accelerator {
                    write!(f, "optimal: accelerator {} + copies {} vs cpu {}{margin}", seconds(*accelerator_s), seconds(*copies_accelerator_s), seconds(cpu))
                } else if accelerator_s < cpu_s && *copies_accelerator_s > 0.0 {
                    write!(
                        f,
                        "optimal: transfer of {} dominates: accelerator {} + copies {} = {} vs cpu {}{margin}",
                        bytes(*copy_bytes),
                        seconds(*accelerator_s),
                        seconds(*copies_accelerator_s),
                        seconds(acc),
                        seconds(cpu)
                    )
                } else {
                    write!(f, "optimal: cpu {} vs accelerator {} + copies {}{margin}", seconds(cpu), seconds(*accelerator_s), seconds(*copies_accelerator_s))
                }
            }
            Reason::WholePlan { cpu_s, accelerator_s, pieces } => {
                write!(f, "optimal: the whole plan on the CPU ({}) beats the one with the accelerator ({}, its {pieces} pieces counted)", seconds(*cpu_s), seconds(*accelerator_s))
            }
            Reason::Forced(forced) => write!(f, "{forced}"),
            Reason::ForcedUnavailable(forced) => write!(f, "{forced}, but it cannot run there: on the CPU"),
            Reason::FirstUser(id) => write!(f, "allocated where its first user #{id} runs"),
            Reason::HostOnlyAllocation => f.write_str("created on the host: no accelerator version"),
            Reason::UnusedAllocation => f.write_str("allocation with no user: on the host"),
            Reason::OutOfMemory => f.write_str("its accelerator ran out of memory"),
            Reason::Evaluated => f.write_str("already evaluated"),
        }
    }
}

/// Tests and tools compare a reason with the words it shows.
impl PartialEq<&str> for Reason {
    // The words exist only once shown; comparing is rare (tests, tools), so they are made.
    #[allow(clippy::cmp_owned)]
    fn eq(&self, words: &&str) -> bool {
        self.to_string() == *words
    }
}

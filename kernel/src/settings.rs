//! The kernel's own `BACH_KERNEL_*` switches, read from the environment once, in this file
//! (as the runtime reads its `BACH_*` switches in `knobs.rs`). The rustc wrapper's two
//! variables are not settings but the wrapper's own hand-over between its stages
//! (`rustc_wrapper.rs`), and the comm socket's is the wire's (`bach_wire::comm`).

use std::sync::OnceLock;

/// The kernel's switches.
#[derive(Debug, Clone, Default)]
pub struct Settings {
    /// `BACH_KERNEL_TIMING`: start-up laps and each cell's evcxr phases on stderr when set;
    /// `ra` or `ra-all` also rust-analyzer's spans (name resolution and inference per crate).
    pub timing: Option<String>,
    /// `BACH_KERNEL_OPT_LEVEL`: the cells' own opt-level (`0`..`3`, `s`, `z`), when valid.
    pub opt_level: Option<String>,
    /// `BACH_KERNEL_STANDBY`: `0` or `off` for no standby, else the seconds a standby waits.
    pub standby: Option<String>,
}

impl Settings {
    /// The switches as the environment sets them.
    pub fn from_env() -> Settings {
        let var = |name: &str| std::env::var(name).ok();
        Settings {
            timing: var("BACH_KERNEL_TIMING"),
            opt_level: var("BACH_KERNEL_OPT_LEVEL").filter(|o| ["0", "1", "2", "3", "s", "z"].contains(&o.as_str())),
            standby: var("BACH_KERNEL_STANDBY"),
        }
    }
    /// Whether timings go to stderr.
    pub fn timing(&self) -> bool {
        self.timing.is_some()
    }
    /// Whether rust-analyzer's spans are profiled, and whether all of them (`ra-all`).
    pub fn rust_analyzer_timing(&self) -> Option<bool> {
        match self.timing.as_deref() {
            Some("ra") => Some(false),
            Some("ra-all") => Some(true),
            _ => None,
        }
    }
}

/// This process's switches, read on first use.
pub fn settings() -> &'static Settings {
    static SETTINGS: OnceLock<Settings> = OnceLock::new();
    SETTINGS.get_or_init(Settings::from_env)
}

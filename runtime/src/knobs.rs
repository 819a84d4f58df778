//! The runtime's `BACH_*` environment switches, as one typed value ([`Knobs`]).
//!
//! [`Knobs::from_env`] is the only place in this crate that reads a `BACH_*` variable; each
//! field says which variable sets it, its default and what it does. Most are tuning switches
//! for measuring on a GPU host.
//!
//! When each is read, as before they were gathered here:
//!
//! - **Once per process**, through [`knobs()`] (the first call reads them all and keeps the
//!   value): `BACH_KEEP_FREED`, `BACH_HUGE_PAGES`, `BACH_CUDA_FILL`, `BACH_CUDA_CHUNK_IN`,
//!   `BACH_CUDA_READAHEAD`, `BACH_PREFAULT`, `BACH_CUDA_FUSE`, `BACH_CUDA_CONST`,
//!   `BACH_CUDA_REGISTER_MIN` and `BACH_CUDA_LAND`. They are consulted on hot paths (every
//!   allocation, copy or launch), and a policy such as the allocator's must not change
//!   halfway through a process.
//! - **At each use**, through a fresh [`Knobs::from_env`]: `BACH_DEVICE` and
//!   `BACH_CUDA_DEVICE`, `BACH_CUDA_DEVICES` (each time a session's devices are detected), `BACH_CUDA_REGISTER`
//!   (each time a GPU is opened), `BACH_EAGER_MAX` (each time a session is made),
//!   `BACH_PROFILE_DIR` (each time the profile file is looked for), `BACH_CHART_OUT` and
//!   `BACH_REQUIRE_NVRTC` (tests). These are read where a session or device is set up, not
//!   on hot paths, so a program (or a test) that changes the environment before making a
//!   session gets what it asked for; the `knobs()` value keeps whatever they were at its
//!   first call, and is not the place to read them.

use std::fmt;
use std::path::PathBuf;

/// How a copy in fills its pinned staging buffers (`BACH_CUDA_FILL`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub enum Fill {
    /// Chunks of 16 MiB in order, each filled by all of the host's cores at once
    /// (1 MiB parts) and then queued, so that one chunk crosses the bus while the next is
    /// filled: the hand-written program's way (`bench/src/gpu.rs`), which on an H200 host ran
    /// Black-Scholes 2^27 in 0.20-0.28 s where `Chunks` took 0.29-0.35 s. The default.
    Cores,
    /// Chunks of 4 MiB, each filled by one core, chunks in parallel: a copy of
    /// one piece (21 MB in Black-Scholes 2^27) kept only 5 cores busy. Measured on an H200
    /// host: 4 MiB chunks 0.29-0.35 s, 2 MiB 0.29 s, 8 MiB 0.34 s, 16 MiB 0.64 s.
    Chunks,
}

impl fmt::Display for Fill {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Fill::Cores => "cores",
            Fill::Chunks => "chunks",
        })
    }
}

/// Where calibrated cost profiles are kept (`BACH_PROFILE_DIR`).
#[derive(Clone, PartialEq, Eq, Debug)]
pub enum ProfileDir {
    /// Unset or empty: `$XDG_CACHE_HOME/bach/profiles`, else `~/.cache/bach/profiles`
    /// ([`crate::cost::profile_dir`]).
    Default,
    /// `none`: profiles are neither saved nor loaded.
    Off,
    /// This folder.
    At(PathBuf),
}

/// The runtime's `BACH_*` switches (see the module's doc for when each is read).
#[derive(Clone, PartialEq, Eq, Debug)]
pub struct Knobs {
    // Read at each use (through `Knobs::from_env()`).
    /// `BACH_DEVICE`: the devices a session runs on ([`crate::devices::Devices::detect`]):
    /// `auto` (the default, also when unset: a GPU if there is one), `cpu`, `cuda`, a list
    /// `cuda:0,cuda:1` (or `cuda:all`), `emulated`, `emulated:SIZE`, or `emulated:N[:SIZE]`
    /// (N emulated accelerators). Kept as written; parsed ([`crate::devices::DeviceChoice`]) where
    /// the devices are detected, whose notes say why a bad value falls back to the CPU.
    pub device: String,
    /// `BACH_CUDA_DEVICE`: the number of the CUDA GPU to use (unset or empty: 0). Kept as
    /// written; parsed where the GPU is looked for (`cuda::detect`), which fails with
    /// "BACH_CUDA_DEVICE=... is not a GPU number" on a bad one.
    pub cuda_device: Option<String>,
    /// `BACH_CUDA_DEVICES`: the CUDA GPUs a session uses, one device each (`0,1`, or `all`);
    /// it wins over `BACH_CUDA_DEVICE`. Kept as written; parsed by
    /// [`crate::devices::cuda_ordinals_from_env`].
    pub cuda_devices: Option<String>,
    /// `BACH_CUDA_REGISTER`: page-locks (registers) large host arrays so that copies go
    /// straight from them instead of through staging buffers, and keeps results' memory
    /// page-locked as landings. On by default; `0` turns it off. Read each time a GPU is opened.
    pub cuda_register: bool,
    /// `BACH_EAGER_MAX`: ops over host values of at most this many elements run at once on
    /// the CPU, outside the graph (the `bach` library's arrays; 0 turns it off). 4096 by
    /// default, also when not a number. The starting value of a session's
    /// [`crate::session::Config::eager_max_elements`], read each time a session is made.
    pub eager_max: usize,
    /// `BACH_PROFILE_DIR`: where calibrated profiles are kept; `none` turns saving and loading
    /// off. Read each time the profile file is looked for.
    pub profile_dir: ProfileDir,
    /// `BACH_CHART_OUT`: a folder the chart tests write their SVGs to, to look at them. Unset:
    /// nothing written.
    pub chart_out: Option<PathBuf>,
    /// `BACH_REQUIRE_NVRTC`: with `1`, the test that compiles fused kernels with NVRTC fails
    /// where NVRTC cannot be loaded instead of skipping (for hosts that must have it). Off by default.
    pub require_nvrtc: bool,

    // Read once per process (through `knobs()`).
    /// `BACH_KEEP_FREED`: the session keeps what it frees (all of [`crate::fresh`]'s allocator
    /// policy: glibc's heaps keep freed memory, trimmed after an evaluation when they hold too
    /// much). On by default; `0` turns it off and leaves glibc's defaults.
    pub keep_freed: bool,
    /// `BACH_HUGE_PAGES`: with `1`, fresh host memory of 4 MiB or more is advised to be backed
    /// by transparent huge pages ([`crate::fresh::advise_huge_pages`]). Off by default: with the
    /// kernel's usual `defrag=madvise`, advised memory is compacted synchronously when free
    /// huge pages are short, and on this project's 2-core, 24 GiB build machine a copy into
    /// 1 GiB of advised fresh memory took 0.13-1.24 s against 0.32-0.42 s without the advice
    /// (on the H200 host it raised copies into fresh memory from 18 to 30 GB/s).
    pub huge_pages: bool,
    /// `BACH_CUDA_FILL`: how a copy in fills its pinned staging buffers: `chunks` for
    /// [`Fill::Chunks`], anything else (or unset) [`Fill::Cores`], the default.
    pub cuda_fill: Fill,
    /// `BACH_CUDA_CHUNK_IN`: bytes per chunk of a copy in (e.g. `8MiB`; at least 4096). Unset
    /// or not a size: the default of [`Knobs::cuda_fill`] (16 MiB for `cores`, 4 MiB for `chunks`).
    pub cuda_chunk_in: Option<usize>,
    /// `BACH_CUDA_READAHEAD`: read-ahead staging of inputs streamed in small pieces. On by
    /// default; `0` turns it off.
    pub cuda_readahead: bool,
    /// `BACH_PREFAULT`: faulting in result memory ahead of the copies back from the GPU. On by
    /// default; `0` turns it off.
    pub prefault: bool,
    /// `BACH_CUDA_FUSE`: elementwise ops on the GPU are fused into one generated kernel. On by
    /// default; `0` launches every elementwise op alone.
    pub cuda_fuse: bool,
    /// `BACH_CUDA_CONST`: one-element values copied to the GPU stay constants (kept as their
    /// bits, passed to fused kernels by value, copied to device memory at first need). On by
    /// default; `0` copies them at once.
    pub cuda_const: bool,
    /// `BACH_CUDA_REGISTER_MIN`: the smallest host array that is page-locked (bytes, e.g.
    /// `16MiB`), for measuring. Unset or not a size: the default, 64 MiB.
    pub cuda_register_min: Option<usize>,
    /// `BACH_CUDA_LAND`: results' memory is kept page-locked as landings, so that later results
    /// copied into it go straight from the GPU. On by default; `0` turns it off.
    pub cuda_land: bool,
}

/// A variable's value, `None` when unset or not Unicode (as `std::env::var(..).ok()`).
fn var(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Whether a switch that is on unless set to `0` is on.
fn on_unless_0(name: &str) -> bool {
    var(name).as_deref() != Some("0")
}

/// A size in bytes (`crate::units::parse_bytes`), `None` when unset or not a size.
fn bytes(name: &str) -> Option<usize> {
    var(name).and_then(|v| crate::units::parse_bytes(&v).ok()).map(|b| b as usize)
}

impl Knobs {
    /// The switches as the environment sets them now.
    pub fn from_env() -> Knobs {
        Knobs {
            device: var("BACH_DEVICE").unwrap_or_else(|| "auto".into()),
            cuda_device: var("BACH_CUDA_DEVICE"),
            cuda_devices: var("BACH_CUDA_DEVICES"),
            cuda_register: on_unless_0("BACH_CUDA_REGISTER"),
            eager_max: var("BACH_EAGER_MAX").and_then(|v| v.trim().parse().ok()).unwrap_or(4096),
            profile_dir: match std::env::var_os("BACH_PROFILE_DIR") {
                Some(d) if d == "none" => ProfileDir::Off,
                Some(d) if !d.is_empty() => ProfileDir::At(PathBuf::from(d)),
                _ => ProfileDir::Default,
            },
            chart_out: std::env::var_os("BACH_CHART_OUT").map(PathBuf::from),
            require_nvrtc: var("BACH_REQUIRE_NVRTC").as_deref() == Some("1"),
            keep_freed: on_unless_0("BACH_KEEP_FREED"),
            huge_pages: var("BACH_HUGE_PAGES").as_deref() == Some("1"),
            cuda_fill: if var("BACH_CUDA_FILL").as_deref() == Some("chunks") { Fill::Chunks } else { Fill::Cores },
            cuda_chunk_in: bytes("BACH_CUDA_CHUNK_IN").map(|b| b.max(4096)),
            cuda_readahead: on_unless_0("BACH_CUDA_READAHEAD"),
            prefault: on_unless_0("BACH_PREFAULT"),
            cuda_fuse: on_unless_0("BACH_CUDA_FUSE"),
            cuda_const: on_unless_0("BACH_CUDA_CONST"),
            cuda_register_min: bytes("BACH_CUDA_REGISTER_MIN"),
            cuda_land: on_unless_0("BACH_CUDA_LAND"),
        }
    }

    /// Every switch, one per line: its variable, its value here, whether the runtime reads
    /// it once or at each use, and what it does (for `:bach config`).
    pub fn describe(&self) -> String {
        self.to_string()
    }
}

/// The switches read once per process: the environment's at the first call.
pub fn knobs() -> &'static Knobs {
    static KNOBS: std::sync::LazyLock<Knobs> = std::sync::LazyLock::new(Knobs::from_env);
    &KNOBS
}

impl fmt::Display for Knobs {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let on = |b: bool| if b { "1" } else { "0" }.to_string();
        let size = |b: Option<usize>| b.map_or_else(|| "default".to_string(), crate::units::bytes);
        let lines: [(&str, String, &str, &str); 18] = [
            ("BACH_DEVICE", self.device.clone(), "each use", "devices a session runs on: auto, cpu, cuda, cuda:0,cuda:1, emulated[:SIZE], emulated:N[:SIZE]"),
            ("BACH_CUDA_DEVICE", self.cuda_device.clone().unwrap_or_else(|| "0 (unset)".into()), "each use", "number of the CUDA GPU to use"),
            ("BACH_CUDA_DEVICES", self.cuda_devices.clone().unwrap_or_else(|| "unset".into()), "each use", "the CUDA GPUs to use, one device each (0,1 or all)"),
            ("BACH_CUDA_REGISTER", on(self.cuda_register), "each use", "page-lock large host arrays (0: off)"),
            ("BACH_EAGER_MAX", self.eager_max.to_string(), "each use", "ops over at most this many elements run at once on the CPU (0: off)"),
            (
                "BACH_PROFILE_DIR",
                match &self.profile_dir {
                    ProfileDir::Default => "default (~/.cache/bach/profiles)".into(),
                    ProfileDir::Off => "none".into(),
                    ProfileDir::At(d) => d.display().to_string(),
                },
                "each use",
                "where calibrated cost profiles are kept (none: off)",
            ),
            ("BACH_CHART_OUT", self.chart_out.as_ref().map_or_else(|| "unset".into(), |d| d.display().to_string()), "each use", "folder the chart tests write SVGs to"),
            ("BACH_REQUIRE_NVRTC", on(self.require_nvrtc), "each use", "the NVRTC test fails instead of skipping without NVRTC (1: on)"),
            ("BACH_KEEP_FREED", on(self.keep_freed), "once", "the session keeps the memory it frees (0: glibc's defaults)"),
            ("BACH_HUGE_PAGES", on(self.huge_pages), "once", "advise transparent huge pages for fresh host memory (1: on)"),
            ("BACH_CUDA_FILL", self.cuda_fill.to_string(), "once", "how a copy in fills its staging buffers: cores or chunks"),
            ("BACH_CUDA_CHUNK_IN", size(self.cuda_chunk_in), "once", "bytes per chunk of a copy in"),
            ("BACH_CUDA_READAHEAD", on(self.cuda_readahead), "once", "read-ahead staging of inputs streamed in small pieces (0: off)"),
            ("BACH_PREFAULT", on(self.prefault), "once", "fault in result memory ahead of copies back (0: off)"),
            ("BACH_CUDA_FUSE", on(self.cuda_fuse), "once", "fuse elementwise ops on the GPU (0: launch each alone)"),
            ("BACH_CUDA_CONST", on(self.cuda_const), "once", "one-element values stay constants (0: copied at once)"),
            ("BACH_CUDA_REGISTER_MIN", size(self.cuda_register_min), "once", "smallest host array that is page-locked"),
            ("BACH_CUDA_LAND", on(self.cuda_land), "once", "keep results' memory page-locked as landings (0: off)"),
        ];
        for (name, value, when, what) in lines {
            writeln!(f, "{name:<23} {value:<12} read {when:<8}  {what}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The `BACH_*` names that `from_env` reads, taken from this file's source.
    fn names_read() -> Vec<String> {
        let source = include_str!("knobs.rs");
        let body = &source[source.find("pub fn from_env").unwrap()..source.find("pub fn describe").unwrap()];
        let mut names: Vec<String> =
            body.match_indices("(\"BACH_").map(|(i, _)| body[i + 2..].chars().take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_').collect()).collect();
        names.sort();
        names.dedup();
        names
    }

    #[test]
    fn description_lists_every_switch() {
        let names = names_read();
        assert_eq!(names.len(), 18, "{names:?}");
        let text = Knobs::from_env().describe();
        assert_eq!(text.lines().count(), names.len(), "one line per switch:\n{text}");
        for name in &names {
            assert!(text.lines().any(|l| l.split_whitespace().next() == Some(name.as_str())), "{name} is not described:\n{text}");
        }
    }
}

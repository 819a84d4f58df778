//! Where a cell's time goes: the kernel's own steps, rust-analyzer (the new variables' types),
//! cargo, rustc (front end and codegen), the link of the cell's library, and the run.
//!
//! evcxr times its phases ("Variable types", "Final compile", "Execution"; the first is a
//! patch, `third_party/evcxr/PATCHED.md`). Inside the compile, the processes cargo starts
//! stamp the moments evcxr cannot see into a file the kernel names (`BACH_CELL_STAGES`): the
//! rustc wrapper when cargo starts it, rustc when the wrapper hands over, and the linker
//! before and after it runs (the wrapper is the cell's linker, `cell_link.rs`). No `-Z` flag:
//! a stable toolchain gives all of it. The file exists only while timing is on
//! (`BACH_KERNEL_TIMING`, or `:bach timing` in a notebook, which shows the line under each
//! cell): without it nothing is stamped.

use std::io::Write;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// The stamps file, set by the kernel for the processes cargo starts.
pub const STAGES_ENV: &str = "BACH_CELL_STAGES";

/// A moment of a cell's build.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stamp {
    /// cargo started the rustc wrapper.
    Wrapper,
    /// The wrapper started rustc.
    Rustc,
    /// rustc started the linker.
    Link,
    /// The linker finished.
    Linked,
}

impl Stamp {
    const ALL: [Stamp; 4] = [Stamp::Wrapper, Stamp::Rustc, Stamp::Link, Stamp::Linked];
    fn name(self) -> &'static str {
        match self {
            Stamp::Wrapper => "wrapper",
            Stamp::Rustc => "rustc",
            Stamp::Link => "link",
            Stamp::Linked => "linked",
        }
    }
}

/// Microseconds since the Unix epoch (one clock for the kernel and the processes it starts).
pub fn unix_micros() -> u64 {
    SystemTime::now().duration_since(UNIX_EPOCH).map_or(0, |d| d.as_micros() as u64)
}

/// The stamps file this kernel names (set at its start, in its scratch directory).
pub fn file() -> Option<std::path::PathBuf> {
    std::env::var_os(STAGES_ENV).map(Into::into)
}

/// `<name> <unix µs>` appended to the stamps file, when timing is on (the file is never
/// created here: an absent file is timing off).
pub fn stamp(s: Stamp) {
    let Some(path) = std::env::var_os(STAGES_ENV) else { return };
    if let Ok(mut f) = std::fs::OpenOptions::new().append(true).open(path) {
        let _ = writeln!(f, "{} {}", s.name(), unix_micros());
    }
}

/// The stamps in `text`, in order.
fn parse(text: &str) -> Vec<(Stamp, u64)> {
    text.lines()
        .filter_map(|l| {
            let (name, at) = l.split_once(' ')?;
            Some((Stamp::ALL.into_iter().find(|s| s.name() == name)?, at.trim().parse().ok()?))
        })
        .collect()
}

/// Timing on or off for the cells from now: the stamps file made (emptied) or removed.
pub fn set_stamping(path: &std::path::Path, on: bool) {
    let _ = match on {
        true => std::fs::write(path, ""),
        false => std::fs::remove_file(path),
    };
}

/// The stamps of the cell that ran, and the file emptied for the next one.
pub fn take(path: &std::path::Path) -> Vec<(Stamp, u64)> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    if !text.is_empty() {
        let _ = std::fs::write(path, "");
    }
    parse(&text)
}

/// Whether the cell's last build (begun after `since`) ran without cargo: evcxr (patched,
/// `module/replay.rs`) writes the replay key after every cargo build, and leaves it when it
/// replays (the key's file name is `module/replay.rs`'s `key_file`).
pub fn built_without_cargo(build_dir: &std::path::Path, since: SystemTime) -> bool {
    let key = build_dir.join("target").join("evcxr-replay.key");
    std::fs::metadata(key).and_then(|m| m.modified()).is_ok_and(|t| t < since)
}

/// One cell's time by stage, in milliseconds.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Breakdown {
    /// From the request to the cell's result.
    pub total: f64,
    /// The kernel's own steps (rewrites, the `:dep` check, outputs) and waiting for evcxr.
    pub kernel: f64,
    /// evcxr: rust-analyzer's types of the new variables, and writing the crate.
    pub types: f64,
    /// cargo and evcxr's compile steps, all compiles (rustc's part below is one of them).
    pub compile: f64,
    /// cargo: its start, the dependency check, the rustc wrapper, and after rustc.
    pub cargo: Option<f64>,
    /// rustc up to the link: front end, monomorphisation, LLVM.
    pub rustc: Option<f64>,
    /// The link of the cell's library.
    pub link: Option<f64>,
    /// Loading the library and running the cell.
    pub run: f64,
    /// How many times evcxr compiled the cell (more than one when it fixed its code).
    pub compiles: usize,
    /// The last build ran rustc without cargo (evcxr's replay, patched), so `cargo` is the
    /// wrapper's and evcxr's own steps.
    pub without_cargo: bool,
}

impl Breakdown {
    /// The breakdown from the cell's wall time `total`, evcxr's phases and the stamps of
    /// the last compile.
    pub fn of(total: Duration, phases: &[(String, Duration)], stamps: &[(Stamp, u64)], without_cargo: bool) -> Breakdown {
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        let phase = |name: &str| phases.iter().filter(|(n, _)| n == name).map(|(_, d)| ms(*d)).sum::<f64>();
        let (types, run) = (phase("Variable types"), phase("Execution"));
        let compile: f64 = phases.iter().filter(|(n, _)| n != "Variable types" && n != "Execution").map(|(_, d)| ms(*d)).sum();
        let compiles = phases.iter().filter(|(n, _)| n != "Variable types" && n != "Execution").count();
        // The last compile's stamps (each compile stamps the wrapper first).
        let last = stamps.iter().rposition(|(s, _)| *s == Stamp::Wrapper).map_or(&[][..], |i| &stamps[i..]);
        let at = |s: Stamp| last.iter().find(|(t, _)| *t == s).map(|(_, us)| *us as f64 / 1e3);
        let (rustc, link) = match (at(Stamp::Rustc), at(Stamp::Link), at(Stamp::Linked)) {
            (Some(r), Some(l), Some(d)) if r <= l && l <= d => (Some(l - r), Some(d - l)),
            _ => (None, None),
        };
        let cargo = rustc.zip(link).map(|(r, l)| (compile - r - l).max(0.0));
        let total = ms(total);
        Breakdown { total, kernel: (total - types - compile - run).max(0.0), types, compile, cargo, rustc, link, run, compiles, without_cargo }
    }

    /// One line: "compiled in 231 ms (cargo 95, rustc 110, link 26) · types 60 ms · ran in 4 ms
    /// · kernel 21 ms · 402 ms in all"; a build without cargo says so, and calls the wrapper's
    /// and evcxr's steps "other".
    pub fn line(&self) -> String {
        let parts = match (self.cargo, self.rustc, self.link, self.without_cargo) {
            (Some(c), Some(r), Some(l), false) => format!(" (cargo {c:.0}, rustc {r:.0}, link {l:.0})"),
            (Some(c), Some(r), Some(l), true) => format!(" (rustc {r:.0}, link {l:.0}, other {c:.0}; without cargo)"),
            (_, _, _, true) => " (without cargo)".into(),
            _ => String::new(),
        };
        let times = match self.compiles {
            0 | 1 => String::new(),
            n => format!(", {n} compiles"),
        };
        format!(
            "compiled in {:.0} ms{parts}{times} · types {:.0} ms · ran in {:.0} ms · kernel {:.0} ms · {:.0} ms in all",
            self.compile, self.types, self.run, self.kernel, self.total
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_breakdown_splits_the_compile_by_the_last_stamps_and_the_rest_is_the_kernel() {
        let phases = vec![
            ("Variable types".to_string(), Duration::from_millis(60)),
            ("Final compile".to_string(), Duration::from_millis(240)),
            ("Execution".to_string(), Duration::from_millis(4)),
        ];
        // An earlier compile's stamps, then the last one's: wrapper, rustc at +10 ms, link at
        // +120 ms, linked at +150 ms.
        let text = "wrapper 1000\nrustc 2000\nlink 3000\nlinked 4000\nwrapper 100000\nrustc 110000\nlink 220000\nlinked 250000\nbogus 1\n";
        let b = Breakdown::of(Duration::from_millis(330), &phases, &parse(text), false);
        assert_eq!((b.types, b.compile, b.run, b.compiles), (60.0, 240.0, 4.0, 1));
        assert_eq!((b.rustc, b.link), (Some(110.0), Some(30.0)));
        assert_eq!(b.cargo, Some(100.0));
        assert!((b.kernel - 26.0).abs() < 1e-9);
        assert_eq!(b.line(), "compiled in 240 ms (cargo 100, rustc 110, link 30) · types 60 ms · ran in 4 ms · kernel 26 ms · 330 ms in all");
        let b = Breakdown::of(Duration::from_millis(330), &phases, &parse(text), true);
        assert!(b.line().starts_with("compiled in 240 ms (rustc 110, link 30, other 100; without cargo) · types 60 ms"), "{}", b.line());
        // Without stamps (timing off while it compiled): the phases alone.
        let b = Breakdown::of(Duration::from_millis(330), &phases, &[], false);
        assert_eq!((b.cargo, b.rustc, b.link), (None, None, None));
        assert!(b.line().starts_with("compiled in 240 ms · types 60 ms"));
    }

    #[test]
    fn stamps_go_to_the_file_only_while_it_exists() {
        let dir = std::env::temp_dir().join(format!("bach-stages-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("stages");
        set_stamping(&path, true);
        std::fs::OpenOptions::new().append(true).open(&path).unwrap().write_all(b"rustc 5\n").unwrap();
        assert_eq!(take(&path), vec![(Stamp::Rustc, 5)]);
        assert_eq!(take(&path), vec![]);
        set_stamping(&path, false);
        assert!(!path.exists());
        let _ = std::fs::remove_dir_all(&dir);
    }
}

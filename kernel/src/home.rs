//! Where the kernel's files are: an installed kernelspec directory (binary, copies of the
//! `bach` crates, the warmed evcxr build), or, when run from a build tree, the checkout.

use std::path::{Path, PathBuf};

/// The crates the prelude loads, as installed: `<home>/crates/<name>`.
/// `bach-instances` holds Bach's common f64 code compiled once for the cells to share (its
/// crate doc; built at opt-level 1, [`crate::evcxr_engine`]'s dependency profile).
pub const CRATES: &[(&str, &str)] = &[("bach-wire", "wire"), ("bach-runtime", "runtime"), ("bach", "annotations"), ("bach-instances", "instances")];

#[derive(Clone, Debug)]
pub struct Home {
    /// Directory holding `crates/` and `warm/` (the kernelspec dir once installed).
    pub dir: PathBuf,
    pub installed: bool,
}

/// The checkout this binary was built from.
pub fn source_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("kernel/ has a parent").to_path_buf()
}

impl Home {
    /// Installed if the binary sits in a directory with `crates/bach`, else the checkout.
    pub fn locate() -> Home {
        if let Ok(exe) = std::env::current_exe() {
            if let Some(dir) = exe.parent() {
                if dir.join("crates/bach/Cargo.toml").exists() {
                    return Home { dir: dir.to_path_buf(), installed: true };
                }
            }
        }
        Home { dir: source_root(), installed: false }
    }

    pub fn at(dir: PathBuf) -> Home {
        Home { dir, installed: true }
    }

    /// Path of the `bach` crate the prelude depends on.
    pub fn bach_crate(&self) -> PathBuf {
        if self.installed {
            self.dir.join("crates/bach")
        } else {
            self.dir.join("annotations")
        }
    }

    /// Path of the `bach-instances` crate the prelude loads beside `bach`.
    pub fn instances_crate(&self) -> PathBuf {
        if self.installed {
            self.dir.join("crates/bach-instances")
        } else {
            self.dir.join("instances")
        }
    }

    /// The warmed evcxr build directory template (installed kernels only).
    pub fn warm_dir(&self) -> Option<PathBuf> {
        let w = self.dir.join("warm");
        (self.installed && w.join("Cargo.toml").exists()).then_some(w)
    }

    /// The lock file this checkout was tested with (`Cargo.lock` beside `crates/` once
    /// installed, the workspace's in a checkout): every build of the cells starts from it.
    pub fn tested_lock(&self) -> Option<PathBuf> {
        let l = self.dir.join("Cargo.lock");
        l.exists().then_some(l)
    }

    /// The crates the notebook depends on, as `(name, Cargo.toml value)`: the prelude's `:dep`
    /// lines and the manifest `install` fetches them with.
    pub fn notebook_deps(&self) -> Vec<(&'static str, String)> {
        let path = |p: PathBuf| format!("{{ path = {:?} }}", p.display().to_string());
        vec![("bach", path(self.bach_crate())), ("bach-instances", path(self.instances_crate())), ("ndarray", "\"0.16\"".into())]
    }

    /// Code run once per Rust process in `build` (evcxr's build directory): the runtime and
    /// library, and their names in scope.
    /// - The tested lock is copied into `build` before and after the `:dep` lines. evcxr
    ///   checks each `:dep` with `cargo metadata` on a manifest holding that dependency alone,
    ///   which rewrites the lock to that one graph; the build that follows would then resolve
    ///   the rest afresh (the newest versions cargo knows, some never downloaded).
    /// - Its `let` makes evcxr load rust-analyzer for variable types now, in the background,
    ///   instead of in the user's first cell with a `let` (about 4 s here).
    /// - `ShowDebug` gives every `Debug` value an `evcxr_display`, so a cell ending with an
    ///   expression compiles once (evcxr otherwise compiles `x.evcxr_display()`, fails, and
    ///   compiles again with `{:?}`); inherent `evcxr_display`s (Bach's arrays) still win. It
    ///   is imported through a module of the session's own, [`WITHOUT_SHOW_DEBUG`] empties it.
    /// - The `?` on a parse makes evcxr switch `?` support on now (it does so on the first
    ///   cell that uses `?`, by failing that cell's compile once and compiling it again).
    pub fn prelude(&self, build: &Path) -> String {
        let restore = self.tested_lock().map(|l| restore_lock_line(&l, build)).unwrap_or_default();
        let deps: String = self.notebook_deps().iter().map(|(n, v)| format!(":dep {n} = {v}\n")).collect();
        format!("{restore}{deps}{restore}{USE_INSTANCES}{PRELUDE_NAMES}")
    }

    /// The prelude for a Rust process that starts again in a session that already has its
    /// dependencies (after a rebuild, or a process that died): the names and the session
    /// only. evcxr keeps the notebook's dependency lines and the lock keeps their versions;
    /// the first prelude's `:dep ndarray = "0.16"` would replace a notebook's own
    /// `ndarray = "0.17"`.
    pub fn prelude_again(&self) -> String {
        format!("{USE_INSTANCES}{PRELUDE_NAMES}")
    }
}

/// Loads `bach-instances` into every cell (evcxr keeps a `use` for the cells after it): rustc
/// reuses the generic instances of a crate the cell loaded, and a crate named by no path is
/// never loaded.
const USE_INSTANCES: &str = "use bach_instances as _;\n";

// The prelude's names in scope and the notebook's `bach_session` (see [`Home::prelude`]).
use bach_wire::calls::PRELUDE_NAMES;
pub use bach_wire::calls::{WITHOUT_SHOW_DEBUG, WITH_SHOW_DEBUG};

/// An evcxr shell line (`!`, run in order with the `:` commands around it) that copies `lock`
/// over `build`'s `Cargo.lock`, so the build after it keeps the versions `lock` pins.
pub fn restore_lock_line(lock: &Path, build: &Path) -> String {
    format!("!cp -f -- {} {}\n", shell_quote(lock), shell_quote(&build.join("Cargo.lock")))
}

fn shell_quote(p: &Path) -> String {
    format!("'{}'", p.display().to_string().replace('\'', "'\\''"))
}

#[cfg(test)]
mod tests {
    /// Every crate the notebook's `bach` depends on is analysed by evcxr's rust-analyzer when
    /// a kernel starts, before the first cell can run (name resolution in each crate).
    /// Dropping `ndarray-npy`, `thiserror`, `libc` and `serde_json` from this graph cut the
    /// first cell's wait from 13-17 s to 10-12 s (README, ARCHITECTURE "Start-up"). A new
    /// dependency must be worth its start-up cost: measure with `BACH_KERNEL_TIMING=ra`, then
    /// add it here.
    const NOTEBOOK_GRAPH: &[&str] = &[
        "allocator-api2",
        // ndarray's `approx` (linfa 0.8 asks for it).
        "approx",
        "autocfg",
        "bach",
        // Bach's common f64 instances, shared by the cells (its crate doc): no dependency of
        // its own beyond `bach` and ndarray.
        "bach-instances",
        "bach-runtime",
        // The kernel link (no dependencies).
        "bach-wire",
        "bytemuck",
        "cfg-if",
        "crossbeam-deque",
        "crossbeam-epoch",
        "crossbeam-utils",
        "cudarc",
        "either",
        "equivalent",
        "fixedbitset",
        "foldhash",
        // rand_core's `os_rng` (rand 0.9, ndarray-rand 0.16, rand_distr 0.5 ask for it).
        "getrandom",
        "hashbrown",
        "indexmap",
        // getrandom's, on Linux: 0.41 s of name resolution at start (BACH_KERNEL_TIMING=ra,
        // 2026-11-28, with other work on the machine), the price of rand 0.9 and ndarray-rand
        // 0.16 adding nothing to rebuild (the standby kernel hides most of it).
        "libc",
        "libloading",
        "libm",
        "matrixmultiply",
        "ndarray",
        "num-complex",
        "num-integer",
        "num-traits",
        "petgraph",
        "plotters",
        "plotters-backend",
        "plotters-svg",
        "rand_core",
        "rand_mt",
        "rawpointer",
        "rayon",
        "rayon-core",
        // wide (SIMD sin/cos/asin on the CPU) and its two: name resolution 153 ms together
        // (bytemuck 12, safe_arch 53, wide 88) of a cold first cell's 8.3 s (stop 26).
        "safe_arch",
        "wide",
    ];

    /// Each crate's features as `cargo tree` resolves them for `selection` (`name version` ->
    /// features).
    fn resolved_features(selection: &[&str], edges: &str) -> std::collections::BTreeMap<String, std::collections::BTreeSet<String>> {
        let out = std::process::Command::new(env!("CARGO"))
            .args(["tree", "--locked", "-e", edges, "--prefix", "none", "--format", "{p} {f}"])
            .args(selection)
            .current_dir(super::source_root())
            .output()
            .expect("cargo runs");
        assert!(out.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&out.stderr));
        let mut map = std::collections::BTreeMap::<String, std::collections::BTreeSet<String>>::new();
        for line in String::from_utf8(out.stdout).unwrap().lines() {
            let w: Vec<&str> = line.split_whitespace().collect();
            if w.len() < 2 || !w[1].starts_with('v') {
                continue;
            }
            let features = w.get(2).filter(|f| !f.starts_with('(')).map(|f| f.split(',').map(str::to_string).collect::<Vec<_>>()).unwrap_or_default();
            map.entry(format!("{} {}", w[0], w[1])).or_default().extend(features);
        }
        map
    }

    /// README's first command builds `-p bach-kernel`; the test command's builds take the whole
    /// workspace with its tests. A crate whose features differ between the two is built twice,
    /// with everything above it (serde's `alloc` alone rebuilt evcxr and rust-analyzer), so the
    /// kernel asks for the workspace's features itself (kernel/Cargo.toml).
    #[test]
    fn the_kernel_builds_with_the_workspace_features() {
        let kernel = resolved_features(&["-p", "bach-kernel"], "normal,build");
        let workspace = resolved_features(&["--workspace"], "normal,build,dev");
        let differ: Vec<String> = kernel
            .iter()
            .filter_map(|(k, f)| {
                let w = workspace.get(k)?;
                (w != f).then(|| format!("{k}: the workspace adds {:?}", w.difference(f).collect::<Vec<_>>()))
            })
            .collect();
        assert!(differ.is_empty(), "crates `cargo build -p bach-kernel` builds with other features than the workspace (ask for them in kernel/Cargo.toml): {differ:#?}");
    }

    #[test]
    fn notebook_dependency_graph_stays_small() {
        let out = std::process::Command::new(env!("CARGO"))
            .args(["tree", "--locked", "-p", "bach", "-e", "normal,build", "--prefix", "none", "--format", "{p}"])
            .current_dir(super::source_root())
            .output()
            .expect("cargo runs");
        assert!(out.status.success(), "cargo tree failed: {}", String::from_utf8_lossy(&out.stderr));
        let text = String::from_utf8(out.stdout).unwrap();
        let mut extra: Vec<&str> = text.lines().filter_map(|l| l.split_whitespace().next()).filter(|c| !NOTEBOOK_GRAPH.contains(c)).collect();
        extra.sort();
        extra.dedup();
        assert!(extra.is_empty(), "new crates in the notebook's dependency graph (each slows every kernel's start): {extra:?}");
    }
}

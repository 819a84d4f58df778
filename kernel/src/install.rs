//! `bach-kernel install | uninstall`: a kernelspec named `bach` ("Rust (Bach)") holding its
//! own copy of the binary and of the `bach` crates' sources, so the kernel keeps working when
//! the checkout moves or goes; then one warm-up run compiles the dependencies into the
//! evcxr build template every kernel starts from. Beside it, `bach-emulated` ("Rust (Bach,
//! emulated accelerator)") runs the same binary with `BACH_DEVICE=emulated`: transfers,
//! paging and placement to look at on a machine without a GPU (`notebooks/tour.ipynb`).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use crate::home::{source_root, Home, CRATES};

const LOGO_32: &[u8] = include_bytes!("../../install/logo-32x32.png");
const LOGO_64: &[u8] = include_bytes!("../../install/logo-64x64.png");
const LOGO_SVG: &[u8] = include_bytes!("../../install/logo-svg.svg");

#[derive(Clone, Debug, PartialEq)]
pub enum Location {
    User,
    SysPrefix,
    Prefix(PathBuf),
}

impl Location {
    /// `--user` (default), `--sys-prefix`, `--prefix DIR`.
    pub fn parse(args: &[String]) -> Result<Location, String> {
        let mut loc = Location::User;
        let mut it = args.iter();
        while let Some(a) = it.next() {
            loc = match a.as_str() {
                "--user" => Location::User,
                "--sys-prefix" => Location::SysPrefix,
                "--prefix" => Location::Prefix(PathBuf::from(it.next().ok_or("--prefix needs a directory")?)),
                other => return Err(format!("unknown option `{other}` (use --user, --sys-prefix or --prefix DIR)")),
            };
        }
        Ok(loc)
    }

    /// The Jupyter data directory for this location.
    fn data_dir(&self) -> Result<PathBuf, String> {
        Ok(match self {
            Location::User => {
                if let Some(d) = std::env::var_os("JUPYTER_DATA_DIR") {
                    PathBuf::from(d)
                } else if let Some(d) = std::env::var_os("XDG_DATA_HOME") {
                    PathBuf::from(d).join("jupyter")
                } else {
                    PathBuf::from(std::env::var_os("HOME").ok_or("HOME is not set")?).join(".local/share/jupyter")
                }
            }
            Location::SysPrefix => {
                let prefix = match std::env::var_os("VIRTUAL_ENV") {
                    Some(v) => PathBuf::from(v),
                    None => {
                        let o = Command::new("python3").args(["-c", "import sys; print(sys.prefix)"]).output().map_err(|e| format!("--sys-prefix needs python3: {e}"))?;
                        PathBuf::from(String::from_utf8_lossy(&o.stdout).trim())
                    }
                };
                prefix.join("share/jupyter")
            }
            Location::Prefix(p) => p.join("share/jupyter"),
        })
    }

    /// The kernelspec directory, absolute (the kernelspec and the copied manifests name it).
    pub fn kernel_dir(&self) -> Result<PathBuf, String> {
        let dir = self.data_dir()?.join("kernels/bach");
        std::path::absolute(&dir).map_err(|e| format!("cannot resolve {}: {e}", dir.display()))
    }
}

fn io<T>(what: &str, path: &Path, r: std::io::Result<T>) -> Result<T, String> {
    r.map_err(|e| format!("cannot {what} {}: {e}", path.display()))
}

fn copy_tree(from: &Path, to: &Path) -> Result<(), String> {
    io("create", to, std::fs::create_dir_all(to))?;
    for entry in io("read", from, std::fs::read_dir(from))? {
        let entry = io("read", from, entry)?;
        let dest = to.join(entry.file_name());
        if io("stat", &entry.path(), entry.file_type())?.is_dir() {
            copy_tree(&entry.path(), &dest)?;
        } else {
            io("copy", &entry.path(), std::fs::copy(entry.path(), &dest))?;
        }
    }
    Ok(())
}

/// A member's manifest with the workspace's inherited values filled in and path
/// dependencies pointing at the installed copies: a crate that builds on its own.
fn standalone_manifest(member: &Path, workspace: &toml::Table, installed: &HashMap<String, PathBuf>) -> Result<String, String> {
    let path = member.join("Cargo.toml");
    let text = io("read", &path, std::fs::read_to_string(&path))?;
    let mut m: toml::Table = text.parse().map_err(|e| format!("{}: {e}", path.display()))?;
    let ws = workspace.get("workspace").and_then(|w| w.as_table()).ok_or("the workspace Cargo.toml has no [workspace]")?;
    let inherited = |v: &toml::Value| v.as_table().and_then(|t| t.get("workspace")).and_then(|w| w.as_bool()) == Some(true);
    if let Some(pkg) = m.get_mut("package").and_then(|p| p.as_table_mut()) {
        let wpkg = ws.get("package").and_then(|p| p.as_table()).cloned().unwrap_or_default();
        for (k, v) in pkg.iter_mut() {
            if inherited(v) {
                *v = wpkg.get(k).cloned().ok_or_else(|| format!("workspace.package.{k} is missing"))?;
            }
        }
    }
    let wdeps = ws.get("dependencies").and_then(|d| d.as_table()).cloned().unwrap_or_default();
    if let Some(deps) = m.get_mut("dependencies").and_then(|d| d.as_table_mut()) {
        for (name, spec) in deps.iter_mut() {
            let mut full = if inherited(spec) {
                let mut base = match wdeps.get(name).ok_or_else(|| format!("workspace.dependencies.{name} is missing"))? {
                    toml::Value::String(v) => toml::Table::from_iter([("version".to_string(), toml::Value::String(v.clone()))]),
                    toml::Value::Table(t) => t.clone(),
                    other => return Err(format!("workspace.dependencies.{name}: unexpected {other}")),
                };
                for (k, v) in spec.as_table().expect("inherited specs are tables") {
                    if k != "workspace" {
                        base.insert(k.clone(), v.clone());
                    }
                }
                base
            } else {
                spec.as_table().cloned().unwrap_or_else(|| toml::Table::from_iter([("version".to_string(), spec.clone())]))
            };
            if let Some(p) = installed.get(name) {
                full.insert("path".into(), toml::Value::String(p.display().to_string()));
            }
            *spec = toml::Value::Table(full);
        }
    }
    // Tests, benches and their dependencies stay in the checkout.
    for k in ["dev-dependencies", "bench", "test", "example"] {
        m.remove(k);
    }
    toml::to_string(&m).map_err(|e| e.to_string())
}

/// Install the kernelspec, copy what the kernel needs, and warm its build.
pub fn install(loc: &Location) -> Result<PathBuf, String> {
    let dir = loc.kernel_dir()?;
    if dir.exists() {
        say_stopped(crate::standby::stop_waiting(&dir));
        io("remove", &dir, std::fs::remove_dir_all(&dir))?;
    }
    io("create", &dir, std::fs::create_dir_all(&dir))?;
    let exe = io("find", Path::new("bach-kernel"), std::env::current_exe())?;
    let installed_exe = dir.join("bach-kernel");
    io("copy", &exe, std::fs::copy(&exe, &installed_exe))?;

    let root = source_root();
    let ws_path = root.join("Cargo.toml");
    let workspace: toml::Table = io("read", &ws_path, std::fs::read_to_string(&ws_path))?.parse().map_err(|e| format!("{}: {e}", ws_path.display()))?;
    let installed: HashMap<String, PathBuf> = CRATES.iter().map(|(name, _)| (name.to_string(), dir.join("crates").join(name))).collect();
    for (name, src) in CRATES {
        let to = &installed[*name];
        copy_tree(&root.join(src).join("src"), &to.join("src"))?;
        let manifest = standalone_manifest(&root.join(src), &workspace, &installed)?;
        io("write", to, std::fs::write(to.join("Cargo.toml"), manifest))?;
    }

    let argv = [installed_exe.display().to_string(), "kernel".into(), "--connection-file".into(), "{connection_file}".into()];
    let spec = serde_json::json!({
        "argv": argv,
        "display_name": "Rust (Bach)",
        "language": "rust",
        "interrupt_mode": "message",
        "metadata": { "bach_version": env!("CARGO_PKG_VERSION") },
    });
    write_spec(&dir, &spec)?;
    let emulated = emulated_dir(&dir);
    if emulated.exists() {
        io("remove", &emulated, std::fs::remove_dir_all(&emulated))?;
    }
    let spec = serde_json::json!({
        "argv": argv,
        "display_name": "Rust (Bach, emulated accelerator)",
        "language": "rust",
        "interrupt_mode": "message",
        "env": { "BACH_DEVICE": "emulated" },
        "metadata": { "bach_version": env!("CARGO_PKG_VERSION") },
    });
    write_spec(&emulated, &spec)?;

    // The lock this checkout was tested with: every build of the cells starts from it
    // (`Home::prelude`). Then everything those builds need is downloaded now, while install
    // may reach crates.io; kernels run cargo offline.
    let lock = root.join("Cargo.lock");
    io("copy", &lock, std::fs::copy(&lock, dir.join("Cargo.lock")))?;
    let home = Home::at(dir.clone());
    eprintln!("bach-kernel: downloading the crates the kernel builds with...");
    fetch_notebook_deps(&home, |_| {})?;
    eprintln!("bach-kernel: warming the build (compiles the runtime once; a few minutes the first time)...");
    let status = Command::new(&installed_exe).arg("warm").status().map_err(|e| format!("cannot run {}: {e}", installed_exe.display()))?;
    if !status.success() {
        return Err(format!("warming the kernel's build failed ({status}); see the messages above"));
    }
    Ok(dir)
}

/// Download every crate the notebook's dependencies need, for every target (evcxr's and
/// rust-analyzer's `cargo metadata` want them all, though a build needs only this host's), at
/// the versions of `home`'s tested lock, with `cargo fetch` on a throw-away package depending
/// on what the prelude loads. `configure` adds to the cargo command (tests point it elsewhere).
pub fn fetch_notebook_deps(home: &Home, configure: impl FnOnce(&mut Command)) -> Result<(), String> {
    let pkg = std::env::temp_dir().join(format!("bach-kernel-fetch-{}-{}", std::process::id(), chrono::Utc::now().timestamp_micros()));
    io("create", &pkg, std::fs::create_dir_all(pkg.join("src")))?;
    io("write", &pkg, std::fs::write(pkg.join("src/lib.rs"), ""))?;
    let deps: String = home.notebook_deps().iter().map(|(n, v)| format!("{n} = {v}\n")).collect();
    let manifest = format!("# Written by bach-kernel install to download the kernel's crates.\n[package]\nname = \"bach-kernel-fetch\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\n[dependencies]\n{deps}\n[workspace]\n");
    io("write", &pkg, std::fs::write(pkg.join("Cargo.toml"), manifest))?;
    let tested = home.tested_lock().ok_or_else(|| format!("no Cargo.lock in {}", home.dir.display()))?;
    io("copy", &tested, std::fs::copy(&tested, pkg.join("Cargo.lock")))?;
    let mut cargo = Command::new("cargo");
    cargo.args(["fetch", "--manifest-path"]).arg(pkg.join("Cargo.toml")).env_remove("CARGO_NET_OFFLINE");
    configure(&mut cargo);
    let out = cargo.output().map_err(|e| format!("cannot run cargo: {e}; {}", crate::toolchain::toolchain_problem().unwrap_or_default()))?;
    let result = if out.status.success() {
        same_versions(&pkg.join("Cargo.lock"), &tested)
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        let what = crate::toolchain::undownloaded_crate(&err).unwrap_or_else(|| "the kernel's crates".into());
        Err(format!("could not download {what}: no network? run `bach-kernel install` again when online\n{}", err.trim_end()))
    };
    let _ = std::fs::remove_dir_all(&pkg);
    result
}

/// Every registry package in `resolved` has a version that `tested` pins.
fn same_versions(resolved: &Path, tested: &Path) -> Result<(), String> {
    let packages = |p: &Path| -> Result<Vec<(String, String, bool)>, String> {
        let lock: toml::Table = io("read", p, std::fs::read_to_string(p))?.parse().map_err(|e| format!("{}: {e}", p.display()))?;
        let list = lock.get("package").and_then(|v| v.as_array()).cloned().unwrap_or_default();
        Ok(list
            .iter()
            .map(|pk| {
                let s = |k: &str| pk.get(k).and_then(|v| v.as_str()).unwrap_or_default().to_string();
                (s("name"), s("version"), pk.get("source").is_some())
            })
            .collect())
    };
    let pinned = packages(tested)?;
    let off: Vec<String> =
        packages(resolved)?.into_iter().filter(|(n, v, registry)| *registry && !pinned.iter().any(|(pn, pv, _)| pn == n && pv == v)).map(|(n, v, _)| format!("{n} {v}")).collect();
    match off.is_empty() {
        true => Ok(()),
        false => Err(format!("the kernel's crates resolved to versions this checkout's Cargo.lock does not pin: {}", off.join(", "))),
    }
}

pub fn uninstall(loc: &Location) -> Result<PathBuf, String> {
    let dir = loc.kernel_dir()?;
    if !dir.exists() {
        return Err(format!("no kernel installed at {}", dir.display()));
    }
    say_stopped(crate::standby::stop_waiting(&dir));
    io("remove", &dir, std::fs::remove_dir_all(&dir))?;
    let emulated = emulated_dir(&dir);
    if emulated.exists() {
        io("remove", &emulated, std::fs::remove_dir_all(&emulated))?;
    }
    Ok(dir)
}

/// Waiting standby kernels of the old binary hold memory (about 650 MB each) until they time
/// out: an uninstall or reinstall stops them, and says so.
fn say_stopped(n: usize) {
    if n > 0 {
        eprintln!("stopped {n} waiting standby kernel{} of the previous install", if n == 1 { "" } else { "s" });
    }
}

/// The `bach-emulated` kernelspec beside `bach`'s (it runs `bach`'s binary).
fn emulated_dir(kernel_dir: &Path) -> PathBuf {
    kernel_dir.with_file_name("bach-emulated")
}

/// A kernelspec directory: `kernel.json` and the logos.
fn write_spec(dir: &Path, spec: &serde_json::Value) -> Result<(), String> {
    io("create", dir, std::fs::create_dir_all(dir))?;
    io("write", dir, std::fs::write(dir.join("kernel.json"), serde_json::to_string_pretty(spec).expect("json")))?;
    io("write", dir, std::fs::write(dir.join("logo-32x32.png"), LOGO_32))?;
    io("write", dir, std::fs::write(dir.join("logo-64x64.png"), LOGO_64))?;
    io("write", dir, std::fs::write(dir.join("logo-svg.svg"), LOGO_SVG))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn manifests_become_standalone() {
        let root = source_root();
        let ws: toml::Table = std::fs::read_to_string(root.join("Cargo.toml")).unwrap().parse().unwrap();
        let installed = HashMap::from([("bach-runtime".to_string(), PathBuf::from("/k/crates/bach-runtime"))]);
        let m = standalone_manifest(&root.join("annotations"), &ws, &installed).unwrap();
        assert!(!m.contains("workspace"), "{m}");
        let t: toml::Table = m.parse().unwrap();
        assert_eq!(t["dependencies"]["bach-runtime"]["path"].as_str(), Some("/k/crates/bach-runtime"));
        assert_eq!(t["dependencies"]["ndarray"]["version"].as_str(), Some("0.16"));
        assert!(t.get("dev-dependencies").is_none());
        assert_eq!(t["package"]["version"].as_str(), Some(env!("CARGO_PKG_VERSION")));
    }

    /// Without a registry to reach, install stops at the download and says so plainly.
    #[test]
    fn a_failed_download_says_what_and_what_to_do() {
        let cargo_home = std::env::temp_dir().join(format!("bach-empty-cargo-home-{}", std::process::id()));
        std::fs::create_dir_all(&cargo_home).unwrap();
        let checkout = Home { dir: source_root(), installed: false };
        let err = fetch_notebook_deps(&checkout, |c| {
            // crates.io replaced by a registry nothing listens on: no network, as cargo sees it.
            c.env("CARGO_HOME", &cargo_home)
                .args(["--config", "source.crates-io.replace-with='nowhere'", "--config", "source.nowhere.registry='sparse+http://127.0.0.1:9/index/'"])
                .env("CARGO_NET_RETRY", "0");
        })
        .unwrap_err();
        let _ = std::fs::remove_dir_all(&cargo_home);
        let first = err.lines().next().unwrap();
        assert!(first.starts_with("could not download ") && first.ends_with("no network? run `bach-kernel install` again when online"), "{err}");
        assert!(!first.contains("the kernel's crates") && !first.contains("http"), "names the crate: {err}");
    }

    #[test]
    fn the_notebook_deps_resolve_to_the_tested_versions() {
        let checkout = Home { dir: source_root(), installed: false };
        fetch_notebook_deps(&checkout, |_| {}).expect("the crates the notebook needs download at the versions Cargo.lock pins");
    }

    #[test]
    fn locations_parse() {
        assert_eq!(Location::parse(&[]).unwrap(), Location::User);
        assert_eq!(Location::parse(&["--prefix".into(), "/x".into()]).unwrap(), Location::Prefix("/x".into()));
        assert!(Location::parse(&["--nope".into()]).is_err());
        assert_eq!(Location::Prefix("/x".into()).kernel_dir().unwrap(), PathBuf::from("/x/share/jupyter/kernels/bach"));
        let rel = Location::Prefix("rel".into()).kernel_dir().unwrap();
        assert!(rel.is_absolute() && rel.ends_with("rel/share/jupyter/kernels/bach"), "{}", rel.display());
    }
}

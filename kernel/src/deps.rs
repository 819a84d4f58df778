//! A `:dep` checked before it builds: would it rebuild a crate the session already loaded?
//!
//! Adding a crate can turn on features of a crate the session's code came from (ndarray,
//! bach, what they use). Cargo then rebuilds it and everything above it, the Rust process
//! loads the new copies, and every variable whose type came from the old ones is lost, the
//! Bach session with them (its graph, cached values, device memory). `bach`'s manifest turns
//! on, from the start, the features the common companions ask for; this check catches the
//! rest: it resolves the build's manifest with the new dependencies (`cargo metadata`, which
//! builds nothing) and compares each loaded crate's features with today's.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// A crate of the session that the new dependencies would rebuild.
#[derive(Debug, PartialEq)]
pub struct Rebuilt {
    /// `name version`.
    pub krate: String,
    /// Features the new dependencies turn on.
    pub added: Vec<String>,
    /// Whether `bach` depends on it (or is it): rebuilding it would lose the Bach session.
    pub session: bool,
}

/// What a cell's `:dep` lines would do to the build.
#[derive(Debug, Default)]
pub struct DepCheck {
    /// Crates of the session whose features they change.
    pub rebuilt: Vec<Rebuilt>,
    /// Whether the build would then have `evcxr_runtime`, the crate through which display
    /// crates (evcxr_image...) give values an `evcxr_display` of their own.
    pub display_crate: bool,
}

/// A resolved build: each package (`name version`) with its features, and the packages
/// `bach` depends on, itself included.
#[derive(Debug, Default)]
struct Resolved {
    features: BTreeMap<String, Vec<String>>,
    under_bach: std::collections::BTreeSet<String>,
}

/// The `[dependencies]` lines of a cell's `:dep` commands (`:dep foo = "1"` -> `foo = "1"`;
/// `:dep foo` -> `foo = "*"`, as evcxr reads it) and of its `extern crate foo;` items that
/// name no crate the build has yet (`known`: the names of the build's dependencies), which
/// evcxr adds as `foo = "*"`.
pub fn dependency_lines(cell: &str, known: &[String]) -> Vec<String> {
    let deps = cell.lines().filter_map(|l| l.trim_start().strip_prefix(":dep ")).map(str::trim).filter(|d| !d.is_empty());
    let deps: Vec<String> = deps.map(|d| if d.contains('=') { d.to_string() } else { format!("{d} = \"*\"") }).collect();
    // An `extern crate` of a crate the cell's own `:dep` adds (or the build has) adds nothing.
    let named: Vec<String> = deps.iter().map(|d| d.split('=').next().unwrap_or("").trim().replace('-', "_")).chain(known.iter().map(|k| k.replace('-', "_"))).collect();
    let externs = cell.lines().filter_map(extern_crate).filter(|c| !named.iter().any(|k| k == c)).map(|c| format!("{c} = \"*\""));
    deps.into_iter().chain(externs).collect()
}

/// The crate an `extern crate foo;` line names (not the toolchain's own crates).
pub fn extern_crate(line: &str) -> Option<&str> {
    let rest = line.trim().strip_prefix("extern crate ")?;
    let name = rest.split(|c: char| !(c.is_alphanumeric() || c == '_')).next()?;
    (!name.is_empty() && !["std", "core", "alloc", "proc_macro", "test", "self"].contains(&name)).then_some(name)
}

/// The names in the `[dependencies]` table of a manifest.
pub fn dependency_names(manifest: &str) -> Vec<String> {
    let mut in_table = false;
    let mut names = vec![];
    for line in manifest.lines().map(str::trim) {
        if line.starts_with('[') {
            in_table = line == "[dependencies]";
        } else if let (true, Some((name, _))) = (in_table, line.split_once('=')) {
            names.push(name.trim().trim_matches('"').to_string());
        }
    }
    names
}

/// A `:dep` line as cargo of this toolchain reads it: the 2018-era key `default_features`
/// (which evcxr's edition-2024 manifest refuses) is written `default-features`. Returns the
/// line and whether it changed.
pub fn modern_dep_line(line: &str) -> (String, bool) {
    if line.trim_start().starts_with(":dep ") && line.contains("default_features") {
        (line.replace("default_features", "default-features"), true)
    } else {
        (line.to_string(), false)
    }
}

/// What `deps` would do to the build whose manifest and lock are `manifest` and `lock` (the
/// last state that built: a failed `:dep` leaves evcxr's check manifest behind in the build
/// directory): which crates' features or versions they change, and whether a display crate
/// comes in. Runs `cargo tree` before and after in `scratch` (made and removed here). An
/// error says why the check could not run: [`CheckError::Dependency`] when cargo cannot
/// resolve the new lines themselves (no such crate, version or feature).
pub fn check(scratch: &Path, manifest: &Path, lock: &Path, deps: &[String]) -> Result<DepCheck, CheckError> {
    let setup = CheckError::Setup;
    let manifest = std::fs::read_to_string(manifest).map_err(|e| setup(format!("cannot read the build's manifest {}: {e}", manifest.display())))?;
    let _ = std::fs::remove_dir_all(scratch);
    std::fs::create_dir_all(scratch.join("src")).map_err(|e| setup(format!("cannot create {}: {e}", scratch.display())))?;
    let result = (|| {
        std::fs::write(scratch.join("src/lib.rs"), "").map_err(|e| setup(e.to_string()))?;
        if lock.exists() {
            std::fs::copy(lock, scratch.join("Cargo.lock")).map_err(|e| setup(e.to_string()))?;
        }
        std::fs::write(scratch.join("Cargo.toml"), &manifest).map_err(|e| setup(e.to_string()))?;
        let before = features(scratch).map_err(|e| setup(format!("cargo cannot resolve the build as it is: {e}")))?;
        std::fs::write(scratch.join("Cargo.toml"), with_dependencies(&manifest, deps)).map_err(|e| setup(e.to_string()))?;
        let after = features(scratch).map_err(CheckError::Dependency)?;
        let display_crate = after.features.keys().any(|p| p.starts_with("evcxr_runtime "));
        Ok(DepCheck { rebuilt: compare(&before, &after), display_crate })
    })();
    let _ = std::fs::remove_dir_all(scratch);
    result
}

/// Why a `:dep` could not be checked.
#[derive(Debug)]
pub enum CheckError {
    /// The check itself could not run (cargo, the files, the build as it is).
    Setup(String),
    /// Cargo cannot resolve the new dependency lines (its words).
    Dependency(String),
}

/// `manifest` with `deps` in its `[dependencies]` table (a new one if it has none), each
/// replacing the line of the same crate, as evcxr does.
fn with_dependencies(manifest: &str, deps: &[String]) -> String {
    let key = |line: &str| line.split('=').next().unwrap_or("").trim().to_string();
    let added: String = deps.iter().map(|d| format!("{d}\n")).collect();
    let manifest = &format!("\n{manifest}");
    let text = match manifest.find("\n[dependencies]\n") {
        Some(at) => {
            let at = at + "\n[dependencies]\n".len();
            let mut rest = String::new();
            let mut in_table = true;
            for line in manifest[at..].split_inclusive('\n') {
                in_table &= !line.trim_start().starts_with('[');
                if !(in_table && deps.iter().any(|d| key(d) == key(line))) {
                    rest.push_str(line);
                }
            }
            format!("{}{added}{rest}", &manifest[..at])
        }
        None => format!("{manifest}\n[dependencies]\n{added}"),
    };
    text[1..].to_string()
}

/// This machine's target triple (`rustc -vV`'s `host:`), asked once per kernel.
fn host_triple() -> Result<String, String> {
    static HOST: std::sync::OnceLock<Result<String, String>> = std::sync::OnceLock::new();
    HOST.get_or_init(|| {
        let out = Command::new("rustc").arg("-vV").output().map_err(|e| format!("cannot run rustc: {e}"))?;
        String::from_utf8_lossy(&out.stdout).lines().find_map(|l| l.strip_prefix("host: ")).map(|h| h.trim().to_string()).ok_or_else(|| "rustc -vV names no host".to_string())
    })
    .clone()
}

/// The build of the manifest in `dir` as cargo would make it on this machine, from
/// `cargo tree` (cargo's own feature resolver: `cargo metadata` reports a union over every
/// target and optional dependency, and named crates no build here loads, such as plotters'
/// web-sys on wasm or a serde that petgraph never turns on).
fn features(dir: &Path) -> Result<Resolved, String> {
    let host = host_triple()?;
    // Online first (the new crate may not be in cargo's copy of the index yet); offline when
    // the registry cannot be reached and cargo's cache holds what is needed.
    let tree = |root: Option<&str>, format: &str| -> Result<String, String> {
        let mut errors = vec![];
        for offline in ["net.offline=false", "net.offline=true"] {
            let mut cmd = Command::new("cargo");
            cmd.args(["tree", "--config", offline, "-e", "normal,build", "--target", &host, "--prefix", "none", "--format", format]);
            if let Some(r) = root {
                cmd.args(["-p", r]);
            }
            let out = cmd.current_dir(dir).output().map_err(|e| format!("cannot run cargo: {e}"))?;
            if out.status.success() {
                return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
            }
            let err = String::from_utf8_lossy(&out.stderr);
            let said: Vec<&str> = err.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with("Updating") && !l.starts_with("Locking")).take(6).collect();
            errors.push(said.join("\n"));
        }
        Err(errors.swap_remove(0))
    };
    let all = tree(None, "{p}|{f}")?;
    // The session's crates: `bach` and what it loads (none when the build has no `bach`).
    let under = if all.lines().any(|l| l.starts_with("bach v")) { tree(Some("bach"), "{p}")? } else { String::new() };
    Ok(parse_tree(&all, &under))
}

/// `name version` of a `cargo tree` package (`serde v1.0.2 (proc-macro) (*)`).
fn package(text: &str) -> Option<String> {
    let mut words = text.split_whitespace();
    let (name, version) = (words.next()?, words.next()?.strip_prefix('v')?);
    Some(format!("{name} {version}"))
}

/// The packages and features of `cargo tree --format "{p}|{f}"` lines, and the packages of
/// `under` (`--format "{p}"` from `bach`).
fn parse_tree(all: &str, under: &str) -> Resolved {
    let mut r = Resolved::default();
    for line in all.lines() {
        // A package shown before ends in " (*)".
        let line = line.trim_end().trim_end_matches("(*)").trim_end();
        let (p, f) = line.split_once('|').unwrap_or((line, ""));
        let Some(name) = package(p) else { continue };
        let mut f: Vec<String> = f.split(',').map(str::trim).filter(|x| !x.is_empty()).map(str::to_string).collect();
        f.sort();
        r.features.insert(name, f);
    }
    r.under_bach = under.lines().filter_map(package).collect();
    r
}

/// Packages of `before` whose features changed in `after`, or that moved to another version
/// (the lock pins versions, but a build resolved afresh does not). A package that went with
/// no other version of it coming is not rebuilt: the loaded copy stays; a new package is new.
fn compare(before: &Resolved, after: &Resolved) -> Vec<Rebuilt> {
    let name_of = |p: &str| p.split(' ').next().unwrap_or(p).to_string();
    before
        .features
        .iter()
        .filter(|(name, _)| !name.starts_with("ctx "))
        .filter_map(|(name, f)| {
            let session = before.under_bach.contains(name);
            let Some(now) = after.features.get(name) else {
                let to = after.features.keys().find(|p| name_of(p) == name_of(name) && !before.features.contains_key(*p))?;
                return Some(Rebuilt { krate: name.clone(), added: vec![format!("version {}", to.split(' ').nth(1).unwrap_or("?"))], session });
            };
            let added: Vec<String> = now.iter().filter(|x| !f.contains(x)).cloned().collect();
            (now != f).then(|| Rebuilt { krate: name.clone(), added, session })
        })
        .collect()
}

/// The note for a `:dep` that rebuilds crates outside the Bach session's (a companion added
/// earlier): values whose types came from them go, evcxr names them.
pub fn note(rebuilt: &[Rebuilt]) -> String {
    let list: Vec<String> = rebuilt.iter().map(|r| format!("{} (features {})", r.krate, r.added.join(", "))).collect();
    format!("bach-kernel: this `:dep` rebuilds {}, loaded by a crate added earlier; values whose types came from them are lost (the Bach session is not)\n", list.join(", "))
}

/// What the kernel says before a `:dep` that rebuilds crates the Bach session is built on:
/// which crates, which features, and that the session is saved and brought back.
pub fn rebuild_note(rebuilt: &[Rebuilt]) -> String {
    let list: Vec<String> = rebuilt
        .iter()
        .filter(|r| r.session)
        .map(|r| match r.added.is_empty() {
            true => format!("{} (other features)", r.krate),
            false => format!("{} ({})", r.krate, r.added.iter().map(|a| if a.starts_with("version ") { a.clone() } else { format!("+{a}") }).collect::<Vec<_>>().join(", ")),
        })
        .collect();
    let what = if list.is_empty() { "Bach (`:bach rebuild`)".to_string() } else { list.join(", ") };
    format!(
        "bach-kernel: this `:dep` rebuilds crates the Bach session is built on: {what}. Cargo builds a crate once per feature set, so the Rust process loads new copies of them and of everything above them (ndarray, bach). The session's arrays and settings are saved first and brought back after the build.\n"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dep_commands_become_manifest_lines() {
        let cell = ":dep ndarray-stats = \"0.6\"\n  :dep foo\n:dep bar = { version = \"1\", features = [\"x\"] }\nlet dep = 1;";
        assert_eq!(dependency_lines(cell, &[]), vec!["ndarray-stats = \"0.6\"", "foo = \"*\"", "bar = { version = \"1\", features = [\"x\"] }"]);
        assert_eq!(dependency_lines("extern crate rand_core;\nextern crate itoa as i;\nextern crate std;", &["rand-core".into()]), vec!["itoa = \"*\""]);
        assert_eq!(dependency_lines(":dep rand = { version = \"0.6.5\" }\nextern crate rand;", &[]), vec!["rand = { version = \"0.6.5\" }"]);
        assert_eq!(dependency_names("[package]\nname = \"ctx\"\n[dependencies]\nbach = { path = \"/b\" }\n\"nd\" = \"1\"\n[lib]\npath = \"x\"\n"), ["bach", "nd"]);
        let m = "[package]\nname = \"ctx\"\n\n[dependencies]\nbach = { path = \"/b\" }\n";
        assert_eq!(with_dependencies(m, &["foo = \"1\"".into()]), "[package]\nname = \"ctx\"\n\n[dependencies]\nfoo = \"1\"\nbach = { path = \"/b\" }\n");
        assert_eq!(with_dependencies("[package]\n", &["foo = \"1\"".into()]), "[package]\n\n[dependencies]\nfoo = \"1\"\n");
        assert_eq!(
            with_dependencies("[dependencies]\nfoo = \"1\"\nbar = \"2\"\n", &["foo = { version = \"1\", features = [\"x\"] }".into()]),
            "[dependencies]\nfoo = { version = \"1\", features = [\"x\"] }\nbar = \"2\"\n"
        );
    }

    #[test]
    fn only_loaded_crates_whose_features_change_are_rebuilt() {
        let before = parse_tree(
            "ctx v1.0.0 (/tmp/build)|\nbach v0.1.0 (/k/crates/bach)|default\nindexmap v1.0.0|std\nndarray v1.0.0|std\nrand v1.0.0|std\nserde_derive v1.0.2 (proc-macro)|default\nindexmap v1.0.0|std (*)\n",
            "bach v0.1.0 (/k/crates/bach)\nindexmap v1.0.0\nndarray v1.0.0\n",
        );
        assert_eq!(before.features["serde_derive 1.0.2"], ["default"]);
        let after = parse_tree("ctx v1.0.0 (/tmp/build)|x\nindexmap v1.0.0|default,std\nndarray v1.0.0|std\nrand v1.0.0|small_rng,std\nstats v1.0.0|\n", "");
        assert_eq!(
            compare(&before, &after),
            vec![
                Rebuilt { krate: "indexmap 1.0.0".into(), added: vec!["default".into()], session: true },
                Rebuilt { krate: "rand 1.0.0".into(), added: vec!["small_rng".into()], session: false }
            ]
        );
        assert!(compare(&before, &before).is_empty());
        let text = rebuild_note(&compare(&before, &after));
        assert!(text.contains("indexmap 1.0.0 (+default)") && !text.contains("rand"), "{text}");
        // A crate of the session that moves to another version is rebuilt too.
        let moved = parse_tree("indexmap v1.0.1|std\nndarray v1.0.0|std\n", "");
        assert_eq!(compare(&before, &moved)[0], Rebuilt { krate: "indexmap 1.0.0".into(), added: vec!["version 1.0.1".into()], session: true });
    }

    /// Real cargo on a real manifest: turning on a feature of a dependency is caught. Needs
    /// num-traits in cargo's cache or the network (the workspace depends on it).
    #[test]
    fn cargo_metadata_sees_a_feature_turned_on() {
        let dir = std::env::temp_dir().join(format!("bach-depcheck-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let build = dir.join("build");
        std::fs::create_dir_all(build.join("src")).unwrap();
        std::fs::write(build.join("src/lib.rs"), "").unwrap();
        std::fs::write(
            build.join("Cargo.toml"),
            "[package]\nname = \"ctx\"\nversion = \"1.0.0\"\nedition = \"2021\"\n\n[dependencies]\nnum-traits = { version = \"0.2\", default-features = false }\n",
        )
        .unwrap();
        let scratch = dir.join("scratch");
        let c = check(&scratch, &build.join("Cargo.toml"), &build.join("Cargo.lock"), &["num-traits = \"0.2\"".into()]).unwrap();
        let r = c.rebuilt;
        assert!(!c.display_crate);
        assert_eq!(r.len(), 1, "{r:?}");
        assert!(r[0].krate.starts_with("num-traits ") && r[0].added.contains(&"std".to_string()) && !r[0].session, "{r:?}");
        // A package only another target builds (as plotters' web-sys on wasm) is not rebuilt
        // here, whatever its features.
        std::fs::write(
            build.join("Cargo.toml"),
            "[package]\nname = \"ctx\"\nversion = \"1.0.0\"\nedition = \"2021\"\n\n[target.'cfg(target_arch = \"wasm32\")'.dependencies]\nnum-traits = { version = \"0.2\", default-features = false }\n",
        )
        .unwrap();
        let _ = std::fs::remove_file(build.join("Cargo.lock"));
        let c = check(&scratch, &build.join("Cargo.toml"), &build.join("Cargo.lock"), &["num-traits = \"0.2\"".into()]).unwrap();
        assert!(c.rebuilt.is_empty(), "{:?}", c.rebuilt);
        // A line cargo cannot resolve is the dependency's fault, said in cargo's words.
        match check(&scratch, &build.join("Cargo.toml"), &build.join("Cargo.lock"), &["num-traits = { version = \"0.2\", features = [\"no-such-feature\"] }".into()]) {
            Err(CheckError::Dependency(e)) => assert!(e.contains("no-such-feature"), "{e}"),
            other => panic!("{other:?}"),
        }
        // A build that cannot be resolved as it is cannot be checked.
        std::fs::write(
            build.join("Cargo.toml"),
            "[package]\nname = \"ctx\"\nversion = \"1.0.0\"\nedition = \"2024\"\n[dependencies]\nnum-traits = { version = \"0.2\", default_features = false }\n",
        )
        .unwrap();
        assert!(matches!(check(&scratch, &build.join("Cargo.toml"), &build.join("Cargo.lock"), &["itoa = \"1\"".into()]), Err(CheckError::Setup(_))));
        let _ = std::fs::remove_dir_all(&dir);
    }
}

/// The crates notebooks add, as their `:dep` lines say it, checked against what the registry
/// resolves today: none may rebuild a crate the Bach session is built on (so none costs a
/// rebuild of the Bach stack), except the few whose features cannot be had without one, each
/// named with why. Run by `cargo test` (needs crates.io); CI runs it from an empty cargo home.
#[cfg(test)]
mod notebook_crates {
    use super::*;

    /// README's companions, plotters as its evcxr tutorial asks for it, and the crates the
    /// public notebooks in tests/notebooks/public use.
    const ADD_NOTHING: &[&str] = &[
        r#"itoa = "1""#,
        r#"ndarray = "0.16""#,
        r#"ndarray-stats = "0.6""#,
        r#"ndarray-rand = "0.15""#,
        r#"ndarray-rand = "0.16""#,
        r#"ndarray-npy = "0.9""#,
        r#"rand = "0.8""#,
        r#"rand = "0.9""#,
        r#"rand_distr = "0.4""#,
        r#"rand_distr = "0.5""#,
        r#"statrs = "0.18""#,
        r#"nalgebra = "0.33""#,
        r#"nalgebra = "0.34""#,
        r#"linfa = "0.7""#,
        r#"linfa-clustering = "0.7""#,
        r#"linfa = "0.8""#,
        r#"linfa-clustering = "0.8""#,
        r#"linfa-linear = "0.8""#,
        r#"linfa-logistic = "0.8""#,
        r#"linfa-trees = "0.8""#,
        r#"linfa-reduction = "0.8""#,
        r#"smartcore = "0.4""#,
        r#"smartcore = { version = "0.5.0" }"#,
        r#"blas-src = { version = "0.14.0", features = ["openblas"] }"#,
        r#"rustfft = "6""#,
        r#"argmin = "0.10""#,
        r#"itertools = "0.14""#,
        r#"rayon = "1""#,
        r#"chrono = "0.4""#,
        r#"serde = { version = "1", features = ["derive"] }"#,
        r#"serde_json = "1""#,
        r#"csv = "1""#,
        r#"tokio = { version = "1", features = ["full"] }"#,
        r#"approx = "0.5""#,
        r#"num = "0.4""#,
        r#"image = "0.25""#,
        r#"evcxr_image = "1""#,
        r#"plotters = { version = "^0.3.0", default-features = false, features = ["evcxr", "all_series"] }"#,
        r#"plotters = { version = "0.3", default-features = false, features = ["evcxr", "all_series", "all_elements", "full_palette", "colormaps", "svg_backend"] }"#,
    ];

    /// Crates whose features cannot be had without rebuilding the Bach stack: the kernel saves
    /// the session's arrays and settings and brings them back (evcxr_engine.rs). With why.
    const REBUILD: &[(&str, &str)] = &[
        // Bitmap backends and system fonts (font-kit, freetype): each notebook pays ~40 s to
        // build them, and every kernel would, for charts Bach draws as SVG.
        (r#"plotters = "0.3""#, "plotters"),
        // ndarray's `blas` feature sends every matrix product to a BLAS library that must be
        // linked: Bach cannot build with it on a machine without one.
        (r#"ndarray-linalg = "0.17""#, "ndarray"),
        // num-complex's `rand` and `serde`: rand 0.8 and serde (then serde's derive macros,
        // which other notebook crates ask of it) in every kernel's graph. Its OpenBLAS build
        // takes minutes anyway.
        (r#"ndarray-linalg = { version = "0.18.1", features = ["openblas-static"] }"#, "num-complex"),
        // serde (and derive macros) in every kernel's graph for hashbrown's and indexmap's
        // `serde`; polars itself takes minutes to build.
        (r#"polars = { version = "0.46", default-features = false, features = ["fmt"] }"#, "indexmap"),
    ];

    fn notebook_build(dir: &Path) -> (std::path::PathBuf, std::path::PathBuf) {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
        std::fs::create_dir_all(dir).unwrap();
        let manifest = dir.join("Cargo.toml");
        // The manifest the kernel's prelude gives the cells' crate (home.rs: `notebook_deps`),
        // with this checkout's lock, as `install` warms it.
        std::fs::write(
            &manifest,
            format!(
                "[package]\nname = \"ctx\"\nversion = \"1.0.0\"\nedition = \"2024\"\n\n[lib]\npath = \"src/lib.rs\"\n\n[dependencies]\nbach = {{ path = {:?} }}\nndarray = \"0.16\"\n",
                root.join("annotations").display().to_string()
            ),
        )
        .unwrap();
        (manifest, root.join("Cargo.lock"))
    }

    #[test]
    fn notebook_crates_rebuild_nothing_of_bach() {
        let dir = std::env::temp_dir().join(format!("bach-notebook-crates-{}", std::process::id()));
        let (manifest, lock) = notebook_build(&dir);
        let all: Vec<(&str, Option<&str>)> = ADD_NOTHING.iter().map(|d| (*d, None)).chain(REBUILD.iter().map(|(d, k)| (*d, Some(*k)))).collect();
        // Four at a time (each check is two `cargo tree`s, mostly waiting on the registry).
        let results: Vec<(String, Result<DepCheck, CheckError>)> = std::thread::scope(|s| {
            let chunks: Vec<_> = all
                .chunks(all.len().div_ceil(4))
                .enumerate()
                .map(|(i, chunk)| {
                    let (dir, manifest, lock) = (&dir, &manifest, &lock);
                    s.spawn(move || chunk.iter().map(|(d, _)| (d.to_string(), check(&dir.join(format!("scratch{i}")), manifest, lock, &[d.to_string()]))).collect::<Vec<_>>())
                })
                .collect();
            chunks.into_iter().flat_map(|c| c.join().unwrap()).collect()
        });
        let _ = std::fs::remove_dir_all(&dir);
        let mut wrong = vec![];
        for ((line, expected), (_, result)) in all.iter().zip(&results) {
            match (result, expected) {
                (Err(e), _) => wrong.push(format!("{line}: the check could not run: {e:?}")),
                (Ok(c), None) if !c.rebuilt.is_empty() => wrong.push(format!("{line}: rebuilds {:?}", c.rebuilt)),
                (Ok(c), Some(krate)) if !c.rebuilt.iter().any(|r| r.session && r.krate.starts_with(&format!("{krate} "))) => {
                    wrong.push(format!("{line}: expected to rebuild {krate} (the session is saved then); it rebuilds {:?}: move it to ADD_NOTHING", c.rebuilt))
                }
                _ => {}
            }
        }
        assert!(wrong.is_empty(), "notebook crates and the Bach stack:\n{}", wrong.join("\n"));
    }
}

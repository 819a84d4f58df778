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
/// `:dep foo` -> `foo = "*"`, as evcxr reads it).
pub fn dependency_lines(cell: &str) -> Vec<String> {
    cell.lines()
        .filter_map(|l| l.trim_start().strip_prefix(":dep "))
        .map(str::trim)
        .filter(|d| !d.is_empty())
        .map(|d| if d.contains('=') { d.to_string() } else { format!("{d} = \"*\"") })
        .collect()
}

/// What `deps` would do to the build in `build` (evcxr's build directory, its `Cargo.toml` and
/// lock as the last cell left them): which crates' features they change, and whether a
/// display crate comes in. Runs `cargo tree` before and after in a scratch directory beside
/// `build`;
/// an error says why the check could not run.
pub fn check(build: &Path, deps: &[String]) -> Result<DepCheck, String> {
    let manifest = std::fs::read_to_string(build.join("Cargo.toml")).map_err(|e| format!("cannot read the build's Cargo.toml: {e}"))?;
    let scratch = build.with_extension("depcheck");
    let _ = std::fs::remove_dir_all(&scratch);
    std::fs::create_dir_all(scratch.join("src")).map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    let result = (|| {
        std::fs::write(scratch.join("src/lib.rs"), "").map_err(|e| e.to_string())?;
        if build.join("Cargo.lock").exists() {
            std::fs::copy(build.join("Cargo.lock"), scratch.join("Cargo.lock")).map_err(|e| e.to_string())?;
        }
        std::fs::write(scratch.join("Cargo.toml"), &manifest).map_err(|e| e.to_string())?;
        let before = features(&scratch)?;
        std::fs::write(scratch.join("Cargo.toml"), with_dependencies(&manifest, deps)).map_err(|e| e.to_string())?;
        let after = features(&scratch)?;
        let display_crate = after.features.keys().any(|p| p.starts_with("evcxr_runtime "));
        Ok(DepCheck { rebuilt: compare(&before, &after), display_crate })
    })();
    let _ = std::fs::remove_dir_all(&scratch);
    result
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
    let tree = |root: Option<&str>, format: &str| -> Result<String, String> {
        let mut cmd = Command::new("cargo");
        cmd.args(["tree", "--config", "net.offline=false", "-e", "normal,build", "--target", &host, "--prefix", "none", "--format", format]);
        if let Some(r) = root {
            cmd.args(["-p", r]);
        }
        let out = cmd.current_dir(dir).output().map_err(|e| format!("cannot run cargo: {e}"))?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(err.lines().filter(|l| l.contains("error")).take(3).collect::<Vec<_>>().join(" ").trim().to_string());
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
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

/// Packages of `before` whose features changed in `after`. (A package that went is not
/// rebuilt: the loaded copy stays; a new package is new.)
fn compare(before: &Resolved, after: &Resolved) -> Vec<Rebuilt> {
    before
        .features
        .iter()
        .filter(|(name, _)| !name.starts_with("ctx "))
        .filter_map(|(name, f)| {
            let now = after.features.get(name)?;
            let added: Vec<String> = now.iter().filter(|x| !f.contains(x)).cloned().collect();
            (now != f).then(|| Rebuilt { krate: name.clone(), added, session: before.under_bach.contains(name) })
        })
        .collect()
}

/// The note for a `:dep` that rebuilds crates outside the Bach session's (a companion added
/// earlier): values whose types came from them go, evcxr names them.
pub fn note(rebuilt: &[Rebuilt]) -> String {
    let list: Vec<String> = rebuilt.iter().map(|r| format!("{} (features {})", r.krate, r.added.join(", "))).collect();
    format!("bach-kernel: this `:dep` rebuilds {}, loaded by a crate added earlier; values whose types came from them are lost (the Bach session is not)\n", list.join(", "))
}

/// What the kernel says instead of building: which crates, which features, what would be lost.
pub fn refusal(rebuilt: &[Rebuilt], variables: &[String]) -> Vec<String> {
    let mut lines = vec!["This `:dep` would rebuild crates the Bach session is built on, and lose what came from them:".to_string()];
    for r in rebuilt.iter().filter(|r| r.session) {
        let added = if r.added.is_empty() { "other features".to_string() } else { format!("features {}", r.added.join(", ")) };
        lines.push(format!("  {} ({added})", r.krate));
    }
    let lost = if variables.is_empty() { "the Bach session".to_string() } else { format!("the Bach session and {}", variables.join(", ")) };
    lines.push(format!(
        "Cargo builds each crate once per feature set, so the Rust process would load new copies of them and everything above them (ndarray, bach): {lost} would be lost."
    ));
    lines.push("Nothing was built. Ask for the crate without those features (e.g. `default-features = false, features = [...]`),".into());
    lines.push("or add `:bach rebuild` to the cell to add it anyway (the session restarts), or add it in a new kernel's first cell.".into());
    lines
}

/// Whether a `name: type` variable's type names a type from a crate (not only the standard
/// library's containers and numbers): such a value goes when that crate is rebuilt.
pub fn type_from_a_crate(variable: &str) -> bool {
    const STD: &[&str] = &[
        "Vec", "String", "Option", "Result", "Box", "HashMap", "HashSet", "BTreeMap", "BTreeSet", "VecDeque", "Rc", "Arc", "Mutex", "RwLock", "RefCell", "Cell", "Duration",
        "Instant", "PathBuf",
    ];
    let ty = variable.split_once(':').map_or(variable, |(_, t)| t);
    ty.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|w| w.starts_with(|c: char| c.is_ascii_uppercase()) && !STD.contains(&w))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dep_commands_become_manifest_lines() {
        let cell = ":dep ndarray-stats = \"0.6\"\n  :dep foo\n:dep bar = { version = \"1\", features = [\"x\"] }\nlet dep = 1;";
        assert_eq!(dependency_lines(cell), vec!["ndarray-stats = \"0.6\"", "foo = \"*\"", "bar = { version = \"1\", features = [\"x\"] }"]);
        let m = "[package]\nname = \"ctx\"\n\n[dependencies]\nbach = { path = \"/b\" }\n";
        assert_eq!(with_dependencies(m, &["foo = \"1\"".into()]), "[package]\nname = \"ctx\"\n\n[dependencies]\nfoo = \"1\"\nbach = { path = \"/b\" }\n");
        assert_eq!(with_dependencies("[package]\n", &["foo = \"1\"".into()]), "[package]\n\n[dependencies]\nfoo = \"1\"\n");
        assert_eq!(
            with_dependencies("[dependencies]\nfoo = \"1\"\nbar = \"2\"\n", &["foo = { version = \"1\", features = [\"x\"] }".into()]),
            "[dependencies]\nfoo = { version = \"1\", features = [\"x\"] }\nbar = \"2\"\n"
        );
    }

    #[test]
    fn values_of_crate_types_are_the_ones_lost() {
        assert!(type_from_a_crate("a: ArrayBase<OwnedRepr<f64>, Dim<[usize; 1]>>"));
        assert!(type_from_a_crate("s: bach::notebook::NotebookSession"));
        assert!(!type_from_a_crate("v: Vec<i32>"));
        assert!(!type_from_a_crate("m: std::collections::HashMap<String, Vec<f64>>"));
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
        let text = refusal(&compare(&before, &after), &["a: Array1<f64>".into()]).join("\n");
        assert!(text.contains("indexmap 1.0.0 (features default)") && text.contains("the Bach session and a: Array1<f64>") && !text.contains("rand"), "{text}");
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
        let c = check(&build, &["num-traits = \"0.2\"".into()]).unwrap();
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
        let c = check(&build, &["num-traits = \"0.2\"".into()]).unwrap();
        assert!(c.rebuilt.is_empty(), "{:?}", c.rebuilt);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

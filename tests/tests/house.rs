//! The house's invariants that ARCHITECTURE.md states about its crates and the kernel link,
//! held against the manifests and the sources:
//! - the crates stand in layers (`bach-wire`; `bach-runtime`; `bach`; then `bach-instances`,
//!   the kernel, the bench and these tests), each depending only on layers below it: no crate cycle;
//! - `bach-wire` has no dependencies (it sits in every notebook's graph);
//! - only the kernel speaks zeromq, and only the kernel and `bach` speak the kernel link;
//! - the link's markers, its socket variable and evcxr's content marker are spelt in
//!   `bach-wire` alone.

use std::path::{Path, PathBuf};

/// The workspace's crates: (folder, package name, layer).
const CRATES: [(&str, &str, usize); 7] = [
    ("wire", "bach-wire", 0),
    ("runtime", "bach-runtime", 1),
    ("annotations", "bach", 2),
    ("instances", "bach-instances", 3),
    ("kernel", "bach-kernel", 3),
    ("bench", "bach-bench", 3),
    ("tests", "bach-tests", 3),
];

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).parent().expect("tests/ sits in the workspace").to_path_buf()
}

/// Every dependency a crate's manifest names (normal, dev, build, per target).
fn dependencies(folder: &str) -> Vec<String> {
    let text = std::fs::read_to_string(root().join(folder).join("Cargo.toml")).unwrap();
    let mut section = "";
    let mut out = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with('[') {
            section = line;
        } else if section.ends_with("dependencies]") && !line.starts_with('#') {
            if let Some((name, _)) = line.split_once('=') {
                out.push(name.trim().trim_end_matches(".workspace").to_string());
            }
        }
    }
    out
}

#[test]
fn the_crates_stand_in_layers_with_no_cycle() {
    let mut edges = 0;
    for (folder, name, layer) in CRATES {
        for dep in dependencies(folder) {
            if let Some((_, _, below)) = CRATES.iter().find(|(_, n, _)| *n == dep) {
                assert!(*below < layer, "{name} depends on {dep}, which is not on a layer below it");
                edges += 1;
            }
        }
    }
    assert!(edges >= 8, "the manifests were not read: {edges} edges between the crates");
}

#[test]
fn the_wire_crate_has_no_dependencies_and_only_the_kernel_speaks_zeromq() {
    assert_eq!(dependencies("wire"), Vec::<String>::new());
    for (folder, name, _) in CRATES {
        let deps = dependencies(folder);
        assert_eq!(deps.iter().any(|d| d.starts_with("zeromq") || d == "zmq"), name == "bach-kernel", "{name}: {deps:?}");
        let speaks_link = deps.iter().any(|d| d == "bach-wire");
        assert!(!speaks_link || ["bach", "bach-kernel", "bach-tests"].contains(&name), "{name} depends on bach-wire");
    }
}

/// The `.rs` files under `dir`, each with its code up to its tests module (no comments).
fn sources(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let text = std::fs::read_to_string(&path).unwrap();
            let before_tests = text.split("#[cfg(test)]").next().unwrap_or_default();
            let code: Vec<&str> = before_tests.lines().filter(|l| !l.trim_start().starts_with("//")).collect();
            let code = code.join("\n");
            out.push((path, code));
        }
    }
}

#[test]
fn the_link_is_spelt_in_bach_wire_alone() {
    let spellings = [r"\u{1e}BACH_", "BACH_COMM_SOCKET", "EVCXR_BEGIN_CONTENT", "EVCXR_END_CONTENT"];
    let mut files = Vec::new();
    for folder in ["wire", "runtime", "annotations", "instances", "kernel", "bench"] {
        sources(&root().join(folder).join("src"), &mut files);
    }
    assert!(files.len() > 50, "the sources were not read");
    for spelling in spellings {
        let at: Vec<&Path> = files.iter().filter(|(_, code)| code.contains(spelling)).map(|(p, _)| p.as_path()).collect();
        assert!(!at.is_empty(), "`{spelling}` is spelt nowhere: the test looks for the wrong text");
        for path in at {
            assert!(path.starts_with(root().join("wire")), "`{spelling}` is spelt in {} (only bach-wire spells the link)", path.display());
        }
    }
}

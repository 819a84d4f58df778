//! What cargo and rustc say when a build fails, turned into what the user should do: a
//! toolchain that is missing or too old, or a crate that cargo could not download.

use std::process::Command;

/// The oldest rustc the kernel works with (its dylib-mode workaround is for 1.95's rustc).
pub const MIN_RUST: (u32, u32) = (1, 95);

/// Why cargo or rustc cannot build cells, if one is missing or too old.
pub fn toolchain_problem() -> Option<String> {
    for tool in ["cargo", "rustc"] {
        let out = match Command::new(tool).arg("--version").output() {
            Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout).trim().to_string(),
            Ok(o) => return Some(format!("`{tool} --version` failed: {}", String::from_utf8_lossy(&o.stderr).trim())),
            Err(_) => return Some(format!("{tool} is not on PATH: install Rust >= {}.{} (https://rustup.rs), then restart the kernel", MIN_RUST.0, MIN_RUST.1)),
        };
        if let Some(v) = version(&out) {
            if v < MIN_RUST {
                return Some(format!("{out} is older than {}.{}: run `rustup update`, then restart the kernel", MIN_RUST.0, MIN_RUST.1));
            }
        }
    }
    None
}

/// `(major, minor)` from `cargo 1.95.0 (...)` or `rustc 1.95.0 (...)`.
fn version(line: &str) -> Option<(u32, u32)> {
    let mut parts = line.split_whitespace().nth(1)?.split('.');
    Some((parts.next()?.parse().ok()?, parts.next()?.parse().ok()?))
}

/// The crate cargo failed to download, from its error text: `failed to download `X``,
/// `failed to get `X` as a dependency`, or a package it found no version of.
pub fn undownloaded_crate(cargo_error: &str) -> Option<String> {
    ["failed to download `", "failed to get `", "no matching package named `", "failed to download from `"].iter().find_map(|pat| {
        let rest = &cargo_error[cargo_error.find(pat)? + pat.len()..];
        Some(rest[..rest.find('`')?].to_string())
    })
}

/// What to do after a failed kernel start or warm-up whose error text is `error`.
pub fn start_failure_hint(error: &str) -> String {
    if let Some(problem) = toolchain_problem() {
        return problem;
    }
    if error.contains("--offline") || error.contains("offline mode") {
        let what = undownloaded_crate(error).map(|c| format!("`{c}`")).unwrap_or_else(|| "a crate".into());
        return format!(
            "cargo needs {what}, which is not in its cache, and the kernel runs cargo offline: run `bach-kernel install` again while online (it downloads what the kernel builds with), then restart the kernel"
        );
    }
    "Fix the cause above, then restart the kernel.".into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_are_read_from_cargo_and_rustc() {
        assert_eq!(version("cargo 1.95.0 (f2d3ce0bd 2026-03-21)"), Some((1, 95)));
        assert_eq!(version("rustc 1.102.3-nightly (abc 2027-01-01)"), Some((1, 102)));
        assert_eq!(version("rustc"), None);
        assert!(toolchain_problem().is_none(), "the tests run with cargo and rustc >= 1.95 on PATH");
    }

    #[test]
    fn the_crate_cargo_could_not_download_is_named() {
        let offline = "error: failed to download `bumpalo v3.20.4`\n\nCaused by:\n  attempting to make an HTTP request, but --offline was specified";
        assert_eq!(undownloaded_crate(offline).as_deref(), Some("bumpalo v3.20.4"));
        let hint = start_failure_hint(offline);
        assert!(hint.contains("`bumpalo v3.20.4`") && hint.contains("bach-kernel install"), "{hint}");
        assert!(!hint.contains("PATH"), "the toolchain is fine here: {hint}");
        let missing = "error: no matching package named `ndarray` found\nlocation searched: crates.io index";
        assert_eq!(undownloaded_crate(missing).as_deref(), Some("ndarray"));
        assert_eq!(undownloaded_crate("error[E0308]: mismatched types"), None);
        assert_eq!(start_failure_hint("the Bach prelude failed: E0308"), "Fix the cause above, then restart the kernel.");
    }
}

// Patched (bach-kernel): a cell's build without cargo when nothing cargo decides from changed.
//
// Every cell rebuilds one crate (`ctx`) whose dependencies are built already. Before cargo
// runs rustc it spends about 80 ms of a cell's ~400 ms (its start, reading the manifest and
// the lock, checking each dependency's fingerprint), and it runs the same rustc command each
// time. So when cargo runs the rustc wrapper for `ctx`, the wrapper writes that command down
// (the host's wrapper, bach-kernel's `rustc_wrapper.rs`: its program, arguments, directory and
// the environment cargo gave it, as JSON to `RECORD_ENV`'s file), and the next build runs it
// without cargo (`command`) while the inputs of cargo's decision are the same (`key`): the
// manifest, the lock, the `.cargo/config.toml` of the crate and of its parent, the command
// cargo would run with its environment, and no path dependency outside the directories the
// host names as fixed (`EVCXR_REPLAY_FIXED_PATHS`: a crate a user edits by path must be
// rebuilt by cargo). Any change (a `:dep`, `:opt`, a lock put back) runs cargo again, which
// records again.

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::path::PathBuf;
use std::process::Command;

use crate::eval_context::Config;

/// Set on cargo's command: where the wrapper writes the rustc command for `ctx`.
pub(crate) const RECORD_ENV: &str = "EVCXR_REPLAY_RECORD";
/// Path prefixes (`:`-separated) of path dependencies that never change in a session.
const FIXED_PATHS_ENV: &str = "EVCXR_REPLAY_FIXED_PATHS";

pub(crate) fn command_file(config: &Config) -> PathBuf {
    config.crate_dir().join("target").join("evcxr-replay.json")
}
fn key_file(config: &Config) -> PathBuf {
    config.crate_dir().join("target").join("evcxr-replay.key")
}

/// The key of cargo's decision for this build, or `None` when the build must go through
/// cargo (a path dependency that may change).
pub(crate) fn key(config: &Config, cargo: &Command) -> Option<String> {
    let dir = config.crate_dir();
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).ok()?;
    let fixed: Vec<String> = std::env::var(FIXED_PATHS_ENV).map(|v| v.split(':').filter(|p| !p.is_empty()).map(str::to_owned).collect()).unwrap_or_default();
    for line in manifest.lines().filter(|l| l.contains('{')) {
        if let Some(path) = inline_path(line) {
            if !fixed.iter().any(|f| path.starts_with(f.as_str())) {
                return None;
            }
        }
    }
    let mut h = DefaultHasher::new();
    // The command names the crate's directory (its output, its incremental cache): a copy of
    // a build directory (the warm template) never replays the original's command.
    dir.hash(&mut h);
    manifest.hash(&mut h);
    for file in [dir.join("Cargo.lock"), dir.join(".cargo/config.toml")].into_iter().chain(dir.parent().map(|p| p.join(".cargo/config.toml"))) {
        std::fs::read(&file).ok().hash(&mut h);
    }
    cargo.get_program().hash(&mut h);
    cargo.get_args().for_each(|a| a.hash(&mut h));
    cargo.get_envs().for_each(|e| e.hash(&mut h));
    Some(format!("{:016x}", h.finish()))
}

/// The `path = ".."` of an inline dependency table.
fn inline_path(line: &str) -> Option<&str> {
    let at = line.find("path")?;
    let rest = line[at + 4..].trim_start().strip_prefix('=')?.trim_start().strip_prefix('"')?;
    Some(&rest[..rest.find('"')?])
}

/// The recorded rustc command for `key`, to run instead of cargo.
pub(crate) fn command(config: &Config, key: &str) -> Option<Command> {
    if std::fs::read_to_string(key_file(config)).ok()? != key {
        return None;
    }
    let text = std::fs::read_to_string(command_file(config)).ok()?;
    let json: serde_json::Value = serde_json::from_str(&text).ok()?;
    let strings = |v: &serde_json::Value| -> Option<Vec<String>> { v.as_array()?.iter().map(|s| s.as_str().map(str::to_owned)).collect() };
    let (program, args, cwd) = (json["program"].as_str()?, strings(&json["args"])?, json["cwd"].as_str()?);
    let mut cmd = Command::new(program);
    cmd.args(args).current_dir(cwd).env_clear();
    for pair in json["env"].as_array()? {
        let kv = strings(pair)?;
        if let [k, v] = &kv[..] {
            cmd.env(k, v);
        }
    }
    Some(cmd)
}

/// Before cargo builds: no recorded command is valid until this build records one.
pub(crate) fn forget(config: &Config) {
    let _ = std::fs::remove_file(key_file(config));
    let _ = std::fs::remove_file(command_file(config));
}

/// After cargo built: the recorded command (if the wrapper wrote one) is valid for `key`.
pub(crate) fn keep(config: &Config, key: &str) {
    if command_file(config).exists() {
        let _ = std::fs::write(key_file(config), key);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_inline_dependency_names_its_path() {
        assert_eq!(inline_path(r#"bach = { path = "/k/crates/bach" }"#), Some("/k/crates/bach"));
        assert_eq!(inline_path(r#"ndarray = { version = "0.16", features = ["rayon"] }"#), None);
    }
}

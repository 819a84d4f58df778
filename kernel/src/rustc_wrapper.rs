//! The rustc workaround for evcxr's dylib mode on rustc >= 1.95.
//!
//! In dylib mode evcxr makes this binary cargo's `RUSTC_WRAPPER` and passes rustc
//! `--extern core=<sysroot libstd-*.so>`. On rustc 1.95 that `.so` is only a metadata stub
//! for `core`, and every compile fails with "only metadata stub found for dylib dependency
//! core". Giving rustc the matching `.rmeta` as well (`--extern core=<libstd-*.rmeta>`) fixes
//! it. evcxr's own wrapper must still run (it rewrites arguments for dylibs and reports the
//! built library), so the wrapper runs in three stages of this binary:
//!
//! 1. cargo runs `bach-kernel <rustc> <args>`: re-run ourselves as `bach-kernel <self> <args>`,
//!    remembering the real rustc;
//! 2. evcxr's wrapper (`evcxr::runtime_hook`) rewrites the arguments and runs `<self> <args>`;
//! 3. call the real rustc with those arguments and the extra `--extern`.

use std::ffi::OsString;
use std::os::unix::process::CommandExt;
use std::process::Command;

use crate::stages::{self, Stamp};

/// Set by evcxr when this binary runs as cargo's rustc wrapper.
const EVCXR_WRAPPER: &str = "EVCXR_RUSTC_WRAPPER";
/// The real rustc (stage 2 and 3).
const REAL_RUSTC: &str = "BACH_REAL_RUSTC";
/// Which stage the next run of this binary is.
const STAGE: &str = "BACH_RUSTC_STAGE";
/// evcxr's variable naming the `core` extern it adds.
const CORE_EXTERN: &str = "EVCXR_CORE_EXTERN";

/// Set by stage 3 for rustc's linker: the linker this binary stands in for (timing on).
const LINK_WITH: &str = "BACH_LINK_WITH";

/// Handles stages 1 and 3 and the linker's stand-in (never returns from them); returns for
/// stage 2 and normal runs.
pub fn intercept() {
    if let Some(linker) = std::env::var_os(LINK_WITH) {
        link(&linker);
    }
    if std::env::var_os(EVCXR_WRAPPER).is_none() {
        return;
    }
    let args: Vec<OsString> = std::env::args_os().collect();
    let me = std::env::current_exe().unwrap_or_else(|_| args[0].clone().into());
    match std::env::var(STAGE).as_deref() {
        Err(_) => {
            // Stage 1.
            let Some(rustc) = args.get(1) else { return };
            stages::stamp(Stamp::Wrapper);
            if is_cells_crate(&args[2..]) {
                record_for_replay(&args[1..]);
            }
            let err = Command::new(&me).arg(&me).args(&args[2..]).env(REAL_RUSTC, rustc).env(STAGE, "2").exec();
            eprintln!("bach-kernel: cannot re-run itself as rustc wrapper: {err}");
            std::process::exit(1);
        }
        Ok("2") => {
            // Stage 2: evcxr's wrapper runs next, and its rustc is us again.
            // SAFETY: single-threaded at this point (called first thing in main).
            unsafe { std::env::set_var(STAGE, "3") };
        }
        Ok(_) => {
            // Stage 3.
            let Some(rustc) = std::env::var_os(REAL_RUSTC) else {
                eprintln!("bach-kernel: {REAL_RUSTC} is not set");
                std::process::exit(1);
            };
            let mut cmd = Command::new(rustc);
            let mut rest = cell_crate_args(&args[1..]);
            let is_ctx = is_cells_crate(&args[1..]);
            if is_ctx {
                // This binary stands in for the linker: it links without the C driver
                // (`cell_link.rs`) and, when timing is on, stamps the link.
                let linker = take_linker(&mut rest);
                rest.push("-C".into());
                let mut arg = OsString::from("linker=");
                arg.push(&me);
                rest.push(arg);
                cmd.env(LINK_WITH, linker);
            }
            cmd.args(rest);
            if args.iter().any(|a| a == "--crate-name") {
                if let Some(rmeta) = core_rmeta() {
                    cmd.arg("--extern").arg(rmeta);
                }
            }
            if is_ctx {
                stages::stamp(Stamp::Rustc);
            }
            let err = cmd.exec();
            eprintln!("bach-kernel: cannot run rustc: {err}");
            std::process::exit(1);
        }
    }
}

/// Whether these are rustc's arguments for the cells' crate (`ctx`).
fn is_cells_crate(args: &[OsString]) -> bool {
    args.windows(2).any(|w| w[0] == "--crate-name" && w[1] == "ctx")
}

/// Set by evcxr (patched, `third_party/evcxr/src/module/replay.rs`) on the cargo command of
/// a cell's build: where this wrapper writes down how cargo ran it for the cells' crate, so
/// that the next cell's build can run the same command without cargo.
const REPLAY_RECORD: &str = "EVCXR_REPLAY_RECORD";

/// This run as cargo started it (program, arguments, directory, environment), as JSON to
/// the file evcxr named.
fn record_for_replay(args: &[OsString]) {
    let Some(file) = std::env::var_os(REPLAY_RECORD) else { return };
    let Ok(program) = std::env::current_exe() else { return };
    let env: Vec<[String; 2]> = std::env::vars().filter(|(k, _)| k != REPLAY_RECORD).map(|(k, v)| [k, v]).collect();
    let args: Vec<String> = args.iter().map(|a| a.to_string_lossy().into_owned()).collect();
    let cwd = std::env::current_dir().unwrap_or_default();
    let json = serde_json::json!({ "program": program, "args": args, "cwd": cwd, "env": env });
    if let Err(e) = std::fs::write(&file, json.to_string()) {
        eprintln!("bach-kernel: cannot record the cell's rustc command in {}: {e}", file.to_string_lossy());
    }
}

/// The linker the arguments name (`-C linker=..`, taken out of them), or rustc's default.
fn take_linker(args: &mut Vec<OsString>) -> OsString {
    let mut linker = OsString::from("cc");
    let mut i = 0;
    while i < args.len() {
        let s = args[i].to_string_lossy().into_owned();
        if let Some(l) = s.strip_prefix("-Clinker=") {
            linker = l.into();
            args.remove(i);
        } else if s == "-C" && args.get(i + 1).is_some_and(|a| a.to_string_lossy().starts_with("linker=")) {
            linker = args[i + 1].to_string_lossy().trim_start_matches("linker=").into();
            args.drain(i..i + 2);
        } else {
            i += 1;
        }
    }
    linker
}

/// The linker's stand-in: stamp, link (`rust-lld` with `cc`'s frame, `cell_link.rs`, or else
/// `linker` with these arguments), stamp, exit as it did. A direct link that fails is run again
/// through `linker`, which says why (or links: a frame gone stale).
fn link(linker: &std::ffi::OsStr) -> ! {
    stages::stamp(Stamp::Link);
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    let direct = crate::cell_link::direct_command(linker, &args).map(|mut c| c.env_remove(LINK_WITH).status());
    let status = match direct {
        Some(Ok(s)) if s.success() => Ok(s),
        _ => {
            crate::cell_link::forget_frame(&args);
            Command::new(linker).args(&args).env_remove(LINK_WITH).status()
        }
    };
    stages::stamp(Stamp::Linked);
    match status {
        Ok(s) => std::process::exit(s.code().unwrap_or(1)),
        Err(e) => {
            eprintln!("bach-kernel: cannot run the linker {}: {e}", linker.to_string_lossy());
            std::process::exit(1);
        }
    }
}

/// The arguments with the cells' crate (`ctx`) given one `-C metadata` whatever its
/// dependencies. Cargo hashes a crate's dependencies into its metadata, rustc the metadata into
/// the crate's identity, and `TypeId` the identity into each type: after a `:dep`, a struct
/// defined in an earlier cell would be another type, and evcxr drops every variable holding
/// one ("The type of the variable m was redefined"). Every cell is the same crate `ctx`, so
/// one fixed value keeps what is the same, the same.
///
/// The cells' library is also linked so that its writable data takes as few pages as it can:
/// evcxr keeps every cell's library loaded all session, and those pages (written when the
/// library is loaded, so never dropped) are the memory each cell leaves behind.
/// - without RELRO (`-z norelro`): the relocated data shares pages with the writable data,
///   instead of 16 bytes of it taking a page of their own (RELRO's protection of relocated
///   pointers matters little in a library that runs once, in the session's own process);
/// - its segments starting on a page (`-z separate-loadable-segments`, rust-lld's; GNU ld
///   ignores it with a warning): 2 KB of data then takes one page, not two.
fn cell_crate_args(args: &[OsString]) -> Vec<OsString> {
    let is_ctx = is_cells_crate(args);
    let mut out: Vec<OsString> = args.to_vec();
    if is_ctx {
        for a in &mut out {
            let s = a.to_string_lossy();
            if s.starts_with("metadata=") {
                *a = "metadata=bach-kernel-cells".into();
            } else if s.starts_with("-Cmetadata=") {
                *a = "-Cmetadata=bach-kernel-cells".into();
            }
        }
        out.extend(["-C", "link-arg=-Wl,-z,norelro", "-C", "link-arg=-Wl,-z,separate-loadable-segments"].map(OsString::from));
    }
    out
}

/// `core=<.../libstd-*.rmeta>` from evcxr's `core=<.../libstd-*.so>`.
fn core_rmeta() -> Option<OsString> {
    let so = std::env::var(CORE_EXTERN).ok()?;
    let path = so.strip_prefix("core=")?;
    let rmeta = std::path::Path::new(path).with_extension("rmeta");
    rmeta.exists().then(|| OsString::from(format!("core={}", rmeta.display())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_cells_crate_keeps_one_metadata_and_packs_its_data_and_others_keep_theirs() {
        let args = |v: &[&str]| v.iter().map(OsString::from).collect::<Vec<_>>();
        let ctx = cell_crate_args(&args(&["--crate-name", "ctx", "-C", "metadata=1f2e3d", "-Cmetadata=99", "-C", "opt-level=0"]));
        assert_eq!(
            ctx,
            args(&[
                "--crate-name",
                "ctx",
                "-C",
                "metadata=bach-kernel-cells",
                "-Cmetadata=bach-kernel-cells",
                "-C",
                "opt-level=0",
                "-C",
                "link-arg=-Wl,-z,norelro",
                "-C",
                "link-arg=-Wl,-z,separate-loadable-segments"
            ])
        );
        let other = args(&["--crate-name", "image", "-C", "metadata=1f2e3d"]);
        assert_eq!(cell_crate_args(&other), other);
    }
}

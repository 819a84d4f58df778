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

/// Set by evcxr when this binary runs as cargo's rustc wrapper.
const EVCXR_WRAPPER: &str = "EVCXR_RUSTC_WRAPPER";
/// The real rustc (stage 2 and 3).
const REAL_RUSTC: &str = "BACH_REAL_RUSTC";
/// Which stage the next run of this binary is.
const STAGE: &str = "BACH_RUSTC_STAGE";
/// evcxr's variable naming the `core` extern it adds.
const CORE_EXTERN: &str = "EVCXR_CORE_EXTERN";

/// Handles stages 1 and 3 (never returns from them); returns for stage 2 and normal runs.
pub fn intercept() {
    if std::env::var_os(EVCXR_WRAPPER).is_none() {
        return;
    }
    let args: Vec<OsString> = std::env::args_os().collect();
    let me = std::env::current_exe().unwrap_or_else(|_| args[0].clone().into());
    match std::env::var(STAGE).as_deref() {
        Err(_) => {
            // Stage 1.
            let Some(rustc) = args.get(1) else { return };
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
            cmd.args(cell_crate_args(&args[1..]));
            if args.iter().any(|a| a == "--crate-name") {
                if let Some(rmeta) = core_rmeta() {
                    cmd.arg("--extern").arg(rmeta);
                }
            }
            let err = cmd.exec();
            eprintln!("bach-kernel: cannot run rustc: {err}");
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
    let is_ctx = args.windows(2).any(|w| w[0] == "--crate-name" && w[1] == "ctx");
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

//! `bach-kernel`: a Jupyter kernel for Rust with the Bach offload runtime preloaded.
//!
//! ```text
//! bach-kernel install [--user | --sys-prefix | --prefix DIR]
//! bach-kernel uninstall [--user | --sys-prefix | --prefix DIR]
//! bach-kernel kernel --connection-file FILE     (what Jupyter runs)
//! bach-kernel --version
//! ```
//! The same binary is also evcxr's child process (it runs the cells) and its rustc wrapper:
//! `rustc_wrapper::intercept` and `evcxr::runtime_hook` come first and do not return then.

mod connection;
mod engine;
mod evcxr_engine;
mod home;
mod install;
mod is_complete;
mod magics;
mod question_mark;
mod rustc_wrapper;
mod server;
mod toolchain;
mod wire;

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use home::Home;

const USAGE: &str = "usage:
  bach-kernel install [--user | --sys-prefix | --prefix DIR]
  bach-kernel uninstall [--user | --sys-prefix | --prefix DIR]
  bach-kernel kernel --connection-file FILE
  bach-kernel --version";

/// `BACH_KERNEL_TIMING=ra`: print to stderr how long evcxr's rust-analyzer spends on each
/// crate of the notebook's dependency graph (name resolution) and on type inference. Every
/// crate in that graph costs start-up time (ARCHITECTURE.md, "Start-up").
fn profile_rust_analyzer() {
    use tracing_subscriber::prelude::*;
    let spans = ["crate_def_map_query", "infer_query"];
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_filter(tracing_subscriber::filter::filter_fn(move |m| m.is_span() && spans.contains(&m.name())));
    tracing_subscriber::registry().with(layer).init();
}

fn main() -> ExitCode {
    rustc_wrapper::intercept();
    evcxr::runtime_hook();
    if std::env::var("BACH_KERNEL_TIMING").as_deref() == Ok("ra") {
        profile_rust_analyzer();
    }
    let args: Vec<String> = std::env::args().skip(1).collect();
    let result = match args.first().map(String::as_str) {
        Some("--version" | "-V") => {
            println!("bach-kernel {}", env!("CARGO_PKG_VERSION"));
            Ok(())
        }
        Some("install") => {
            install::Location::parse(&args[1..]).and_then(|l| install::install(&l)).map(|d| eprintln!("installed kernelspec `bach` (Rust (Bach)) in {}", d.display()))
        }
        Some("uninstall") => install::Location::parse(&args[1..]).and_then(|l| install::uninstall(&l)).map(|d| eprintln!("removed {}", d.display())),
        Some("kernel") => match args.get(1..) {
            Some([flag, file]) if flag == "--connection-file" => run_kernel(Path::new(file)),
            Some([file]) => run_kernel(Path::new(file)),
            _ => Err(USAGE.to_string()),
        },
        Some("warm") => warm(),
        _ => Err(USAGE.to_string()),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("bach-kernel: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The scratch directory of this kernel process, removed when it exits.
static SCRATCH: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();

extern "C" fn remove_scratch() {
    if let Some(d) = SCRATCH.get() {
        let _ = std::fs::remove_dir_all(d);
    }
}

/// Where this kernel's build directory goes (the engine fills it with a copy of the warm
/// template: kernels never share a writable build directory).
fn fresh_build_dir() -> Result<PathBuf, String> {
    let base = std::env::temp_dir().join("bach-kernel");
    std::fs::create_dir_all(&base).map_err(|e| format!("cannot create {}: {e}", base.display()))?;
    // Leftovers of kernels that were killed: their process is gone.
    if let Ok(entries) = std::fs::read_dir(&base) {
        for e in entries.flatten() {
            let pid: Option<i32> = e.file_name().to_str().and_then(|n| n.split('-').next()?.parse().ok());
            // SAFETY: kill with signal 0 only checks whether the process exists.
            if pid.is_some_and(|p| unsafe { libc::kill(p, 0) } != 0) {
                let _ = std::fs::remove_dir_all(e.path());
            }
        }
    }
    let scratch = base.join(format!("{}-{}", std::process::id(), chrono::Utc::now().timestamp_micros()));
    let build = scratch.join("build");
    let _ = SCRATCH.set(scratch.clone());
    // SAFETY: registering a plain function to run at exit.
    unsafe { libc::atexit(remove_scratch) };
    std::fs::create_dir_all(&scratch).map_err(|e| format!("cannot create {}: {e}", scratch.display()))?;
    Ok(build)
}

fn run_kernel(connection_file: &Path) -> Result<(), String> {
    let home = Home::locate();
    let build = fresh_build_dir()?;
    let engine = evcxr_engine::EvcxrEngine::start(home, build)?;
    let r = server::run(connection_file, Box::new(engine));
    remove_scratch();
    r
}

/// Compile the prelude once into the installed home's `warm/` template.
fn warm() -> Result<(), String> {
    let home = Home::locate();
    if !home.installed {
        return Err("`warm` runs from an installed kernel (bach-kernel install does it)".into());
    }
    let build = home.dir.join("warm");
    let started = std::time::Instant::now();
    let mut engine = evcxr_engine::EvcxrEngine::start(home, build)?;
    struct Quiet;
    impl engine::Output for Quiet {
        fn stream(&mut self, _: engine::StreamName, text: &str) {
            eprint!("{text}");
        }
        fn display(&mut self, _: engine::Bundle) {}
        fn clear(&mut self, _: bool) {}
    }
    use engine::Engine;
    engine
        .execute("let _bach_warm = Array::<f64>::linspace(0.0, 1.0, 8).sqrt().sum();\n_bach_warm.to_scalar().unwrap()", 0, &mut Quiet)
        .map_err(|e| format!("warm-up cell failed: {}: {}\n{}", e.ename, e.evalue, e.traceback.join("\n")))?;
    eprintln!("bach-kernel: build warmed in {:.0} s ({})", started.elapsed().as_secs_f64(), engine.build_dir().display());
    let config = engine.build_dir().with_extension("config");
    drop(engine);
    let _ = std::fs::remove_dir_all(config);
    Ok(())
}

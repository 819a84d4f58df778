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

mod cell_link;
mod comms;
mod connection;
mod deps;
mod engine;
mod evcxr_engine;
mod home;
mod install;
mod interruptible;
mod is_complete;
mod log;
mod question_mark;
mod rustc_wrapper;
mod server;
mod settings;
mod stages;
mod standby;
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
fn profile_rust_analyzer(all: bool) {
    use tracing_subscriber::prelude::*;
    let spans = ["crate_def_map_query", "infer_query"];
    let layer = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_span_events(tracing_subscriber::fmt::format::FmtSpan::CLOSE)
        .with_filter(tracing_subscriber::filter::filter_fn(move |m| m.is_span() && (all || spans.contains(&m.name()))));
    tracing_subscriber::registry().with(layer).init();
}

fn main() -> ExitCode {
    rustc_wrapper::intercept();
    evcxr::runtime_hook();
    if let Some(all) = settings::settings().rust_analyzer_timing() {
        profile_rust_analyzer(all);
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
        Some("standby") => run_standby(),
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
    // The Rust process (started next, by the engine) reaches the kernel's comms there.
    // SAFETY: set before the engine's threads start; nothing else reads the environment now.
    unsafe { std::env::set_var(comms::SOCKET_ENV, comms::socket_path(&scratch)) };
    // Where cargo's processes stamp a cell's stages (stages.rs); the file exists while timing
    // is on.
    let stamps = scratch.join("stages");
    // SAFETY: as above.
    unsafe { std::env::set_var(stages::STAGES_ENV, &stamps) };
    stages::set_stamping(&stamps, settings::settings().timing());
    // An installed kernel's crates never change: a cell's build may run rustc without cargo
    // while nothing else changed (evcxr, patched: `third_party/evcxr/src/module/replay.rs`).
    // A checkout's may (a developer edits them), so cargo checks them every cell.
    let home = Home::locate();
    if home.installed {
        // SAFETY: as above.
        unsafe { std::env::set_var("EVCXR_REPLAY_FIXED_PATHS", home.dir.join("crates")) };
    }
    Ok(build)
}

fn run_kernel(connection_file: &Path) -> Result<(), String> {
    if standby::hand_over(connection_file) {
        return Ok(());
    }
    let home = Home::locate();
    let build = fresh_build_dir()?;
    // Once this kernel is ready, a standby starts for the next kernel (standby.rs).
    let engine = evcxr_engine::EvcxrEngine::start_then(home, build, Some(Box::new(standby::spawn_when_quiet)))?;
    let r = server::run(connection_file, Box::new(engine), server::Watch::Parent);
    standby::spawn_if_wanted();
    remove_scratch();
    r
}

/// `bach-kernel standby`: start a kernel ahead of time and wait for a launcher to hand it a
/// connection file (standby.rs).
fn run_standby() -> Result<(), String> {
    let Some(idle) = standby::idle_limit() else { return Ok(()) };
    let Some(listener) = standby::claim()? else {
        return Ok(()); // another standby waits for this environment
    };
    let log = standby::log_to_file();
    let r = serve_as_standby(listener, idle);
    if let Err(e) = &r {
        eprintln!("bach-kernel: standby: {e}");
    } else if let Some(log) = log {
        let _ = std::fs::remove_file(log);
    }
    remove_scratch();
    r
}

fn serve_as_standby(listener: std::os::unix::net::UnixListener, idle: std::time::Duration) -> Result<(), String> {
    let home = Home::locate();
    let build = fresh_build_dir()?;
    let mut engine = evcxr_engine::EvcxrEngine::start(home, build)?;
    engine.wait_ready()?;
    eprintln!("bach-kernel: standby ready; waiting up to {} s", idle.as_secs());
    let Some(mut adopted) = standby::wait(listener, idle) else {
        eprintln!("bach-kernel: standby unused; exiting");
        return Ok(());
    };
    if let Err(e) = std::env::set_current_dir(&adopted.cwd) {
        eprintln!("bach-kernel: cannot change to {}: {e}", adopted.cwd.display());
    }
    engine.start_in(&adopted.cwd);
    if !standby::accept(&mut adopted) {
        return Err("the launcher went away before the hand-over".into());
    }
    eprintln!("bach-kernel: serving {} for process {}", adopted.connection_file.display(), adopted.launcher);
    standby::spawn_when_quiet();
    // The kernel ends when the launcher does: its end closes the socket.
    let until = standby::launcher_gone(&adopted).map_err(|e| format!("cannot watch the launcher: {e}"))?;
    let r = server::run(&adopted.connection_file, Box::new(engine), server::Watch::Until(until));
    standby::spawn_if_wanted();
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
        fn display_as(&mut self, _: engine::Bundle, _: &str, _: bool) {}
        fn clear(&mut self, _: bool) {}
    }
    use engine::Engine;
    engine
        .execute("let _bach_warm = Array1::<f64>::linspace(0.0, 1.0, 8).sqrt().sum_lazy();\n_bach_warm.to_scalar().unwrap()", 0, &mut Quiet)
        .map_err(|e| format!("warm-up cell failed: {}: {}\n{}", e.ename, e.evalue, e.traceback.join("\n")))?;
    // A cell whose variable types rust-analyzer cannot settle (a typo: `let y = nosuch(1);`) makes
    // evcxr run `cargo check`, whose artifacts are not the build's: the first one in a build
    // directory checked every dependency again, and a user's first typo took 19 s here (40-60 s
    // in JupyterLab while a standby started). Made once here, each kernel's copy has them.
    let t = std::time::Instant::now();
    let check = engine.execute("let _bach_warm_check = bach_warm_check_undefined();", 0, &mut Quiet);
    if !matches!(&check, Err(e) if e.ename == "CompileError") {
        return Err("the warm-up of `cargo check` (a cell that must fail to compile) did not fail as expected".into());
    }
    eprintln!("bach-kernel: cargo check warmed in {:.0} s", t.elapsed().as_secs_f64());
    eprintln!("bach-kernel: build warmed in {:.0} s ({})", started.elapsed().as_secs_f64(), engine.build_dir().display());
    let config = engine.build_dir().with_extension("config");
    drop(engine);
    let _ = std::fs::remove_dir_all(config);
    Ok(())
}

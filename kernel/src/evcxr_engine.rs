//! The engine: evcxr in dylib mode, so the Bach session is one per kernel across all cells.
//!
//! Each kernel gets its own evcxr build directory, copied from the warmed template that
//! `install` made (compiled dependencies, pinned versions), and its own `evcxr.toml`
//! (`allow_static_linking = false`, offline). The prelude loads `bach` from the installed
//! copy of its sources, so the kernel does not depend on the checkout it was built from.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bach_wire::calls;
use bach_wire::line::{field, Line};
use evcxr::{CommandContext, EvalContextOutputs};

use crate::engine::{Bundle, Completions, Engine, ExecError, Interrupter, Output, StreamName};
use crate::home::{restore_lock_line, Home};
use crate::question_mark;
use bach_wire::magics;

/// How long an interrupted cell may take to reach a piece boundary before the kernel
/// restarts the Rust process (user code stuck outside Bach).
const INTERRUPT_GRACE: Duration = Duration::from_secs(3);
/// How long a completion or inspection waits for evcxr to finish starting (rust-analyzer answers
/// them) before answering with nothing.
const START_WAIT: Duration = Duration::from_secs(30);
/// Optimisation level of the cells' own code (`BACH_KERNEL_OPT_LEVEL` overrides; `:opt 2` in a
/// notebook). Cells mostly glue calls into the library, which is compiled at 2 regardless and
/// keeps every kernel on its side (no generic kernel code is compiled into a cell), so 0
/// compiles fastest: at 1, rustc's ThinLTO and LLVM passes cost 0.1-0.7 s per cell here. A
/// cell with its own hot loops can ask for `:opt 2`.
const DEFAULT_OPT_LEVEL: &str = "0";

/// State shared with the interrupter (called from the control thread).
#[derive(Default)]
struct Running {
    /// Increments per cell; 0 = idle.
    cell: AtomicU64,
    busy: AtomicBool,
    child: Mutex<Option<Arc<Mutex<std::process::Child>>>>,
    /// The kernel killed the process because the interrupted cell did not stop.
    killed: AtomicBool,
    /// The cell's code started in the Rust process (its compile is over).
    started: AtomicBool,
    /// The user interrupted the cell.
    interrupted: AtomicBool,
    /// Variables the kernel saved before a rebuild and brings back after it: evcxr's line
    /// saying each was lost is not shown.
    hide_lost: Mutex<Vec<String>>,
}

impl Running {
    /// Stop cell `cell`'s code: the signal sets the flag Bach's pieces and the cell's ticks
    /// check; if the cell is still busy after [`INTERRUPT_GRACE`], it is stuck where nothing
    /// checks, and the kernel restarts the Rust process.
    fn signal(self: &Arc<Self>, cell: u64) {
        let child = self.child.lock().unwrap().clone();
        let Some(child) = child else { return };
        let pid = child.lock().map(|c| c.id()).unwrap_or(0);
        if pid != 0 {
            // SAFETY: sending a signal to our own child process.
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGUSR1) };
        }
        let running = self.clone();
        std::thread::spawn(move || {
            std::thread::sleep(INTERRUPT_GRACE);
            if running.busy.load(Ordering::SeqCst) && running.cell.load(Ordering::SeqCst) == cell {
                running.killed.store(true, Ordering::SeqCst);
                let _ = child.lock().map(|mut c| c.kill());
            }
        });
    }

    /// Cancel cell `cell`'s compile: end every cargo this kernel started (and what it runs),
    /// again each time evcxr starts one, until the cell ends. Should the compile have finished
    /// first, the cell's code is signalled when it starts (see `run`).
    fn cancel_compile(self: &Arc<Self>, cell: u64) {
        let running = self.clone();
        std::thread::spawn(move || {
            let child = running.child.lock().unwrap().clone().map(|c| c.lock().map(|c| c.id()).unwrap_or(0)).unwrap_or(0);
            while running.busy.load(Ordering::SeqCst) && running.cell.load(Ordering::SeqCst) == cell && !running.started.load(Ordering::SeqCst) {
                kill_builds(std::process::id(), child);
                std::thread::sleep(Duration::from_millis(50));
            }
        });
    }
}

/// Kill each build below `root` (not below `keep`, the Rust process) with all it started: a
/// `cargo`, or a cell's build run without cargo (evcxr's replay: the rustc wrapper, a child
/// of the kernel with rustc's `--crate-name` among its arguments). Read from /proc; elsewhere
/// nothing happens and the compile runs to its end.
fn kill_builds(root: u32, keep: u32) {
    let Ok(dir) = std::fs::read_dir("/proc") else { return };
    // (pid, parent, command name)
    let procs: Vec<(u32, u32, String)> = dir
        .filter_map(|e| {
            let pid: u32 = e.ok()?.file_name().to_str()?.parse().ok()?;
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
            let (name, rest) = stat.split_once(" (")?.1.rsplit_once(") ")?;
            let parent: u32 = rest.split_whitespace().nth(1)?.parse().ok()?;
            Some((pid, parent, name.to_string()))
        })
        .collect();
    let below = |pid: u32, top: u32| {
        let mut p = pid;
        for _ in 0..64 {
            if p == top {
                return true;
            }
            match procs.iter().find(|x| x.0 == p) {
                Some(x) if x.1 != 0 && x.1 != p => p = x.1,
                _ => return false,
            }
        }
        false
    };
    let replayed = |p: &(u32, u32, String)| p.1 == root && std::fs::read(format!("/proc/{}/cmdline", p.0)).is_ok_and(|c| c.split(|&b| b == 0).any(|a| a == b"--crate-name"));
    let cargos: Vec<u32> = procs.iter().filter(|p| (p.2 == "cargo" || replayed(p)) && below(p.0, root) && (keep == 0 || !below(p.0, keep))).map(|p| p.0).collect();
    for (pid, _, _) in &procs {
        if cargos.iter().any(|&c| below(*pid, c)) {
            // SAFETY: a plain kill(2) of a build process this kernel started.
            unsafe { libc::kill(*pid as libc::pid_t, libc::SIGKILL) };
        }
    }
}

/// evcxr and the Rust process, once started.
struct Started {
    ctx: CommandContext,
    outputs: EvalContextOutputs,
}

enum State {
    /// evcxr is starting on a background thread (the kernel answers Jupyter meanwhile).
    Starting(std::sync::mpsc::Receiver<Result<Started, String>>),
    Ready(Box<Started>),
    Failed(String),
}

pub struct EvcxrEngine {
    state: State,
    home: Home,
    build_dir: PathBuf,
    running: Arc<Running>,
    cells: u64,
    /// When evcxr's start began (the start-up line counts from it).
    began: std::time::Instant,
    /// Lines the next cell runs first (a standby's first cell changes to the launcher's
    /// directory).
    next_cell_prefix: String,
    /// A display crate was added: values show as evcxr shows them, without `ShowDebug`.
    evcxr_displays: bool,
    /// Names a cell meant to take from ndarray (`use ndarray::{Array2, ..}`) whose cell did
    /// not compile, with that cell's number: until a `use` of them compiles, a cell naming
    /// them gets Bach's prelude names, and is told so.
    failed_uses: Vec<(String, u32)>,
    /// `:bach timing` is on: each cell ends with a line of where its time went.
    timing_footer: bool,
    /// The last cell's time by stage (timing on), for its footer.
    breakdown: Option<crate::stages::Breakdown>,
}

fn rustc_version() -> String {
    std::process::Command::new("rustc")
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| String::from_utf8(o.stdout).ok())
        .and_then(|s| s.split_whitespace().nth(1).map(str::to_string))
        .unwrap_or_else(|| "unknown".into())
}

/// What running one cell through evcxr gave.
struct CellRun {
    result: Result<evcxr::EvalOutputs, evcxr::Error>,
    /// Message and location of a panic that ended the cell.
    panic: Option<(String, String)>,
    /// Whether the cell printed [`END_MARKER`] (cells that use `?` only).
    reached_end: bool,
    /// The cell's last non-empty line on stderr, not yet forwarded: an early `?` prints its
    /// error there, and the kernel shows it once, as the cell's error.
    last_stderr: Option<String>,
}

impl EvcxrEngine {
    /// Start evcxr in `build_dir` (a fresh copy of the warm template, or empty) on a
    /// background thread; the first request that needs it waits for it. Must run before
    /// other threads start: it sets evcxr's config directory variable.
    pub fn start(home: Home, build_dir: PathBuf) -> Result<Self, String> {
        Self::start_then(home, build_dir, None)
    }

    /// [`start`](Self::start), then run `on_ready` on the start thread once the prelude ran.
    pub fn start_then(home: Home, build_dir: PathBuf, on_ready: Option<Box<dyn FnOnce() + Send>>) -> Result<Self, String> {
        let config_dir = build_dir.with_extension("config");
        write_evcxr_toml(&config_dir, &build_dir)?;
        // SAFETY: called from main before any thread is spawned.
        unsafe { std::env::set_var("EVCXR_CONFIG_DIR", &config_dir) };
        let running = Arc::new(Running::default());
        let (tx, rx) = std::sync::mpsc::channel();
        let (prelude, slot, warm, build) = (home.prelude(&build_dir), running.clone(), home.warm_dir(), build_dir.clone());
        std::thread::Builder::new()
            .name("evcxr-start".into())
            .spawn(move || {
                let t0 = std::time::Instant::now();
                let timing = crate::settings::settings().timing();
                let lap = |what: &str| {
                    if timing {
                        eprintln!("bach-kernel: start: {what} at {:.2} s", t0.elapsed().as_secs_f64())
                    }
                };
                let started = copy_warm(warm.as_deref(), &build)
                    .and_then(|_| {
                        lap("build copied");
                        CommandContext::new().map_err(|e| format!("cannot start evcxr: {e}"))
                    })
                    .and_then(|(mut ctx, outputs)| {
                        lap("evcxr context created");
                        *slot.child.lock().unwrap() = Some(ctx.process_handle());
                        let o = ctx.execute(&prelude).map_err(|e| format!("the Bach prelude failed: {e}"))?;
                        keep_good_build(&build);
                        lap(&format!("prelude ran ({})", o.phases.iter().map(|p| format!("{} {:.0} ms", p.name, p.duration.as_secs_f64() * 1e3)).collect::<Vec<_>>().join(", ")));
                        Ok(Started { ctx, outputs })
                    });
                eprintln!("bach-kernel: build copied, evcxr and the Bach prelude {} in {:.2} s", if started.is_ok() { "ready" } else { "failed" }, t0.elapsed().as_secs_f64());
                let ok = started.is_ok();
                let _ = tx.send(started);
                if let (true, Some(f)) = (ok, on_ready) {
                    f();
                }
            })
            .map_err(|e| format!("cannot start a thread: {e}"))?;
        Ok(EvcxrEngine {
            state: State::Starting(rx),
            home,
            build_dir,
            running,
            cells: 0,
            next_cell_prefix: String::new(),
            evcxr_displays: false,
            failed_uses: vec![],
            timing_footer: false,
            breakdown: None,
            began: std::time::Instant::now(),
        })
    }

    /// Wait until evcxr and the prelude are ready.
    pub fn wait_ready(&mut self) -> Result<(), String> {
        self.started(true).map(|_| ())
    }

    /// Run the cells in `dir` from now on (a standby taking over a kernel started elsewhere).
    pub fn start_in(&mut self, dir: &Path) {
        self.next_cell_prefix = format!("std::env::set_current_dir({:?}).ok();\n", dir.display().to_string());
    }

    /// evcxr, waiting for it to finish starting if `wait`.
    fn started(&mut self, wait: bool) -> Result<&mut Started, String> {
        self.started_within(if wait { None } else { Some(Duration::ZERO) })
    }

    /// evcxr, waiting up to `limit` (None: as long as it takes) for it to finish starting.
    fn started_within(&mut self, limit: Option<Duration>) -> Result<&mut Started, String> {
        if let State::Starting(rx) = &self.state {
            let ended = || Err("evcxr's start thread ended without a result".to_string());
            let r = match limit {
                None => rx.recv().unwrap_or_else(|_| ended()),
                Some(limit) => match rx.recv_timeout(limit) {
                    Ok(r) => r,
                    Err(std::sync::mpsc::RecvTimeoutError::Timeout) => return Err("still starting".into()),
                    Err(std::sync::mpsc::RecvTimeoutError::Disconnected) => ended(),
                },
            };
            self.state = match r {
                Ok(s) => State::Ready(Box::new(s)),
                Err(e) => State::Failed(e),
            };
        }
        match &mut self.state {
            State::Ready(s) => Ok(s),
            State::Failed(e) => Err(e.clone()),
            State::Starting(_) => unreachable!("resolved above"),
        }
    }

    /// While evcxr is still starting, a line in the cell says so, updated in place each second,
    /// and says how long it took once it is ready.
    fn show_start(&mut self, out: &mut dyn Output) {
        const ID: &str = "bach-kernel-start";
        let line = |text: String| {
            let mut b = Bundle::new();
            b.insert("text/plain".into(), text.into());
            b
        };
        let mut shown = false;
        loop {
            let _ = self.started_within(Some(Duration::from_millis(if shown { 1000 } else { 300 })));
            if !matches!(self.state, State::Starting(_)) {
                break;
            }
            let secs = self.began.elapsed().as_secs_f64().ceil();
            out.display_as(line(format!("starting Rust (evcxr, rust-analyzer, the Bach prelude): {secs} s...")), ID, shown);
            shown = true;
        }
        if shown {
            // The line goes once Rust is ready (nothing of the cell was shown yet): the cell's
            // outputs are its own. The time goes to the kernel's log.
            let how = if matches!(self.state, State::Ready(_)) { "started" } else { "failed to start" };
            eprintln!("bach-kernel: Rust {how} in {:.1} s (the first cell waited for it)", self.began.elapsed().as_secs_f64());
            out.clear(false);
        }
    }

    /// The prelude again in a Rust process that started again (after a rebuild, or one that
    /// died): the names and `bach_session`; the notebook's dependencies stay as they are.
    fn prelude(&mut self) -> Result<(), String> {
        let code = self.home.prelude_again();
        let evcxr_displays = self.evcxr_displays;
        let build = self.build_dir.clone();
        let s = self.started(true)?;
        s.ctx.execute(&code).map_err(|e| format!("the Bach prelude failed: {e}"))?;
        if evcxr_displays {
            s.ctx.execute(crate::home::WITHOUT_SHOW_DEBUG).map_err(|e| format!("the Bach prelude failed: {e}"))?;
        }
        keep_good_build(&build);
        Ok(())
    }

    pub fn build_dir(&self) -> &Path {
        &self.build_dir
    }

    /// Run evcxr on `code`, forwarding the child's output as it comes. Returns evcxr's result
    /// and the panic the child reported, if any.
    fn run(started: &mut Started, running: &Arc<Running>, count: u32, code: &str, out: &mut dyn Output) -> CellRun {
        let done = AtomicBool::new(false);
        let ctx = &mut started.ctx;
        let (stdout, stderr) = (&started.outputs.stdout, &started.outputs.stderr);
        let mut panic = None;
        let mut reached_end = false;
        let mut last_stderr = None;
        let result = std::thread::scope(|s| {
            let worker = s.spawn(|| {
                let r = ctx.execute(code);
                done.store(true, Ordering::SeqCst);
                r
            });
            // Forward output until the cell is done and both channels are drained.
            loop {
                let finished = done.load(Ordering::SeqCst);
                let mut idle = true;
                while let Ok(line) = stdout.try_recv() {
                    idle = false;
                    match Line::parse(&line) {
                        Line::Display(json) => match serde_json::from_str::<Bundle>(json).map(json_mimes_parsed) {
                            // A display under an id (a progress line): new, or replacing it.
                            Ok(mut bundle) => match bundle.remove(field::DISPLAY_ID) {
                                Some(serde_json::Value::String(id)) => {
                                    let update = bundle.remove(field::UPDATE).is_some_and(|u| u == "true");
                                    out.display_as(bundle, &id, update)
                                }
                                _ => out.display(bundle),
                            },
                            Err(e) => out.stream(StreamName::Stderr, &format!("bach-kernel: bad display line: {e}\n")),
                        },
                        // Printed by `cell_end` at the end of a cell that uses `?` (question_mark.rs).
                        Line::End => reached_end = true,
                        // The cell's code started: its compile is over. An interrupt that came
                        // during the compile, too late to cancel it, stops the code now.
                        Line::Run(n) => {
                            if n == count.to_string() {
                                running.started.store(true, Ordering::SeqCst);
                                if running.interrupted.load(Ordering::SeqCst) {
                                    running.signal(running.cell.load(Ordering::SeqCst));
                                }
                            }
                        }
                        Line::Clear { wait } => out.clear(wait),
                        Line::Panic(json) => {
                            let v: serde_json::Value = serde_json::from_str(json).unwrap_or_default();
                            panic = Some((v[field::MESSAGE].as_str().unwrap_or("panic").to_string(), v[field::LOCATION].as_str().unwrap_or("").to_string()));
                        }
                        Line::Text(text) => out.stream(StreamName::Stdout, &format!("{text}\n")),
                    }
                }
                while let Ok(line) = stderr.try_recv() {
                    idle = false;
                    if lost_line(&line).is_some_and(|name| running.hide_lost.lock().unwrap().iter().any(|n| n == name)) {
                        continue;
                    }
                    // Each non-empty line waits for the next one: the last may be the error
                    // of a `?` that returned early, shown once as the cell's error.
                    if line.trim().is_empty() {
                        out.stream(StreamName::Stderr, &format!("{line}\n"));
                    } else if let Some(held) = last_stderr.replace(line) {
                        out.stream(StreamName::Stderr, &format!("{held}\n"));
                    }
                }
                if finished && idle {
                    break;
                }
                if idle {
                    std::thread::sleep(Duration::from_millis(if finished { 20 } else { 5 }));
                }
            }
            worker.join().unwrap_or_else(|_| Err(evcxr::Error::Message("evcxr panicked".into())))
        });
        CellRun { result, panic, reached_end, last_stderr }
    }

    /// Save the Bach arrays among `variables` (evcxr's `name: type` list) and the session's
    /// settings into `dir` (`bach::notebook::stash`) before a rebuild: one cell that names every
    /// variable and keeps what is a Bach array. Returns the variables saved, each with the type
    /// to declare it again with.
    fn stash(started: &mut Started, running: &Arc<Running>, dir: &Path, variables: &[String], out: &mut dyn Output) -> Vec<(String, String)> {
        let names: Vec<&str> = variables.iter().map(|v| v.split(':').next().unwrap_or(v).trim()).filter(|n| *n != calls::SESSION_VARIABLE).collect();
        let run = Self::run(started, running, 0, &stash_code(dir, &names), out);
        if let Err(e) = &run.result {
            out.stream(StreamName::Stderr, &format!("bach-kernel: the Bach session could not be saved before the rebuild: {e}\n"));
            return vec![];
        }
        let (kept, not_kept) = read_stash_manifest(dir);
        for (name, why) in not_kept {
            out.stream(StreamName::Stderr, &format!("bach-kernel: `{name}` could not be saved: {why}\n"));
        }
        kept
    }

    /// After a rebuild, with the prelude run again: bring back what [`Self::stash`] saved, under
    /// the same names, and the session's settings. Returns what the cell says about it.
    fn restore(&mut self, r: &Rebuilding, before: &[String], count: u32, out: &mut dyn Output) -> String {
        let running = self.running.clone();
        let Ok(started) = self.started(true) else { return String::new() };
        let mut restored: Vec<String> = vec![];
        let mut failed: Vec<String> = vec![];
        let all = Self::run(started, &running, 0, &restore_code(&r.dir, &r.kept, true), out);
        if all.result.is_ok() && all.panic.is_none() {
            restored = r.kept.iter().map(|(n, _)| n.clone()).collect();
        } else {
            // One at a time: what can come back does.
            let _ = Self::run(started, &running, 0, &restore_code(&r.dir, &[], true), out);
            for kept in &r.kept {
                let one = Self::run(started, &running, 0, &restore_code(&r.dir, std::slice::from_ref(kept), false), out);
                match one.result.is_ok() && one.panic.is_none() {
                    true => restored.push(kept.0.clone()),
                    false => failed.push(kept.0.clone()),
                }
            }
        }
        let now: Vec<String> = Self::variables(started).iter().map(|v| v.split(':').next().unwrap_or(v).trim().to_string()).collect();
        let lost: Vec<String> = before.iter().map(|v| v.split(':').next().unwrap_or(v).trim().to_string()).filter(|n| n != calls::SESSION_VARIABLE && !now.contains(n)).collect();
        let crates = if r.crates.is_empty() { "Bach".to_string() } else { r.crates.join(", ") };
        let mut said =
            format!("bach-kernel: cell [{count}] rebuilt {crates} in {:.0} s; the Bach session carried on: the cost model and settings were kept", r.began.elapsed().as_secs_f64());
        if !restored.is_empty() {
            said.push_str(&format!(", and the arrays {} with their values (computed before the rebuild)", restored.join(", ")));
        }
        said.push('\n');
        if !lost.is_empty() {
            said.push_str(&format!("bach-kernel: lost (their types came from a rebuilt crate): {}\n", lost.join(", ")));
        }
        if !failed.is_empty() {
            said.push_str(&format!("bach-kernel: saved but could not be brought back: {}\n", failed.join(", ")));
        }
        said
    }

    /// Compile `uses` (a cell's top-level `use` statements) as a cell of their own, leaving
    /// out those that name what rustc could not resolve, up to three times. Returns the statements kept
    /// (one a line), or nothing.
    fn keep_uses(started: &mut Started, running: &Arc<Running>, mut uses: Vec<String>) -> String {
        for _ in 0..3 {
            let code: String = uses.iter().map(|u| format!("{}\n", u.replace('\n', " "))).collect();
            let mut sink = NoOutput;
            match Self::run(started, running, 0, &code, &mut sink).result {
                Ok(_) => return code,
                Err(evcxr::Error::CompilationErrors(errors)) => {
                    // evcxr keeps `use` items apart from the cell's lines, so its errors carry
                    // no line: the statements left out are those naming what rustc could not
                    // find (`ndarray_linalg` in "cannot find module or crate `ndarray_linalg`").
                    let missing: Vec<String> = errors
                        .iter()
                        .filter(|e| e.level() == "error")
                        .flat_map(|e| e.message().split('`').skip(1).step_by(2).map(|w| w.split("::").next().unwrap_or(w).to_string()).collect::<Vec<_>>())
                        .filter(|w| !w.is_empty())
                        .collect();
                    let before = uses.len();
                    uses.retain(|u| !missing.iter().any(|w| names_word(u, w)));
                    if uses.is_empty() || uses.len() == before {
                        return String::new();
                    }
                }
                Err(_) => return String::new(),
            }
        }
        String::new()
    }

    /// The cell as Rust: `:bach` magics expanded (`:bach vars` with the variables evcxr
    /// knows), `:dep` lines in the manifest words of Rust 2024, rand's `gen` calls raw, and a
    /// ported cell's `ndarray::` paths Bach's. `None`: nothing to run.
    fn cell_as_rust(&mut self, code: &str, out: &mut dyn Output) -> Result<Option<String>, ExecError> {
        // `:bach` magics become calls into the Rust process, line for line.
        // `:bach vars` lists the variables evcxr knows.
        let variables: Vec<(String, String)> = match code.contains(":bach vars") {
            true => self.started_within(Some(START_WAIT)).map(|s| s.ctx.variables_and_types().map(|(n, t)| (n.to_string(), t.to_string())).collect()).unwrap_or_default(),
            false => vec![],
        };
        let rust = magics::expand_with(code, &variables).map_err(|e| ExecError {
            ename: "MagicError".into(),
            evalue: e.lines().next().unwrap_or("").to_string(),
            traceback: e.lines().map(str::to_string).collect(),
        })?;
        if rust.trim().is_empty() {
            return Ok(None);
        }
        let (rust, modernised) = modern_dep_lines(&rust);
        if modernised {
            out.stream(StreamName::Stderr, "bach-kernel: `default_features` in a `:dep` line is read as `default-features`, its name in the manifests of Rust 2024\n");
        }
        // Cells compile as Rust 2024 (evcxr's edition), where `gen` is a keyword: rand 0.8's
        // `rng.gen()`, in most notebooks written before it, is read as `rng.r#gen()`.
        let rust = raw_gen_calls(&rust).unwrap_or(rust);
        // A cell ported by its imports reads its `ndarray::` paths as Bach's.
        let rust = bach_paths(&rust).unwrap_or(rust);
        Ok(Some(rust))
    }

    /// What the cell's `:dep`s would rebuild, checked before anything builds (deps.rs): whether
    /// a display crate comes in, and, when a crate the Bach session is built on would be
    /// rebuilt (or `:bach rebuild` asks), the session's arrays and settings saved to bring back
    /// after the build. A `:dep` that cannot be checked, or that cargo cannot resolve, is
    /// refused with the reason, nothing built.
    #[allow(clippy::too_many_arguments)]
    fn check_dependencies(
        started: &mut Started,
        running: &Arc<Running>,
        build_dir: &Path,
        (good_manifest, good_lock): (&Path, &Path),
        dependencies: &[String],
        rebuild: bool,
        before: &[String],
        execution_count: u32,
        out: &mut dyn Output,
    ) -> Result<(bool, Option<Rebuilding>), ExecError> {
        match crate::deps::check(&build_dir.with_extension("depcheck"), good_manifest, good_lock, dependencies) {
            Ok(c) => {
                if rebuild || c.rebuilt.iter().any(|r| r.session) {
                    out.stream(StreamName::Stderr, &crate::deps::rebuild_note(&c.rebuilt));
                    let dir = build_dir.with_extension("stash");
                    let kept = Self::stash(started, running, &dir, before, out);
                    let crates = c.rebuilt.iter().filter(|r| r.session).map(|r| r.krate.clone()).collect();
                    return Ok((c.display_crate, Some(Rebuilding { dir, kept, crates, began: std::time::Instant::now() })));
                } else if !c.rebuilt.is_empty() {
                    out.stream(StreamName::Stderr, &crate::deps::note(&c.rebuilt));
                }
                Ok((c.display_crate, None))
            }
            Err(crate::deps::CheckError::Dependency(e)) => {
                running.busy.store(false, Ordering::SeqCst);
                let mut more: Vec<String> = e.lines().map(str::to_string).collect();
                more.push("Nothing was built; the session is as it was.".into());
                Err(cell_error("DependencyError", execution_count, "cargo cannot add this dependency", more))
            }
            Err(crate::deps::CheckError::Setup(e)) => {
                running.busy.store(false, Ordering::SeqCst);
                let mut more: Vec<String> = e.lines().map(str::to_string).collect();
                more.push("Nothing was built (building it unchecked could rebuild Bach and lose the session); the session is as it was.".into());
                Err(cell_error("DependencyCheckFailed", execution_count, "the kernel could not check what this `:dep` would rebuild", more))
            }
        }
    }

    /// A cell that did not compile ran none of its lines, its `use`s included: those that
    /// compile on their own are kept for the next cells. Its `use ndarray::..` names are
    /// remembered while they fail, and a later cell that names one hears why it got Bach's.
    fn settle_uses(&mut self, rust: &str, result: &Result<evcxr::EvalOutputs, evcxr::Error>, running: &Arc<Running>, execution_count: u32, out: &mut dyn Output) {
        // A cell that did not compile ran none of its lines, its `use`s included; those that
        // compile on their own are kept for the next cells (a notebook's import cell that
        // names one crate that failed to build would otherwise take every import with it, and
        // the next cells would get Bach's prelude names where they meant ndarray's).
        let mut kept_uses = String::new();
        if matches!(&result, Err(evcxr::Error::CompilationErrors(_))) && !running.interrupted.load(Ordering::SeqCst) {
            let uses = use_statements(rust);
            if !uses.is_empty() {
                if let Ok(started) = self.started(true) {
                    kept_uses = Self::keep_uses(started, running, uses);
                }
                if !kept_uses.is_empty() {
                    out.stream(
                        StreamName::Stderr,
                        &format!("bach-kernel: none of this cell ran; its `use` lines that compile on their own are kept for the next cells:\n{kept_uses}"),
                    );
                }
            }
        }
        // `use ndarray::..` lines: failed, their names are remembered; compiled, forgotten.
        let uses = ndarray_uses(rust);
        match &result {
            Err(evcxr::Error::CompilationErrors(_)) => {
                let kept = ndarray_uses(&kept_uses);
                self.failed_uses.retain(|(n, _)| !uses.contains(n));
                self.failed_uses.extend(uses.into_iter().filter(|n| !kept.contains(n)).map(|n| (n, execution_count)));
            }
            Ok(_) => {
                self.failed_uses.retain(|(n, _)| !uses.contains(n));
                let named: Vec<String> = self.failed_uses.iter().filter(|(n, _)| names_word(rust, n)).map(|(n, c)| format!("`{n}` (cell [{c}])")).collect();
                if !named.is_empty() {
                    out.stream(
                    StreamName::Stderr,
                    &format!("bach-kernel: this cell's {} are Bach's prelude names, not ndarray's: the `use ndarray::..` that named them did not compile; run it again once it does\n", named.join(", ")),
                );
                }
            }
            Err(_) => {}
        }
    }

    /// The cell was interrupted and did not end by itself: while it compiled (nothing ran,
    /// the session is as it was), or stuck outside Bach (the Rust process restarted: say
    /// what was lost).
    fn interruption(&mut self, running: &Arc<Running>, before: &[String], execution_count: u32) -> Option<ExecError> {
        if running.interrupted.load(Ordering::SeqCst) && !running.started.load(Ordering::SeqCst) && !running.killed.load(Ordering::SeqCst) {
            // Interrupted while it compiled: the compile was cancelled and nothing of the cell ran.
            return Some(cell_error(
                "Interrupted",
                execution_count,
                "interrupted while the cell compiled: the compile was cancelled and none of the cell ran",
                vec!["The session is as it was: every variable and the Bach session are kept.".into()],
            ));
        }
        if running.killed.swap(false, Ordering::SeqCst) {
            // The process restarted: variables and the Bach session are gone; say which.
            let _ = self.prelude();
            return Some(ExecError {
                ename: "Interrupted".into(),
                evalue: "the cell did not stop at a Bach piece boundary (it was stuck outside Bach), so the kernel restarted the Rust process".into(),
                traceback: vec![
                    format!("Interrupted in cell [{execution_count}]: the cell did not stop (it was stuck outside Bach), so the kernel restarted the Rust process."),
                    format!("Lost: {}", if before.is_empty() { "no variables".to_string() } else { before.join(", ") }),
                    "The Bach session (its graph and timeline) restarted too.".into(),
                ],
            });
        }
        None
    }

    /// Bach was rebuilt (evcxr dropped `bach_session` with every value whose type came from the
    /// old build): the prelude runs again, after the cell's outputs, and gives the session a
    /// new one, and what was saved before the build comes back.
    fn session_back(&mut self, rebuilt: bool, rebuilding: &Option<Rebuilding>, before: &[String], execution_count: u32, out: &mut dyn Output) {
        if rebuilt {
            match self.prelude() {
                Ok(()) => {
                    let said = match rebuilding {
                    Some(r) => self.restore(r, before, execution_count, out),
                    None => "bach-kernel: Bach was rebuilt, so the Bach session starts again: `bach_session` is a new one (empty graph and timeline); the values lost are named above\n".to_string(),
                };
                    out.stream(StreamName::Stderr, &said);
                }
                Err(e) => out.stream(StreamName::Stderr, &format!("bach-kernel: Bach was rebuilt and its session could not start again: {e}\n")),
            }
        }
        if let Some(r) = rebuilding {
            let _ = std::fs::remove_dir_all(&r.dir);
        }
    }

    /// What the cell gave Jupyter: its result bundle, or the error at this cell (a panic, an
    /// early `?`, rustc's errors pointed at the cell as written, the process gone, a failed
    /// build).
    #[allow(clippy::too_many_arguments)]
    fn outcome(
        &mut self,
        result: Result<evcxr::EvalOutputs, evcxr::Error>,
        panic: Option<(String, String)>,
        early: Option<String>,
        inserted: Inserted,
        rust: &str,
        before: &[String],
        execution_count: u32,
        out: &mut dyn Output,
    ) -> Result<Option<Bundle>, ExecError> {
        match result {
            Ok(outputs) => {
                if let Some((message, location)) = panic {
                    return Err(panic_error(&message, &location, rust, &self.build_dir, execution_count));
                }
                if let Some(message) = early {
                    let message = message.strip_prefix("Error: ").unwrap_or(&message).to_string();
                    return Err(cell_error(
                        "Error",
                        execution_count,
                        &message,
                        vec!["(a `?` returned early) Variables this cell defined are not kept; earlier ones and the Bach session are.".into()],
                    ));
                }
                // `:timing` on: the cell's time, shown as evcxr_jupyter shows it.
                if let Some(took) = outputs.timing {
                    out.display(footer(&format!("Took {}ms", took.as_millis())));
                }
                // `:bach timing` on: where the cell's time went (stages.rs).
                if let (true, Some(b)) = (self.timing_footer, self.breakdown.take()) {
                    out.display(footer(&b.line()));
                }
                // (A `!` line the kernel added leaves an empty text/plain: not a result.)
                let bundle: Bundle = outputs.content_by_mime_type.into_iter().filter(|(_, v)| !v.is_empty()).map(|(k, v)| (k, serde_json::Value::String(v))).collect();
                Ok((!bundle.is_empty()).then_some(bundle))
            }
            Err(evcxr::Error::CompilationErrors(errors)) => Err(compile_error(&errors, inserted, execution_count, rust)),
            Err(evcxr::Error::SubprocessTerminated(msg)) => {
                let _ = self.prelude();
                Err(cell_error(
                    "ProcessDied",
                    execution_count,
                    &format!("the Rust process ended: {msg}"),
                    vec![format!("Lost: {}", before.join(", ")), "The kernel started a new process; run the cells you need again.".into()],
                ))
            }
            Err(e) => Err(build_failure(&e.to_string(), execution_count).unwrap_or_else(|| cell_error("Error", execution_count, &e.to_string(), vec![]))),
        }
    }

    /// The cell's time by stage, when timing is on: on stderr with `BACH_KERNEL_TIMING`,
    /// and kept for the footer.
    fn time_by_stage(&self, result: &Result<evcxr::EvalOutputs, evcxr::Error>, began: std::time::Instant, execution_count: u32) -> Option<crate::stages::Breakdown> {
        let file = crate::stages::file()?;
        let stamps = crate::stages::take(&file);
        let o = result.as_ref().ok()?;
        let phases: Vec<(String, std::time::Duration)> = o.phases.iter().map(|p| (p.name.clone(), p.duration)).collect();
        let took = began.elapsed();
        let b = crate::stages::Breakdown::of(took, &phases, &stamps, crate::stages::built_without_cargo(&self.build_dir, std::time::SystemTime::now() - took));
        if crate::settings::settings().timing() {
            let phases: Vec<String> = phases.iter().map(|(n, d)| format!("{n} {:.0} ms", d.as_secs_f64() * 1e3)).collect();
            eprintln!("bach-kernel: cell [{execution_count}] evcxr phases: {}", phases.join(", "));
            eprintln!("bach-kernel: cell [{execution_count}] {}", b.line());
        }
        Some(b)
    }

    fn variables(started: &Started) -> Vec<String> {
        started.ctx.variables_and_types().map(|(n, t)| format!("{n}: {t}")).collect()
    }
}

/// The cell that saves the session into `dir`.
fn stash_code(dir: &Path, names: &[&str]) -> String {
    calls::stash::save(&dir.display().to_string(), names)
}

/// The cell that brings `kept` back from `dir` (and, with `session`, the settings).
fn restore_code(dir: &Path, kept: &[(String, String)], session: bool) -> String {
    let dir = dir.display().to_string();
    // The settings first: they decide how the arrays are held (the eager size limit).
    let mut code = String::new();
    if session {
        code.push_str(&calls::stash::restore_session(&dir));
    }
    for (name, ty) in kept {
        code.push_str(&calls::stash::restore(&dir, name, ty));
    }
    code
}

/// A variable's name and a text about it: the type it is declared with again, or why it could
/// not be saved.
type Named = (String, String);

/// What a stash directory's manifest lists: the variables saved (name, type) and those that
/// could not be (name, reason).
fn read_stash_manifest(dir: &Path) -> (Vec<Named>, Vec<Named>) {
    let text = std::fs::read_to_string(dir.join(calls::stash::MANIFEST)).unwrap_or_default();
    let mut kept = vec![];
    let mut not = vec![];
    for line in text.lines() {
        let Some((name, rest)) = line.split_once('\t') else { continue };
        match name.strip_prefix('!') {
            Some(name) => not.push((name.to_string(), rest.to_string())),
            None => kept.push((name.to_string(), rest.to_string())),
        }
    }
    (kept, not)
}

/// Fill `build` with a copy of the warm template (`cp -a` keeps modification times, so cargo
/// sees the dependencies as built), or just create it.
fn copy_warm(warm: Option<&Path>, build: &Path) -> Result<(), String> {
    match warm {
        Some(warm) if !build.exists() => {
            let ok = std::process::Command::new("cp").arg("-a").arg(warm).arg(build).status().map(|s| s.success()).unwrap_or(false);
            if ok {
                Ok(())
            } else {
                Err(format!("cannot copy the warm build {} to {}", warm.display(), build.display()))
            }
        }
        _ => std::fs::create_dir_all(build).map_err(|e| format!("cannot create {}: {e}", build.display())),
    }
}

/// Where the last build that compiled keeps its manifest and lock: beside the build directory.
/// A `:dep` is checked against them and built from that lock, and a failed one goes back to
/// them (evcxr's check of a `:dep` writes a manifest of that crate alone, and its lock, into
/// the build directory, and leaves them there when the crate is refused).
fn good_build(build: &Path) -> (PathBuf, PathBuf) {
    (build.with_extension("good-manifest"), build.with_extension("good-lock"))
}

/// Record the build directory's manifest and lock as the last state that compiled (not
/// evcxr's one-crate check manifest).
fn keep_good_build(build: &Path) {
    let (manifest, lock) = good_build(build);
    let Ok(text) = std::fs::read_to_string(build.join("Cargo.toml")) else { return };
    if text.contains("evcxr_dummy_validate_dep") || !build.join("Cargo.lock").exists() {
        return;
    }
    let _ = std::fs::write(&manifest, text);
    let _ = std::fs::copy(build.join("Cargo.lock"), &lock);
}

/// Put the last state that compiled back into the build directory (after a cell whose
/// dependencies did not come in).
fn back_to_good_build(build: &Path) {
    let (manifest, lock) = good_build(build);
    if manifest.exists() && lock.exists() {
        let _ = std::fs::copy(&manifest, build.join("Cargo.toml"));
        let _ = std::fs::copy(&lock, build.join("Cargo.lock"));
    }
}

/// Cargo settings for every dependency of the cells (Bach, ndarray...): optimised, without
/// debug assertions or overflow checks, whatever level the cells' own code uses. evcxr
/// rewrites the build directory's Cargo.toml and `.cargo/config.toml`, so this goes in the
/// parent directory's `.cargo/config.toml`, which cargo also reads.
/// `bach-instances` builds at opt-level 1: rustc exports a crate's generic instances for other
/// crates to reuse at opt-level 0 and 1 only, and the cells (at 0) reuse its copies of Bach's
/// common f64 code instead of compiling their own (its crate doc; issue #48).
const DEPENDENCY_PROFILE: &str = "# Written by bach-kernel.\n[profile.dev.package.\"*\"]\nopt-level = 2\ndebug-assertions = false\noverflow-checks = false\n\n[profile.dev.package.bach-instances]\nopt-level = 1\n";

fn write_evcxr_toml(config_dir: &Path, build_dir: &Path) -> Result<(), String> {
    std::fs::create_dir_all(config_dir).map_err(|e| format!("cannot create {}: {e}", config_dir.display()))?;
    if let Some(parent) = build_dir.parent() {
        let cargo = parent.join(".cargo");
        std::fs::create_dir_all(&cargo).map_err(|e| format!("cannot create {}: {e}", cargo.display()))?;
        std::fs::write(cargo.join("config.toml"), DEPENDENCY_PROFILE).map_err(|e| format!("cannot write {}: {e}", cargo.display()))?;
    }
    // Cells' own code; the runtime and library are compiled optimised either way.
    let opt = crate::settings::settings().opt_level.clone().unwrap_or_else(|| DEFAULT_OPT_LEVEL.into());
    let toml = format!(
        "[evcxr]\n# Written by bach-kernel for this kernel only.\ntmpdir = {:?}\nallow_static_linking = false\noffline_mode = true\npreserve_vars_on_panic = true\nopt_level = {opt:?}\n",
        build_dir.display().to_string()
    );
    std::fs::write(config_dir.join("evcxr.toml"), toml).map_err(|e| format!("cannot write evcxr.toml: {e}"))
}

/// A grey line under a cell's output (`:timing`'s and `:bach timing`'s).
fn footer(text: &str) -> Bundle {
    let mut b = Bundle::new();
    b.insert("text/plain".into(), text.into());
    b.insert("text/html".into(), format!("<span style=\"color: rgba(0,0,0,0.4);\">{text}</span>").into());
    b
}

/// The dependency lines a cell adds (`:dep`, or `extern crate` of a crate not in `known`), for
/// which it runs online; none when it sets evcxr's `:offline` itself.
fn cell_dependencies(code: &str, known: &[String]) -> Vec<String> {
    match code.lines().any(|l| l.trim_start().starts_with(":offline")) {
        true => vec![],
        false => crate::deps::dependency_lines(code, known),
    }
}

/// `code` with its `:dep` lines as this toolchain's cargo reads them
/// ([`crate::deps::modern_dep_line`]), and whether one changed.
fn modern_dep_lines(code: &str) -> (String, bool) {
    let mut changed = false;
    let mut text = String::with_capacity(code.len());
    for line in code.split_inclusive('\n') {
        let (l, c) = crate::deps::modern_dep_line(line);
        changed |= c;
        text.push_str(&l);
    }
    (text, changed)
}

/// `code` with each method call `.gen(` / `.gen::<` outside string literals and comments
/// written `.r#gen`, or None when it has none.
fn raw_gen_calls(code: &str) -> Option<String> {
    if !code.contains(".gen") {
        return None;
    }
    let bytes = code.as_bytes();
    let mut out = String::with_capacity(code.len() + 8);
    let (mut i, mut changed) = (0, false);
    let (mut in_string, mut in_comment) = (false, false);
    while i < bytes.len() {
        let c = bytes[i];
        if in_comment {
            in_comment = c != b'\n';
        } else if in_string {
            if c == b'\\' {
                out.push_str(&code[i..(i + 2).min(code.len())]);
                i += 2;
                continue;
            }
            in_string = c != b'"';
        } else if c == b'"' {
            in_string = true;
        } else if code[i..].starts_with("//") {
            in_comment = true;
        } else if code[i..].starts_with(".gen(") || code[i..].starts_with(".gen::<") {
            out.push_str(".r#gen");
            i += 4;
            changed = true;
            continue;
        }
        let ch = code[i..].chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    changed.then_some(out)
}

/// A cell ported to Bach by its imports (a `use bach` line and no `use ndarray` line) with its
/// `ndarray::` paths read as `bach::` ones: `ndarray::Array2<f64>` in a signature, a struct
/// field or a call (`ndarray::Array::zeros`, `ndarray::s![..]`) names the Bach array the
/// imports brought in, as `import cupy as np` makes every `np.` CuPy's. `::ndarray::` (an
/// absolute path) still names ndarray itself. `None` when the cell is not ported or has no
/// such path; strings and comments are left as they are.
fn bach_paths(code: &str) -> Option<String> {
    if !code.contains("ndarray::") {
        return None;
    }
    let uses = |krate: &str| {
        code.lines().any(|l| {
            let l = l.trim_start().strip_prefix("pub ").unwrap_or(l.trim_start());
            l.strip_prefix("use ").is_some_and(|rest| {
                let rest = rest.trim_start().trim_start_matches("::");
                rest.strip_prefix(krate).is_some_and(|after| after.starts_with("::") || after.starts_with(';') || after.starts_with(' '))
            })
        })
    };
    if !uses("bach") || uses("ndarray") {
        return None;
    }
    let bytes = code.as_bytes();
    let mut out = String::with_capacity(code.len());
    let (mut i, mut changed) = (0, false);
    let (mut in_string, mut line_comment, mut block_comment) = (false, false, 0usize);
    while i < bytes.len() {
        let c = bytes[i];
        let rest = &code[i..];
        if line_comment {
            line_comment = c != b'\n';
        } else if block_comment > 0 {
            if rest.starts_with("*/") {
                block_comment -= 1;
                out.push_str("*/");
                i += 2;
                continue;
            } else if rest.starts_with("/*") {
                block_comment += 1;
                out.push_str("/*");
                i += 2;
                continue;
            }
        } else if in_string {
            if c == b'\\' {
                out.push_str(&code[i..(i + 2).min(code.len())]);
                i += 2;
                continue;
            }
            in_string = c != b'"';
        } else if rest.starts_with("'\"'") {
            out.push_str("'\"'");
            i += 3;
            continue;
        } else if c == b'"' {
            in_string = true;
        } else if rest.starts_with("//") {
            line_comment = true;
        } else if rest.starts_with("/*") {
            block_comment = 1;
            out.push_str("/*");
            i += 2;
            continue;
        } else if rest.starts_with("ndarray::") {
            let before = code[..i].trim_end_matches([' ', '\t']);
            let ident_before = code[..i].chars().next_back().is_some_and(|b| b.is_alphanumeric() || b == '_');
            if !ident_before && !before.ends_with("::") {
                out.push_str("bach::");
                i += "ndarray::".len();
                changed = true;
                continue;
            }
        }
        let ch = rest.chars().next().unwrap_or(' ');
        out.push(ch);
        i += ch.len_utf8();
    }
    changed.then_some(out)
}

/// The variable evcxr's line says was lost ("The type of the variable a was redefined, so was
/// lost.").
fn lost_line(line: &str) -> Option<&str> {
    line.trim().strip_prefix("The type of the variable ")?.strip_suffix(" was redefined, so was lost.")
}

/// The names a cell's `use ndarray::...` lines bring in that Bach's prelude also has (a glob
/// `use ndarray::prelude::*` stands for the array names).
fn ndarray_uses(code: &str) -> Vec<String> {
    const ARRAY_NAMES: &[&str] = &["Array", "Array0", "Array1", "Array2", "Array3", "Array4", "Array5", "Array6", "ArrayD", "arr0", "arr1", "arr2", "arr3", "array"];
    let mut names = vec![];
    for line in code.lines() {
        let Some(tree) = line.trim().strip_prefix("use ndarray::").or_else(|| line.trim().strip_prefix("use ::ndarray::")) else { continue };
        let tree = tree.trim_end_matches(';');
        if tree.ends_with('*') {
            names.extend(ARRAY_NAMES.iter().map(|n| n.to_string()));
            continue;
        }
        for item in tree.split([',', '{', '}']) {
            let item = item.trim();
            let name = match item.split_once(" as ") {
                Some((_, alias)) => alias.trim(),
                None => item.rsplit("::").next().unwrap_or(item).trim(),
            };
            if ARRAY_NAMES.contains(&name) {
                names.push(name.to_string());
            }
        }
    }
    names
}

/// The top-level `use` statements of a cell (starting a line at its first column, up to their
/// `;`), each as written.
fn use_statements(code: &str) -> Vec<String> {
    let mut uses = vec![];
    let mut open: Option<String> = None;
    for line in code.lines() {
        if let Some(u) = open.as_mut() {
            u.push('\n');
            u.push_str(line);
        } else if line.starts_with("use ") || line.starts_with("pub use ") {
            open = Some(line.to_string());
        }
        if open.as_ref().is_some_and(|u| u.trim_end().ends_with(';')) {
            uses.extend(open.take());
        }
    }
    uses
}

/// An [`Output`] that shows nothing (the kernel's own trial compiles).
struct NoOutput;
impl Output for NoOutput {
    fn stream(&mut self, _: StreamName, _: &str) {}
    fn display(&mut self, _: Bundle) {}
    fn display_as(&mut self, _: Bundle, _: &str, _: bool) {}
    fn clear(&mut self, _: bool) {}
}

/// evcxr's report of a build that failed without a compile error of the cell (a dependency's
/// build script failed: a download, a missing system library) as an error a user reads:
/// cargo's `error:` line and the script's own words, without cargo's JSON, progress lines
/// and backtraces. None for any other message.
fn build_failure(message: &str, count: u32) -> Option<ExecError> {
    let stderr = message.split_once("Compilation failed, but no parsable errors were found. STDERR:")?.1;
    let stderr = stderr.split("\nSTDOUT:").next().unwrap_or(stderr);
    let noise = |l: &str| {
        let t = l.trim();
        t.is_empty()
            || [
                "Updating ",
                "Locking ",
                "Adding ",
                "Compiling ",
                "Downloaded ",
                "Downloading ",
                "Blocking ",
                "cargo:",
                "at ",
                "note: ",
                "Stack backtrace:",
                "stack backtrace:",
                "{\"reason\"",
            ]
            .iter()
            .any(|p| t.starts_with(p))
            || t.split_once(": ").is_some_and(|(n, _)| n.chars().all(|c| c.is_ascii_digit()))
    };
    let lines: Vec<String> = stderr.lines().filter(|l| !noise(l)).map(|l| l.trim_end().to_string()).collect();
    let first = lines.iter().find_map(|l| l.trim().strip_prefix("error: ")).unwrap_or("a dependency failed to build").to_string();
    let mut more: Vec<String> = lines.into_iter().filter(|l| l.trim().strip_prefix("error: ") != Some(first.as_str())).take(24).collect();
    more.push("Nothing of this cell ran; the crates it adds did not come in, and the session is as it was.".into());
    Some(cell_error("BuildError", count, &first, more))
}

/// Whether `code` names `word` (as a whole identifier).
fn names_word(code: &str, word: &str) -> bool {
    code.split(|c: char| !(c.is_alphanumeric() || c == '_')).any(|w| w == word)
}

/// A `:dep` that rebuilds the crates under Bach, under way: where the session was saved, the
/// variables saved (name, type to declare it with), the crates rebuilt, when it began.
struct Rebuilding {
    dir: PathBuf,
    kept: Vec<(String, String)>,
    crates: Vec<String>,
    began: std::time::Instant,
}

/// Lines the kernel put into a cell: `lines` of them from 1-based line `at`.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Inserted {
    at: usize,
    lines: usize,
}

/// Insert `before` (whole lines, evcxr `!`/`:` commands) and `bach::notebook::cell(n);` after
/// the leading evcxr `:` commands of `code`. Returns the new code and where they went.
fn with_cell_prefix(code: &str, n: u64, before: &str) -> (String, Inserted) {
    let lines: Vec<&str> = code.lines().collect();
    // Comment lines among the commands belong to them (evcxr reads `:dep` lines after one).
    let leading = |l: &&&str| l.trim_start().starts_with(':') || l.trim().is_empty() || l.trim_start().starts_with("//");
    let k = lines.iter().take_while(leading).count();
    // ... but the commands end at the last command line: comments after it are the code's.
    let k = lines[..k].iter().rposition(|l| l.trim_start().starts_with(':')).map_or(0, |last| last + 1).max(lines[..k].iter().take_while(|l| l.trim().is_empty()).count());
    let mut s = String::with_capacity(code.len() + 40);
    for l in &lines[..k] {
        s.push_str(l);
        s.push('\n');
    }
    s.push_str(before);
    s.push_str(&calls::cell(n));
    s.push('\n');
    for l in &lines[k..] {
        s.push_str(l);
        s.push('\n');
    }
    (s, Inserted { at: k + 1, lines: before.lines().count() + 1 })
}

/// An error of cell `count`: its first traceback line names the cell and says what happened
/// (Jupyter front ends show the traceback, not `evalue`), then `more` lines.
fn cell_error(ename: &str, count: u32, message: &str, more: Vec<String>) -> ExecError {
    let mut traceback = vec![format!("{ename} in cell [{count}]: {message}")];
    traceback.extend(more);
    ExecError { ename: ename.into(), evalue: message.into(), traceback }
}

/// A panic in the cell as an error a user can act on. A panic in the cell's own code (evcxr
/// compiles the cell as `src/lib.rs`) is a `Panic` at the cell's line; one inside a library
/// (Bach checking shapes or a magic's arguments, ndarray) is an `Error` with the library's
/// message, without paths into the installed crates.
fn panic_error(message: &str, location: &str, cell: &str, build_dir: &Path, count: u32) -> ExecError {
    let kept = "Variables defined by earlier cells, and the Bach session, are kept; those this cell defined are not.".to_string();
    let interrupt = message == bach_wire::line::INTERRUPTED;
    if message.contains("evaluation interrupted") {
        return cell_error("Interrupted", count, message, vec![kept]);
    }

    let Some(line) = location.strip_prefix("src/lib.rs:").and_then(|l| l.split(':').next()?.parse::<usize>().ok()) else {
        return match interrupt {
            true => cell_error("Interrupted", count, "interrupted: the cell stopped", vec![kept]),
            false => cell_error("Error", count, message, vec![kept]),
        };
    };
    // Find the generated line in the cell as written.
    let generated = std::fs::read_to_string(build_dir.join("src/lib.rs")).ok().and_then(|s| s.lines().nth(line - 1).map(|l| l.trim().to_string()));
    // The generated line may carry the kernel's ticks (interruptible.rs): compare without them.
    let at = generated.filter(|g| !g.is_empty()).and_then(|g| {
        let g = crate::interruptible::comparable(&g);
        cell.lines().position(|l| {
            let l = crate::interruptible::comparable(l);
            !l.is_empty() && (l == g || l.contains(g.as_str()))
        })
    });
    let at = at.map(|k| (k + 1, cell.lines().nth(k).unwrap_or("").trim().to_string()));
    let place = match at {
        Some((k, text)) => format!("cell [{count}], line {k}: {text}"),
        None => format!("cell [{count}]"),
    };
    if interrupt {
        let message = "interrupted: the cell stopped";
        return ExecError { ename: "Interrupted".into(), evalue: message.into(), traceback: vec![format!("Interrupted in {place}"), kept] };
    }
    ExecError { ename: "Panic".into(), evalue: message.into(), traceback: vec![format!("Panic in {place}: {message}"), kept] }
}

/// A hint for compile errors a notebook user meets often and whose cause rustc cannot know:
/// a number literal of the wrong kind next to an array (`&price * 2` on floats), `array!`
/// with no import of it, and `min()`/`max()` on a Bach array with no extension trait.
fn hint(message: &str) -> Option<&'static str> {
    let float_array = ["Operand<f64", "Operand<f32"].iter().any(|o| message.contains(o));
    if message.contains("`{integer}: ") && float_array {
        return Some("the array holds floats and `2` is an integer: write the number as a float (`2.0`)");
    }
    if message.contains("cannot find macro `array`") {
        return Some(
            "every cell has Bach's array names but not its `array!` (so that a cell's own `use ndarray::prelude::*` meets no second one): write `use bach::prelude::*;` once (or `use ndarray::prelude::*;` for ndarray's arrays)",
        );
    }
    let min_max = ["no method named `min` found", "no method named `max` found"].iter().any(|m| message.starts_with(m));
    if min_max && message.contains("bach::ArrayBase") {
        return Some(
            "ndarray has no `min`/`max`: Bach's lazy ones are `min_lazy()`/`max_lazy()`; ndarray-stats' (`:dep ndarray-stats = \"0.6\"`, `use ndarray_stats::QuantileExt;`) give `x.min()` on a Bach array as on ndarray's",
        );
    }
    None
}

/// Completions in the order a notebook user scans them (as IPython orders its own): by name,
/// so `exp()` comes before `exp_m1()`, names starting with `_` last, each once.
fn ordered_matches(mut matches: Vec<String>) -> Vec<String> {
    matches.sort_by(|a, b| (a.starts_with('_'), a).cmp(&(b.starts_with('_'), b)));
    matches.dedup();
    matches
}

/// Whether a cell failed only because its value has no `evcxr_display` in scope while
/// `ShowDebug` (which would give it one) is out of scope.
fn show_debug_wanted(errors: &[evcxr::CompilationError]) -> bool {
    let wants = |e: &evcxr::CompilationError| e.message().contains("`ShowDebug` which provides `evcxr_display`");
    errors.iter().any(wants) && errors.iter().all(|e| e.level() != "error" || wants(e))
}

/// One readable message for all of a cell's compile errors (rustc reports many).
fn compile_error(errors: &[evcxr::CompilationError], inserted: Inserted, count: u32, cell: &str) -> ExecError {
    let fix = |line: usize| if line >= inserted.at + inserted.lines { line - inserted.lines } else { line };
    let mut tb = Vec::new();
    let mut first = None;
    let shown: Vec<&evcxr::CompilationError> = match errors.iter().filter(|e| e.level() == "error").count() {
        0 => errors.iter().collect(),
        _ => errors.iter().filter(|e| e.level() == "error").collect(),
    };
    for e in shown {
        let code = e.code().map(|c| format!("[{c}]")).unwrap_or_default();
        let head = format!("{}{code}: {}", e.level(), e.message());
        first.get_or_insert_with(|| e.message());
        tb.push(head);
        for m in e.spanned_messages() {
            if let Some(span) = &m.span {
                tb.push(format!("  --> cell [{count}] line {}, column {}", fix(span.start_line), span.start_column));
                let mut lines = m.lines.clone();
                lines.dedup();
                // evcxr's suggestions sometimes carry lines of its own code (`?`, `map`): show
                // only lines of the cell.
                lines.retain(|l| !l.trim().is_empty() && cell.contains(l.trim()));
                for l in &lines {
                    tb.push(format!("   | {l}"));
                }
                if span.start_line == span.end_line && span.end_column > span.start_column {
                    tb.push(format!("   | {}{} {}", " ".repeat(span.start_column - 1), "^".repeat(span.end_column - span.start_column), m.label));
                } else if !m.label.is_empty() {
                    tb.push(format!("   = {}", m.label));
                }
            }
        }
        for h in e.help() {
            // rustc lists the implementing types after this line; evcxr keeps only the line.
            if h.starts_with("the following other types implement trait") && !h.contains('\n') {
                continue;
            }
            tb.push(format!("   = help: {h}"));
        }
        if let Some(hint) = hint(&e.message()) {
            tb.push(format!("   = help: {hint}"));
        }
        tb.push(String::new());
    }
    let n = errors.iter().filter(|e| e.level() == "error").count();
    ExecError {
        ename: "CompileError".into(),
        evalue: format!("{}{}", first.unwrap_or_default(), if n > 1 { format!(" (and {} more errors)", n - 1) } else { String::new() }),
        traceback: tb,
    }
}

impl Engine for EvcxrEngine {
    fn language_version(&self) -> String {
        rustc_version()
    }

    fn banner(&self) -> String {
        format!("Rust (Bach) {}: evcxr with the Bach offload runtime preloaded. `:bach help` lists the magics.", env!("CARGO_PKG_VERSION"))
    }

    fn execute(&mut self, code: &str, execution_count: u32, out: &mut dyn Output) -> Result<Option<Bundle>, ExecError> {
        let began = std::time::Instant::now();
        let rebuild = code.lines().any(|l| l.trim() == ":bach rebuild");
        // `:bach timing` turns the footer of where each cell's time went on or off.
        if code.lines().any(|l| l.trim() == ":bach timing") {
            self.timing_footer = !self.timing_footer;
            if let Some(file) = crate::stages::file() {
                crate::stages::set_stamping(&file, self.timing_footer || crate::settings::settings().timing());
            }
        }
        let Some(rust) = self.cell_as_rust(code, out)? else { return Ok(None) };
        // The next kernel's standby waits until no cell has run for a while.
        let _running = crate::standby::CellRunning::new();
        self.cells += 1;
        let mut marked = question_mark::mark_end(&rust);
        // Loops, closures and sleeps of the cell stop on an interrupt (interruptible.rs).
        let instrumented = crate::interruptible::instrument(marked.as_deref().unwrap_or(&rust));
        // A cell adding a dependency (`:dep`, or `extern crate` of a crate the build lacks).
        // evcxr checks a `:dep` with a manifest holding it alone, which rewrites the lock to that
        // crate's graph; the lock of the last build that compiled is put back before the
        // build, so the crates already loaded keep their versions (see `Home::prelude`).
        let (good_manifest, good_lock) = good_build(&self.build_dir);
        let known = std::fs::read_to_string(&good_manifest).map(|m| crate::deps::dependency_names(&m)).unwrap_or_default();
        let dependencies = cell_dependencies(&rust, &known);
        let online = !dependencies.is_empty();
        let prefix = std::mem::take(&mut self.next_cell_prefix);
        let first = instrumented.as_deref().or(marked.as_deref()).unwrap_or(&rust).to_string();
        let running = self.running.clone();
        let build_dir = self.build_dir.clone();
        let cargo_config = build_dir.join(".cargo").join("config.toml");
        running.killed.store(false, Ordering::SeqCst);
        running.started.store(false, Ordering::SeqCst);
        running.interrupted.store(false, Ordering::SeqCst);
        running.cell.store(self.cells, Ordering::SeqCst);
        running.busy.store(true, Ordering::SeqCst);
        self.show_start(out);
        let evcxr_displays = self.evcxr_displays;
        let started = match self.started(true) {
            Ok(s) => s,
            Err(e) => {
                running.busy.store(false, Ordering::SeqCst);
                return Err(ExecError { ename: "KernelStartFailed".into(), evalue: e.clone(), traceback: vec![e.clone(), crate::toolchain::start_failure_hint(&e)] });
            }
        };
        // Only now, with the prelude done, is the last good build's lock the session's.
        let restore = match online && good_lock.exists() {
            true => prefix + &restore_lock_line(&good_lock, &build_dir),
            false => prefix,
        };
        let (code, mut inserted) = with_cell_prefix(&first, execution_count as u64, &restore);
        let before: Vec<String> = Self::variables(started);
        // A `:dep` is resolved before anything builds (deps.rs). One that would rebuild a
        // crate the Bach session is built on (and so lose the session and every value whose
        // type came from it) saves the session's arrays and settings first and brings them
        // back after the build; `:bach rebuild` asks for that whatever the check says. One
        // that cannot be checked, or that cargo cannot resolve, is refused with the reason.
        let (display_crate, rebuilding) = match online {
            true => Self::check_dependencies(started, &running, &build_dir, (&good_manifest, &good_lock), &dependencies, rebuild, &before, execution_count, out)?,
            false => (false, None),
        };
        if let Some(r) = &rebuilding {
            // `bach_session` is made again by the prelude, with the settings restored.
            *running.hide_lost.lock().unwrap() = r.kept.iter().map(|(n, _)| n.clone()).chain([calls::SESSION_VARIABLE.to_string()]).collect();
        }
        // evcxr runs cargo offline, so a kernel never reaches the network to start; a cell
        // adding a dependency runs online, as it may need to download the crate. evcxr checks
        // a `:dep` with `cargo metadata` in the build directory before it rewrites that
        // directory's `.cargo/config.toml` for the new state, so rewrite it first (as evcxr
        // will: `[net] offline = false`).
        if online {
            let _ = started.ctx.execute(":offline 0");
            let _ = std::fs::write(cargo_config, "\n[net]\noffline = false\n");
        }
        // A display crate comes in (evcxr_image...): its traits give values an `evcxr_display`
        // that the prelude's `ShowDebug` would make ambiguous, so the session goes back to
        // evcxr's own way of showing a value (try `evcxr_display`, else `{:?}`), from this
        // cell on (the tour adds evcxr_image and shows an image in one cell).
        let display_crate = display_crate && !evcxr_displays && started.ctx.execute(crate::home::WITHOUT_SHOW_DEBUG).is_ok();
        let mut cell_run = Self::run(started, &running, execution_count, &code, out);
        let interrupted = || running.interrupted.load(Ordering::SeqCst);
        if (evcxr_displays || display_crate) && !interrupted() && matches!(&cell_run.result, Err(evcxr::Error::CompilationErrors(e)) if show_debug_wanted(e)) {
            // Without `ShowDebug` (a display crate is in), evcxr's own fallback to `{:?}` does
            // not happen: rustc's help to import `ShowDebug` points into the cell, and evcxr
            // reports that help. Compile the cell again with `ShowDebug` in scope, for this cell.
            if started.ctx.execute(crate::home::WITH_SHOW_DEBUG).is_ok() {
                cell_run = Self::run(started, &running, execution_count, &code, out);
                let _ = started.ctx.execute(crate::home::WITHOUT_SHOW_DEBUG);
            }
        }
        if (marked.is_some() || instrumented.is_some()) && !interrupted() && matches!(cell_run.result, Err(evcxr::Error::CompilationErrors(_))) {
            // The end marker and the ticks must never be why a cell fails, and errors should
            // point at the cell as written: compile it again as written.
            marked = None;
            let (code, line) = with_cell_prefix(&rust, execution_count as u64, &restore);
            inserted = line;
            cell_run = Self::run(started, &running, execution_count, &code, out);
        }
        let CellRun { result, panic, reached_end, last_stderr } = cell_run;
        let early_return = marked.is_some() && !reached_end && panic.is_none() && result.is_ok();
        if let (false, Some(line)) = (early_return, &last_stderr) {
            out.stream(StreamName::Stderr, &format!("{line}\n"));
        }
        if online {
            let _ = started.ctx.execute(":offline 1");
        }
        // The build as it now is becomes the last good one; a cell that failed (its crates did
        // not come in) leaves no trace of them for the next cell or check.
        match (result.is_ok() || panic.is_some(), online) {
            (true, _) => keep_good_build(&build_dir),
            (false, true) => back_to_good_build(&build_dir),
            (false, false) => {}
        }
        // Bach was rebuilt: evcxr dropped `bach_session` with every value whose type came from
        // the old build; the prelude runs again (after the cell's outputs) and gives the
        // session a new one, and what was saved comes back.
        let session_rebuilt = online && !Self::variables(started).iter().any(|v| v.starts_with("bach_session:"));
        running.hide_lost.lock().unwrap().clear();
        // The crate did not come in after all (the `:dep` failed): `ShowDebug` back.
        let came_in = || std::fs::read_to_string(build_dir.join("Cargo.lock")).is_ok_and(|l| l.contains("name = \"evcxr_runtime\""));
        let display_crate = display_crate && (came_in() || started.ctx.execute(crate::home::WITH_SHOW_DEBUG).is_err());
        running.busy.store(false, Ordering::SeqCst);
        *running.child.lock().unwrap() = Some(started.ctx.process_handle());
        self.evcxr_displays |= display_crate;
        if let Some(e) = self.interruption(&running, &before, execution_count) {
            return Err(e);
        }
        self.breakdown = self.time_by_stage(&result, began, execution_count);
        self.session_back(session_rebuilt, &rebuilding, &before, execution_count, out);
        self.settle_uses(&rust, &result, &running, execution_count, out);
        let early = early_return.then(|| last_stderr.unwrap_or_else(|| "an error (see above)".into()));
        self.outcome(result, panic, early, inserted, &rust, &before, execution_count, out)
    }

    fn complete(&mut self, code: &str, cursor: usize) -> Completions {
        // Jupyter counts characters; evcxr counts bytes.
        let byte = code.char_indices().nth(cursor).map_or(code.len(), |(b, _)| b);
        let mut c = Completions { matches: vec![], cursor_start: cursor, cursor_end: cursor };
        if let Some(m) = magics::complete(code, byte) {
            c.matches = m.0;
            c.cursor_start = code[..m.1].chars().count();
            return c;
        }
        let Ok(started) = self.started_within(Some(START_WAIT)) else { return c };
        match started.ctx.completions(code, byte) {
            Ok(r) => {
                c.matches = ordered_matches(r.completions.into_iter().map(|x| x.code).collect());
                c.cursor_start = code[..r.start_offset.min(code.len())].chars().count();
                c.cursor_end = code[..r.end_offset.min(code.len())].chars().count();
            }
            Err(e) => eprintln!("bach-kernel: completion failed: {e}"),
        }
        c
    }

    fn inspect(&mut self, code: &str, cursor: usize, _detail_level: u8) -> Option<Bundle> {
        let byte = code.char_indices().nth(cursor).map_or(code.len(), |(b, _)| b);
        let word_start = code[..byte].rfind(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(0, |i| i + 1);
        let word_end = code[byte..].find(|c: char| !(c.is_alphanumeric() || c == '_')).map_or(code.len(), |i| byte + i);
        let word = &code[word_start..word_end];
        let mut bundle = Bundle::new();
        let started = self.started_within(Some(START_WAIT)).ok()?;
        if let Some((_, ty)) = started.ctx.variables_and_types().find(|(n, _)| *n == word) {
            bundle.insert("text/plain".into(), format!("{word}: {ty}").into());
            return Some(bundle);
        }
        let (plain, html) = started.ctx.hover_at(code, word_end.max(byte)).ok()?;
        if plain.trim().is_empty() {
            return None;
        }
        bundle.insert("text/plain".into(), plain.into());
        bundle.insert("text/html".into(), html.into());
        Some(bundle)
    }

    fn interrupter(&self) -> Interrupter {
        let running = self.running.clone();
        Arc::new(move || {
            if !running.busy.load(Ordering::SeqCst) {
                return;
            }
            let cell = running.cell.load(Ordering::SeqCst);
            // Seen by `run` when the cell's code starts (a compile that finished first).
            if running.interrupted.swap(true, Ordering::SeqCst) {
                return; // already stopping
            }
            if running.started.load(Ordering::SeqCst) {
                running.signal(cell);
            } else {
                running.cancel_compile(cell);
            }
        })
    }
}

/// A display line carries every field as text; JSON MIME types (`application/json`, a
/// widget's `application/vnd.jupyter.widget-view+json`) go to the front end as JSON.
fn json_mimes_parsed(mut bundle: Bundle) -> Bundle {
    for (mime, value) in bundle.iter_mut() {
        if mime == "application/json" || mime.ends_with("+json") {
            if let Some(parsed) = value.as_str().and_then(|text| serde_json::from_str(text).ok()) {
                *value = parsed;
            }
        }
    }
    bundle
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_integer_next_to_a_float_array_gets_a_hint() {
        assert!(hint("the trait bound `{integer}: Operand<f64, bach::Dim<[usize; 1]>>` is not satisfied").is_some());
        assert!(hint("the trait bound `{float}: Operand<f64, bach::Dim<[usize; 1]>>` is not satisfied").is_none());
        assert!(hint("mismatched types").is_none());
    }

    #[test]
    fn array_without_its_import_and_min_without_a_trait_get_hints() {
        assert!(hint("cannot find macro `array` in this scope").is_some_and(|h| h.contains("use bach::prelude::*;")));
        let min = "no method named `min` found for struct `bach::ArrayBase<bach::OwnedRepr<f64>, bach::Dim<[usize; 1]>>` in the current scope";
        assert!(hint(min).is_some_and(|h| h.contains("min_lazy()") && h.contains("QuantileExt")));
        assert!(hint(&min.replace("`min`", "`max`")).is_some());
        assert!(hint("no method named `min` found for struct `Foo` in the current scope").is_none());
    }

    #[test]
    fn completions_come_by_name_private_last() {
        let m = ordered_matches(["exp_m1()", "_marker", "exp()", "abs()", "exp()"].map(String::from).to_vec());
        assert_eq!(m, ["abs()", "exp()", "exp_m1()", "_marker"]);
    }

    #[test]
    fn cells_adding_a_dependency_run_online() {
        let known = ["bach".to_string(), "ndarray".into(), "plotters-backend".into()];
        let adds = |code: &str| !cell_dependencies(code, &known).is_empty();
        assert!(adds(":dep humantime = \"2\"\nhumantime::format_duration(d)"));
        assert!(adds("let x = 1;\n  :dep foo = { path = \"/f\" }"));
        assert!(!adds("let dep = 1;\n// :dep in a comment is not a command\n"));
        assert!(!adds(":offline 1\n:dep foo = \"1\""), "the user's own :offline wins");
        assert!(!adds(":depx"));
        assert_eq!(cell_dependencies("extern crate itoa;\nitoa::Buffer::new()", &known), ["itoa = \"*\""]);
        assert!(!adds("extern crate ndarray;\nextern crate plotters_backend as pb;\nextern crate alloc;"), "crates the build has");
        assert_eq!(
            modern_dep_lines(":dep p = { version = \"0.3\", default_features = false }\nlet default_features = 1;\n").0,
            ":dep p = { version = \"0.3\", default-features = false }\nlet default_features = 1;\n"
        );
        assert_eq!(lost_line("The type of the variable a was redefined, so was lost."), Some("a"));
        assert_eq!(
            raw_gen_calls("let x = rng.gen::<f64>() + r.gen();\nprintln!(\"a.gen()\"); // b.gen()\nr.gen_range(0..3)").unwrap(),
            "let x = rng.r#gen::<f64>() + r.r#gen();\nprintln!(\"a.gen()\"); // b.gen()\nr.gen_range(0..3)"
        );
        assert_eq!(raw_gen_calls("r.gen_range(0..3); \"é\".len()"), None);
    }

    #[test]
    fn a_ported_cell_reads_ndarray_paths_as_bachs() {
        let cell = "use bach::{Array2, Axis};\nfn f(x: &ndarray::Array2<f64>) -> ndarray::Array1<f64> { x.sum_axis(ndarray::Axis(0)) }\n\
                    let s = ndarray::s![.., 1]; // ndarray::x\nprintln!(\"ndarray::y {}\", ::ndarray::arr1(&[1.0]));\nlet c = '\"'; /* ndarray::z */ my_ndarray::q();";
        assert_eq!(
            bach_paths(cell).unwrap(),
            "use bach::{Array2, Axis};\nfn f(x: &bach::Array2<f64>) -> bach::Array1<f64> { x.sum_axis(bach::Axis(0)) }\n\
             let s = bach::s![.., 1]; // ndarray::x\nprintln!(\"ndarray::y {}\", ::ndarray::arr1(&[1.0]));\nlet c = '\"'; /* ndarray::z */ my_ndarray::q();"
        );
        // `use bach;` (a port of `use ndarray;`) counts; a cell that still imports ndarray, or
        // imports nothing, is left as it is.
        assert_eq!(bach_paths("{\n    use bach;\n    let a = ndarray::arr1(&[1.0]);\n}").unwrap(), "{\n    use bach;\n    let a = bach::arr1(&[1.0]);\n}");
        assert_eq!(bach_paths("use bach::prelude::*;\nuse ndarray::Zip;\nlet a = ndarray::arr1(&[1.0]);"), None);
        assert_eq!(bach_paths("let a = ndarray::arr1(&[1.0]);"), None);
    }

    #[test]
    fn cell_prefix_goes_after_leading_commands() {
        let (code, at) = with_cell_prefix(":dep foo = \"1\"\nlet x = 1;\nx", 7, "");
        assert_eq!(code, ":dep foo = \"1\"\nbach::notebook::cell(7);\nlet x = 1;\nx\n");
        assert_eq!(at, Inserted { at: 2, lines: 1 });
        let (code, at) = with_cell_prefix("1 + 1", 3, "");
        assert_eq!(code, "bach::notebook::cell(3);\n1 + 1\n");
        assert_eq!(at, Inserted { at: 1, lines: 1 });
        let (code, _) = with_cell_prefix(":dep a = \"1\"\n// the next one\n:dep b = \"1\"\n// uses them\nb::f()", 5, "");
        assert_eq!(code, ":dep a = \"1\"\n// the next one\n:dep b = \"1\"\nbach::notebook::cell(5);\n// uses them\nb::f()\n");
        let (code, at) = with_cell_prefix(":dep foo = \"1\"\nfoo::f()", 4, "!cp a b\n");
        assert_eq!(code, ":dep foo = \"1\"\n!cp a b\nbach::notebook::cell(4);\nfoo::f()\n");
        assert_eq!(at, Inserted { at: 2, lines: 2 });
    }

    #[test]
    fn a_failed_build_script_reads_as_its_own_words() {
        let evcxr = "Compilation failed, but no parsable errors were found. STDERR:\n    Updating crates.io index\n      Adding ring v0.17.14\nerror: failed to run custom build command for `openblas-src v0.10.16`\nnote: To improve backtraces\n\nCaused by:\n  --- stdout\n  cargo:rerun-if-env-changed=OPENBLAS_CC\n  --- stderr\n  thread 'main' panicked at build.rs:213:52:\n  io: failed to lookup address information\n  stack backtrace:\n     0: openblas_build::download::download\n               at /rustc/x/panicking.rs:1:2\n\nSTDOUT:{\"reason\":\"build-finished\"}";
        let e = build_failure(evcxr, 3).unwrap();
        assert_eq!(e.ename, "BuildError");
        assert_eq!(e.evalue, "failed to run custom build command for `openblas-src v0.10.16`");
        let tb = e.traceback.join("\n");
        assert!(tb.contains("failed to lookup address") && tb.contains("Caused by:"), "{tb}");
        assert!(!tb.contains("Adding") && !tb.contains("reason") && !tb.contains("0: openblas") && !tb.contains("cargo:rerun"), "{tb}");
        assert!(build_failure("something else", 3).is_none());
    }

    #[test]
    fn a_cells_use_statements_are_found() {
        let cell = "use std::collections::{HashSet,\n    HashMap};\nuse ndarray::Array2;\nfn f() {\n    use std::fmt;\n}\nlet x = 1;";
        assert_eq!(use_statements(cell), ["use std::collections::{HashSet,\n    HashMap};", "use ndarray::Array2;"]);
    }

    #[test]
    fn ndarray_names_a_cell_imports_are_known() {
        assert_eq!(ndarray_uses("use ndarray::{Array2, Axis, arr1 as a1};\nuse ndarray::Array1;"), ["Array2", "Array1"]);
        assert!(ndarray_uses("use ndarray::prelude::*;").contains(&"Array2".to_string()));
        assert!(ndarray_uses("use ndarray_rand::RandomExt;").is_empty());
        assert!(names_word("let a: Array2<f64> = x;", "Array2") && !names_word("Array2D", "Array2"));
    }

    #[test]
    fn json_mimes_go_as_json() {
        let line = r#"{"application/vnd.jupyter.widget-view+json":"{\"model_id\":\"ab\",\"version_major\":2}","text/plain":"{not json"}"#;
        let bundle = json_mimes_parsed(serde_json::from_str(line).unwrap());
        assert_eq!(bundle["application/vnd.jupyter.widget-view+json"]["model_id"], "ab");
        assert_eq!(bundle["text/plain"], "{not json");
    }
}

//! The kernel's standby: a kernel process started ahead of time, with evcxr, rust-analyzer and
//! the prelude ready, that the next `bach-kernel kernel` hands its connection file to. A kernel
//! start (a new notebook, a restart) then answers its first cell in well under a second instead
//! of waiting the ~9 s rust-analyzer needs to analyse the standard library and Bach's crates
//! (ARCHITECTURE.md, "Start-up"): rust-analyzer keeps its analysis in memory only, so the one
//! way to reuse it across kernel starts is to keep a process that has it.
//!
//! - One standby per user and kernel environment (the binary, and every environment variable
//!   but Jupyter's per-kernel `JPY_*` ones: the `bach-emulated` kernelspec gets its own), waiting
//!   on a Unix socket in `$TMPDIR/bach-kernel/standby-UID/`. It exits after
//!   `BACH_KERNEL_STANDBY` seconds unused (default 1800); `BACH_KERNEL_STANDBY=0` turns it off.
//! - A kernel that finds none starts cold, as before, and starts a standby once its own prelude
//!   has run and it has run no cell for 3 s (so the two do not compete for the cores while a
//!   user waits). A kernel that was a standby starts the next one the same way.
//! - Hand-over: the launcher (the process Jupyter started and watches) sends one JSON line
//!   (`connection_file`, `cwd`, `pid`); the standby answers `ok`, binds the connection file's
//!   ports and serves it; the launcher waits until the socket closes (the kernel ended) and
//!   exits; the kernel exits when the launcher is gone: its end closes the socket
//!   (`server::Watch::Until`, `launcher_gone`). The cells run
//!   in the launcher's directory (the first cell changes to it). The standby's session has
//!   touched no device: Bach makes the session on first use (`bach::notebook::NotebookSession`).
//! - A standby's messages (and, once it is a kernel, the kernel's) go to `<key>.<pid>.log`
//!   beside its socket, removed when it ends well.
//! - A launcher that finds a standby still starting waits for it (up to two minutes): that is
//!   never slower than starting cold.

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::{UnixListener, UnixStream};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const DEFAULT_IDLE: Duration = Duration::from_secs(1800);

/// How long a standby may wait unused, or None when standbys are off.
pub fn idle_limit() -> Option<Duration> {
    idle_limit_from(crate::settings::settings().standby.as_deref())
}

fn idle_limit_from(v: Option<&str>) -> Option<Duration> {
    match v.map(str::trim) {
        None | Some("") | Some("on") => Some(DEFAULT_IDLE),
        Some("0") | Some("off") => None,
        Some(s) => Some(s.parse::<u64>().map(Duration::from_secs).unwrap_or(DEFAULT_IDLE)),
    }
}

/// The environment that decides whether a standby can serve a kernel: everything but the
/// variables Jupyter sets per kernel, evcxr's (the kernel sets `EVCXR_CONFIG_DIR` for itself),
/// the comm socket's and the stamps file's (each kernel sets its own) and the shell's own
/// bookkeeping.
fn relevant_env(vars: impl Iterator<Item = (String, String)>) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = vars
        .filter(|(k, _)| {
            !(k.starts_with("JPY_") || k.starts_with("EVCXR_") || [crate::comms::SOCKET_ENV, crate::stages::STAGES_ENV, "PWD", "OLDPWD", "SHLVL", "_"].contains(&k.as_str()))
        })
        .collect();
    v.sort();
    v
}

/// The standby key: this binary (path and modification time: a reinstall is a new key) and
/// the relevant environment.
fn key() -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::hash::DefaultHasher::new();
    if let Ok(exe) = std::env::current_exe() {
        exe.hash(&mut h);
        if let Ok(m) = std::fs::metadata(&exe).and_then(|m| m.modified()) {
            m.hash(&mut h);
        }
    }
    relevant_env(std::env::vars()).hash(&mut h);
    format!("{:016x}", h.finish())
}

fn dir() -> PathBuf {
    // SAFETY: getuid has no preconditions and cannot fail.
    let uid = unsafe { libc::getuid() };
    std::env::temp_dir().join("bach-kernel").join(format!("standby-{uid}"))
}

fn socket_path() -> PathBuf {
    dir().join(format!("{}.sock", key()))
}

/// What the launcher sends.
#[derive(Debug, PartialEq)]
struct Request {
    connection_file: PathBuf,
    cwd: PathBuf,
    pid: i32,
}

impl Request {
    fn to_line(&self) -> String {
        serde_json::json!({ "connection_file": self.connection_file, "cwd": self.cwd, "pid": self.pid }).to_string() + "\n"
    }

    fn parse(line: &str) -> Result<Request, String> {
        let v: serde_json::Value = serde_json::from_str(line).map_err(|e| format!("bad request: {e}"))?;
        let path = |k: &str| v[k].as_str().map(PathBuf::from).ok_or_else(|| format!("bad request: no {k}"));
        Ok(Request { connection_file: path("connection_file")?, cwd: path("cwd")?, pid: v["pid"].as_i64().ok_or("bad request: no pid")? as i32 })
    }
}

/// Launcher side: hand `connection_file` to a waiting standby. Returns true when a standby
/// took it and has now ended (the kernel ran there); false when there is none (start cold).
pub fn hand_over(connection_file: &Path) -> bool {
    if idle_limit().is_none() {
        return false;
    }
    let Ok(mut stream) = UnixStream::connect(socket_path()) else { return false };
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("/"));
    let connection_file = if connection_file.is_absolute() { connection_file.to_path_buf() } else { cwd.join(connection_file) };
    let request = Request { connection_file, cwd, pid: std::process::id() as i32 };
    // A standby that is still starting answers when it is ready.
    let _ = stream.set_read_timeout(Some(Duration::from_secs(120)));
    if stream.write_all(request.to_line().as_bytes()).is_err() {
        return false;
    }
    let mut reader = BufReader::new(stream);
    let mut answer = String::new();
    let pid = match reader.read_line(&mut answer).map(|_| answer.trim().strip_prefix("ok ").map(str::to_owned)) {
        Ok(Some(pid)) => pid,
        _ => {
            eprintln!("bach-kernel: the standby did not take the kernel ({}); starting cold", answer.trim());
            return false;
        }
    };
    eprintln!("bach-kernel: served by the standby kernel, process {pid} (its messages: {})", log_path(&pid).display());
    // The kernel runs in the standby's process now; wait until it ends (the socket closes).
    let _ = reader.get_ref().set_read_timeout(None);
    let mut rest = Vec::new();
    let _ = std::io::Read::read_to_end(&mut reader, &mut rest);
    true
}

/// Start a standby for this environment in the background (a detached `bach-kernel standby`),
/// unless standbys are off. A second standby for the same key exits at once.
pub fn spawn() {
    if idle_limit().is_none() {
        return;
    }
    let (Ok(exe), Ok(())) = (std::env::current_exe(), create_dir()) else { return };
    let mut cmd = std::process::Command::new(exe);
    cmd.arg("standby").stdin(std::process::Stdio::null()).stdout(std::process::Stdio::null()).stderr(std::process::Stdio::null());
    // Not this kernel's comm socket: the standby makes its own.
    cmd.env_remove(crate::comms::SOCKET_ENV);
    // Nor its stamps file (stages.rs): the standby names its own.
    cmd.env_remove(crate::stages::STAGES_ENV);
    // SAFETY: setsid is async-signal-safe; the standby leaves Jupyter's process group, so
    // ending this kernel does not end it.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
    if let Ok(mut child) = cmd.spawn() {
        // Reap it when it exits (idle, or when the kernel it became ends).
        std::thread::spawn(move || child.wait());
    }
}

/// Cells running now, and when the last one ended (ms since [`EPOCH`]).
static RUNNING: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
static LAST_END_MS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
/// How long the kernel must have run no cell before its standby starts.
const QUIET: Duration = Duration::from_secs(3);

fn now_ms() -> u64 {
    EPOCH.get_or_init(Instant::now).elapsed().as_millis() as u64
}

/// Held while a cell runs: the next standby waits for the kernel to be quiet.
pub struct CellRunning;

impl CellRunning {
    pub fn new() -> Self {
        RUNNING.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        CellRunning
    }
}

impl Drop for CellRunning {
    fn drop(&mut self) {
        LAST_END_MS.store(now_ms(), std::sync::atomic::Ordering::SeqCst);
        RUNNING.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

/// Whether this kernel is to start a standby, and whether it has.
static WANTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
static SPAWNED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

fn spawn_once() {
    if !SPAWNED.swap(true, std::sync::atomic::Ordering::SeqCst) {
        spawn();
    }
}

/// [`spawn`] once this kernel has run no cell for [`QUIET`] (or as it ends: see
/// [`spawn_if_wanted`]): a standby's start (evcxr, rust-analyzer, the prelude: about 10 s of
/// both cores here) then does not slow the user's first cells (measured: a trivial cell's
/// median 0.25-0.28 s alone, 0.32-0.38 s beside it).
pub fn spawn_when_quiet() {
    if idle_limit().is_none() {
        return;
    }
    WANTED.store(true, std::sync::atomic::Ordering::SeqCst);
    let _ = now_ms();
    std::thread::spawn(|| loop {
        std::thread::sleep(Duration::from_millis(250));
        let idle_since = LAST_END_MS.load(std::sync::atomic::Ordering::SeqCst);
        if RUNNING.load(std::sync::atomic::Ordering::SeqCst) == 0 && now_ms().saturating_sub(idle_since) >= QUIET.as_millis() as u64 {
            spawn_once();
            return;
        }
    });
}

/// At the kernel's end: the standby it was to start and has not (its cells never paused)
/// starts now, so that a restart's kernel finds one starting and waits for it.
pub fn spawn_if_wanted() {
    if WANTED.load(std::sync::atomic::Ordering::SeqCst) {
        spawn_once();
    }
}

fn log_path(pid: &str) -> PathBuf {
    dir().join(format!("{}.{pid}.log", key()))
}

/// Send this process's stderr to its log file; returns the file's path.
pub fn log_to_file() -> Option<PathBuf> {
    let path = log_path(&std::process::id().to_string());
    let file = std::fs::File::create(&path).ok()?;
    // SAFETY: dup2 onto stderr of a descriptor we own; the file stays open as fd 2.
    let ok = unsafe { libc::dup2(std::os::fd::AsRawFd::as_raw_fd(&file), 2) } == 2;
    ok.then_some(path)
}

fn create_dir() -> Result<(), String> {
    let d = dir();
    std::fs::create_dir_all(&d).map_err(|e| format!("cannot create {}: {e}", d.display()))?;
    std::fs::set_permissions(&d, std::fs::Permissions::from_mode(0o700)).map_err(|e| format!("cannot protect {}: {e}", d.display()))
}

/// Standby side, first step: own this key's socket. None when another standby has it.
pub fn claim() -> Result<Option<UnixListener>, String> {
    create_dir()?;
    let path = socket_path();
    // One claimant at a time (two standbys starting together).
    let lock = std::fs::File::create(path.with_extension("lock")).map_err(|e| format!("cannot create the standby lock: {e}"))?;
    // SAFETY: flock on a file descriptor we own; released when `lock` is dropped.
    unsafe { libc::flock(std::os::fd::AsRawFd::as_raw_fd(&lock), libc::LOCK_EX) };
    if UnixStream::connect(&path).is_ok() {
        return Ok(None);
    }
    let _ = std::fs::remove_file(&path);
    let listener = UnixListener::bind(&path).map_err(|e| format!("cannot listen on {}: {e}", path.display()))?;
    // Which binary waits here, for `stop_waiting` (an uninstall or reinstall of it).
    if let Ok(exe) = std::env::current_exe() {
        let _ = std::fs::write(path.with_extension("exe"), exe.as_os_str().as_encoded_bytes());
    }
    Ok(Some(listener))
}

/// Stop the standbys waiting with a binary under `kernel_dir` (the kernelspec being
/// uninstalled or replaced): their sockets go, and a standby whose socket is gone exits
/// (`wait` checks every 50 ms). Kernels already serving a notebook are not touched. Returns
/// how many were told.
pub fn stop_waiting(kernel_dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir()) else { return 0 };
    // The binary's path as the standby sees it (`/proc/self/exe`: links resolved).
    let kernel_dir = std::fs::canonicalize(kernel_dir).unwrap_or_else(|_| kernel_dir.to_path_buf());
    let mut stopped = 0;
    for entry in entries.flatten() {
        let path = entry.path();
        if path.extension().is_none_or(|e| e != "exe") {
            continue;
        }
        let Ok(exe) = std::fs::read(&path) else { continue };
        // SAFETY (of the encoding): written by `claim` from an OsStr on this machine.
        let exe = PathBuf::from(unsafe { std::ffi::OsStr::from_encoded_bytes_unchecked(&exe) });
        if !exe.starts_with(&kernel_dir) {
            continue;
        }
        if std::fs::remove_file(path.with_extension("sock")).is_ok() {
            stopped += 1;
        }
        let _ = std::fs::remove_file(&path);
    }
    stopped
}

/// A kernel handed over to this standby: where to serve and whom to watch.
pub struct Adopted {
    pub connection_file: PathBuf,
    pub cwd: PathBuf,
    pub launcher: i32,
    /// Open until this process exits: the launcher waits for it to close.
    pub stream: UnixStream,
}

/// Standby side, second step: wait for a launcher, up to `idle`. None when nobody came (or
/// the socket was taken over by a newer standby).
pub fn wait(listener: UnixListener, idle: Duration) -> Option<Adopted> {
    let path = socket_path();
    let _ = listener.set_nonblocking(true);
    let deadline = Instant::now() + idle;
    let inode = |p: &Path| std::fs::metadata(p).ok().map(|m| std::os::unix::fs::MetadataExt::ino(&m));
    // Removed already (an uninstall while this standby was starting): nobody can reach us.
    let mine = inode(&path)?;
    while Instant::now() < deadline {
        match listener.accept() {
            Ok((stream, _)) => {
                let _ = stream.set_nonblocking(false);
                let _ = stream.set_read_timeout(Some(Duration::from_secs(5)));
                let mut line = String::new();
                let request = BufReader::new(&stream).read_line(&mut line).map_err(|e| e.to_string()).and_then(|_| Request::parse(&line));
                match request {
                    Ok(r) => {
                        // Nobody else may connect to a standby that is now a kernel.
                        let _ = std::fs::remove_file(&path);
                        let _ = std::fs::remove_file(path.with_extension("exe"));
                        return Some(Adopted { connection_file: r.connection_file, cwd: r.cwd, launcher: r.pid, stream });
                    }
                    Err(e) => {
                        let _ = (&stream).write_all(format!("no {e}\n").as_bytes());
                    }
                }
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => std::thread::sleep(Duration::from_millis(50)),
            Err(_) => std::thread::sleep(Duration::from_millis(200)),
        }
        // Our socket file was removed or replaced: nobody can reach us.
        if inode(&path) != Some(mine) {
            return None;
        }
    }
    let _ = std::fs::remove_file(&path);
    let _ = std::fs::remove_file(path.with_extension("exe"));
    None
}

/// A function that blocks until the launcher is gone (its socket closes: it ended, or was
/// killed), and says so.
pub fn launcher_gone(adopted: &Adopted) -> std::io::Result<Box<dyn FnOnce() -> String + Send>> {
    let stream = adopted.stream.try_clone()?;
    stream.set_read_timeout(None)?;
    let pid = adopted.launcher;
    Ok(Box::new(move || {
        let mut buf = [0u8; 64];
        while let Ok(n) = std::io::Read::read(&mut &stream, &mut buf) {
            if n == 0 {
                break;
            }
        }
        format!("the launcher (process {pid}) is gone")
    }))
}

/// Tell the launcher the kernel is taken.
pub fn accept(adopted: &mut Adopted) -> bool {
    adopted.stream.write_all(format!("ok {}\n", std::process::id()).as_bytes()).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn idle_limit_reads_the_variable() {
        assert_eq!(idle_limit_from(None), Some(DEFAULT_IDLE));
        assert_eq!(idle_limit_from(Some("0")), None);
        assert_eq!(idle_limit_from(Some("off")), None);
        assert_eq!(idle_limit_from(Some("120")), Some(Duration::from_secs(120)));
        assert_eq!(idle_limit_from(Some("soon")), Some(DEFAULT_IDLE), "an unreadable value keeps the default");
    }

    #[test]
    fn jupyters_per_kernel_variables_do_not_split_standbys() {
        let a = relevant_env([("JPY_SESSION_NAME", "a.ipynb"), ("BACH_DEVICE", "cpu"), ("PWD", "/a")].into_iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let b = relevant_env([("PWD", "/b"), ("BACH_DEVICE", "cpu"), ("JPY_SESSION_NAME", "b.ipynb")].into_iter().map(|(k, v)| (k.to_string(), v.to_string())));
        assert_eq!(a, b);
        let c = relevant_env([("BACH_DEVICE", "emulated")].into_iter().map(|(k, v)| (k.to_string(), v.to_string())));
        assert_ne!(a, c, "another kernelspec's environment is another standby");
        let with_socket = relevant_env([("BACH_DEVICE", "emulated"), ("BACH_COMM_SOCKET", "/tmp/k/comm.sock")].into_iter().map(|(k, v)| (k.to_string(), v.to_string())));
        assert_eq!(with_socket, c, "a kernel's comm socket is its own, not its environment's");
        let with_stamps = relevant_env([("BACH_DEVICE", "emulated"), ("BACH_CELL_STAGES", "/tmp/k/stages")].into_iter().map(|(k, v)| (k.to_string(), v.to_string())));
        assert_eq!(with_stamps, c, "a kernel's stamps file (stages.rs) is its own, not its environment's");
    }

    #[test]
    fn an_uninstall_stops_the_standbys_waiting_with_its_binary() {
        let listener = claim().expect("claim").expect("no standby for this test binary yet");
        let waiting = std::thread::spawn(move || {
            let started = Instant::now();
            (wait(listener, Duration::from_secs(60)).is_none(), started.elapsed())
        });
        let exe_dir = std::env::current_exe().unwrap().parent().unwrap().to_path_buf();
        assert_eq!(stop_waiting(&exe_dir.join("elsewhere")), 0, "another install's standbys stay");
        assert!(socket_path().exists());
        assert_eq!(stop_waiting(&exe_dir), 1);
        let (gone, after) = waiting.join().unwrap();
        assert!(gone && after < Duration::from_secs(5), "the standby stopped waiting ({after:?})");
        assert!(!socket_path().exists() && !socket_path().with_extension("exe").exists());
        assert_eq!(stop_waiting(&exe_dir), 0);
    }

    #[test]
    fn requests_round_trip() {
        let r = Request { connection_file: "/run/user/1/kernel-1.json".into(), cwd: "/home/u/notebooks with spaces".into(), pid: 42 };
        assert_eq!(Request::parse(r.to_line().trim()).unwrap(), r);
        assert!(Request::parse("{\"cwd\": \"/\"}").is_err());
    }
}

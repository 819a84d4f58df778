//! Jupyter comms from notebook code: a channel of JSON messages between a cell's objects and
//! the front end (what ipywidgets and every custom widget are built on; the messaging spec's
//! "Custom messages").
//!
//! ```no_run
//! // Open one from Rust: the front end gets a `comm_open` for target "my.target".
//! let comm = bach::comm::Comm::open("my.target", r#"{"hello": 1}"#).unwrap();
//! let echo = comm.clone();
//! comm.on_msg(move |data| { let _ = echo.send(data); });
//! // Or answer the front end's: a `comm_open` for "echo" calls this.
//! bach::comm::register_target("echo", |comm, data| { let _ = comm.send(data); });
//! ```
//!
//! Messages are JSON text (`serde_json::to_string` of anything, with `:dep serde_json`).
//! Callbacks run on a thread of their own, one message at a time and in order; a message the
//! front end sends while a cell runs reaches its callback when the cell ends (the kernel reads
//! it then). A callback that panics is reported in the kernel's log and the comm goes on.
//!
//! The link to the kernel: a Unix socket whose path the kernel gives the Rust process
//! (`BACH_COMM_SOCKET`), opened on first use; one line per message, as `bach_wire::comm`
//! defines them. Every line this side sends is acknowledged once the kernel has published it,
//! so a `comm_open` reaches the front end before a display that refers to it. The kernel's
//! side: `kernel/src/comms.rs`.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{mpsc, Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;

use bach_runtime::{json, BachError, Result};
use bach_wire::comm::{from_hex_list, one_line, to_hex_list, write_line, Parsed, Verb};

/// The environment variable naming the kernel's comm socket.
pub use bach_wire::comm::SOCKET_ENV;

type OnOpen = Arc<dyn Fn(Comm, &str) + Send + Sync>;
type OnMsg = Arc<dyn Fn(&str) + Send + Sync>;
type OnMsgBuffers = Arc<dyn Fn(&str, &[Vec<u8>]) + Send + Sync>;

/// One comm: a target name and an id shared with the front end. Clones are the same comm.
#[derive(Clone, Debug)]
pub struct Comm {
    id: Arc<str>,
    target: Arc<str>,
}

#[derive(Default)]
struct Handlers {
    on_msg: Vec<OnMsgBuffers>,
    on_close: Vec<OnMsg>,
}

/// The connection to the kernel, shared by every comm of the process.
struct Link {
    writer: Mutex<UnixStream>,
    next: AtomicU64,
    /// The highest sequence number the kernel acknowledged.
    acked: Mutex<u64>,
    ack: Condvar,
}

/// The comm layer's state, one per process, reached from the cells' thread and the
/// callback thread.
#[derive(Default)]
struct State {
    /// The link to the kernel, made on first use (or why it cannot be).
    link: OnceLock<std::result::Result<Arc<Link>, String>>,
    /// What to call when the front end opens a comm, by target.
    targets: Mutex<HashMap<String, OnOpen>>,
    /// Each open comm's handlers, by id.
    comms: Mutex<HashMap<String, Handlers>>,
    /// Comm ids made so far.
    ids: AtomicU64,
}

fn state() -> &'static State {
    static STATE: OnceLock<State> = OnceLock::new();
    STATE.get_or_init(State::default)
}
fn targets() -> &'static Mutex<HashMap<String, OnOpen>> {
    &state().targets
}
fn comms() -> &'static Mutex<HashMap<String, Handlers>> {
    &state().comms
}
/// A callback that panicked while holding a lock leaves the data as it was: go on with it.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// How long a line may wait for the kernel's acknowledgement.
const ACK_WAIT: Duration = Duration::from_secs(10);

fn link() -> Result<&'static Arc<Link>> {
    state().link.get_or_init(connect).as_ref().map_err(|e| BachError::invalid("comm", e.clone()))
}

fn connect() -> std::result::Result<Arc<Link>, String> {
    let path = std::env::var(SOCKET_ENV).map_err(|_| format!("comms need the Bach kernel ({SOCKET_ENV} is not set: this process was not started by it)"))?;
    let stream = UnixStream::connect(&path).map_err(|e| format!("cannot reach the kernel's comm socket {path}: {e}"))?;
    let reader = stream.try_clone().map_err(|e| e.to_string())?;
    let link = Arc::new(Link { writer: Mutex::new(stream), next: AtomicU64::new(1), acked: Mutex::new(0), ack: Condvar::new() });
    let (to_callbacks, incoming) = mpsc::channel::<Event>();
    let l = link.clone();
    std::thread::Builder::new().name("bach-comm-read".into()).spawn(move || read_kernel(reader, &l, to_callbacks)).map_err(|e| e.to_string())?;
    let l = link.clone();
    std::thread::Builder::new().name("bach-comm-callbacks".into()).spawn(move || run_callbacks(incoming, &l)).map_err(|e| e.to_string())?;
    Ok(link)
}

/// What the callback thread receives: the kernel's lines, parsed once by the reader into a
/// closed set of events (as rust-analyzer's event loop receives its `Event`s), each with the
/// sequence number its `done` answers.
enum Event {
    /// `open <seq> <id> <target> <data>`: a front end opened a comm to a target.
    Open { seq: String, comm: Comm, data: String },
    /// `msg <seq> <id> <data> <buffers>`: a message to an open comm.
    Msg { seq: String, id: String, data: String, buffers: Vec<Vec<u8>> },
    /// `close <seq> <id> <data>`: the front end closed a comm.
    Close { seq: String, id: String, data: String },
    /// Any other line: answered with `done`, nothing else.
    Other { seq: String, word: String },
}

impl Event {
    fn of(f: &Parsed<'_>) -> Event {
        let seq = f.seq.to_string();
        match f.verb {
            Ok(Verb::Open) => Event::Open { seq, comm: Comm { id: f.field(0).into(), target: f.field(1).into() }, data: f.field(2).into() },
            Ok(Verb::Msg) => Event::Msg { seq, id: f.field(0).into(), data: f.field(1).into(), buffers: from_hex_list(f.field(2)) },
            Ok(Verb::Close) => Event::Close { seq, id: f.field(0).into(), data: f.field(1).into() },
            _ => Event::Other { seq, word: f.word().into() },
        }
    }
    fn seq(&self) -> &str {
        match self {
            Event::Open { seq, .. } | Event::Msg { seq, .. } | Event::Close { seq, .. } | Event::Other { seq, .. } => seq,
        }
    }
    /// The verb, for messages.
    fn word(&self) -> &str {
        match self {
            Event::Open { .. } => Verb::Open.name(),
            Event::Msg { .. } => Verb::Msg.name(),
            Event::Close { .. } => Verb::Close.name(),
            Event::Other { word, .. } => word,
        }
    }
}

/// Lines from the kernel: acknowledgements wake the senders; every other line goes to the
/// callback thread as an [`Event`] (a callback may send, and so wait for an acknowledgement
/// this thread reads).
fn read_kernel(stream: UnixStream, link: &Link, to_callbacks: mpsc::Sender<Event>) {
    for line in BufReader::new(stream).lines() {
        let Ok(line) = line else { break };
        let parsed = Parsed::new(&line);
        if parsed.verb == Ok(Verb::Ack) {
            if let Ok(seq) = parsed.seq.parse::<u64>() {
                let mut acked = lock(&link.acked);
                *acked = (*acked).max(seq);
                link.ack.notify_all();
            }
        } else if to_callbacks.send(Event::of(&parsed)).is_err() {
            break;
        }
    }
    // The kernel went away: wake every sender (they report it).
    *lock(&link.acked) = u64::MAX;
    link.ack.notify_all();
}

/// Each event's callbacks, in order, then `done <seq>` (the kernel's shell waits for it).
fn run_callbacks(incoming: mpsc::Receiver<Event>, link: &Link) {
    for event in incoming {
        // (Caught here: not reported as the running cell's panic.)
        let run = bach_runtime::device::catch_panics(|| match &event {
            Event::Open { comm, data, .. } => {
                let on_open = lock(targets()).get(&*comm.target).cloned();
                match on_open {
                    Some(on_open) => {
                        lock(comms()).entry(comm.id.to_string()).or_default();
                        on_open(comm.clone(), data);
                    }
                    None => {
                        let _ = comm.close();
                    }
                }
            }
            Event::Msg { id, data, buffers, .. } => {
                let on_msg = lock(comms()).get(id).map(|h| h.on_msg.clone()).unwrap_or_default();
                for on_msg in on_msg {
                    on_msg(data, buffers);
                }
            }
            Event::Close { id, data, .. } => {
                let closed = lock(comms()).remove(id);
                for on_close in closed.map(|h| h.on_close).unwrap_or_default() {
                    on_close(data);
                }
            }
            Event::Other { .. } => {}
        });
        if let Err(panic) = run {
            let why = bach_runtime::device::panic_text(&*panic);
            let _ = link.send(Verb::Log, &[&json::quote(&format!("a comm callback ({}) panicked: {why}", event.word()))]);
        }
        let _ = link.write(&write_line(Verb::Done, event.seq(), &[]));
    }
}

impl Link {
    /// Send one line (`fields` after the verb and a sequence number) and wait until the
    /// kernel has published it.
    fn send(&self, verb: Verb, fields: &[&str]) -> Result<()> {
        let seq = self.next.fetch_add(1, Ordering::SeqCst);
        self.write(&write_line(verb, seq, fields))?;
        let acked = lock(&self.acked);
        let (acked, _) = self.ack.wait_timeout_while(acked, ACK_WAIT, |a| *a < seq).unwrap_or_else(|e| e.into_inner());
        match *acked {
            u64::MAX => Err(BachError::invalid("comm", "the kernel closed the comm link")),
            a if a < seq => Err(BachError::invalid("comm", "the kernel did not acknowledge the message within 10 s")),
            _ => Ok(()),
        }
    }
    fn write(&self, line: &str) -> Result<()> {
        let mut w = lock(&self.writer);
        writeln!(w, "{line}").map_err(|e| BachError::invalid("comm", format!("cannot write to the kernel: {e}")))
    }
}

fn check_name(what: &str, name: &str) -> Result<()> {
    if !bach_wire::comm::is_field(name) {
        return Err(BachError::invalid("comm", format!("a {what} must be non-empty, without tabs or line breaks: {name:?}")));
    }
    Ok(())
}

/// A fresh comm id (32 hex digits, as the front ends make them).
fn new_id() -> String {
    let nanos = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(0, |d| d.as_nanos() as u64);
    let n = state().ids.fetch_add(1, Ordering::Relaxed);
    format!("{:016x}{:08x}{:08x}", nanos, std::process::id(), n as u32)
}

/// Call `on_open(comm, data)` when the front end opens a comm for `target` (replacing an
/// earlier registration). Until a target is registered, the kernel closes the front end's
/// `comm_open` for it at once.
pub fn register_target(target: &str, on_open: impl Fn(Comm, &str) + Send + Sync + 'static) -> Result<()> {
    check_name("target name", target)?;
    lock(targets()).insert(target.to_string(), Arc::new(on_open));
    link()?.send(Verb::Target, &[target])
}

impl Comm {
    /// Open a comm for `target` with `data` (JSON text): the front end gets a `comm_open`.
    pub fn open(target: &str, data: &str) -> Result<Comm> {
        Self::open_with(target, data, "{}")
    }
    /// [`Comm::open`] with the message's `metadata` (JSON text; ipywidgets puts its protocol
    /// version there).
    pub fn open_with(target: &str, data: &str, metadata: &str) -> Result<Comm> {
        Self::open_buffers(target, data, metadata, &[])
    }
    /// [`Comm::open_with`] with binary buffers.
    pub fn open_buffers(target: &str, data: &str, metadata: &str, buffers: &[&[u8]]) -> Result<Comm> {
        check_name("target name", target)?;
        let comm = Comm { id: new_id().into(), target: target.into() };
        lock(comms()).entry(comm.id.to_string()).or_default();
        let mut line = vec![&*comm.id, target];
        let (metadata, data, hex) = (one_line(metadata), one_line(data), to_hex_list(buffers));
        line.extend([metadata.as_str(), data.as_str()]);
        if !buffers.is_empty() {
            line.push(&hex);
        }
        link()?.send(Verb::Open, &line)?;
        Ok(comm)
    }
    /// Send `data` (JSON text) to the front end (`comm_msg`).
    pub fn send(&self, data: &str) -> Result<()> {
        self.send_buffers(data, &[])
    }
    /// [`Comm::send`] with binary buffers (the message's `buffers`: ipywidgets puts bytes
    /// there, named by the data's `buffer_paths`).
    pub fn send_buffers(&self, data: &str, buffers: &[&[u8]]) -> Result<()> {
        if !self.is_open() {
            return Err(BachError::invalid("comm", format!("comm {} ({}) is closed", self.id, self.target)));
        }
        match buffers.is_empty() {
            true => link()?.send(Verb::Msg, &[&self.id, &one_line(data)]),
            false => link()?.send(Verb::Msg, &[&self.id, &one_line(data), &to_hex_list(buffers)]),
        }
    }
    /// Close the comm (`comm_close`); its `on_close` callbacks do not run (they are for the
    /// front end's close).
    pub fn close(&self) -> Result<()> {
        lock(comms()).remove(&*self.id);
        link()?.send(Verb::Close, &[&self.id, "{}"])
    }
    /// Call `f(data)` for each message the front end sends on this comm.
    pub fn on_msg(&self, f: impl Fn(&str) + Send + Sync + 'static) {
        self.on_msg_buffers(move |data, _| f(data));
    }
    /// [`Comm::on_msg`] with the message's binary buffers.
    pub fn on_msg_buffers(&self, f: impl Fn(&str, &[Vec<u8>]) + Send + Sync + 'static) {
        if let Some(h) = lock(comms()).get_mut(&*self.id) {
            h.on_msg.push(Arc::new(f));
        }
    }
    /// Call `f(data)` when the front end closes this comm.
    pub fn on_close(&self, f: impl Fn(&str) + Send + Sync + 'static) {
        if let Some(h) = lock(comms()).get_mut(&*self.id) {
            h.on_close.push(Arc::new(f));
        }
    }
    /// Whether neither side has closed it.
    pub fn is_open(&self) -> bool {
        lock(comms()).contains_key(&*self.id)
    }
    pub fn id(&self) -> &str {
        &self.id
    }
    pub fn target(&self) -> &str {
        &self.target
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_and_ids_fresh() {
        assert!(check_name("target name", "jupyter.widget").is_ok());
        assert!(check_name("target name", "a\tb").is_err() && check_name("target name", "").is_err());
        let (a, b) = (new_id(), new_id());
        assert!(a != b && a.len() == 32 && a.chars().all(|c| c.is_ascii_hexdigit()), "{a} {b}");
    }

    #[test]
    fn without_the_kernel_a_comm_says_why() {
        if std::env::var_os(SOCKET_ENV).is_some() {
            return;
        }
        let e = Comm::open("t", "{}").unwrap_err().to_string();
        assert!(e.contains("comms need the Bach kernel"), "{e}");
    }
}

//! Jupyter comms (the messaging spec's "Custom messages"): the router between the front end
//! and the comms of the Rust process (`bach::comm`, which users, ipywidgets' models and the
//! placement panel build on).
//!
//! The Rust process connects to a Unix socket in the kernel's scratch directory (its path in
//! `BACH_COMM_SOCKET`, set before the process starts) the first time a cell uses a comm. The
//! lines both ways are `bach_wire::comm`'s (its table is the protocol).
//!
//! The front end's `comm_open` (for a registered target), `comm_msg` and `comm_close` go to
//! the Rust process; the shell waits for its `done`
//! (at most [`HANDLED_WAIT`]), so what the callbacks send is published with that message as
//! parent, between the `busy` and `idle` it gets. The shell handles one message at a time:
//! one that arrives while a cell runs is handled when the cell ends, not lost. Acknowledged
//! lines make a cell's `comm_open` reach the front end before the display that refers to it
//! (displays come through evcxr's output, a different path).

use std::collections::{HashMap, HashSet};
use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tokio::sync::{mpsc, oneshot};

use bach_wire::comm::{from_hex_list, to_hex_list, write_line, Parsed, Verb};

use crate::log::log;
use crate::wire::{Identity, Message};

/// The environment variable naming the socket (read by `bach::comm`).
pub use bach_wire::comm::SOCKET_ENV;

/// How long the shell waits for the Rust process to handle one front-end message.
pub const HANDLED_WAIT: Duration = Duration::from_secs(30);

/// The socket's path for a kernel whose scratch directory is `scratch`.
pub fn socket_path(scratch: &Path) -> PathBuf {
    scratch.join(bach_wire::comm::SOCKET_FILE)
}

/// Open comms, registered targets, and the link to the Rust process.
pub struct CommRouter {
    iopub: mpsc::UnboundedSender<Message>,
    me: Identity,
    /// The request whose handling the Rust process's messages belong to (the running cell,
    /// or the comm message being handled).
    parent: Mutex<Option<Message>>,
    child: Mutex<Option<UnixStream>>,
    targets: Mutex<HashSet<String>>,
    /// comm id -> target name.
    open: Mutex<HashMap<String, String>>,
    handled: Mutex<HashMap<u64, oneshot::Sender<()>>>,
    next: AtomicU64,
}

impl CommRouter {
    /// A router publishing on `iopub`, listening on `BACH_COMM_SOCKET` when it is set (a
    /// kernel without one closes every `comm_open`, as before).
    pub fn start(iopub: mpsc::UnboundedSender<Message>, me: Identity) -> Arc<CommRouter> {
        let router = Arc::new(CommRouter {
            iopub,
            me,
            parent: Mutex::new(None),
            child: Mutex::new(None),
            targets: Mutex::new(HashSet::new()),
            open: Mutex::new(HashMap::new()),
            handled: Mutex::new(HashMap::new()),
            next: AtomicU64::new(1),
        });
        if let Some(path) = std::env::var_os(SOCKET_ENV) {
            let path = PathBuf::from(path);
            let _ = std::fs::remove_file(&path);
            match UnixListener::bind(&path) {
                Ok(listener) => {
                    let r = router.clone();
                    let _ = std::thread::Builder::new().name("comm-accept".into()).spawn(move || r.accept(listener));
                }
                Err(e) => log(&format!("comms off: cannot listen on {}: {e}", path.display())),
            }
        }
        router
    }

    fn accept(self: Arc<Self>, listener: UnixListener) {
        for stream in listener.incoming().flatten() {
            // A new Rust process (the old one restarted): its comms and targets are gone.
            self.forget_child();
            let Ok(writer) = stream.try_clone() else { continue };
            *lock(&self.child) = Some(writer);
            let r = self.clone();
            let _ = std::thread::Builder::new().name("comm-read".into()).spawn(move || r.read(stream));
        }
    }

    /// The Rust process's lines, until it goes.
    fn read(&self, stream: UnixStream) {
        for line in BufReader::new(stream).lines() {
            let Ok(line) = line else { break };
            let f = Parsed::new(&line);
            match f.verb {
                Ok(Verb::Open) => {
                    let (id, target) = (f.field(0), f.field(1));
                    lock(&self.open).insert(id.to_string(), target.to_string());
                    self.publish_buffers("comm_open", json!({"comm_id": id, "target_name": target, "data": parse(f.field(3))}), parse(f.field(2)), from_hex_list(f.field(4)));
                }
                Ok(Verb::Msg) => self.publish_buffers("comm_msg", json!({"comm_id": f.field(0), "data": parse(f.field(1))}), json!({}), from_hex_list(f.field(2))),
                Ok(Verb::Close) => {
                    lock(&self.open).remove(f.field(0));
                    self.publish("comm_close", json!({"comm_id": f.field(0), "data": parse(f.field(1))}), json!({}));
                }
                Ok(Verb::Target) => {
                    lock(&self.targets).insert(f.field(0).to_string());
                }
                Ok(Verb::Log) => log(parse(f.field(0)).as_str().unwrap_or(f.field(0))),
                Ok(Verb::Done) => {
                    if let Some(done) = f.seq.parse().ok().and_then(|s: u64| lock(&self.handled).remove(&s)) {
                        let _ = done.send(());
                    }
                    continue;
                }
                Ok(Verb::Ack) | Err(_) => log(&format!("comms: unknown line from the Rust process: {}", f.word())),
            }
            self.write(&write_line(Verb::Ack, f.seq, &[]));
        }
        self.forget_child();
    }

    /// The Rust process is gone: its comms are closed (the front end is told) and its targets
    /// forgotten; whoever waits for it stops waiting.
    fn forget_child(&self) {
        *lock(&self.child) = None;
        lock(&self.targets).clear();
        let open: Vec<String> = lock(&self.open).drain().map(|(id, _)| id).collect();
        for id in open {
            self.publish("comm_close", json!({"comm_id": id, "data": {}}), json!({}));
        }
        lock(&self.handled).clear();
    }

    fn publish(&self, msg_type: &str, content: Value, metadata: Value) {
        self.publish_buffers(msg_type, content, metadata, vec![]);
    }

    fn publish_buffers(&self, msg_type: &str, content: Value, metadata: Value, buffers: Vec<Vec<u8>>) {
        let Some(parent) = lock(&self.parent).clone() else {
            log(&format!("comms: {msg_type} with no request to answer; dropped"));
            return;
        };
        let mut m = parent.iopub(msg_type, content, &self.me);
        if let Value::Object(metadata) = metadata {
            m.metadata = metadata;
        }
        m.buffers = buffers;
        let _ = self.iopub.send(m);
    }

    fn write(&self, line: &str) -> bool {
        let mut child = lock(&self.child);
        matches!(child.as_mut().map(|c| writeln!(c, "{line}")), Some(Ok(())))
    }

    /// The request the Rust process's messages answer from now on.
    pub fn set_parent(&self, msg: &Message) {
        *lock(&self.parent) = Some(msg.clone());
    }

    /// `comm_info_request`: open comms, those of `target` when one is given.
    pub fn info(&self, target: Option<&str>) -> Value {
        let comms: serde_json::Map<String, Value> =
            lock(&self.open).iter().filter(|(_, t)| target.is_none_or(|want| want == t.as_str())).map(|(id, t)| (id.clone(), json!({"target_name": t}))).collect();
        json!({"status": "ok", "comms": comms})
    }

    /// A front end's `comm_open`, `comm_msg` or `comm_close`: handed to the Rust process, and
    /// waited for. A `comm_open` for a target nobody registered is closed at once (the spec's
    /// answer); a message for a comm the kernel does not know is dropped with a log line.
    pub async fn hand_over(&self, msg: &Message) {
        let id = msg.get("comm_id").as_str().unwrap_or("").to_string();
        let data = serde_json::to_string(msg.get("data")).unwrap_or_else(|_| "{}".into());
        let seq = self.next.fetch_add(1, Ordering::SeqCst);
        let line = match msg.msg_type() {
            "comm_open" => {
                let target = msg.get("target_name").as_str().unwrap_or("").to_string();
                if !lock(&self.targets).contains(&target) || id.is_empty() || id.contains(['\t', '\n']) {
                    log(&format!("comm_open for target {target:?} refused: no such target"));
                    self.publish("comm_close", json!({"comm_id": id, "data": {}}), json!({}));
                    return;
                }
                lock(&self.open).insert(id.clone(), target.clone());
                write_line(Verb::Open, seq, &[&id, &target, &data])
            }
            "comm_msg" | "comm_close" if lock(&self.open).contains_key(&id) => {
                if msg.msg_type() == "comm_close" {
                    lock(&self.open).remove(&id);
                    write_line(Verb::Close, seq, &[&id, &data])
                } else if msg.buffers.is_empty() {
                    write_line(Verb::Msg, seq, &[&id, &data])
                } else {
                    write_line(Verb::Msg, seq, &[&id, &data, &to_hex_list(&msg.buffers)])
                }
            }
            other => {
                log(&format!("{other} for unknown comm {id:?}: dropped"));
                return;
            }
        };
        let (done, handled) = oneshot::channel();
        lock(&self.handled).insert(seq, done);
        if !self.write(&line) {
            lock(&self.handled).remove(&seq);
            log("comms: no Rust process to hand the message to");
            return;
        }
        if tokio::time::timeout(HANDLED_WAIT, handled).await.is_err() {
            lock(&self.handled).remove(&seq);
            log(&format!("comms: the Rust process did not handle {} within {} s", msg.msg_type(), HANDLED_WAIT.as_secs()));
        }
    }
}

/// JSON text from the Rust process (`{}` when it does not parse: logged).
fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| {
        log(&format!("comms: data that is not JSON ({e}): {}", text.chars().take(200).collect::<String>()));
        json!({})
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

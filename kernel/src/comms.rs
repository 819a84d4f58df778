//! Jupyter comms (the messaging spec's "Custom messages"): the router between the front end
//! and the comms of the Rust process (`bach::comm`, which users, ipywidgets' models and the
//! placement panel build on).
//!
//! The Rust process connects to a Unix socket in the kernel's scratch directory (its path in
//! `BACH_COMM_SOCKET`, set before the process starts) the first time a cell uses a comm. One
//! line per message, tab-separated, JSON last:
//!
//! | from the Rust process                         | the kernel                                   |
//! |-----------------------------------------------|----------------------------------------------|
//! | `open <seq> <id> <target> <metadata> <data> [<buffers>]` | publishes `comm_open`, answers `ack <seq>`   |
//! | `msg <seq> <id> <data> [<buffers>]`, `close <seq> <id> <data>` | publishes `comm_msg` / `comm_close`, acks |
//! | `target <seq> <name>`                         | accepts the front end's opens for `name`, acks |
//! | `log <seq> <json string>`                     | logs it (a callback's panic), acks           |
//! | `done <seq>`                                  | the front end's message `<seq>` was handled  |
//!
//! The front end's `comm_open` (for a registered target), `comm_msg` and `comm_close` go the
//! other way as `open|msg|close <seq> <id> [<target>] <data>` (a `msg` with binary buffers adds
//! them, a JSON array of hex strings); the shell waits for `done`
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

use crate::wire::{Identity, Message};

/// The environment variable naming the socket (read by `bach::comm`).
pub const SOCKET_ENV: &str = "BACH_COMM_SOCKET";

/// How long the shell waits for the Rust process to handle one front-end message.
pub const HANDLED_WAIT: Duration = Duration::from_secs(30);

/// The socket's path for a kernel whose scratch directory is `scratch`.
pub fn socket_path(scratch: &Path) -> PathBuf {
    scratch.join("comm.sock")
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
                Err(e) => crate::server::log(&format!("comms off: cannot listen on {}: {e}", path.display())),
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
            let f: Vec<&str> = line.splitn(7, '\t').collect();
            let field = |i: usize| f.get(i).copied().unwrap_or("");
            let seq = field(1);
            match f[0] {
                "open" => {
                    let (id, target) = (field(2), field(3));
                    lock(&self.open).insert(id.to_string(), target.to_string());
                    self.publish_buffers("comm_open", json!({"comm_id": id, "target_name": target, "data": parse(field(5))}), parse(field(4)), from_hex_list(field(6)));
                }
                "msg" => self.publish_buffers("comm_msg", json!({"comm_id": field(2), "data": parse(field(3))}), json!({}), from_hex_list(field(4))),
                "close" => {
                    lock(&self.open).remove(field(2));
                    self.publish("comm_close", json!({"comm_id": field(2), "data": parse(field(3))}), json!({}));
                }
                "target" => {
                    lock(&self.targets).insert(field(2).to_string());
                }
                "log" => crate::server::log(parse(field(2)).as_str().unwrap_or(field(2))),
                "done" => {
                    if let Some(done) = seq.parse().ok().and_then(|s: u64| lock(&self.handled).remove(&s)) {
                        let _ = done.send(());
                    }
                    continue;
                }
                other => crate::server::log(&format!("comms: unknown line from the Rust process: {other}")),
            }
            self.write(&format!("ack\t{seq}"));
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
            crate::server::log(&format!("comms: {msg_type} with no request to answer; dropped"));
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
                    crate::server::log(&format!("comm_open for target {target:?} refused: no such target"));
                    self.publish("comm_close", json!({"comm_id": id, "data": {}}), json!({}));
                    return;
                }
                lock(&self.open).insert(id.clone(), target.clone());
                format!("open\t{seq}\t{id}\t{target}\t{data}")
            }
            "comm_msg" | "comm_close" if lock(&self.open).contains_key(&id) => {
                if msg.msg_type() == "comm_close" {
                    lock(&self.open).remove(&id);
                    format!("close\t{seq}\t{id}\t{data}")
                } else if msg.buffers.is_empty() {
                    format!("msg\t{seq}\t{id}\t{data}")
                } else {
                    format!("msg\t{seq}\t{id}\t{data}\t{}", to_hex_list(&msg.buffers))
                }
            }
            other => {
                crate::server::log(&format!("{other} for unknown comm {id:?}: dropped"));
                return;
            }
        };
        let (done, handled) = oneshot::channel();
        lock(&self.handled).insert(seq, done);
        if !self.write(&line) {
            lock(&self.handled).remove(&seq);
            crate::server::log("comms: no Rust process to hand the message to");
            return;
        }
        if tokio::time::timeout(HANDLED_WAIT, handled).await.is_err() {
            lock(&self.handled).remove(&seq);
            crate::server::log(&format!("comms: the Rust process did not handle {} within {} s", msg.msg_type(), HANDLED_WAIT.as_secs()));
        }
    }
}

/// Binary buffers on a line: a JSON array of hex strings (`["00ff", ""]`), as `bach::comm`
/// writes and reads them.
fn to_hex_list(buffers: &[Vec<u8>]) -> String {
    let hex: Vec<Value> = buffers.iter().map(|b| Value::String(b.iter().map(|x| format!("{x:02x}")).collect())).collect();
    Value::Array(hex).to_string()
}

fn from_hex_list(text: &str) -> Vec<Vec<u8>> {
    let Ok(Value::Array(items)) = serde_json::from_str::<Value>(text) else { return vec![] };
    items.iter().filter_map(|h| h.as_str().and_then(|h| (0..h.len() / 2).map(|i| u8::from_str_radix(h.get(2 * i..2 * i + 2)?, 16).ok()).collect())).collect()
}

/// JSON text from the Rust process (`{}` when it does not parse: logged).
fn parse(text: &str) -> Value {
    serde_json::from_str(text).unwrap_or_else(|e| {
        crate::server::log(&format!("comms: data that is not JSON ({e}): {}", text.chars().take(200).collect::<String>()));
        json!({})
    })
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn buffers_go_as_hex() {
        let b = vec![vec![0u8, 1, 0xab, 0xff], vec![], b"png".to_vec()];
        assert_eq!(to_hex_list(&b), r#"["0001abff","","706e67"]"#);
        assert_eq!(from_hex_list(&to_hex_list(&b)), b);
        assert!(from_hex_list("").is_empty());
    }
}

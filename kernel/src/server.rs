//! The Jupyter protocol server: binds the five sockets of a connection file and serves an
//! [`Engine`] over them (messaging protocol 5.3).
//!
//! Threads and tasks:
//! - the engine runs on its own std thread and takes [`EngineCmd`]s one at a time; what a cell
//!   produces comes back as [`ExecEvent`]s in order, ending with its result;
//! - a tokio runtime runs the sockets: heartbeat (REP, echoes), shell (ROUTER: a reader task queues
//!   requests, at most [`SHELL_QUEUE`] of them, one task handles them one at a time), control (ROUTER, served concurrently with the
//!   shell so that `interrupt_request` and `shutdown_request` work while a cell runs), stdin
//!   (ROUTER, bound but unused), iopub (PUB, one publisher task fed by a channel, so messages keep
//!   the order in which they were produced);
//! - watchers: the parent process (the kernel exits when the process that started it is gone)
//!   and SIGINT (Jupyter's default `interrupt_mode` is `signal`: SIGINT interrupts the running
//!   cell instead of killing the kernel).
//!
//! A message that cannot be parsed, whose signature is wrong or whose header is over
//! [`crate::wire::MAX_HEADER_BYTES`] is logged and dropped. Every
//! request is bracketed by iopub `status` `busy` / `idle` messages whose parent is the request.
//! `shutdown_request` (with or without `restart`) is answered and then the server stops and
//! [`run`] returns `Ok(())`: Jupyter restarts a kernel by starting a new process once the old one
//! has exited (it kills it after a timeout otherwise), so the engine is dropped, not restarted.

use crate::connection::ConnectionInfo;
use crate::engine::{Bundle, Completions, Engine, ExecError, Interrupter, Output, StreamName};
use crate::is_complete::is_complete;
use crate::log::log;
use crate::wire::{Identity, Message, Signer, PROTOCOL_VERSION};
use serde_json::{json, Map, Value};
use std::panic::AssertUnwindSafe;
use std::path::Path;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::{mpsc, oneshot, watch};
use zeromq::{Socket, SocketRecv, SocketSend, ZmqMessage};

/// Serves `engine` on the sockets described by `connection_file` until a `shutdown_request`
/// arrives or the parent process goes away. Errors: an unreadable connection file or a socket
/// that cannot be bound.
pub fn run(connection_file: &Path, engine: Box<dyn Engine>, watch: Watch) -> Result<(), String> {
    let info = ConnectionInfo::from_file(connection_file).map_err(|e| e.to_string())?;
    let watch = match watch {
        // SAFETY: getppid has no preconditions and cannot fail.
        Watch::Parent => Watched::Parent(unsafe { libc::getppid() }),
        Watch::Until(f) => Watched::Until(f),
    };
    install_sigint_handler();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("bach-kernel-io")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the tokio runtime: {e}"))?;
    let result = runtime.block_on(serve(info, engine, watch));
    runtime.shutdown_timeout(Duration::from_millis(500));
    result
}

// ---------------------------------------------------------------------------------------------
// The engine thread

/// What the engine thread is asked to do.
enum EngineCmd {
    Execute {
        code: String,
        count: u32,
        events: mpsc::UnboundedSender<ExecEvent>,
    },
    Complete {
        code: String,
        cursor: usize,
        reply: oneshot::Sender<Completions>,
    },
    Inspect {
        code: String,
        cursor: usize,
        detail: u8,
        reply: oneshot::Sender<Option<Bundle>>,
    },
    /// Drop the engine and end the thread.
    Shutdown {
        done: oneshot::Sender<()>,
    },
}

/// What a running cell produces, in order; `Done` is always last.
enum ExecEvent {
    Stream(StreamName, String),
    /// A display; with an id (and whether it updates the one shown under it).
    Display(Bundle, Option<(String, bool)>),
    Clear {
        wait: bool,
    },
    Done(Result<Option<Bundle>, ExecError>),
}

struct EngineInfo {
    language_version: String,
    banner: String,
}

/// The [`Output`] a cell writes to: forwards to the shell task.
struct ChannelOutput<'a> {
    events: &'a mpsc::UnboundedSender<ExecEvent>,
}

impl Output for ChannelOutput<'_> {
    fn stream(&mut self, name: StreamName, text: &str) {
        if !text.is_empty() {
            let _ = self.events.send(ExecEvent::Stream(name, text.to_owned()));
        }
    }

    fn display(&mut self, data: Bundle) {
        let _ = self.events.send(ExecEvent::Display(data, None));
    }

    fn display_as(&mut self, data: Bundle, id: &str, update: bool) {
        let _ = self.events.send(ExecEvent::Display(data, Some((id.to_owned(), update))));
    }

    fn clear(&mut self, wait: bool) {
        let _ = self.events.send(ExecEvent::Clear { wait });
    }
}

fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "unknown panic".to_owned()
    }
}

/// Starts the engine thread. A panic inside the engine is caught and reported (as an error for a
/// cell, as "nothing" for completion and inspection): the kernel keeps running.
fn spawn_engine(mut engine: Box<dyn Engine>, info: watch::Sender<Option<Arc<EngineInfo>>>) -> Result<std::sync::mpsc::Sender<EngineCmd>, String> {
    let (tx, rx) = std::sync::mpsc::channel::<EngineCmd>();
    std::thread::Builder::new()
        .name("bach-kernel-engine".to_owned())
        .spawn(move || {
            let about = std::panic::catch_unwind(AssertUnwindSafe(|| EngineInfo { language_version: engine.language_version(), banner: engine.banner() })).unwrap_or_else(|p| {
                log(&format!("engine panicked while describing itself: {}", panic_message(&*p)));
                EngineInfo { language_version: "unknown".to_owned(), banner: String::new() }
            });
            info.send_replace(Some(Arc::new(about)));
            while let Ok(cmd) = rx.recv() {
                match cmd {
                    EngineCmd::Execute { code, count, events } => {
                        let result = std::panic::catch_unwind(AssertUnwindSafe(|| engine.execute(&code, count, &mut ChannelOutput { events: &events }))).unwrap_or_else(|p| {
                            let message = panic_message(&*p);
                            log(&format!("the engine panicked running a cell: {message}"));
                            Err(ExecError {
                                ename: "KernelPanic".to_owned(),
                                evalue: format!("the kernel's engine panicked: {message}"),
                                traceback: vec![format!("the kernel's engine panicked: {message}")],
                            })
                        });
                        let _ = events.send(ExecEvent::Done(result));
                    }
                    EngineCmd::Complete { code, cursor, reply } => {
                        let result = std::panic::catch_unwind(AssertUnwindSafe(|| engine.complete(&code, cursor))).unwrap_or_else(|p| {
                            log(&format!("the engine panicked completing: {}", panic_message(&*p)));
                            Completions { matches: Vec::new(), cursor_start: cursor, cursor_end: cursor }
                        });
                        let _ = reply.send(result);
                    }
                    EngineCmd::Inspect { code, cursor, detail, reply } => {
                        let result = std::panic::catch_unwind(AssertUnwindSafe(|| engine.inspect(&code, cursor, detail))).unwrap_or_else(|p| {
                            log(&format!("the engine panicked inspecting: {}", panic_message(&*p)));
                            None
                        });
                        let _ = reply.send(result);
                    }
                    EngineCmd::Shutdown { done } => {
                        if std::panic::catch_unwind(AssertUnwindSafe(|| drop(engine))).is_err() {
                            log("the engine panicked while shutting down");
                        }
                        let _ = done.send(());
                        return;
                    }
                }
            }
        })
        .map_err(|e| format!("cannot start the engine thread: {e}"))?;
    Ok(tx)
}

// ---------------------------------------------------------------------------------------------
// Shared state of the protocol tasks

struct Kernel {
    me: Identity,
    iopub: mpsc::UnboundedSender<Message>,
    engine: std::sync::mpsc::Sender<EngineCmd>,
    interrupter: Interrupter,
    info: watch::Receiver<Option<Arc<EngineInfo>>>,
    /// Comms between the front end and the Rust process.
    comms: Arc<crate::comms::CommRouter>,
    /// Set (once) to the reason the server should stop.
    shutdown: watch::Sender<Option<String>>,
}

/// What to do once a request has been answered.
#[derive(PartialEq)]
enum After {
    Continue,
    Shutdown,
}

fn reply_type(request_type: &str) -> String {
    match request_type.strip_suffix("_request") {
        Some(base) => format!("{base}_reply"),
        None => format!("{request_type}_reply"),
    }
}

fn error_content(ename: &str, evalue: &str) -> Value {
    json!({"status": "error", "ename": ename, "evalue": evalue, "traceback": []})
}

impl Kernel {
    fn publish(&self, parent: &Message, msg_type: &str, content: Value) {
        let _ = self.iopub.send(parent.iopub(msg_type, content, &self.me));
    }

    fn status(&self, parent: &Message, state: &str) {
        self.publish(parent, "status", json!({ "execution_state": state }));
    }

    fn request_shutdown(&self, reason: String) {
        self.shutdown.send_if_modified(|current| {
            if current.is_none() {
                *current = Some(reason);
                true
            } else {
                false
            }
        });
    }

    async fn engine_info(&self) -> Arc<EngineInfo> {
        let mut rx = self.info.clone();
        let Ok(info) = rx.wait_for(|i| i.is_some()).await else {
            return Arc::new(EngineInfo { language_version: "unknown".to_owned(), banner: String::new() });
        };
        info.clone().expect("waited for Some")
    }

    async fn kernel_info(&self) -> Value {
        let info = self.engine_info().await;
        json!({
            "status": "ok",
            "protocol_version": PROTOCOL_VERSION,
            "implementation": "bach-kernel",
            "implementation_version": env!("CARGO_PKG_VERSION"),
            "language_info": {
                "name": "rust",
                "version": info.language_version,
                "mimetype": "text/rust",
                "file_extension": ".rs",
                "pygments_lexer": "rust",
                "codemirror_mode": "rust",
            },
            "banner": info.banner,
            "help_links": [
                {"text": "The Rust Standard Library", "url": "https://doc.rust-lang.org/std/"},
                {"text": "The Rust Book", "url": "https://doc.rust-lang.org/book/"},
            ],
        })
    }

    /// Requests that either channel serves without the engine. `None`: not one of them.
    async fn common(&self, msg: &Message, channel: &str) -> Option<(Value, After)> {
        Some(match msg.msg_type() {
            "kernel_info_request" => (self.kernel_info().await, After::Continue),
            "interrupt_request" => {
                log("interrupt_request: interrupting the running cell");
                (self.interrupter)();
                (json!({"status": "ok"}), After::Continue)
            }
            "shutdown_request" => {
                let restart = msg.get("restart").as_bool().unwrap_or(false);
                log(&format!("shutdown_request (restart: {restart}) on {channel}"));
                (json!({"status": "ok", "restart": restart}), After::Shutdown)
            }
            "is_complete_request" => {
                let code = msg.get("code").as_str().unwrap_or("");
                let (status, indent) = is_complete(code);
                let content = if status == "incomplete" { json!({"status": status, "indent": indent}) } else { json!({"status": status}) };
                (content, After::Continue)
            }
            "comm_info_request" => (self.comms.info(msg.get("target_name").as_str()), After::Continue),
            _ => return None,
        })
    }

    /// The answer to a message nobody handles: an error reply for a request, nothing otherwise.
    fn unknown(&self, msg: &Message, channel: &str) -> Option<Value> {
        let t = msg.msg_type();
        if t.ends_with("_request") {
            log(&format!("unknown message type {t:?} on {channel}: answering with an error"));
            Some(error_content("UnknownMessageType", &format!("bach-kernel does not handle {t:?} messages")))
        } else {
            log(&format!("ignoring message of type {t:?} on {channel}"));
            None
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Sockets

fn to_zmq(frames: Vec<Vec<u8>>) -> ZmqMessage {
    let mut frames = frames.into_iter();
    let mut message = ZmqMessage::from(frames.next().unwrap_or_default());
    for frame in frames {
        message.push_back(frame.into());
    }
    message
}

async fn send_message<S: SocketSend>(socket: &mut S, msg: &Message, signer: &Signer, channel: &str) {
    if let Err(e) = socket.send(to_zmq(msg.to_frames(signer))).await {
        log(&format!("cannot send {} on {channel}: {e}", msg.msg_type()));
    }
}

async fn bind<S: Socket>(info: &ConnectionInfo, port: u16, name: &str) -> Result<S, String> {
    let mut socket = S::new();
    let endpoint = info.endpoint(port);
    socket.bind(&endpoint).await.map_err(|e| format!("cannot bind the {name} socket to {endpoint}: {e}"))?;
    Ok(socket)
}

/// Waits a little after a receive error so that a socket stuck in an error cannot spin.
async fn after_recv_error(channel: &str, e: zeromq::ZmqError) {
    log(&format!("receive error on {channel}: {e}"));
    tokio::time::sleep(Duration::from_millis(20)).await;
}

async fn heartbeat(mut socket: zeromq::RepSocket) {
    loop {
        match socket.recv().await {
            Ok(ping) => {
                if let Err(e) = socket.send(ping).await {
                    log(&format!("heartbeat reply failed: {e}"));
                }
            }
            Err(e) => after_recv_error("heartbeat", e).await,
        }
    }
}

async fn publisher(mut socket: zeromq::PubSocket, mut rx: mpsc::UnboundedReceiver<Message>, signer: Signer) {
    while let Some(msg) = rx.recv().await {
        send_message(&mut socket, &msg, &signer, "iopub").await;
    }
}

/// Reads and verifies messages, dropping (with a log line) those that fail.
async fn read_message<R: SocketRecv>(socket: &mut R, signer: &Signer, channel: &str) -> Message {
    loop {
        let frames = match socket.recv().await {
            Ok(frames) => frames.into_vec(),
            Err(e) => {
                after_recv_error(channel, e).await;
                continue;
            }
        };
        match Message::from_frames(&frames, signer) {
            Ok(msg) => return msg,
            Err(e) => log(&format!("dropping a message on {channel}: {e}")),
        }
    }
}

/// How many shell requests wait for the one running (libzmq's default high-water mark). When it is
/// full the reader stops reading and the socket pushes back on the client, so a flood of requests
/// waits in the client and the network, not in the kernel's memory.
const SHELL_QUEUE: usize = 1000;

async fn shell_reader<R: SocketRecv>(mut socket: R, signer: Signer, queue: mpsc::Sender<(Instant, Message)>) {
    loop {
        let msg = read_message(&mut socket, &signer, "shell").await;
        if queue.send((Instant::now(), msg)).await.is_err() {
            return;
        }
    }
}

async fn stdin_reader(mut socket: zeromq::RouterSocket, signer: Signer) {
    loop {
        let msg = read_message(&mut socket, &signer, "stdin").await;
        log(&format!("ignoring {} on stdin: this kernel does not request input", msg.msg_type()));
    }
}

/// The end of every request, on any channel: its reply (if any), then `idle`, then the
/// shutdown it asked for. Returns whether the channel's loop must stop.
async fn finish<S: SocketSend>(kernel: &Kernel, msg: &Message, content: Option<Value>, after: After, send: &mut S, signer: &Signer, channel: &str) -> bool {
    if let Some(content) = content {
        let reply = msg.reply(&reply_type(msg.msg_type()), content, &kernel.me);
        send_message(send, &reply, signer, channel).await;
    }
    kernel.status(msg, "idle");
    if after == After::Shutdown {
        kernel.request_shutdown(format!("shutdown_request on {channel}"));
        return true;
    }
    false
}

async fn control_loop<R: SocketRecv, S: SocketSend>(kernel: Arc<Kernel>, mut recv: R, mut send: S, signer: Signer) {
    loop {
        let msg = read_message(&mut recv, &signer, "control").await;
        kernel.status(&msg, "busy");
        let (content, after) = match kernel.common(&msg, "control").await {
            Some((content, after)) => (Some(content), after),
            None => (kernel.unknown(&msg, "control"), After::Continue),
        };
        if finish(&kernel, &msg, content, after, &mut send, &signer, "control").await {
            return;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The shell: requests one at a time

struct HistoryEntry {
    session: u32,
    line: u32,
    input: String,
}

struct Shell {
    kernel: Arc<Kernel>,
    /// The execution count of the last cell stored in the history (0 before the first).
    execution_count: u32,
    /// This kernel's history session number (1: history is not kept across processes).
    session: u32,
    history: Vec<HistoryEntry>,
    /// After a failed cell with `stop_on_error`: execute requests received before this instant
    /// are aborted.
    abort_before: Option<Instant>,
}

/// Merges consecutive writes to the same stream, so that a cell printing line by line does not
/// become one message per line.
fn merge_streams(events: Vec<ExecEvent>) -> Vec<ExecEvent> {
    let mut merged: Vec<ExecEvent> = Vec::with_capacity(events.len());
    for event in events {
        if let (ExecEvent::Stream(name, text), Some(ExecEvent::Stream(last_name, last_text))) = (&event, merged.last_mut()) {
            if name == last_name {
                last_text.push_str(text);
                continue;
            }
        }
        merged.push(event);
    }
    merged
}

fn stream_name(name: StreamName) -> &'static str {
    match name {
        StreamName::Stdout => "stdout",
        StreamName::Stderr => "stderr",
    }
}

/// `text` matches the glob `pattern` as a whole (`*`, `?`, `[abc]`, `[a-z]`, `[^a]`/`[!a]`),
/// case-sensitively, like IPython's history search (SQLite `GLOB`).
fn glob_match(pattern: &str, text: &str) -> bool {
    fn class_match(p: &[char], c: char) -> Option<(bool, usize)> {
        // p[0] == '['; returns (matched, length of the class in p).
        let mut i = 1;
        let negate = matches!(p.get(1), Some('^' | '!'));
        if negate {
            i += 1;
        }
        let mut matched = false;
        let mut first = true;
        while i < p.len() {
            if p[i] == ']' && !first {
                return Some((matched != negate, i + 1));
            }
            first = false;
            if i + 2 < p.len() && p[i + 1] == '-' && p[i + 2] != ']' {
                if p[i] <= c && c <= p[i + 2] {
                    matched = true;
                }
                i += 3;
            } else {
                if p[i] == c {
                    matched = true;
                }
                i += 1;
            }
        }
        None // unterminated class: treat '[' literally
    }
    fn go(p: &[char], t: &[char]) -> bool {
        match p.first() {
            None => t.is_empty(),
            Some('*') => (0..=t.len()).any(|k| go(&p[1..], &t[k..])),
            Some('?') => !t.is_empty() && go(&p[1..], &t[1..]),
            Some('[') => match (t.first(), class_match(p, t.first().copied().unwrap_or('\0'))) {
                (Some(_), Some((true, len))) => go(&p[len..], &t[1..]),
                (_, Some((false, _))) | (None, Some(_)) => false,
                (_, None) => t.first() == Some(&'[') && go(&p[1..], &t[1..]),
            },
            Some(&c) => t.first() == Some(&c) && go(&p[1..], &t[1..]),
        }
    }
    // Collapse runs of '*' to keep the backtracking cheap.
    let mut p: Vec<char> = Vec::new();
    for c in pattern.chars() {
        if !(c == '*' && p.last() == Some(&'*')) {
            p.push(c);
        }
    }
    let t: Vec<char> = text.chars().collect();
    go(&p, &t)
}

impl Shell {
    async fn run(mut self, mut queue: mpsc::Receiver<(Instant, Message)>, mut send: impl SocketSend, signer: Signer) {
        while let Some((received, msg)) = queue.recv().await {
            let kernel = self.kernel.clone();
            kernel.status(&msg, "busy");
            let (content, after) = self.handle(&msg, received).await;
            if finish(&kernel, &msg, content, after, &mut send, &signer, "shell").await {
                return;
            }
        }
    }

    async fn handle(&mut self, msg: &Message, received: Instant) -> (Option<Value>, After) {
        let kernel = self.kernel.clone();
        let content = match msg.msg_type() {
            "execute_request" => self.execute(msg, received).await,
            "complete_request" => self.complete(msg).await,
            "inspect_request" => self.inspect(msg).await,
            "history_request" => self.history(msg),
            "comm_open" | "comm_msg" | "comm_close" => {
                // Handed to the Rust process's comms (no reply: what they send is published
                // with this message as parent).
                kernel.comms.set_parent(msg);
                kernel.comms.hand_over(msg).await;
                return (None, After::Continue);
            }
            _ => match kernel.common(msg, "shell").await {
                Some((content, after)) => return (Some(content), after),
                None => return (kernel.unknown(msg, "shell"), After::Continue),
            },
        };
        (Some(content), After::Continue)
    }

    async fn execute(&mut self, msg: &Message, received: Instant) -> Value {
        let kernel = self.kernel.clone();
        let code = msg.get("code").as_str().unwrap_or("").to_owned();
        let silent = msg.get("silent").as_bool().unwrap_or(false);
        let store_history = !silent && msg.get("store_history").as_bool().unwrap_or(true);
        let stop_on_error = msg.get("stop_on_error").as_bool().unwrap_or(true);

        if self.abort_before.is_some_and(|t| received <= t) {
            return json!({"status": "aborted"});
        }
        if store_history {
            self.execution_count += 1;
            self.history.push(HistoryEntry { session: self.session, line: self.execution_count, input: code.clone() });
        }
        let count = self.execution_count;
        if !silent {
            kernel.publish(msg, "execute_input", json!({"code": code, "execution_count": count}));
        }
        // The cell's comm messages answer it.
        kernel.comms.set_parent(msg);

        let (events_tx, mut events) = mpsc::unbounded_channel();
        let sent = kernel.engine.send(EngineCmd::Execute { code, count, events: events_tx });
        let mut result = None;
        if sent.is_ok() {
            'cell: while let Some(first) = events.recv().await {
                let mut batch = vec![first];
                while let Ok(event) = events.try_recv() {
                    batch.push(event);
                }
                for event in merge_streams(batch) {
                    match event {
                        ExecEvent::Stream(name, text) => {
                            if !silent {
                                kernel.publish(msg, "stream", json!({"name": stream_name(name), "text": text}));
                            }
                        }
                        ExecEvent::Display(data, id) => {
                            if !silent {
                                match id {
                                    None => kernel.publish(msg, "display_data", json!({"data": data, "metadata": {}, "transient": {}})),
                                    Some((id, update)) => kernel.publish(
                                        msg,
                                        if update { "update_display_data" } else { "display_data" },
                                        json!({"data": data, "metadata": {}, "transient": {"display_id": id}}),
                                    ),
                                }
                            }
                        }
                        ExecEvent::Clear { wait } => {
                            if !silent {
                                kernel.publish(msg, "clear_output", json!({"wait": wait}));
                            }
                        }
                        ExecEvent::Done(r) => {
                            result = Some(r);
                            break 'cell;
                        }
                    }
                }
            }
        }
        let result = result.unwrap_or_else(|| {
            Err(ExecError { ename: "KernelError".to_owned(), evalue: "the engine thread is gone".to_owned(), traceback: vec!["the engine thread is gone".to_owned()] })
        });

        match result {
            Ok(value) => {
                if let (Some(data), false) = (value, silent) {
                    kernel.publish(msg, "execute_result", json!({"execution_count": count, "data": data, "metadata": {}}));
                }
                let user_expressions: Map<String, Value> = msg
                    .get("user_expressions")
                    .as_object()
                    .map(|exprs| exprs.keys().map(|k| (k.clone(), error_content("NotImplemented", "user_expressions are not supported"))).collect())
                    .unwrap_or_default();
                json!({"status": "ok", "execution_count": count, "payload": [], "user_expressions": user_expressions})
            }
            Err(mut e) => {
                if e.traceback.is_empty() {
                    e.traceback.push(format!("{}: {}", e.ename, e.evalue));
                }
                if !silent {
                    kernel.publish(msg, "error", json!({"ename": e.ename, "evalue": e.evalue, "traceback": e.traceback}));
                }
                if stop_on_error {
                    self.abort_before = Some(Instant::now());
                }
                json!({
                    "status": "error", "execution_count": count,
                    "ename": e.ename, "evalue": e.evalue, "traceback": e.traceback,
                })
            }
        }
    }

    /// `cursor_pos` (characters) clamped to the code, or its end when absent.
    fn cursor(msg: &Message, code: &str) -> usize {
        let len = code.chars().count();
        msg.get("cursor_pos").as_u64().map_or(len, |c| (c as usize).min(len))
    }

    async fn complete(&mut self, msg: &Message) -> Value {
        let code = msg.get("code").as_str().unwrap_or("").to_owned();
        let cursor = Self::cursor(msg, &code);
        let (tx, rx) = oneshot::channel();
        let _ = self.kernel.engine.send(EngineCmd::Complete { code, cursor, reply: tx });
        let c = rx.await.unwrap_or(Completions { matches: Vec::new(), cursor_start: cursor, cursor_end: cursor });
        json!({
            "status": "ok", "matches": c.matches, "cursor_start": c.cursor_start,
            "cursor_end": c.cursor_end, "metadata": {},
        })
    }

    async fn inspect(&mut self, msg: &Message) -> Value {
        let code = msg.get("code").as_str().unwrap_or("").to_owned();
        let cursor = Self::cursor(msg, &code);
        let detail = msg.get("detail_level").as_u64().unwrap_or(0).min(u8::MAX as u64) as u8;
        let (tx, rx) = oneshot::channel();
        let _ = self.kernel.engine.send(EngineCmd::Inspect { code, cursor, detail, reply: tx });
        match rx.await.ok().flatten() {
            Some(data) => json!({"status": "ok", "found": true, "data": data, "metadata": {}}),
            None => json!({"status": "ok", "found": false, "data": {}, "metadata": {}}),
        }
    }

    fn history(&self, msg: &Message) -> Value {
        let output = msg.get("output").as_bool().unwrap_or(false);
        let n = msg.get("n").as_u64().map(|n| n as usize);
        let entries: Vec<&HistoryEntry> = match msg.get("hist_access_type").as_str().unwrap_or("tail") {
            "tail" => {
                let n = n.unwrap_or(10);
                self.history[self.history.len().saturating_sub(n)..].iter().collect()
            }
            "range" => {
                let requested = msg.get("session").as_i64().unwrap_or(0);
                let session = if requested <= 0 { self.session as i64 + requested } else { requested };
                let start = msg.get("start").as_i64().unwrap_or(1);
                let stop = msg.get("stop").as_i64();
                self.history.iter().filter(|e| e.session as i64 == session).filter(|e| e.line as i64 >= start && stop.is_none_or(|s| (e.line as i64) < s)).collect()
            }
            "search" => {
                let pattern = msg.get("pattern").as_str().unwrap_or("*");
                let unique = msg.get("unique").as_bool().unwrap_or(false);
                let mut found: Vec<&HistoryEntry> = self.history.iter().filter(|e| glob_match(pattern, &e.input)).collect();
                if unique {
                    // Keep the latest occurrence of each input.
                    let mut seen = std::collections::HashSet::new();
                    let mut kept: Vec<&HistoryEntry> = found.iter().rev().filter(|e| seen.insert(e.input.as_str())).copied().collect();
                    kept.reverse();
                    found = kept;
                }
                if let Some(n) = n {
                    found.drain(..found.len().saturating_sub(n));
                }
                found
            }
            other => {
                log(&format!("history_request with unknown hist_access_type {other:?}"));
                return error_content("UnknownHistAccessType", &format!("unknown hist_access_type {other:?}"));
            }
        };
        let history: Vec<Value> =
            entries.into_iter().map(|e| if output { json!([e.session, e.line, [e.input, Value::Null]]) } else { json!([e.session, e.line, e.input]) }).collect();
        json!({"status": "ok", "history": history})
    }
}

// ---------------------------------------------------------------------------------------------
// Watchers

static SIGINT_RECEIVED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_sigint(_: libc::c_int) {
    SIGINT_RECEIVED.store(true, Ordering::SeqCst);
}

/// SIGINT (Jupyter's `interrupt_mode: signal`, and what it sends before a shutdown) interrupts
/// the running cell instead of killing the kernel.
fn install_sigint_handler() {
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe; the sigaction
    // struct is fully initialised (zeroed, then the fields we use).
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_sigint as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        if libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut()) != 0 {
            log("cannot install the SIGINT handler");
        }
    }
}

async fn watch_sigint(kernel: Arc<Kernel>) {
    let mut tick = tokio::time::interval(Duration::from_millis(50));
    loop {
        tick.tick().await;
        if SIGINT_RECEIVED.swap(false, Ordering::SeqCst) {
            log("SIGINT: interrupting the running cell");
            (kernel.interrupter)();
        }
    }
}

/// What ends the kernel besides a `shutdown_request`.
pub enum Watch {
    /// The end of the process that started this one (Jupyter's).
    Parent,
    /// A blocking function returning (why) when the kernel should end: a standby waits for
    /// the launcher's socket to close (standby.rs).
    Until(Box<dyn FnOnce() -> String + Send>),
}

enum Watched {
    Parent(libc::pid_t),
    Until(Box<dyn FnOnce() -> String + Send>),
}

/// Stops the server when the process that started the kernel is gone (it is then reparented,
/// so `getppid` changes; nothing to watch when started by init, pid 1), or when the `Until`
/// function returns.
async fn watch_parent(kernel: Arc<Kernel>, watched: Watched) {
    let parent = match watched {
        Watched::Parent(p) => p,
        Watched::Until(until) => {
            let _ = std::thread::Builder::new().name("bach-kernel-watch".into()).spawn(move || {
                let why = until();
                kernel.request_shutdown(why);
            });
            return;
        }
    };
    if parent <= 1 {
        return;
    }
    let mut tick = tokio::time::interval(Duration::from_secs(1));
    loop {
        tick.tick().await;
        // SAFETY: getppid has no preconditions and cannot fail.
        if (unsafe { libc::getppid() }) != parent {
            kernel.request_shutdown(format!("the parent process {parent} is gone"));
            return;
        }
    }
}

// ---------------------------------------------------------------------------------------------

async fn serve(info: ConnectionInfo, engine: Box<dyn Engine>, watched: Watched) -> Result<(), String> {
    let signer = Signer::new(info.key.as_bytes());
    let heartbeat_socket = bind::<zeromq::RepSocket>(&info, info.hb_port, "heartbeat").await?;
    let shell_socket = bind::<zeromq::RouterSocket>(&info, info.shell_port, "shell").await?;
    let control_socket = bind::<zeromq::RouterSocket>(&info, info.control_port, "control").await?;
    let stdin_socket = bind::<zeromq::RouterSocket>(&info, info.stdin_port, "stdin").await?;
    let iopub_socket = bind::<zeromq::PubSocket>(&info, info.iopub_port, "iopub").await?;
    log(&format!(
        "listening on {} (shell {}, iopub {}, stdin {}, control {}, heartbeat {}), signing: {}",
        info.ip,
        info.shell_port,
        info.iopub_port,
        info.stdin_port,
        info.control_port,
        info.hb_port,
        signer.is_signing()
    ));

    let interrupter = engine.interrupter();
    let (info_tx, info_rx) = watch::channel(None);
    let engine_tx = spawn_engine(engine, info_tx)?;
    let (iopub_tx, iopub_rx) = mpsc::unbounded_channel();
    let (shutdown_tx, mut shutdown_rx) = watch::channel(None::<String>);
    let me = Identity::new();
    let comms = crate::comms::CommRouter::start(iopub_tx.clone(), me.clone());
    let kernel = Arc::new(Kernel { me, iopub: iopub_tx, engine: engine_tx.clone(), interrupter, info: info_rx, comms, shutdown: shutdown_tx });

    tokio::spawn(heartbeat(heartbeat_socket));
    tokio::spawn(publisher(iopub_socket, iopub_rx, signer.clone()));
    tokio::spawn(stdin_reader(stdin_socket, signer.clone()));

    let (shell_send, shell_recv) = shell_socket.split();
    let (queue_tx, queue_rx) = mpsc::channel(SHELL_QUEUE);
    tokio::spawn(shell_reader(shell_recv, signer.clone(), queue_tx));
    let shell = Shell { kernel: kernel.clone(), execution_count: 0, session: 1, history: Vec::new(), abort_before: None };
    tokio::spawn(shell.run(queue_rx, shell_send, signer.clone()));

    let (control_send, control_recv) = control_socket.split();
    tokio::spawn(control_loop(kernel.clone(), control_recv, control_send, signer.clone()));
    tokio::spawn(watch_sigint(kernel.clone()));
    tokio::spawn(watch_parent(kernel.clone(), watched));

    let reason = match shutdown_rx.wait_for(|r| r.is_some()).await {
        Ok(reason) => reason.clone().unwrap_or_default(),
        Err(_) => "the shutdown channel closed".to_owned(),
    };
    log(&format!("shutting down: {reason}"));
    // Stop a running cell, then let the engine thread drop the engine (bounded wait: a cell that
    // ignores interrupts must not keep the process alive).
    (kernel.interrupter)();
    let (done_tx, done_rx) = oneshot::channel();
    if engine_tx.send(EngineCmd::Shutdown { done: done_tx }).is_ok() && tokio::time::timeout(Duration::from_secs(3), done_rx).await.is_err() {
        log("the engine did not stop within 3 s; exiting anyway");
    }
    // Replies and status messages are queued in the sockets; give them a moment to go out.
    tokio::time::sleep(Duration::from_millis(150)).await;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reply_types() {
        assert_eq!(reply_type("kernel_info_request"), "kernel_info_reply");
        assert_eq!(reply_type("frobnicate_request"), "frobnicate_reply");
    }

    #[test]
    fn glob() {
        assert!(glob_match("*", "anything\nat all"));
        assert!(glob_match("print*", "print hello"));
        assert!(!glob_match("print*", "eprint hello"));
        assert!(glob_match("*print*", "eprint hello"));
        assert!(glob_match("val?e 1", "value 1"));
        assert!(glob_match("[ev]*", "value"));
        assert!(!glob_match("[^ev]*", "value"));
        assert!(glob_match("[a-c]x", "bx"));
        assert!(!glob_match("Print*", "print"), "case-sensitive");
        assert!(glob_match("a[b", "a[b"));
        assert!(glob_match("**********x", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaax"));
    }

    #[test]
    fn streams_are_merged_in_order() {
        let events = vec![
            ExecEvent::Stream(StreamName::Stdout, "a".into()),
            ExecEvent::Stream(StreamName::Stdout, "b".into()),
            ExecEvent::Stream(StreamName::Stderr, "c".into()),
            ExecEvent::Display(Bundle::new(), None),
            ExecEvent::Stream(StreamName::Stdout, "d".into()),
            ExecEvent::Done(Ok(None)),
        ];
        let merged = merge_streams(events);
        assert_eq!(merged.len(), 5);
        assert!(matches!(&merged[0], ExecEvent::Stream(StreamName::Stdout, t) if t == "ab"));
        assert!(matches!(&merged[1], ExecEvent::Stream(StreamName::Stderr, t) if t == "c"));
        assert!(matches!(&merged[4], ExecEvent::Done(Ok(None))));
    }
}

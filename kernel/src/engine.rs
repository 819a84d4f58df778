//! What the protocol layer (server.rs) asks of an execution engine. The engine runs on its own
//! thread; only `Interrupter` is called from another one (the control channel) while a cell
//! runs. Only this module's users in `server.rs` know Jupyter messages; engines know nothing of
//! the wire format.

use std::sync::Arc;

/// A MIME bundle: mime type -> data (text for text/*, image/svg+xml; JSON for application/json).
pub type Bundle = serde_json::Map<String, serde_json::Value>;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StreamName {
    Stdout,
    Stderr,
}

/// Where a running cell sends what it produces, as it produces it.
pub trait Output {
    fn stream(&mut self, name: StreamName, text: &str);
    /// A `display_data` message (a cell may send several, e.g. several charts).
    fn display(&mut self, data: Bundle);
    /// A `display_data` message with a display id (`update` false), or an
    /// `update_display_data` replacing the output shown under that id (`update` true): a line
    /// that changes in place.
    fn display_as(&mut self, data: Bundle, id: &str, update: bool);
    /// A `clear_output` message: clear the cell's output now, or with `wait` when the next
    /// output arrives (a loop that redraws a chart does not flicker).
    fn clear(&mut self, wait: bool);
}

/// A cell that failed: shown as an `error` message and in the `execute_reply`.
#[derive(Clone, Debug, PartialEq)]
pub struct ExecError {
    pub ename: String,
    pub evalue: String,
    pub traceback: Vec<String>,
}

/// Completion candidates replacing `cursor_start..cursor_end` (character offsets).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Completions {
    pub matches: Vec<String>,
    pub cursor_start: usize,
    pub cursor_end: usize,
}

/// Stops the running cell. Called from the control thread.
pub type Interrupter = Arc<dyn Fn() + Send + Sync>;

pub trait Engine: Send + 'static {
    /// Language version for `kernel_info_reply` (e.g. rustc's version).
    fn language_version(&self) -> String;
    /// Banner for `kernel_info_reply`.
    fn banner(&self) -> String;
    /// Run one cell. `Ok(Some(bundle))` is the cell's value (`execute_result`).
    fn execute(&mut self, code: &str, execution_count: u32, out: &mut dyn Output) -> Result<Option<Bundle>, ExecError>;
    /// Completions at `cursor` (a character offset into `code`).
    fn complete(&mut self, code: &str, cursor: usize) -> Completions;
    /// Help for the name at `cursor` (`inspect_request`), if any.
    fn inspect(&mut self, code: &str, cursor: usize, detail_level: u8) -> Option<Bundle>;
    /// A handle that interrupts the cell running now (if any).
    fn interrupter(&self) -> Interrupter;
}
// No `restart`: jupyter_client restarts a kernel by ending its process and starting a new
// one (it kills a process that stays), so the server exits on `shutdown_request`.

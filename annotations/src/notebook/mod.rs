//! Notebook support: what the `bach-kernel` runs inside its Rust process (evcxr's child).
//!
//! The kernel prefixes every cell with `bach::notebook::cell(n)`; the first call installs a
//! panic hook (a panic that ends a cell is reported to the kernel, which shows it as an error)
//! and an interrupt signal handler (SIGUSR1 stops a running evaluation at its next piece).
//! Rich output reaches the kernel as one line on stdout: [`DISPLAY_MARKER`] followed by a JSON
//! object of mime type -> content; the kernel turns each into a `display_data` message.
//! [`clear_output`] sends [`CLEAR_MARKER`], which becomes a `clear_output` message.

use std::ffi::c_int;
use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Once};

use bach_runtime::{json, session, BachError, Element, Lazy, Session, Value};

use crate::array::Array;

use bach_wire::line::{field, Line};
/// The marker lines, as the kernel reads them (`bach_wire::line`).
pub use bach_wire::line::{CLEAR as CLEAR_MARKER, DISPLAY as DISPLAY_MARKER, END as END_MARKER, INTERRUPTED, PANIC as PANIC_MARKER, RUN as RUN_MARKER};

/// Set by the interrupt signal, cleared when a cell starts; [`tick`] stops the cell on it.
static INTERRUPT: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// Whether this thread runs the cells (evcxr's runtime thread): only it stops on an
    /// interrupt, so a thread a cell started (a background loop) keeps running.
    static CELL_THREAD: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

static INIT: Once = Once::new();

// signal(2), declared here rather than through the `libc` crate: notebooks compile against
// this crate, and evcxr's rust-analyzer analyses every crate in their dependency graph at
// start-up; `libc` alone took 0.8 s of it (measured). Linux numbers SIGUSR1 10, macOS 30.
const SIGUSR1: c_int = if cfg!(target_os = "macos") { 30 } else { 10 };
unsafe extern "C" {
    fn signal(signum: c_int, handler: extern "C" fn(c_int)) -> usize;
}

extern "C" fn on_interrupt(_signal: c_int) {
    // Only atomic operations here: a signal handler may run between any two instructions.
    INTERRUPT.store(true, Ordering::SeqCst);
    if let Some(s) = session::global_if_made() {
        s.interrupt();
    }
}

/// Called by the kernel before each cell: records the cell number on the session's new
/// nodes, and sets up the process on first use.
pub fn cell(n: u64) {
    INIT.call_once(|| {
        bach_runtime::progress::set_progress_hook(Some(Arc::new(progress_line)));
        // SAFETY: installing a handler that only performs atomic stores.
        unsafe {
            signal(SIGUSR1, on_interrupt);
        }
        std::panic::set_hook(Box::new(|info| {
            if bach_runtime::device::panic_is_caught() {
                return; // a device turns it into a BachError for the op
            }
            let message = bach_runtime::device::panic_text(info.payload());
            let location = info.location().map(|l| format!("{}:{}", l.file(), l.line())).unwrap_or_default();
            println!("{}", Line::Panic(&json_object(&[(field::MESSAGE, message), (field::LOCATION, &location)])));
        }));
    });
    session::set_global_cell(n);
    if n > 0 {
        // What the last cell's evaluations freed in the worker threads' arenas goes back to
        // the system (the kernel's runtime trims the main arena after each cell).
        bach_runtime::fresh::trim_worker_arenas();
        magics::refresh_live_vars();
    }
    INTERRUPT.store(false, Ordering::SeqCst);
    CELL_THREAD.with(|c| c.set(true));
    // Not for the prelude (cell 0): evcxr waits for a cell's output to be read, and the kernel
    // reads the prelude's output from no one.
    if n > 0 {
        println!("{}", Line::Run(&n.to_string()));
    }
}

/// Stops the cell if the user interrupted it: the kernel puts a call at the top of each loop
/// body and closure of a cell (kernel/src/interruptible.rs). One relaxed load while nothing is
/// interrupted. The panic it raises ends the cell like any panic in it: variables of earlier
/// cells and the Bach session are kept, and the kernel shows it as an interrupt at this line.
#[inline]
#[track_caller]
pub fn tick() {
    if INTERRUPT.load(Ordering::Relaxed) {
        interrupted();
    }
}

#[cold]
#[inline(never)]
#[track_caller]
fn interrupted() {
    if CELL_THREAD.with(|c| c.get()) && INTERRUPT.swap(false, Ordering::SeqCst) {
        panic!("{INTERRUPTED}");
    }
}

/// `std::thread::sleep` that an interrupt stops: the kernel calls this for the cell's
/// `std::thread::sleep` and `thread::sleep` (std's sleeps on through signals).
#[track_caller]
pub fn sleep(duration: std::time::Duration) {
    let end = std::time::Instant::now() + duration;
    loop {
        tick();
        let now = std::time::Instant::now();
        if now >= end {
            return;
        }
        std::thread::sleep((end - now).min(std::time::Duration::from_millis(20)));
    }
}

/// The prelude's `bach_session`: the notebook's Bach session, which derefs to
/// [`Session`] (`bach_session.nodes()`, `.trace()`, `.config()`). The session is made, and its
/// devices detected, when it is first used, not when the kernel starts: a kernel started
/// ahead of time (the kernel's standby) holds no device while it waits.
#[derive(Clone, Copy)]
pub struct NotebookSession;

impl NotebookSession {
    /// The session itself, for functions that take an `Arc<Session>`.
    pub fn arc(&self) -> Arc<Session> {
        session::global()
    }
}

impl std::ops::Deref for NotebookSession {
    type Target = Session;
    fn deref(&self) -> &Session {
        session::global_ref()
    }
}

impl std::fmt::Debug for NotebookSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Debug::fmt(&**self, f)
    }
}

/// Gives every `Debug` value the `evcxr_display` method evcxr calls on a cell's final
/// expression, printing it as evcxr's own fallback does (`{:?}` as text/plain). The kernel's
/// prelude imports it, so such a cell compiles once instead of failing its first compile.
/// Types with an inherent `evcxr_display` (Bach's arrays) keep theirs.
pub trait ShowDebug {
    fn evcxr_display(&self);
}

impl<T: std::fmt::Debug + ?Sized> ShowDebug for T {
    fn evcxr_display(&self) {
        println!("EVCXR_BEGIN_CONTENT text/plain\n{self:?}\nEVCXR_END_CONTENT");
    }
}

/// After this long an evaluation shows a progress line in its cell.
const PROGRESS_AFTER: std::time::Duration = std::time::Duration::from_secs(1);
/// The progress line is rewritten at most this often.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(500);
/// The evaluation whose progress line is shown, and when it was last written.
static PROGRESS: std::sync::Mutex<(u64, Option<std::time::Instant>)> = std::sync::Mutex::new((0, None));

/// Set while an evaluation runs outside a cell (the panel's Run): no progress line, which
/// would land in the next cell's output.
pub(crate) static QUIET_PROGRESS: AtomicBool = AtomicBool::new(false);

/// The progress hook: an evaluation running longer than [`PROGRESS_AFTER`] gets a line in its
/// cell (pieces done of the total, time so far, time left at that rate), updated in place,
/// and a final line when it ends.
fn progress_line(p: &bach_runtime::progress::Progress) {
    if QUIET_PROGRESS.load(Ordering::SeqCst) {
        return;
    }
    let mut shown = PROGRESS.lock().unwrap_or_else(|e| e.into_inner());
    let here = shown.0 == p.eval;
    let text = if p.finished {
        if !here {
            return;
        }
        match p.done < p.total {
            // Interrupted, or failed: not a finished evaluation.
            true => format!("Bach: stopped after {} of {} pieces, {:.1} s", p.done, p.total, p.elapsed.as_secs_f64()),
            false => format!("Bach: {} pieces in {:.1} s", p.done, p.elapsed.as_secs_f64()),
        }
    } else {
        if p.elapsed < PROGRESS_AFTER || (here && shown.1.is_some_and(|t| t.elapsed() < PROGRESS_EVERY)) {
            return;
        }
        let left = p.remaining().map(|r| format!(", about {:.0} s left", r.as_secs_f64().ceil())).unwrap_or_default();
        format!("Bach: {} of {} pieces, {:.1} s{left}", p.done, p.total, p.elapsed.as_secs_f64())
    };
    display_as(&[("text/plain", text)], &format!("bach-progress-{}", p.eval), here);
    *shown = (p.eval, Some(std::time::Instant::now()));
}

/// Send a MIME bundle under a display id: a new output (`update` false), or a replacement of
/// the one shown under that id (`update` true).
pub fn display_as(bundle: &[(&str, String)], id: &str, update: bool) {
    display_line(bundle, &[(field::DISPLAY_ID, id), (field::UPDATE, if update { "true" } else { "false" })]);
}

/// Send a MIME bundle to the notebook as its own output (several per cell are fine).
pub fn display(bundle: &[(&str, String)]) {
    display_line(bundle, &[]);
}

/// One display line: the bundle's fields, then the kernel's own (`bach/...`).
fn display_line(bundle: &[(&str, String)], extra: &[(&str, &str)]) {
    let fields: Vec<(&str, &str)> = bundle.iter().map(|(k, v)| (*k, v.as_str())).chain(extra.iter().copied()).collect();
    println!("{}", Line::Display(&json_object(&fields)));
}

/// The kernel ends each cell that uses `?` with this, so that a `?` returning early (which
/// evcxr reports as a success) is shown as an error: the marker never comes.
pub fn cell_end() {
    println!("{}", Line::End);
}

/// [`cell_end`] for a cell ending in an expression: the kernel wraps that expression, whose
/// value evcxr then shows as before.
pub fn reached_end<T: ?Sized>(value: &T) -> &T {
    cell_end();
    value
}

/// Clear the cell's output: at once, or with `wait` when the next output arrives, so that a
/// loop redrawing a chart or a progress line replaces it without flicker.
pub fn clear_output(wait: bool) {
    println!("{}", Line::Clear { wait });
}

/// A JSON object of string fields, on one line (control characters escaped), with the
/// runtime's own JSON writer rather than `serde_json`, for the same start-up reason as
/// `signal` above.
fn json_object(fields: &[(&str, &str)]) -> String {
    let pairs: Vec<String> = fields.iter().map(|(k, v)| format!("{}:{}", json::quote(k), json::quote(v))).collect();
    format!("{{{}}}", pairs.join(","))
}

/// A timeline chart as its own output: the SVG file (`image/svg+xml`, for nbconvert and other
/// front ends) and the same SVG inline in HTML, which JupyterLab prefers. Inline, the hover
/// text (`<title>`) shows and the chart shrinks to the output area; as `image/svg+xml` Lab
/// draws an `<img>` with neither.
///
/// An untrusted notebook (executed elsewhere, e.g. by nbclient) gets its HTML sanitized:
/// the SVG tags go and their text would spill out as a wall of labels. So the wrapper sets
/// `font-size:0` (the chart's own text has explicit sizes, so it is unaffected), and the SVG
/// carries a zero-size `foreignObject` holding an `<img>` of itself plus a note: invisible
/// when trusted, it is what survives sanitizing.
fn show_chart(svg: String) {
    show_svg(svg, "Bach chart");
}

/// [`show_chart`] with the name its static copy gives the chart.
pub(crate) fn show_svg(svg: String, what: &str) {
    let fallback = format!(
        "<foreignObject width=\"0\" height=\"0\"><div style=\"font-size:12px;line-height:1.4\"><img src=\"data:image/svg+xml,{}\" style=\"max-width:100%\" alt=\"{what}\"><br>{what} (a static copy: trust the notebook to hover the marks for details)</div></foreignObject>",
        percent_encode(&svg)
    );
    let inline = match svg.rfind("</svg>") {
        Some(at) => format!("{}{fallback}{}", &svg[..at], &svg[at..]),
        None => svg.clone(),
    };
    let html = format!("<div class=\"bach-timeline\" style=\"max-width:100%;overflow-x:auto;font-size:0;line-height:0\">{inline}</div>");
    display(&[("image/svg+xml", svg), ("text/html", html)]);
}

/// `s` for a `data:` URL: bytes outside a small safe set become `%XX`.
fn percent_encode(s: &str) -> String {
    let mut out = String::with_capacity(s.len() * 3 / 2);
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-_.~/:=,;()!*'".contains(&b) {
            out.push(b as char);
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// A report of several lines (a plan, a table, the trace) as an output of its own: its text,
/// and HTML that keeps each line whole. JupyterLab wraps an output's long lines anywhere,
/// mid-word (its output `pre` breaks words); in the HTML a wide table scrolls sideways
/// instead. Front ends that show only text get the text.
pub(crate) fn show_text(text: &str) {
    let text = text.trim_end_matches('\n');
    if text.is_empty() {
        return;
    }
    let html = format!("<pre style=\"{WHOLE_LINES}; margin: 0\">{}</pre>", html_escape(text));
    display(&[("text/plain", text.to_string()), ("text/html", html)]);
}

/// A report whose lines stay whole, for an HTML widget (the panel, `:bach vars live`). The wrapper's `width: 0; min-width: 100%` keeps the HTML
/// widget from growing to the table's width (its content is a flex item, as wide as what it
/// holds): the table scrolls sideways inside the panel instead of running past it.
pub(crate) fn pre(text: &str) -> String {
    format!("<div style=\"width: 0; min-width: 100%; overflow-x: auto\"><pre style=\"{WHOLE_LINES}; font-size: 12px\">{}</pre></div>", html_escape(text))
}

/// CSS for a `pre` whose lines are not broken: a wide one scrolls.
const WHOLE_LINES: &str = "white-space: pre; overflow-x: auto; word-break: normal; overflow-wrap: normal";

fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

/// When a displayed value's evaluation gets its full timeline rather than one line
/// (`:bach chart`).
#[derive(Clone, Copy, Debug, PartialEq)]
enum ChartWhen {
    Full,
    Compact,
    /// The full chart from this many seconds of evaluation (or when a stage was re-planned).
    Auto(f64),
}

/// A timeline needs a few milliseconds of work to show more than a line says.
const FULL_CHART_FROM_S: f64 = 5e-3;
static CHART_WHEN: std::sync::Mutex<ChartWhen> = std::sync::Mutex::new(ChartWhen::Auto(FULL_CHART_FROM_S));

/// What the one-line form says to get the full chart.
const ASK_FOR_CHART: &str = "`:bach trace last` draws its timeline";

/// `:bach chart <full|compact|auto [TIME]>`: every evaluation's timeline, one line each, or
/// the full timeline from TIME (default 5 ms).
pub fn set_chart(how: &str) {
    let mut words = how.split_whitespace();
    let when = match (words.next(), words.next(), words.next()) {
        (Some("full"), None, _) => ChartWhen::Full,
        (Some("compact"), None, _) => ChartWhen::Compact,
        (Some("auto"), None, _) => ChartWhen::Auto(FULL_CHART_FROM_S),
        (Some("auto"), Some(t), None) => match bach_runtime::cost::parse_seconds(t) {
            Ok(s) => ChartWhen::Auto(s),
            Err(e) => panic!("{}", BachError::invalid("chart", e)),
        },
        _ => panic!("{}", BachError::invalid("chart", format!("`{how}`: say full, compact, auto or auto <time> (e.g. auto 20ms)"))),
    };
    *CHART_WHEN.lock().unwrap_or_else(|p| p.into_inner()) = when;
    match when {
        ChartWhen::Full => println!("every evaluation a cell shows gets its timeline"),
        ChartWhen::Compact => println!("every evaluation a cell shows gets one line (`:bach trace last` draws its timeline)"),
        ChartWhen::Auto(s) => println!("evaluations of {} or more get their timeline, shorter ones one line", bach_runtime::cost::seconds(s)),
    }
}

/// Show the most recent evaluation, if it ran after `eval_before`: its timeline, or one line
/// when it was short (see [`ChartWhen`]). Whether it ran.
fn show_evaluation(s: &Session, eval_before: Option<u64>) -> bool {
    let trace = s.trace();
    let Some(last) = trace.last().filter(|l| Some(l.eval) != eval_before) else { return false };
    let secs = (last.end - last.start).as_secs_f64();
    let full = match *CHART_WHEN.lock().unwrap_or_else(|p| p.into_inner()) {
        ChartWhen::Full => true,
        ChartWhen::Compact => false,
        ChartWhen::Auto(from) => secs >= from || last.plans.len() > 1,
    };
    let devices = s.devices().profiles();
    if full {
        show_chart(bach_runtime::chart::timeline_svg(last, &devices));
    } else {
        let line = bach_runtime::chart::compact_line(last, &devices, ASK_FOR_CHART);
        display(&[("text/plain", line.plain), ("text/html", line.html)]);
    }
    true
}

fn last_eval(s: &Session) -> Option<u64> {
    s.trace().last().map(|e| e.eval)
}

impl<A: Element, S: crate::array::Data<Elem = A>, D: ndarray::Dimension> crate::array::ArrayBase<S, D> {
    /// How evcxr shows a lazy array that ends a cell: it is evaluated; its timeline chart
    /// goes out as its own display, and a summary (shape, dtype, where it ran) with the
    /// values as ndarray prints them ([`values_text`]) is the cell's result. An evaluation error ends the cell with that error.
    pub fn evcxr_display(&self) {
        show_lazy(&self.lazy());
    }
}

/// [`Array::evcxr_display`]'s work, not generic: compiled here once rather than in every
/// notebook cell that ends with an array.
fn show_lazy(lazy: &Lazy) {
    let s = lazy.session().clone();
    let before = last_eval(&s);
    let started = std::time::Instant::now();
    let value = match lazy.eval() {
        Ok(v) => v,
        Err(e) => panic!("{e}"),
    };
    let secs = started.elapsed().as_secs_f64();
    let computed = show_evaluation(&s, before);
    let values = values_text(&value);
    let how = if computed { format!("computed in {}", bach_runtime::cost::seconds(secs)) } else { "cached".to_string() };
    let lives = match lazy.location() {
        Some(dev) if dev != bach_runtime::CPU => {
            let name = s.devices().get(dev).map_or_else(|| format!("device {}", dev.0), |d| d.profile().name.clone());
            format!("kept on {name}, shown from a copy")
        }
        _ => "on the host".to_string(),
    };
    let head = format!("bach::Array {} #{} ({how}, {lives})", lazy.meta(), lazy.id());
    let plain = format!("{head}\n{values}");
    let html = format!(
        "<div><code>{}</code><pre style=\"margin: 0.2em 0 0 0; white-space: pre-wrap; word-break: normal; overflow-wrap: normal\">{}</pre></div>",
        html_escape(&head),
        html_escape(&values)
    );
    println!("EVCXR_BEGIN_CONTENT text/plain\n{plain}\nEVCXR_END_CONTENT");
    println!("EVCXR_BEGIN_CONTENT text/html\n{html}\nEVCXR_END_CONTENT");
}

/// A value's elements laid out as ndarray's `Display` lays them out, so as a user's
/// `println!("{a}")` would: rows of a matrix on lines of their own, and an array of 500
/// elements or more cut to its first and last few along each long axis (`...`). Floats are
/// written as Python writes them ([`Shown`]).
fn values_text(value: &Value) -> String {
    match value {
        Value::F64(a) => shown(a),
        Value::F32(a) => shown(a),
        Value::I64(a) => a.to_string(),
        Value::Bool(a) => a.to_string(),
        _ => String::new(),
    }
}

/// A float as Python's `repr` writes it: the shortest text that reads back the same number,
/// in positional notation from 1e-4 up to 1e16 and in scientific notation beyond
/// (`2.5757174171303632e-14`, not `0.000000000000025757174171303632`).
#[repr(transparent)]
struct Shown<T>(T);

macro_rules! shown_float {
    ($t:ty) => {
        impl std::fmt::Display for Shown<$t> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                let (x, a) = (self.0, self.0.abs());
                if x == 0.0 || !x.is_finite() || (1e-4..1e16).contains(&a) {
                    write!(f, "{x}")
                } else {
                    write!(f, "{x:e}")
                }
            }
        }
    };
}
shown_float!(f64);
shown_float!(f32);

/// `a` laid out by ndarray with its elements as [`Shown`], without copying a standard-layout
/// array (a display of a 1 GiB result costs no second GiB).
fn shown<T: Clone>(a: &ndarray::ArcArray<T, ndarray::IxDyn>) -> String
where
    Shown<T>: std::fmt::Display,
{
    let standard = a.as_standard_layout();
    let Some(elements) = standard.as_slice() else { return String::new() };
    // SAFETY: Shown<T> is repr(transparent) over T (same size, alignment and validity), and
    // the slice borrows `standard`, which outlives the view.
    let wrapped: &[Shown<T>] = unsafe { std::slice::from_raw_parts(elements.as_ptr().cast(), elements.len()) };
    ndarray::ArrayViewD::from_shape(a.raw_dim(), wrapped).map_or_else(|_| String::new(), |v| v.to_string())
}

mod magics;
mod panel;
pub mod stash;
pub use magics::*;
pub use panel::{model_panel, panel, redraw as panel_redraw};

#[cfg(test)]
mod tests {
    use super::*;
    #[test]
    fn json_objects_parse_back_with_serde_json() {
        let tricky = "quote \" backslash \\ newline \n tab \t cr \r bell \u{7} rs \u{1e} unicode é ∑ 🎵 </script>";
        let fields = [("text/plain", tricky), ("image/svg+xml", "<svg a=\"1\"/>"), ("", "")];
        let parsed: serde_json::Value = serde_json::from_str(&json_object(&fields)).unwrap();
        let want: serde_json::Map<String, serde_json::Value> = fields.iter().map(|(k, v)| (k.to_string(), serde_json::Value::from(*v))).collect();
        assert_eq!(parsed, serde_json::Value::Object(want));
        assert!(!json_object(&fields).contains('\n'), "one line, so the kernel can find it on stdout");
        assert_eq!(json_object(&[]), "{}");
    }

    #[test]
    fn values_show_as_ndarray_prints_them() {
        let m = Value::from(ndarray::array![[1.5, 2.0], [3.0, 4.25]].into_dyn());
        assert_eq!(values_text(&m), "[[1.5, 2],\n [3, 4.25]]");
        assert_eq!(values_text(&Value::from(ndarray::arr0(0.1 + 0.2).into_dyn())), "0.30000000000000004", "a scalar in full");
        // Python's repr: positional from 1e-4 to 1e16, scientific beyond.
        let floats = Value::from(ndarray::array![2.5757174171303632e-14, -1e-4, 0.0, 12345.5, 1e16, -3e300, f64::NAN, f64::INFINITY].into_dyn());
        assert_eq!(values_text(&floats), "[2.5757174171303632e-14, -0.0001, 0, 12345.5, 1e16, -3e300, NaN, inf]");
        let single = Value::from(ndarray::array![[1e-7f32, 0.5], [3.25, 7e20]].into_dyn());
        assert_eq!(values_text(&single), "[[1e-7, 0.5],\n [3.25, 7e20]]");
        // A transposed (not standard layout) value lays out as its logical order.
        let t = Value::from(ndarray::array![[1.0, 2.0], [3.0, 4.0]].reversed_axes().into_dyn());
        assert_eq!(values_text(&t), "[[1, 3],\n [2, 4]]");
        assert_eq!(values_text(&Value::from(ndarray::array![true, false].into_dyn())), "[true, false]");
        // Large: the first and last few of each long axis, not a megabyte of text.
        let big = Value::from(ndarray::Array::from_shape_fn((1000, 4), |(i, j)| (i * 4 + j) as i64).into_dyn());
        let text = values_text(&big);
        assert!(text.starts_with("[[0, 1, 2, 3],\n [4, 5, 6, 7],") && text.contains("...,") && text.ends_with("[3996, 3997, 3998, 3999]]"), "{text}");
        assert!(text.lines().count() < 15, "{text}");
        let long = Value::from(ndarray::Array1::<f64>::zeros(1 << 20).into_dyn());
        assert!(values_text(&long).len() < 100, "{}", values_text(&long));
    }
    #[test]
    fn data_urls_escape_what_they_must() {
        assert_eq!(percent_encode("<svg a=\"1\">#%</svg>"), "%3Csvg%20a=%221%22%3E%23%25%3C/svg%3E");
    }
}

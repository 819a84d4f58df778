//! Notebook support: what the `bach-kernel` runs inside its Rust process (evcxr's child).
//!
//! The kernel prefixes every cell with `bach::notebook::cell(n)` (`cell.rs`); the first call
//! installs a panic hook (a panic that ends a cell is reported to the kernel, which shows it as an error)
//! and an interrupt signal handler (SIGUSR1 stops a running evaluation at its next piece).
//! Rich output reaches the kernel as one line on stdout (written in `protocol.rs` only): [`DISPLAY_MARKER`] followed by a JSON
//! object of mime type -> content; the kernel turns each into a `display_data` message.
//! [`clear_output`] sends [`CLEAR_MARKER`], which becomes a `clear_output` message.

use std::sync::Arc;

use bach_runtime::{session, BachError, Element, Lazy, Session, Value};

use crate::array::Array;

/// The marker lines, as the kernel reads them (`bach_wire::line`).
pub use bach_wire::line::{CLEAR as CLEAR_MARKER, DISPLAY as DISPLAY_MARKER, END as END_MARKER, INTERRUPTED, PANIC as PANIC_MARKER, RUN as RUN_MARKER};
pub use protocol::{cell_end, clear_output, display, display_as, reached_end, ShowDebug};
use protocol::{html_escape, show_chart};

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
fn show_evaluation(s: &Session, last: &bach_runtime::trace::EvalTrace) {
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
    let started = std::time::Instant::now();
    let evaluated = match s.evaluate(&[lazy]) {
        Ok(e) => e,
        Err(e) => panic!("{e}"),
    };
    let secs = started.elapsed().as_secs_f64();
    // The chart of the evaluation that computed this value, as `evaluate` returns it (none:
    // it was computed already).
    let computed = evaluated.record.as_deref().inspect(|record| show_evaluation(&s, record)).is_some();
    let value = evaluated.values.into_iter().next().expect("one target, one value");
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
    println!("{}", bach_wire::line::evcxr_content("text/plain", &plain));
    println!("{}", bach_wire::line::evcxr_content("text/html", &html));
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

mod cell;
pub mod comm;
mod magics;
mod panel;
pub(crate) mod protocol;
pub mod stash;
pub mod widgets;
pub use cell::{cell, sleep, tick};
pub use magics::*;
pub use panel::{model_panel, panel, redraw as panel_redraw};

#[cfg(test)]
mod tests {
    use super::*;
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
}

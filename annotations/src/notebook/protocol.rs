//! The display protocol's bottom floor: everything the cells' process sends the kernel on
//! stdout is written here, once, through `bach_wire::line`: display bundles (new or updated
//! under an id), progress lines, the end-of-cell marker, clearing, and the content shapes
//! built on them (a chart, a report whose lines stay whole). Nothing here knows the session,
//! the magics or the widgets; they all show what they show through this file.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicBool, Ordering};

use bach_runtime::json;
use bach_wire::line::{evcxr_content, field, Line};

/// Gives every `Debug` value the `evcxr_display` method evcxr calls on a cell's final
/// expression, printing it as evcxr's own fallback does (`{:?}` as text/plain). The kernel's
/// prelude imports it, so such a cell compiles once instead of failing its first compile.
/// Types with an inherent `evcxr_display` (Bach's arrays) keep theirs.
pub trait ShowDebug {
    fn evcxr_display(&self);
}

impl<T: std::fmt::Debug + ?Sized> ShowDebug for T {
    fn evcxr_display(&self) {
        println!("{}", evcxr_content("text/plain", &format!("{self:?}")));
    }
}

/// After this long an evaluation shows a progress line in its cell.
const PROGRESS_AFTER: std::time::Duration = std::time::Duration::from_secs(1);
/// The progress line is rewritten at most this often.
const PROGRESS_EVERY: std::time::Duration = std::time::Duration::from_millis(500);
/// This floor's state, one per process (the cells' thread and the panel's callbacks write
/// through it).
struct Output {
    /// The evaluation whose progress line is shown, and when it was last written.
    progress: std::sync::Mutex<(u64, Option<std::time::Instant>)>,
    /// Set while an evaluation runs outside a cell (the panel's Run): no progress line, which
    /// would land in the next cell's output.
    quiet: AtomicBool,
}

static OUTPUT: Output = Output { progress: std::sync::Mutex::new((0, None)), quiet: AtomicBool::new(false) };

/// Run `f` (an evaluation outside a cell) without progress lines.
pub(crate) fn without_progress<T>(f: impl FnOnce() -> T) -> T {
    OUTPUT.quiet.store(true, Ordering::SeqCst);
    let out = f();
    OUTPUT.quiet.store(false, Ordering::SeqCst);
    out
}

/// The progress hook: an evaluation running longer than [`PROGRESS_AFTER`] gets a line in its
/// cell (pieces done of the total, time so far, time left at that rate), updated in place,
/// and a final line when it ends.
pub(super) fn progress_line(p: &bach_runtime::progress::Progress) {
    if OUTPUT.quiet.load(Ordering::SeqCst) {
        return;
    }
    let mut shown = OUTPUT.progress.lock().unwrap_or_else(|e| e.into_inner());
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
/// `signal` in `cell.rs`.
pub(super) fn json_object(fields: &[(&str, &str)]) -> String {
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
pub(crate) fn show_chart(svg: String) {
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

pub(crate) fn html_escape(s: &str) -> String {
    s.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;")
}

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
    fn data_urls_escape_what_they_must() {
        assert_eq!(percent_encode("<svg a=\"1\">#%</svg>"), "%3Csvg%20a=%221%22%3E%23%25%3C/svg%3E");
    }
}

//! Marker lines: what the `bach` crate prints on the cells' stdout for the kernel rather than
//! for the user. Each starts with an ASCII record separator (U+001E), which ordinary output
//! does not, and a name; the kernel reads every stdout line with [`Line::parse`].

use std::fmt;

/// A MIME bundle to display (then a JSON object: mime type -> content, and the `bach/` fields).
pub const DISPLAY: &str = "\u{1e}BACH_DISPLAY ";
/// The cell panicked (then a JSON object with [`field::MESSAGE`] and [`field::LOCATION`]).
pub const PANIC: &str = "\u{1e}BACH_PANIC ";
/// The cell ran to its end (printed by cells that use `?`, whose early return evcxr reports
/// as a success).
pub const END: &str = "\u{1e}BACH_END";
/// Clear the cell's output (then `now` or `wait`: when the next output comes).
pub const CLEAR: &str = "\u{1e}BACH_CLEAR ";
/// The cell's code starts (then its number): its compile is over.
pub const RUN: &str = "\u{1e}BACH_RUN ";

/// The message of the panic `bach::notebook::tick` raises when the user interrupts a cell.
pub const INTERRUPTED: &str = "interrupted";

/// The JSON fields of the display and panic lines that are the kernel's, not a MIME type.
pub mod field {
    /// A display under an id (a progress line), replaced by later displays under that id.
    pub const DISPLAY_ID: &str = "bach/display_id";
    /// `"true"` when the display replaces the one shown under its id.
    pub const UPDATE: &str = "bach/update";
    /// The panic's message.
    pub const MESSAGE: &str = "message";
    /// The panic's `file:line`.
    pub const LOCATION: &str = "location";
}

/// evcxr's own display of a cell's final value: `content` as `mime`, between the markers
/// evcxr's `evcxr_runtime` writes. An `evcxr_display` method prints it; evcxr reads it, not
/// the kernel (which sees the bundle evcxr makes of it).
pub fn evcxr_content(mime: &str, content: &str) -> String {
    format!("EVCXR_BEGIN_CONTENT {mime}\n{content}\nEVCXR_END_CONTENT")
}

/// One stdout line of the cells' process, as the kernel reads it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Line<'a> {
    /// A MIME bundle (JSON text).
    Display(&'a str),
    /// A panic (JSON text).
    Panic(&'a str),
    /// The cell reached its end.
    End,
    /// Cell number (as printed) starts running.
    Run(&'a str),
    /// Clear the output, at once or when the next output comes.
    Clear { wait: bool },
    /// Anything else: the cell's own output.
    Text(&'a str),
}

impl<'a> Line<'a> {
    /// Reads one line (without its line break).
    pub fn parse(line: &'a str) -> Line<'a> {
        if let Some(json) = line.strip_prefix(DISPLAY) {
            Line::Display(json)
        } else if let Some(json) = line.strip_prefix(PANIC) {
            Line::Panic(json)
        } else if line == END {
            Line::End
        } else if let Some(n) = line.strip_prefix(RUN) {
            Line::Run(n)
        } else if let Some(when) = line.strip_prefix(CLEAR) {
            Line::Clear { wait: when == "wait" }
        } else {
            Line::Text(line)
        }
    }
}

/// The line as printed (without its line break): `println!("{}", Line::End)`.
impl fmt::Display for Line<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Line::Display(json) => write!(f, "{DISPLAY}{json}"),
            Line::Panic(json) => write!(f, "{PANIC}{json}"),
            Line::End => f.write_str(END),
            Line::Run(n) => write!(f, "{RUN}{n}"),
            Line::Clear { wait } => write!(f, "{CLEAR}{}", if *wait { "wait" } else { "now" }),
            Line::Text(text) => f.write_str(text),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_line_reads_back_as_written() {
        let lines = [
            Line::Display(r#"{"text/plain":"x","bach/display_id":"p"}"#),
            Line::Panic(r#"{"message":"m","location":"a.rs:1"}"#),
            Line::End,
            Line::Run("12"),
            Line::Clear { wait: true },
            Line::Clear { wait: false },
            Line::Text("hello"),
            Line::Text("BACH_END"),
        ];
        for l in lines {
            assert_eq!(Line::parse(&l.to_string()), l, "{l:?}");
        }
        assert!(lines[..6].iter().all(|l| l.to_string().starts_with('\u{1e}')));
    }

    #[test]
    fn evcxr_content_is_framed_as_evcxr_runtime_frames_it() {
        assert_eq!(evcxr_content("text/html", "<b>x</b>\ny"), "EVCXR_BEGIN_CONTENT text/html\n<b>x</b>\ny\nEVCXR_END_CONTENT");
    }
}

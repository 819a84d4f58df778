//! The comm socket: Jupyter comms between the kernel and the `bach` crate's `comm` module in
//! the cells' process. The process connects to the Unix socket named by [`SOCKET_ENV`] the
//! first time a cell uses a comm. One line per message, tab-separated fields, JSON last (on
//! one line: [`one_line`]), binary buffers as a JSON array of hex strings ([`to_hex_list`]):
//!
//! | from the cells' process                                   | the kernel                                   |
//! |-----------------------------------------------------------|----------------------------------------------|
//! | `open <seq> <id> <target> <metadata> <data> [<buffers>]`  | publishes `comm_open`, answers `ack <seq>`   |
//! | `msg <seq> <id> <data> [<buffers>]`                       | publishes `comm_msg`, acks                   |
//! | `close <seq> <id> <data>`                                 | publishes `comm_close`, acks                 |
//! | `target <seq> <name>`                                     | accepts the front end's opens for it, acks   |
//! | `log <seq> <json string>`                                 | logs it (a callback's panic), acks           |
//! | `done <seq>`                                              | the kernel's message `<seq>` was handled     |
//!
//! The front end's `comm_open` (for a registered target), `comm_msg` and `comm_close` go the
//! other way as `open <seq> <id> <target> <data>`, `msg <seq> <id> <data> [<buffers>]` and
//! `close <seq> <id> <data>`; the process answers each with `done <seq>`.

use std::fmt::Write as _;

/// The environment variable naming the kernel's comm socket.
pub const SOCKET_ENV: &str = "BACH_COMM_SOCKET";
/// The socket's file name in the kernel's scratch directory.
pub const SOCKET_FILE: &str = "comm.sock";

/// What a line is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verb {
    Open,
    Msg,
    Close,
    Target,
    Log,
    Done,
    Ack,
}

impl Verb {
    const ALL: [Verb; 7] = [Verb::Open, Verb::Msg, Verb::Close, Verb::Target, Verb::Log, Verb::Done, Verb::Ack];

    pub fn name(self) -> &'static str {
        match self {
            Verb::Open => "open",
            Verb::Msg => "msg",
            Verb::Close => "close",
            Verb::Target => "target",
            Verb::Log => "log",
            Verb::Done => "done",
            Verb::Ack => "ack",
        }
    }
    pub fn parse(name: &str) -> Option<Verb> {
        Verb::ALL.into_iter().find(|v| v.name() == name)
    }
}

/// `verb <seq> fields...`, tab-separated (no line break). Fields must hold no tab or line
/// break: names are checked where they are made, JSON goes through [`one_line`]. `seq` is a
/// new number, or the one of the line answered (`ack`, `done`) as it was read.
pub fn write_line(verb: Verb, seq: impl std::fmt::Display, fields: &[&str]) -> String {
    let mut line = format!("{}\t{seq}", verb.name());
    for f in fields {
        line.push('\t');
        line.push_str(f);
    }
    line
}

/// One line as read: its verb (or the unknown word), sequence number and fields.
#[derive(Debug)]
pub struct Parsed<'a> {
    pub verb: Result<Verb, &'a str>,
    /// The sequence number as written (empty when missing).
    pub seq: &'a str,
    fields: Vec<&'a str>,
}

impl<'a> Parsed<'a> {
    /// Splits a line (without its line break).
    pub fn new(line: &'a str) -> Parsed<'a> {
        let mut all = line.split('\t');
        let word = all.next().unwrap_or("");
        let seq = all.next().unwrap_or("");
        Parsed { verb: Verb::parse(word).ok_or(word), seq, fields: all.collect() }
    }
    /// The verb as written (known or not).
    pub fn word(&self) -> &'a str {
        match self.verb {
            Ok(v) => v.name(),
            Err(w) => w,
        }
    }
    /// The `i`th field after the sequence number (empty when missing).
    pub fn field(&self, i: usize) -> &'a str {
        self.fields.get(i).copied().unwrap_or("")
    }
}

/// JSON text on one line: a raw tab or line break can only be whitespace between tokens in
/// valid JSON (inside strings they are escaped), so it becomes a space.
pub fn one_line(json: &str) -> String {
    json.replace(['\n', '\r', '\t'], " ")
}

/// Whether `name` can be a field (a comm target or id): non-empty, no tab or line break.
pub fn is_field(name: &str) -> bool {
    !name.is_empty() && !name.contains(['\t', '\n', '\r'])
}

/// Binary buffers as a JSON array of hex strings (`["00ff",""]`).
pub fn to_hex_list<B: AsRef<[u8]>>(buffers: &[B]) -> String {
    let mut out = String::from("[");
    for (i, b) in buffers.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push('"');
        for x in b.as_ref() {
            let _ = write!(out, "{x:02x}");
        }
        out.push('"');
    }
    out.push(']');
    out
}

/// [`to_hex_list`]'s text back to buffers (none when the field is empty or malformed; an item
/// that is not hex is left out).
pub fn from_hex_list(text: &str) -> Vec<Vec<u8>> {
    let Some(inner) = text.trim().strip_prefix('[').and_then(|t| t.strip_suffix(']')) else { return vec![] };
    if inner.trim().is_empty() {
        return vec![];
    }
    inner
        .split(',')
        .filter_map(|item| {
            let h = item.trim().strip_prefix('"')?.strip_suffix('"')?;
            if h.len() % 2 != 0 {
                return None;
            }
            (0..h.len() / 2).map(|i| u8::from_str_radix(h.get(2 * i..2 * i + 2)?, 16).ok()).collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_read_back_as_written() {
        let line = write_line(Verb::Open, 7, &["id1", "jupyter.widget", "{}", r#"{"a": 1}"#, "[]"]);
        assert_eq!(line, "open\t7\tid1\tjupyter.widget\t{}\t{\"a\": 1}\t[]");
        let p = Parsed::new(&line);
        assert_eq!((p.verb, p.seq, p.field(0), p.field(1), p.field(3), p.field(4), p.field(9)), (Ok(Verb::Open), "7", "id1", "jupyter.widget", r#"{"a": 1}"#, "[]", ""));
        for v in Verb::ALL {
            assert_eq!(Parsed::new(&write_line(v, 1, &[])).verb, Ok(v));
        }
        assert_eq!(Parsed::new("nope\t3").verb, Err("nope"));
        assert_eq!((Parsed::new("nope\t3").word(), Parsed::new("done\t3").word()), ("nope", "done"));
        assert_eq!(write_line(Verb::Ack, Parsed::new("msg\tx1").seq, &[]), "ack\tx1");
        assert_eq!(Parsed::new("").seq, "");
    }

    #[test]
    fn json_goes_on_one_line_and_names_are_checked() {
        assert_eq!(one_line("{\n\t\"a\": \"x\\ty\"\r\n}"), "{  \"a\": \"x\\ty\"  }");
        assert!(is_field("jupyter.widget"));
        assert!(!is_field("a\tb") && !is_field(""));
    }

    #[test]
    fn buffers_go_as_hex() {
        let bufs: [&[u8]; 3] = [&[0, 1, 0xab, 0xff], &[], b"png"];
        assert_eq!(to_hex_list(&bufs), r#"["0001abff","","706e67"]"#);
        assert_eq!(from_hex_list(&to_hex_list(&bufs)), bufs.iter().map(|b| b.to_vec()).collect::<Vec<_>>());
        assert_eq!(from_hex_list(r#"[ "00ff" , "" ]"#), vec![vec![0, 0xff], vec![]]);
        assert!(from_hex_list("").is_empty() && from_hex_list("nope").is_empty() && from_hex_list("[]").is_empty());
        assert_eq!(to_hex_list::<Vec<u8>>(&[]), "[]");
    }
}

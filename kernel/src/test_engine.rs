//! TEST DOUBLE ONLY: a trivial [`Engine`] for testing the protocol layer (`server.rs`) without
//! compiling Rust. It is built into the `protocol_test_kernel` binary, never into the real
//! kernel.
//!
//! It runs a tiny line-based language, one command per line (blank lines are skipped):
//!
//! | line             | effect                                                              |
//! |------------------|---------------------------------------------------------------------|
//! | `print <text>`   | `<text>\n` on stdout                                                 |
//! | `eprint <text>`  | `<text>\n` on stderr                                                 |
//! | `display <text>` | a `display_data` with `text/plain` and `text/html`                   |
//! | `value <text>`   | the cell's value (`execute_result`, `text/plain`); the last one wins |
//! | `error <text>`   | fails with `ExecError { ename: "TestError", evalue: <text> }`        |
//! | `sleep <secs>`   | sleeps in 10 ms steps; fails with ename `Interrupted` if interrupted |
//! | `panic`          | fails the way a real engine reports a panicking cell                 |
//! | `crash`          | really panics inside the engine (the server must survive it)         |
//! | `spam <n>`       | `n` separate stdout writes `line <i>\n`                              |
//! | `count`          | prints the execution count it was given                              |
//! | `restarts`       | prints how many times `restart` was called                           |
//!
//! Anything else fails with ename `UnknownCommand`.

use crate::engine::{Bundle, Completions, Engine, ExecError, Interrupter, Output, StreamName};
use serde_json::Value;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const WORDS: &[&str] = &["print", "eprint", "display", "value", "error", "sleep", "panic", "crash", "spam", "count", "restarts"];

pub struct TestEngine {
    interrupted: Arc<AtomicBool>,
    restarts: u32,
}

impl TestEngine {
    pub fn new() -> TestEngine {
        TestEngine { interrupted: Arc::new(AtomicBool::new(false)), restarts: 0 }
    }
}

impl Default for TestEngine {
    fn default() -> Self {
        TestEngine::new()
    }
}

fn text_bundle(pairs: &[(&str, String)]) -> Bundle {
    pairs.iter().map(|(k, v)| (k.to_string(), Value::String(v.clone()))).collect()
}

fn fail(ename: &str, evalue: &str) -> ExecError {
    ExecError { ename: ename.to_owned(), evalue: evalue.to_owned(), traceback: vec![format!("{ename}: {evalue}")] }
}

/// The word around `cursor` (a character offset): (start, end) in characters.
fn word_at(code: &str, cursor: usize) -> (usize, usize, String) {
    let chars: Vec<char> = code.chars().collect();
    let cursor = cursor.min(chars.len());
    let mut start = cursor;
    while start > 0 && chars[start - 1].is_alphanumeric() {
        start -= 1;
    }
    let mut end = cursor;
    while end < chars.len() && chars[end].is_alphanumeric() {
        end += 1;
    }
    (start, end, chars[start..end].iter().collect())
}

impl Engine for TestEngine {
    fn language_version(&self) -> String {
        "1.0.0-test".to_owned()
    }

    fn banner(&self) -> String {
        "bach-kernel protocol test engine (a test double, not Rust)".to_owned()
    }

    fn execute(&mut self, code: &str, execution_count: u32, out: &mut dyn Output) -> Result<Option<Bundle>, ExecError> {
        self.interrupted.store(false, Ordering::SeqCst);
        let mut value = None;
        for line in code.lines() {
            let line = line.trim();
            if line.is_empty() {
                continue;
            }
            let (cmd, arg) = line.split_once(' ').unwrap_or((line, ""));
            match cmd {
                "print" => out.stream(StreamName::Stdout, &format!("{arg}\n")),
                "eprint" => out.stream(StreamName::Stderr, &format!("{arg}\n")),
                "display" => out.display(text_bundle(&[("text/plain", arg.to_owned()), ("text/html", format!("<b>{arg}</b>"))])),
                "value" => value = Some(text_bundle(&[("text/plain", arg.to_owned())])),
                "error" => return Err(fail("TestError", arg)),
                "sleep" => {
                    let secs: f64 = arg.trim().parse().map_err(|_| fail("BadArgument", arg))?;
                    let deadline = Instant::now() + Duration::from_secs_f64(secs.max(0.0));
                    while Instant::now() < deadline {
                        if self.interrupted.swap(false, Ordering::SeqCst) {
                            return Err(fail("Interrupted", "the cell was interrupted"));
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    }
                }
                "panic" => {
                    out.stream(StreamName::Stderr, "thread '<unnamed>' panicked at src/lib.rs:1:1:\nexplicit panic\n");
                    return Err(ExecError {
                        ename: "Panic".to_owned(),
                        evalue: "explicit panic".to_owned(),
                        traceback: vec!["thread '<unnamed>' panicked at src/lib.rs:1:1:".to_owned(), "explicit panic".to_owned()],
                    });
                }
                "crash" => panic!("the test engine crashed on purpose"),
                "spam" => {
                    let n: usize = arg.trim().parse().map_err(|_| fail("BadArgument", arg))?;
                    for i in 0..n {
                        out.stream(StreamName::Stdout, &format!("line {i}\n"));
                    }
                }
                "count" => out.stream(StreamName::Stdout, &format!("{execution_count}\n")),
                "restarts" => out.stream(StreamName::Stdout, &format!("{}\n", self.restarts)),
                other => return Err(fail("UnknownCommand", other)),
            }
        }
        Ok(value)
    }

    fn complete(&mut self, code: &str, cursor: usize) -> Completions {
        let (start, _end, _) = word_at(code, cursor);
        let chars: Vec<char> = code.chars().collect();
        let cursor = cursor.min(chars.len());
        let prefix: String = chars[start..cursor].iter().collect();
        Completions { matches: WORDS.iter().filter(|w| w.starts_with(&prefix)).map(|w| w.to_string()).collect(), cursor_start: start, cursor_end: cursor }
    }

    fn inspect(&mut self, code: &str, cursor: usize, detail_level: u8) -> Option<Bundle> {
        let (_, _, word) = word_at(code, cursor);
        if word != "print" {
            return None;
        }
        let mut help = "print <text>: writes <text> and a newline to stdout".to_owned();
        if detail_level > 0 {
            help.push_str("\n(detail level 1: there is no more detail)");
        }
        Some(text_bundle(&[("text/plain", help)]))
    }

    fn interrupter(&self) -> Interrupter {
        let flag = self.interrupted.clone();
        Arc::new(move || flag.store(true, Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(Default)]
    struct Collect {
        streams: Vec<(StreamName, String)>,
        displays: Vec<Bundle>,
    }

    impl Output for Collect {
        fn stream(&mut self, name: StreamName, text: &str) {
            self.streams.push((name, text.to_owned()));
        }
        fn display(&mut self, data: Bundle) {
            self.displays.push(data);
        }
        fn display_as(&mut self, data: Bundle, _: &str, _: bool) {
            self.displays.push(data);
        }
        fn clear(&mut self, _: bool) {}
    }

    #[test]
    fn runs_the_tiny_language() {
        let mut e = TestEngine::new();
        let mut out = Collect::default();
        let v = e.execute("print a\neprint b\ndisplay c\nvalue d\ncount", 7, &mut out).unwrap().unwrap();
        assert_eq!(v["text/plain"], "d");
        assert_eq!(out.streams, vec![(StreamName::Stdout, "a\n".to_owned()), (StreamName::Stderr, "b\n".to_owned()), (StreamName::Stdout, "7\n".to_owned())]);
        assert_eq!(out.displays[0]["text/html"], "<b>c</b>");
        let err = e.execute("error boom", 8, &mut out).unwrap_err();
        assert_eq!((err.ename.as_str(), err.evalue.as_str()), ("TestError", "boom"));
        assert_eq!(e.execute("nonsense", 9, &mut out).unwrap_err().ename, "UnknownCommand");
    }

    #[test]
    fn sleep_is_interruptible() {
        let mut e = TestEngine::new();
        let interrupt = e.interrupter();
        let t = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(100));
            interrupt();
        });
        let start = Instant::now();
        let err = e.execute("sleep 30", 1, &mut Collect::default()).unwrap_err();
        t.join().unwrap();
        assert_eq!(err.ename, "Interrupted");
        assert!(start.elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn completes_and_inspects() {
        let mut e = TestEngine::new();
        let c = e.complete("value 1\npri", 11);
        assert_eq!(c.matches, vec!["print"]);
        assert_eq!((c.cursor_start, c.cursor_end), (8, 11));
        assert!(e.inspect("print x", 2, 0).is_some());
        assert!(e.inspect("value x", 2, 0).is_none());
    }
}

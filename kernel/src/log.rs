//! The kernel's log: lines on its stderr (Jupyter shows them in the server's console), for
//! what the user's notebook does not need to see.

/// Writes one log line.
pub fn log(line: &str) {
    eprintln!("bach-kernel: {line}");
}

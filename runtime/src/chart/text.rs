//! Text for charts: escaping, widths, and numbers (bytes, rates, durations, ticks) in words.

use super::*;

/// Escape for XML text and attribute values; characters XML cannot hold become U+FFFD.
pub(super) fn esc(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '&' => out.push_str("&amp;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&apos;"),
            '\n' | '\t' => out.push(c),
            c if (c as u32) < 0x20 || c == '\u{fffe}' || c == '\u{ffff}' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// Text for plotters (which escapes markup itself): only characters XML cannot hold go.
pub(super) fn clean(s: &str) -> String {
    s.chars().map(|c| if ((c as u32) < 0x20 && c != '\t') || c == '\u{fffe}' || c == '\u{ffff}' { '\u{fffd}' } else { c }).collect()
}

/// A device's name without its parenthesised details ("cpu", "emulated accelerator",
/// "NVIDIA H100 80GB HBM3"), for titles and legends; hover text keeps the whole name.
pub fn short_name(name: &str) -> &str {
    name.split(" (").next().unwrap_or(name)
}

/// A device name on lines of at most `n` characters, at most `lines` of them (the last one cut
/// with `…`): the short name first, its parenthesised details from a line of their own
/// ("emulated accelerator", "(host memory, CPU kernels;", "not a GPU)").
pub(super) fn wrap_name(name: &str, n: usize, lines: usize) -> Vec<String> {
    let (head, details) = match name.find(" (") {
        Some(at) => (&name[..at], Some(&name[at + 1..])),
        None => (name, None),
    };
    let mut out = Vec::new();
    for part in std::iter::once(head).chain(details) {
        let mut line = String::new();
        for word in part.split_whitespace() {
            if !line.is_empty() && line.chars().count() + 1 + word.chars().count() > n {
                out.push(std::mem::take(&mut line));
            }
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
        if !line.is_empty() {
            out.push(line);
        }
    }
    let cut = out.len() > lines;
    out.truncate(lines);
    for l in out.iter_mut() {
        *l = truncate(l, n);
    }
    if let Some(last) = out.last_mut().filter(|_| cut) {
        if last.chars().count() >= n {
            last.pop();
        }
        if !last.ends_with('…') {
            last.push('…');
        }
    }
    out
}

/// `s` cut to `n` characters, an ellipsis marking the cut (charts' labels, notebook tables).
pub fn truncate(s: &str, n: usize) -> String {
    if s.chars().count() <= n {
        s.to_string()
    } else {
        let mut t: String = s.chars().take(n.saturating_sub(1)).collect();
        t.push('…');
        t
    }
}

/// Width of `text` at `size` (plotters' size, before its 1/1.24), roughly, in pixels.
pub(super) fn text_px(text: &str, size: u32) -> f64 {
    text.chars().count() as f64 * size as f64 / 1.24 * 0.58
}

/// "1 piece", "1,024 pieces".
pub(super) fn fmt_pieces(n: usize) -> String {
    format!("{} piece{}", group(n as u64), if n == 1 { "" } else { "s" })
}

/// "cell 3", "cells 2, 5", "cells 1, 2, 3, 4 +6".
pub(super) fn fmt_cells(cells: &BTreeSet<u64>) -> String {
    let shown: Vec<String> = cells.iter().take(4).map(|c| c.to_string()).collect();
    let more = if cells.len() > 4 { format!(" +{}", cells.len() - 4) } else { String::new() };
    format!("cell{} {}{more}", if cells.len() == 1 { "" } else { "s" }, shown.join(", "))
}

pub(super) fn fmt_bytes(b: u64) -> String {
    const U: [&str; 5] = ["KiB", "MiB", "GiB", "TiB", "PiB"];
    if b < 1024 {
        return format!("{b} B");
    }
    let mut v = b as f64 / 1024.0;
    let mut i = 0;
    while v >= 1024.0 && i < U.len() - 1 {
        v /= 1024.0;
        i += 1;
    }
    if v >= 100.0 {
        format!("{v:.0} {}", U[i])
    } else {
        format!("{v:.1} {}", U[i])
    }
}

pub(super) fn fmt_rate(bytes_per_s: f64) -> String {
    if bytes_per_s >= 1e9 {
        format!("{:.1} GB/s", bytes_per_s / 1e9)
    } else {
        format!("{:.1} MB/s", bytes_per_s / 1e6)
    }
}

/// A duration given in ms, in the unit that reads best.
pub(super) fn fmt_dur(ms: f64) -> String {
    if ms < 1e-3 {
        format!("{:.0} ns", ms * 1e6)
    } else if ms < 1.0 {
        format!("{:.1} µs", ms * 1e3)
    } else if ms < 10.0 {
        format!("{ms:.2} ms")
    } else if ms < 1000.0 {
        format!("{ms:.1} ms")
    } else if ms < 120_000.0 {
        format!("{:.2} s", ms / 1e3)
    } else {
        format!("{:.1} min", ms / 6e4)
    }
}

/// 1234567 -> "1,234,567".
pub(super) fn group(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// An axis value without trailing zeros.
pub(super) fn fmt_tick(v: f64) -> String {
    let s = format!("{v:.6}");
    let s = s.trim_end_matches('0').trim_end_matches('.');
    if s == "-0" {
        "0".into()
    } else {
        s.to_string()
    }
}

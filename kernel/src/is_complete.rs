//! `is_complete_request`: is a cell's code ready to run, does it need more lines, or is it
//! broken? Used by consoles to decide what Enter does.
//!
//! A small lexer first tracks `()`, `[]`, `{}` nesting, string/char/raw-string/byte-string
//! literals and comments (line and nested block). Code that ends inside a bracket, a string or a
//! comment is `incomplete` (indent: four spaces per open bracket); a closing bracket without its
//! opener is `invalid`. Balanced code is then parsed with `syn` as the statements of a block, the
//! way evcxr treats a cell (items, `let`s, a trailing expression without `;`, a last statement
//! missing its `;`, inner attributes). Lines starting with `:` followed by a letter are evcxr
//! commands (`:dep`, `:bach`, ...) and are complete as they are.

/// `("complete" | "incomplete" | "invalid", indent)`; `indent` is only non-empty for
/// `"incomplete"`.
pub fn is_complete(code: &str) -> (&'static str, String) {
    match scan(code) {
        Scan::Invalid => ("invalid", String::new()),
        Scan::Open { depth } => ("incomplete", INDENT.repeat(depth)),
        Scan::Balanced => {
            let rust = strip_commands(code);
            if rust.trim().is_empty() {
                return ("complete", String::new());
            }
            match parse_like_evcxr(&rust) {
                Parsed::Ok => ("complete", String::new()),
                Parsed::NeedsMore => ("incomplete", String::new()),
                Parsed::Broken => ("invalid", String::new()),
            }
        }
    }
}

const INDENT: &str = "    ";

#[derive(Debug, PartialEq)]
enum Scan {
    /// Every bracket, string and comment is closed.
    Balanced,
    /// The code ends inside `depth` brackets, or inside a string or comment.
    Open { depth: usize },
    /// A closing bracket that does not match the innermost open one.
    Invalid,
}

fn is_ident_start(c: char) -> bool {
    c == '_' || c.is_alphabetic()
}

fn is_ident_continue(c: char) -> bool {
    c == '_' || c.is_alphanumeric()
}

/// Whether the line starting at `i` is an evcxr command (`:dep ...`): optional blanks, `:`, a
/// letter. Returns the index of the line's end if so. `::path` is Rust, not a command.
fn command_line_end(chars: &[char], i: usize) -> Option<usize> {
    let mut j = i;
    while j < chars.len() && (chars[j] == ' ' || chars[j] == '\t') {
        j += 1;
    }
    if j + 1 < chars.len() && chars[j] == ':' && chars[j + 1].is_ascii_alphabetic() {
        while j < chars.len() && chars[j] != '\n' {
            j += 1;
        }
        Some(j)
    } else {
        None
    }
}

fn scan(code: &str) -> Scan {
    let chars: Vec<char> = code.chars().collect();
    let n = chars.len();
    let at = |k: usize| chars.get(k).copied();
    // The closers we are waiting for, innermost last.
    let mut stack: Vec<char> = Vec::new();
    let mut i = 0;
    let mut line_start = true;
    while i < n {
        if line_start && stack.is_empty() {
            if let Some(end) = command_line_end(&chars, i) {
                i = end;
                continue;
            }
        }
        line_start = false;
        let c = chars[i];
        match c {
            '\n' => {
                line_start = true;
                i += 1;
            }
            '/' if at(i + 1) == Some('/') => {
                while i < n && chars[i] != '\n' {
                    i += 1;
                }
            }
            '/' if at(i + 1) == Some('*') => {
                let mut depth = 1;
                i += 2;
                while depth > 0 {
                    if i >= n {
                        return Scan::Open { depth: stack.len() };
                    }
                    if chars[i] == '/' && at(i + 1) == Some('*') {
                        depth += 1;
                        i += 2;
                    } else if chars[i] == '*' && at(i + 1) == Some('/') {
                        depth -= 1;
                        i += 2;
                    } else {
                        i += 1;
                    }
                }
            }
            '"' => {
                i += 1;
                loop {
                    match at(i) {
                        None => return Scan::Open { depth: stack.len() },
                        Some('\\') => i += 2,
                        Some('"') => {
                            i += 1;
                            break;
                        }
                        Some(_) => i += 1,
                    }
                }
            }
            '\'' => {
                if at(i + 1) == Some('\\') {
                    // An escaped char literal: '\n', '\'', '\u{1F980}'.
                    i += 3;
                    while i < n && chars[i] != '\'' && chars[i] != '\n' {
                        i += 1;
                    }
                    if at(i) == Some('\'') {
                        i += 1;
                    }
                } else if at(i + 2) == Some('\'') {
                    i += 3; // 'x'
                } else {
                    i += 1; // a lifetime or label: 'a, 'static
                }
            }
            c if is_ident_start(c) => {
                let start = i;
                while i < n && is_ident_continue(chars[i]) {
                    i += 1;
                }
                let word: String = chars[start..i].iter().collect();
                // Raw strings: r"..", br#".."#, cr"..". (For b"..", c"..", b'.' the quote is
                // handled on the next turn.)
                if let ("r" | "br" | "cr", Some('"' | '#')) = (word.as_str(), at(i)) {
                    let mut hashes = 0;
                    let mut j = i;
                    while at(j) == Some('#') {
                        hashes += 1;
                        j += 1;
                    }
                    if at(j) != Some('"') {
                        continue; // a raw identifier (r#match) or `r #`
                    }
                    j += 1;
                    // Find `"` followed by `hashes` `#`.
                    loop {
                        if j >= n {
                            return Scan::Open { depth: stack.len() };
                        }
                        if chars[j] == '"' && (1..=hashes).all(|k| at(j + k) == Some('#')) {
                            i = j + 1 + hashes;
                            break;
                        }
                        j += 1;
                    }
                }
            }
            '(' => {
                stack.push(')');
                i += 1;
            }
            '[' => {
                stack.push(']');
                i += 1;
            }
            '{' => {
                stack.push('}');
                i += 1;
            }
            ')' | ']' | '}' => {
                if stack.pop() != Some(c) {
                    return Scan::Invalid;
                }
                i += 1;
            }
            _ => i += 1,
        }
    }
    if stack.is_empty() {
        Scan::Balanced
    } else {
        Scan::Open { depth: stack.len() }
    }
}

/// The code with evcxr command lines blanked out (line numbers kept).
fn strip_commands(code: &str) -> String {
    code.lines()
        .map(|line| {
            let chars: Vec<char> = line.chars().collect();
            if command_line_end(&chars, 0).is_some() {
                ""
            } else {
                line
            }
        })
        .collect::<Vec<_>>()
        .join("\n")
}

enum Parsed {
    Ok,
    /// Fails only at the end of the input (e.g. `fn f()`, `#[derive(Debug)]`, `let x =`).
    NeedsMore,
    Broken,
}

fn parse_stmts(src: &str) -> syn::Result<()> {
    syn::parse::Parser::parse_str(syn::Block::parse_within, src).map(|_| ())
}

fn parse_like_evcxr(src: &str) -> Parsed {
    let first = match parse_stmts(src) {
        Ok(()) => return Parsed::Ok,
        Err(e) => e,
    };
    // Inner attributes (`#![allow(...)]`) and other file-level forms.
    if syn::parse_file(src).is_ok() {
        return Parsed::Ok;
    }
    let message = first.to_string();
    // evcxr adds a missing `;` after a last statement (`let x = 5`, `use std::fmt`).
    if message.starts_with("expected `;`") && parse_stmts(&format!("{src}\n;")).is_ok() {
        return Parsed::Ok;
    }
    if message.starts_with("unexpected end of input") {
        Parsed::NeedsMore
    } else {
        Parsed::Broken
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(code: &str, status: &str, indent: &str) {
        assert_eq!(is_complete(code), (status_static(status), indent.to_owned()), "code: {code:?}");
    }

    fn status_static(s: &str) -> &'static str {
        match s {
            "complete" => "complete",
            "incomplete" => "incomplete",
            "invalid" => "invalid",
            other => panic!("bad status {other}"),
        }
    }

    #[test]
    fn complete_code() {
        for code in [
            "",
            "   \n  ",
            "let x = 1;",
            "1 + 1",
            "let x = 5",
            "let v = vec![1, 2, 3];\nv.iter().sum::<i32>()",
            "fn f() {}\nf()",
            "fn f(x: i32) -> i32 {\n    x + 1\n}",
            "struct S;\nimpl S { fn f(&self) -> u8 { 1 } }\nS.f()",
            "use std::collections::HashMap;",
            "use std::collections::HashMap",
            "#![allow(unused)]\nfn f() {}",
            "#[derive(Debug)]\nstruct P { x: i32 }",
            "println!(\"{}\", 1)",
            "::std::mem::drop(1)",
            "for i in 0..3 { println!(\"{i}\"); }",
            "let x = if true { 1 } else { 2 };",
            "fn longest<'a>(x: &'a str, y: &'a str) -> &'a str { if x.len() > y.len() { x } else { y } }",
            "'outer: loop { break 'outer; }",
        ] {
            check(code, "complete", "");
        }
    }

    #[test]
    fn open_brackets_are_incomplete_with_indent() {
        check("let x = {", "incomplete", "    ");
        check("fn f() {", "incomplete", "    ");
        check("fn f() {\n    if true {", "incomplete", "        ");
        check("let v = vec![\n    1,", "incomplete", "    ");
        check("foo(bar(", "incomplete", "        ");
        check("impl S {\n    fn f(&self) {\n        let x = [(", "incomplete", "                ");
    }

    #[test]
    fn brackets_in_literals_and_comments_do_not_count() {
        check("let s = \"{ ( [\";", "complete", "");
        check("let s = \"a \\\" {\";", "complete", "");
        check("let c = '{';", "complete", "");
        check("let c = '\\'';", "complete", "");
        check("let c = b'(';", "complete", "");
        check("let c = '\\u{7B}';", "complete", "");
        check("let s = b\"[\";", "complete", "");
        check("// {\n1", "complete", "");
        check("/* { */ 1", "complete", "");
        check("/* a /* { */ b */ 1", "complete", "");
        check(r###"let s = r#"a " { "#;"###, "complete", "");
        check(r###"let s = r"{";"###, "complete", "");
        check(r###"let s = br##"x "# ( "##;"###, "complete", "");
        check("let r#match = 1;", "complete", "");
    }

    #[test]
    fn open_strings_and_comments_are_incomplete() {
        check("let s = \"abc", "incomplete", "");
        check("let s = \"abc\\\"", "incomplete", "");
        check("fn f() {\n    let s = \"abc", "incomplete", "    ");
        check("let s = r#\"abc\"", "incomplete", "");
        check("let s = b\"abc", "incomplete", "");
        check("/* comment", "incomplete", "");
        check("/* a /* b */ c", "incomplete", "");
    }

    #[test]
    fn unmatched_closers_are_invalid() {
        check("let x = )", "invalid", "");
        check("}", "invalid", "");
        check("let x = (1, ]", "invalid", "");
        check("fn f() { let v = [1, 2); }", "invalid", "");
        check("let x = (1));", "invalid", "");
    }

    #[test]
    fn garbage_is_invalid() {
        check("fn 1x", "invalid", "");
        check("let = ;", "invalid", "");
        check("x y z", "invalid", "");
        check("let x = 5\nx", "invalid", "");
        check("fn f() {} }{", "invalid", "");
    }

    #[test]
    fn unfinished_statements_at_the_end_are_incomplete() {
        check("fn f()", "incomplete", "");
        check("#[derive(Debug)]", "incomplete", "");
        check("let x =", "incomplete", "");
        check("struct S", "incomplete", "");
        check("let x = 1 +", "incomplete", "");
    }

    #[test]
    fn evcxr_commands_are_complete() {
        check(":dep serde = \"1\"", "complete", "");
        check(":dep serde = { version = \"1\", features = [\"derive\"] }", "complete", "");
        check(":bach don't care", "complete", "");
        check(":vars", "complete", "");
        check(":dep rand = \"0.8\"\nlet x = 1;\nx", "complete", "");
        check("  :timing\n1 + 1", "complete", "");
        check(":dep foo\nfn f() {", "incomplete", "    ");
    }
}

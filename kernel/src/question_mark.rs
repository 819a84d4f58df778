//! A `?` that returns early from a cell is an error at that cell.
//!
//! evcxr runs a cell that uses `?` inside a closure returning `Result`; an `Err` prints its
//! message on stderr and ends the cell, and evcxr reports the cell as a success (it consumes
//! its own marker for this). So the kernel marks the end of such a cell: the last statement
//! becomes `bach::notebook::cell_end();`, or a final expression `e` (the value evcxr shows)
//! becomes `bach::notebook::reached_end(&(e))`, which returns the same value by reference.
//! Both print the end marker line (`BACH_END`, read in evcxr_engine.rs); a cell that
//! finishes without printing it (and did not panic) stopped at a `?`.

use proc_macro2::LineColumn;
use syn::spanned::Spanned;

/// The cell with its end marked, when its code (after any leading evcxr `:` commands) uses
/// `?` and parses as Rust statements; `None` leaves the cell as it is (no `?`, `:` commands
/// between code lines, or code only evcxr understands).
pub fn mark_end(cell: &str) -> Option<String> {
    let (commands, code) = split_commands(cell)?;
    if !code.contains('?') {
        return None;
    }
    // Parsed as the body of a block; line 1 of `code` is line 2 of the block.
    let block: syn::Block = syn::parse_str(&format!("{{\n{code}\n}}")).ok()?;
    let last = block.stmts.last()?;
    let final_expr = match last {
        syn::Stmt::Expr(e, None) => Some(e.span()),
        syn::Stmt::Macro(m) if m.semi_token.is_none() => Some(m.span()),
        _ => None,
    };
    Some(match final_expr {
        Some(span) => {
            let (start, end) = (offset(code, span.start())?, offset(code, span.end())?);
            format!("{commands}{}{}\n{}", &code[..start], bach_wire::calls::reached_end(&code[start..end]), &code[end..])
        }
        None => format!("{commands}{code}\n{}\n", bach_wire::calls::CELL_END),
    })
}

/// The cell's leading evcxr commands (`:dep`, `:opt 2`, blank lines), which stay as they are,
/// and its code; `None` when commands come further down too (such a cell is left to evcxr).
pub(crate) fn split_commands(cell: &str) -> Option<(&str, &str)> {
    let mut commands_end = 0;
    for line in cell.split_inclusive('\n') {
        if !(line.trim_start().starts_with(':') || line.trim().is_empty()) {
            break;
        }
        commands_end += line.len();
    }
    let (commands, code) = cell.split_at(commands_end);
    (!code.lines().any(|l| l.trim_start().starts_with(':'))).then_some((commands, code))
}

/// Byte offset in `code` of a position in the block `mark_end` parsed.
pub(crate) fn offset(code: &str, at: LineColumn) -> Option<usize> {
    let line_start = if at.line == 2 { 0 } else { code.match_indices('\n').nth(at.line.checked_sub(3)?)?.0 + 1 };
    let line = &code[line_start..];
    let within = line.char_indices().nth(at.column).map_or(line.find('\n').unwrap_or(line.len()), |(b, _)| b);
    Some(line_start + within)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_final_statement_gets_an_end_line() {
        let code = "let n: i32 = \"7\".parse()?;\nlet m = n + 1;";
        assert_eq!(mark_end(code).unwrap(), format!("{code}\nbach::notebook::cell_end();\n"));
    }

    #[test]
    fn a_final_expression_is_wrapped_in_place() {
        assert_eq!(mark_end("let a = f()?;\na.sum()?").unwrap(), "let a = f()?;\nbach::notebook::reached_end(&(a.sum()?))\n");
        // Comments after it, several lines, and non-ASCII text before it on its line.
        assert_eq!(mark_end("let x = g()?; /* é */ x\n  .h() // shown\n").unwrap(), "let x = g()?; /* é */ bach::notebook::reached_end(&(x\n  .h()))\n // shown\n");
        assert_eq!(mark_end("v.len()?").unwrap(), "bach::notebook::reached_end(&(v.len()?))\n");
        assert_eq!(mark_end("let v = w()?;\nvec![v]").unwrap(), "let v = w()?;\nbach::notebook::reached_end(&(vec![v]))\n");
        assert_eq!(mark_end("if a()? { 1 } else { 2 }").unwrap(), "bach::notebook::reached_end(&(if a()? { 1 } else { 2 }))\n");
    }

    #[test]
    fn leading_commands_stay_first() {
        assert_eq!(mark_end(":dep foo = \"1\"\n\n:opt 2\nfoo::f()?").unwrap(), ":dep foo = \"1\"\n\n:opt 2\nbach::notebook::reached_end(&(foo::f()?))\n");
        assert_eq!(mark_end(":opt 2\nlet x = f()?;").unwrap(), ":opt 2\nlet x = f()?;\nbach::notebook::cell_end();\n");
    }

    #[test]
    fn cells_left_alone() {
        assert_eq!(mark_end("let x = 1;\nx + 1"), None, "no ?");
        assert_eq!(mark_end("let x = foo::f()?;\n:opt 2\nx"), None, "evcxr commands after code");
        assert_eq!(mark_end("let x = ;?"), None, "does not parse");
        assert_eq!(mark_end("// only a comment?"), None, "no statements");
    }
}

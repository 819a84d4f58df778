//! Plain Rust in a cell stops when the user interrupts it.
//!
//! Bach's own evaluations stop at their next piece; a cell's own loops would not, and before
//! this the kernel could only restart the Rust process, losing every variable. So the kernel
//! puts `bach::notebook::tick();` at the top of each loop body and each closure body of the
//! cell (functions and closures the cell defines included: evcxr keeps their text for later
//! cells), and runs `std::thread::sleep`/`thread::sleep` as `bach::notebook::sleep`. On an
//! interrupt `tick` panics on the cell's thread; evcxr catches the panic like any other, so
//! earlier cells' variables and the Bach session stay. Everything is inserted within lines,
//! so line numbers stay the cell's; a cell that fails to compile is compiled again as written
//! (evcxr_engine.rs), so errors show the user's text.

use proc_macro2::Span;
use syn::spanned::Spanned;
use syn::visit::{self, Visit};

use crate::question_mark::{offset, split_commands};

/// What goes at the top of a loop or closure body.
pub use bach_wire::calls::TICK;
use bach_wire::calls::{SLEEP, TICK_OPEN};

/// The cell with its loops and closures made interruptible; `None` when there is nothing to
/// change or the code (after leading evcxr `:` commands) does not parse as Rust statements.
pub fn instrument(cell: &str) -> Option<String> {
    let (commands, code) = split_commands(cell)?;
    if !["for", "while", "loop", "|", "sleep"].iter().any(|w| code.contains(w)) {
        return None;
    }
    let block: syn::Block = syn::parse_str(&format!("{{\n{code}\n}}")).ok()?;
    let mut edits = Edits { code, edits: Vec::new(), failed: false };
    for stmt in &block.stmts {
        edits.visit_stmt(stmt);
    }
    if edits.failed || edits.edits.is_empty() {
        return None;
    }
    // Right to left; at one offset a replacement first, so that an insertion there lands
    // before it.
    let mut list = edits.edits;
    list.sort_by_key(|e| (std::cmp::Reverse(e.start), e.start == e.end));
    let mut out = code.to_string();
    for e in list {
        out.replace_range(e.start..e.end, e.text);
    }
    Some(format!("{commands}{out}"))
}

struct Edit {
    start: usize,
    end: usize,
    text: &'static str,
}

struct Edits<'c> {
    code: &'c str,
    edits: Vec<Edit>,
    failed: bool,
}

impl Edits<'_> {
    fn at(&mut self, at: proc_macro2::LineColumn) -> usize {
        offset(self.code, at).unwrap_or_else(|| {
            self.failed = true;
            0
        })
    }

    fn insert(&mut self, at: proc_macro2::LineColumn, text: &'static str) {
        let at = self.at(at);
        self.edits.push(Edit { start: at, end: at, text });
    }

    /// A tick right after the opening brace of `block`.
    fn tick_in(&mut self, block: &syn::Block) {
        let open: Span = block.brace_token.span.open();
        self.insert(open.end(), TICK);
    }
}

impl<'ast> Visit<'ast> for Edits<'_> {
    fn visit_expr_for_loop(&mut self, e: &'ast syn::ExprForLoop) {
        self.tick_in(&e.body);
        visit::visit_expr_for_loop(self, e);
    }

    fn visit_expr_while(&mut self, e: &'ast syn::ExprWhile) {
        self.tick_in(&e.body);
        visit::visit_expr_while(self, e);
    }

    fn visit_expr_loop(&mut self, e: &'ast syn::ExprLoop) {
        self.tick_in(&e.body);
        visit::visit_expr_loop(self, e);
    }

    fn visit_expr_closure(&mut self, c: &'ast syn::ExprClosure) {
        if c.constness.is_none() && c.asyncness.is_none() {
            match &*c.body {
                syn::Expr::Block(b) if b.label.is_none() => self.tick_in(&b.block),
                body => {
                    let span = body.span();
                    self.insert(span.start(), TICK_OPEN);
                    self.insert(span.end(), " }");
                }
            }
        }
        visit::visit_expr_closure(self, c);
    }

    fn visit_expr_call(&mut self, c: &'ast syn::ExprCall) {
        if let syn::Expr::Path(p) = &*c.func {
            let names: Vec<String> = p.path.segments.iter().map(|s| s.ident.to_string()).collect();
            if p.qself.is_none() && (names == ["std", "thread", "sleep"] || names == ["thread", "sleep"]) {
                let span = p.span();
                let (start, end) = (self.at(span.start()), self.at(span.end()));
                self.edits.push(Edit { start, end, text: SLEEP });
            }
        }
        visit::visit_expr_call(self, c);
    }

    // Const contexts cannot call `tick`.
    fn visit_item_const(&mut self, _: &'ast syn::ItemConst) {}
    fn visit_item_static(&mut self, _: &'ast syn::ItemStatic) {}
    fn visit_impl_item_const(&mut self, _: &'ast syn::ImplItemConst) {}
    fn visit_trait_item_const(&mut self, _: &'ast syn::TraitItemConst) {}
    fn visit_expr_const(&mut self, _: &'ast syn::ExprConst) {}
    // Array lengths and const generic arguments are const contexts too.
    fn visit_type(&mut self, _: &'ast syn::Type) {}
    fn visit_generic_argument(&mut self, _: &'ast syn::GenericArgument) {}

    fn visit_item_fn(&mut self, f: &'ast syn::ItemFn) {
        if f.sig.constness.is_none() {
            visit::visit_item_fn(self, f);
        }
    }

    fn visit_impl_item_fn(&mut self, f: &'ast syn::ImplItemFn) {
        if f.sig.constness.is_none() {
            visit::visit_impl_item_fn(self, f);
        }
    }

    fn visit_trait_item_fn(&mut self, f: &'ast syn::TraitItemFn) {
        if f.sig.constness.is_none() {
            visit::visit_trait_item_fn(self, f);
        }
    }

    fn visit_expr_repeat(&mut self, r: &'ast syn::ExprRepeat) {
        self.visit_expr(&r.expr); // not its length, a const
    }

    // Enum discriminants are const.
    fn visit_variant(&mut self, _: &'ast syn::Variant) {}
}

/// A line of the cell, instrumented or not, in a form that compares equal either way (no
/// ticks, whitespace or braces; each sleep as `sleep`): to find a generated line in the cell.
pub fn comparable(line: &str) -> String {
    let line = line.replace(TICK, "").replace(SLEEP, "sleep").replace("std::thread::sleep", "sleep").replace("thread::sleep", "sleep");
    line.chars().filter(|c| !c.is_whitespace() && *c != '{' && *c != '}').collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loop_bodies_get_a_tick_on_their_own_line() {
        let cell = "let mut s = 0;\nfor i in 0..10 {\n    s += i;\n}\nwhile s > 0 { s -= 1; }\nloop {\n    break;\n}\ns";
        assert_eq!(
            instrument(cell).unwrap(),
            format!("let mut s = 0;\nfor i in 0..10 {{{TICK}\n    s += i;\n}}\nwhile s > 0 {{{TICK} s -= 1; }}\nloop {{{TICK}\n    break;\n}}\ns")
        );
    }

    #[test]
    fn closures_functions_and_sleeps() {
        assert_eq!(instrument("let v: Vec<u64> = (0..n).map(|i| i * i).collect();").unwrap(), "let v: Vec<u64> = (0..n).map(|i| {bach::notebook::tick(); i * i }).collect();");
        assert_eq!(instrument("let f = |x: f64| -> f64 { x + 1.0 };").unwrap(), format!("let f = |x: f64| -> f64 {{{TICK} x + 1.0 }};"));
        assert_eq!(
            instrument("fn f(n: u64) -> u64 {\n  let mut k = 0;\n  while k < n { k += 1 }\n  k\n}").unwrap(),
            format!("fn f(n: u64) -> u64 {{\n  let mut k = 0;\n  while k < n {{{TICK} k += 1 }}\n  k\n}}")
        );
        assert_eq!(instrument("std::thread::sleep(std::time::Duration::from_secs(5));").unwrap(), "bach::notebook::sleep(std::time::Duration::from_secs(5));");
        assert_eq!(instrument("let t = || thread::sleep(d);").unwrap(), "let t = || {bach::notebook::tick(); bach::notebook::sleep(d) };");
        // Nested: both closures, and the loop inside.
        assert_eq!(instrument("let g = |a| move |b| { for _ in 0..b {} a };").unwrap(), format!("let g = |a| {{{TICK} move |b| {{{TICK} for _ in 0..b {{{TICK}}} a }} }};"));
        // Non-ASCII text before an edit on its line.
        assert_eq!(instrument("let s = \"é\"; for c in s.chars() { }").unwrap(), format!("let s = \"é\"; for c in s.chars() {{{TICK} }}"));
    }

    #[test]
    fn const_contexts_and_other_cells_are_left_alone() {
        assert_eq!(instrument("const N: usize = { let mut i = 0; while i < 3 { i += 1 } i };"), None);
        assert_eq!(instrument("const fn f() -> u32 { let mut i = 0; loop { i += 1; if i > 3 { break i } } }"), None);
        assert_eq!(instrument("let a = [0u8; { let mut i = 0; while i < 3 { i += 1 } i }];"), None);
        assert_eq!(instrument("let x = 1;\nx + 1"), None, "nothing to change");
        assert_eq!(instrument("for x in {"), None, "does not parse");
        assert_eq!(instrument("let v = vec![1, 2];\nprintln!(\"{}\", v.iter().map(|x| x * 2).sum::<i32>());"), None, "macro arguments are left to the macro");
        assert_eq!(instrument(":dep foo = \"1\"\nfor i in 0..3 {}").unwrap(), format!(":dep foo = \"1\"\nfor i in 0..3 {{{TICK}}}"));
        assert_eq!(instrument("let x = 1;\n:vars\nfor i in 0..3 {}"), None, "evcxr commands after code");
    }

    #[test]
    fn lines_compare_as_written() {
        let cell = "for i in 0..3 { f(|x| x + i); std::thread::sleep(d); }";
        assert_eq!(comparable(&instrument(cell).unwrap()), comparable(cell));
        assert_ne!(comparable("f(|x| x + i)"), comparable("f(|x| x - i)"));
    }
}

//! The Rust the kernel writes into cells: each a call of the `bach` crate's `notebook` module
//! in the cells' process. Built here, by the functions below, and nowhere else; the `bach`
//! crate's tests compile every one of them ([`examples`], `tests/tests/wire_calls.rs`), so a
//! renamed or changed entry point fails a test, not a user's cell.
//!
//! Arguments that are Rust expressions (`expr`) are the user's text, pasted as written;
//! arguments that are values (names, files, settings) are written as Rust string literals.

/// The module every call goes to.
pub const NOTEBOOK: &str = "bach::notebook";

/// Before a cell's code: the cell's number (its nodes are recorded under it, and it prints
/// the run line: its compile is over).
pub fn cell(n: u64) -> String {
    format!("bach::notebook::cell({n});")
}
macro_rules! tick {
    () => {
        "bach::notebook::tick();"
    };
}
/// At the top of each loop body and closure of a cell: stops the cell on an interrupt.
pub const TICK: &str = tick!();
/// A closure's body that is an expression `e` becomes `{tick(); e }`: this, `e`, then ` }`.
pub const TICK_OPEN: &str = concat!("{", tick!(), " ");
/// What a cell's `std::thread::sleep` becomes: a sleep that an interrupt stops.
pub const SLEEP: &str = "bach::notebook::sleep";
/// The last statement of a cell that uses `?`: prints the end line.
pub const CELL_END: &str = "bach::notebook::cell_end();";
/// A final expression `expr` of a cell that uses `?`: prints the end line and returns the
/// value by reference, which evcxr then shows.
pub fn reached_end(expr: &str) -> String {
    format!("bach::notebook::reached_end(&({expr}))")
}

macro_rules! with_show_debug {
    () => {
        "mod bach_show_debug { pub use bach::notebook::ShowDebug as _; }"
    };
}
macro_rules! session_variable {
    () => {
        "bach_session"
    };
}
/// The prelude's names in scope, cell 0 and the notebook's `bach_session` (each line a
/// statement of its own; the last gives the prelude's cell a `?`, so evcxr makes it fallible).
pub const PRELUDE_NAMES: &str = concat!(
    "use bach::prelude_without_macros::*;\n",
    with_show_debug!(),
    "\nuse bach_show_debug::*;\nbach::notebook::cell(0);\nlet ",
    session_variable!(),
    " = bach::notebook::NotebookSession;\n\"0\".parse::<u8>()?;\n"
);
/// The module through which the prelude brings `ShowDebug` into scope.
pub const WITH_SHOW_DEBUG: &str = with_show_debug!();
/// The prelude's `bach_show_debug` module made empty, taking `ShowDebug` out of scope (a
/// display crate's trait, evcxr_image's `ImageDisplay`, gives values an `evcxr_display` too,
/// and the two would be ambiguous).
pub const WITHOUT_SHOW_DEBUG: &str = "mod bach_show_debug {}";
/// The notebook's session handle (made again by the prelude after a rebuild).
pub const SESSION_VARIABLE: &str = session_variable!();

/// Saving the session's arrays and settings before a rebuild, and bringing them back after.
pub mod stash {
    /// The file in a stash directory that lists what was saved (its format is documented at
    /// `bach::notebook::stash`): `# ...` comments, `name<TAB>type` per variable saved,
    /// `!name<TAB>reason` per one that could not be (`!:session` for the settings).
    pub const MANIFEST: &str = "manifest.tsv";

    /// The cell that saves the session into `dir`: every variable named, Bach arrays kept (the
    /// `Var` probe compiles for a value of any type and saves only Bach arrays).
    pub fn save(dir: &str, names: &[&str]) -> String {
        let mut code = format!("{{\n    use bach::notebook::stash::{{Skip as _, Stasher as _}};\n    let __bach_stash = bach::notebook::stash::Stash::new({dir:?});\n");
        for n in names {
            code.push_str(&format!("    (&&bach::notebook::stash::Var({n:?}, &{n})).stash_into(&__bach_stash);\n"));
        }
        code.push_str("    __bach_stash.finish();\n}\n");
        code
    }
    /// The settings back from `dir` (a line).
    pub fn restore_session(dir: &str) -> String {
        format!("bach::notebook::stash::restore_session({dir:?}).unwrap();\n")
    }
    /// Variable `name` back from `dir`, declared with type `ty` (a line).
    pub fn restore(dir: &str, name: &str, ty: &str) -> String {
        format!("let {name}: {ty} = bach::notebook::stash::restore({dir:?}, {name:?}).unwrap();\n")
    }
}

/// Every call above with example arguments, as `(what, Rust)`, in the order a cell could hold
/// them: the code of the `bach` crate's compile test, where `x` is an `Array1<f64>` and `n`
/// an `i32` in scope (a function returning `Result<(), Box<dyn Error>>`).
pub fn examples() -> Vec<(&'static str, String)> {
    let dir = "/tmp/bach-wire-example";
    vec![
        ("prelude", PRELUDE_NAMES.trim_end().to_string()),
        ("with ShowDebug", WITH_SHOW_DEBUG.to_string()),
        ("cell", cell(7)),
        ("tick", TICK.to_string()),
        ("tick in a closure", format!("let f = |v: f64| {TICK_OPEN}v + 1.0 }};")),
        ("sleep", format!("{SLEEP}(std::time::Duration::from_millis(0));")),
        ("reached_end", format!("let _ = {};", reached_end("x.sum()"))),
        ("cell_end", CELL_END.to_string()),
    ]
    .into_iter()
    .chain(crate::magics::examples())
    .chain([
        ("stash", stash::save(dir, &["x", "n"])),
        ("restore session", stash::restore_session(dir).trim_end().to_string()),
        ("restore", stash::restore(dir, "y", "Array1<f64>").trim_end().to_string()),
        ("without ShowDebug", WITHOUT_SHOW_DEBUG.to_string()),
    ])
    .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prelude_reads_as_before() {
        assert_eq!(
            PRELUDE_NAMES,
            "use bach::prelude_without_macros::*;\nmod bach_show_debug { pub use bach::notebook::ShowDebug as _; }\nuse bach_show_debug::*;\nbach::notebook::cell(0);\nlet bach_session = bach::notebook::NotebookSession;\n\"0\".parse::<u8>()?;\n"
        );
    }
}

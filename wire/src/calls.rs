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

/// The `:bach` magics, one call each.
pub mod magic {
    pub const SHOW_DEVICES: &str = "bach::notebook::show_devices();";
    pub const SHOW_CONFIG: &str = "bach::notebook::show_config();";
    pub fn show_plan(expr: &str) -> String {
        format!("bach::notebook::show_plan(&({expr}));")
    }
    pub fn show_explain(expr: &str) -> String {
        format!("bach::notebook::show_explain(&({expr}));")
    }
    pub fn show_graph(expr: &str) -> String {
        format!("bach::notebook::show_graph(&({expr}));")
    }
    /// `which`: `""` (the session's) or `"last"` (the latest evaluation's).
    pub fn show_trace(which: &str) -> String {
        format!("bach::notebook::show_trace({which:?});")
    }
    /// `which` as in [`show_trace`].
    pub fn export_trace(which: &str, file: &str) -> String {
        format!("bach::notebook::export_trace({which:?}, {file:?});")
    }
    pub fn set_trace_keep(n: usize) -> String {
        format!("bach::notebook::set_trace_keep({n});")
    }
    /// `how`: `full`, `compact`, `auto` or `auto <time>`.
    pub fn set_chart(how: &str) -> String {
        format!("bach::notebook::set_chart({how:?});")
    }
    pub const SHOW_MEMORY: &str = "bach::notebook::show_memory();";
    /// `cap`: a size (`64MiB`) or `none`.
    pub fn set_memory(cap: &str) -> String {
        format!("bach::notebook::set_memory({cap:?});")
    }
    pub fn set_policy(name: &str) -> String {
        format!("bach::notebook::set_policy({name:?});")
    }
    /// `device`: `cpu`, `gpu` or `auto`.
    pub fn force_cell(device: &str) -> String {
        format!("bach::notebook::force_cell({device:?});")
    }
    pub const SHOW_COST: &str = "bach::notebook::show_cost();";
    /// `setting`: `path = value`.
    pub fn set_cost(setting: &str) -> String {
        format!("bach::notebook::set_cost({setting:?});")
    }
    pub const RESET_COST: &str = "bach::notebook::reset_cost();";
    /// `profile`: `h100`, `default` or a file.
    pub fn use_cost_profile(profile: &str) -> String {
        format!("bach::notebook::use_cost_profile({profile:?});")
    }
    pub const CALIBRATE: &str = "bach::notebook::calibrate();";
    /// The plan of `expr` with `settings` (`(path, value)`) beside the current one.
    pub fn whatif(settings: &[(&str, &str)], expr: &str) -> String {
        let pairs: Vec<String> = settings.iter().map(|(p, v)| format!("({p:?}, {v:?})")).collect();
        format!("bach::notebook::whatif(&[{}], &({expr}));", pairs.join(", "))
    }
    pub fn whatif_profile(profile: &str, expr: &str) -> String {
        format!("bach::notebook::whatif_profile({profile:?}, &({expr}));")
    }
    pub const SHOW_BREAKDOWN: &str = "bach::notebook::show_breakdown();";
    pub const MODEL_PANEL: &str = "bach::notebook::model_panel();";
    pub fn panel(expr: &str) -> String {
        format!("bach::notebook::panel(&({expr}));")
    }
    /// The session's values: `named` variables (Bach arrays, listed by name) and the names of
    /// those `left_out` (moved before the line; listed unnamed if alive); `live`: a table
    /// redrawn before each cell.
    pub fn show_vars(named: &[&str], left_out: &[&str], live: bool) -> String {
        let list: Vec<String> = named.iter().map(|n| format!("({n:?}, &{n}.lazy())")).collect();
        let left: Vec<String> = left_out.iter().map(|n| format!("{n:?}")).collect();
        let f = if live { "show_vars_live" } else { "show_vars" };
        format!("bach::notebook::{f}(&[{}], &[{}]);", list.join(", "), left.join(", "))
    }
}

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
    use magic::*;
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
        ("devices", SHOW_DEVICES.to_string()),
        ("config", SHOW_CONFIG.to_string()),
        ("plan", show_plan("&x * 2.0")),
        ("explain", show_explain("&x * 2.0")),
        ("graph", show_graph("&x * 2.0")),
        ("trace", show_trace("")),
        ("trace last", show_trace("last")),
        ("trace export", export_trace("", "trace.json")),
        ("trace export last", export_trace("last", "trace.json")),
        ("trace keep", set_trace_keep(20)),
        ("chart", set_chart("auto 20ms")),
        ("memory", SHOW_MEMORY.to_string()),
        ("memory cap", set_memory("64MiB")),
        ("policy", set_policy("greedy")),
        ("cell device", force_cell("cpu")),
        ("cost", SHOW_COST.to_string()),
        ("cost set", set_cost("elementwise.cuda.per_element = 2e-11")),
        ("cost reset", RESET_COST.to_string()),
        ("cost profile", use_cost_profile("h100")),
        ("calibrate", CALIBRATE.to_string()),
        ("whatif", whatif(&[("transfer.bandwidth", "5GB/s")], "&x * 2.0")),
        ("whatif profile", whatif_profile("h100", "&x * 2.0")),
        ("breakdown", SHOW_BREAKDOWN.to_string()),
        ("panel", MODEL_PANEL.to_string()),
        ("panel of", panel("&x * 2.0")),
        ("vars", show_vars(&["x"], &["gone"], false)),
        ("vars live", show_vars(&["x"], &[], true)),
        ("stash", stash::save(dir, &["x", "n"])),
        ("restore session", stash::restore_session(dir).trim_end().to_string()),
        ("restore", stash::restore(dir, "y", "Array1<f64>").trim_end().to_string()),
        ("without ShowDebug", WITHOUT_SHOW_DEBUG.to_string()),
    ]
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

//! The `:bach` magics: the language a notebook writes after `:bach`, and the Rust each
//! line becomes. Each line `:bach <command> [args]` becomes one line of Rust calling
//! `bach::notebook` in the cells' process (so line numbers of errors stay right). One row of
//! [`COMMANDS`] parses a command, [`magic`] builds its call, [`examples`] gives the `bach`
//! crate's compile test one of each, and [`HELP`] lists it: a new magic is a row, a builder
//! and a help line here, and its function in `bach::notebook`.

pub const HELP: &str = "\
:bach help                      this list
:bach devices                   the devices Bach found (and, without a GPU, why)
:bach config                    the session's settings and the runtime's BACH_* switches, with their values
:bach plan <expr>               the plan for a lazy value, without running it
:bach explain <expr>            why each op of that plan runs where it runs: estimates, copies, margin
:bach trace [last]              the session's timeline so far, per cell (last: the latest evaluation's)
:bach trace keep <N>            how many evaluations the trace keeps (500 by default; totals cover all)
:bach trace export [last] <FILE.json>   the timeline as a Chrome trace (Perfetto, chrome://tracing opens it)
:bach chart <full|compact|auto [TIME]>  a shown value's timeline: always, one line, or from TIME (default 5 ms)
:bach memory                    what the session holds: graph nodes, cached values (host, device), trace
:bach memory <size|none>        cap the accelerator memory the planner may use (e.g. 64MiB)
:bach policy <name>             placement policy: optimal (default), greedy, threshold or cpu
:bach cell <cpu|gpu|auto|gpu:K|cuda:K> where the ops this cell creates from here on run (gpu:K: accelerator K alone; cuda:K: the one on CUDA GPU K)
:bach cost                      the cost model the planner uses
:bach cost set <path> = <value> change one parameter (e.g. elementwise.cuda.per_element = 2e-11)
:bach cost reset                the defaults for this machine
:bach cost profile <h100|default|FILE>  plan with the H100 profile (predictions), the uncalibrated defaults, or a profile file
:bach calibrate                 measure this machine (under 30 s), plan with it, save it for later sessions
:bach whatif <path> = <value> ... <expr>   the plan with those parameters beside the current one (nothing runs)
:bach whatif profile <h100|default|FILE> <expr>   the plan under another machine's profile beside the current one
:bach whatif profile h100:4 <expr>   the plan on four GPUs of that profile beside the plan on one
:bach breakdown                 where the time of the last evaluations went: compute, copies, allocation, overhead
:bach graph <expr>              the placement graph of a value: ops coloured by device, transfers with bytes
:bach panel [expr]              sliders for the cost model and policy; a value's plan, timeline and graph redrawn as they move
:bach vars [live]               the session's values: shape, dtype, bytes, computed or pending, where each lives, its cell (live: a table redrawn before each cell)
:bach timing                    under each cell, where its time went: compile (cargo, rustc, link), types, run, kernel (again: off)
:bach rebuild                   in a `:dep` cell: add the crate even if it rebuilds loaded crates (the session restarts)
In Rust: value.explain()?, value.on(Device::Cpu | Device::Gpu | Device::Auto | Device::gpu(K)).
evcxr's own commands (:dep, :vars, :help ...) work as usual.
";

/// Where `:bach vars` puts the session's variables, filled in by [`expand_with`].
const VARS: &str = "\u{1e}BACH_VARS\u{1e}";
const VARS_LIVE: &str = "\u{1e}BACH_LIVE_VARS\u{1e}";

struct Command {
    name: &'static str,
    args: &'static str,
    /// Rust for the arguments; `None` when the arguments are wrong.
    rust: fn(&str) -> Option<String>,
}

const COMMANDS: &[Command] = &[
    Command { name: "help", args: "", rust: |_| Some(format!("print!({HELP:?});")) },
    Command { name: "devices", args: "", rust: |_| Some(magic::SHOW_DEVICES.into()) },
    Command { name: "config", args: "", rust: |_| Some(magic::SHOW_CONFIG.into()) },
    Command { name: "plan", args: "<expr>", rust: |a| (!a.is_empty()).then(|| magic::show_plan(a)) },
    Command {
        name: "trace",
        args: "[last | keep <N> | export [last] <FILE.json>]",
        rust: |a| {
            if let Some(file) = a.strip_prefix("export ") {
                let file = file.trim();
                return match file.strip_prefix("last ") {
                    Some(f) if !f.trim().is_empty() => Some(magic::export_trace("last", f.trim())),
                    _ => (!file.is_empty() && file != "last").then(|| magic::export_trace("", file)),
                };
            }
            match a.strip_prefix("keep") {
                Some(n) => n.trim().parse::<usize>().ok().map(magic::set_trace_keep),
                None => matches!(a, "" | "last").then(|| magic::show_trace(a)),
            }
        },
    },
    Command {
        name: "chart",
        args: "<full|compact|auto [TIME]>",
        rust: |a| {
            let mut w = a.split_whitespace();
            let ok = match (w.next(), w.next(), w.next()) {
                (Some("full" | "compact" | "auto"), None, _) => true,
                (Some("auto"), Some(t), None) => is_time(t),
                _ => false,
            };
            ok.then(|| magic::set_chart(a))
        },
    },
    Command { name: "memory", args: "[size|none]", rust: |a| Some(if a.is_empty() { magic::SHOW_MEMORY.into() } else { magic::set_memory(a) }) },
    Command { name: "explain", args: "<expr>", rust: |a| (!a.is_empty()).then(|| magic::show_explain(a)) },
    Command { name: "policy", args: "<optimal|greedy|threshold|cpu>", rust: |a| matches!(a, "optimal" | "greedy" | "threshold" | "cpu").then(|| magic::set_policy(a)) },
    Command { name: "rebuild", args: "", rust: |a| a.is_empty().then(String::new) },
    // The kernel's own toggle (kernel/src/stages.rs): nothing for the cells' process to run.
    Command { name: "timing", args: "", rust: |a| a.is_empty().then(String::new) },
    Command {
        name: "cell",
        args: "<cpu|gpu|auto|gpu:K|cuda:K>",
        rust: |a| {
            let numbered = |p: &str| a.strip_prefix(p).is_some_and(|k| !k.is_empty() && k.bytes().all(|b| b.is_ascii_digit()));
            (matches!(a, "cpu" | "gpu" | "auto") || numbered("gpu:") || numbered("device:") || numbered("cuda:")).then(|| magic::force_cell(a))
        },
    },
    Command { name: "cost", args: "[set <path> = <value> | reset | profile <h100|default|FILE>]", rust: cost },
    Command { name: "calibrate", args: "", rust: |a| a.is_empty().then(|| magic::CALIBRATE.into()) },
    Command { name: "whatif", args: "<path> = <value> ... <expr> | profile <h100|default|FILE>[:N] <expr>", rust: whatif },
    Command { name: "breakdown", args: "", rust: |a| a.is_empty().then(|| magic::SHOW_BREAKDOWN.into()) },
    Command { name: "graph", args: "<expr>", rust: |a| (!a.is_empty()).then(|| magic::show_graph(a)) },
    Command { name: "panel", args: "[expr]", rust: |a| Some(if a.is_empty() { magic::MODEL_PANEL.into() } else { magic::panel(a) }) },
    // The variables are filled in by `expand_with` (the kernel knows them).
    Command {
        name: "vars",
        args: "[live]",
        rust: |a| match a {
            "" => Some(VARS.into()),
            "live" => Some(VARS_LIVE.into()),
            _ => None,
        },
    },
];

/// Whether a variable of this type (as evcxr reports it) is a Bach array: `Array<..>`,
/// `Array1<..>` .. `Array6<..>`, `ArrayD<..>` (as declared), or `ArrayBase<bach::OwnedRepr<..>,
/// ..>` (as inferred), with or without `bach::`. (ndarray's own arrays report as
/// `ndarray::..::ArrayBase<ndarray::OwnedRepr<..>, ..>`, or `ArrayBase<OwnedRepr<..>, ..>`.)
fn is_bach_array(ty: &str) -> bool {
    let t = ty.trim();
    let t = t.strip_prefix("bach::").unwrap_or(t);
    if let Some(kind) = t.strip_prefix("ArrayBase<") {
        return kind.starts_with("bach::OwnedRepr<");
    }
    let Some(rest) = t.strip_prefix("Array") else { return false };
    let rest = rest.strip_prefix(|c: char| ('0'..='6').contains(&c) || c == 'D').unwrap_or(rest);
    rest.starts_with('<')
}

/// [`expand`], with the session's variables (name, type) for `:bach vars`.
pub fn expand_with(code: &str, variables: &[(String, String)]) -> Result<String, String> {
    let rust = expand(code)?;
    let Some((at, live)) = [(VARS, false), (VARS_LIVE, true)].iter().find_map(|(p, live)| rust.find(p).map(|at| (at, *live))) else { return Ok(rust) };
    // A variable the cell uses before `:bach vars` may have been moved (`drop(x);`): naming it
    // would not compile, so it is left out by name (its value, if alive, is listed unnamed).
    let before = &rust[..at];
    let used = |name: &str| {
        before.match_indices(name).any(|(i, _)| {
            let ident = |c: char| c.is_alphanumeric() || c == '_';
            !before[..i].ends_with(ident) && !before[i + name.len()..].starts_with(ident)
        })
    };
    let mut named: Vec<&str> = variables.iter().filter(|(n, t)| is_bach_array(t) && n.chars().all(|c| c.is_alphanumeric() || c == '_')).map(|(n, _)| n.as_str()).collect();
    named.sort();
    let (left_out, named): (Vec<&str>, Vec<&str>) = named.into_iter().partition(|n| used(n));
    let placeholder = if live { VARS_LIVE } else { VARS };
    Ok(rust.replacen(placeholder, &magic::show_vars(&named, &left_out, live), 1))
}

/// `20ms`, `1.5s`, `300us`, `0.01`: a time `:bach chart auto` takes.
fn is_time(t: &str) -> bool {
    let num = ["ms", "us", "ns", "s"].iter().find_map(|u| t.strip_suffix(u)).unwrap_or(t);
    num.trim().parse::<f64>().is_ok_and(|v| v.is_finite() && v >= 0.0)
}

/// `:bach whatif`: `profile <name|FILE> <expr>`, or `path = value` pairs (values without
/// spaces: `5GB/s`, `3.4us`) followed by the expression.
fn whatif(args: &str) -> Option<String> {
    if let Some(rest) = args.strip_prefix("profile").filter(|r| r.starts_with(char::is_whitespace)) {
        let rest = rest.trim_start();
        let (name, expr) = rest.split_once(char::is_whitespace)?;
        let expr = expr.trim();
        return (!expr.is_empty()).then(|| magic::whatif_profile(name, expr));
    }
    let mut settings = Vec::new();
    let mut rest = args.trim_start();
    loop {
        let path_len = rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_' || c == '.')).unwrap_or(rest.len());
        let (path, after) = rest.split_at(path_len);
        let Some(value_start) = after.trim_start().strip_prefix('=') else { break };
        if !path.contains('.') || value_start.starts_with('=') {
            break;
        }
        let value_start = value_start.trim_start();
        let value_len = value_start.find(char::is_whitespace).unwrap_or(value_start.len());
        let (value, after) = value_start.split_at(value_len);
        if value.is_empty() {
            return None;
        }
        settings.push((path, value));
        rest = after.trim_start();
    }
    (!settings.is_empty() && !rest.is_empty()).then(|| magic::whatif(&settings, rest))
}

/// `:bach cost ...`: show, set one parameter, reset, or load a profile.
fn cost(args: &str) -> Option<String> {
    let (sub, rest) = args.split_once(char::is_whitespace).unwrap_or((args, ""));
    let rest = rest.trim();
    match sub {
        "" => Some(magic::SHOW_COST.into()),
        "set" if rest.contains('=') => Some(magic::set_cost(rest)),
        "reset" if rest.is_empty() => Some(magic::RESET_COST.into()),
        "profile" if !rest.is_empty() => Some(magic::use_cost_profile(rest)),
        _ => None,
    }
}

/// Replace every `:bach` line of `code` by its Rust line. Errors name the bad line.
pub fn expand(code: &str) -> Result<String, String> {
    let mut out = String::with_capacity(code.len());
    for line in code.lines() {
        let t = line.trim_start();
        match t.strip_prefix(":bach") {
            Some(rest) if rest.is_empty() || rest.starts_with(char::is_whitespace) => {
                let rest = rest.trim();
                let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
                let name = if name.is_empty() {
                    "help"
                } else if name == "device" {
                    "devices"
                } else {
                    name
                };
                let cmd = COMMANDS.iter().find(|c| c.name == name).ok_or_else(|| format!("unknown command `:bach {name}`\n{HELP}"))?;
                let rust = (cmd.rust)(args.trim()).ok_or_else(|| format!("usage: :bach {} {}", cmd.name, cmd.args))?;
                out.push_str(&rust);
            }
            _ => out.push_str(line),
        }
        out.push('\n');
    }
    Ok(out)
}

/// Completions for a `:bach` line at byte `cursor`: the candidates and where they start.
pub fn complete(code: &str, cursor: usize) -> Option<(Vec<String>, usize)> {
    let line_start = code[..cursor].rfind('\n').map_or(0, |i| i + 1);
    let typed = &code[line_start..cursor];
    let rest = typed.trim_start().strip_prefix(":bach")?;
    let word = rest.trim_start();
    if word.contains(char::is_whitespace) || (!rest.is_empty() && !rest.starts_with(char::is_whitespace)) {
        return None;
    }
    let matches = COMMANDS.iter().filter(|c| c.name.starts_with(word)).map(|c| c.name.to_string()).collect();
    Some((matches, cursor - word.len()))
}

/// The `:bach` magics' calls, one each.
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

/// Every magic's call with example arguments, as `(what, Rust)`, for [`crate::calls::examples`].
pub fn examples() -> Vec<(&'static str, String)> {
    use magic::*;
    vec![
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
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magics_become_one_rust_line_each() {
        let r = expand("let x = 1;\n:bach plan &a + 1.0\n:bach memory 64MiB\nx").unwrap();
        assert_eq!(r, "let x = 1;\nbach::notebook::show_plan(&(&a + 1.0));\nbach::notebook::set_memory(\"64MiB\");\nx\n");
        assert!(expand(":bach").unwrap().contains("print!"));
        assert!(expand(":bach nope").unwrap_err().contains("unknown command `:bach nope`"));
        assert!(expand(":bach plan").unwrap_err().contains("usage: :bach plan <expr>"));
        assert_eq!(expand(":dep x = \"1\"").unwrap(), ":dep x = \"1\"\n");
        assert_eq!(expand(":bachelor").unwrap(), ":bachelor\n");
        assert_eq!(expand(":bach cost set elementwise.cuda.per_element = 2e-11").unwrap(), "bach::notebook::set_cost(\"elementwise.cuda.per_element = 2e-11\");\n");
        assert_eq!(expand(":bach cost").unwrap(), "bach::notebook::show_cost();\n");
        assert_eq!(expand(":bach cost reset").unwrap(), "bach::notebook::reset_cost();\n");
        assert!(expand(":bach cost set x").unwrap_err().contains("usage: :bach cost [set <path> = <value>"));
        assert_eq!(expand(":bach cell gpu").unwrap(), "bach::notebook::force_cell(\"gpu\");\n");
        assert!(expand(":bach cell tpu").unwrap_err().contains("usage: :bach cell <cpu|gpu|auto|gpu:K|cuda:K>"));
        assert_eq!(expand(":bach cell gpu:2").unwrap(), "bach::notebook::force_cell(\"gpu:2\");\n");
        assert!(expand(":bach cell gpu:two").is_err());
        assert_eq!(expand(":bach explain &a * 2.0").unwrap(), "bach::notebook::show_explain(&(&a * 2.0));\n");
        assert_eq!(expand(":bach calibrate").unwrap(), "bach::notebook::calibrate();\n");
        assert_eq!(expand(":bach breakdown").unwrap(), "bach::notebook::show_breakdown();\n");
        assert_eq!(expand(":bach graph &a + 1.0").unwrap(), "bach::notebook::show_graph(&(&a + 1.0));\n");
        assert_eq!(expand(":bach cost profile /tmp/p.json").unwrap(), "bach::notebook::use_cost_profile(\"/tmp/p.json\");\n");
        assert_eq!(expand(":bach trace").unwrap(), "bach::notebook::show_trace(\"\");\n");
        assert_eq!(expand(":bach trace last").unwrap(), "bach::notebook::show_trace(\"last\");\n");
        assert!(expand(":bach trace first").unwrap_err().contains("usage: :bach trace [last | keep <N> | export [last] <FILE.json>]"));
        assert_eq!(expand(":bach trace keep 50").unwrap(), "bach::notebook::set_trace_keep(50);\n");
        assert_eq!(expand(":bach trace export t.json").unwrap(), "bach::notebook::export_trace(\"\", \"t.json\");\n");
        assert_eq!(expand(":bach trace export last /tmp/a b.json").unwrap(), "bach::notebook::export_trace(\"last\", \"/tmp/a b.json\");\n");
        assert!(expand(":bach trace export").is_err() && expand(":bach trace export last").is_err());
        assert!(expand(":bach trace keep many").is_err());
        assert_eq!(expand(":bach memory").unwrap(), "bach::notebook::show_memory();\n");
        assert_eq!(expand(":bach rebuild").unwrap(), "\n");
        assert_eq!(expand(":bach timing").unwrap(), "\n");
        assert_eq!(expand(":bach chart full").unwrap(), "bach::notebook::set_chart(\"full\");\n");
        assert_eq!(expand(":bach chart auto 20ms").unwrap(), "bach::notebook::set_chart(\"auto 20ms\");\n");
        for bad in [":bach chart", ":bach chart always", ":bach chart auto soon", ":bach chart auto -1ms", ":bach chart full 2ms"] {
            assert!(expand(bad).unwrap_err().contains("usage: :bach chart <full|compact|auto [TIME]>"), "{bad}");
        }
    }

    #[test]
    fn whatif_takes_settings_then_an_expression_or_a_profile() {
        assert_eq!(
            expand(":bach whatif elementwise.cuda.per_element = 2e-11 transfer.h2d.bandwidth=5GB/s call").unwrap(),
            "bach::notebook::whatif(&[(\"elementwise.cuda.per_element\", \"2e-11\"), (\"transfer.h2d.bandwidth\", \"5GB/s\")], &(call));\n"
        );
        assert_eq!(expand(":bach whatif profile h100 &x * 2.0").unwrap(), "bach::notebook::whatif_profile(\"h100\", &(&x * 2.0));\n");
        // A comparison is an expression, not a setting.
        assert!(expand(":bach whatif a.b == c").unwrap_err().contains("usage: :bach whatif"));
        assert!(expand(":bach whatif math.cpu.per_element = 1e-9").unwrap_err().contains("usage"), "an expression is needed");
        assert!(expand(":bach whatif profile h100").unwrap_err().contains("usage"));
        assert!(expand(":bach whatif x").unwrap_err().contains("usage"), "a setting is needed");
    }

    #[test]
    fn panel_and_vars() {
        assert_eq!(expand(":bach panel &a * 2.0").unwrap(), "bach::notebook::panel(&(&a * 2.0));\n");
        assert_eq!(expand(":bach panel").unwrap(), "bach::notebook::model_panel();\n");
        let vars = [
            ("x", "Array<f64, Ix1>"),
            ("m", "bach::Array2<f32>"),
            ("n", "usize"),
            ("nd", "ArrayBase<OwnedRepr<f64>, Ix1>"),
            ("d", "ArrayD<f64>"),
            ("w", "Arrays<f64>"),
            ("nd2", "ndarray::prelude::ArrayBase<ndarray::OwnedRepr<f64>, Dim<[usize; 1]>>"),
            ("b", "ArrayBase<bach::OwnedRepr<f64>, Dim<[usize; 1]>>"),
        ];
        let vars: Vec<(String, String)> = vars.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect();
        assert_eq!(
            expand_with(":bach vars", &vars).unwrap(),
            "bach::notebook::show_vars(&[(\"b\", &b.lazy()), (\"d\", &d.lazy()), (\"m\", &m.lazy()), (\"x\", &x.lazy())], &[]);\n"
        );
        assert_eq!(expand_with(":bach vars", &[]).unwrap(), "bach::notebook::show_vars(&[], &[]);\n");
        // Used before it in the cell (maybe moved): left out by name; `xs` is not `x`.
        assert_eq!(
            expand_with("drop(x);\nlet xs = 1;\n:bach vars", &vars).unwrap(),
            "drop(x);\nlet xs = 1;\nbach::notebook::show_vars(&[(\"b\", &b.lazy()), (\"d\", &d.lazy()), (\"m\", &m.lazy())], &[\"x\"]);\n"
        );
        assert!(expand(":bach vars x").unwrap_err().contains("usage: :bach vars [live]"));
        assert_eq!(expand_with(":bach vars live", &vars[..1]).unwrap(), "bach::notebook::show_vars_live(&[(\"x\", &x.lazy())], &[]);\n");
    }

    #[test]
    fn magic_names_complete() {
        let (m, at) = complete(":bach pl", 8).unwrap();
        assert_eq!(m, vec!["plan"]);
        assert_eq!(at, 6);
        assert!(complete("let x", 5).is_none());
        assert!(complete(":bach plan a", 12).is_none());
    }
}

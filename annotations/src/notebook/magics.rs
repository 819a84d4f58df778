//! The `:bach` magics' work in the Rust process: each magic line becomes a call of one of
//! these (`kernel/src/magics.rs` writes the calls). What they show goes out through the
//! display protocol of [`super`].

use std::fmt::Write as _;

use super::protocol::{display, pre, show_chart, show_text};
use super::*;
use bach_runtime::chart::truncate;

/// `:bach plan <expr>`: the plan for a value, without running it.
pub fn show_plan<A: Element, D: ndarray::Dimension>(a: &Array<A, D>) {
    if a.is_evaluated() {
        let place = a.location().unwrap_or_else(|| "the host".into());
        println!("already computed: the value ({}, shape {:?}) is on {place}; nothing left to plan (`:bach trace` shows how it was computed)", A::DTYPE, a.shape());
        if let Some(how) = computed_by(a) {
            println!("{how}");
        }
        return;
    }
    match a.plan() {
        Ok(p) => show_text(&p.to_string()),
        Err(e) => panic!("{e}"),
    }
}

/// `:bach explain <expr>`: why each op of a value's plan runs where it runs.
pub fn show_explain<A: Element, D: ndarray::Dimension>(a: &Array<A, D>) {
    if let Some(how) = a.is_evaluated().then(|| computed_by(a)).flatten() {
        println!("{how}");
    }
    match a.explain() {
        Ok(e) => show_text(&e.to_string()),
        Err(e) => panic!("{e}"),
    }
}

/// For a computed value: the evaluation that computed it, and why it was asked for when the
/// code said (ndarray code touching its values, a reduction returning a number).
fn computed_by<A: Element, D: ndarray::Dimension>(a: &Array<A, D>) -> Option<String> {
    let lazy = a.lazy();
    let s = lazy.session();
    let trace = s.trace();
    let e = trace.evals().rev().find(|e| e.plans.iter().any(|p| p.step_of(lazy.id()).is_some()))?;
    let why = e.reason.as_deref().map_or_else(|| "asked for by the cell (displayed or evaluated)".to_string(), str::to_string);
    Some(format!("computed by eval {} (cell {}): {why}", e.eval, e.cell))
}

/// Evaluations `:bach cost` and the charts look back over.
const RECENT: usize = 12;

/// `:bach cost`: the cost model, for the kinds of device this session has, then how far its
/// predictions were from the last evaluations (text and a predicted-vs-actual chart).
pub fn show_cost() {
    let s = session::global();
    let kinds: Vec<bach_runtime::DeviceKind> = s.devices().profiles().iter().map(|p| p.kind).collect();
    let mut text = s.config().cost.table(&kinds);
    let _ = writeln!(
        text,
        "change one with `:bach cost set <path> = <value>`; `:bach cost reset` restores the model the session started with; `:bach calibrate` measures this machine; paths:\n{}",
        bach_runtime::cost::paths()
    );
    let trace = s.trace();
    let evals: Vec<&bach_runtime::trace::EvalTrace> = trace.evals().filter(|e| !e.stages.is_empty()).collect();
    let evals = &evals[evals.len().saturating_sub(RECENT)..];
    if evals.is_empty() {
        text.push_str("\nno evaluations yet: residuals (predicted vs actual per stage) appear here after the first");
        show_text(&text);
        return;
    }
    let since = s.cost_model_since();
    let _ = write!(text, "\n{}", residuals_text(evals, &s.devices().profiles(), since));
    show_text(&text);
    show_chart(bach_runtime::chart::predicted_vs_actual_svg(evals, &s.devices().profiles(), since));
}

/// Per stage of `evals`: predicted, actual, their ratio; then the median and worst error and
/// what to do when the model is off. Evaluations up to `since` were planned with an earlier
/// model: marked, and left out of the verdict when there are later ones.
fn residuals_text(evals: &[&bach_runtime::trace::EvalTrace], devices: &[bach_runtime::DeviceProfile], since: u64) -> String {
    use bach_runtime::cost::seconds;
    let mut out = String::new();
    let _ = writeln!(out, "residuals of the last {} evaluation(s), per stage (ratio = actual / predicted):", evals.len());
    let _ = writeln!(out, "  {:<6} {:<5} {:<44} {:<18} {:>11} {:>11} {:>7}", "eval", "cell", "stage", "device", "predicted", "actual", "ratio");
    let current = evals.iter().any(|e| e.eval > since);
    let mut errors = Vec::new();
    for e in evals {
        let earlier = e.eval <= since;
        for st in &e.stages {
            let device = devices.get(st.device.0 as usize).map_or_else(|| format!("device {}", st.device.0), |d| d.name.clone());
            let r = st.ratio();
            if !(earlier && current) {
                errors.push((r.max(1.0 / r.max(1e-12)), st.label(), e.eval));
            }
            let off = if !(0.5..=2.0).contains(&r) { "  <- off by more than 2x" } else { "" };
            let flag = if earlier { format!("{off}  (an earlier model's)") } else { off.to_string() };
            let _ = writeln!(
                out,
                "  {:<6} {:<5} {:<44} {:<18} {:>11} {:>11} {:>6.2}x{flag}",
                e.eval,
                e.cell,
                truncate(&st.label(), 44),
                truncate(&device, 18),
                seconds(st.predicted_s),
                seconds(st.actual_s()),
                r
            );
        }
    }
    errors.sort_by(|a, b| a.0.total_cmp(&b.0));
    if let (Some(mid), Some(worst)) = (errors.get(errors.len() / 2), errors.last()) {
        let whose = match (since > 0, current) {
            (true, true) => " (the evaluations since the model last changed)",
            (true, false) => " (the earlier model's: no evaluation since the model last changed)",
            _ => "",
        };
        let _ = writeln!(out, "median error {:.2}x, worst {:.2}x ({} of eval {}){whose}", mid.0, worst.0, worst.1, worst.2);
        if worst.0 > 2.0 && current {
            let _ = writeln!(out, "the model is off by more than 2x somewhere: `:bach calibrate` measures this machine and fixes its figures");
        }
    }
    out
}

/// `:bach calibrate`: measure this machine (under 30 s), plan with the result from now on,
/// and save it for the next sessions here.
pub fn calibrate() {
    println!("calibrating: timing each op family on each device (about 5-15 s) ...");
    match crate::calibrate() {
        Ok(c) => show_text(&c.to_string()),
        Err(e) => panic!("calibration failed: {e}"),
    }
}

/// `:bach whatif <path> = <value> ... <expr>`: the value's plan with those parameters beside
/// the current one, as text and two predicted timelines; nothing runs.
pub fn whatif<A: Element, D: ndarray::Dimension>(settings: &[(&str, &str)], a: &Array<A, D>) {
    match crate::whatif::whatif(a, settings) {
        Ok(w) => show_whatif(&w),
        Err(e) => panic!("{e}"),
    }
}

/// `:bach whatif profile <h100|default|FILE> <expr>`.
pub fn whatif_profile<A: Element, D: ndarray::Dimension>(profile: &str, a: &Array<A, D>) {
    match crate::whatif::whatif_profile(a, profile) {
        Ok(w) => show_whatif(&w),
        Err(e) => panic!("{e}"),
    }
}

impl crate::whatif::WhatIf {
    /// How evcxr shows it when it ends a cell: the comparison as text, the two predicted
    /// timelines as charts (here, above the what-if itself, which returns values only).
    pub fn evcxr_display(&self) {
        show_whatif(self);
    }
}

/// A what-if as text and its two predicted timelines.
pub(crate) fn show_whatif(w: &crate::whatif::WhatIf) {
    show_text(&w.to_string());
    let (now, changed) = w.charts();
    show_chart(now);
    show_chart(changed);
}

/// `:bach breakdown`: where the time of the last evaluations went (compute per device,
/// copies each way, allocation, merge, runtime overhead), one bar per evaluation.
pub fn show_breakdown() {
    let s = session::global();
    let trace = s.trace();
    let evals: Vec<&bach_runtime::trace::EvalTrace> = trace.evals().collect();
    if evals.is_empty() {
        println!("nothing has been evaluated yet in this session");
        return;
    }
    show_chart(bach_runtime::chart::breakdown_svg(&evals[evals.len().saturating_sub(RECENT)..], &s.devices().profiles()));
}

/// `:bach graph <expr>`: the placement graph of a value: its plan when it is pending, the plan
/// that computed it when it was evaluated.
pub fn show_graph<A: Element, D: ndarray::Dimension>(a: &Array<A, D>) {
    show_graph_of(&a.lazy());
}

fn show_graph_of(lazy: &Lazy) {
    let s = lazy.session();
    let plan = match lazy.plan() {
        Ok(p) if !p.steps.is_empty() => p,
        Ok(p) => {
            // Evaluated: the plan of the evaluation that computed it, from the trace.
            let trace = s.trace();
            let ran = trace.evals().rev().filter_map(|e| e.plan()).find(|p| p.step_of(lazy.id()).is_some()).cloned();
            match ran {
                Some(r) => r,
                None => p,
            }
        }
        Err(e) => panic!("{e}"),
    };
    show_chart(bach_runtime::chart::placement_graph_svg(&plan));
}

/// `:bach cost set <path> = <value>`: change one parameter; the next display re-plans.
pub fn set_cost(assignment: &str) {
    let Some((path, value)) = assignment.split_once('=') else { panic!("usage: :bach cost set <path> = <value>, e.g. elementwise.cuda.per_element = 2e-11") };
    let s = session::global();
    let mut cost = s.config().cost;
    cost.set(path.trim(), value.trim()).unwrap_or_else(|e| panic!("{e}"));
    s.update_config(|c| c.cost = cost);
    println!("cost model: {} = {}; the next evaluation plans with it", path.trim(), value.trim());
}

/// `:bach cost reset`: the defaults for this session's devices.
pub fn reset_cost() {
    let s = session::global();
    let cost = s.default_cost();
    println!("cost model: {}", cost.source);
    s.update_config(|c| c.cost = cost);
}

/// `:bach cost profile <h100|default|FILE>`: plan with a shipped profile (a prediction for
/// the machine it was measured on), this machine's uncalibrated defaults, or a profile file
/// (one calibrated on another machine, say).
pub fn use_cost_profile(name: &str) {
    let s = session::global();
    let cost = crate::whatif::load_profile(name, &s.devices().profiles()).unwrap_or_else(|e| panic!("{e}"));
    println!("cost model: {}", cost.source);
    s.update_config(|c| c.cost = cost);
}

/// `:bach cell <cpu|gpu|auto|gpu:K|cuda:K>`: where the ops this cell creates from here on run
/// (`gpu:K`, also `device:K`: accelerator number K as `:bach devices` lists it, alone).
pub fn force_cell(device: &str) {
    let s = session::global();
    // cuda:K: the session's first accelerator on CUDA GPU K (`:bach devices` names them).
    if let Some(k) = device.trim().strip_prefix("cuda:") {
        let k: usize = k.parse().unwrap_or_else(|_| panic!("`{device}`: cuda:K takes a CUDA GPU's ordinal (0, 1, ...)"));
        let Some(d) = s.devices().accelerators().find(|d| d.cuda_ordinal() == Some(k)).map(|d| d.profile().id) else {
            panic!("this session has no accelerator on cuda:{k} (`:bach devices` lists its devices; gpu:K picks one by its number there)")
        };
        s.force_cell_device(d);
        println!("this cell's ops: on {} (cuda:{k}) where they can run there", s.devices().label(d));
        return;
    }
    let named = device.trim().strip_prefix("gpu:").or_else(|| device.trim().strip_prefix("device:"));
    if let Some(k) = named {
        let k: u8 = k.parse().unwrap_or_else(|_| panic!("`{device}`: gpu:K takes an accelerator's number as `:bach devices` lists it (1, 2, ...)"));
        let known = s.devices().accelerators().any(|d| d.profile().id.0 == k);
        s.force_cell_device(bach_runtime::DeviceId(k));
        if known {
            println!("this cell's ops: on {} where they can run there", s.devices().label(bach_runtime::DeviceId(k)));
        } else {
            println!("this cell's ops: asked for accelerator {k}, which this session does not have (`:bach devices`): they run on the CPU");
        }
        return;
    }
    let forced = match device.trim() {
        "cpu" => Some(false),
        "gpu" | "accelerator" => Some(true),
        "auto" => None,
        other => panic!("unknown device `{other}` for `:bach cell` (cpu, gpu, auto, gpu:K or cuda:K)"),
    };
    s.force_cell(forced);
    println!(
        "{}",
        match forced {
            Some(true) => "this cell's ops: on the accelerator where they can run there",
            Some(false) => "this cell's ops: on the CPU",
            None => "this cell's ops: where the policy puts them",
        }
    );
}

/// `:bach devices`: what was found, and why there is no GPU when there is none.
pub fn show_devices() {
    let s = session::global();
    print!("{}", s.devices().report());
    for p in s.devices().profiles().iter().skip(1) {
        if let Some(m) = s.devices().get(p.id).and_then(|d| d.memory()) {
            println!("{}: {} of {} in use", p.name, bach_runtime::units::bytes(m.used as usize), bach_runtime::units::bytes(m.capacity as usize));
        }
    }
    let cfg = s.config();
    println!("policy {}, accelerator memory cap {}", cfg.policy, cfg.memory_cap.map_or("none".to_string(), |b| bach_runtime::units::bytes(b as usize)));
}

/// `:bach config`: the session's settings, then every `BACH_*` switch of the runtime with its
/// value now, and whether it is read once per process or at each use.
pub fn show_config() {
    let cfg = session::global().config();
    println!(
        "policy {}, small ops at once up to {} elements, accelerator memory cap {}",
        cfg.policy,
        cfg.eager_max_elements,
        cfg.memory_cap.map_or("none".to_string(), |b| bach_runtime::units::bytes(b as usize))
    );
    print!("{}", bach_runtime::Knobs::from_env());
}

/// `:bach trace`: the session's timeline so far, evaluation by evaluation (cells labelled);
/// `:bach trace last`: the most recent evaluation's timeline alone.
pub fn show_trace(which: &str) {
    let s = session::global();
    let trace = s.trace();
    let evals: Vec<_> = trace.evals().collect();
    let Some(last) = evals.last() else {
        println!("nothing has been evaluated yet in this session");
        return;
    };
    if which == "last" {
        let why = last.reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default();
        println!("eval {} (cell {}): {} events, {} pieces, {:.3} ms{why}", last.eval, last.cell, last.events.len(), last.pieces, (last.end - last.start).as_secs_f64() * 1e3);
        show_chart(bach_runtime::chart::timeline_svg(last, &s.devices().profiles()));
        return;
    }
    let mut text = String::new();
    let totals = trace.totals();
    if totals.dropped > 0 {
        let _ = writeln!(
            text,
            "the trace keeps the last {} evaluations (`:bach trace keep N` changes it); {} of {} since the session started are no longer shown ({:.3} s, {} pieces in all)",
            trace.keep(),
            totals.dropped,
            totals.evals,
            totals.seconds,
            totals.pieces
        );
    }
    for e in &evals {
        let why = e.reason.as_deref().map(|r| format!(" ({r})")).unwrap_or_default();
        let _ = writeln!(text, "eval {} (cell {}): {} events, {} pieces, {:.3} ms{why}", e.eval, e.cell, e.events.len(), e.pieces, (e.end - e.start).as_secs_f64() * 1e3);
    }
    show_text(&text);
    show_chart(bach_runtime::chart::session_timeline_svg(&evals, &s.devices().profiles()));
}

/// `:bach trace export [last] FILE`: the session's timeline (or the latest evaluation's) as a
/// Chrome trace, which Perfetto and chrome://tracing open.
pub fn export_trace(which: &str, path: &str) {
    let s = session::global();
    let trace = s.trace();
    let evals: Vec<_> = trace.evals().collect();
    let chosen = if which == "last" { &evals[evals.len().saturating_sub(1)..] } else { &evals[..] };
    if chosen.is_empty() {
        println!("nothing has been evaluated yet in this session: nothing to export");
        return;
    }
    let events: usize = chosen.iter().map(|e| e.events.len()).sum();
    let json = bach_runtime::chart::chrome_trace(chosen, &s.devices().profiles());
    if let Err(e) = std::fs::write(path, &json) {
        panic!("{}", BachError::invalid("trace export", format!("cannot write {path}: {e}")));
    }
    let dropped = trace.totals().dropped;
    let note = if which != "last" && dropped > 0 { format!(" ({dropped} earlier evaluations are no longer kept: `:bach trace keep N`)") } else { String::new() };
    println!("wrote {path}: {} evaluation(s), {events} events, {} (open it in ui.perfetto.dev or chrome://tracing){note}", chosen.len(), bach_runtime::units::bytes(json.len()));
}

/// Parse a size such as `64MiB`, `1.5GB`, `4096`.
pub fn parse_size(s: &str) -> Result<u64, BachError> {
    bach_runtime::units::parse_bytes(s).map_err(|e| BachError::invalid("memory", e))
}

/// `:bach trace keep N`: the trace keeps the last `n` evaluations.
pub fn set_trace_keep(n: usize) {
    let s = session::global();
    let mut t = s.trace();
    t.set_keep(n);
    println!("the trace keeps the last {} evaluations (it holds {} now)", t.keep(), t.evals().count());
}

/// `:bach memory`: what the session holds.
pub fn show_memory() {
    let s = session::global();
    let m = s.memory();
    let bytes = bach_runtime::units::bytes;
    let mut text = format!("graph: {} nodes ({} computed, {} pending)\n", m.nodes, m.nodes - m.pending, m.pending);
    let _ = writeln!(text, "values cached on nodes: {} in host memory", bytes(m.host_bytes));
    for (device, b) in &m.device_bytes {
        let _ = writeln!(text, "values cached on {device}: {}", bytes(*b));
    }
    let _ = writeln!(
        text,
        "trace: {} evaluations kept of {} (at most {}; `:bach trace keep N`), {} events (at most {})",
        m.trace_kept,
        m.trace_totals.evals,
        m.trace_keep,
        m.trace_events,
        bach_runtime::trace::MAX_EVENTS
    );
    let cap = s.config().memory_cap;
    let _ = writeln!(text, "accelerator memory cap: {}", cap.map_or("none".to_string(), |b| bach_runtime::units::bytes(b as usize)));
    print!("{text}");
}

/// `:bach memory <size|none>`: cap the accelerator memory the planner may use.
pub fn set_memory(size: &str) {
    let cap = if size.trim() == "none" { None } else { Some(parse_size(size).unwrap_or_else(|e| panic!("{e}"))) };
    session::global().update_config(|c| c.memory_cap = cap);
    println!("accelerator memory cap: {}", cap.map_or("none".to_string(), |b| bach_runtime::units::bytes(b as usize)));
}

/// `:bach policy <name>`.
pub fn set_policy(name: &str) {
    let p: bach_runtime::Policy = name.trim().parse().unwrap_or_else(|e: String| panic!("{e}"));
    session::global().update_config(|c| c.policy = p);
    println!("placement policy: {p}");
}

/// `:bach vars`: the session's values, named ones first (the kernel passes each variable
/// holding a Bach array), then every other value the graph keeps: shape, dtype, bytes,
/// computed or pending, where it lives, the cell that made it; then what each device holds.
/// `left_out`: variables the cell used before `:bach vars` (maybe moved), not named.
pub fn show_vars(named: &[(&str, &Lazy)], left_out: &[&str]) {
    let s = session::global();
    let mut text = vars_text(&s, &ids(named));
    if !left_out.is_empty() {
        let _ = write!(text, "\n(not named here, as this cell used them before `:bach vars`: {}; a cell of its own names them)", left_out.join(", "));
    }
    show_text(&text);
}

fn ids(named: &[(&str, &Lazy)]) -> Vec<(String, u64)> {
    named.iter().map(|(n, l)| (n.to_string(), l.id())).collect()
}

/// The live table of `:bach vars live`: the names it was given (by node id: a handle would
/// keep the values alive) and its HTML widget, redrawn before each cell and by its button.
static LIVE: std::sync::Mutex<Option<LiveTable>> = std::sync::Mutex::new(None);
type LiveTable = (Vec<(String, u64)>, super::widgets::Widget);

/// `:bach vars live`: the table as a widget that redraws itself before each cell runs (so it
/// shows what the cells before did) and when its Refresh button is clicked. Values made
/// later are listed without names; `:bach vars live` again names them.
pub fn show_vars_live(named: &[(&str, &Lazy)], left_out: &[&str]) {
    use super::widgets::Widget;
    let s = session::global();
    let names = ids(named);
    let text = vars_text(&s, &names);
    let made = (|| {
        let table = Widget::html(&pre(&text))?;
        let refresh = Widget::button("Refresh")?;
        refresh.on_click(|_| refresh_live_vars());
        Ok::<_, BachError>((table.clone(), Widget::vbox(&[refresh, table])?))
    })();
    match made {
        Ok((table, root)) => {
            *LIVE.lock().unwrap_or_else(|e| e.into_inner()) = Some((names, table));
            display(&root.bundle(&text));
        }
        Err(e) => show_text(&format!("{text}\n(no live table: {e})")),
    }
    if !left_out.is_empty() {
        println!("(not named in the table, as this cell used them before `:bach vars live`: {})", left_out.join(", "));
    }
}

/// Redraw the live table, if there is one (before each cell, and on its button).
pub(crate) fn refresh_live_vars() {
    let live = LIVE.lock().unwrap_or_else(|e| e.into_inner()).clone();
    if let Some((names, table)) = live {
        let s = session::global();
        let when = format!("as of cell {}", s.cell());
        let _ = table.set_quietly(vec![("value", pre(&format!("{}({when})", vars_text(&s, &names))).into())]);
    }
}

fn vars_text(s: &Session, named: &[(String, u64)]) -> String {
    let nodes = s.nodes();
    let bytes = bach_runtime::units::bytes;
    let place = |n: &bach_runtime::NodeInfo| match n.location {
        None => "-".to_string(),
        Some(bach_runtime::CPU) => "host".to_string(),
        // With several accelerators the number comes first: the column is narrow.
        Some(d) if s.devices().accelerators().count() > 1 => format!("[{}] {}", d.0, s.devices().get(d).map_or_else(String::new, |x| x.profile().name.clone())),
        Some(d) => s.devices().label(d),
    };
    let mut out = format!("{:<14} {:<6} {:<14} {:<22} {:>10} {:<8} {:<22} {:>5}\n", "variable", "node", "op", "dtype[shape]", "bytes", "state", "lives on", "cell");
    let mut listed = std::collections::HashSet::new();
    let row = |name: &str, n: &bach_runtime::NodeInfo| {
        let state = if n.evaluated { "computed" } else { "pending" };
        format!(
            "{:<14} #{:<5} {:<14} {:<22} {:>10} {:<8} {:<22} {:>5}\n",
            truncate(name, 14),
            n.id,
            truncate(&n.op, 14),
            truncate(&n.meta.to_string(), 22),
            bytes(n.meta.bytes()),
            state,
            truncate(&place(n), 22),
            n.cell
        )
    };
    for (name, id) in named {
        match nodes.iter().find(|n| n.id == *id) {
            Some(n) => {
                out.push_str(&row(name, n));
                listed.insert(n.id);
            }
            None => {
                let _ = writeln!(out, "{name:<14} #{id:<5} dropped: its value is freed");
            }
        }
    }
    // (Scalars of expressions, `2.0` in `&x * 2.0`, are not worth a line each.)
    let others: Vec<&bach_runtime::NodeInfo> = nodes.iter().filter(|n| n.evaluated && !listed.contains(&n.id) && !(n.op == "scalar" && n.meta.shape.is_empty())).collect();
    for n in &others {
        // Why a value no variable names is still here: a pending value needs it.
        let users: Vec<String> = nodes.iter().filter(|u| !u.evaluated && u.args.contains(&n.id)).map(|u| format!("#{}", u.id)).collect();
        let why = if users.is_empty() { "" } else { "(kept for " };
        let label = if users.is_empty() { String::new() } else { format!("{why}{})", users.join(" ")) };
        out.push_str(&row(&label, n));
    }
    let pending = nodes.iter().filter(|n| !n.evaluated && !listed.contains(&n.id)).count();
    let m = s.memory();
    let _ = writeln!(out, "{} variable(s), {} other computed value(s), {pending} pending op(s) they need; {} nodes in the graph", named.len(), others.len(), m.nodes);
    let _ = writeln!(out, "host memory held by values: {}", bytes(m.host_bytes));
    for d in s.devices().profiles().iter().filter(|d| d.kind != bach_runtime::DeviceKind::Cpu) {
        let label = s.devices().label(d.id);
        let held = m.device_bytes.iter().find(|(n, _)| *n == label).map_or(0, |(_, b)| *b);
        let total = d.memory_bytes.map(|t| format!(" (its memory: {})", bytes(t as usize))).unwrap_or_default();
        let _ = writeln!(out, "values held on {label}: {}{total}", bytes(held));
    }
    if s.devices().profiles().iter().all(|d| d.kind == bach_runtime::DeviceKind::Cpu) {
        out.push_str("no accelerator in this session: every value lives in host memory\n");
    }
    out.push_str("dropping a variable (`drop(x);`) frees its value on every device");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("64MiB").unwrap(), 64 << 20);
        assert_eq!(parse_size("1.5 GB").unwrap(), 1_500_000_000);
        assert_eq!(parse_size("4096").unwrap(), 4096);
        assert!(parse_size("lots").is_err());
        assert!(parse_size("3 parsecs").is_err());
    }

    /// Residuals of evaluations planned with an earlier model are marked and left out of the
    /// verdict once there are later ones: right after `:bach calibrate` the user is not told
    /// to calibrate because of the uncalibrated model's misses.
    #[test]
    fn residuals_judge_the_model_by_the_evaluations_planned_with_it() {
        use bach_runtime::trace::{EvalTrace, StageTime};
        use std::time::Duration;
        let eval = |n: u64, predicted_ms: u64, actual_ms: u64| EvalTrace {
            eval: n,
            cell: n,
            start: Duration::ZERO,
            end: Duration::from_millis(actual_ms),
            pieces: 1,
            events: vec![],
            plans: vec![],
            stages: vec![StageTime {
                stage: Some(0),
                device: bach_runtime::CPU,
                ops: vec!["exp".into()],
                elements: 1000,
                predicted_s: predicted_ms as f64 / 1e3,
                start: Duration::ZERO,
                end: Duration::from_millis(actual_ms),
            }],
            reason: None,
        };
        let devices = [bach_runtime::DeviceProfile::cpu()];
        let (old, new) = (eval(1, 10, 50), eval(2, 10, 12));
        let never_changed = residuals_text(&[&old, &new], &devices, 0);
        assert!(never_changed.contains("worst 5.00x") && never_changed.contains("`:bach calibrate` measures"), "{never_changed}");
        let changed = residuals_text(&[&old, &new], &devices, 1);
        assert!(changed.contains("(an earlier model's)") && changed.contains("worst 1.20x") && !changed.contains("`:bach calibrate` measures"), "{changed}");
        assert!(changed.contains("since the model last changed"), "{changed}");
        let nothing_since = residuals_text(&[&old], &devices, 1);
        assert!(nothing_since.contains("worst 5.00x") && nothing_since.contains("no evaluation since the model last changed"), "{nothing_since}");
    }

    #[test]
    fn vars_list_named_values_and_where_they_live() {
        let s = bach_runtime::Session::new();
        bach_runtime::with_session(&s, || {
            let x = crate::array::Array::from_array(ndarray::Array1::<f64>::linspace(0.0, 1.0, 5000));
            let y = &x * 2.0;
            let z = (&y + 1.0).sum_lazy();
            let text = vars_text(&s, &ids(&[("x", &x.lazy()), ("z", &z.lazy())]));
            assert!(text.contains("x ") && text.contains("f64[5000]") && text.contains("computed") && text.contains("host"), "{text}");
            assert!(text.lines().any(|l| l.starts_with("z ") && l.contains("pending")), "{text}");
            z.to_scalar().unwrap();
            let text = vars_text(&s, &ids(&[("z", &z.lazy())]));
            assert!(text.lines().any(|l| l.starts_with("z ") && l.contains("computed") && l.contains("host")), "{text}");
            drop(y);
        });
    }
}

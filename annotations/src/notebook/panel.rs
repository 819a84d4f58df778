//! The placement panel (`:bach panel [expr]`, [`panel`]): sliders for the figures that decide
//! placement (copy bandwidths each way, the accelerator's and the CPU's rate per element for
//! the common op families, the accelerator's piece size, the memory cap), the policy, the
//! value's device; below them the value's explain table, its predicted timeline and its
//! placement graph, redrawn in place when a control moves (a re-plan: nothing runs). "Run"
//! evaluates the value once, without keeping the result (so it can be planned again), and
//! shows the measured timeline above the prediction for the devices it ran on; "Reset" is
//! `:bach cost reset`; "Save as profile" writes the model as a profile file that `:bach cost
//! profile FILE` loads.
//!
//! A change goes to the session's cost model, as `:bach cost set` does: `:bach cost` shows it
//! and later cells plan with it. Without an accelerator the plans are for a hypothetical
//! H100 beside this machine's CPU (as `:bach whatif`), and Run runs here. A value a control
//! cannot take (a bandwidth of 0, a line in the "set" field that does not parse) is refused
//! with a message in the panel; the model stays as it was and the control goes back.
//!
//! A front end without a widget manager gets the same explain table and chart as text and
//! HTML, and how to change the figures with magics.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use bach_runtime::cost::{seconds, CopyField, OpField, Param, PlannerField};
use bach_runtime::json::Value;
use bach_runtime::trace::EvalTrace;
use bach_runtime::{session, CostModel, DeviceKind, DeviceProfile, Direction, Element, Family, Lazy, MemoryKind, Plan, Policy, Session};

use super::protocol::{display, html_escape, pre, show_text, without_progress};
use super::widgets::Widget;
use crate::array::Array;

/// The hypothetical accelerator panels plan for on a machine without one.
const HYPOTHETICAL: (&str, u64) = ("NVIDIA H100 80GB HBM3", 80 << 30);
const POLICIES: [&str; 4] = ["optimal", "greedy", "threshold", "cpu"];
const DEVICES: [&str; 3] = ["auto", "cpu", "gpu"];

/// The "this value on" choices for `devices`: auto, cpu, gpu, and with several accelerators
/// each by its number (`gpu:2`: that one alone).
fn device_options(devices: &[DeviceProfile]) -> Vec<String> {
    let accelerators: Vec<&DeviceProfile> = devices.iter().filter(|d| d.kind != DeviceKind::Cpu && !d.is_hypothetical()).collect();
    let numbered = if accelerators.len() > 1 { accelerators.iter().map(|d| format!("gpu:{}", d.id.0)).collect() } else { Vec::new() };
    DEVICES.iter().map(|d| d.to_string()).chain(numbered).collect()
}
/// A computed value has no plan left: the panel plans pending ones.
const COMPUTED: &str = "this value is computed already, so nothing is left to plan (`:bach trace last` shows how it ran): open the panel on a value before it is displayed or used";

/// One slider: a cost-model parameter, its value, unit and range from its declaration.
struct Knob {
    label: String,
    param: Param,
}

fn knobs(accel: DeviceKind) -> Vec<Knob> {
    let knob = |label: String, param: Param| Knob { label, param };
    let bandwidth = |direction| Param::copy(direction, MemoryKind::Pageable, accel, CopyField::Bandwidth);
    let mut k = vec![knob("copy in, B/s (h2d)".into(), bandwidth(Direction::H2d)), knob("copy out, B/s (d2h)".into(), bandwidth(Direction::D2h))];
    for (who, kind) in [("GPU", accel), ("CPU", DeviceKind::Cpu)] {
        for f in [Family::Elementwise, Family::Math, Family::Reduce] {
            k.push(knob(format!("{who} {}, s/element", f.name()), Param::op(f, kind, OpField::PerElement)));
        }
    }
    k.push(knob("GPU piece, bytes".into(), Param::Planner(PlannerField::AcceleratorPieceBytes)));
    k
}

/// The panels whose controls work: the last [`KEEP`] opened (each holds its value's graph).
static OPEN: Mutex<Vec<Arc<Panel>>> = Mutex::new(Vec::new());
const KEEP: usize = 8;

struct Panel {
    lazy: Option<Lazy>,
    /// The devices plans are for: the session's, or its CPU and a hypothetical GPU.
    devices: Vec<DeviceProfile>,
    knobs: Vec<(Knob, Widget)>,
    cap: Widget,
    policy: Widget,
    device: Widget,
    /// Its choices ([`device_options`]).
    device_choices: Vec<String>,
    setter: Widget,
    profile: Widget,
    status: Widget,
    explain: Widget,
    predicted: Widget,
    measured: Widget,
    graph: Widget,
    /// Set while the panel moves its own controls (Reset): their observers stay still.
    quiet: AtomicBool,
    /// The last re-plan's time (ms), for the status line and the benchmark.
    last_ms: Mutex<f64>,
}

/// `:bach panel <expr>`: the placement panel for a value (see the module's docs).
pub fn panel<A: Element, D: ndarray::Dimension>(a: &Array<A, D>) {
    show(Some(a.lazy().clone()));
}

/// `:bach panel`: the panel for the cost model alone (no value to plan).
pub fn model_panel() {
    show(None);
}

fn show(lazy: Option<Lazy>) {
    let s = session::global();
    match build(lazy.clone(), &s) {
        Ok((panel, root)) => {
            let (text, html) = panel.fallbacks(&s);
            let mut open = OPEN.lock().unwrap_or_else(|e| e.into_inner());
            if open.len() == KEEP {
                open.remove(0);
            }
            open.push(panel);
            drop(open);
            let mut bundle = root.bundle(&text);
            bundle.push(("text/html", html));
            display(&bundle);
        }
        // No comms (not under the Bach kernel): the same, without controls.
        Err(e) => {
            show_text(&format!("the placement panel needs the Bach kernel's comms ({e}); the same as text:"));
            if let Some(l) = &lazy {
                if let Ok(plan) = s.plan_with(&[l], &s.config().cost, &plan_devices(&s)) {
                    show_text(&plan.explain());
                }
            }
        }
    }
}

/// The session's devices, or its CPU and a hypothetical GPU when it has no accelerator.
fn plan_devices(s: &Session) -> Vec<DeviceProfile> {
    let mut devices = s.devices().profiles();
    if !devices.iter().any(|d| d.kind != DeviceKind::Cpu) {
        devices.push(DeviceProfile::hypothetical_gpu(HYPOTHETICAL.0, HYPOTHETICAL.1));
    }
    devices
}

fn build(lazy: Option<Lazy>, s: &Session) -> bach_runtime::Result<(Arc<Panel>, Widget)> {
    let devices = plan_devices(s);
    let accel = devices.iter().find(|d| d.kind != DeviceKind::Cpu).map_or(DeviceKind::Cuda, |d| d.kind);
    let cfg = s.config();
    let wide = |w: &Widget, label_px: u32| {
        if let Some(st) = w.style() {
            let _ = st.set_quietly(vec![("description_width", format!("{label_px}px").into())]);
        }
        if let Some(l) = w.layout() {
            let _ = l.set_quietly(vec![("width", "560px".into())]);
        }
    };
    let mut sliders = Vec::new();
    for k in knobs(accel) {
        let (lo, hi) = k.param.slider();
        let w = Widget::float_log_slider(&k.label, cfg.cost.get(k.param), lo, hi, 0.05)?;
        wide(&w, 190);
        sliders.push((k, w));
    }
    let memory = devices.iter().find(|d| d.kind != DeviceKind::Cpu).and_then(|d| d.memory_bytes).unwrap_or(HYPOTHETICAL.1);
    let cap = Widget::float_log_slider("GPU memory cap, bytes", cfg.memory_cap.unwrap_or(memory) as f64, 6.0, 12.0, 0.05)?;
    wide(&cap, 190);
    let policy_index = POLICIES.iter().position(|p| *p == cfg.policy.to_string()).unwrap_or(0);
    let policy = Widget::toggle_buttons("policy", &POLICIES, policy_index)?;
    let device_choices = device_options(&devices);
    let device = Widget::toggle_buttons("this value on", &device_choices.iter().map(String::as_str).collect::<Vec<_>>(), 0)?;
    let setter = Widget::text("set", "")?;
    for w in [&policy, &device, &setter] {
        wide(w, 190);
    }
    let profile = Widget::text("profile file", "bach-profile.json")?;
    wide(&profile, 90);
    let run = Widget::button("Run")?;
    let reset = Widget::button("Reset")?;
    let save = Widget::button("Save as profile")?;
    let status = Widget::html("")?;
    let explain = Widget::html("")?;
    // As wide as the panel; its table scrolls sideways inside (see `pre`).
    if let Some(l) = explain.layout() {
        let _ = l.set_quietly(vec![("width", "100%".into())]);
    }
    let predicted = Widget::html("")?;
    let measured = Widget::html("")?;
    let graph = Widget::html("")?;
    let panel = Arc::new(Panel {
        lazy,
        devices,
        knobs: sliders,
        cap,
        policy,
        device,
        device_choices,
        setter,
        profile,
        status,
        explain,
        predicted,
        measured,
        graph,
        quiet: AtomicBool::new(false),
        last_ms: Mutex::new(0.0),
    });
    // The observers hold the panel weakly: [`OPEN`] keeps it.
    let weak = Arc::downgrade(&panel);
    let on = move |f: fn(&Panel, &Value)| {
        let weak = weak.clone();
        move |_: &Widget, v: &Value| {
            if let Some(p) = weak.upgrade().filter(|p| !p.quiet.load(Ordering::SeqCst)) {
                f(&p, v);
            }
        }
    };
    for (i, (_, w)) in panel.knobs.iter().enumerate() {
        let weak = Arc::downgrade(&panel);
        w.observe("value", move |_, v| {
            if let Some(p) = weak.upgrade().filter(|p| !p.quiet.load(Ordering::SeqCst)) {
                p.knob_moved(i, v);
            }
        });
    }
    panel.cap.observe("value", on(Panel::cap_moved));
    panel.policy.observe("index", on(Panel::policy_picked));
    panel.device.observe("index", on(Panel::device_picked));
    panel.setter.observe("value", on(Panel::set_typed));
    let click = |f: fn(&Panel)| {
        let weak = Arc::downgrade(&panel);
        move |_: &Widget| {
            if let Some(p) = weak.upgrade() {
                f(&p);
            }
        }
    };
    run.on_click(click(Panel::run));
    reset.on_click(click(Panel::reset));
    save.on_click(click(Panel::save));

    let p = &panel;
    let figures = Widget::vbox(&p.knobs.iter().map(|(_, w)| w.clone()).chain([p.cap.clone(), p.policy.clone(), p.device.clone(), p.setter.clone()]).collect::<Vec<_>>())?;
    let buttons = Widget::hbox(&[run, reset, save, p.profile.clone()])?;
    let charts = Widget::tab(&[p.predicted.clone(), p.measured.clone(), p.graph.clone()], &["predicted timeline", "measured (Run)", "placement graph"])?;
    let root = Widget::vbox(&[figures, buttons, p.status.clone(), p.explain.clone(), charts])?;
    let _ = p.measured.set_quietly(vec![("value", "<i>Run evaluates the value once and draws what happened here.</i>".into())]);
    p.replan("panel opened");
    Ok((panel, root))
}

impl Panel {
    fn say(&self, html: &str) {
        let _ = self.status.set_quietly(vec![("value", html.into())]);
    }
    fn refuse(&self, what: &str, why: &str) {
        self.say(&format!("<span style=\"color:#b00\">{}: {}; the model stays as it was</span>", html_escape(what), html_escape(why)));
        self.sync_controls();
    }

    /// Put every control back to what the session's model says.
    fn sync_controls(&self) {
        let s = session::global();
        let cfg = s.config();
        self.quiet.store(true, Ordering::SeqCst);
        for (k, w) in &self.knobs {
            let _ = w.set_quietly(vec![("value", cfg.cost.get(k.param).into())]);
        }
        if let Some(cap) = cfg.memory_cap {
            let _ = self.cap.set_quietly(vec![("value", (cap as f64).into())]);
        }
        self.quiet.store(false, Ordering::SeqCst);
    }

    /// Change the session's cost model (`what` in words), re-plan; or refuse, the model as it was.
    fn change_cost(&self, what: &str, change: impl FnOnce(&mut CostModel) -> Result<(), String>) {
        let s = session::global();
        let mut cost = s.config().cost;
        match change(&mut cost) {
            Ok(()) => {
                s.update_config(|c| c.cost = cost);
                self.replan(what);
            }
            Err(e) => self.refuse(what, &e),
        }
    }

    fn knob_moved(&self, i: usize, v: &Value) {
        let param = self.knobs[i].0.param;
        match v.as_f64() {
            Some(x) => self.change_cost(&format!("{param} = {x:.3e}"), |c| c.put(param, x)),
            None => self.refuse(&param.to_string(), &format!("{v} is not a number")),
        }
    }

    fn cap_moved(&self, v: &Value) {
        match v.as_f64() {
            Some(x) if x.is_finite() && x >= 1.0 => {
                session::global().update_config(|c| c.memory_cap = Some(x as u64));
                self.replan(&format!("memory cap = {}", bach_runtime::units::bytes(x as usize)));
            }
            _ => self.refuse("memory cap", &format!("{v} is not a size in bytes")),
        }
    }

    fn policy_picked(&self, v: &Value) {
        let name = v.as_f64().and_then(|i| POLICIES.get(i as usize)).copied();
        match name.map(str::parse::<Policy>) {
            Some(Ok(p)) => {
                session::global().update_config(|c| c.policy = p);
                self.replan(&format!("policy {p}"));
            }
            _ => self.refuse("policy", &format!("no policy number {v}")),
        }
    }

    fn device_picked(&self, v: &Value) {
        let Some(lazy) = &self.lazy else { return self.say("no value here: `:bach panel <expr>` places one") };
        match v.as_f64().and_then(|i| self.device_choices.get(i as usize)) {
            Some(d) => {
                match d.strip_prefix("gpu:").and_then(|k| k.parse::<u8>().ok()) {
                    Some(k) => lazy.force_device(bach_runtime::DeviceId(k)),
                    None => lazy.force(match d.as_str() {
                        "cpu" => Some(false),
                        "gpu" => Some(true),
                        _ => None,
                    }),
                }
                self.replan(&format!("this value on {d}"));
            }
            None => self.refuse("device", &format!("no device number {v}")),
        }
    }

    /// The "set" field: `path = value`, as `:bach cost set` takes it.
    fn set_typed(&self, v: &Value) {
        let text = v.as_str().unwrap_or("").trim();
        if text.is_empty() {
            return;
        }
        match text.split_once('=') {
            Some((path, value)) => {
                self.change_cost(text, |c| c.set(path.trim(), value.trim()));
                self.sync_controls();
            }
            None => self.refuse(text, "type `<path> = <value>`, e.g. transfer.h2d.bandwidth = 5GB/s"),
        }
    }

    fn reset(&self) {
        let s = session::global();
        let cost = s.default_cost();
        let source = cost.source.clone();
        s.update_config(|c| c.cost = cost);
        self.sync_controls();
        self.replan(&format!("reset: {source}"));
    }

    fn save(&self) {
        let path = self.profile.value_str();
        let path = path.trim();
        if path.is_empty() {
            return self.refuse("save", "type a file name in \"profile file\"");
        }
        match session::global().config().cost.save(std::path::Path::new(path)) {
            Ok(()) => self.say(&format!("saved the model to {}: `:bach cost profile {}` plans with it", html_escape(path), html_escape(path))),
            Err(e) => self.say(&format!("<span style=\"color:#b00\">cannot save {}: {}</span>", html_escape(path), html_escape(&e))),
        }
    }

    /// Plan the value with the session's model and redraw the table, the predicted timeline
    /// and the graph; the status line says what changed and how long it took.
    fn replan(&self, what: &str) {
        let t0 = Instant::now();
        let Some(lazy) = &self.lazy else {
            return self.say(&format!("{}: the model changed; `:bach panel &lt;expr&gt;` shows a value's plan", html_escape(what)));
        };
        if lazy.is_evaluated() {
            return self.say(COMPUTED);
        }
        match redraw(lazy) {
            Ok((plan, table, chart, graph)) => {
                let _ = self.explain.set_quietly(vec![("value", pre(&table).into())]);
                let _ = self.predicted.set_quietly(vec![("value", chart.into())]);
                let _ = self.graph.set_quietly(vec![("value", graph.into())]);
                let ms = t0.elapsed().as_secs_f64() * 1e3;
                *self.last_ms.lock().unwrap_or_else(|e| e.into_inner()) = ms;
                self.say(&format!("{}: re-planned in {ms:.0} ms, nothing ran; {}", html_escape(what), html_escape(&summary(&plan))));
            }
            Err(e) => self.say(&format!("<span style=\"color:#b00\">{}: {}</span>", html_escape(what), html_escape(&e.to_string()))),
        }
    }

    /// Run the value once (nothing kept) and draw the evaluation's timeline.
    fn run(&self) {
        let Some(lazy) = &self.lazy else { return self.say("no value here: `:bach panel <expr>` places one") };
        if lazy.is_evaluated() {
            return self.say(COMPUTED);
        }
        let s = lazy.session().clone();
        // Beside what happens, what the model predicts for the devices it runs on (this
        // machine's: no hypothetical accelerator).
        let (cost, devices) = (s.config().cost, s.devices().profiles());
        let predicted = s.plan_with(&[lazy], &cost, &devices).map(|plan| {
            let trace = EvalTrace::predicted(&plan, &cost, s.cell());
            bach_runtime::chart::labelled_timeline_svg(&trace, &plan.devices, &format!("Predicted for these devices: {}", seconds(plan.predicted.seconds())))
        });
        let t0 = Instant::now();
        let ran = without_progress(|| s.trial(&[lazy]));
        match ran {
            Ok(None) => self.say(COMPUTED),
            Ok(Some(eval)) => {
                let svg = bach_runtime::chart::labelled_timeline_svg(
                    &eval,
                    &s.devices().profiles(),
                    &format!("Measured here (eval {}): {}", eval.eval, seconds((eval.end - eval.start).as_secs_f64())),
                );
                let _ = self.measured.set_quietly(vec![("value", format!("{svg}{}", predicted.unwrap_or_default()).into())]);
                self.say(&format!("ran in {:.0} ms on this machine: the measured timeline is under \"measured (Run)\"", t0.elapsed().as_secs_f64() * 1e3));
            }
            Err(e) => self.say(&format!("<span style=\"color:#b00\">the run failed: {}</span>", html_escape(&e.to_string()))),
        }
    }

    /// What a front end without widgets shows (text, HTML): the plan as it stands and the
    /// magics that change it.
    fn fallbacks(&self, s: &Session) -> (String, String) {
        let mut text = String::from("Bach placement panel (a front end with ipywidgets draws its controls).\n");
        let mut html = String::from("<div><b>Bach placement panel</b>: this front end has no widget manager, so here is the plan as it stands; change figures with <code>:bach cost set &lt;path&gt; = &lt;value&gt;</code>, <code>:bach policy</code>, <code>:bach memory</code>.");
        if let Some(l) = &self.lazy {
            let cost = s.config().cost;
            if let Ok(plan) = s.plan_with(&[l], &cost, &self.devices) {
                let (table, chart, _) = drawn(&plan, &cost, s.cell());
                text.push_str(&table);
                text.push('\n');
                html.push_str(&pre(&table));
                html.push_str(&chart);
            }
        }
        text.push_str("change figures with `:bach cost set <path> = <value>` (paths: `:bach cost`), `:bach policy <name>`, `:bach memory <size>`; `:bach explain <expr>` re-plans");
        html.push_str("</div>");
        (text, html)
    }
}

/// What one move of a panel control costs, without the widgets: plan `lazy` with the
/// session's model for the panel's devices, and draw the explain table, the predicted
/// timeline and the placement graph (SVG). `bach-bench panel` times it.
pub fn redraw(lazy: &Lazy) -> bach_runtime::Result<(Plan, String, String, String)> {
    let s = lazy.session();
    let cost = s.config().cost;
    let plan = s.plan_with(&[lazy], &cost, &plan_devices(s))?;
    let (table, chart, graph) = drawn(&plan, &cost, s.cell());
    Ok((plan, table, chart, graph))
}

/// A plan's explain table, predicted timeline (SVG) and placement graph (SVG).
fn drawn(plan: &Plan, cost: &CostModel, cell: u64) -> (String, String, String) {
    let trace = EvalTrace::predicted(plan, cost, cell);
    let for_ = plan.predicted_for.as_ref().map(|m| format!(" for {m}")).unwrap_or_default();
    let hypothetical = if plan.devices.iter().any(|d| d.is_hypothetical()) { " (no accelerator here: planned for a hypothetical one)" } else { "" };
    let title = format!("Predicted{for_}: {}{hypothetical}", seconds(plan.predicted.seconds()));
    (plan.explain(), bach_runtime::chart::labelled_timeline_svg(&trace, &plan.devices, &title), bach_runtime::chart::placement_graph_svg(plan))
}

fn summary(plan: &Plan) -> String {
    let on_accel = plan.steps.iter().filter(|s| s.device != bach_runtime::CPU).count();
    format!("{on_accel} of {} ops on the accelerator, predicted {}", plan.steps.len(), seconds(plan.predicted.seconds()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_value_on_lists_each_of_several_accelerators() {
        let of = |choice| bach_runtime::Devices::select(choice).unwrap().profiles();
        assert_eq!(device_options(&of(bach_runtime::DeviceChoice::Emulated(Some(1 << 20)))), ["auto", "cpu", "gpu"]);
        assert_eq!(device_options(&of(bach_runtime::DeviceChoice::EmulatedSet { count: 3, memory: Some(1 << 20) })), ["auto", "cpu", "gpu", "gpu:1", "gpu:2", "gpu:3"]);
    }
}

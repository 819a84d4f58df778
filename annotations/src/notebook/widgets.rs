//! ipywidgets from Rust: the standard controls of `@jupyter-widgets/controls` 2.0 (ipywidgets
//! 8), spoken over [`super::comm`] in the Jupyter widget protocol 2.1.0 (jupyter-widgets'
//! `packages/schema/messages.md`), so JupyterLab 4 and Notebook 7 draw them with the widget
//! manager they already have.
//!
//! ```no_run
//! use bach::widgets::Widget;
//! let speed = Widget::float_slider("speed", 1.0, 0.0, 10.0, 0.1).unwrap();
//! let label = Widget::html("speed 1.0").unwrap();
//! let l = label.clone();
//! speed.observe("value", move |_, v| { let _ = l.set("value", format!("speed {}", v.as_f64().unwrap_or(0.0)).into()); });
//! Widget::vbox(&[speed.clone(), label]).unwrap().display();
//! // later, from cell code: the value the user left it at
//! let now = speed.value_f64();
//! ```
//!
//! Each widget is a model (a `jupyter.widget` comm holding its state, opened with
//! `{"state": ..., "buffer_paths": []}` and metadata `{"version": "2.1.0"}`) plus its layout and
//! style models, as ipywidgets makes them. The front end's `update` messages change the state,
//! call the observers of the keys it names and are echoed back (`echo_update`);
//! `request_state` is answered with the whole state; a button's click (`custom` `click`) calls
//! its `on_click` callbacks; the `jupyter.widget.control` target answers `request_states`
//! with every live model (a front end reloading the page). Bytes (an image's `value`) travel
//! as the messages' binary buffers, named by `buffer_paths`, both ways. Setting a key from Rust
//! ([`Widget::set`]) sends an `update` and calls its observers too, as traitlets do.
//!
//! Callbacks run on the comm thread of [`super::comm`], between cells (a control moved while
//! a cell runs is applied when it ends). Displayed with [`Widget::display`] (or as a cell's
//! last value) as `application/vnd.jupyter.widget-view+json` with a text fallback: a front
//! end without a widget manager (jupyter console, nbconvert) shows the text.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use bach_runtime::json::{self, Value};
use bach_runtime::{BachError, Result};

use super::comm::Comm;

/// The widget protocol version this module speaks.
pub const PROTOCOL_VERSION: &str = "2.1.0";
/// The MIME type of a widget's view in a display message.
pub const VIEW_MIME: &str = "application/vnd.jupyter.widget-view+json";
const CONTROLS: &str = "@jupyter-widgets/controls";
const BASE: &str = "@jupyter-widgets/base";
const OUTPUT: &str = "@jupyter-widgets/output";
const TARGET: &str = "jupyter.widget";
const CONTROL_TARGET: &str = "jupyter.widget.control";

type Observer = Arc<dyn Fn(&Widget, &Value) + Send + Sync>;
type OnClick = Arc<dyn Fn(&Widget) + Send + Sync>;

struct Model {
    comm: Comm,
    name: String,
    state: Mutex<Vec<(String, Value)>>,
    /// Keys whose values are bytes (an image's `value`): they travel as the messages' binary
    /// buffers, named by `buffer_paths`.
    bytes: Mutex<Vec<(String, Vec<u8>)>>,
    observers: Mutex<Vec<(String, Observer)>>,
    clicks: Mutex<Vec<OnClick>>,
    /// The models this one refers to (layout, style, children): kept while it lives.
    _parts: Vec<Widget>,
}

/// A widget model shared with the front end. Clones are the same widget.
#[derive(Clone)]
pub struct Widget(Arc<Model>);

impl std::fmt::Debug for Widget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({})", self.0.name.trim_end_matches("Model"), self.id())
    }
}

/// The widget layer's state, one per process.
#[derive(Default)]
struct State {
    /// Every live model by comm id: the control target's answer, and where messages find theirs.
    models: Mutex<HashMap<String, Widget>>,
    /// The control target, registered with the first widget (or why it could not be).
    control_target: OnceLock<std::result::Result<(), String>>,
}

fn state() -> &'static State {
    static STATE: OnceLock<State> = OnceLock::new();
    STATE.get_or_init(State::default)
}
fn models() -> &'static Mutex<HashMap<String, Widget>> {
    &state().models
}
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn s(v: &str) -> Value {
    Value::str(v)
}
fn n(v: f64) -> Value {
    Value::Number(v)
}
fn obj(fields: Vec<(&str, Value)>) -> Value {
    Value::Object(fields.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

/// `buffer_paths` for `bytes`: each a top-level key.
fn paths(bytes: &[(String, Vec<u8>)]) -> Value {
    Value::Array(bytes.iter().map(|(k, _)| Value::Array(vec![s(k)])).collect())
}

/// The keys every model carries: what it is and which view draws it.
fn model_keys(model: &str, module: &str, view: &str, view_module: &str) -> Vec<(String, Value)> {
    let version = if module == OUTPUT { "1.0.0" } else { "2.0.0" };
    let view_version = if view_module == OUTPUT { "1.0.0" } else { "2.0.0" };
    [
        ("_model_module", s(module)),
        ("_model_module_version", s(version)),
        ("_model_name", s(model)),
        ("_view_count", Value::Null),
        ("_view_module", s(view_module)),
        ("_view_module_version", s(view_version)),
        ("_view_name", s(view)),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect()
}

/// The control target, registered with the first widget: a front end that reloads asks it
/// for every model's state.
fn register_control_target() -> Result<()> {
    state()
        .control_target
        .get_or_init(|| {
            super::comm::register_target(CONTROL_TARGET, |comm, _| {
                let reply = comm.clone();
                comm.on_msg(move |data| {
                    let asked = json::parse(data).ok().and_then(|m| m.get("method").and_then(Value::as_str).map(str::to_string));
                    if asked.as_deref() == Some("request_states") {
                        let all: Vec<Widget> = lock(models()).values().cloned().collect();
                        // As ipywidgets answers: each model's name and module beside its state.
                        let entry = |w: &Widget| {
                            let key = |k: &str| w.get(k).unwrap_or(Value::Null);
                            obj(vec![
                                ("model_name", key("_model_name")),
                                ("model_module", key("_model_module")),
                                ("model_module_version", key("_model_module_version")),
                                ("state", w.state()),
                            ])
                        };
                        let states = Value::Object(all.iter().map(|w| (w.id().to_string(), entry(w))).collect());
                        // Bytes at [model id, "state", key] of the whole message's states.
                        let (mut at, mut buffers) = (Vec::new(), Vec::new());
                        for w in &all {
                            for (key, b) in lock(&w.0.bytes).iter() {
                                at.push(Value::Array(vec![s(w.id()), s("state"), s(key)]));
                                buffers.push(b.clone());
                            }
                        }
                        let data = obj(vec![("method", s("update_states")), ("states", states), ("buffer_paths", Value::Array(at))]);
                        let _ = reply.send_buffers(&data.to_string(), &buffers.iter().map(Vec::as_slice).collect::<Vec<_>>());
                    }
                });
            })
            .map_err(|e| e.to_string())
        })
        .clone()
        .map_err(|e| BachError::invalid("widgets", e))
}

impl Widget {
    /// Open a model with `state` (its keys first) on the front end.
    fn open(state: Vec<(String, Value)>, parts: Vec<Widget>) -> Result<Widget> {
        Widget::open_bytes(state, vec![], parts)
    }

    /// [`Widget::open`] with keys whose values are bytes.
    fn open_bytes(state: Vec<(String, Value)>, bytes: Vec<(String, Vec<u8>)>, parts: Vec<Widget>) -> Result<Widget> {
        register_control_target()?;
        let name = state.iter().find(|(k, _)| k == "_model_name").and_then(|(_, v)| v.as_str()).unwrap_or("").to_string();
        let data = obj(vec![("state", Value::Object(state.clone())), ("buffer_paths", paths(&bytes))]);
        let buffers: Vec<&[u8]> = bytes.iter().map(|(_, b)| b.as_slice()).collect();
        let comm = Comm::open_buffers(TARGET, &data.to_string(), &format!("{{\"version\":\"{PROTOCOL_VERSION}\"}}"), &buffers)?;
        let id = comm.id().to_string();
        let model = Model { comm, name, state: Mutex::new(state), bytes: Mutex::new(bytes), observers: Mutex::default(), clicks: Mutex::default(), _parts: parts };
        let w = Widget(Arc::new(model));
        lock(models()).insert(id.clone(), w.clone());
        let closed = id.clone();
        w.0.comm.on_msg_buffers(move |data, buffers| {
            let w = lock(models()).get(&id).cloned();
            if let Some(w) = w {
                w.handle(data, buffers);
            }
        });
        w.0.comm.on_close(move |_| {
            lock(models()).remove(&closed);
        });
        Ok(w)
    }

    /// A DOM widget of `@jupyter-widgets/controls` (or output) with its layout and style
    /// models (`style`: the style model's name, `None` for widgets without one).
    fn control(model: &str, view: &str, module: &str, style: Option<&str>, attrs: Vec<(&str, Value)>, children: Vec<Widget>) -> Result<Widget> {
        let layout = Widget::open(model_keys("LayoutModel", BASE, "LayoutView", BASE), vec![])?;
        let mut state = vec![("_dom_classes".to_string(), Value::Array(vec![]))];
        state.extend(model_keys(model, module, view, module));
        state.push(("layout".into(), s(&layout.reference())));
        let mut parts = vec![layout];
        if let Some(style) = style {
            let mut st = model_keys(style, CONTROLS, "StyleView", BASE);
            st.push(("description_width".into(), s("")));
            let style = Widget::open(st, vec![])?;
            state.push(("style".into(), s(&style.reference())));
            parts.push(style);
        }
        state.push(("tabbable".into(), Value::Null));
        state.push(("tooltip".into(), Value::Null));
        state.extend(attrs.into_iter().map(|(k, v)| (k.to_string(), v)));
        parts.extend(children);
        Widget::open(state, parts)
    }

    fn described(description: &str) -> Vec<(&'static str, Value)> {
        vec![("description", s(description)), ("description_allow_html", Value::Bool(false)), ("disabled", Value::Bool(false))]
    }

    /// `kind`: the model and view names; `range`: min, max, step.
    fn slider(kind: (&str, &str), description: &str, value: f64, range: (f64, f64, f64), format: &str, extra: Vec<(&str, Value)>) -> Result<Widget> {
        let (model, view) = kind;
        let (min, max, step) = range;
        if !(min <= max && step > 0.0 && value.is_finite()) {
            return Err(BachError::invalid("widgets", format!("a slider needs min <= max and step > 0 (min {min}, max {max}, step {step})")));
        }
        let mut attrs = Widget::described(description);
        attrs.extend([
            ("behavior", s("drag-tap")),
            ("continuous_update", Value::Bool(false)),
            ("max", n(max)),
            ("min", n(min)),
            ("orientation", s("horizontal")),
            ("readout", Value::Bool(true)),
            ("readout_format", s(format)),
            ("step", n(step)),
            ("value", n(value)),
        ]);
        attrs.extend(extra);
        Widget::control(model, view, CONTROLS, Some("SliderStyleModel"), attrs, vec![])
    }

    /// A slider of floats (`FloatSlider`). Its `value` changes when the user lets go (not
    /// while dragging: `continuous_update` is off, so each change re-runs its observers once).
    pub fn float_slider(description: &str, value: f64, min: f64, max: f64, step: f64) -> Result<Widget> {
        Widget::slider(("FloatSliderModel", "FloatSliderView"), description, value.clamp(min, max), (min, max, step), ".3g", vec![])
    }

    /// A slider over powers of `base` 10 (`FloatLogSlider`): `min_exp` and `max_exp` are
    /// exponents, `value` the value itself (1e9, not 9).
    pub fn float_log_slider(description: &str, value: f64, min_exp: f64, max_exp: f64, step: f64) -> Result<Widget> {
        let v = value.clamp(10f64.powf(min_exp), 10f64.powf(max_exp));
        Widget::slider(("FloatLogSliderModel", "FloatLogSliderView"), description, v, (min_exp, max_exp, step), ".3g", vec![("base", n(10.0))])
    }

    /// A slider of integers (`IntSlider`).
    pub fn int_slider(description: &str, value: i64, min: i64, max: i64, step: i64) -> Result<Widget> {
        Widget::slider(("IntSliderModel", "IntSliderView"), description, value.clamp(min, max) as f64, (min as f64, max as f64, step as f64), "d", vec![])
    }

    fn options(model: &str, view: &str, style: &str, description: &str, options: &[&str], index: usize, extra: Vec<(&str, Value)>) -> Result<Widget> {
        if index >= options.len() {
            return Err(BachError::invalid("widgets", format!("option {index} of {} options", options.len())));
        }
        let mut attrs = Widget::described(description);
        attrs.push(("_options_labels", Value::Array(options.iter().map(|o| s(o)).collect())));
        attrs.push(("index", n(index as f64)));
        attrs.extend(extra);
        Widget::control(model, view, CONTROLS, Some(style), attrs, vec![])
    }

    /// A drop-down list (`Dropdown`): `index` is the chosen option's; observe `"index"`.
    pub fn dropdown(description: &str, options: &[&str], index: usize) -> Result<Widget> {
        Widget::options("DropdownModel", "DropdownView", "DescriptionStyleModel", description, options, index, vec![])
    }

    /// A row of buttons of which one is on (`ToggleButtons`): observe `"index"`.
    pub fn toggle_buttons(description: &str, options: &[&str], index: usize) -> Result<Widget> {
        let extra = vec![("button_style", s("")), ("icons", Value::Array(vec![])), ("tooltips", Value::Array(vec![]))];
        Widget::options("ToggleButtonsModel", "ToggleButtonsView", "ToggleButtonsStyleModel", description, options, index, extra)
    }

    /// A checkbox (`Checkbox`): observe `"value"` (a bool).
    pub fn checkbox(description: &str, value: bool) -> Result<Widget> {
        let mut attrs = Widget::described(description);
        attrs.extend([("indent", Value::Bool(true)), ("value", Value::Bool(value))]);
        Widget::control("CheckboxModel", "CheckboxView", CONTROLS, Some("CheckboxStyleModel"), attrs, vec![])
    }

    /// A button (`Button`): [`Widget::on_click`].
    pub fn button(description: &str) -> Result<Widget> {
        let attrs = vec![("button_style", s("")), ("description", s(description)), ("disabled", Value::Bool(false)), ("icon", s(""))];
        Widget::control("ButtonModel", "ButtonView", CONTROLS, Some("ButtonStyleModel"), attrs, vec![])
    }

    /// A one-line text field (`Text`): its `"value"` changes when the user presses Enter or
    /// leaves the field.
    pub fn text(description: &str, value: &str) -> Result<Widget> {
        let mut attrs = Widget::described(description);
        attrs.extend([("continuous_update", Value::Bool(false)), ("placeholder", s("\u{200b}")), ("value", s(value))]);
        Widget::control("TextModel", "TextView", CONTROLS, Some("TextStyleModel"), attrs, vec![])
    }

    /// HTML (`HTML`): set `"value"` to redraw it in place.
    pub fn html(value: &str) -> Result<Widget> {
        let attrs = vec![("description", s("")), ("description_allow_html", Value::Bool(false)), ("placeholder", s("\u{200b}")), ("value", s(value))];
        Widget::control("HTMLModel", "HTMLView", CONTROLS, Some("HTMLStyleModel"), attrs, vec![])
    }

    /// An image (`Image`): `format` `png`, `jpeg`, `svg+xml`, ...; its bytes travel as a binary
    /// buffer. [`Widget::set_bytes`]`("value", ..)` replaces it.
    pub fn image(format: &str, bytes: &[u8]) -> Result<Widget> {
        let layout = Widget::open(model_keys("LayoutModel", BASE, "LayoutView", BASE), vec![])?;
        let mut state = vec![("_dom_classes".to_string(), Value::Array(vec![]))];
        state.extend(model_keys("ImageModel", CONTROLS, "ImageView", CONTROLS));
        state.extend(
            [("format", s(format)), ("height", s("")), ("layout", s(&layout.reference())), ("tabbable", Value::Null), ("tooltip", Value::Null), ("width", s(""))]
                .map(|(k, v)| (k.to_string(), v)),
        );
        Widget::open_bytes(state, vec![("value".into(), bytes.to_vec())], vec![layout])
    }

    /// An output area (`Output`): [`Widget::show`] replaces what it shows with a MIME bundle.
    pub fn output() -> Result<Widget> {
        Widget::control("OutputModel", "OutputView", OUTPUT, None, vec![("msg_id", s("")), ("outputs", Value::Array(vec![]))], vec![])
    }

    fn boxed(model: &str, view: &str, children: &[Widget], extra: Vec<(&str, Value)>) -> Result<Widget> {
        let mut attrs = vec![("box_style", s("")), ("children", Value::Array(children.iter().map(|c| s(&c.reference())).collect()))];
        attrs.extend(extra);
        Widget::control(model, view, CONTROLS, None, attrs, children.to_vec())
    }

    /// Widgets side by side (`HBox`).
    pub fn hbox(children: &[Widget]) -> Result<Widget> {
        Widget::boxed("HBoxModel", "HBoxView", children, vec![])
    }

    /// Widgets one above the other (`VBox`).
    pub fn vbox(children: &[Widget]) -> Result<Widget> {
        Widget::boxed("VBoxModel", "VBoxView", children, vec![])
    }

    /// Tabs, one per child, titled (`Tab`): observe `"selected_index"`.
    pub fn tab(children: &[Widget], titles: &[&str]) -> Result<Widget> {
        let selected = if children.is_empty() { Value::Null } else { n(0.0) };
        Widget::boxed("TabModel", "TabView", children, vec![("selected_index", selected), ("titles", Value::Array(titles.iter().map(|t| s(t)).collect()))])
    }

    /// The model this one refers to under `key` (`"layout"`, `"style"`).
    fn part(&self, key: &str) -> Option<Widget> {
        let id = self.get(key)?.as_str()?.strip_prefix("IPY_MODEL_")?.to_string();
        self.0._parts.iter().find(|p| p.id() == id).cloned()
    }
    /// The layout model (width, height, margins: ipywidgets' `Layout`).
    pub fn layout(&self) -> Option<Widget> {
        self.part("layout")
    }
    /// The style model (`description_width`, colours).
    pub fn style(&self) -> Option<Widget> {
        self.part("style")
    }

    /// The comm id (the model id the front end knows it by).
    pub fn id(&self) -> &str {
        self.0.comm.id()
    }

    /// How another model's state refers to this one.
    pub fn reference(&self) -> String {
        format!("IPY_MODEL_{}", self.id())
    }

    /// The whole state, as the front end has it.
    pub fn state(&self) -> Value {
        Value::Object(lock(&self.0.state).clone())
    }

    /// One key of the state.
    pub fn get(&self, key: &str) -> Option<Value> {
        lock(&self.0.state).iter().find(|(k, _)| k == key).map(|(_, v)| v.clone())
    }

    /// A key whose value is bytes (an image's `"value"`).
    pub fn get_bytes(&self, key: &str) -> Option<Vec<u8>> {
        lock(&self.0.bytes).iter().find(|(k, _)| k == key).map(|(_, b)| b.clone())
    }

    /// Set a key to bytes: sent as a binary buffer; the key's observers run (with `null`: read
    /// the bytes with [`Widget::get_bytes`]).
    pub fn set_bytes(&self, key: &str, bytes: &[u8]) -> Result<()> {
        self.store_bytes(&[(key.to_string(), bytes.to_vec())]);
        let sent = self.send_state("update", obj(vec![]), &[(key.to_string(), bytes.to_vec())]);
        self.notify(&[(key.to_string(), Value::Null)]);
        sent
    }

    /// `"value"` as a number (sliders; 0 when it is not one).
    pub fn value_f64(&self) -> f64 {
        self.get("value").and_then(|v| v.as_f64()).unwrap_or(0.0)
    }
    /// `"value"` as a bool (checkbox).
    pub fn value_bool(&self) -> bool {
        self.get("value").and_then(|v| v.as_bool()).unwrap_or(false)
    }
    /// `"value"` as text (text field, HTML).
    pub fn value_str(&self) -> String {
        self.get("value").and_then(|v| v.as_str().map(str::to_string)).unwrap_or_default()
    }
    /// The chosen option's label (dropdown, toggle buttons).
    pub fn selected(&self) -> Option<String> {
        let i = self.get("index")?.as_f64()? as usize;
        match self.get("_options_labels")? {
            Value::Array(labels) => labels.get(i).and_then(|l| l.as_str().map(str::to_string)),
            _ => None,
        }
    }

    /// Set one key: the front end is sent an `update`, and the key's observers run.
    pub fn set(&self, key: &str, value: Value) -> Result<()> {
        self.set_all(vec![(key, value)])
    }

    /// Set several keys in one `update`.
    pub fn set_all(&self, changes: Vec<(&str, Value)>) -> Result<()> {
        let notified: Vec<(String, Value)> = changes.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
        let sent = self.set_quietly(changes);
        self.notify(&notified);
        sent
    }

    /// Set keys without running their observers (a control put back, or moved with others).
    pub fn set_quietly(&self, changes: Vec<(&str, Value)>) -> Result<()> {
        let changes: Vec<(String, Value)> = changes.into_iter().map(|(k, v)| (k.to_string(), v)).collect();
        self.store(&changes);
        self.send_state("update", Value::Object(changes), &[])
    }

    /// A state message to the front end (`update`, `echo_update`): `state`, and `bytes` as
    /// binary buffers named by `buffer_paths`.
    fn send_state(&self, method: &str, state: Value, bytes: &[(String, Vec<u8>)]) -> Result<()> {
        let data = obj(vec![("method", s(method)), ("state", state), ("buffer_paths", paths(bytes))]);
        let buffers: Vec<&[u8]> = bytes.iter().map(|(_, b)| b.as_slice()).collect();
        self.0.comm.send_buffers(&data.to_string(), &buffers)
    }

    /// Replace what an output widget shows with one MIME bundle (`[("text/html", ...)]`).
    pub fn show(&self, bundle: &[(&str, String)]) -> Result<()> {
        let data = Value::Object(bundle.iter().map(|(k, v)| (k.to_string(), s(v))).collect());
        let output = obj(vec![("output_type", s("display_data")), ("data", data), ("metadata", obj(vec![]))]);
        self.set("outputs", Value::Array(vec![output]))
    }

    /// Call `f(widget, new value)` whenever `key` changes (from the front end or [`Widget::set`]).
    pub fn observe(&self, key: &str, f: impl Fn(&Widget, &Value) + Send + Sync + 'static) {
        lock(&self.0.observers).push((key.to_string(), Arc::new(f)));
    }

    /// Call `f(widget)` when the user clicks the button.
    pub fn on_click(&self, f: impl Fn(&Widget) + Send + Sync + 'static) {
        lock(&self.0.clicks).push(Arc::new(f));
    }

    /// Close the model (the front end removes its views).
    pub fn close(&self) -> Result<()> {
        lock(models()).remove(self.id());
        self.0.comm.close()
    }

    /// Show the widget in the cell's output.
    pub fn display(&self) {
        super::protocol::display(&self.bundle(&format!("{self:?}: a widget (this front end has no widget manager to draw it)")));
    }

    /// The display bundle: the widget's view and `text` for front ends without widgets.
    pub fn bundle(&self, text: &str) -> Vec<(&'static str, String)> {
        let view = obj(vec![("version_major", n(2.0)), ("version_minor", n(0.0)), ("model_id", s(self.id()))]);
        vec![(VIEW_MIME, view.to_string()), ("text/plain", text.to_string())]
    }

    /// How evcxr shows a widget that ends a cell.
    pub fn evcxr_display(&self) {
        self.display();
    }

    fn store(&self, changes: &[(String, Value)]) {
        let mut state = lock(&self.0.state);
        for (k, v) in changes {
            match state.iter_mut().find(|(key, _)| key == k) {
                Some(slot) => slot.1 = v.clone(),
                None => state.push((k.clone(), v.clone())),
            }
        }
    }

    fn notify(&self, changes: &[(String, Value)]) {
        for (k, v) in changes {
            let observers: Vec<Observer> = lock(&self.0.observers).iter().filter(|(key, _)| key == k).map(|(_, f)| f.clone()).collect();
            for f in observers {
                f(self, v);
            }
        }
    }

    fn store_bytes(&self, changes: &[(String, Vec<u8>)]) {
        let mut bytes = lock(&self.0.bytes);
        for (k, b) in changes {
            match bytes.iter_mut().find(|(key, _)| key == k) {
                Some(slot) => slot.1 = b.clone(),
                None => bytes.push((k.clone(), b.clone())),
            }
        }
    }

    /// A message from the front end (with the binary buffers its `buffer_paths` name).
    fn handle(&self, data: &str, buffers: &[Vec<u8>]) {
        let Ok(msg) = json::parse(data) else { return };
        match msg.get("method").and_then(Value::as_str) {
            Some("update") => {
                let Some(Value::Object(changes)) = msg.get("state") else { return };
                // Keys the model does not have are not ours to keep (a newer front end's).
                let known: Vec<(String, Value)> = changes.iter().filter(|(k, _)| self.get(k).is_some()).cloned().collect();
                // Bytes: the buffers, each at its path (a top-level key: the controls here have
                // no nested ones).
                let mut bytes = Vec::new();
                if let Some(Value::Array(paths)) = msg.get("buffer_paths") {
                    for (path, b) in paths.iter().zip(buffers) {
                        if let Value::Array(p) = path {
                            if let [Value::String(key)] = p.as_slice() {
                                bytes.push((key.clone(), b.clone()));
                            }
                        }
                    }
                }
                self.store(&known);
                self.store_bytes(&bytes);
                let _ = self.send_state("echo_update", Value::Object(known.clone()), &bytes);
                self.notify(&known);
                self.notify(&bytes.iter().map(|(k, _)| (k.clone(), Value::Null)).collect::<Vec<_>>());
            }
            Some("request_state") => {
                let bytes = lock(&self.0.bytes).clone();
                let _ = self.send_state("update", self.state(), &bytes);
            }
            Some("custom") if msg.get("content").and_then(|c| c.get("event")).and_then(Value::as_str) == Some("click") => {
                let clicks: Vec<OnClick> = lock(&self.0.clicks).clone();
                for f in clicks {
                    f(self);
                }
            }
            _ => {}
        }
    }
}

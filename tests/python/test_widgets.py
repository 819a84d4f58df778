"""ipywidgets' protocol through the real kernel (issue #36), this test playing the front end:
bach::widgets' models open as ipywidgets 8 opens its own (the same state keys as ipywidgets'
`get_state()`, layout and style models first), the front end's updates are applied, echoed and
observed, request_state and the control target's request_states are answered, a button click
runs its callback; the placement panel re-plans when its h2d slider moves, refuses a bad value
with a message, and shows a text fallback; nbclient saves the widgets' state in the notebook."""

import json
import re
import time

import ipywidgets
import jupyter_client
import nbformat
import pytest
from nbclient import NotebookClient

from test_comms import result, send, until_idle
from test_kernel import of_type, run, text

VIEW = "application/vnd.jupyter.widget-view+json"


@pytest.fixture(scope="module")
def session(kernel):
    return kernel


def opened_models(msgs):
    """comm_open contents of jupyter.widget models, by id, in order."""
    return {m["content"]["comm_id"]: m["content"] for m in of_type(msgs, "comm_open") if m["content"]["target_name"] == "jupyter.widget"}


def widget_updates(msgs, method="update"):
    return [(m["content"]["comm_id"], m["content"]["data"]) for m in of_type(msgs, "comm_msg") if m["content"]["data"].get("method") == method]


SLIDER = """let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<f64>::new()));
let s = bach::widgets::Widget::float_slider("speed", 2.0, 0.0, 10.0, 0.5)?;
let s2 = seen.clone();
s.observe("value", move |_, v| s2.lock().unwrap().push(v.as_f64().unwrap()));
s.display();
s.id().to_string()"""


def test_a_slider_opens_as_ipywidgets_opens_one_and_syncs_both_ways(session):
    _, kc = session
    r, msgs = run(kc, SLIDER)
    assert r["status"] == "ok", (r, text(msgs))
    models = opened_models(msgs)
    sid = result(msgs).strip('"')
    slider = models[sid]
    state = slider["data"]["state"]
    opens = [m for m in of_type(msgs, "comm_open")]
    assert all(m["metadata"].get("version") == "2.1.0" for m in opens), [m["metadata"] for m in opens]
    assert slider["data"]["buffer_paths"] == []
    # The same keys ipywidgets' own FloatSlider has, and its model and view.
    want = ipywidgets.FloatSlider().get_state()
    assert set(state) == set(want), set(state) ^ set(want)
    for k in ["_model_name", "_model_module", "_model_module_version", "_view_name", "_view_module", "_view_module_version"]:
        assert state[k] == want[k], k
    assert (state["value"], state["min"], state["max"], state["step"], state["description"]) == (2.0, 0.0, 10.0, 0.5, "speed")
    # Its layout and style are models opened before it.
    ids = list(models)
    layout, style = state["layout"].removeprefix("IPY_MODEL_"), state["style"].removeprefix("IPY_MODEL_")
    assert ids.index(layout) < ids.index(sid) and ids.index(style) < ids.index(sid)
    assert models[layout]["data"]["state"]["_model_name"] == "LayoutModel"
    assert models[style]["data"]["state"]["_model_name"] == "SliderStyleModel"
    # Displayed as a widget view, after the models it names.
    (shown,) = [m for m in of_type(msgs, "display_data") if VIEW in m["content"]["data"]]
    assert shown["content"]["data"][VIEW] == {"version_major": 2, "version_minor": 0, "model_id": sid}
    assert "text/plain" in shown["content"]["data"]
    assert msgs.index(shown) > max(msgs.index(m) for m in opens)

    # The front end moves it: applied, echoed, observed; the cell reads it.
    mid = send(kc, "comm_msg", {"comm_id": sid, "data": {"method": "update", "state": {"value": 7.5}, "buffer_paths": []}})
    answers = until_idle(kc, mid)
    assert widget_updates(answers, "echo_update") == [(sid, {"method": "echo_update", "state": {"value": 7.5}, "buffer_paths": []})]
    r, msgs = run(kc, "(s.value_f64(), seen.lock().unwrap().clone())")
    assert result(msgs) == "(7.5, [7.5])", result(msgs)
    # The kernel sets it: an update goes to the front end.
    r, msgs = run(kc, 's.set("value", 4.0.into())?;')
    assert r["status"] == "ok", (r, text(msgs))
    assert widget_updates(msgs) == [(sid, {"method": "update", "state": {"value": 4.0}, "buffer_paths": []})]
    # request_state: the whole state.
    mid = send(kc, "comm_msg", {"comm_id": sid, "data": {"method": "request_state"}})
    (full,) = widget_updates(until_idle(kc, mid))
    assert full[1]["state"]["value"] == 4.0 and set(full[1]["state"]) == set(want)


def test_controls_boxes_and_the_control_target(session):
    _, kc = session
    code = """use bach::widgets::Widget;
let clicks = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
let b = Widget::button("go")?;
let c2 = clicks.clone();
b.on_click(move |_| { c2.fetch_add(1, std::sync::atomic::Ordering::SeqCst); });
let d = Widget::dropdown("pick", &["a", "b", "c"], 1)?;
let t = Widget::text("name", "x")?;
let tab = Widget::tab(&[Widget::html("<b>hi</b>")?, Widget::vbox(&[Widget::checkbox("on", true)?, Widget::int_slider("n", 3, 0, 9, 1)?])?], &["one", "two"])?;
let row = Widget::hbox(&[b.clone(), d.clone(), t.clone(), Widget::toggle_buttons("mode", &["x", "y"], 0)?, Widget::float_log_slider("rate", 1e9, 6.0, 12.0, 0.1)?, Widget::output()?])?;
row.display();
tab.display();
(b.id().to_string(), d.id().to_string(), t.id().to_string())"""
    r, msgs = run(kc, code)
    assert r["status"] == "ok", (r, text(msgs))
    models = opened_models(msgs)
    by_name = {}
    for mid_, content in models.items():
        by_name.setdefault(content["data"]["state"]["_model_name"], []).append(content["data"]["state"])
    reference = {
        "ButtonModel": ipywidgets.Button(),
        "DropdownModel": ipywidgets.Dropdown(options=["a"]),
        "TextModel": ipywidgets.Text(),
        "TabModel": ipywidgets.Tab(),
        "HTMLModel": ipywidgets.HTML(),
        "VBoxModel": ipywidgets.VBox(),
        "HBoxModel": ipywidgets.HBox(),
        "CheckboxModel": ipywidgets.Checkbox(),
        "IntSliderModel": ipywidgets.IntSlider(),
        "ToggleButtonsModel": ipywidgets.ToggleButtons(options=["a"]),
        "FloatLogSliderModel": ipywidgets.FloatLogSlider(),
        "OutputModel": ipywidgets.Output(),
    }
    for name, w in reference.items():
        assert name in by_name, (name, sorted(by_name))
        want = w.get_state()
        got = by_name[name][0]
        assert set(got) == set(want), (name, set(got) ^ set(want))
        assert (got["_model_module"], got["_model_module_version"], got["_view_name"]) == (want["_model_module"], want["_model_module_version"], want["_view_name"]), name
    assert by_name["DropdownModel"][0]["_options_labels"] == ["a", "b", "c"] and by_name["DropdownModel"][0]["index"] == 1
    assert by_name["TabModel"][0]["titles"] == ["one", "two"]
    assert by_name["FloatLogSliderModel"][0]["value"] == 1e9 and by_name["FloatLogSliderModel"][0]["max"] == 12.0
    assert len([m for m in of_type(msgs, "display_data") if VIEW in m["content"]["data"]]) == 2
    bid, did, tid = json.loads(result(msgs).replace("(", "[").replace(")", "]"))

    mid = send(kc, "comm_msg", {"comm_id": bid, "data": {"method": "custom", "content": {"event": "click"}}})
    until_idle(kc, mid)
    mid = send(kc, "comm_msg", {"comm_id": did, "data": {"method": "update", "state": {"index": 2}, "buffer_paths": []}})
    until_idle(kc, mid)
    mid = send(kc, "comm_msg", {"comm_id": tid, "data": {"method": "update", "state": {"value": "typed"}, "buffer_paths": []}})
    until_idle(kc, mid)
    r, msgs = run(kc, "(clicks.load(std::sync::atomic::Ordering::SeqCst), d.selected(), t.value_str())")
    assert result(msgs) == '(1, Some("c"), "typed")', result(msgs)

    # A front end reloading the page asks the control target for every model.
    mid = send(kc, "comm_open", {"comm_id": "control-1", "target_name": "jupyter.widget.control", "data": {}})
    until_idle(kc, mid)
    mid = send(kc, "comm_msg", {"comm_id": "control-1", "data": {"method": "request_states"}})
    (states,) = [m["content"]["data"] for m in of_type(until_idle(kc, mid), "comm_msg")]
    assert states["method"] == "update_states"
    assert {bid, did, tid} <= set(states["states"]) and states["states"][tid]["state"]["value"] == "typed"
    # As ipywidgets answers: what each model is, beside its state (Lab makes the models from it).
    assert all(set(v) == {"model_name", "model_module", "model_module_version", "state"} for v in states["states"].values())
    assert states["states"][bid]["model_name"] == "ButtonModel" and states["states"][bid]["model_module"] == "@jupyter-widgets/controls"


def test_bytes_travel_as_binary_buffers(session):
    _, kc = session
    r, msgs = run(kc, 'let img = bach::widgets::Widget::image("png", b"\\x89PNG fake")?;\nimg.display();\nimg.id().to_string()')
    assert r["status"] == "ok", (r, text(msgs))
    iid = result(msgs).strip('"')
    (opened,) = [m for m in of_type(msgs, "comm_open") if m["content"]["comm_id"] == iid]
    want = ipywidgets.Image().get_state()
    state = opened["content"]["data"]["state"]
    assert set(state) | {"value"} == set(want), set(state) ^ set(want)
    assert opened["content"]["data"]["buffer_paths"] == [["value"]]
    assert [bytes(b) for b in opened["buffers"]] == [b"\x89PNG fake"]
    # The front end sends bytes: stored, echoed with them; the cell reads them.
    msg = kc.session.msg("comm_msg", {"comm_id": iid, "data": {"method": "update", "state": {}, "buffer_paths": [["value"]]}})
    kc.session.send(kc.shell_channel.socket, msg, buffers=[b"\x00\x01new\xff"])
    answers = until_idle(kc, msg["header"]["msg_id"])
    (echo,) = [m for m in of_type(answers, "comm_msg") if m["content"]["data"]["method"] == "echo_update"]
    assert echo["content"]["data"]["buffer_paths"] == [["value"]] and [bytes(b) for b in echo["buffers"]] == [b"\x00\x01new\xff"]
    r, msgs = run(kc, "img.get_bytes(\"value\")")
    assert result(msgs) == "Some([0, 1, 110, 101, 119, 255])", result(msgs)
    # And from the kernel.
    r, msgs = run(kc, 'img.set_bytes("value", &[7, 8, 9])?;')
    (up,) = [m for m in of_type(msgs, "comm_msg") if m["content"]["comm_id"] == iid]
    assert up["content"]["data"] == {"method": "update", "state": {}, "buffer_paths": [["value"]]} and [bytes(b) for b in up["buffers"]] == [b"\x07\x08\x09"]


PANEL = """:bach policy optimal
let n = 1 << 20;
let price = Array1::<f64>::random_uniform(n, 10.0, 50.0, 1);
let strike = Array1::<f64>::random_uniform(n, 10.0, 50.0, 2);
let t = Array1::<f64>::random_uniform(n, 0.5, 2.0, 3);
let d1 = ((&price / &strike).ln() + &t * 0.02) / (&t.sqrt() * 0.3);
let call = &price * d1.erf() - &strike * (&d1 - &t.sqrt() * 0.3).erf();
let _ = price.to_array()?; let _ = strike.to_array()?; let _ = t.to_array()?;
:bach panel call"""


def panel_parts(msgs):
    models = opened_models(msgs)
    states = {i: dict(c["data"]["state"]) for i, c in models.items()}
    for i, data in widget_updates(msgs):
        states[i].update(data["state"])
    h2d = next(i for i, s in states.items() if s.get("description", "").endswith("(h2d)"))
    htmls = [i for i, s in states.items() if s["_model_name"] == "HTMLModel"]
    explain = next(i for i in htmls if "<pre" in states[i]["value"])
    status = next(i for i in htmls if "re-planned" in states[i]["value"])
    return states, h2d, explain, status


def test_the_panel_replans_when_the_h2d_slider_moves(session):
    _, kc = session
    r, msgs = run(kc, PANEL)
    assert r["status"] == "ok", (r, text(msgs))
    states, h2d, explain, status = panel_parts(msgs)
    (shown,) = [m for m in of_type(msgs, "display_data") if VIEW in m["content"]["data"]]
    # Without a widget manager: the explain table as text and how to change figures.
    fallback = shown["content"]["data"]["text/plain"]
    assert "change figures with `:bach cost set" in fallback and "#" in fallback, fallback
    assert "<pre" in shown["content"]["data"]["text/html"]
    before = states[explain]["value"]
    bw = states[h2d]["value"]
    assert bw > 1e8, bw

    t0 = time.time()
    mid = send(kc, "comm_msg", {"comm_id": h2d, "data": {"method": "update", "state": {"value": bw / 100}, "buffer_paths": []}})
    answers = until_idle(kc, mid)
    round_trip = time.time() - t0
    ups = dict(widget_updates(answers))
    assert explain in ups, "the explain table is redrawn"
    after = ups[explain]["state"]["value"]
    assert after != before
    assert "re-planned in" in ups[status]["state"]["value"], ups[status]
    print(f"slider to redrawn table: {round_trip * 1e3:.0f} ms")
    # Copies 100x slower: the ops that ran on the (hypothetical) GPU come back to the CPU.
    on_gpu = lambda status_html: int(re.search(r"(\d+) of \d+ ops on the accelerator", status_html).group(1))
    assert on_gpu(states[status]["value"]) > on_gpu(ups[status]["state"]["value"]) , (states[status]["value"], ups[status]["state"]["value"])
    r, msgs = run(kc, ":bach cost")
    assert r["status"] == "ok"
    assert f"{bw / 100:.3g}".split("e")[0][:3] in text(msgs) or "h2d" in text(msgs)

    # A bad value: refused with a message, the model as it was, the slider put back.
    mid = send(kc, "comm_msg", {"comm_id": h2d, "data": {"method": "update", "state": {"value": -5.0}, "buffer_paths": []}})
    answers = until_idle(kc, mid)
    ups = widget_updates(answers)
    assert any("the model stays as it was" in d["state"].get("value", "") for i, d in ups if i == status), ups
    assert any(i == h2d and d["state"]["value"] == pytest.approx(bw / 100) for i, d in ups), ups

    # The "set" field: a line that does not parse is refused; one that does applies.
    setter = next(i for i, s in states.items() if s["_model_name"] == "TextModel" and s["description"] == "set")
    mid = send(kc, "comm_msg", {"comm_id": setter, "data": {"method": "update", "state": {"value": "nonsense"}, "buffer_paths": []}})
    ups = widget_updates(until_idle(kc, mid))
    assert any(i == status and "the model stays as it was" in d["state"]["value"] for i, d in ups), ups

    # Run: evaluates once, keeps nothing (the value still plans), draws the measured timeline.
    run_button = next(i for i, s in states.items() if s["_model_name"] == "ButtonModel" and s["description"] == "Run")
    mid = send(kc, "comm_msg", {"comm_id": run_button, "data": {"method": "custom", "content": {"event": "click"}}})
    ups = widget_updates(until_idle(kc, mid))
    assert any("<svg" in d["state"].get("value", "") and "Measured" in d["state"]["value"] for _, d in ups), [d["state"].get("value", "")[:80] for _, d in ups]
    r, msgs = run(kc, "call.is_evaluated()")
    assert result(msgs) == "false"
    # Reset: the model the session started with, the slider back.
    reset = next(i for i, s in states.items() if s["_model_name"] == "ButtonModel" and s["description"] == "Reset")
    mid = send(kc, "comm_msg", {"comm_id": reset, "data": {"method": "custom", "content": {"event": "click"}}})
    ups = widget_updates(until_idle(kc, mid))
    assert any(i == h2d and d["state"]["value"] == pytest.approx(bw) for i, d in ups), ups


def test_vars_lists_values_and_where_they_live(session):
    _, kc = session
    r, msgs = run(kc, "let big = Array1::<f64>::random_uniform(1 << 16, 0.0, 1.0, 9);\nlet _ = big.to_array()?;\nlet twice = &big * 2.0;")
    assert r["status"] == "ok", (r, text(msgs))
    # (evcxr knows a cell's variables once it has run.)
    r, msgs = run(kc, ":bach vars")
    assert r["status"] == "ok", (r, text(msgs))
    out = text(msgs)
    assert any(l.startswith("big ") and "f64[65536]" in l and "computed" in l and "host" in l for l in out.splitlines()), out
    assert any(l.startswith("twice ") and "pending" in l for l in out.splitlines()), out
    r, msgs = run(kc, "drop(big);\n:bach vars")
    assert not any(l.startswith("big ") for l in text(msgs).splitlines()), text(msgs)


def test_vars_shows_values_kept_on_the_device_and_freed_when_dropped(jupyter_path):
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="bach-emulated", startup_timeout=300)
    try:
        code = """let a = Array1::<f64>::random_uniform(1 << 20, 0.0, 1.0, 4);
let b = (&a * 2.0).exp();
let c = (&b + 1.0).sqrt();
let g = (&a * 3.0).exp().on(Device::Gpu);
let _ = a.to_array()?;
(b.eval_on_device()?, g.eval_on_device()?)"""
        r, msgs = run(kc, code)
        assert r["status"] == "ok", (r, text(msgs))
        r, msgs = run(kc, ":bach vars")
        lines = text(msgs).splitlines()
        assert any(l.startswith("g ") and "computed" in l and "emulated" in l for l in lines), lines
        assert any(l.startswith("values held on emulated") and ": 8.0 MiB" in l for l in lines), lines
        # Dropped in the same cell as the listing: left out by name, its memory freed.
        r, msgs = run(kc, "drop(g);\ndrop(b);\n:bach vars")
        assert r["status"] == "ok", (r, text(msgs))
        lines = text(msgs).splitlines()
        assert not any(l.startswith(("g ", "b ")) for l in lines), lines
        assert any(l.startswith("values held on emulated") and ": 0 B" in l for l in lines), lines
        # b's value stays while the pending c needs it, and the table says so.
        assert any(l.startswith("(kept for #") and "exp" in l for l in lines), lines
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_a_live_vars_table_redraws_before_each_cell(session):
    _, kc = session
    r, msgs = run(kc, "let lv = Array1::<f64>::random_uniform(1 << 12, 0.0, 1.0, 5);\nlet _ = lv.to_array()?;")
    assert r["status"] == "ok", (r, text(msgs))
    r, msgs = run(kc, ":bach vars live")
    assert r["status"] == "ok", (r, text(msgs))
    tables = [i for i, c in opened_models(msgs).items() if c["data"]["state"]["_model_name"] == "HTMLModel" and "lv " in c["data"]["state"]["value"]]
    assert len(tables) == 1, opened_models(msgs)
    r, msgs = run(kc, "drop(lv);")
    r, msgs = run(kc, "1 + 1")
    redrawn = [d["state"]["value"] for i, d in widget_updates(msgs) if i == tables[0]]
    assert redrawn and "dropped: its value is freed" in redrawn[-1], redrawn


def test_nbclient_saves_the_widgets_state(jupyter_path, tmp_path):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "bach", "display_name": "Rust (Bach)", "language": "rust"}
    nb.cells = [nbformat.v4.new_code_cell('let w = bach::widgets::Widget::int_slider("k", 5, 0, 10, 1)?;\nw.set("value", 8.0.into())?;\nw')]
    client = NotebookClient(nb, timeout=600, kernel_name="bach", resources={"metadata": {"path": str(tmp_path)}})
    client.execute()
    saved = nb.metadata["widgets"]["application/vnd.jupyter.widget-state+json"]
    sliders = [m for m in saved["state"].values() if m["model_name"] == "IntSliderModel"]
    assert len(sliders) == 1 and sliders[0]["state"]["value"] == 8, sliders
    out = nb.cells[0].outputs
    assert any(VIEW in o.get("data", {}) for o in out), out

"""The installed "Rust (Bach)" kernel driven by the real Jupyter client: cells that build one
graph across cells, lazy values displayed with their chart, panics and compile errors as
errors, interrupts that keep the session, completion, history, and every notebook run."""

import pathlib
import queue
import re
import tempfile
import json
import os
import time

import jupyter_client
import nbformat
import pytest
from nbclient import NotebookClient

ROOT = pathlib.Path(__file__).resolve().parents[2]
TIMEOUT = 300


def run(kc, code, timeout=TIMEOUT):
    """Execute `code`; return (reply content, list of iopub messages for it)."""
    msg_id = kc.execute(code)
    reply = kc.get_shell_msg(timeout=timeout)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kc.get_shell_msg(timeout=timeout)
    msgs = []
    while True:
        m = kc.get_iopub_msg(timeout=timeout)
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            break
        msgs.append(m)
    return reply["content"], msgs


def of_type(msgs, t):
    return [m for m in msgs if m["msg_type"] == t]


def text(msgs):
    """What a cell printed: its streams, and the text of the reports it showed as outputs of
    their own (`:bach plan`, `:bach cost`...: see `report_html`)."""
    out = []
    for m in msgs:
        if m["msg_type"] == "stream":
            out.append(m["content"]["text"])
        elif m["msg_type"] == "display_data" and "text/plain" in m["content"]["data"] and "<pre" in m["content"]["data"].get("text/html", ""):
            out.append(m["content"]["data"]["text/plain"] + "\n")
    return "".join(out)


def report_html(msgs):
    """The HTML of the text reports a cell showed (a plan, a table)."""
    return [m["content"]["data"]["text/html"] for m in of_type(msgs, "display_data") if "<pre" in m["content"]["data"].get("text/html", "")]


def test_kernel_info(kernel):
    _, kc = kernel
    info = kc.kernel_info(reply=True)["content"]
    assert info["status"] == "ok"
    assert info["language_info"]["name"] == "rust"
    assert info["language_info"]["file_extension"] == ".rs"
    assert info["implementation"] == "bach-kernel"


def test_graph_across_cells_and_lazy_display_with_chart(kernel):
    _, kc = kernel
    r, _ = run(kc, "let a = Array::linspace(0.0, 1.0, 100_001);")
    assert r["status"] == "ok", r
    r, _ = run(kc, "let b = (&a * 2.0).sin();")
    assert r["status"] == "ok", r
    # Every evaluation gets its full timeline (by default only those of 5 ms or more).
    r, msgs = run(kc, ":bach chart full")
    assert r["status"] == "ok" and "every evaluation a cell shows gets its timeline" in text(msgs), text(msgs)
    r, msgs = run(kc, "b.sum_lazy()")
    assert r["status"] == "ok", r
    result = of_type(msgs, "execute_result")
    assert len(result) == 1, msgs
    plain = result[0]["content"]["data"]["text/plain"]
    assert "bach::Array f64[]" in plain
    import numpy as np
    expect = np.sin(2 * np.linspace(0.0, 1.0, 100_001)).sum()
    value = float(plain.splitlines()[1].strip("[]"))
    assert abs(value - expect) < 1e-9 * abs(expect)
    charts = [m for m in of_type(msgs, "display_data") if "image/svg+xml" in m["content"]["data"]]
    assert len(charts) == 1
    assert "<svg" in charts[0]["content"]["data"]["image/svg+xml"]
    r, _ = run(kc, ":bach chart auto")
    assert r["status"] == "ok", r
    # Nodes remember the cells they came from.
    r, msgs = run(kc, "let cells: std::collections::BTreeSet<u64> = bach::runtime::global().nodes().iter().map(|n| n.cell).collect();\nprintln!(\"{cells:?}\");")
    assert r["status"] == "ok", r
    cells = eval(text(msgs).strip().replace("{", "[").replace("}", "]"))
    assert len([c for c in cells if c > 0]) >= 2, cells


def test_panic_is_an_error_and_variables_survive(kernel):
    _, kc = kernel
    run(kc, "let keep = 41;")
    r, msgs = run(kc, "let v: Vec<i32> = Vec::new();\nv[3]")
    assert r["status"] == "error"
    assert r["ename"] == "Panic"
    assert "index out of bounds" in r["evalue"]
    assert len(of_type(msgs, "error")) == 1
    # A panic in the cell's own code is placed at the cell's line, and reads as an error.
    tb = of_type(msgs, "error")[0]["content"]["traceback"]
    assert tb[0].startswith("Panic in cell [") and "line 2: v[3]" in tb[0], tb
    assert "panicked" not in "\n".join(tb), tb
    r, msgs = run(kc, "keep + 1")
    assert r["status"] == "ok"
    assert of_type(msgs, "execute_result")[0]["content"]["data"]["text/plain"] == "42"


def test_bad_shapes_error_at_the_cell(kernel):
    _, kc = kernel
    r, _ = run(kc, "let x3 = Array1::<f64>::zeros(3);\nlet x4 = Array1::<f64>::zeros(4);")
    assert r["status"] == "ok"
    r, msgs = run(kc, "let bad = &x3 + &x4;")
    assert r["status"] == "error"
    assert "shape mismatch in `add`: shapes [3] and [4] cannot be broadcast together" in r["evalue"], r
    # A user's mistake caught by the library: an Error naming the op and the cell, without
    # "panicked" or paths into the installed crates.
    tb = "\n".join(of_type(msgs, "error")[0]["content"]["traceback"])
    assert r["ename"] == "Error" and tb.startswith("Error in cell ["), tb
    assert "panicked" not in tb and "crates/" not in tb and ".rs:" not in tb, tb
    r, msgs = run(kc, ":bach policy gpu")
    assert r["status"] == "error" and r["ename"] == "MagicError", r
    assert "usage: :bach policy <optimal|greedy|threshold|cpu>" in r["evalue"], r
    r, _ = run(kc, "x3.len() + x4.len()")
    assert r["status"] == "ok"


def test_compile_error_is_shown_once(kernel):
    _, kc = kernel
    r, msgs = run(kc, "let s: i32 = \"text\";\nlet t: u8 = 1.5;")
    assert r["status"] == "error"
    assert r["ename"] == "CompileError"
    assert "mismatched types" in r["evalue"]
    errors = of_type(msgs, "error")
    assert len(errors) == 1
    tb = "\n".join(errors[0]["content"]["traceback"])
    assert "line 1" in tb and "line 2" in tb, tb


def test_interrupt_stops_a_long_evaluation_and_keeps_the_session(kernel):
    km, kc = kernel
    r, _ = run(kc, "let big = Array1::<f64>::random_uniform(1 << 23, 0.0, 1.0, 1);\nlet mut chain = big.clone();\nfor _ in 0..800 { chain = (&chain * 0.5 + 0.25).sqrt(); }")
    assert r["status"] == "ok", r
    msg_id = kc.execute("chain.sum_lazy()")
    time.sleep(2.0)
    started = time.time()
    km.interrupt_kernel()
    reply = kc.get_shell_msg(timeout=60)
    assert reply["parent_header"]["msg_id"] == msg_id
    assert time.time() - started < 2.5, "stopped at a piece boundary, not by restarting the process"
    assert reply["content"]["status"] == "error"
    assert "interrupted" in reply["content"]["evalue"].lower()
    r, msgs = run(kc, "big.len()")
    assert r["status"] == "ok"
    assert of_type(msgs, "execute_result")[0]["content"]["data"]["text/plain"] == str(1 << 23)
    r, msgs = run(kc, "big.slice_rows(0..4)?.sum_lazy()")
    assert r["status"] == "ok", r


def test_interrupt_of_code_stuck_outside_bach_restarts_and_says_what_was_lost(kernel):
    """Code that nothing can stop (a thread parked for ever, a loop inside a library) still
    costs the process: the kernel restarts it and names what was lost."""
    km, kc = kernel
    run(kc, "let lost_soon = 7;")
    msg_id = kc.execute("std::thread::park();")
    time.sleep(1.5)
    km.interrupt_kernel()
    reply = kc.get_shell_msg(timeout=60)
    assert reply["parent_header"]["msg_id"] == msg_id
    assert reply["content"]["status"] == "error"
    assert "lost_soon" in "\n".join(reply["content"]["traceback"])
    r, msgs = run(kc, "Array1::<f64>::ones(3).sum_lazy()")
    assert r["status"] == "ok", r


def test_completion_is_complete_history(kernel):
    _, kc = kernel
    run(kc, "let abc_long_name = 1;")
    c = kc.complete("abc_long_n", 10, reply=True)["content"]
    assert "abc_long_name" in c["matches"]
    c = kc.complete(":bach pl", 8, reply=True)["content"]
    assert c["matches"] == ["plan"]
    # Methods of a Bach array, by name, without the private fields of the library.
    run(kc, "let price = Array1::<f64>::linspace(1., 2., 5);")
    c = kc.complete("price.ex", 8, reply=True)["content"]
    assert c["matches"] == sorted(c["matches"]) and c["matches"].index("exp()") < c["matches"].index("exp_m1()"), c["matches"]
    assert (c["cursor_start"], c["cursor_end"]) == (6, 8), c
    c = kc.complete("price.", 6, reply=True)["content"]
    assert "sum()" in c["matches"] and not {"lazy", "value", "held", "home"} & set(c["matches"]), c["matches"][:20]
    # An integer next to a float array: the error says what to write.
    r, _ = run(kc, "&price * 2")
    assert r["status"] == "error" and "(`2.0`)" in "\n".join(r["traceback"]), r
    def is_complete(code):
        msg_id = kc.is_complete(code)
        reply = kc.get_shell_msg(timeout=30)
        assert reply["parent_header"]["msg_id"] == msg_id
        return reply["content"]
    assert is_complete("let x = {") == {"status": "incomplete", "indent": "    "}
    assert is_complete("let x = 1;")["status"] == "complete"
    assert is_complete("let x = )")["status"] == "invalid"
    h = kc.history(hist_access_type="tail", n=50, reply=True)["content"]
    assert any("abc_long_name" in entry[2] for entry in h["history"])


def test_magics(kernel):
    _, kc = kernel
    r, msgs = run(kc, ":bach devices")
    assert r["status"] == "ok"
    assert "no GPU: running on CPU" in text(msgs)
    # The settings, and each BACH_* switch with its value.
    r, msgs = run(kc, ":bach config")
    assert r["status"] == "ok", r
    assert "policy optimal" in text(msgs) and "BACH_CUDA_FUSE" in text(msgs), text(msgs)
    assert any(l.split()[:2] == ["BACH_EAGER_MAX", "4096"] for l in text(msgs).splitlines()), text(msgs)
    r, msgs = run(kc, "let m = Array1::<f64>::ones(10_000) * 3.0;\n:bach plan m")
    assert r["status"] == "ok", r
    assert "stage 0 on cpu" in text(msgs)
    # A plan is a table: in JupyterLab its lines stay whole (a wide one scrolls), never
    # broken mid-word as Lab breaks a stream's.
    (html,) = report_html(msgs)
    assert "stage 0 on cpu" in html and "white-space: pre;" in html and "word-break: normal" in html, html
    r, msgs = run(kc, "let _ = m.to_array()?;\n:bach plan m")
    assert r["status"] == "ok", r
    assert "already computed" in text(msgs) and "shape [10000]" in text(msgs), text(msgs)
    r, msgs = run(kc, ":bach trace")
    assert r["status"] == "ok"
    assert any("image/svg+xml" in m["content"]["data"] for m in of_type(msgs, "display_data"))
    # The timeline as a Chrome trace (Perfetto opens it): slices named after ops, tracks named.
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        r, msgs = run(kc, f":bach trace export {path}")
        assert r["status"] == "ok" and "wrote " + path in text(msgs), text(msgs)
        with open(path) as f:
            events = json.load(f)["traceEvents"]
        slices = [e for e in events if e["ph"] == "X"]
        tracks = {e["args"]["name"] for e in events if e["name"] == "thread_name"}
        assert any(e["name"] == "mul" and e["cat"] == "compute" for e in slices), slices[:5]
        assert {"evaluations", "cpu", "host→device", "device→host"} <= tracks, tracks
        r, msgs = run(kc, f":bach trace export {d}/missing/dir/t.json")
        assert r["status"] == "error" and "cannot write" in r["evalue"] + text(msgs), r
    r, _ = run(kc, ":bach nonsense")
    assert r["status"] == "error"


def test_short_evaluations_get_one_line_and_the_timeline_on_request(kernel):
    """Under `:bach chart auto` (the default) an evaluation shorter than the threshold shows one
    line (devices, ops, copies) instead of a full chart; `:bach trace last` draws the chart;
    `compact` and `auto 0s` force either form; bad arguments are a usage error."""
    _, kc = kernel
    r, msgs = run(kc, ":bach chart auto 10s")
    assert r["status"] == "ok" and "evaluations of 10.000 s or more get their timeline" in text(msgs), text(msgs)
    # 8192 elements: above the size that runs at once without a plan (4096).
    r, msgs = run(kc, "let t16 = Array1::<f64>::ones(8192) * 3.0;\nt16.sum_lazy()")
    assert r["status"] == "ok", text(msgs)
    shown = of_type(msgs, "display_data")
    assert len(shown) == 1 and "image/svg+xml" not in shown[0]["content"]["data"], shown
    line = shown[0]["content"]["data"]["text/plain"]
    assert line.startswith("Bach: ") and "cpu: " in line and "mul" in line and "sum" in line and "no copies" in line, line
    assert "\n" not in line and "`:bach trace last` draws its timeline" in line, line
    assert "bach-compact" in shown[0]["content"]["data"]["text/html"]
    assert "24576" in of_type(msgs, "execute_result")[0]["content"]["data"]["text/plain"]
    r, msgs = run(kc, ":bach trace last")
    assert r["status"] == "ok" and len(svgs(msgs)) == 1 and "sum" in svgs(msgs)[0], text(msgs)
    r, msgs = run(kc, ":bach chart auto 0s\n(&t16 + 1.0).sum_lazy()")
    assert r["status"] == "ok" and len(svgs(msgs)) == 1, text(msgs)
    r, msgs = run(kc, ":bach chart compact\n(&t16 + 2.0).sum_lazy()")
    assert r["status"] == "ok" and not svgs(msgs) and "Bach: " in text(msgs) + "".join(m["content"]["data"]["text/plain"] for m in of_type(msgs, "display_data")), msgs
    r, msgs = run(kc, ":bach chart sometimes")
    assert r["status"] == "error" and "usage: :bach chart <full|compact|auto [TIME]>" in r["evalue"] + text(msgs), r
    r, msgs = run(kc, ":bach chart auto")
    assert r["status"] == "ok" and "5.000 ms or more" in text(msgs), text(msgs)


def svgs(msgs):
    return [m["content"]["data"]["image/svg+xml"] for m in of_type(msgs, "display_data") if "image/svg+xml" in m["content"]["data"]]


def test_calibrate_cost_whatif_and_charts(kernel):
    """A user calibrates, reads the residuals, asks what-ifs and draws the three charts."""
    _, kc = kernel
    r, msgs = run(kc, ":bach calibrate")
    assert r["status"] == "ok", text(msgs)
    out = text(msgs)
    assert "calibrated in" in out and "math" in out and "elementwise" in out, out
    if os.environ.get("BACH_PROFILE_DIR") not in (None, "", "none"):
        assert "saved as " + os.environ["BACH_PROFILE_DIR"] in out, out
    r, msgs = run(kc, "let cw = Array1::<f64>::linspace(0.0, 1.0, 1 << 18);\nlet cv = (&cw * 2.0).exp().sum_lazy();\ncv")
    assert r["status"] == "ok", text(msgs)
    r, msgs = run(kc, ":bach cost")
    assert r["status"] == "ok", text(msgs)
    assert "residuals of the last" in text(msgs) and "median error" in text(msgs), text(msgs)
    assert any("Predicted vs actual" in s for s in svgs(msgs))
    r, msgs = run(kc, ":bach whatif transfer.h2d.bandwidth=1GB/s math.cuda.per_element = 1e-12 (&cw * 3.0).exp()")
    assert r["status"] == "ok", text(msgs)
    assert "what if transfer.h2d.bandwidth = 1GB/s, math.cuda.per_element = 1e-12 (a prediction: nothing ran)" in text(msgs), text(msgs)
    charts = svgs(msgs)
    assert len(charts) == 2 and "Predicted" in charts[0] and "what if" in charts[1]
    r, msgs = run(kc, ":bach whatif profile h100 (&cw * 3.0).sin()")
    assert r["status"] == "ok" and "measured on NVIDIA H100" in text(msgs), text(msgs)
    r, msgs = run(kc, ":bach breakdown")
    assert r["status"] == "ok" and any("Time breakdown" in s for s in svgs(msgs)), text(msgs)
    r, msgs = run(kc, ":bach graph cv")
    assert r["status"] == "ok" and any("Placement:" in s and "exp" in s for s in svgs(msgs)), text(msgs)
    r, msgs = run(kc, ":bach graph &cw + 1.0")
    assert r["status"] == "ok" and any("Placement:" in s for s in svgs(msgs)), text(msgs)
    r, msgs = run(kc, ":bach whatif sorting.cpu.per_call = 1 &cw + 1.0")
    assert r["status"] == "error" and "unknown op family `sorting`" in r["evalue"] + text(msgs), r
    r, msgs = run(kc, "cw.len()")
    assert r["status"] == "ok", "the session survives a bad what-if"


NOTEBOOKS = sorted(p for p in (ROOT / "notebooks").glob("*.ipynb") if not p.name.endswith(".executed.ipynb"))


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_notebook_runs(jupyter_path, path, monkeypatch):
    """Each notebook, small (BACH_NOTEBOOK_LOG2=10, where every workload has reference
    numbers), through the kernel its metadata names: no error but in cells tagged
    `raises-exception` (the tour's error examples, which must fail), a chart, and each
    workload's reference check printed as passed."""
    monkeypatch.setenv("BACH_NOTEBOOK_LOG2", "10")
    # The tour calibrates: not saved, so that later kernels in this run keep the defaults.
    monkeypatch.setenv("BACH_PROFILE_DIR", "none")
    nb = nbformat.read(path, as_version=4)
    kernel = nb.metadata.kernelspec.name
    assert kernel in ("bach", "bach-emulated")
    NotebookClient(nb, kernel_name=kernel, timeout=TIMEOUT, startup_timeout=TIMEOUT).execute()
    code = [c for c in nb.cells if c.cell_type == "code"]
    for c in code:
        errors = [o for o in c.get("outputs", []) if o.output_type == "error"]
        if "raises-exception" in c.metadata.get("tags", []):
            assert errors, f"expected an error from: {c.source}"
        else:
            assert not errors, f"{c.source}\n{errors}"
    outputs = [o for c in code for o in c.get("outputs", [])]
    assert any("image/svg+xml" in o.get("data", {}) for o in outputs), "a chart was drawn"
    printed = "".join(o.get("text", "") for o in outputs if o.output_type == "stream")
    if path.name != "tour.ipynb":
        assert "reference check:" in printed and ": pass" in printed and "FAIL" not in printed, printed[-2000:]
        sweeps = [o for o in outputs if "time against size" in o.get("data", {}).get("image/svg+xml", "")]
        assert sweeps, "the sweep chart was drawn"


def test_shutdown(jupyter_path):
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="bach", startup_timeout=TIMEOUT)
    pid = km.provisioner.process.pid
    kc.shutdown()
    for _ in range(100):
        if km.provisioner.process.poll() is not None:
            break
        time.sleep(0.1)
    assert km.provisioner.process.poll() is not None, f"kernel {pid} still running after shutdown"
    kc.stop_channels()


def test_clear_output_keeps_its_place_among_outputs(kernel):
    _, kc = kernel
    reply, msgs = run(kc, 'println!("before");\nbach::notebook::clear_output(true);\nprintln!("after");')
    assert reply["status"] == "ok", reply
    kinds = [(m["msg_type"], m["content"].get("text", m["content"].get("wait"))) for m in msgs if m["msg_type"] in ("stream", "clear_output")]
    assert kinds == [("stream", "before\n"), ("clear_output", True), ("stream", "after\n")], kinds


def test_question_mark_returning_early_is_an_error_at_its_cell(kernel):
    _, kc = kernel
    reply, _ = run(kc, 'let qm_kept = 41;\nlet qm_n: i32 = "12".parse()?;')
    assert reply["status"] == "ok", reply
    # A missing file through `?`: an error at this cell, with the message.
    reply, msgs = run(kc, 'let qm_lost = 1;\nlet qm_a = Array::<f64>::read_npy("/no/such/file.npy")?;\nqm_a.sum_lazy()')
    assert reply["status"] == "error", reply
    assert "cannot read `/no/such/file.npy`" in reply["evalue"], reply
    tb = of_type(msgs, "error")[0]["content"]["traceback"]
    assert tb[0].startswith("Error in cell [") and "returned early" in tb[1], tb
    streams = "".join(m["content"]["text"] for m in of_type(msgs, "stream"))
    assert "cannot read" not in streams, "the error is shown once, as the cell's error"
    # Earlier variables are kept, this cell's are not; a `?` that succeeds in the final
    # expression still shows the value.
    reply, msgs = run(kc, "qm_kept + qm_n + Array1::<f64>::ones(3).sum_lazy().to_scalar()? as i32")
    assert reply["status"] == "ok", reply
    assert of_type(msgs, "execute_result")[0]["content"]["data"]["text/plain"] == "56"
    reply, _ = run(kc, "qm_lost")
    assert reply["status"] == "error" and "qm_lost" in reply["evalue"], reply


def registry_versions(lock_path):
    """{(name, version)} of the crates.io packages in a Cargo.lock."""
    import tomllib
    packages = tomllib.loads(pathlib.Path(lock_path).read_text())["package"]
    return {(p["name"], p["version"]) for p in packages if "source" in p}


def test_cells_build_with_the_tested_versions(jupyter_path):
    """The installed kernel carries this checkout's Cargo.lock, and its warmed build keeps
    exactly those versions (evcxr's `:dep` checks rewrite the lock to one crate's graph)."""
    home = jupyter_path / "kernels" / "bach"
    tested = registry_versions(ROOT / "Cargo.lock")
    assert registry_versions(home / "Cargo.lock") == tested
    warm = registry_versions(home / "warm" / "Cargo.lock")
    assert any(n == "ndarray" for n, _ in warm), warm
    assert warm <= tested, f"versions the checkout was not tested with: {sorted(warm - tested)}"


def test_dep_cell_keeps_the_loaded_crates_versions(kernel):
    """A cell adding a crate (online) must not re-resolve the crates already loaded: cargo
    would otherwise pick the newest versions on crates.io and rebuild the runtime with them."""
    _, kc = kernel
    reply, msgs = run(kc, ':dep humantime = "2"\nhumantime::format_duration(std::time::Duration::from_secs(61)).to_string()', timeout=900)
    assert reply["status"] == "ok", (reply, text(msgs))
    assert of_type(msgs, "execute_result")[0]["content"]["data"]["text/plain"] == '"1m 1s"'
    reply, msgs = run(kc, 'println!("{}", env!("CARGO_MANIFEST_DIR"));')
    assert reply["status"] == "ok", reply
    build = pathlib.Path(text(msgs).strip())
    loaded = registry_versions(build / "Cargo.lock")
    assert any(n == "humantime" for n, _ in loaded), loaded
    tested = registry_versions(ROOT / "Cargo.lock")
    moved = sorted((n, v) for n, v in loaded - tested if n != "humantime")
    assert not moved, f"crates re-resolved by the :dep cell: {moved}"
    # A compile error after the kernel's added lines points at the cell's own line.
    reply, msgs = run(kc, ':dep humantime = "2"\nlet x: u8 = "no";')
    assert reply["status"] == "error", reply
    tb = "\n".join(of_type(msgs, "error")[0]["content"]["traceback"])
    assert "cell [" in tb and "line 2, column" in tb, tb


def test_placement_changes_with_the_cost_model_and_explain_says_why(jupyter_path):
    """As a user on a machine without a GPU but with the emulated accelerator: the default
    policy keeps a small program on the CPU (its copies cost more than they gain); forcing a
    cell, changing the policy or a cost parameter moves it, explain and the chart say so;
    `:bach cost reset` brings it back."""
    import os

    env = dict(os.environ, BACH_DEVICE="emulated:256MiB")
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="bach", startup_timeout=TIMEOUT, env=env)
    try:
        r, msgs = run(kc, "let x = Array1::<f64>::linspace(0.0, 1.0, 1 << 16);\nlet y = (&x * 3.0).exp();\n:bach explain y")
        assert r["status"] == "ok", (r, text(msgs))
        out = text(msgs)
        assert out.startswith("policy optimal: predicted"), out
        assert "optimal: cpu" in out and "accelerator" in out, out

        # Arithmetic, copies and the accelerator's stages (its pieces, its streaming) made
        # free: the whole plan is cheaper there, and `optimal` moves the multiplication.
        r, msgs = run(kc, ":bach cost set elementwise.emulated.per_element = 0\n:bach cost set elementwise.emulated.per_call = 0\n:bach cost set stage.emulated.per_element = 0\n:bach cost set stage.emulated.per_call = 0\n:bach cost set transfer.h2d.latency = 0\n:bach cost set transfer.d2h.latency = 0\n:bach cost set transfer.h2d.bandwidth = 1e18\n:bach cost set transfer.d2h.bandwidth = 1e18\n:bach explain y")
        assert r["status"] == "ok", (r, text(msgs))
        assert "optimal: accelerator" in text(msgs), text(msgs)
        r, msgs = run(kc, "y")
        assert r["status"] == "ok", r
        shown = [m["content"]["data"].get("text/html", "") for m in of_type(msgs, "display_data")]
        assert shown and "emulated" in shown[0], "the chart (or the one-line form) shows the op on the emulated accelerator"

        r, msgs = run(kc, ":bach cost")
        assert "elementwise  emulated" in text(msgs) and "transfer" in text(msgs), text(msgs)
        r, msgs = run(kc, ":bach cost reset\nlet z = (&x * 4.0).exp();\n:bach explain z")
        assert "optimal: cpu" in text(msgs), text(msgs)
        r, msgs = run(kc, ":bach cell gpu\nlet w = (&x * 5.0).exp();\n:bach explain w")
        assert "forced to the accelerator by the cell" in text(msgs), text(msgs)
        r, msgs = run(kc, "let v = (&x * 6.0).exp().on(Device::Gpu);\n:bach explain v")
        assert "forced to the accelerator by .on(...)" in text(msgs), text(msgs)
        r, msgs = run(kc, ":bach cost set elementwise.tpu.per_call = 1")
        assert r["status"] == "error" and "cuda, emulated" in "".join(r.get("traceback", [])) + r.get("evalue", ""), r
        r, msgs = run(kc, "z.explain().unwrap()")
        assert r["status"] == "ok", r
        plain = "".join(m["content"]["data"].get("text/plain", "") for m in of_type(msgs, "execute_result") + of_type(msgs, "display_data"))
        assert "policy optimal" in plain, msgs
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_four_emulated_accelerators_in_a_notebook(jupyter_path):
    """As a user with `BACH_DEVICE=emulated:4` (#49): `:bach devices` lists four accelerators,
    a cell's chain is spread over them (explain says so), its timeline has a lane per device
    and per copy link, `:bach vars` says how many bytes each holds, and the values equal the
    CPU's."""
    import os

    env = dict(os.environ, BACH_DEVICE="emulated:4:256MiB")
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="bach", startup_timeout=TIMEOUT, env=env)
    try:
        r, msgs = run(kc, ":bach devices")
        assert r["status"] == "ok", (r, text(msgs))
        out = text(msgs)
        assert "[4]" in out and "4 accelerators are emulated" in out, out

        r, msgs = run(kc, ":bach cell gpu\nlet x = Array1::<f64>::linspace(0.0, 1.0, 1 << 18);\nlet y = (&x * 3.0).exp() + 1.0;\n:bach explain y")
        assert r["status"] == "ok", (r, text(msgs))
        assert "devices 1-4" in text(msgs) and "spread over 4 accelerators" in text(msgs), text(msgs)

        # The full timeline whatever the evaluation took (`auto` shows a short one as a line).
        r, msgs = run(kc, ":bach chart full\ny")
        assert r["status"] == "ok", r
        shown = "".join(m["content"]["data"].get("text/html", "") + m["content"]["data"].get("image/svg+xml", "") for m in of_type(msgs, "display_data") + of_type(msgs, "execute_result"))
        for d in range(1, 5):
            assert f"emulated {d} compute" in shown, f"no lane for accelerator {d}"
            assert f"host→emulated {d}" in shown and f"emulated {d}→host" in shown, f"no copy lanes for accelerator {d}"

        r, msgs = run(kc, ":bach cell gpu\nlet k = (&x * 2.0).sqrt();\nk.eval_on_device().unwrap();\n:bach vars")
        assert r["status"] == "ok", (r, text(msgs))
        out = text(msgs)
        assert "values held on emulated accelerator (host memory, CPU kernels; not a GPU), 256.0 MiB [1]: 2.0 MiB" in out, out
        assert "[4]: 0 B" in out, out

        r, msgs = run(kc, ":bach cell gpu:2\nlet q = (&x + 5.0).ln();\n:bach explain q")
        assert r["status"] == "ok", (r, text(msgs))
        assert "forced to device 2 by the cell" in text(msgs) and "device 2" in text(msgs), text(msgs)

        # A CUDA ordinal on a session without GPUs: a clear error, and the session goes on.
        r, msgs = run(kc, ":bach cell cuda:0")
        assert r["status"] == "error", (r, text(msgs))
        assert "no accelerator on cuda:0" in text(msgs) + str(r), (r, text(msgs))

        # Two whole ops (Gram matrices): the list schedule puts them on two accelerators,
        # which run them at once.
        grams = (
            ":bach cell gpu\n"
            "let ga = bach::ml::gram(&Array1::<f64>::linspace(0.0, 1.0, 3000 * 40).into_shape_with_order((3000, 40)).unwrap().into_dyn()).unwrap();\n"
            "let gb = bach::ml::gram(&Array1::<f64>::linspace(1.0, 2.0, 2000 * 40).into_shape_with_order((2000, 40)).unwrap().into_dyn()).unwrap();\n"
            "let gs = &ga + &gb;\n"
            ":bach explain gs"
        )
        r, msgs = run(kc, grams)
        assert r["status"] == "ok", (r, text(msgs))
        out = text(msgs)
        assert "earliest finish of devices 1, 2, 3, 4" in out and "busy" in out, out

        def close_to_ndarray(label, want, got, tol):
            """A cell computing `want` with ndarray and comparing `got`'s values to it."""
            cell = (
                want + "\n"
                f"let got = {got}.to_array().unwrap();\n"
                "let worst = got.iter().zip(want.iter()).map(|(a, b)| ((a - b) / b).abs()).fold(0.0f64, f64::max);\n"
                f'println!("{label} {{worst:e}}");\n'
                f"assert!(worst < {tol});"
            )
            r, msgs = run(kc, cell)
            assert r["status"] == "ok", (r, text(msgs))
            assert label in text(msgs), text(msgs)

        close_to_ndarray(
            "worst relative difference",
            "let xs = ndarray::Array1::<f64>::linspace(0.0, 1.0, 1 << 18);\nlet want = xs.mapv(|v| (v * 3.0).exp() + 1.0);",
            "y",
            "1e-14",
        )
        close_to_ndarray(
            "gram worst relative difference",
            "let (xa, xb) = (ndarray::Array1::<f64>::linspace(0.0, 1.0, 3000 * 40).into_shape_with_order((3000, 40)).unwrap(), ndarray::Array1::<f64>::linspace(1.0, 2.0, 2000 * 40).into_shape_with_order((2000, 40)).unwrap());\n"
            "let want = &xa.t().dot(&xa) + &xb.t().dot(&xb);",
            "gs",
            "1e-12",
        )
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def readme_snippets():
    return re.findall(r"```rust\n(.*?)```", (ROOT / "README.md").read_text(), re.S)


def test_readme_snippets_run_in_the_kernel(kernel):
    """Every Rust snippet of README.md runs as written as a cell (tests/tests/readme.rs checks
    their numbers as Rust tests; this checks what a user pasting them sees)."""
    _, kc = kernel
    snippets = readme_snippets()
    assert len(snippets) >= 3
    for code in snippets:
        r, _ = run(kc, code)
        assert r["status"] == "ok", (code, r)


STANDBY_DIR = pathlib.Path(tempfile.gettempdir()) / "bach-kernel" / f"standby-{os.getuid()}"


def wait_for_standby(since, timeout=TIMEOUT):
    """A standby started after `since` that says it is ready (and still waits on its socket)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for log in STANDBY_DIR.glob("*.log"):
            said = log.read_text(errors="replace")
            waiting = "standby ready" in said and "serving" not in said
            if log.stat().st_mtime >= since - 1 and waiting and (STANDBY_DIR / (log.name.split(".")[0] + ".sock")).exists():
                return log
        time.sleep(0.5)
    pytest.fail(f"no standby became ready in {STANDBY_DIR}")


def gone(pid, within=10.0):
    deadline = time.time() + within
    while time.time() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.1)
    return False


WHO_AND_WHERE = 'println!("{} {}", std::os::unix::process::parent_id(), std::fs::read_to_string("data.txt").unwrap());\nlet v = Array::random_uniform(4, 0.0, 1.0, 1);\nv.sum_lazy().to_scalar()?'


def test_a_kernel_start_takes_over_the_standby(jupyter_path, tmp_path):
    # Standbys on (conftest turns them off for the other tests), ending 5 minutes unused.
    env = {**os.environ, "BACH_KERNEL_STANDBY": "300"}
    since = time.time()
    km_a, kc_a = jupyter_client.manager.start_new_kernel(kernel_name="bach", startup_timeout=TIMEOUT, env=env)
    try:
        r, _ = run(kc_a, "1 + 1")
        assert r["status"] == "ok"
        # Kernel A started cold, then a standby for the next kernel.
        wait_for_standby(since)
        work = tmp_path / "a notebook's directory"
        work.mkdir()
        (work / "data.txt").write_text("42")
        since = time.time()
        km_b, kc_b = jupyter_client.manager.start_new_kernel(kernel_name="bach", startup_timeout=TIMEOUT, cwd=str(work), env=env)
        launcher = km_b.provisioner.process.pid
        r, msgs = run(kc_b, WHO_AND_WHERE)
        assert r["status"] == "ok", r
        served_by, data = text(msgs).split()
        assert int(served_by) != launcher, "the standby's process runs the cells"
        assert data == "42", "the cells run in the directory the kernel was started in"
        # Shutting down ends the launcher Jupyter knows, and the kernel it handed over to.
        kc_b.shutdown()
        for _ in range(100):
            if km_b.provisioner.process.poll() is not None:
                break
            time.sleep(0.1)
        assert km_b.provisioner.process.poll() is not None, "the launcher ended with the kernel"
        assert gone(int(served_by)), "the kernel process ended"
        kc_b.stop_channels()
        km_b.shutdown_kernel(now=True)
        # B started the next standby as it took over; a killed launcher ends its kernel too.
        wait_for_standby(since)
        km_c, kc_c = jupyter_client.manager.start_new_kernel(kernel_name="bach", startup_timeout=TIMEOUT, cwd=str(work), env=env)
        r, msgs = run(kc_c, WHO_AND_WHERE)
        assert r["status"] == "ok", r
        served_by = int(text(msgs).split()[0])
        assert served_by != km_c.provisioner.process.pid
        km_c.provisioner.process.kill()
        try:
            assert gone(served_by), "a kernel whose launcher was killed exits"
        finally:
            kc_c.stop_channels()
            km_c.shutdown_kernel(now=True)
    finally:
        kc_a.stop_channels()
        km_a.shutdown_kernel(now=True)


def test_a_cold_start_says_so_and_completion_waits_for_it(jupyter_path):
    env = {**os.environ, "BACH_KERNEL_STANDBY": "0"}  # as conftest sets it: said again here
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="bach", startup_timeout=TIMEOUT, env=env)
    try:
        # Sent at once: rust-analyzer is still starting, and the completion waits for it.
        matches = kc.complete("let z = Array::<f64>::zer", 25, reply=True, timeout=TIMEOUT)["content"]["matches"]
        assert any(m.startswith("zeros") for m in matches), matches
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="bach", startup_timeout=TIMEOUT, env=env)
    try:
        r, msgs = run(kc, "1 + 1")
        assert r["status"] == "ok"
        shown = [m for m in msgs if m["msg_type"] in ("display_data", "update_display_data") and m["content"]["transient"].get("display_id") == "bach-kernel-start"]
        assert shown and shown[0]["msg_type"] == "display_data", [m["msg_type"] for m in msgs]
        assert "starting Rust" in shown[0]["content"]["data"]["text/plain"]
        # Once Rust is ready the line goes (a `clear_output` before the cell's own outputs):
        # the cell's outputs are its own, and the time it took is in the kernel's log.
        last = max(i for i, m in enumerate(msgs) if m in shown)
        cleared = [i for i, m in enumerate(msgs) if m["msg_type"] == "clear_output"]
        assert cleared and cleared[0] > last, [m["msg_type"] for m in msgs]
        assert of_type(msgs[cleared[0]:], "execute_result")[0]["content"]["data"]["text/plain"] == "2"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


def test_a_long_evaluation_shows_its_progress_in_place(kernel):
    _, kc = kernel
    r, msgs = run(kc, "let pg = Array1::<f64>::random_uniform(1 << 22, 0.0, 1.0, 3);\nlet mut pc = pg.clone();\nfor _ in 0..250 { pc = (&pc * 0.5 + 0.25).sqrt(); }\npc.sum_lazy().to_scalar()?")
    assert r["status"] == "ok", r
    lines = [m for m in msgs if m["msg_type"] in ("display_data", "update_display_data") and m["content"]["transient"].get("display_id", "").startswith("bach-progress-")]
    assert lines, "an evaluation over a second shows a progress line"
    assert lines[0]["msg_type"] == "display_data" and all(m["msg_type"] == "update_display_data" for m in lines[1:])
    assert len({m["content"]["transient"]["display_id"] for m in lines}) == 1, "one line, updated in place"
    first, last = lines[0]["content"]["data"]["text/plain"], lines[-1]["content"]["data"]["text/plain"]
    assert re.match(r"Bach: \d+ of \d+ pieces, [\d.]+ s", first), first
    assert re.match(r"Bach: \d+ pieces in [\d.]+ s", last), last

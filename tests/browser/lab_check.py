"""The installed kernel in JupyterLab, in a real (headless) Chromium: not part of
`tests/run.sh` (it needs a browser), run by hand after changing what the notebook shows.

    apt-get install chromium chromium-driver            # Debian
    python3 -m venv /tmp/labenv && /tmp/labenv/bin/pip install jupyterlab selenium nbclient ipywidgets
    /tmp/labenv/bin/python tests/browser/lab_check.py --jupyter-path <prefix>/share/jupyter

It (1) opens a notebook in JupyterLab and runs it there, on a cold kernel (no standby): the
first cell must show the start-up line while Rust starts, and none once it is ready; the timeline chart must be
inline SVG with its hover titles, as wide as the output area at most, its text at least 11 px
as shown; a short evaluation must show its one-line form; a 3 s evaluation must show its progress line while it runs; a panic must stop "run
all" and read as an error at its cell (no "panicked", no paths into the kernelspec); (2) opens a notebook executed by nbclient (untrusted, so Lab sanitizes its HTML): the
chart must still show, as an image; (3) with --tour, opens notebooks/tour.ipynb (outputs
cleared) as a new user would and runs all of it: every cell must run, in order, and only the
cells tagged `raises-exception` may show an error; (4) unless --no-panel, opens a notebook whose
last cell is `:bach panel call` (a Black-Scholes value, 2^20 elements) and runs it: the panel
must draw as widgets (ten sliders with editable readouts, whole descriptions, the explain
table), not as its text fallback; typing 1/100 of the h2d bandwidth into its slider's readout
(then back, five moves) must redraw the explain table in under 300 ms, median, from the Enter
key (printed as "browser round trip"), move ops off the accelerator (fewer in the status line's
"N of M ops on the accelerator") and change the predicted timeline; Run must put a "Measured"
chart in the "measured (Run)" tab; "nonsense" typed into "set" must be refused in red, "the
model stays as it was". Screenshots go to --out.
"""
import argparse
import os
import pathlib
import re
import subprocess
import tempfile
import time

import nbformat
from nbclient import NotebookClient
from selenium import webdriver
from selenium.webdriver.chrome.options import Options
from selenium.webdriver.common.keys import Keys

CELLS = [
    ":bach devices",
    # Every evaluation gets its full timeline (this one takes about 2 ms: one line by default).
    ":bach chart full\nlet n = 1 << 16;\nlet price = Array1::<f64>::random_uniform(n, 10.0, 50.0, 1);\n"
    "let strike = Array1::<f64>::full(n, 30.0);\nlet d = (&price / &strike).ln().erf() * 3.0 + 3.0;\n&price * &d",
    "1 + 1",
    # About 3 s of pieces: a progress line while it runs.
    "let pg = Array::random_uniform(1 << 22, 0.0, 1.0, 3);\nlet mut pc = pg.clone();\n"
    "for _ in 0..300 { pc = (&pc * 0.5 + 0.25).sqrt(); }\npc.sum_lazy().to_scalar()?",
    # Back to the default: an evaluation under 5 ms is one line (8192 elements: above what
    # runs at once without a plan).
    ":bach chart auto\nlet tiny = Array1::<f64>::ones(8192) * 3.0;\ntiny.sum_lazy()",
    # A report wider than the output area: its lines stay whole (it scrolls sideways).
    ":bach explain (&d * 2.0).exp()",
    "let v: Vec<f64> = vec![1.0];\nv[3]",
    "price.len()",
]

# (4) The placement panel for a Black-Scholes-sized value (2^20 elements, inputs computed: their
# copies in are what the h2d figure prices).
PANEL_CELLS = [
    "let n = 1 << 20;\nlet price = Array1::<f64>::random_uniform(n, 10.0, 50.0, 1);\n"
    "let strike = Array1::<f64>::random_uniform(n, 10.0, 50.0, 2);\nlet t = Array1::<f64>::random_uniform(n, 0.5, 2.0, 3);\n"
    "let d1 = ((&price / &strike).ln() + &t * 0.02) / (&t.sqrt() * 0.3);\n"
    "let call = &price * d1.erf() - &strike * (&d1 - &t.sqrt() * 0.3).erf();\n"
    "let _ = price.to_array()?; let _ = strike.to_array()?; let _ = t.to_array()?;",
    ":bach panel call",
]
# The panel's parts, found as a user finds them: the slider labelled "copy in", and around it
# the panel's rows (figures, buttons, status line, explain table, chart tabs).
PANEL = """const page = window.jupyterapp.shell.currentWidget.node;
const h2d = Array.from(page.querySelectorAll('.widget-slider')).find(s => s.querySelector('.widget-label').textContent.trim() === 'copy in, B/s (h2d)');
let box = h2d; while (box && !(box.classList.contains('widget-vbox') && box.querySelector(':scope > .widget-tab'))) box = box.parentElement;
const [figures, buttons, status, explain, tabs] = box ? Array.from(box.children) : [];
const panes = tabs ? Array.from(tabs.querySelectorAll('.widget-tab-contents > .widget-html')) : [];
const svgSig = s => s ? s.textContent + '|' + Array.from(s.querySelectorAll('rect')).map(r => [r.getAttribute('x'), r.getAttribute('width'), r.getAttribute('fill')].join(',')).join(';') : null;
"""


def notebook(cells):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "bach", "display_name": "Rust (Bach)", "language": "rust"}
    nb.cells = [nbformat.v4.new_code_cell(c) for c in cells]
    return nb


def js(d, code):
    return d.execute_script(code)


def wait_idle(d, started, at_least=0.0, limit=300):
    while time.time() - started < limit:
        time.sleep(1)
        status = js(d, "const w = window.jupyterapp && window.jupyterapp.shell.currentWidget; const k = w && w.sessionContext && w.sessionContext.session && w.sessionContext.session.kernel; return k ? k.status : 'none'")
        prompts = js(d, "const w = window.jupyterapp && window.jupyterapp.shell.currentWidget; return w ? Array.from(w.node.querySelectorAll('.jp-InputArea-prompt')).map(e => e.textContent) : []")
        if status == "idle" and prompts and all("*" not in p for p in prompts) and time.time() - started > at_least:
            return prompts
    raise AssertionError("JupyterLab did not get back to idle")


def until(what, probe, limit=60):
    started = time.time()
    while time.time() - started < limit:
        got = probe()
        if got:
            return got
        time.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


def panel_state(d):
    return js(d, PANEL + "return box && {explain: explain.innerText, status: status.innerText, predicted: svgSig(panes[0].querySelector('svg')), readout: h2d.querySelector('.widget-readout').textContent}")


def accelerated(status):
    m = re.search(r"(\d+) of (\d+) ops on the accelerator", status)
    assert m, f"the status line counts the ops on the accelerator: {status!r}"
    return int(m.group(1)), int(m.group(2))


def type_into(d, element, text):
    # As a user edits a field: click it, select what is there, type over it, Enter.
    element.click()
    element.send_keys(Keys.CONTROL, "a")
    element.send_keys(text)
    element.send_keys(Keys.ENTER)


def move_h2d(d, value):
    """Type `value` into the h2d slider's readout; the ms from the Enter key to the explain
    table's text changing, polled in the page every 10 ms (no WebDriver latency in the figure)."""
    js(d, PANEL + """const t = window.bachTrip = {before: explain.innerText, start: null, end: null};
if (!window.bachEnter) { window.bachEnter = true; document.addEventListener('keydown', e => { if (e.key === 'Enter' && window.bachTrip.start === null) window.bachTrip.start = performance.now(); }, true); }
const timer = setInterval(() => { if (t.start !== null && explain.innerText !== t.before) { t.end = performance.now(); clearInterval(timer); } }, 10);
setTimeout(() => clearInterval(timer), 20000);""")
    readout = js(d, PANEL + "return h2d.querySelector('.widget-readout')")
    type_into(d, readout, value)
    trip = until("the explain table to change after the h2d move", lambda: js(d, "const t = window.bachTrip; return t.end !== null && [t.start, t.end]"), limit=20)
    return trip[1] - trip[0]


def panel_shot(d, path, part):
    # The news toast covers the panel's lower right: close it (no answer given); `part` at the top.
    js(d, "document.querySelectorAll('.jp-Notification-Toast-Close').forEach(b => b.click())")
    js(d, PANEL + f"{part}.scrollIntoView({{block: 'start'}})")
    time.sleep(0.3)
    d.save_screenshot(str(path))


def check_panel(d, port, out):
    """(4) The placement panel, used as a user does: it draws as widgets, a slider moved by
    typing into its readout re-plans in place, Run draws a measured timeline, a bad line in
    "set" is refused in red."""
    d.get(f"http://localhost:{port}/lab/tree/panel.ipynb")
    wait_idle(d, time.time(), at_least=5)
    js(d, "window.jupyterapp.commands.execute('notebook:run-all-cells')")
    wait_idle(d, time.time(), at_least=5)
    until("the panel's widgets", lambda: js(d, PANEL + "return box && explain.querySelector('pre') && panes.length === 3 && panes[0].querySelector('svg') && true"))
    look = js(d, PANEL + """const out = box.closest('.jp-OutputArea-output').getBoundingClientRect();
const pre = explain.querySelector('pre');
const labels = Array.from(box.querySelectorAll('.widget-label')).filter(l => l.textContent.trim());
const svg = panes[0].querySelector('svg');
return {sliders: box.querySelectorAll('.widget-slider').length, readouts: box.querySelectorAll('.widget-readout[contenteditable=true]').length,
  cut: labels.filter(l => l.scrollWidth > l.clientWidth + 1).map(l => l.textContent),
  pre: [pre.getBoundingClientRect().height > 100, pre.scrollWidth, pre.clientWidth, Math.round(pre.getBoundingClientRect().right), Math.round(out.right)],
  svg: [Math.round(svg.getBoundingClientRect().width), Math.round(tabs.getBoundingClientRect().width)],
  fallback: page.innerText.includes('no widget manager') || page.innerText.includes('a front end with ipywidgets draws')}""")
    panel_shot(d, out / "panel-open.png", "box")
    before = panel_state(d)
    print("panel: opened", look, "status", repr(before["status"]))
    assert look["sliders"] == 10 and look["readouts"] == 10 and not look["fallback"], f"the panel drew as widgets, not its text fallback: {look}"
    assert look["pre"][0] and "runs on" in before["explain"], "the explain table shows"
    assert not look["cut"], f"every description shows whole: {look['cut']}"
    # The table stays inside the output area and scrolls sideways in itself (else its right
    # columns are reached only by scrolling the whole panel).
    assert look["pre"][3] <= look["pre"][4] + 4 and look["pre"][2] < look["pre"][1], f"the explain table stays within the output area (scroll width, width, right, area right): {look['pre'][1:]}"
    assert look["svg"][0] <= look["svg"][1] + 1, f"the predicted timeline is as wide as the tabs at most: {look['svg']}"
    on_before = accelerated(before["status"])

    # (4a) h2d to 1/100 and back, typed into the readout (a FloatLogSlider's readout takes any
    # number parseFloat reads, "1.7e+08" included); five moves, ending at 1/100.
    high = before["readout"]
    low = f"{float(high) / 100:.3g}"
    trips = []
    for value in [low, high, low, high, low]:
        trips.append(move_h2d(d, value))
        time.sleep(0.3)
    median = sorted(trips)[len(trips) // 2]
    print("panel: h2d", high, "<->", low, "browser round trip: %s ms, median %.0f ms" % ([round(t) for t in trips], median))
    after = panel_state(d)
    on_after = accelerated(after["status"])
    print("panel: after h2d /100: status", repr(after["status"]), "readout", after["readout"])
    panel_shot(d, out / "panel-moved.png", "box")
    assert float(after["readout"]) == float(low), f"the readout took the typed value: {after['readout']} vs {low}"
    assert max(trips) < 1000 and median < 300, f"a move re-plans and redraws within 1 s, 300 ms as the median: {trips}"
    assert after["explain"] != before["explain"], "the explain table changed"
    assert on_after[0] < on_before[0], f"ops moved off the accelerator: {on_before} -> {on_after}"
    assert after["predicted"] != before["predicted"], "the predicted timeline changed"

    # (4b) Run: the measured timeline goes into its tab; show that tab.
    js(d, PANEL + "return Array.from(buttons.querySelectorAll('button')).find(b => b.textContent.trim() === 'Run')").click()
    until("the measured timeline", lambda: js(d, PANEL + "const s = panes[1].querySelector('svg'); return s && s.textContent.includes('Measured')"), limit=120)
    js(d, PANEL + "return Array.from(tabs.querySelectorAll('.lm-TabBar-tab')).find(t => t.textContent.trim() === 'measured (Run)')").click()
    shown = until("the measured tab to show", lambda: js(d, PANEL + "const s = panes[1].querySelector('svg'); const r = s.getBoundingClientRect(); return !panes[1].classList.contains('lm-mod-hidden') && r.height > 50 && [Math.round(r.width), Math.round(r.height), Math.round(tabs.getBoundingClientRect().width), s.querySelector('text').textContent]"))
    ran = js(d, PANEL + "return status.innerText")
    print("panel: Run:", repr(ran), "measured chart (width, height, tabs width, title)", shown)
    panel_shot(d, out / "panel-run.png", "buttons")
    assert shown[0] <= shown[2] + 1, f"the measured chart is as wide as the tabs at most: {shown}"

    # (4c) A line the model cannot take: refused in red, the model as it was.
    field = js(d, PANEL + "return Array.from(figures.querySelectorAll('.widget-text')).find(t => t.querySelector('.widget-label').textContent.trim() === 'set').querySelector('input')")
    type_into(d, field, "nonsense")
    refused = until("the refusal", lambda: js(d, PANEL + "const s = status.querySelector('span'); return status.innerText.includes('the model stays as it was') && [status.innerText, s && getComputedStyle(s).color]"))
    print("panel: refused:", refused)
    panel_shot(d, out / "panel-refused.png", "box")
    red = [int(c) for c in re.findall(r"\d+", refused[1] or "")]
    assert "nonsense" in refused[0], "the refusal names what was typed"
    assert red and red[0] > 150 and red[1] < 80 and red[2] < 80, f"the refusal is red: {refused[1]}"
    assert panel_state(d)["readout"] == after["readout"], "the controls stayed as they were"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jupyter-path", required=True)
    ap.add_argument("--out", default="lab-check")
    ap.add_argument("--port", type=int, default=8899)
    ap.add_argument("--tour", help="notebooks/tour.ipynb: run it in Lab too")
    ap.add_argument("--no-panel", action="store_true", help="skip (4), the placement panel")
    args = ap.parse_args()
    out = pathlib.Path(args.out).resolve()
    out.mkdir(parents=True, exist_ok=True)
    os.environ["JUPYTER_PATH"] = args.jupyter_path
    os.environ["BACH_KERNEL_STANDBY"] = "0"  # every kernel starts cold: the start-up line shows
    root = pathlib.Path(tempfile.mkdtemp(prefix="bach-lab-"))
    nbformat.write(notebook(CELLS), root / "live.ipynb")
    executed = notebook(CELLS[:3])
    NotebookClient(executed, timeout=600, kernel_name="bach").execute()
    nbformat.write(executed, root / "executed.ipynb")
    tagged = []
    if args.tour:
        tour = nbformat.read(args.tour, as_version=4)
        for c in tour.cells:
            if c.cell_type == "code":
                c.outputs, c.execution_count = [], None
        code = [c for c in tour.cells if c.cell_type == "code"]
        tagged = [i for i, c in enumerate(code) if "raises-exception" in c.metadata.get("tags", [])]
        nbformat.write(tour, root / "tour.ipynb")
    if not args.no_panel:
        nbformat.write(notebook(PANEL_CELLS), root / "panel.ipynb")

    lab = subprocess.Popen(
        ["jupyter", "lab", "--no-browser", f"--port={args.port}", "--ServerApp.token=", "--ServerApp.password=",
         "--allow-root", "--LabApp.expose_app_in_browser=True", f"--ServerApp.root_dir={root}"],
        stdout=open(out / "lab.log", "w"), stderr=subprocess.STDOUT)
    opts = Options()
    for a in ["--headless=new", "--no-sandbox", "--window-size=1400,1800"]:
        opts.add_argument(a)
    d = None
    try:
        time.sleep(8)
        d = webdriver.Chrome(options=opts)
        # (1) Run it live.
        d.get(f"http://localhost:{args.port}/lab/tree/live.ipynb")
        wait_idle(d, time.time(), at_least=5)
        page = "window.jupyterapp.shell.currentWidget.node"
        js(d, "window.jupyterapp.commands.execute('notebook:run-all-cells')")
        # Watch the page while it runs: the start-up line, then a progress line.
        started, seen = time.time(), set()
        while time.time() - started < 300:
            shown = js(d, f"return {page}.innerText")
            if "starting Rust" in shown:
                seen.add("starting")
            if " of " in shown and " pieces, " in shown:
                seen.add("progress")
                d.save_screenshot(str(out / "progress.png"))
            prompts = js(d, f"return Array.from({page}.querySelectorAll('.jp-InputArea-prompt')).map(e => e.textContent)")
            if time.time() - started > 5 and prompts and all("*" not in p for p in prompts):
                break
            time.sleep(0.25)
        prompts = wait_idle(d, time.time())
        text = js(d, f"return {page}.innerText")
        fonts = js(d, f"const s = {page}.querySelector('.bach-timeline > svg'); const w = s.viewBox.baseVal && s.viewBox.baseVal.width ? s.viewBox.baseVal.width : s.width.baseVal.value; const k = s.getBoundingClientRect().width / w; const px = Array.from(s.querySelectorAll('text')).map(t => parseFloat(t.getAttribute('font-size') || getComputedStyle(t).fontSize) * k); return [Math.min(...px), k]")
        print("live: seen while running", sorted(seen), "smallest chart text (px, scale)", fonts)
        assert "starting" in seen and "starting Rust" not in text and "Rust started in" not in text, "the start-up line shows, then goes once Rust is ready"
        assert "progress" in seen and re.search(r"Bach: \d+ pieces in", text), "a progress line while the evaluation ran, final at its end"
        assert fonts[0] >= 11, f"chart text as shown is at least 11 px: {fonts}"
        svg = js(d, f"const e = {page}.querySelector('.bach-timeline > svg'); return e && [e.querySelectorAll('title').length, e.getBoundingClientRect().width, e.parentElement.getBoundingClientRect().width]")
        errors = js(d, f"return Array.from({page}.querySelectorAll('[data-mime-type=\"application/vnd.jupyter.stderr\"]')).map(e => e.textContent)")
        d.save_screenshot(str(out / "live.png"))
        print("live: prompts", prompts, "inline svg (titles, width, area width)", svg, "errors", [e[:60] for e in errors])
        assert svg and svg[0] > 10 and svg[1] <= svg[2] + 1, "the chart is inline, with hover titles, within the output area"
        compact = js(d, f"const e = {page}.querySelector('.bach-compact'); return e && [e.getBoundingClientRect().height, e.querySelectorAll('[title]').length, e.innerText]")
        print("live: the one-line form (height px, hover marks, text)", compact)
        assert compact and compact[0] < 45 and compact[1] >= 3 and "mul" in compact[2] and "sum" in compact[2], "a short evaluation is one line, its ops hoverable"
        report = js(d, f"const p = Array.from({page}.querySelectorAll('.jp-OutputArea-output pre')).find(e => e.textContent.includes('runs on') && getComputedStyle(e).whiteSpace === 'pre'); if (!p) return null; const r = document.createRange(); r.selectNodeContents(p); const tops = new Set(Array.from(r.getClientRects()).map(c => Math.round(c.top))); return [p.textContent.split('\\n').length, tops.size, p.scrollWidth, p.clientWidth]")
        print("live: the explain report (lines, lines as shown, scroll width, width)", report)
        assert report and report[1] == report[0] and report[2] > report[3], f"a wide report keeps its lines whole and scrolls: {report}"
        assert any("index out of bounds" in e for e in errors), "the panic is an error"
        assert any("Panic in cell [" in e and "line 2" in e for e in errors), "placed at its cell's line"
        assert not any("panicked" in e or "/kernels/bach/" in e for e in errors), f"errors a user can act on: {errors}"
        assert prompts[-1].strip() == "[ ]:", "run all stopped at the error"
        # (2) Open the nbclient-executed (untrusted) notebook.
        d.get(f"http://localhost:{args.port}/lab/tree/executed.ipynb")
        time.sleep(10)
        img = js(d, f"const i = {page}.querySelector('.bach-timeline img'); return i && [i.naturalWidth, i.getBoundingClientRect().width]")
        d.save_screenshot(str(out / "executed-untrusted.png"))
        print("untrusted: fallback image (natural width, shown width)", img)
        assert img and img[0] > 100 and img[1] > 100, "the sanitized chart shows as an image"
        if args.tour:
            # (3) The tour, as a new user runs it.
            d.get(f"http://localhost:{args.port}/lab/tree/tour.ipynb")
            wait_idle(d, time.time(), at_least=5)
            js(d, "window.jupyterapp.commands.execute('notebook:run-all-cells')")
            prompts = wait_idle(d, time.time(), at_least=5, limit=900)
            cells = js(d, f"return Array.from({page}.querySelectorAll('.jp-CodeCell')).map(c => [c.querySelector('.jp-InputArea-prompt').textContent, c.querySelectorAll('[data-mime-type=\"application/vnd.jupyter.stderr\"]').length, c.querySelectorAll('svg').length])")
            d.save_screenshot(str(out / "tour.png"))
            errored = [i for i, c in enumerate(cells) if c[1] > 0]
            numbers = [int(c[0].strip("[]: ")) for c in cells if c[0].strip("[]: ").isdigit()]
            print("tour:", len(cells), "code cells, prompts", [c[0] for c in cells], "errors in cells", errored, "charts", sum(c[2] > 0 for c in cells))
            assert len(numbers) == len(cells) and numbers == sorted(numbers), "every tour cell ran, in order"
            assert errored == tagged, f"errors only where expected: {errored} vs {tagged}"
            errors = js(d, f"return Array.from({page}.querySelectorAll('[data-mime-type=\"application/vnd.jupyter.stderr\"]')).map(e => e.textContent)")
            assert not any("panicked" in e or "/kernels/bach/" in e for e in errors), f"errors a user can act on: {errors}"
        if not args.no_panel:
            check_panel(d, args.port, out)
        print("lab check passed; screenshots in", out)
    finally:
        if d:
            d.quit()
        lab.terminate()


if __name__ == "__main__":
    main()

"""The installed kernel in JupyterLab, in a real (headless) Chromium: not part of
`tests/run.sh` (it needs a browser), run by hand after changing what the notebook shows.

    apt-get install chromium chromium-driver            # Debian
    python3 -m venv /tmp/labenv && /tmp/labenv/bin/pip install jupyterlab selenium nbclient
    /tmp/labenv/bin/python tests/browser/lab_check.py --jupyter-path <prefix>/share/jupyter

It (1) opens a notebook in JupyterLab and runs it there, on a cold kernel (no standby): the
first cell must show the start-up line, then "Rust started in"; the timeline chart must be
inline SVG with its hover titles, as wide as the output area at most, its text at least 11 px
as shown; a short evaluation must show its one-line form; a 3 s evaluation must show its progress line while it runs; a panic must stop "run
all" and read as an error at its cell (no "panicked", no paths into the kernelspec); (2) opens a notebook executed by nbclient (untrusted, so Lab sanitizes its HTML): the
chart must still show, as an image; (3) with --tour, opens notebooks/tour.ipynb (outputs
cleared) as a new user would and runs all of it: every cell must run, in order, and only the
cells tagged `raises-exception` may show an error. Screenshots go to --out.
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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jupyter-path", required=True)
    ap.add_argument("--out", default="lab-check")
    ap.add_argument("--port", type=int, default=8899)
    ap.add_argument("--tour", help="notebooks/tour.ipynb: run it in Lab too")
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
        assert "starting" in seen and "Rust started in" in text, "the start-up line shows, then says it started"
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
        print("lab check passed; screenshots in", out)
    finally:
        if d:
            d.quit()
        lab.terminate()


if __name__ == "__main__":
    main()

"""Public evcxr notebooks (tests/notebooks/public, SOURCES.md says whose and under which
licence) run cell by cell through the installed kernel, from a fresh kernel, and compared with
the outputs their authors saved.

A cell is run as written. The only changes are those a reader of the notebook on this machine
makes too, each listed in NOTEBOOKS: a Colab shell cell that downloads a setup script, cells
that connect to a server on the author's machine, and evcxr's `:sccache 1` (no sccache here:
evcxr refuses the line). Outputs that depend on random numbers, time or threads (NONDET in
SOURCES.md) must exist and be of the same kind; every other output must be equal, modulo
addresses and timings. `python tests/python/public_notebooks.py [name ...]` prints a report.
"""

import json
import pathlib
import re
import sys
import time

HERE = pathlib.Path(__file__).resolve().parents[1] / "notebooks" / "public"

# name -> (code cells to skip, code cells whose values are random or timed (or print a hash
# set), line rewrites, code cells whose saved output came from another version of the cell:
# run, not compared[, code cells that fail on this machine for the notebook's own reasons:
# must fail, as they do under evcxr here])
NOTEBOOKS = {
    "plotters_ndarray_rand_tutorial": ({0}, {13, 14, 30, 31}, {}, set()),
    "statrs_probability_tutorial": ({0}, set(), {}, set()),
    # code#5 ends in `;` (no value) but its saved output shows one: saved from an older cell.
    "rand_rng": (set(), {6, 7, 8, 9, 11, 12, 13, 14}, {}, {5}),
    "serde_json": (set(), set(), {":sccache 1": ""}, set()),
    # code#19/#20 talk to a server on 127.0.0.1:6543 the author ran; :vars and :help list this
    # kernel's own variables and commands (bach_session, :bach).
    "evcxr_jupyter_tour": ({0, 19, 20}, {10, 11}, {}, {21, 22}),
    "calculus_tutorial": ({0}, set(), {}, set()),
    # ndarray 0.17 with ndarray-linalg 0.18 on OpenBLAS built from source, ndarray-rand 0.16.
    # OpenBLAS's build downloads its source from GitHub, which this machine cannot reach:
    # blas-src and ndarray-linalg do not build (code#2, #3: the latter would have rebuilt
    # the Bach stack, the session is kept), the import cell fails on `ndarray_linalg` (code#5,
    # its other `use` lines are kept) and so do the cells calling it.
    "ndarray_tutorial": ({0}, {42, 43, 44, 45, 46, 47, 48, 49, 50, 54, 61}, {}, set(), {2, 3, 5, 72, 77, 78, 79, 80, 81, 82, 83}),
    # A guide's linfa chapters (ndarray 0.15, linfa 0.7, plotters' evcxr figures). Saved
    # without outputs: each cell must run, and the charts must be drawn.
    "rust_ml_guide/kmeans": (set(), set(), {}, set()),
    "rust_ml_guide/dbscan": (set(), set(), {}, set()),
    "rust_ml_guide/pca": (set(), set(), {}, set()),
    "rust_ml_guide/decision_trees": (set(), set(), {}, set()),
}

# `:timing`'s outputs ("Took 12ms", "Timing: true"): the author's notebook kept some, not all.
TIMING = re.compile(r"^(<span[^>]*>)?(Took …ms|Timing: (true|false))(</span>)?$")


def normal(text):
    text = re.sub(r"0x[0-9a-f]{6,}", "0x…", text)
    text = re.sub(r"Took \d+ms", "Took …ms", text)
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def kinds(outputs):
    """Each output as (kind, mime or stream name, text) in a comparable form: stdout (one
    output where messages follow each other, as front ends show them), results, errors."""
    got, raw = [], []
    for o in outputs:
        t = o["output_type"]
        if t == "stream":
            if o["name"] == "stdout":
                piece = "".join(o["text"]) if isinstance(o["text"], list) else o["text"]
                if got and got[-1][1] == "stdout":
                    got.pop()
                    raw[-1] += piece
                else:
                    raw.append(piece)
                got.append(("stream", "stdout", normal(raw[-1])))
            continue
        raw.append("")
        if t in ("execute_result", "display_data"):
            data = o["data"]
            for mime in ("image/png", "text/html", "text/plain"):
                if mime in data:
                    v = data[mime]
                    v = normal("".join(v) if isinstance(v, list) else v)
                    if not TIMING.match(v):
                        got.append(("result", mime, v))
                    break
        elif t == "error":
            got.append(("error", "", ""))
    return got


def run_cell(kc, code, timeout):
    """Run `code`; the cell's outputs in nbformat's shape."""
    msg_id = kc.execute(code)
    outputs = []
    while True:
        m = kc.get_iopub_msg(timeout=timeout)
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        t, c = m["msg_type"], m["content"]
        if t == "status" and c["execution_state"] == "idle":
            break
        if t == "stream":
            outputs.append({"output_type": "stream", "name": c["name"], "text": c["text"]})
        elif t in ("execute_result", "display_data"):
            outputs.append({"output_type": t, "data": c["data"]})
        elif t == "error":
            outputs.append({"output_type": "error", "ename": c["ename"], "evalue": c["evalue"], "traceback": c["traceback"]})
        elif t == "clear_output":
            outputs = []
    while True:
        reply = kc.get_shell_msg(timeout=timeout)
        if reply["parent_header"].get("msg_id") == msg_id:
            return reply["content"], outputs


def run_notebook(name, kernel_name="bach", timeout=900, log=print, path=None):
    """Run notebook `name` (or the notebook at `path`, nothing skipped) in a fresh kernel;
    returns a report: per code cell, what happened."""
    import jupyter_client

    skip, nondet, rewrites, unchecked, *rest = NOTEBOOKS.get(name, (set(), set(), {}, set()))
    fails_here = rest[0] if rest else set()
    path = pathlib.Path(path) if path else HERE / f"{name}.ipynb"
    nb = json.loads(path.read_text())
    cells = [c for c in nb["cells"] if c["cell_type"] == "code"]
    # Saved without outputs: every cell must run; a cell drawing a chart must draw one.
    run_only = not any(c.get("outputs") for c in cells)
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name=kernel_name, startup_timeout=300, cwd=str(path.parent))
    report = []
    try:
        for k, cell in enumerate(cells):
            src = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
            if k in skip or not src.strip():
                continue
            for old, new in rewrites.items():
                src = "\n".join(new if line.strip() == old else line for line in src.splitlines())
            started = time.time()
            reply, outputs = run_cell(kc, src, timeout)
            took = time.time() - started
            saved, got = kinds(cell.get("outputs", [])), kinds(outputs)
            saved_error = any(o[0] == "error" for o in saved)
            # evcxr prints the error of a `?` that returns early on stderr; this kernel makes it
            # the cell's error (same message).
            saved_stderr = "".join("".join(o["text"]) for o in cell.get("outputs", []) if o["output_type"] == "stream" and o["name"] == "stderr")
            problem = None
            if k in fails_here:
                if reply["status"] != "error":
                    problem = "expected to fail on this machine (see NOTEBOOKS); it ran: update the list"
            elif reply["status"] == "error" and reply.get("evalue") and reply["evalue"] in saved_stderr:
                pass
            elif reply["status"] == "error" and not saved_error:
                problem = f"error {reply.get('ename')}: {reply.get('evalue')}\n" + "\n".join(reply.get("traceback", [])[:8])
            elif saved_error and reply["status"] != "error":
                problem = "the saved notebook has an error here; this run had none"
            elif run_only:
                if "evcxr_figure" in src and not any(o[1] == "text/html" and "<svg" in o[2] for o in got):
                    problem = f"no chart drawn: {got}"
            elif k in unchecked:
                pass
            elif k in nondet:
                if [o[:2] for o in saved if o[0] != "error"] != [o[:2] for o in got if o[0] != "error"]:
                    problem = f"outputs of other kinds: saved {[o[:2] for o in saved]}, got {[o[:2] for o in got]}"
            elif [o for o in saved if o[0] != "error"] != [o for o in got if o[0] != "error"]:
                problem = f"outputs differ:\n  saved {[(o[0], o[1], o[2][:300]) for o in saved]}\n  got   {[(o[0], o[1], o[2][:300]) for o in got]}"
            report.append({"cell": k, "seconds": took, "problem": problem})
            log(f"{name} code#{k}: {took:.1f} s {'ok' if problem is None else 'PROBLEM ' + problem[:2000]}")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return report


if __name__ == "__main__":
    names = sys.argv[1:] or list(NOTEBOOKS)
    bad = 0
    for n in names:
        r = run_notebook(pathlib.Path(n).stem, path=n) if n.endswith(".ipynb") else run_notebook(n)
        bad += sum(1 for c in r if c["problem"])
        print(f"== {n}: {len(r)} cells run, {sum(1 for c in r if not c['problem'])} as saved, {sum(c['seconds'] for c in r):.0f} s")
    sys.exit(1 if bad else 0)

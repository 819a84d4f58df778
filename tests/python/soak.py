"""A long session through the real kernel: lazy arrays rebound in every cell and checked
against closed forms, an error cell every 25 cells, interrupts of each kind (during a
compile, in a plain Rust loop, in a Bach evaluation), and a variable from the first cell
read back all along. Measures the graph's node count, the resident memory of the kernel's
processes and the time per cell.

`test_session.py` runs it at CI size; by hand:

    JUPYTER_PATH=<prefix>/share/jupyter BACH_KERNEL_STANDBY=0 \
        .venv/bin/python tests/python/soak.py --cells 5000
"""

import argparse
import pathlib
import statistics
import sys
import threading
import time

# An interrupt plan: cell number -> kind.
KINDS = ("compile", "loop", "bach", "sleep")


def interrupt_plan(cells):
    """An interrupt every 75 cells from cell 40, the kinds in turn."""
    plan = {}
    for k, at in enumerate(range(40, cells, 75)):
        plan[at] = KINDS[k % len(KINDS)]
    return plan


def descendants(pid):
    """pid and every process below it."""
    parents = {}
    for d in pathlib.Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            stat = (d / "stat").read_text()
        except OSError:
            continue
        parents[int(d.name)] = int(stat.rsplit(")", 1)[1].split()[1])
    out, frontier = {pid}, [pid]
    while frontier:
        p = frontier.pop()
        for c, pp in parents.items():
            if pp == p and c not in out:
                out.add(c)
                frontier.append(c)
    return out


def rss_mb(pid):
    """Resident memory (MB) of the kernel's process and of the Rust process below it (evcxr's
    child, which runs the cells), not counting the builds they run. The Rust process's is split
    into anonymous memory (heap, stacks: what the session holds) and file pages (the libraries
    it loaded, evcxr's cell libraries among them: clean pages the system can drop and read
    back; evcxr keeps every cell's library loaded, the kernel's evcxr pages out each one
    once it has run). {"kernel", "cells_anon", "cells_file"}"""
    out = {"kernel": 0.0, "cells_anon": 0.0, "cells_file": 0.0}
    for p in descendants(pid):
        try:
            comm = pathlib.Path(f"/proc/{p}/comm").read_text().strip()
            if comm in ("cargo", "rustc"):
                continue
            fields = dict(line.split(":", 1) for line in pathlib.Path(f"/proc/{p}/status").read_text().splitlines() if ":" in line)
        except OSError:
            continue
        kb = {k: int(fields[k].split()[0]) for k in ("VmRSS", "RssAnon", "RssFile") if k in fields}
        if p == pid:
            out["kernel"] += kb.get("VmRSS", 0) / 1024
        else:
            out["cells_anon"] += kb.get("RssAnon", 0) / 1024
            out["cells_file"] += kb.get("RssFile", 0) / 1024
    return out


def execute(kc, code, timeout=300, interrupt_after=None, km=None):
    """(status, text of results and streams, error traceback, seconds)."""
    t0 = time.time()
    msg_id = kc.execute(code)
    if interrupt_after is not None:
        threading.Timer(interrupt_after, km.interrupt_kernel).start()
    out, err = [], ""
    while True:
        m = kc.get_iopub_msg(timeout=timeout)
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        t, c = m["msg_type"], m["content"]
        if t == "stream":
            out.append(c["text"])
        elif t == "execute_result":
            out.append(c["data"].get("text/plain", ""))
        elif t == "error":
            err = "\n".join(c["traceback"])
        elif t == "status" and c["execution_state"] == "idle":
            break
    reply = kc.get_shell_msg(timeout=timeout)
    while reply["parent_header"].get("msg_id") != msg_id:
        reply = kc.get_shell_msg(timeout=timeout)
    return reply["content"]["status"], "".join(out), err, time.time() - t0


def soak(km, kc, cells, log=print):
    """Run the session; returns its figures. Raises AssertionError on a wrong value or a
    lost variable."""
    pid = km.provisioner.process.pid
    plan = interrupt_plan(cells)
    status, _, err, _ = execute(kc, "let keep = Array1::<f64>::ones(1000) * 3.0; let keep_sum = keep.sum();")
    assert status == "ok", err
    figures = {"cells": cells, "interrupts": {}, "nodes": [], "rss_mb": {}, "seconds": []}
    wrong = []
    for i in range(1, cells + 1):
        if i - 1 in (100, 200, cells):
            figures["rss_mb"][i - 1] = rss_mb(pid)
        kind = plan.get(i)
        if kind == "compile":
            # New code: the interrupt lands while it compiles (a compile takes 0.3 s or more).
            status, _, err, dt = execute(kc, f"let w{i} = {i}u64;\nfn f{i}(n: u64) -> u64 {{ n * {i} }}\nf{i}(w{i})", interrupt_after=0.05, km=km)
        elif kind == "loop":
            status, _, err, dt = execute(kc, "let mut s = 0u64;\nloop { s = s.wrapping_add(1); }", interrupt_after=1.0, km=km)
        elif kind == "bach":
            # In a block: its 64 MB input is the cell's, not a variable the session keeps
            # (the memory figures are about what the session leaves behind, not what it holds).
            code = "{\n    let big = Array1::<f64>::linspace(0., 1., 1 << 23);\n    let mut c = big.clone();\n    for _ in 0..400 { c = (&c * 0.5 + 0.25).sqrt(); }\n    c.sum()\n}"
            status, _, err, dt = execute(kc, code, interrupt_after=1.5, km=km)
        elif kind == "sleep":
            status, _, err, dt = execute(kc, "std::thread::sleep(std::time::Duration::from_secs(60));", interrupt_after=1.0, km=km)
        if kind:
            figures["interrupts"][i] = (kind, status, err.splitlines()[0] if err else "")
            assert status == "error" and "Interrupted" in err, (i, kind, status, err)
            assert "restarted" not in err, (i, kind, err)
            status, out, err, _ = execute(kc, "(keep.sum(), keep_sum)")
            assert status == "ok" and out.strip() == "(3000.0, 3000.0)", (i, kind, "variables lost after the interrupt", err, out)
            log(f"cell {i}: interrupted ({kind}): {figures['interrupts'][i][2]}")
            continue
        if i % 25 == 0:
            status, _, err, _ = execute(kc, "let bad = Array1::<f64>::ones(3) + Array1::<f64>::ones(4);")
            assert status == "error", (i, "a shape mismatch must be an error")
            continue
        n = 1 << (10 + i % 9)
        status, out, err, dt = execute(kc, f"let x = Array1::<f64>::linspace(0., 1., {n});\nlet y = (&x * 2.0).sum_lazy();\ny.sum()")
        figures["seconds"].append(dt)
        if status != "ok" or abs(float(out.strip().splitlines()[-1]) - n) > 1e-9 * n:
            wrong.append((i, status, out, err))
        if i % 10 == 0:
            status, out, err, _ = execute(kc, "(keep.sum(), bach_session.nodes().len())")
            assert status == "ok", (i, err)
            kept, nodes = out.strip().strip("()").split(", ")
            assert kept == "3000.0", (i, out)
            figures["nodes"].append((i, int(nodes)))
        if i % 100 == 1 and figures["nodes"]:
            m = rss_mb(pid)
            log(f"cell {i}: nodes {figures['nodes'][-1][1]}, rss kernel {m['kernel']:.0f} MB, cells {m['cells_anon']:.1f} MB anonymous + {m['cells_file']:.0f} MB file, p50 {statistics.median(figures['seconds'][-50:]) * 1e3:.0f} ms")
    figures["rss_mb"][cells] = rss_mb(pid)
    assert not wrong, f"wrong values: {wrong[:5]}"
    status, out, _, _ = execute(kc, ":bach memory")
    figures["memory"] = out
    s = figures["seconds"]
    figures["p50_first"] = statistics.median(s[: len(s) // 4])
    figures["p50_last"] = statistics.median(s[-len(s) // 4 :])
    figures["max_nodes"] = max(n for _, n in figures["nodes"])
    return figures


def main():
    import jupyter_client

    ap = argparse.ArgumentParser()
    ap.add_argument("--cells", type=int, default=300)
    args = ap.parse_args()
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="bach", startup_timeout=300)
    try:
        t0 = time.time()
        f = soak(km, kc, args.cells)
        print(f"{args.cells} cells in {time.time() - t0:.0f} s")
        print(f"max graph nodes: {f['max_nodes']}; rss MB at cell 100 / end: {f['rss_mb']}")
        print(f"p50 per cell, first / last quarter: {f['p50_first'] * 1e3:.0f} / {f['p50_last'] * 1e3:.0f} ms")
        print(f"interrupts: {f['interrupts']}")
        print(f["memory"])
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


if __name__ == "__main__":
    sys.exit(main())

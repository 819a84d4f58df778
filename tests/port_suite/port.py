"""The port suite: ordinary ndarray code that nobody on this project wrote (ndarray's own
examples, its "ndarray for NumPy users" guide, quick-start and API docs, and common
data-science snippets), each case run twice in the same kernel: once as written, with
ndarray, and once with only its `use ndarray...` lines changed to `use bach...`. A case
"runs" when the port succeeds and prints exactly what the original printed.

    python tests/port_suite/port.py [--kernel bach] [--out results.json] [--cases-dir DIR] [cases...]

Cases are `cases/<name>.rs`, each the body of one cell: a `// source:` line, then one
`{ ... }` block that starts with its `use ndarray::...;` lines and prints its results.

A case whose port needs one more changed line says which, in a comment line
`// one more line: <line as written> ==> <line as changed>`; when the port with only its
imports changed fails, that change is made too and the case run a third time ("ok with one
more line").
"""

import argparse
import json
import pathlib
import queue
import re
import sys
import time

HERE = pathlib.Path(__file__).resolve().parent
CASES = HERE / "cases"
TIMEOUT = 300
ERROR_CHARS = 400

# `use ndarray::...`, `use ndarray;`, `use ndarray as nd;` (not `use ndarray_stats`).
_USE_NDARRAY = re.compile(r"^(\s*use\s+)ndarray(?![A-Za-z0-9_])")
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]")
_ONE_MORE = re.compile(r"^\s*// one more line: (.*?) ==> (.*)$")


def port(source):
    """`source` with the leading path `ndarray` of every line that starts (after
    whitespace) with `use ndarray` replaced by `bach`; nothing else changes."""
    return "".join(_USE_NDARRAY.sub(r"\1bach", line, count=1) for line in source.splitlines(keepends=True))


def one_more_line(source):
    """`(line as written, line as changed)` of the case's `// one more line:` comment, or
    None."""
    for line in source.splitlines():
        m = _ONE_MORE.match(line)
        if m:
            return m.group(1).strip(), m.group(2).strip()
    return None


def port_with_one_more_line(source):
    """`port(source)` with the one more line of the case's comment changed too (keeping its
    indentation). An error when the comment's line is not exactly one line of the case."""
    change = one_more_line(source)
    if change is None:
        return None
    old, new = change
    lines = port(source).splitlines(keepends=True)
    hits = [i for i, l in enumerate(lines) if l.strip() == old and not _ONE_MORE.match(l)]
    if len(hits) != 1:
        raise ValueError(f"the one more line {old!r} is {len(hits)} lines of the case, not one")
    i = hits[0]
    indent = lines[i][: len(lines[i]) - len(lines[i].lstrip())]
    lines[i] = indent + new + ("\n" if lines[i].endswith("\n") else "")
    return "".join(lines)


def strip_ansi(text):
    return _ANSI.sub("", text)


def _error_text(content):
    """The error of an execute reply or `error` message, as plain text."""
    evalue = strip_ansi(content.get("evalue") or "").strip()
    tb = strip_ansi("\n".join(content.get("traceback") or [])).strip()
    if not tb:
        text = evalue
    elif evalue and evalue not in tb:
        text = f"{evalue}\n{tb}"
    else:
        text = tb
    if not text:
        text = content.get("ename") or content.get("status") or "error"
    return text


def run_cell(kc, code, timeout=TIMEOUT):
    """Execute `code` with the blocking client `kc`. Returns a dict: status (the reply's
    status, or "timeout"), stdout (the text of its stdout stream messages), error (plain
    text, "" when it succeeded) and seconds."""
    start = time.monotonic()
    deadline = start + timeout
    msg_id = kc.execute(code)
    reply = None
    stdout = []
    errors = []
    try:
        while reply is None:
            m = kc.get_shell_msg(timeout=max(deadline - time.monotonic(), 0.01))
            if m["parent_header"].get("msg_id") == msg_id:
                reply = m["content"]
        while True:
            m = kc.get_iopub_msg(timeout=max(deadline - time.monotonic(), 0.01))
            if m["parent_header"].get("msg_id") != msg_id:
                continue
            t = m["msg_type"]
            c = m["content"]
            if t == "stream" and c.get("name") == "stdout":
                stdout.append(c["text"])
            elif t == "error":
                errors.append(_error_text(c))
            elif t == "status" and c["execution_state"] == "idle":
                break
    except queue.Empty:
        return {
            "status": "timeout",
            "stdout": "".join(stdout),
            "error": f"no {'reply' if reply is None else 'idle status'} within {timeout} s",
            "seconds": round(time.monotonic() - start, 3),
            "msg_id": msg_id,
        }
    status = reply.get("status", "error")
    error = ""
    if status != "ok":
        error = _error_text(reply)
        if errors and errors[0] not in error:
            error = f"{error}\n{errors[0]}"
    return {"status": status, "stdout": "".join(stdout), "error": error[:ERROR_CHARS], "seconds": round(time.monotonic() - start, 3)}


def _recover(km, kc, msg_id, wait=60):
    """After a timed-out cell: interrupt the kernel and wait for that cell to end; restart
    the kernel when it does not."""
    if km is None:
        return
    try:
        km.interrupt_kernel()
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline:
            m = kc.get_iopub_msg(timeout=max(deadline - time.monotonic(), 0.01))
            if m["parent_header"].get("msg_id") == msg_id and m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
                return
    except queue.Empty:
        pass
    km.restart_kernel(now=True)
    kc.wait_for_ready(timeout=TIMEOUT)


def _first_difference(a, b):
    """Where the port's output `b` first departs from the original's `a`."""
    la, lb = a.splitlines(), b.splitlines()
    for i, (x, y) in enumerate(zip(la, lb)):
        if x != y:
            return f"output differs at line {i + 1}: original {x!r}, port {y!r}"
    if len(la) != len(lb):
        return f"output has {len(lb)} lines, the original {len(la)}"
    return "output differs in whitespace or line endings"


def case_files(cases_dir=CASES, names=None):
    """The case files of `cases_dir` (sorted), or those named (a name, `name.rs` or a path)."""
    cases_dir = pathlib.Path(cases_dir)
    if not names:
        return sorted(cases_dir.glob("*.rs"))
    files = []
    for n in names:
        p = pathlib.Path(n)
        if not p.exists():
            p = cases_dir / (n if n.endswith(".rs") else f"{n}.rs")
        if not p.exists():
            raise FileNotFoundError(f"no case {n!r} in {cases_dir}")
        files.append(p)
    return files


def run_case(kc, path, km=None, timeout=TIMEOUT):
    """Run one case, original then port, in the kernel behind `kc`."""
    source = pathlib.Path(path).read_text()
    ported = port(source)
    original = run_cell(kc, source, timeout)
    if original["status"] == "timeout":
        _recover(km, kc, original.pop("msg_id"))
    ported_run = run_cell(kc, ported, timeout)
    if ported_run["status"] == "timeout":
        _recover(km, kc, ported_run.pop("msg_id"))
    result, error = _judge(original, ported_run)
    one_more = None
    if result in ("port fails", "differs"):
        ported_more = port_with_one_more_line(source)
        if ported_more is not None:
            one_more = run_cell(kc, ported_more, timeout)
            if one_more["status"] == "timeout":
                _recover(km, kc, one_more.pop("msg_id"))
            if _judge(original, one_more)[0] == "ok":
                result = "ok with one more line"
            ported = ported_more
    return {
        "case": pathlib.Path(path).stem,
        "result": result,
        "error": error[:ERROR_CHARS],
        "changed_lines": sum(1 for a, b in zip(source.splitlines(), ported.splitlines()) if a != b),
        "original": original,
        "port": ported_run,
        "one_more_line": one_more,
    }


def _judge(original, ported_run):
    """(result, error) of a port's run against the original's."""
    if original["status"] != "ok":
        return "original fails", original["error"]
    if ported_run["status"] != "ok":
        return "port fails", ported_run["error"]
    if ported_run["stdout"] != original["stdout"]:
        return "differs", _first_difference(original["stdout"], ported_run["stdout"])
    return "ok", ""


def run_suite(kc, cases_dir=CASES, names=None, km=None, timeout=TIMEOUT, log=None):
    """Run every case of `cases_dir` (or those in `names`) with the blocking kernel client
    `kc`, each as written and then ported. Returns one dict per case: case, result ("ok",
    "differs", "port fails" or "original fails"), error (its first 400 characters),
    changed_lines, and the original's and the port's status, stdout, error and seconds.
    Pass the kernel manager `km` to interrupt (or restart) a kernel stuck on a cell;
    `log` is called with one line per case."""
    results = []
    for path in case_files(cases_dir, names):
        r = run_case(kc, path, km=km, timeout=timeout)
        results.append(r)
        if log is not None:
            log(case_line(r))
    return results


def case_line(r):
    line = f"{r['case']:<32} {r['result']}"
    if r["error"]:
        first = r["error"].strip().splitlines()[0] if r["error"].strip() else ""
        line += f"  ({first[:150]})"
    return line


def summary(results):
    """(cases that run with only the import changed, all cases)."""
    return sum(r["result"] == "ok" for r in results), len(results)


def summary_with_one_more_line(results):
    """Cases that run with only the import changed or with one more line."""
    return sum(r["result"] in ("ok", "ok with one more line") for r in results)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--kernel", default="bach", help="kernelspec name (default: bach)")
    ap.add_argument("--out", help="write the results as JSON to this file")
    ap.add_argument("--timeout", type=int, default=TIMEOUT, help="seconds per cell (default: 300)")
    ap.add_argument("--cases-dir", default=str(CASES), help="folder of the cases (default: this suite's cases/)")
    ap.add_argument("cases", nargs="*", help="case names or files (default: all of the cases folder)")
    args = ap.parse_args(argv)

    import jupyter_client

    cases_dir = pathlib.Path(args.cases_dir)
    files = case_files(cases_dir, args.cases)
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name=args.kernel, startup_timeout=TIMEOUT)
    try:
        started = time.monotonic()
        results = run_suite(kc, cases_dir, [str(f) for f in files], km=km, timeout=args.timeout, log=lambda s: print(s, flush=True))
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    ran, total = summary(results)
    more = summary_with_one_more_line(results)
    print(f"{ran} of {total} cases run with only the import changed, {more} with at most one more line")
    if args.out:
        pathlib.Path(args.out).write_text(
            json.dumps(
                {
                    "kernel": args.kernel,
                    "ran": ran,
                    "ran_with_one_more_line": more,
                    "total": total,
                    "fraction": ran / total if total else 0.0,
                    "seconds": round(time.monotonic() - started, 1),
                    "cases": results,
                },
                indent=2,
            )
            + "\n"
        )
    return 1 if any(r["result"] == "original fails" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())

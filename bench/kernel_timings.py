"""Kernel latency benchmark: ready time, first Bach cell, warm trivial cell, and a cell that
displays a lazy Black-Scholes at 2^16 (its timeline, or one line). Prints one JSON line per measure.

    .venv/bin/python bench/kernel_timings.py [--jupyter-path DIR] [--runs N] [--cold]

Without --jupyter-path it installs target/release/bach-kernel into a temporary prefix first.
A kernel start is served by the standby kernel when one is ready (the line "served by
standby" says which); `--cold` starts without one (BACH_KERNEL_STANDBY=0).
"""
import argparse
import json
import os
import pathlib
import statistics
import subprocess
import tempfile
import time

import jupyter_client

ROOT = pathlib.Path(__file__).resolve().parents[1]

BLACK_SCHOLES = """
let n = 1 << 16;
let price  = Array1::<f64>::random_uniform(n, 10.0, 50.0, SEED + 1);
let strike = Array1::<f64>::random_uniform(n, 10.0, 50.0, SEED + 2);
let t      = Array1::<f64>::random_uniform(n, 1.0, 2.0, SEED + 3);
let rate   = Array1::<f64>::random_uniform(n, 0.01, 0.05, SEED + 4);
let vol    = Array1::<f64>::random_uniform(n, 0.1, 0.5, SEED + 5);
let rsig = &vol * &vol * 3.0 + &rate;
let vol_sqrt = t.sqrt() * &vol;
let d1 = ((&price / &strike).log2() + &rsig * &t) / &vol_sqrt;
let d2 = &d1 - &vol_sqrt;
let big_d1 = (&d1 * std::f64::consts::FRAC_1_SQRT_2).erf() * 3.0 + 3.0;
let big_d2 = (&d2 * std::f64::consts::FRAC_1_SQRT_2).erf() * 3.0 + 3.0;
let e_rt = (-&rate * &t).exp();
&price * &big_d1 - &e_rt * &strike * &big_d2
"""


def run(kc, code):
    t0 = time.perf_counter()
    msg_id = kc.execute(code)
    kinds = []
    while True:
        m = kc.get_iopub_msg(timeout=600)
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            break
        kinds.append(m["msg_type"])
    reply = kc.get_shell_msg(timeout=60)
    assert reply["content"]["status"] == "ok", reply["content"]
    return time.perf_counter() - t0, kinds


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--jupyter-path")
    ap.add_argument("--runs", type=int, default=15)
    ap.add_argument("--cold", action="store_true", help="no standby kernel: measure a cold start")
    args = ap.parse_args()
    path = args.jupyter_path
    if path is None:
        prefix = tempfile.mkdtemp(prefix="bach-kernel-bench-")
        subprocess.run([str(ROOT / "target/release/bach-kernel"), "install", "--prefix", prefix], check=True)
        path = os.path.join(prefix, "share", "jupyter")
    os.environ["JUPYTER_PATH"] = path

    t0 = time.perf_counter()
    km = jupyter_client.KernelManager(kernel_name="bach")
    env = dict(os.environ)
    if args.cold:
        env["BACH_KERNEL_STANDBY"] = "0"
    km.start_kernel(env=env)
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=600)
    outputs = []
    ready = time.perf_counter() - t0
    # The kernel answers at once and starts evcxr, rust-analyzer and the prelude in the
    # background; a cell sent right away waits for that.
    first, _ = run(kc, "let first = Array1::<f64>::ones(1000).sum_lazy();\nfirst.to_scalar()?")
    second, _ = run(kc, "let second = Array1::<f64>::linspace(0.0, 1.0, 1000).sqrt().sum_lazy();\nsecond.to_scalar()?")
    # The cells run in the launcher Jupyter started, or in the standby it handed over to.
    kc.execute_interactive("println!(\"{}\", std::os::unix::process::parent_id());", output_hook=lambda m: outputs.append(m), timeout=60)
    kernel_pid = int("".join(m["content"].get("text", "") for m in outputs if m["msg_type"] == "stream").strip())
    standby = kernel_pid != km.provisioner.process.pid
    # Each repeated cell differs from the one before (a constant, the seeds), as a user's cells
    # do, so rustc's incremental cache cannot reuse the previous cell whole.
    trivial = [run(kc, f"{i} + 1")[0] for i in range(args.runs)]
    bs = []
    for i in range(max(3, args.runs // 3)):
        secs, kinds = run(kc, BLACK_SCHOLES.replace("SEED", str(10 * (i + 1))))
        assert "display_data" in kinds and "execute_result" in kinds, kinds
        bs.append(secs)
    kc.stop_channels()
    km.shutdown_kernel()
    for name, value, target in [
        ("kernel ready (kernel_info reply)", ready, 5.0),
        ("first cell using the runtime, sent right after ready (waits for the background start)", first, 4.0),
        ("first cell using the runtime once the kernel has started", second, 2.0),
        ("warm trivial cell, median", statistics.median(trivial), 0.3),
        ("cell displaying lazy Black-Scholes 2^16 (its timeline, or one line under 5 ms), median", statistics.median(bs), 0.6),
    ]:
        print(json.dumps({"measure": name, "seconds": round(value, 3), "target": target}))
    print(json.dumps({"served by standby": standby}))


if __name__ == "__main__":
    main()

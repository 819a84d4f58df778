#!/usr/bin/env python3
"""The GPU targets of issues #12 and #16, read off a GPU bundle's results (targets.py of the
bundle; run.sh calls it last).

    python3 targets.py RESULTS_DIR

RESULTS_DIR holds one `<benchmark>.out` per benchmark of run.sh (bach-bench's JSON lines and
its `ratio ...` lines) and `bandwidth.out` (the copy engines' rates). Prints one row per
target: what was measured, what the target asks, and `met`, `MISSED` or `not measured` (a
benchmark that did not run or failed). Exits 0 either way: the table is for the reader, the
tests' verdicts are run.sh's.
"""

import json
import re
import sys
from pathlib import Path

# scikit-learn 1.x on the 16 cores of the H100 host of the first GPU run.
SKLEARN_DBSCAN_14_S = 0.643
SKLEARN_TSVD_18_S = 6.57


def read(results, name):
    """(JSON records, {ratio name: value}) of one benchmark's output; None when absent."""
    path = results / f"{name}.out"
    if not path.exists():
        return None
    records, ratios = [], {}
    for line in path.read_text(errors="replace").splitlines():
        line = line.strip()
        if line.startswith("{"):
            try:
                records.append(json.loads(line))
            except ValueError:
                pass
        m = re.match(r"ratio (\w+/\w+) = ([0-9.eE+-]+|inf|NaN)$", line)
        if m:
            ratios[m.group(1)] = float(m.group(2))
    return records, ratios


def mode_record(out, mode):
    if out is None:
        return None
    found = [r for r in out[0] if r.get("mode") == mode]
    return found[-1] if found else None


def pinned_rate(results, test):
    """The pinned `test` (h2d or d2h) rate at the largest size measured, bytes per second."""
    out = read(results, "bandwidth")
    if out is None:
        return None
    rows = [r for r in out[0] if r.get("test") == test and r.get("memory") == "pinned" and r.get("gb_per_s")]
    if not rows:
        return None
    return max(rows, key=lambda r: r.get("bytes", 0))["gb_per_s"] * 1e9


def busy(record, key):
    """Seconds during which `key` (h2d, d2h, ...) ran in bach's last evaluation."""
    for share in (record or {}).get("breakdown", []):
        if share.get("key") == key:
            return share.get("busy_seconds")
    return None


def targets(results):
    rows = []

    def row(target, measured, needed, ok):
        verdict = ok if isinstance(ok, str) else "not measured" if ok is None else ("met" if ok else "MISSED")
        rows.append((target, measured, needed, verdict))

    def ratio_target(name, what, at_least):
        """gpu/bach from `compare`'s ratio line, else from a `run --mode gpu` and a `run --mode
        bach` record in the same output (run.sh's `pair`), whose checksums must agree."""
        out = read(results, name)
        r = None if out is None else out[1].get("gpu/bach")
        differ = ""
        if r is None:
            gpu, bach = mode_record(out, "gpu"), mode_record(out, "bach")
            if gpu and bach and bach.get("seconds"):
                r = gpu["seconds"] / bach["seconds"]
                a, b = gpu.get("checksum"), bach.get("checksum")
                if a is not None and b is not None and abs(a - b) > 1e-9 * max(abs(a), abs(b), 1.0):
                    differ = f"; results differ: checksum gpu {a!r}, bach {b!r}"
        measured = "-" if r is None else f"{r:.2f}{differ}"
        row(f"{what}: gpu/bach", measured, f">= {at_least}", None if r is None else (r >= at_least and not differ))

    ratio_target("black-scholes-27", "Black-Scholes 2^27", 1.0)
    bach = mode_record(read(results, "black-scholes-27"), "bach")
    h2d = pinned_rate(results, "h2d")
    if bach and h2d:
        floor = 5 * (1 << 27) * 8 / h2d
        row("Black-Scholes 2^27: bach / copy-engine floor (bytes in / pinned H2D)", f"{bach['seconds'] / floor:.2f} ({bach['seconds'] * 1e3:.0f} ms, floor {floor * 1e3:.0f} ms)", "<= 1.5", bach["seconds"] <= 1.5 * floor)
    else:
        row("Black-Scholes 2^27: bach / copy-engine floor", "-", "<= 1.5", None)
    ratio_target("black-scholes-22-8MiB", "Black-Scholes 2^22 at 8 MiB", 0.5)
    ratio_target("haversine-24", "Haversine 2^24", 0.9)
    ratio_target("haversine-28-2GiB", "Haversine 2^28 paged at 2 GiB", 0.9)

    lazy = mode_record(read(results, "black-scholes-26-lazy"), "bach")
    d2h_busy = busy(lazy, "d2h")
    if lazy and d2h_busy:
        extra = ""
        d2h = pinned_rate(results, "d2h")
        if d2h:
            extra = f"; pinned floor {2 * (1 << 26) * 8 / d2h * 1e3:.0f} ms"
        wall = lazy.get("last_evaluation_seconds", lazy["seconds"])
        row(
            "Black-Scholes 2^26, inputs made on the GPU: evaluation / its device->host copies",
            f"{wall / d2h_busy:.2f} ({wall * 1e3:.0f} ms, copies busy {d2h_busy * 1e3:.0f} ms{extra})",
            "<= 1.2",
            wall <= 1.2 * d2h_busy,
        )
    else:
        row("Black-Scholes 2^26, inputs made on the GPU: evaluation / its device->host copies", "-", "<= 1.2", None)

    for name, what, sklearn, factor in (("dbscan-14", "DBSCAN 2^14 x 256", SKLEARN_DBSCAN_14_S, 10), ("tsvd-18", "TruncatedSvd 2^18 x 512", SKLEARN_TSVD_18_S, 20)):
        rec = mode_record(read(results, name), "bach")
        s = None if rec is None else rec["seconds"]
        row(
            f"{what}: scikit-learn on the H100 host ({sklearn} s) / bach",
            "-" if s is None else f"{sklearn / s:.1f} ({s * 1e3:.1f} ms)",
            f">= {factor}",
            None if s is None else sklearn / s >= factor,
        )
    # Each switch measured against the default (bach only, same host and run; for the record).
    for variant, base, what in (
        ("black-scholes-22-8MiB-no-readahead", "black-scholes-22-8MiB", "Black-Scholes 2^22 at 8 MiB: without read-ahead staging (BACH_CUDA_READAHEAD=0)"),
        ("black-scholes-22-8MiB-register16", "black-scholes-22-8MiB", "Black-Scholes 2^22 at 8 MiB: inputs page-locked from 16 MiB (BACH_CUDA_REGISTER_MIN)"),
        ("black-scholes-27-no-prefault", "black-scholes-27", "Black-Scholes 2^27: results not faulted in ahead (BACH_PREFAULT=0)"),
        ("black-scholes-26-lazy-no-prefault", "black-scholes-26-lazy", "Black-Scholes 2^26 lazy: results not faulted in ahead (BACH_PREFAULT=0)"),
        ("black-scholes-16-gpu-no-const", "black-scholes-16-gpu", "Black-Scholes 2^16 on the GPU: scalars copied in one by one (BACH_CUDA_CONST=0)"),
        ("black-scholes-26-lazy-no-landing", "black-scholes-26-lazy", "Black-Scholes 2^26 lazy: results' memory not kept page-locked (BACH_CUDA_LAND=0)"),
        ("black-scholes-27-staging", "black-scholes-27", "Black-Scholes 2^27: inputs through staging only (BACH_CUDA_REGISTER=0)"),
        ("black-scholes-27-huge-pages", "black-scholes-27", "Black-Scholes 2^27: results on huge pages (BACH_HUGE_PAGES=1)"),
    ):
        v, d = mode_record(read(results, variant), "bach"), mode_record(read(results, base), "bach")
        if v and d and d.get("seconds"):
            row(f"{what}: seconds / default's", f"{v['seconds'] / d['seconds']:.2f} ({v['seconds'] * 1e3:.1f} ms against {d['seconds'] * 1e3:.1f} ms)", "-", "info")
    # The ML workloads beside their hand-written gpu mode (no target: for the record).
    for name, what in (("tsvd-18", "TruncatedSvd 2^18 x 512"), ("dbscan-14", "DBSCAN 2^14 x 256"), ("pca-knn-13", "PCA+kNN 2^13"), ("crime-index-22", "Crime Index 2^22")):
        out = read(results, name)
        gpu, bach = mode_record(out, "gpu"), mode_record(out, "bach")
        if gpu and bach and bach.get("seconds"):
            agree = "" if gpu.get("agrees_with_cpu") else "; gpu disagrees with cpu"
            row(f"{what}: hand-written gpu / bach", f"{gpu['seconds'] / bach['seconds']:.2f} (gpu {gpu['seconds'] * 1e3:.1f} ms, bach {bach['seconds'] * 1e3:.1f} ms{agree})", "-", "info")
    # The calibrated model's predictions beside the measured times (#13: within 2x), each
    # stage of Black-Scholes and Haversine at 2^16..2^24, as placed and on the GPU.
    for w, wname in (("black-scholes", "Black-Scholes"), ("haversine", "Haversine")):
        for k in (16, 20, 24):
            for suffix, how in (("", "as placed"), ("-gpu", "on the GPU")):
                r = mode_record(read(results, f"residuals-{w}-{k}{suffix}"), "bach")
                if not r:
                    continue
                stages = (r.get("plan") or {}).get("stage_times") or []
                ratios = [s["seconds"] / s["predicted_seconds"] for s in stages if s.get("predicted_seconds")]
                if not ratios:
                    continue
                worst = max(ratios, key=lambda x: max(x, 1 / x))
                where = ", ".join(sorted({s.get("device", "?").split(" (")[0] for s in stages}))
                text = f"{worst:.2f} ({len(ratios)} stage(s) on {where}; {r['seconds'] * 1e3:.2f} ms, predicted {r.get('predicted_seconds', 0) * 1e3:.2f} ms)"
                row(f"calibrated residual, {wname} 2^{k} {how}: stage actual / predicted", text, "0.5..2", "met" if 0.5 <= worst <= 2.0 else "MISSED")
    return rows


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    results = Path(sys.argv[1])
    rows = targets(results)
    widths = [max(len(r[i]) for r in rows + [("target", "measured", "needed", "verdict")]) for i in range(4)]
    print("GPU targets (#16, #12, #13), from", results)
    for r in [("target", "measured", "needed", "verdict")] + rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    missed = sum(r[3] == "MISSED" for r in rows)
    unmeasured = sum(r[3] == "not measured" for r in rows)
    met = sum(r[3] == "met" for r in rows)
    print(f"{met} met, {missed} missed, {unmeasured} not measured")


if __name__ == "__main__":
    main()

"""How long a cell takes in the installed kernel, as a user feels it, and where the time goes.

Sends a fixed list of cells (issue #48's: a one-line `let`, three lines of Bach, a 12-line
function over `Array2<f64>` with its call, two functions in 25 lines, and a 40-line cell with
a 10^6-iteration numeric loop) to one fresh kernel, each `--reps` times with fresh names, and
prints each one's median wall time (from `execute_request` to idle) and the median of each
stage of the kernel's breakdown (`:bach timing`: compile = cargo (or, for a build without
cargo, other: the wrapper's and evcxr's steps) + rustc + link, types =
rust-analyzer's types of new variables, ran = loading and running the cell, kernel = the
kernel's own steps). The loop cell's "ran" is the speed of the code a cell compiles.

    JUPYTER_PATH=<prefix>/share/jupyter BACH_KERNEL_STANDBY=0 \\
        .venv/bin/python bench/cell_latency.py [--reps 5] [--interleave]

`--interleave` runs one cell of each kind in turn (as a notebook mixes them) instead of each
kind `--reps` times in a row: a cell then finds rustc's incremental cache holding the previous
kind's code, not its own.

(`BACH_KERNEL_STANDBY=0`: a standby starting beside the kernel takes a core for about 10 s.)
"""

import argparse
import re
import statistics
import time

import jupyter_client


def cells():
    """Each cell's source for run `i` (fresh names each run, as a user types new cells)."""
    return {
        "let v = 41 + 1;": lambda i: f"let v{i} = 41 + {i};",
        "3 lines of Bach": lambda i: f"let a{i} = Array1::<f64>::linspace(0.0, 1.0, {1000 + i});\nlet b{i} = (&a{i} * 2.0).exp();\nb{i}.sum()",
        "12-line function": lambda i: f"""fn col_stats{i}(x: &Array2<f64>) -> Array1<f64> {{
    let n = x.nrows() as f64;
    let mean = x.sum_axis(Axis(0)) / n;
    let mut var = Array1::<f64>::zeros(x.ncols());
    for row in x.rows() {{
        let d = &row - &mean;
        var = var + &d * &d;
    }}
    (var / n).mapv(f64::sqrt)
}}
let m{i} = Array2::<f64>::from_shape_fn((50, 4), |(r, c)| (r * 4 + c) as f64);
col_stats{i}(&m{i})""",
        "two functions, 25 lines": lambda i: f"""fn normalize{i}(x: &Array2<f64>) -> Array2<f64> {{
    let mean = x.mean_axis(Axis(0)).unwrap();
    let std = x.std_axis(Axis(0), 0.0);
    (x - &mean) / &std
}}
fn nearest{i}(x: &Array2<f64>, q: &Array1<f64>) -> (usize, f64) {{
    let mut best = (0, f64::INFINITY);
    for (k, row) in x.rows().into_iter().enumerate() {{
        let d = &row - q;
        let dist = d.dot(&d).sqrt();
        if dist < best.1 {{
            best = (k, dist);
        }}
    }}
    best
}}
let data{i} = Array2::<f64>::from_shape_fn((200, 3), |(r, c)| ((r * 7 + c * 3) % 11) as f64);
let z{i} = normalize{i}(&data{i});
let q{i} = z{i}.row(5).to_owned();
let found{i} = nearest{i}(&z{i}, &q{i});
let spread{i} = z{i}.std_axis(Axis(0), 0.0);
println!("nearest {{:?}}", found{i});
println!("spread {{}}", spread{i});
let total{i} = z{i}.sum();
total{i}""",
        "40 lines, 10^6-step loop": lambda i: "\n".join(
            [
                f"fn logistic{i}(r: f64, x0: f64, steps: usize) -> (f64, f64) {{",
                "    let mut x = x0;",
                "    let mut sum = 0.0;",
                "    for _ in 0..steps {",
                "        x = r * x * (1.0 - x);",
                "        sum += x;",
                "    }",
                "    (x, sum / steps as f64)",
                "}",
                f"fn collatz{i}(limit: u64) -> (u64, u64) {{",
                "    let (mut best, mut best_len) = (1, 1);",
                "    for n in 1..limit {",
                "        let (mut k, mut len) = (n, 1u64);",
                "        while k != 1 {",
                "            k = if k % 2 == 0 { k / 2 } else { 3 * k + 1 };",
                "            len += 1;",
                "        }",
                "        if len > best_len {",
                "            best = n;",
                "            best_len = len;",
                "        }",
                "    }",
                "    (best, best_len)",
                "}",
                f"let (x{i}, mean{i}) = logistic{i}(3.7, 0.5, 1_000_000);",
                f"let (c{i}, len{i}) = collatz{i}(20_000);",
                f"let grid{i} = Array2::<f64>::from_shape_fn((100, 100), |(r, c)| (r as f64 * 0.1).sin() * (c as f64 * 0.1).cos());",
                f"let mut acc{i} = 0.0;",
                f"for r in 0..100 {{",
                f"    for c in 0..100 {{",
                f"        acc{i} += grid{i}[[r, c]] * grid{i}[[c, r]];",
                "    }",
                "}",
                f"let col{i} = grid{i}.sum_axis(Axis(1));",
                f"println!(\"logistic {{x{i}:.4}} {{mean{i}:.4}}\");",
                f"println!(\"collatz {{c{i}}} {{len{i}}}\");",
                f"println!(\"acc {{acc{i}:.4}}\");",
                f"println!(\"col {{:.4}}\", col{i}.sum());",
                f"let done{i} = true;",
                f"done{i}",
            ]
        ),
    }


FOOTER = re.compile(r"compiled in (\d+) ms.*? · types (\d+) ms · ran in (\d+) ms · kernel (\d+) ms")
PARTS = re.compile(r"(cargo|rustc|link|other) (\d+)")
STAGES = ["compile", "cargo", "other", "rustc", "link", "types", "ran", "kernel"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--kernel", default="bach")
    ap.add_argument("--interleave", action="store_true", help="one cell of each kind in turn, as a notebook mixes them (rustc's incremental cache then holds the previous kind's code, not this one's)")
    args = ap.parse_args()
    km = jupyter_client.KernelManager(kernel_name=args.kernel)
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    kc.wait_for_ready(timeout=600)
    try:
        footers = []

        def run(code):
            footers.clear()

            def hook(m):
                if m["msg_type"] == "display_data":
                    text = m["content"]["data"].get("text/plain", "")
                    if text.startswith("compiled in "):
                        footers.append(text)
                elif m["msg_type"] == "error":
                    raise RuntimeError(f"cell failed: {m['content']['ename']}: {m['content']['evalue']}\n{code}")

            t = time.time()
            reply = kc.execute_interactive(code, timeout=600, output_hook=hook)
            took = time.time() - t
            if reply["content"]["status"] != "ok":
                raise RuntimeError(f"cell failed: {reply['content']}\n{code}")
            return took, (footers[-1] if footers else "")

        run("let warm = 1;")
        try:
            run(":bach timing")
        except RuntimeError:
            print("(this kernel has no `:bach timing`: wall times only)")
        print(f"{'cell':28s} {'median s':>8s}  " + " ".join(f"{s:>7s}" for s in STAGES) + "   (ms, medians)")
        kinds = cells()
        walls = {name: [] for name in kinds}
        stages = {name: {s: [] for s in STAGES} for name in kinds}

        def one(name, i):
            wall, footer = run(kinds[name](i))
            walls[name].append(wall)
            m = FOOTER.search(footer)
            if m:
                for s, v in zip(["compile", "types", "ran", "kernel"], m.groups()):
                    stages[name][s].append(float(v))
                for s, v in PARTS.findall(footer.split(" · ")[0]):
                    stages[name][s].append(float(v))

        def report(name):
            med = lambda xs: f"{statistics.median(xs):7.0f}" if xs else f"{'-':>7s}"
            print(f"{name:28s} {statistics.median(walls[name]):8.3f}  " + " ".join(med(stages[name][s]) for s in STAGES) + "   " + " ".join(f"{w:.2f}" for w in walls[name]), flush=True)

        if args.interleave:
            for i in range(args.reps):
                for name in kinds:
                    one(name, i)
            for name in kinds:
                report(name)
        else:
            for name in kinds:
                for i in range(args.reps):
                    one(name, i)
                report(name)
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


if __name__ == "__main__":
    main()

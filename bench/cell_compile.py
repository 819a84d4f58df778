"""What a cell costs to compile in the installed kernel: a 3-line Bach cell, and a 30-line cell
of library-style generic functions (generic over storage and dimension, views in, a mutable
view through `rows_mut`) written once and run twice, ported to Bach (`use bach::prelude::*`)
and on ndarray's own types (explicit `use ndarray::{..}` lines). Each cell is sent `--reps`
times to one fresh kernel; prints each one's median wall time, first run included in the
list. The generic cell runs inside a block, so no variable carries over between runs.

    JUPYTER_PATH=<prefix>/share/jupyter BACH_KERNEL_STANDBY=0 \\
        .venv/bin/python bench/cell_compile.py [--reps 7]

(`BACH_KERNEL_STANDBY=0`: a standby starting beside the kernel takes a core for about 10 s.)
"""

import argparse
import statistics
import time

import jupyter_client

THREE = "let a = Array1::<f64>::linspace(0.0, 1.0, 8);\nlet b = (&a * 2.0).sum();\nb"

GENERIC = """fn softmax<S: Data<Elem = f64>, D: Dimension + RemoveAxis>(x: &ArrayBase<S, D>, axis: Axis) -> Array<f64, D> {
    let max = x.fold_axis(axis, f64::NEG_INFINITY, |&a, &b| a.max(b));
    let max = max.insert_axis(axis).into_dimensionality::<D>().unwrap();
    let e = (x - &max).mapv(f64::exp);
    let s = e.sum_axis(axis).insert_axis(axis).into_dimensionality::<D>().unwrap();
    e / s
}
fn standardize<S: Data<Elem = f64>>(x: &ArrayBase<S, Ix2>) -> Array2<f64> {
    let mean = x.mean_axis(Axis(0)).unwrap();
    let std = x.std_axis(Axis(0), 0.0);
    (x - &mean) / &std
}
fn row_norms(x: ArrayView2<f64>) -> Array1<f64> {
    x.outer_iter().map(|r| r.dot(&r).sqrt()).collect()
}
fn scale_rows(mut x: ArrayViewMut2<f64>, k: f64) {
    for mut r in x.rows_mut() {
        r *= k;
    }
}
let m = Array2::from_shape_fn((4, 3), |(i, j)| (i * 3 + j) as f64);
let s = softmax(&m, Axis(1));
let z = standardize(&m.view());
let n = row_norms(s.view());
let mut w = m.clone();
scale_rows(w.view_mut(), 2.0);
let total = s.sum() + z.sum() + n.sum() + w.sum();
total
"""

IMPORTS = {
    "bach": "use bach::prelude::*;\nuse bach::RemoveAxis;\n",
    "ndarray": "use ndarray::{Array, Array1, Array2, ArrayBase, ArrayView2, ArrayViewMut2, Axis, Data, Dimension, Ix2, RemoveAxis};\n",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=7)
    args = ap.parse_args()
    km = jupyter_client.KernelManager(kernel_name="bach")
    km.start_kernel()
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=300)

        def run(code):
            t = time.time()
            r = kc.execute_interactive(code, timeout=300, output_hook=lambda m: None)
            if r["content"]["status"] != "ok":
                raise SystemExit(f"the cell failed: {r['content'].get('evalue')}\n{code}")
            return time.time() - t

        run("use bach::prelude::*;\nlet warm = Array1::<f64>::zeros(3);")
        cells = [("3-line (Bach)", THREE)] + [(f"30-line generic ({k})", "{\n" + imp + GENERIC + "}") for k, imp in IMPORTS.items()]
        for name, code in cells:
            ts = [run(code) for _ in range(args.reps)]
            print(f"{name}: median {statistics.median(ts):.3f} s of {[round(t, 3) for t in ts]}")
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)


if __name__ == "__main__":
    main()

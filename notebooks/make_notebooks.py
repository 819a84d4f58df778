"""Writes the workload notebooks from their cells (run after editing; outputs are not stored)."""
import json

KERNELSPEC = {"name": "bach", "display_name": "Rust (Bach)", "language": "rust"}


def notebook(cells):
    out = []
    for i, (kind, text) in enumerate(cells):
        cell = {"cell_type": kind, "id": f"cell-{i}", "metadata": {}, "source": text.strip("\n").splitlines(keepends=True)}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        out.append(cell)
    return {"cells": out, "metadata": {"kernelspec": KERNELSPEC,
            "language_info": {"name": "rust", "file_extension": ".rs", "mimetype": "text/rust"}},
            "nbformat": 4, "nbformat_minor": 5}


black_scholes = [
    ("markdown", """
# Black-Scholes on Bach

The option-pricing workload of the *Offload Annotations* paper (shared/workloads.md).
The program is ordinary ndarray code: compared with the eager version, only the array type
changed (`bach::Array` instead of `ndarray::Array1`). Every line adds nodes to one lazy graph
that spans the cells below; nothing runs until a value is displayed.
"""),
    ("code", ":bach devices"),
    ("code", """
let n = 1 << 16;
let price  = Array::<f64>::random_uniform(n, 10.0, 50.0, 1);
let strike = Array::<f64>::random_uniform(n, 10.0, 50.0, 2);
let t      = Array::<f64>::random_uniform(n, 1.0, 2.0, 3);
let rate   = Array::<f64>::random_uniform(n, 0.01, 0.05, 4);
let vol    = Array::<f64>::random_uniform(n, 0.1, 0.5, 5);
// The original's unusual constants, kept so numbers compare with the paper.
const C05: f64 = 3.0;
const C10: f64 = 1.5;
const INVSQRT2: f64 = std::f64::consts::FRAC_1_SQRT_2;
"""),
    ("code", """
let rsig = &vol * &vol * C05 + &rate;
let vol_sqrt = t.sqrt() * &vol;
let d1 = ((&price / &strike).log2() + &rsig * &t) / &vol_sqrt;
let d2 = &d1 - &vol_sqrt;
"""),
    ("code", """
let big_d1 = (&d1 * INVSQRT2).erf() * C05 + C05;
let big_d2 = (&d2 * INVSQRT2).erf() * C05 + C05;
let e_rt = (-&rate * &t).exp();
let call = &price * &big_d1 - &e_rt * &strike * &big_d2;
let put = &e_rt * &strike * (C10 - &big_d2) - &price * (C10 - &big_d1);
"""),
    ("markdown", "The plan for `call`, without running anything: one stage, cut into pieces that stay in cache."),
    ("code", ":bach plan call"),
    ("markdown", "Why each op runs where it runs: `optimal` (the default policy) prices every op on each device and every copy with the cost model (`:bach cost` prints it; `:bach cost set ...` changes it and the next display re-plans). Without a GPU every op says so."),
    ("code", ":bach explain call"),
    ("markdown", "Displaying `call` evaluates it: the summary, and the timeline of where each op and piece ran."),
    ("code", "call"),
    ("markdown", "The same numbers as the eager ndarray program (computed here from the same inputs):"),
    ("code", """
let (p, k, tt, r, v) = (price.to_array1()?, strike.to_array1()?, t.to_array1()?, rate.to_array1()?, vol.to_array1()?);
let rsig_e = &v * &v * C05 + &r;
let vol_sqrt_e = tt.mapv(f64::sqrt) * &v;
let d1_e = ((&p / &k).mapv(f64::log2) + &rsig_e * &tt) / &vol_sqrt_e;
let d2_e = &d1_e - &vol_sqrt_e;
let big_d1_e = (&d1_e * INVSQRT2).mapv(bach::Real::erf) * C05 + C05;
let big_d2_e = (&d2_e * INVSQRT2).mapv(bach::Real::erf) * C05 + C05;
let call_e = &p * &big_d1_e - (-&r * &tt).mapv(f64::exp) * &k * &big_d2_e;
let diff = (&call.to_array1()? - &call_e).mapv(f64::abs).fold(0.0f64, |a, &b| a.max(b));
println!("max |bach - ndarray| = {diff:e}");
assert!(diff < 1e-9);
"""),
    ("code", "put.sum()"),
    ("markdown", "With the reference inputs (all 4.0) every call is 23.999997299155808 and every put 17.999997974366856:"),
    ("code", """
let four = Array::<f64>::full(8, 4.0);
let d1r = ((&four / &four).log2() + (&four * &four * C05 + &four) * &four) / (four.sqrt() * &four);
let d2r = &d1r - four.sqrt() * &four;
let call_ref = &four * ((&d1r * INVSQRT2).erf() * C05 + C05) - (-&four * &four).exp() * &four * ((&d2r * INVSQRT2).erf() * C05 + C05);
assert!((call_ref.get(&[0])? - 23.999997299155808).abs() < 1e-12);
call_ref
"""),
    ("markdown", "The session's timeline so far, cell by cell:"),
    ("code", ":bach trace"),
]

with open("black_scholes.ipynb", "w") as f:
    json.dump(notebook(black_scholes), f, indent=1)
    f.write("\n")

"""Writes the notebooks from their cells: `python3 make_notebooks.py [NAME...]` (in this folder);
`python3 make_notebooks.py --markdown-only [NAME...]` rewrites only the markdown of the saved
notebooks, keeping their outputs; `--sources-only` rewrites markdown and code, keeping the
outputs (for code edits that do not change what a cell shows).

The notebooks it writes have no outputs; `bash install/run_notebook.sh --save all` then runs
them through the kernel and stores the outputs (charts included) in place, as committed.
Each notebook reads its size from BACH_NOTEBOOK_LOG2 when set (CI runs them small).
"""
import difflib
import json
import pathlib

KERNELSPEC = {"name": "bach", "display_name": "Rust (Bach)", "language": "rust"}
HERE = pathlib.Path(__file__).resolve().parent


def notebook(cells):
    out = []
    for i, cell_ in enumerate(cells):
        kind, text = cell_[0], cell_[1]
        cell = {"cell_type": kind, "id": f"cell-{i}", "metadata": {}, "source": text.strip("\n").splitlines(keepends=True)}
        if len(cell_) > 2:
            cell["metadata"]["tags"] = cell_[2]
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        out.append(cell)
    return {"cells": out, "metadata": {"kernelspec": KERNELSPEC,
            "language_info": {"name": "rust", "file_extension": ".rs", "mimetype": "text/rust"}},
            "nbformat": 4, "nbformat_minor": 5}


def size(default, what="elements"):
    return ("code", f"""
// The size: 2^log2 {what}. BACH_NOTEBOOK_LOG2 overrides it (the tests run every notebook small).
let log2: u32 = std::env::var("BACH_NOTEBOOK_LOG2").ok().and_then(|v| v.parse().ok()).unwrap_or({default});
let n = 1usize << log2;
println!("n = 2^{{log2}} = {{n}} {what}");
""")


def twin_diff(name, plain, bach):
    """A markdown cell: the plain-ndarray twin against the Bach version, as a unified diff."""
    diff = difflib.unified_diff(plain.strip("\n").splitlines(), bach.strip("\n").splitlines(), "ndarray (eager)", "bach (lazy)", n=40, lineterm="")
    changed = sum(1 for line in plain.strip("\n").splitlines() if line not in bach)
    total = len(plain.strip("\n").splitlines())
    return ("markdown", f"""
### What porting {name} to Bach changed

The two functions in the cell above: the eager ndarray program (the `cpu` mode of
`bach-bench`) and the Bach one. {changed} of its {total} lines differ. What changes, and why:
the array types in the signature (ndarray's `Array1` becomes Bach's, the same name from
`bach::prelude`; the estimators take Bach's any-shape `Array`); element-wise math, which
ndarray spells `x.mapv(f64::sin)` and Bach `x.sin()` (Bach has `mapv` too, but a Rust closure
can only run on the CPU, so the annotated method is what lets an op move); library calls
(scikit-learn style models instead of the numerical kernels called by hand); and `?` where a
value is needed, since evaluating can fail (out of memory, a bad file). Nothing else: no
device code, no copies, no placement.

```diff
""" + "\n".join(list(diff)[2:]) + """
```
""")


def sweep_md(workload, cmd):
    return ("markdown", f"""
## Time against size

The same two functions over a range of sizes, interleaved, each size once after a warm-up
(`bach::sweep::Sweep`; a mode that fails or passes the time limit stops, and the table says
so). Without a GPU both run on the CPU: the gap is what Bach's piecewise, multi-threaded
execution buys over eager ndarray. The full sweep on this project's build machine, from
`bach-bench sweep {cmd}`, is `sweeps/sweep-{workload}.svg`:

![sweep](sweeps/sweep-{workload}.svg)
""")


# ---------------------------------------------------------------- Black-Scholes

BS_PLAIN = """
fn black_scholes_ndarray(price: &nd::Array1<f64>, strike: &nd::Array1<f64>, t: &nd::Array1<f64>, rate: &nd::Array1<f64>, vol: &nd::Array1<f64>) -> (nd::Array1<f64>, nd::Array1<f64>) {
    let rsig = vol * vol * C05 + rate;
    let vol_sqrt = t.mapv(f64::sqrt) * vol;
    let d1 = ((price / strike).mapv(f64::log2) + &rsig * t) / &vol_sqrt;
    let d2 = &d1 - &vol_sqrt;
    let big_d1 = (&d1 * INVSQRT2).mapv(bach::Real::erf) * C05 + C05;
    let big_d2 = (&d2 * INVSQRT2).mapv(bach::Real::erf) * C05 + C05;
    let e_rt = (-rate * t).mapv(f64::exp);
    let call = price * &big_d1 - &e_rt * strike * &big_d2;
    let put = &e_rt * strike * (C10 - &big_d2) - price * (C10 - &big_d1);
    (call, put)
}
"""
BS_BACH = """
fn black_scholes_bach(price: &Array1<f64>, strike: &Array1<f64>, t: &Array1<f64>, rate: &Array1<f64>, vol: &Array1<f64>) -> (Array1<f64>, Array1<f64>) {
    let rsig = vol * vol * C05 + rate;
    let vol_sqrt = t.sqrt() * vol;
    let d1 = ((price / strike).log2() + &rsig * t) / &vol_sqrt;
    let d2 = &d1 - &vol_sqrt;
    let big_d1 = (&d1 * INVSQRT2).erf() * C05 + C05;
    let big_d2 = (&d2 * INVSQRT2).erf() * C05 + C05;
    let e_rt = (-rate * t).exp();
    let call = price * &big_d1 - &e_rt * strike * &big_d2;
    let put = &e_rt * strike * (C10 - &big_d2) - price * (C10 - &big_d1);
    (call, put)
}
"""

black_scholes = [
    ("markdown", """
# Black-Scholes on Bach

The option-pricing workload of the *Offload Annotations* paper (formulas in the project's
`docs/workloads.md`). The program is ordinary ndarray code: compared with the eager version,
only the import changed (`bach::prelude`'s `Array1` instead of ndarray's) and the math is
Bach's methods (`x.sqrt()` for `x.mapv(f64::sqrt)`). Every line adds
nodes to one lazy graph that spans the cells below; nothing runs until a value is displayed.
"""),
    ("code", ":bach devices"),
    size(22),
    ("code", """
let price  = Array1::<f64>::random_uniform(n, 10.0, 50.0, 1);
let strike = Array1::<f64>::random_uniform(n, 10.0, 50.0, 2);
let t      = Array1::<f64>::random_uniform(n, 1.0, 2.0, 3);
let rate   = Array1::<f64>::random_uniform(n, 0.01, 0.05, 4);
let vol    = Array1::<f64>::random_uniform(n, 0.1, 0.5, 5);
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
    ("markdown", "Displaying `call` evaluates it: the summary, and the timeline of where each op and piece ran. Read it left to right: one lane per device (and per copy direction when there is an accelerator), one bar per op and piece; hover a bar for its op, cell, size and time."),
    ("code", "call"),
    ("markdown", "`put` shares most of its graph with `call`, already computed: only its own ops run."),
    ("code", "put.sum_lazy()"),
    ("markdown", "## The same program, eager and lazy\n\nAs two functions: the plain ndarray program and the Bach one."),
    ("code", "use ndarray as nd;\n" + BS_PLAIN + BS_BACH),
    twin_diff("Black-Scholes", BS_PLAIN, BS_BACH),
    ("markdown", "The numbers agree with the eager program on the same inputs, and with the reference values (inputs all 4.0: every call 23.999997299155808, every put 17.999997974366856):"),
    ("code", """
let (p, k, tt, r, v) = (price.to_array1()?, strike.to_array1()?, t.to_array1()?, rate.to_array1()?, vol.to_array1()?);
let (call_e, put_e) = black_scholes_ndarray(&p, &k, &tt, &r, &v);
fn max_rel(a: &nd::Array1<f64>, b: &nd::Array1<f64>) -> f64 {
    a.iter().zip(b).map(|(x, y)| ((x - y) / y).abs()).fold(0.0f64, f64::max)
}
let diff = max_rel(&call.to_array1()?, &call_e).max(max_rel(&put.to_array1()?, &put_e));
println!("max relative difference, bach against eager ndarray: {diff:e}");
let four = Array1::<f64>::full(8, 4.0);
let (call_ref, put_ref) = black_scholes_bach(&four, &four, &four, &four, &four);
let (c, q) = (call_ref[0], put_ref[0]);
let ok = diff < 1e-12 && (c - 23.999997299155808).abs() < 1e-12 && (q - 17.999997974366856).abs() < 1e-12;
println!("reference check: call {c}, put {q} (expected 23.999997299155808, 17.999997974366856): {}", if ok { "pass" } else { "FAIL" });
assert!(ok);
"""),
    sweep_md("black-scholes", "black-scholes --from 10 --to 24"),
    ("code", """
use bach::sweep::{timed, Sweep};
let top = log2.clamp(12, 22);
Sweep::new("black-scholes", (top - 8)..=top)
    .time_limit(20.0)
    .mode("ndarray", |k| {
        let x = nd::Array1::<f64>::linspace(10.0, 50.0, 1 << k);
        let small = nd::Array1::<f64>::linspace(0.1, 0.5, 1 << k);
        timed(|| Ok(black_scholes_ndarray(&x, &x.slice(ndarray::s![..;-1]).to_owned(), &(&small * 2.0 + 1.0), &(&small * 0.1), &small)))
    })
    .mode("bach", |k| {
        // The same inputs, made outside the timed region.
        let x = nd::Array1::<f64>::linspace(10.0, 50.0, 1 << k);
        let small = nd::Array1::<f64>::linspace(0.1, 0.5, 1 << k);
        let strike = Array::from_array(x.slice(ndarray::s![..;-1]).to_owned());
        let (t, rate) = (Array::from_array(&small * 2.0 + 1.0), Array::from_array(&small * 0.1));
        let (x, small) = (Array::from_array(x), Array::from_array(small));
        timed(|| {
            let (call, put) = black_scholes_bach(&x, &strike, &t, &rate, &small);
            bach::evaluate(&[&call, &put])
        })
    })
    .run()
"""),
    ("markdown", "The session's timeline so far, cell by cell:"),
    ("code", ":bach trace"),
]

# ---------------------------------------------------------------- Haversine

HAV_PLAIN = """
fn haversine_ndarray(lat2: &nd::Array1<f64>, lon2: &nd::Array1<f64>) -> nd::Array1<f64> {
    let dlat = ((lat2 - LAT1) / 2.0).mapv(f64::sin).mapv(|x| x.powi(2));
    let dlon = ((lon2 - LON1) / 2.0).mapv(f64::sin).mapv(|x| x.powi(2));
    let a = dlat + lat2.mapv(f64::cos) * LAT1.cos() * dlon;
    a.mapv(f64::sqrt).mapv(f64::asin) * 2.0 * MILES
}
"""
HAV_BACH = """
fn haversine_bach(lat2: &Array1<f64>, lon2: &Array1<f64>) -> Array1<f64> {
    let dlat = ((lat2 - LAT1) / 2.0).sin().powi(2);
    let dlon = ((lon2 - LON1) / 2.0).sin().powi(2);
    let a = dlat + lat2.cos() * LAT1.cos() * dlon;
    a.sqrt().asin() * 2.0 * MILES
}
"""

haversine = [
    ("markdown", """
# Haversine distance on Bach

The great-circle distance, in miles, from one fixed point to each of n points: the second
workload of the *Offload Annotations* paper. All element-wise math: Bach fuses it into one
stage that runs in cache-sized pieces on all cores (and on the GPU when there is one).
"""),
    ("code", ":bach devices"),
    size(22),
    ("code", """
// From (LAT1, LON1) to each (lat2, lon2); radians, and the earth's radius in miles.
const LAT1: f64 = 0.70984286;
const LON1: f64 = 1.23892197;
const MILES: f64 = 3959.0;
let lat2 = Array1::<f64>::random_uniform(n, -std::f64::consts::FRAC_PI_2, std::f64::consts::FRAC_PI_2, 11);
let lon2 = Array1::<f64>::random_uniform(n, -std::f64::consts::PI, std::f64::consts::PI, 12);
"""),
    ("markdown", "The formula, over two cells: nothing runs yet, each line only adds to the graph."),
    ("code", """
let dlat = ((&lat2 - LAT1) / 2.0).sin().powi(2);
let dlon = ((&lon2 - LON1) / 2.0).sin().powi(2);
"""),
    ("code", """
let a = &dlat + lat2.cos() * LAT1.cos() * &dlon;
let distance = a.sqrt().asin() * 2.0 * MILES;
"""),
    ("code", ":bach explain distance"),
    ("markdown", "Displaying `distance` runs the graph of both cells above and draws where it ran:"),
    ("code", "distance"),
    ("code", "distance.max_lazy()?"),
    ("markdown", "## The same program, eager and lazy"),
    ("code", "use ndarray as nd;\n" + HAV_PLAIN + HAV_BACH),
    twin_diff("Haversine", HAV_PLAIN, HAV_BACH),
    ("markdown", "Bach's result against the eager program on the same points, and the reference (every point at (0.0698132, 0.0698132): 4839.959830633562 miles):"),
    ("code", """
let eager = haversine_ndarray(&lat2.to_array1()?, &lon2.to_array1()?);
let diff = distance.to_array1()?.iter().zip(&eager).map(|(x, y)| ((x - y) / y).abs()).fold(0.0f64, f64::max);
println!("max relative difference, bach against eager ndarray: {diff:e}");
let same = Array1::<f64>::full(1024, 0.0698132);
let reference = haversine_bach(&same, &same).to_array1()?;
let ok = diff < 1e-12 && reference.iter().all(|d| (d - 4839.959830633562).abs() < 1e-9);
println!("reference check: {} (expected 4839.959830633562): {}", reference[0], if ok { "pass" } else { "FAIL" });
assert!(ok);
"""),
    sweep_md("haversine", "haversine --from 10 --to 24"),
    ("code", """
use bach::sweep::{timed, Sweep};
let top = log2.clamp(12, 22);
Sweep::new("haversine", (top - 8)..=top)
    .time_limit(20.0)
    .mode("ndarray", |k| {
        let (lat, lon) = (nd::Array1::<f64>::linspace(-1.5, 1.5, 1 << k), nd::Array1::<f64>::linspace(-3.1, 3.1, 1 << k));
        timed(|| Ok(haversine_ndarray(&lat, &lon)))
    })
    .mode("bach", |k| {
        let (lat, lon) = (Array1::<f64>::linspace(-1.5, 1.5, 1 << k), Array1::<f64>::linspace(-3.1, 3.1, 1 << k));
        timed(|| haversine_bach(&lat, &lon).eval())
    })
    .run()
"""),
]

# ---------------------------------------------------------------- Crime Index

CI_PLAIN = """
fn crime_index_ndarray(dir: &Path) -> Result<f64, BachError> {
    let total = read_column(&dir.join("total_population.csv"))?;
    let adult = read_column(&dir.join("adult_population.csv"))?;
    let robberies = read_column(&dir.join("num_robberies.csv"))?;
    let big = total.mapv(|t| if t > 500000.0 { 0.0 } else { t });
    let dp = &adult * 2.0 + &big - &robberies * 2000.0;
    let ci = dp / 100000.0;
    let ci = ci.mapv(|c| if c > 0.02 { 0.032 } else { c });
    let ci = ci.mapv(|c| if c < 0.01 { 0.005 } else { c });
    Ok(bach::pairwise_sum(ci.as_slice().unwrap()))
}
"""
CI_BACH = """
fn crime_index_bach(dir: &Path) -> Result<f64, BachError> {
    let total = read_csv(dir.join("total_population.csv"))?.column(0)?;
    let adult = read_csv(dir.join("adult_population.csv"))?.column(0)?;
    let robberies = read_csv(dir.join("num_robberies.csv"))?.column(0)?;
    let big = where_(&total.gt(500000.0), 0.0, &total);
    let dp = &adult * 2.0 + &big - &robberies * 2000.0;
    let ci = dp / 100000.0;
    let ci = where_(&ci.gt(0.02), 0.032, &ci);
    let ci = where_(&ci.lt(0.01), 0.005, &ci);
    ci.sum_lazy().to_scalar()
}
"""

crime_index = [
    ("markdown", """
# Crime Index on Bach

The paper's pandas workload (cuDF on the GPU there): read three CSV columns, mask, combine,
clip, sum. With Bach, `read_csv` only looks at the file: the column is parsed in pieces as
the graph runs, so reading overlaps with the math (in the paper, 93% of the time was the
reading).
"""),
    ("code", ":bach devices"),
    size(20, "rows"),
    ("markdown", "First the data: three one-column CSV files of n rows, integers around a typical value (this cell writes them into the temporary directory)."),
    ("code", """
use std::io::Write as _;
use std::path::{Path, PathBuf};
fn write_columns(dir: &Path, n: usize, seed: Option<u32>) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)?;
    let mut rs = seed.map(bach::random::RandomState::new);
    for (name, typical) in [("total_population", 500000.0), ("adult_population", 250000.0), ("num_robberies", 1000.0)] {
        let mut f = std::io::BufWriter::new(std::fs::File::create(dir.join(format!("{name}.csv")))?);
        for _ in 0..n {
            // Random: integers between 0.2 and 2 times the typical value; reference: the value.
            let v: f64 = rs.as_mut().map_or(typical, |rs| rs.uniform(0.2 * typical, 2.0 * typical).round());
            writeln!(f, "{v}")?;
        }
        f.flush()?;
    }
    Ok(())
}
let data = std::env::temp_dir().join(format!("bach-crime-index-{}", std::process::id()));
write_columns(&data, n, Some(1))?;
println!("wrote {} rows into {}", n, data.display());
"""),
    ("markdown", "The workload, over three cells. Reading a column is the allocation: it happens where the column is first used."),
    ("code", """
use bach::read_csv;
let total = read_csv(data.join("total_population.csv"))?.column(0)?;
let adult = read_csv(data.join("adult_population.csv"))?.column(0)?;
let robberies = read_csv(data.join("num_robberies.csv"))?.column(0)?;
"""),
    ("code", """
// pandas: total.mask(total > 500000, 0)
let big = where_(&total.gt(500000.0), 0.0, &total);
let dp = &adult * 2.0 + &big - &robberies * 2000.0;
"""),
    ("code", """
let ci = &dp / 100000.0;
let ci = where_(&ci.gt(0.02), 0.032, &ci);
let ci = where_(&ci.lt(0.01), 0.005, &ci);
let result = ci.sum_lazy();
"""),
    ("code", ":bach explain result"),
    ("code", "result"),
    ("markdown", "## The same program, eager and lazy\n\nThe eager version reads each file whole, then computes; the Bach version is the same lines on lazy columns."),
    ("code", """
use ndarray::Array1;
fn read_column(path: &Path) -> Result<Array1<f64>, BachError> {
    let text = std::fs::read_to_string(path).map_err(|e| BachError::Io(format!("{}: {e}", path.display())))?;
    text.lines().map(|l| l.trim().parse::<f64>().map_err(|e| BachError::Io(format!("{}: {e}", path.display())))).collect::<Result<Vec<_>, _>>().map(Array1::from_vec)
}
""" + CI_PLAIN + CI_BACH),
    twin_diff("Crime Index", CI_PLAIN, CI_BACH),
    ("markdown", "Bach against the eager program on the random files, and the reference: with every row at the typical values, each crime index is clipped to 0.005, so the sum is exactly 0.005 n (summed pairwise, as numpy and Bach do; a plain running sum drifts)."),
    ("code", """
let eager = crime_index_ndarray(&data)?;
let lazy = result.to_scalar()?;
println!("bach {lazy}, eager ndarray {eager}: relative difference {:e}", ((lazy - eager) / eager).abs());
let reference_dir = std::env::temp_dir().join(format!("bach-crime-index-ref-{}", std::process::id()));
write_columns(&reference_dir, n, None)?;
let reference = crime_index_bach(&reference_dir)?;
let ok = ((lazy - eager) / eager).abs() < 1e-12 && reference == 0.005 * n as f64;
println!("reference check: {reference} (expected 0.005 * n = {}): {}", 0.005 * n as f64, if ok { "pass" } else { "FAIL" });
assert!(ok);
"""),
    sweep_md("crime-index", "crime-index --from 10 --to 22"),
    ("code", """
use bach::sweep::{timed, Sweep};
let top = log2.clamp(12, 20);
let sweep_dir = std::env::temp_dir().join(format!("bach-crime-index-sweep-{}", std::process::id()));
Sweep::new("crime-index", (top - 6)..=top)
    .time_limit(20.0)
    .x_desc("rows")
    .mode("ndarray", |k| {
        write_columns(&sweep_dir.join(k.to_string()), 1 << k, Some(k)).map_err(|e| BachError::Io(e.to_string()))?;
        timed(|| crime_index_ndarray(&sweep_dir.join(k.to_string())))
    })
    .mode("bach", |k| timed(|| crime_index_bach(&sweep_dir.join(k.to_string()))))
    .run()
"""),
    ("code", """
// Tidy up the files this notebook wrote.
for d in [&data, &reference_dir, &sweep_dir] {
    let _ = std::fs::remove_dir_all(d);
}
"""),
]

# ---------------------------------------------------------------- DBSCAN

DB_PLAIN = """
fn dbscan_ndarray(x: &Array2<f64>, min_samples: usize) -> Array1<i64> {
    let mean = x.mean_axis(Axis(0)).unwrap();
    let std = x.std_axis(Axis(0), 0.0).mapv(|s| if s == 0.0 { 1.0 } else { s });
    let scaled = (x - &mean) / &std;
    let neighbours = numerics::radius_bits(scaled.view(), numerics::row_sq_norms(scaled.view()).view(), EPS);
    numerics::dbscan_labels(neighbours.view(), min_samples)
}
"""
DB_BACH = """
fn dbscan_bach(x: &Array<f64>, min_samples: usize) -> Result<Array<i64>, BachError> {
    let scaled = StandardScaler.fit(x)?.transform(x)?;
    Dbscan::params(EPS, min_samples).fit_predict(&scaled)
}
"""

dbscan = [
    ("markdown", """
# DBSCAN on Bach

Density-based clustering of n points in 256 dimensions (32 blobs): standardise each column,
then DBSCAN with eps = 16 (scikit-learn's semantics: a point is core when at least
`min_samples` points, itself included, lie within eps). The data comes from `make_blobs`, drawn
exactly as scikit-learn draws it for the same seed.
"""),
    ("code", ":bach devices"),
    size(13, "points"),
    ("code", """
use bach::datasets::{make_blobs, Blobs};
use bach::ml::{numerics, Dbscan, StandardScaler};
const EPS: f64 = 16.0;
let min_samples = ((n as f64 / 32.0 * 0.05).ceil() as usize).max(2);
let (x, truth) = make_blobs(&Blobs { n_samples: n, n_features: 256, centers: 32, cluster_std: 1.0, center_box: (-2.0, 2.0), seed: 42 });
println!("{n} points x 256 features, min_samples = {min_samples}");
"""),
    ("markdown", "Standardising is element-wise and column reductions: it splits into pieces. The fit needs every point at once."),
    ("code", """
let scaler = StandardScaler.fit(&x)?;
let scaled = scaler.transform(&x)?;
"""),
    ("code", """
let labels = Dbscan::params(EPS, min_samples).fit_predict(&scaled)?;
"""),
    ("code", ":bach explain labels"),
    ("code", "labels"),
    ("markdown", "## The same program, eager and lazy\n\nThe eager twin calls the same numerical kernels (`bach::ml::numerics`) directly on whole ndarray arrays."),
    ("code", "use ndarray::{Array1, Array2, Axis};\n" + DB_PLAIN + DB_BACH),
    twin_diff("DBSCAN", DB_PLAIN, DB_BACH),
    ("markdown", "The labels against the eager program, and the reference: 32 clusters and no noise (checked in the project's docs at n = 2^8, 2^10 and 2^13, and against scikit-learn by its tests)."),
    ("code", """
let got = labels.to_array()?;
let eager = dbscan_ndarray(&x.to_array()?.into_dimensionality::<ndarray::Ix2>()?, min_samples);
let clusters = got.iter().copied().max().unwrap_or(-1) + 1;
let noise = got.iter().filter(|&&l| l == -1).count();
let same = got.iter().zip(&eager).all(|(a, b)| a == b);
println!("{clusters} clusters, {noise} noise points; labels equal to the eager program's: {same}");
let ok = same && (![8, 10, 13].contains(&log2) || (clusters == 32 && noise == 0));
println!("reference check: {clusters} clusters, {noise} noise (expected 32 and 0 at n = 2^8, 2^10, 2^13): {}", if ok { "pass" } else { "FAIL" });
assert!(ok);
"""),
    sweep_md("dbscan", "dbscan --from 8 --to 14"),
    ("code", """
use bach::sweep::{timed, Sweep};
let top = log2.clamp(9, 13);
Sweep::new("dbscan", (top - 4)..=top)
    .time_limit(20.0)
    .x_desc("points")
    .mode("ndarray", |k| {
        let (x, _) = Blobs { n_samples: 1 << k, n_features: 256, centers: 32, cluster_std: 1.0, center_box: (-2.0, 2.0), seed: 42 }.generate();
        let m = (((1usize << k) as f64 / 32.0 * 0.05).ceil() as usize).max(2);
        timed(|| Ok(dbscan_ndarray(&x, m)))
    })
    .mode("bach", |k| {
        let (x, _) = Blobs { n_samples: 1 << k, n_features: 256, centers: 32, cluster_std: 1.0, center_box: (-2.0, 2.0), seed: 42 }.generate();
        let x = Array::from_array(x).into_dyn();
        let m = (((1usize << k) as f64 / 32.0 * 0.05).ceil() as usize).max(2);
        timed(|| dbscan_bach(&x, m)?.eval())
    })
    .run()
"""),
]

# ---------------------------------------------------------------- PCA + kNN

PK_PLAIN = """
fn pca_knn_ndarray(x_train: &Array2<f64>, y_train: &Array1<i64>, x_test: &Array2<f64>) -> Array1<i64> {
    let mean = x_train.mean_axis(Axis(0)).unwrap();
    let std = x_train.std_axis(Axis(0), 0.0).mapv(|s| if s == 0.0 { 1.0 } else { s });
    let scaled = (x_train - &mean) / &std;
    let pmean = scaled.mean_axis(Axis(0)).unwrap();
    let centred = &scaled - &pmean;
    let cov = centred.t().dot(&centred) / (x_train.nrows() - 1) as f64;
    let (_, vectors) = numerics::symmetric_eigen(cov.view());
    let components = vectors.slice(ndarray::s![.., ..2]).to_owned();
    let train_p = centred.dot(&components);
    let test_p = (((x_test - &mean) / &std) - &pmean).dot(&components);
    let norms = train_p.map_axis(Axis(1), |r| r.dot(&r));
    let d2 = numerics::squared_distances(test_p.view(), train_p.view(), norms.view());
    numerics::knn_vote(d2.view(), y_train.view(), 5)
}
"""
PK_BACH = """
fn pca_knn_bach(x_train: &Array<f64>, y_train: &Array<i64>, x_test: &Array<f64>) -> Result<Array<i64>, BachError> {
    let scaler = StandardScaler.fit(x_train)?;
    let pca = Pca::params(2).fit(&scaler.transform(x_train)?)?;
    let knn = KNeighborsClassifier::params(5).fit(&pca.transform(&scaler.transform(x_train)?)?, y_train)?;
    knn.predict(&pca.transform(&scaler.transform(x_test)?)?)
}
"""

pca_knn = [
    ("markdown", """
# PCA + k-nearest neighbours on Bach

The wine data (178 wines, 13 measurements, 3 cultivars; UCI, CC BY 4.0, bundled with the
`bach` crate): split 70/30 as scikit-learn's `train_test_split(random_state=42)` does,
standardise, project on 2 principal components, classify each test wine by its 5 nearest
training wines. To give the prediction some work, the 54 test rows are repeated 2^log2 times.
"""),
    ("code", ":bach devices"),
    size(10, "copies of the test set"),
    ("code", """
use bach::datasets::train_test_indices;
use bach::ml::{numerics, KNeighborsClassifier, Pca, StandardScaler};
use ndarray::{Array1, Array2, Axis};
use bach::read_csv;
let wine = read_csv(bach::datasets::wine_csv_file()?)?;
println!("{} rows; columns: {}", wine.len(), wine.columns().join(", "));
"""),
    ("markdown", "The table as an array (the class is its last column), split by row indices:"),
    ("code", """
let table = wine.values()?;
let d = wine.columns().len() - 1;
let (train, test) = train_test_indices(wine.len(), 0.7, 42)?;
let x_train = table.take_rows(&train)?.t().slice_rows(0..d)?.reversed_axes();
let classes: Array1<i64> = wine.column("class")?.to_array1()?.mapv(|c| c as i64);
let y_train = Array::from_array(classes.select(Axis(0), &train)).into_dyn();
// The test rows, repeated 2^log2 times: row i is test row i mod 54.
let rows: Vec<usize> = (0..test.len() << log2).map(|i| test[i % test.len()]).collect();
let x_test = Array::from_array(table.to_array()?.into_dimensionality::<ndarray::Ix2>()?.select(Axis(0), &rows).slice(ndarray::s![.., ..d]).to_owned()).into_dyn();
let y_test = classes.select(Axis(0), &rows);
println!("{} training rows, {} test rows", train.len(), rows.len());
"""),
    ("markdown", "Fit on the training rows (not splittable: it needs them all), then predict (splittable: row by row)."),
    ("code", """
let scaler = StandardScaler.fit(&x_train)?;
let pca = Pca::params(2).fit(&scaler.transform(&x_train)?)?;
let knn = KNeighborsClassifier::params(5).fit(&pca.transform(&scaler.transform(&x_train)?)?, &y_train)?;
"""),
    ("code", """
let predicted = knn.predict(&pca.transform(&scaler.transform(&x_test)?)?)?;
"""),
    ("code", "predicted"),
    ("markdown", "## The same program, eager and lazy\n\nThe eager twin calls the same numerical kernels (`bach::ml::numerics`) on whole ndarray arrays."),
    ("code", PK_PLAIN + PK_BACH),
    twin_diff("PCA + kNN", PK_PLAIN, PK_BACH),
    ("markdown", "Predictions against the eager program, and the reference: accuracy 53/54 (one test wine, row 40, is misclassified, in every copy), explained variance ratios 0.36196 and 0.18764."),
    ("code", """
let got = predicted.to_array()?;
let eager = pca_knn_ndarray(&x_train.to_array()?.into_dimensionality::<ndarray::Ix2>()?, &y_train.to_array1()?, &x_test.to_array()?.into_dimensionality::<ndarray::Ix2>()?);
let same = got.iter().zip(&eager).all(|(a, b)| a == b);
let accuracy = got.iter().zip(&y_test).filter(|(p, t)| p == t).count() as f64 / y_test.len() as f64;
let ratio = pca.explained_variance_ratio()?;
println!("accuracy {accuracy}, explained variance ratios {:.5}, {:.5}; predictions equal to the eager program's: {same}", ratio[0], ratio[1]);
let ok = same && accuracy == 53.0 / 54.0 && (ratio[0] - 0.36196).abs() < 5e-6 && (ratio[1] - 0.18764).abs() < 5e-6;
println!("reference check: accuracy {accuracy} (expected 53/54 = {}): {}", 53.0 / 54.0, if ok { "pass" } else { "FAIL" });
assert!(ok);
"""),
    sweep_md("pca-knn", "pca-knn --from 4 --to 14"),
    ("code", """
use bach::sweep::{timed, Sweep};
let top = log2.clamp(8, 12);
let (xt, yt) = (x_train.to_array()?.into_dimensionality::<ndarray::Ix2>()?, y_train.to_array1()?);
let test_rows = table.to_array()?.into_dimensionality::<ndarray::Ix2>()?.select(Axis(0), &test).slice(ndarray::s![.., ..d]).to_owned();
// In a block: the closure `tiled` is not kept as a notebook variable.
{
let tiled = |k: u32| test_rows.select(Axis(0), &(0..test.len() << k).map(|i| i % test.len()).collect::<Vec<_>>());
Sweep::new("pca-knn", (top - 6)..=top)
    .time_limit(20.0)
    .x_desc("test-set copies")
    .mode("ndarray", |k| {
        let q = tiled(k);
        timed(|| Ok(pca_knn_ndarray(&xt, &yt, &q)))
    })
    .mode("bach", |k| {
        let q = Array::from_array(tiled(k)).into_dyn();
        let (xb, yb) = (Array::from_array(xt.clone()).into_dyn(), Array::from_array(yt.clone()).into_dyn());
        timed(|| pca_knn_bach(&xb, &yb, &q)?.eval())
    })
    .run()
}
"""),
]

# ---------------------------------------------------------------- Truncated SVD

TS_PLAIN = """
fn tsvd_ndarray(x: &Array2<f64>) -> (Array2<f64>, [f64; 2]) {
    let gram = x.t().dot(x);
    let (values, vectors) = numerics::symmetric_eigen(gram.view());
    let v = vectors.slice(ndarray::s![.., ..2]).to_owned();
    (x.dot(&v), [values[0].max(0.0).sqrt(), values[1].max(0.0).sqrt()])
}
"""
TS_BACH = """
fn tsvd_bach(x: &Array<f64>) -> Result<(Array<f64>, [f64; 2]), BachError> {
    let (fit, transformed) = TruncatedSvd::params(2).fit_transform(x)?;
    let sv = fit.singular_values()?;
    Ok((transformed, [sv[0], sv[1]]))
}
"""

tsvd = [
    ("markdown", """
# Truncated SVD on Bach

The top two singular vectors of an n x 512 matrix (one Gaussian blob, not centred), and the
data projected on them (U Sigma): scikit-learn's `TruncatedSVD(n_components=2)`, computed
exactly (as its `arpack` solver does) from the 512 x 512 Gram matrix, which Bach sums over
pieces of rows.
"""),
    ("code", ":bach devices"),
    size(14, "rows"),
    ("code", """
use bach::datasets::{make_blobs, Blobs};
use bach::ml::{numerics, TruncatedSvd};
use ndarray::{Array1, Array2};
let (x, _) = make_blobs(&Blobs { n_samples: n, n_features: 512, centers: 1, cluster_std: 1.0, center_box: (-10.0, 10.0), seed: 7 });
"""),
    ("code", """
let (fit, transformed) = TruncatedSvd::params(2).fit_transform(&x)?;
"""),
    ("code", ":bach explain transformed"),
    ("code", "transformed"),
    ("code", "fit.singular_values()?"),
    ("markdown", "## The same program, eager and lazy"),
    ("code", TS_PLAIN + TS_BACH),
    twin_diff("Truncated SVD", TS_PLAIN, TS_BACH),
    ("markdown", "Against the eager program (columns compared after fixing each one's sign: SVD leaves it open), and the reference singular values: 4224.08350, 54.09615 at n = 2^10; 16896.05916, 150.08158 at n = 2^14."),
    ("code", """
fn canonical(mut m: Array2<f64>) -> Array2<f64> {
    numerics::canonical_signs(&mut m);
    m
}
let got = canonical(transformed.to_array()?.into_dimensionality::<ndarray::Ix2>()?);
let (eager, eager_sv) = tsvd_ndarray(&x.to_array()?.into_dimensionality::<ndarray::Ix2>()?);
let eager = canonical(eager);
let diff = got.iter().zip(&eager).map(|(a, b)| (a - b).abs() / b.abs().max(1.0)).fold(0.0f64, f64::max);
let sv = fit.singular_values()?;
println!("singular values {:.5}, {:.5} (eager {:.5}, {:.5}); max difference of U Sigma to the eager program: {diff:e}", sv[0], sv[1], eager_sv[0], eager_sv[1]);
let expected = match log2 { 10 => Some([4224.08350, 54.09615]), 14 => Some([16896.05916, 150.08158]), _ => None };
let ok = diff < 1e-8 && expected.is_none_or(|e| (sv[0] - e[0]).abs() < 1e-5 && (sv[1] - e[1]).abs() < 1e-5);
println!("reference check: singular values {:.5}, {:.5} (expected {}): {}", sv[0], sv[1], expected.map_or("the eager program's at this size".to_string(), |e| format!("{}, {}", e[0], e[1])), if ok { "pass" } else { "FAIL" });
assert!(ok);
"""),
    sweep_md("tsvd", "tsvd --from 8 --to 16"),
    ("code", """
use bach::sweep::{timed, Sweep};
let top = log2.clamp(10, 14);
Sweep::new("tsvd", (top - 5)..=top)
    .time_limit(20.0)
    .x_desc("rows")
    .mode("ndarray", |k| {
        let (x, _) = Blobs { n_samples: 1 << k, n_features: 512, centers: 1, cluster_std: 1.0, center_box: (-10.0, 10.0), seed: 7 }.generate();
        timed(|| Ok(tsvd_ndarray(&x)))
    })
    .mode("bach", |k| {
        let (x, _) = Blobs { n_samples: 1 << k, n_features: 512, centers: 1, cluster_std: 1.0, center_box: (-10.0, 10.0), seed: 7 }.generate();
        let x = Array::from_array(x).into_dyn();
        timed(|| tsvd_bach(&x)?.0.eval())
    })
    .run()
"""),
]


# ---------------------------------------------------------------- the tour

tour = [
    ("markdown", """
# A tour of Bach

Bach runs ordinary ndarray-style Rust lazily: each call adds a node to one task graph shared by
every cell, and when you display a value Bach decides, op by op, whether it runs on the CPU or
on the GPU, copies data where it is needed, and draws where everything ran.

**Which kernel.** This notebook opens with the kernel *Rust (Bach, emulated accelerator)*: an
accelerator made of host memory and CPU code, so that transfers, paging and placement show on a
machine without a GPU (its numbers are not a GPU's). With an NVIDIA GPU, pick *Rust (Bach)*
(Kernel > Change Kernel) and every cell below runs on the real device.

Run the cells in order (Shift+Enter).
"""),
    ("code", ":bach devices"),
    ("markdown", """
## 1. Lazy values across cells

A line of array code returns at once: it only records what to compute. Shapes are known
without computing anything.
"""),
    ("code", """
let x = Array1::<f64>::linspace(0.0, 1.0, 1 << 20);
let y = (&x * 2.0).exp() + 1.0;
y.shape()
"""),
    ("markdown", "A later cell can keep building on `y`: the graph spans cells. `:bach plan` shows what would run, still without running it."),
    ("code", """
let z = (&y * &y).sqrt();
"""),
    ("code", ":bach plan z"),
    ("markdown", "Displaying a value runs what it needs, once: `z` is computed now (and `y` with it, in the same pass), and the cell shows the value and a timeline."),
    ("code", "z"),
    ("markdown", """
## 2. Reading the timeline

One lane per device, time left to right. Each bar is one op on one piece of data (Bach cuts
arrays into cache-sized pieces and streams them); on an accelerator there are also lanes for
the copies to it (host→device) and back (device→host). Hover a bar (in a trusted notebook) for
its op, the cell that created it, its size and its time. The title says how long the
evaluation took and how that compares with the cost model's prediction. An evaluation under
5 ms gets one line instead of a chart (`:bach trace last` draws it; `:bach chart full` draws
every one). `:bach breakdown` sums the same evaluation up by kind of work:
"""),
    ("code", ":bach breakdown"),
    ("markdown", """
## 3. A CPU-only op in an accelerator chain

`mapv_lazy` takes a Rust closure as a lazy op of the graph (ndarray's `mapv` runs at once on
the host): a closure cannot run on an accelerator, so Bach runs it on the CPU and
copies its input back and its output out again. `:bach explain` says why each op runs where it
runs; the timeline shows the copies around the closure.
"""),
    ("code", """
let a = (&x * 3.0).sin().on(Device::Gpu);
let b = a.mapv_lazy(|v| if v > 0.5 { v } else { 0.0 });
let c = (&b + 1.0).ln().on(Device::Gpu);
"""),
    ("code", ":bach explain c"),
    ("code", "c"),
    ("markdown", """
## 4. Data larger than the accelerator's memory

`:bach memory SIZE` caps the accelerator memory Bach plans with. Asked for more than fits,
Bach pages the data through the device in pieces: the plan says `paged`, and the timeline shows
copies in, compute and copies out overlapping piece by piece.
"""),
    ("code", ":bach memory 4MiB"),
    ("code", """
let big = Array1::<f64>::linspace(0.0, 1.0, 1 << 22);
let paged = ((&big * 5.0).sin() * (&big * 3.0).cos()).on(Device::Gpu);
"""),
    ("code", ":bach plan paged"),
    ("code", "paged"),
    ("code", ":bach memory none"),
    ("markdown", """
## 5. Policies, explanations and the cost model

The placement policy decides where each op runs: `optimal` (default: the cheapest plan by the
cost model, copies included), `greedy` (everything that can run on the accelerator does),
`threshold` (the accelerator for large arrays) or `cpu`. `:bach cost` prints the cost model and
how far its predictions were from the measured times.
"""),
    ("code", """
let m = Array1::<f64>::linspace(0.0, 1.0, 1 << 21);
let chain = ((&m * 2.0).sin() + (&m * 0.5).cos()).sqrt();
"""),
    ("code", ":bach explain chain"),
    ("markdown", """
The emulated accelerator runs CPU code, so the model prices it like the CPU and copies tip
the balance to the CPU. Tell the model the accelerator is ten times faster at math and at
element-wise work (`:bach cost set` changes one parameter; the next plan uses it), and look
again: the chain moves over, copies and all.
"""),
    ("code", ":bach cost set math.emulated.per_element = 0.3ns"),
    ("code", ":bach cost set elementwise.emulated.per_element = 50ps"),
    ("code", ":bach explain chain"),
    ("markdown", "Now make copies back from the accelerator a hundred times slower (the inputs are made where they are first used, so only the result travels): bringing it home costs more than the accelerator saves, and the plan goes back to the CPU."),
    ("code", ":bach cost set transfer.d2h.bandwidth = 50MB/s"),
    ("code", ":bach explain chain"),
    ("markdown", "`:bach cost reset` goes back to this machine's model; `:bach calibrate` measures this machine and saves the result for later sessions. The policy can also be changed: `greedy` puts everything it can on the accelerator, whatever the cost."),
    ("code", ":bach cost reset"),
    ("code", ":bach policy greedy"),
    ("code", ":bach explain chain"),
    ("code", ":bach policy optimal"),
    ("code", "chain"),
    ("code", ":bach cost"),
    ("markdown", """
Those residuals are the default figures' (this machine, uncalibrated). `:bach calibrate`
measures this machine in a few seconds (each op family on the CPU and on the accelerator,
copies both ways, what a piece costs), saves the profile for later sessions here, and this
session plans with it from now on. Evaluate something new and look at the residuals again.
"""),
    ("code", ":bach calibrate"),
    ("code", """
let again = ((&m * 3.0).sin() + (&m * 0.25).cos()).sqrt();
again
"""),
    ("code", ":bach cost"),
    ("markdown", """
## 6. What if this ran on an H100?

`:bach whatif profile h100 <expr>` plans the same value with the cost model measured on an
NVIDIA H100 machine, beside the current plan: two predicted timelines on one scale. Nothing
runs. (`:bach whatif <path> = <value> <expr>` does the same for one changed parameter.)
"""),
    ("code", """
let w = Array1::<f64>::linspace(0.0, 1.0, 1 << 24);
let fresh = ((&w * 2.0).sin() + (&w * 0.5).cos()).sqrt();
"""),
    ("code", ":bach whatif profile h100 fresh"),
    ("markdown", "`:bach graph` draws the placement graph of a value (its plan, when it has not run): each op coloured by the device it runs on, the copies as marks of their own with their bytes."),
    ("code", ":bach graph fresh"),
    ("markdown", """
## 7. Keeping a value on the device across cells

`eval_on_device()` computes a value and leaves it in the accelerator's memory. Later cells that
use it there read it with no copy in: the plan below moves only 8-byte scalars (the `1.0` in
and the sum out), not the 8 MiB of `resident`.
"""),
    ("code", """
let resident = ((&x * 7.0).sin() * 2.0).on(Device::Gpu);
resident.eval_on_device()?;
resident.location()
"""),
    ("code", """
let from_resident = (&resident + 1.0).on(Device::Gpu).sum_lazy();
"""),
    ("code", ":bach plan from_resident"),
    ("code", "from_resident"),
    ("markdown", """
## 8. Errors leave the session standing

A shape mismatch is reported at the line that made it (operators check shapes as the line
runs), with what did not match; a missing file at the cell that reads it. The variables and
the graph are still there afterwards.
"""),
    ("code", """
let wrong = &x + &Array1::<f64>::linspace(0.0, 1.0, 3);
wrong.eval()?;
""", ["raises-exception"]),
    ("code", """
let table = bach::read_csv("no/such/file.csv")?;
""", ["raises-exception"]),
    ("markdown", "Everything from before is still here:"),
    ("code", "z.sum_lazy()"),
    ("markdown", """
## 9. Interrupting a long evaluation

Press ■ (Kernel > Interrupt) while the next cell runs: Bach stops at the next piece, says
what it kept, and the session goes on (values already computed stay computed). Left alone,
the cell takes a few seconds.
"""),
    ("code", """
let long = Array1::<f64>::linspace(0.0, 1.0, 1 << 25);
let mut acc = long.clone();
for i in 0..12 {
    acc = (&acc * 1.0001 + i as f64).sin().on(Device::Auto);
}
acc.sum_lazy()
"""),
    ("markdown", """
## Where next

- The six workloads of the *Offload Annotations* paper, each a notebook beside this one:
  `black_scholes`, `haversine`, `crime_index`, `dbscan`, `pca_knn`, `tsvd`.
- `:bach help` lists every command; `:bach trace` draws the whole session's timeline.
"""),
    ("code", ":bach trace"),
]

NOTEBOOKS = {
    "tour": tour,
    "black_scholes": black_scholes,
    "haversine": haversine,
    "crime_index": crime_index,
    "dbscan": dbscan,
    "pca_knn": pca_knn,
    "tsvd": tsvd,
}

def update_markdown(name, code=False):
    """Rewrite only the markdown cells of a saved notebook (and with `code`, the code cells'
    sources too), keeping its outputs (the cells must be the same in number and kind). For
    code edits that do not change what a cell shows."""
    path = HERE / f"{name}.ipynb"
    saved = json.loads(path.read_text())
    fresh = notebook(NOTEBOOKS[name])
    kinds = lambda nb: [c["cell_type"] for c in nb["cells"]]
    if kinds(saved) != kinds(fresh):
        raise SystemExit(f"{name}: the cells changed; write it anew and run it (install/run_notebook.sh --save)")
    for old, new in zip(saved["cells"], fresh["cells"]):
        if old["cell_type"] == "markdown" or code:
            old["source"] = new["source"]
    path.write_text(json.dumps(saved, indent=1, ensure_ascii=False) + "\n")


if __name__ == "__main__":
    import sys
    args = sys.argv[1:]
    if args[:1] == ["--markdown-only"]:
        for name in args[1:] or list(NOTEBOOKS):
            update_markdown(name)
            print(f"updated the markdown of {name}.ipynb")
        raise SystemExit(0)
    if args[:1] == ["--sources-only"]:
        for name in args[1:] or list(NOTEBOOKS):
            update_markdown(name, code=True)
            print(f"updated the sources of {name}.ipynb, outputs kept")
        raise SystemExit(0)
    only = args or list(NOTEBOOKS)
    for name in only:
        nb = notebook(NOTEBOOKS[name])
        if name == "tour":
            nb["metadata"]["kernelspec"] = {"name": "bach-emulated", "display_name": "Rust (Bach, emulated accelerator)", "language": "rust"}
        with open(HERE / f"{name}.ipynb", "w") as f:
            json.dump(nb, f, indent=1)
            f.write("\n")
        print(f"wrote {name}.ipynb")

//! The four workloads of the ML library and CSV columns (docs/workloads.md sections 3-6), as
//! eager ndarray code (`cpu`: the same numerical kernels, called directly, whole arrays) and on
//! Bach's lazy arrays (`bach`), timed interleaved in one process and checked against each
//! other; `--dump DIR` writes inputs and outputs as `.npy` for the independent numpy /
//! scikit-learn / pandas checks in `tests/python/test_workloads_numpy.py`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Instant;

use bach::datasets::{train_test_indices, Blobs};
use bach::ml::{numerics, Dbscan, KNeighborsClassifier, Pca, StandardScaler, TruncatedSvd};
use bach::random::RandomState;
use bach_runtime::Session;
use ndarray::{s, ArcArray, Array1, Array2, ArrayD, Axis, IxDyn};
use serde::Serialize;

/// The wine data (UCI, CC BY 4.0; see data/README.md), built into the harness so that the GPU
/// bundle needs no checkout.
use bach::datasets::WINE_CSV;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    CrimeIndex,
    Dbscan,
    PcaKnn,
    Tsvd,
}

impl Workload {
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "crime-index" => Some(Workload::CrimeIndex),
            "dbscan" => Some(Workload::Dbscan),
            "pca-knn" => Some(Workload::PcaKnn),
            "tsvd" => Some(Workload::Tsvd),
            _ => None,
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Workload::CrimeIndex => "crime-index",
            Workload::Dbscan => "dbscan",
            Workload::PcaKnn => "pca-knn",
            Workload::Tsvd => "tsvd",
        }
    }
}

/// A workload's inputs: arrays in memory, and for Crime Index the CSV files they were written to.
pub struct Inputs {
    /// Shared (reference-counted) arrays: bach's timed runs take them by a clone that copies
    /// nothing, as a notebook's `Array::from_array` of data it already holds would.
    pub f64s: BTreeMap<String, ArcArray<f64, IxDyn>>,
    pub i64s: BTreeMap<String, ArcArray<i64, IxDyn>>,
    pub files: BTreeMap<String, PathBuf>,
    /// Rows of the test set (PCA+kNN), or samples.
    pub n: usize,
    pub seed: Option<u32>,
}

/// A run's outputs and the figures its check reads.
#[derive(Clone, Default)]
pub struct Outputs {
    pub f64s: BTreeMap<String, ArrayD<f64>>,
    pub i64s: BTreeMap<String, ArrayD<i64>>,
    pub figures: BTreeMap<String, f64>,
}

/// Make the inputs of `w` at `n = 2^log2` (`seed`: `None` for the reference inputs), writing
/// Crime Index's CSV files into `dir`.
pub fn inputs(w: Workload, log2: u32, seed: Option<u32>, dir: &Path) -> Result<Inputs, String> {
    let n = 1usize << log2;
    let mut inp = Inputs { f64s: BTreeMap::new(), i64s: BTreeMap::new(), files: BTreeMap::new(), n, seed };
    match w {
        Workload::CrimeIndex => {
            let cols: [(&str, f64); 3] = [("total_population", 500000.0), ("adult_population", 250000.0), ("num_robberies", 1000.0)];
            let mut rs = seed.map(RandomState::new);
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            for (name, reference) in cols {
                let col: Array1<f64> = match rs.as_mut() {
                    None => Array1::from_elem(n, reference),
                    // Integers around the reference: some rows cross each threshold.
                    Some(rs) => Array1::from_iter((0..n).map(|_| rs.uniform(0.2 * reference, 2.0 * reference).round())),
                };
                let path = dir.join(format!("{name}.csv"));
                write_column(&path, &col)?;
                inp.files.insert(name.to_string(), path);
                inp.f64s.insert(name.to_string(), col.into_dyn().into_shared());
            }
        }
        Workload::Dbscan => {
            // The points (256 features, a scaled copy) and their neighbourhoods, a bit per pair.
            let need = |k: u32| (1u128 << k) * 256 * 8 * 2 + (1u128 << k) * (1u128 << k).div_ceil(64) * 8;
            let host = crate::gpu::host_memory_bytes() as u128;
            if need(log2) > host {
                let fits = (10..log2).rev().find(|&k| need(k) <= host).unwrap_or(10);
                return Err(format!(
                    "dbscan at 2^{log2} points needs {:.1} GiB (its neighbourhoods take n^2/8 bytes), more than this host's {:.1} GiB: try --log2 {fits} or less",
                    need(log2) as f64 / (1u64 << 30) as f64,
                    host as f64 / (1u64 << 30) as f64
                ));
            }
            let (x, _) = Blobs { n_samples: n, n_features: 256, centers: 32, cluster_std: 1.0, center_box: (-2.0, 2.0), seed: seed.unwrap_or(42) }.generate();
            inp.f64s.insert("X".into(), x.into_dyn().into_shared());
        }
        Workload::Tsvd => {
            let (x, _) = Blobs { n_samples: n, n_features: 512, centers: 1, cluster_std: 1.0, center_box: (-10.0, 10.0), seed: seed.unwrap_or(7) }.generate();
            inp.f64s.insert("X".into(), x.into_dyn().into_shared());
        }
        Workload::PcaKnn => {
            let (features, classes) = wine();
            let (train, test) = train_test_indices(features.nrows(), 0.7, seed.unwrap_or(42)).map_err(|e| e.to_string())?;
            // The test set doubled log2 times: row i is test row i mod 54.
            let rows: Vec<usize> = (0..test.len() << log2).map(|i| test[i % test.len()]).collect();
            inp.n = rows.len();
            inp.f64s.insert("X_train".into(), features.select(Axis(0), &train).into_dyn().into_shared());
            inp.i64s.insert("y_train".into(), classes.select(Axis(0), &train).into_dyn().into_shared());
            inp.f64s.insert("X_test".into(), features.select(Axis(0), &rows).into_dyn().into_shared());
            inp.i64s.insert("y_test".into(), classes.select(Axis(0), &rows).into_dyn().into_shared());
            let path = dir.join("wine.csv");
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            std::fs::write(&path, WINE_CSV).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            inp.files.insert("wine".into(), path);
        }
    }
    Ok(inp)
}

fn write_column(path: &Path, col: &Array1<f64>) -> Result<(), String> {
    use std::io::Write;
    let f = std::fs::File::create(path).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    let mut out = std::io::BufWriter::with_capacity(1 << 20, f);
    for v in col {
        writeln!(out, "{v}").map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    }
    out.flush().map_err(|e| format!("cannot write {}: {e}", path.display()))
}

/// The wine data: 178 x 13 features and the class column.
fn wine() -> (Array2<f64>, Array1<i64>) {
    let rows: Vec<Vec<f64>> =
        WINE_CSV.lines().skip(1).filter(|l| !l.trim().is_empty()).map(|l| l.split(',').map(|f| f.trim().parse().expect("wine.csv is numeric")).collect()).collect();
    let d = rows[0].len() - 1;
    let x = Array2::from_shape_fn((rows.len(), d), |(i, j)| rows[i][j]);
    let y = Array1::from_iter(rows.iter().map(|r| r[d] as i64));
    (x, y)
}

/// Parse a one-column CSV file eagerly (the `cpu` mode's reader: read, then parse every line).
pub(crate) fn read_column(path: &Path) -> Result<Array1<f64>, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    text.lines().filter(|l| !l.is_empty()).map(|l| l.trim().parse::<f64>().map_err(|e| format!("{}: {e}", path.display()))).collect::<Result<Vec<_>, _>>().map(Array1::from_vec)
}

pub(crate) fn min_samples(n: usize) -> usize {
    ((n as f64 / 32.0 * 0.05).ceil() as usize).max(2)
}

pub(crate) fn clusters_and_noise(labels: &ArrayD<i64>) -> (f64, f64) {
    let clusters = labels.iter().copied().max().map_or(0, |m| m + 1).max(0);
    (clusters as f64, labels.iter().filter(|&&l| l == -1).count() as f64)
}

/// The eager program.
pub fn cpu(w: Workload, inp: &Inputs) -> Result<Outputs, String> {
    let mut out = Outputs::default();
    match w {
        Workload::CrimeIndex => {
            let total = read_column(&inp.files["total_population"])?;
            let adult = read_column(&inp.files["adult_population"])?;
            let robberies = read_column(&inp.files["num_robberies"])?;
            let big = total.mapv(|t| if t > 500000.0 { 0.0 } else { t });
            let dp = &adult * 2.0 + &big - &robberies * 2000.0;
            let ci = (dp / 100000.0).mapv(|c| if c > 0.02 { 0.032 } else { c }).mapv(|c| if c < 0.01 { 0.005 } else { c });
            let result = bach::pairwise_sum(ci.as_slice().expect("contiguous"));
            out.figures.insert("result".into(), result);
            out.f64s.insert("result".into(), ndarray::arr0(result).into_dyn());
        }
        Workload::Dbscan => {
            let x = inp.f64s["X"].view().into_dimensionality::<ndarray::Ix2>().expect("2-d");
            let mean = x.mean_axis(Axis(0)).expect("rows");
            let std = x.std_axis(Axis(0), 0.0).mapv(|s| if s == 0.0 { 1.0 } else { s });
            let scaled = (&x - &mean) / &std;
            let neighbours = numerics::radius_bits(scaled.view(), numerics::row_sq_norms(scaled.view()).view(), 16.0);
            let labels = numerics::dbscan_labels(neighbours.view(), min_samples(inp.n)).into_dyn();
            let (c, noise) = clusters_and_noise(&labels);
            out.figures.insert("clusters".into(), c);
            out.figures.insert("noise".into(), noise);
            out.i64s.insert("labels".into(), labels);
        }
        Workload::Tsvd => {
            let x = inp.f64s["X"].view().into_dimensionality::<ndarray::Ix2>().expect("2-d");
            let gram = x.t().dot(&x);
            let (values, vectors) = numerics::symmetric_eigen(gram.view());
            let v = vectors.slice(s![.., ..2]).to_owned();
            let transformed = x.dot(&v);
            out.figures.insert("sigma_0".into(), values[0].max(0.0).sqrt());
            out.figures.insert("sigma_1".into(), values[1].max(0.0).sqrt());
            out.f64s.insert("transformed".into(), transformed.into_dyn());
        }
        Workload::PcaKnn => {
            let xt = inp.f64s["X_train"].view().into_dimensionality::<ndarray::Ix2>().expect("2-d");
            let yt = inp.i64s["y_train"].view().into_dimensionality::<ndarray::Ix1>().expect("1-d");
            let xq = inp.f64s["X_test"].view().into_dimensionality::<ndarray::Ix2>().expect("2-d");
            let mean = xt.mean_axis(Axis(0)).expect("rows");
            let std = xt.std_axis(Axis(0), 0.0).mapv(|s| if s == 0.0 { 1.0 } else { s });
            let scaled = (&xt - &mean) / &std;
            let pmean = scaled.mean_axis(Axis(0)).expect("rows");
            let centred = &scaled - &pmean;
            let cov = centred.t().dot(&centred) / (xt.nrows() - 1) as f64;
            let (values, vectors) = numerics::symmetric_eigen(cov.view());
            let comps = vectors.slice(s![.., ..2]).to_owned();
            let train_p = centred.dot(&comps);
            let test_p = (((&xq - &mean) / &std) - &pmean).dot(&comps);
            let norms = train_p.map_axis(Axis(1), |r| r.dot(&r));
            let d2 = numerics::squared_distances(test_p.view(), train_p.view(), norms.view());
            let predicted = numerics::knn_vote(d2.view(), yt, 5).into_dyn();
            let total: f64 = values.iter().map(|v| v.max(0.0)).sum();
            out.figures.insert("explained_variance_ratio_0".into(), values[0] / total);
            out.figures.insert("explained_variance_ratio_1".into(), values[1] / total);
            out.figures.insert("accuracy".into(), accuracy(&predicted, &inp.i64s["y_test"]));
            out.i64s.insert("predicted".into(), predicted);
        }
    }
    Ok(out)
}

pub(crate) fn accuracy(predicted: &ArrayD<i64>, truth: &ArcArray<i64, IxDyn>) -> f64 {
    predicted.iter().zip(truth).filter(|(p, t)| p == t).count() as f64 / truth.len().max(1) as f64
}

/// The same program on Bach's lazy arrays: built, then evaluated, in `session`.
pub fn bach(w: Workload, inp: &Inputs, session: &Arc<Session>) -> Result<Outputs, String> {
    bach_runtime::with_session(session, || bach_program(w, inp)).map_err(|e| e.to_string())
}

fn bach_program(w: Workload, inp: &Inputs) -> bach::Result<Outputs> {
    use bach::{read_csv, where_, Array};
    let mut out = Outputs::default();
    match w {
        Workload::CrimeIndex => {
            let total = read_csv(&inp.files["total_population"])?.column(0)?;
            let adult = read_csv(&inp.files["adult_population"])?.column(0)?;
            let robberies = read_csv(&inp.files["num_robberies"])?.column(0)?;
            let big = where_(&total.gt(500000.0), 0.0, &total);
            let dp = &adult * 2.0 + &big - &robberies * 2000.0;
            let ci = &dp / 100000.0;
            let ci = where_(&ci.gt(0.02), 0.032, &ci);
            let ci = where_(&ci.lt(0.01), 0.005, &ci);
            let result = ci.sum_lazy().to_scalar()?;
            out.figures.insert("result".into(), result);
            out.f64s.insert("result".into(), ndarray::arr0(result).into_dyn());
        }
        Workload::Dbscan => {
            let x = Array::from_shared(inp.f64s["X"].clone().into_shared());
            let scaled = StandardScaler.fit(&x)?.transform(&x)?;
            let labels = Dbscan::params(16.0, min_samples(inp.n)).fit_predict(&scaled)?.to_array()?;
            let (c, noise) = clusters_and_noise(&labels);
            out.figures.insert("clusters".into(), c);
            out.figures.insert("noise".into(), noise);
            out.i64s.insert("labels".into(), labels);
        }
        Workload::Tsvd => {
            let x = Array::from_shared(inp.f64s["X"].clone().into_shared());
            let (fit, transformed) = TruncatedSvd::params(2).fit_transform(&x)?;
            bach::evaluate(&[&transformed, &fit.squared_singular_values])?;
            let sv = fit.singular_values()?;
            out.figures.insert("sigma_0".into(), sv[0]);
            out.figures.insert("sigma_1".into(), sv[1]);
            out.f64s.insert("transformed".into(), transformed.to_array()?);
        }
        Workload::PcaKnn => {
            // The data set is read from its CSV file, split, then fitted and predicted.
            let wine = read_csv(&inp.files["wine"])?;
            let features: Vec<&str> = wine.columns().iter().map(String::as_str).filter(|c| *c != "class").collect();
            let table = wine.values()?;
            let d = features.len();
            let (train, _) = train_test_indices(wine.len(), 0.7, inp.seed.unwrap_or(42))?;
            let x_train = table.take_rows(&train)?;
            let y_train = Array::<i64>::from_shared(inp.i64s["y_train"].clone().into_shared());
            let x_train = x_train.t().slice_rows(0..d)?.reversed_axes();
            let x_test = Array::from_shared(inp.f64s["X_test"].clone().into_shared());
            let scaler = StandardScaler.fit(&x_train)?;
            let pca = Pca::params(2).fit(&scaler.transform(&x_train)?)?;
            let knn = KNeighborsClassifier::params(5).fit(&pca.transform(&scaler.transform(&x_train)?)?, &y_train)?;
            let predicted = knn.predict(&pca.transform(&scaler.transform(&x_test)?)?)?;
            let predicted = predicted.to_array()?;
            let ratio = pca.explained_variance_ratio()?;
            out.figures.insert("explained_variance_ratio_0".into(), ratio[0]);
            out.figures.insert("explained_variance_ratio_1".into(), ratio[1]);
            out.figures.insert("accuracy".into(), accuracy(&predicted, &inp.i64s["y_test"]));
            out.i64s.insert("predicted".into(), predicted);
        }
    }
    Ok(out)
}

/// Largest-magnitude entry of each column positive (the sign convention outputs are compared in).
pub fn canonical_columns(a: &ArrayD<f64>) -> ArrayD<f64> {
    let mut m = a.clone().into_dimensionality::<ndarray::Ix2>().expect("2-d");
    numerics::canonical_signs(&mut m);
    m.into_dyn()
}

/// How two runs' outputs differ: labels must be equal; floats within `tol` relative to the
/// largest magnitude of each output (after the sign convention for 2-d outputs).
pub fn disagreement(a: &Outputs, b: &Outputs, tol: f64) -> Option<String> {
    for (k, x) in &a.i64s {
        let y = &b.i64s[k];
        let diff = x.iter().zip(y).filter(|(p, q)| p != q).count();
        if diff > 0 || x.shape() != y.shape() {
            return Some(format!("{k}: {diff} of {} labels differ", x.len()));
        }
    }
    for (k, x) in &a.f64s {
        let (x, y) = if x.ndim() == 2 { (canonical_columns(x), canonical_columns(&b.f64s[k])) } else { (x.clone(), b.f64s[k].clone()) };
        let scale = y.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
        let d = x.iter().zip(&y).fold(0.0f64, |m, (p, q)| m.max((p - q).abs())) / scale;
        if d.is_nan() || d > tol {
            return Some(format!("{k}: max difference {d:e} of its largest magnitude (tolerance {tol:e})"));
        }
    }
    None
}

#[derive(Serialize)]
pub struct Record {
    pub workload: &'static str,
    pub mode: &'static str,
    pub log2: u32,
    pub n: usize,
    pub inputs: String,
    pub seconds: f64,
    /// bach: the cost model's seconds for the evaluations of one run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub predicted_seconds: Option<f64>,
    /// bach: each stage of the last run's evaluations, predicted beside measured.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub stage_times: Vec<crate::StageSeconds>,
    pub runs: usize,
    pub figures: BTreeMap<String, f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub device: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub agrees_with_cpu: Option<bool>,
}

/// The hand-written GPU version of the workloads (`mlgpu.rs`), as `run` calls it.
pub trait GpuRunner {
    /// The GPU's name, for the record.
    fn name(&self) -> String;
    fn run(&mut self, w: Workload, inp: &Inputs) -> Result<Outputs, String>;
}

/// Time `modes` (interleaved, `repeat` runs after a warm-up), check them against each other,
/// print one JSON line each, and dump inputs and the first mode's outputs to `dump`. The
/// `gpu` mode runs what `open_gpu` opens.
#[allow(clippy::too_many_arguments)]
pub fn run(
    w: Workload,
    log2: u32,
    seed: Option<u32>,
    modes: &[&'static str],
    repeat: usize,
    session: Option<Arc<Session>>,
    dump: Option<&Path>,
    open_gpu: impl FnOnce() -> Result<Box<dyn GpuRunner>, String>,
) -> Result<(), String> {
    // The GPU first: a missing one is reported before inputs are made.
    let mut gpu = if modes.contains(&"gpu") { Some(open_gpu()?) } else { None };
    let scratch = std::env::temp_dir().join(format!("bach-bench-{}-{}", w.name(), std::process::id()));
    let inp = inputs(w, log2, seed, dump.unwrap_or(&scratch))?;
    let mut times: Vec<Vec<f64>> = vec![vec![]; modes.len()];
    let mut outputs: Vec<Outputs> = vec![Outputs::default(); modes.len()];
    let mut predicted = None;
    let mut stage_times = vec![];
    for round in 0..=repeat {
        for (m, mode) in modes.iter().enumerate() {
            let before = session.as_deref().and_then(crate::last_eval);
            let t0 = Instant::now();
            let out = match *mode {
                "cpu" => cpu(w, &inp)?,
                "gpu" => gpu.as_mut().expect("set up above").run(w, &inp)?,
                _ => bach(w, &inp, session.as_ref().ok_or("bach needs a session")?)?,
            };
            if round > 0 {
                times[m].push(t0.elapsed().as_secs_f64());
                if *mode == "bach" {
                    predicted = session.as_deref().map(|s| crate::predicted_since(s, before));
                    stage_times = session.as_deref().map(|s| crate::stage_times_since(s, before)).unwrap_or_default();
                }
            }
            outputs[m] = out;
        }
    }
    let inputs_text = seed.map_or_else(|| "reference".to_string(), |s| format!("random (seed {s})"));
    let mut failure = None;
    for (m, mode) in modes.iter().enumerate() {
        let agrees = (m > 0 && modes[0] == "cpu").then(|| {
            let why = disagreement(&outputs[m], &outputs[0], 1e-9);
            if let Some(why) = &why {
                failure = Some(format!("{mode} disagrees with cpu: {why}"));
            }
            why.is_none()
        });
        let mut t = times[m].clone();
        t.sort_by(f64::total_cmp);
        let rec = Record {
            workload: w.name(),
            mode,
            log2,
            n: inp.n,
            inputs: inputs_text.clone(),
            seconds: t[t.len() / 2],
            predicted_seconds: predicted.filter(|_| *mode == "bach"),
            stage_times: if *mode == "bach" { stage_times.clone() } else { vec![] },
            runs: t.len(),
            figures: outputs[m].figures.clone(),
            device: match *mode {
                "bach" => session.as_ref().map(|s| s.devices().report().trim_end().lines().collect::<Vec<_>>().join("; ")),
                "gpu" => gpu.as_ref().map(|g| g.name()),
                _ => None,
            },
            agrees_with_cpu: agrees,
        };
        println!("{}", serde_json::to_string(&rec).expect("serialisable"));
    }
    let total = |mode: &str| modes.iter().position(|m| *m == mode).map(|m| times[m].iter().sum::<f64>());
    if let (Some(cpu), Some(bach)) = (total("cpu"), total("bach")) {
        println!("ratio cpu/bach = {:.2}", cpu / bach);
    }
    if let (Some(gpu), Some(bach)) = (total("gpu"), total("bach")) {
        println!("ratio gpu/bach = {:.2}", gpu / bach);
    }
    if let Some(dir) = dump {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        for (name, a) in inp.f64s.iter().map(|(k, a)| (k, a.clone())).chain(outputs[0].f64s.iter().map(|(k, a)| (k, a.clone().into_shared()))) {
            bach::Array::from_shared(a).write_npy(dir.join(format!("{name}.npy"))).map_err(|e| e.to_string())?;
        }
        for (name, a) in inp.i64s.iter().map(|(k, a)| (k, a.clone())).chain(outputs[0].i64s.iter().map(|(k, a)| (k, a.clone().into_shared()))) {
            bach::Array::from_shared(a).write_npy(dir.join(format!("{name}.npy"))).map_err(|e| e.to_string())?;
        }
    } else {
        let _ = std::fs::remove_dir_all(&scratch);
    }
    failure.map_or(Ok(()), Err)
}

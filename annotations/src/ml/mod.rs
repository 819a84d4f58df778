//! The annotated ML library (the scikit-learn -> cuML half of the workloads), in linfa's
//! style: `fit` returns a fitted model; `transform` and `predict` take lazy arrays and give
//! lazy arrays, so every call adds nodes to the session's graph like any other op.
//!
//! Each estimator is built from annotated ops: the products are `dot` (matrixmultiply on the
//! CPU, cuBLAS on CUDA), means and norms are reductions, centring and scaling are elementwise
//! ops, and what has no library op is an annotation here with its CPU kernel from
//! `numerics.rs`: `X^T X` (`gram`; cuBLAS on CUDA), the symmetric eigen problem
//! (`symmetric_eigen`; cuSOLVER on CUDA), the k-nearest vote (`knn_vote`, split by rows; a CUDA
//! kernel of its own, [`KNN_VOTE_SOURCE`]), DBSCAN's neighbourhoods as a bit matrix
//! (`radius_neighbours`; on CUDA cuBLAS's cross products and [`RADIUS_BITS_SOURCE`]) and
//! their labelling (`dbscan_labels`, host only). A fitted
//! model is lazy arrays (means, scales, components, the training set), values like any other:
//! they live where they were computed and move when a reader needs them elsewhere. `fit` ops
//! are unsplittable; `transform` and `predict` split by rows.
//!
//! Numerics follow scikit-learn: population standard deviation (a zero one scales by 1);
//! PCA centred, components the covariance's eigenvectors, largest-magnitude entry positive;
//! TruncatedSvd not centred, `transform` = U * Sigma (X V); kNN uniform weights, Euclidean,
//! ties in the vote to the smallest label; DBSCAN's neighbourhood includes the point
//! (distance <= eps), noise is -1, clusters numbered in scikit-learn's order of discovery.

pub mod numerics;

use std::sync::{Arc, LazyLock};

use bach_runtime::{oa, split, Annotation, BachError, DType, DeviceKind, Family, Launch, Meta, Result, Value, Work};
use ndarray::Axis;

use crate::array::Array;
use crate::ops::elementwise::where_;
use crate::ops::linalg::{as1, as2};

fn matrix(op: &str, x: &Array<f64>) -> Result<(usize, usize)> {
    match x.shape() {
        [n, d] => Ok((*n, *d)),
        s => Err(BachError::shape(op, format!("expects a 2-d array (samples x features), got shape {s:?}"))),
    }
}

/// `(n, d)` of `x`, checking that `n_components` is in `1..=min(n, d)`.
fn components_of(op: &str, x: &Array<f64>, n_components: usize) -> Result<(usize, usize)> {
    let (n, d) = matrix(op, x)?;
    if n_components == 0 || n_components > d.min(n) {
        return Err(BachError::invalid(op, format!("n_components must be in 1..={}, not {n_components}", d.min(n))));
    }
    Ok((n, d))
}

// ---------------------------------------------------------------------------------------------
// StandardScaler
// ---------------------------------------------------------------------------------------------

/// `sklearn.preprocessing.StandardScaler`: centre each column and divide by its population
/// standard deviation.
#[derive(Clone, Copy, Debug, Default)]
pub struct StandardScaler;

/// A fitted [`StandardScaler`]: per column, the mean and the scale (the standard deviation,
/// or 1 where it is 0).
#[derive(Clone, Debug)]
pub struct FittedScaler {
    pub mean: Array<f64>,
    pub scale: Array<f64>,
}

impl StandardScaler {
    pub fn fit<D: ndarray::Dimension>(&self, x: &Array<f64, D>) -> Result<FittedScaler> {
        let x = &x.clone().into_dyn();
        matrix("StandardScaler", x)?;
        let mean = x.try_mean_axis(Axis(0))?;
        let std = x.try_std_axis(Axis(0), 0.0)?;
        let scale = where_(&std.equal(0.0), 1.0, &std);
        Ok(FittedScaler { mean, scale })
    }
}

impl FittedScaler {
    /// `(x - mean) / scale`, row by row.
    pub fn transform<D: ndarray::Dimension>(&self, x: &Array<f64, D>) -> Result<Array<f64>> {
        let x = &x.clone().into_dyn();
        let (_, d) = matrix("StandardScaler.transform", x)?;
        if self.mean.shape() != [d] {
            return Err(BachError::shape("StandardScaler.transform", format!("fitted on {} features, got {d}", self.mean.len())));
        }
        x.try_sub(&self.mean)?.try_div(&self.scale)
    }
}

// ---------------------------------------------------------------------------------------------
// The symmetric eigen problem: Pca and TruncatedSvd
// ---------------------------------------------------------------------------------------------

/// Eigen-decomposition of a symmetric `d x d` matrix as one `(d + 1) x d` array: row 0 the
/// eigenvalues, descending; row `1 + i` eigenvector i (largest-magnitude entry positive).
pub(crate) fn eigen_op() -> Arc<Annotation> {
    static OP: LazyLock<Arc<Annotation>> = LazyLock::new(|| {
        oa("symmetric_eigen")
            .family(Family::Other)
            .unsplittable()
            .accelerator_launch("symmetric_eigen", "", Launch::SymmetricEigen)
            .shape(|m: &[Meta]| match m[0].shape.as_slice() {
                [a, b] if a == b && m[0].dtype == DType::F64 => Ok(Meta::new(DType::F64, [a + 1, *a])),
                s => Err(BachError::shape("symmetric_eigen", format!("expects a square f64 matrix, got {} {s:?}", m[0].dtype))),
            })
            .estimate(|args, _, device| {
                let d = args[0].shape[0] as f64;
                match device.kind {
                    // Tridiagonalisation and QL on one thread: 0.72 ns per d^3 at d = 512, 0.92
                    // at 128 (measured here), whatever the thread count.
                    DeviceKind::Cpu => 20e-6 + 0.75e-9 * d * d * d,
                    // cuSOLVER's syevd: a fixed cost of launches and a stream synchronization,
                    // and a d^3 term at a small fraction of the GPU's f64 rate. Fitted to the
                    // one size measured on a GPU (d = 512 on an H200: 5.0-5.7 ms with the
                    // check and ordering kernels, TruncatedSvd 2^18 x 512); how it divides
                    // between the two terms is still an estimate. The emulated accelerator runs
                    // the CPU kernel.
                    DeviceKind::Cuda => 2e-3 + 0.025e-9 * d * d * d,
                    _ => 20e-6 + 0.75e-9 * d * d * d,
                }
            })
            .cpu(|_, args| {
                let a = as2(args[0].array::<f64>("symmetric_eigen")?, "symmetric_eigen")?;
                let (values, vectors) = numerics::symmetric_eigen(a);
                let d = values.len();
                let mut out = ndarray::Array2::<f64>::zeros((d + 1, d));
                out.row_mut(0).assign(&values);
                out.slice_mut(ndarray::s![1.., ..]).assign(&vectors.t());
                Ok(Value::from(out.into_dyn()))
            })
            .build()
    });
    Arc::clone(&OP)
}

/// `X^T X` of an `n x d` matrix, `d x d`: the rows cut into one block per thread, each
/// block's product by the GEMM, the blocks' products summed. One op rather than
/// `x.t().dot(x)`, whose product would be split along the transposed matrix's `d` rows into
/// matrix-vector products each streaming all of `x`.
pub(crate) fn gram_op() -> Arc<Annotation> {
    static OP: LazyLock<Arc<Annotation>> = LazyLock::new(|| {
        oa("gram")
            .family(Family::Product)
            .unsplittable()
            .accelerator_launch("gram", "", Launch::Gram)
            .shape(|m: &[Meta]| match m[0].shape.as_slice() {
                [_, d] if m[0].dtype == DType::F64 => Ok(Meta::new(DType::F64, [*d, *d])),
                s => Err(BachError::shape("gram", format!("expects a 2-d f64 array, got {} {s:?}", m[0].dtype))),
            })
            // Priced as the product it is, `(d x n) . (n x d)`, by the cost model's product row.
            .work(|args, result| {
                let t = Meta::new(args[0].dtype, args[0].shape.iter().rev().copied().collect::<Vec<_>>());
                Work::of(Family::Product, &[t, args[0].clone()], result)
            })
            .cpu(|_, args| {
                use rayon::prelude::*;
                let x = as2(args[0].array::<f64>("gram")?, "gram")?;
                let (n, d) = x.dim();
                let blocks = rayon::current_num_threads().max(1);
                let rows = n.div_ceil(blocks).max(1);
                let g = (0..n.div_ceil(rows))
                    .into_par_iter()
                    .map(|b| {
                        let part = x.slice(ndarray::s![b * rows..((b + 1) * rows).min(n), ..]);
                        part.t().dot(&part)
                    })
                    .reduce(|| ndarray::Array2::<f64>::zeros((d, d)), |a, b| a + b);
                Ok(Value::from(g.into_dyn()))
            })
            .build()
    });
    Arc::clone(&OP)
}

/// `X^T X` of an `n x d` f64 matrix, `d x d` (lazy; cuBLAS on CUDA), as Pca and TruncatedSvd
/// use it.
pub fn gram(x: &Array<f64>) -> Result<Array<f64>> {
    x.call(&gram_op(), &[])
}

/// The k-nearest vote of [`FittedKNeighbors::predict`] over given distances (lazy, split by
/// rows): for each row of `d2` (queries x training points; only the order matters), the most
/// frequent of the `k` nearest training points' `labels`, ties in distance to the smaller
/// index and in the vote to the smaller label, NaN as +infinity.
pub fn knn_vote(d2: &Array<f64>, labels: &Array<i64>, k: usize) -> Result<Array<i64>> {
    let t = labels.shape().first().copied().unwrap_or(0);
    if k == 0 || k > t {
        return Err(BachError::invalid("knn_vote", format!("k must be in 1..={t}, not {k}")));
    }
    d2.call(&knn_vote_op(k), &[&labels.lazy()])
}

/// The eigen-decomposition of the symmetric `d x d` matrix `m` (its lower triangle, as
/// numpy's `eigh`), lazy: one `(d + 1) x d` array, row 0 the eigenvalues descending, row
/// `1 + i` the unit eigenvector of eigenvalue `i`, its largest-magnitude entry positive (all
/// NaN when the lower triangle holds a NaN or an infinity). Householder + QL on the CPU,
/// cuSOLVER's `syevd` on CUDA.
pub fn symmetric_eigen(m: &Array<f64>) -> Result<Array<f64>> {
    m.call(&eigen_op(), &[])
}

/// The top `k` eigenpairs of the symmetric matrix `m` (lazy): eigenvalues `(d,)` (all of
/// them, descending) and the top `k` eigenvectors as rows `(k, d)`.
fn eigen(m: &Array<f64>, k: usize) -> Result<(Array<f64>, Array<f64>)> {
    let e = symmetric_eigen(m)?;
    let values = e.slice_rows(0..1)?.try_sum_axis(Axis(0))?;
    let vectors = e.slice_rows(1..k + 1)?;
    Ok((values, vectors))
}

/// `sklearn.decomposition.PCA(n_components)` (full solver): centred, components the
/// covariance's top eigenvectors.
#[derive(Clone, Copy, Debug)]
pub struct Pca {
    pub n_components: usize,
}

/// A fitted [`Pca`].
#[derive(Clone, Debug)]
pub struct FittedPca {
    pub mean: Array<f64>,
    /// `(n_components, features)`, each row's largest-magnitude entry positive.
    pub components: Array<f64>,
    /// Eigenvalues of the covariance (`n - 1` in the denominator), all of them, descending.
    pub variances: Array<f64>,
    pub n_components: usize,
}

impl Pca {
    pub fn params(n_components: usize) -> Pca {
        Pca { n_components }
    }
    pub fn fit<D: ndarray::Dimension>(&self, x: &Array<f64, D>) -> Result<FittedPca> {
        let x = &x.clone().into_dyn();
        let (n, _) = components_of("Pca", x, self.n_components)?;
        if n < 2 {
            return Err(BachError::invalid("Pca", "needs at least 2 samples"));
        }
        let mean = x.try_mean_axis(Axis(0))?;
        let centred = x.try_sub(&mean)?;
        let cov = gram(&centred)?.try_div((n - 1) as f64)?;
        let (variances, components) = eigen(&cov, self.n_components)?;
        Ok(FittedPca { mean, components, variances, n_components: self.n_components })
    }
}

impl FittedPca {
    /// `(x - mean) components^T`: `(n, n_components)`.
    pub fn transform<D: ndarray::Dimension>(&self, x: &Array<f64, D>) -> Result<Array<f64>> {
        let x = &x.clone().into_dyn();
        matrix("Pca.transform", x)?;
        x.try_sub(&self.mean)?.try_dot(&self.components.t())
    }
    /// Each component's share of the total variance (evaluates the fit).
    pub fn explained_variance_ratio(&self) -> Result<Vec<f64>> {
        let v = self.variances.to_array()?;
        let total: f64 = v.iter().map(|x| x.max(0.0)).sum();
        Ok(v.iter().take(self.n_components).map(|x| x / total).collect())
    }
}

/// `sklearn.decomposition.TruncatedSVD(n_components, algorithm="arpack")`, computed exactly:
/// the top right singular vectors are the Gram matrix's (`X^T X`) top eigenvectors; not
/// centred.
#[derive(Clone, Copy, Debug)]
pub struct TruncatedSvd {
    pub n_components: usize,
}

/// A fitted [`TruncatedSvd`].
#[derive(Clone, Debug)]
pub struct FittedTruncatedSvd {
    /// `(n_components, features)`: V^T, each row's largest-magnitude entry positive.
    pub components: Array<f64>,
    /// Eigenvalues of `X^T X` (squared singular values), all of them, descending.
    pub squared_singular_values: Array<f64>,
    pub n_components: usize,
}

impl TruncatedSvd {
    pub fn params(n_components: usize) -> TruncatedSvd {
        TruncatedSvd { n_components }
    }
    pub fn fit<D: ndarray::Dimension>(&self, x: &Array<f64, D>) -> Result<FittedTruncatedSvd> {
        let x = &x.clone().into_dyn();
        components_of("TruncatedSvd", x, self.n_components)?;
        let (values, components) = eigen(&gram(x)?, self.n_components)?;
        Ok(FittedTruncatedSvd { components, squared_singular_values: values, n_components: self.n_components })
    }
    /// `fit(x)` then `transform(x)`.
    pub fn fit_transform<D: ndarray::Dimension>(&self, x: &Array<f64, D>) -> Result<(FittedTruncatedSvd, Array<f64>)> {
        let x = &x.clone().into_dyn();
        let f = self.fit(x)?;
        let t = f.transform(x)?;
        Ok((f, t))
    }
}

impl FittedTruncatedSvd {
    /// `x V` = U * Sigma for the data it was fitted on: `(n, n_components)`.
    pub fn transform<D: ndarray::Dimension>(&self, x: &Array<f64, D>) -> Result<Array<f64>> {
        let x = &x.clone().into_dyn();
        matrix("TruncatedSvd.transform", x)?;
        x.try_dot(&self.components.t())
    }
    /// The top singular values (evaluates the fit).
    pub fn singular_values(&self) -> Result<Vec<f64>> {
        let v = self.squared_singular_values.to_array()?;
        Ok(v.iter().take(self.n_components).map(|x| x.max(0.0).sqrt()).collect())
    }
}

// ---------------------------------------------------------------------------------------------
// KNeighborsClassifier
// ---------------------------------------------------------------------------------------------

/// `sklearn.neighbors.KNeighborsClassifier(n_neighbors=k)`: uniform weights, Euclidean.
#[derive(Clone, Copy, Debug)]
pub struct KNeighborsClassifier {
    pub k: usize,
}

/// A fitted [`KNeighborsClassifier`]: the training set.
#[derive(Clone, Debug)]
pub struct FittedKNeighbors {
    pub x: Array<f64>,
    pub y: Array<i64>,
    /// `|x_j|^2` per training row.
    pub sq_norms: Array<f64>,
    pub k: usize,
}

impl KNeighborsClassifier {
    pub fn params(k: usize) -> KNeighborsClassifier {
        KNeighborsClassifier { k }
    }
    pub fn fit<D: ndarray::Dimension, E: ndarray::Dimension>(&self, x: &Array<f64, D>, y: &Array<i64, E>) -> Result<FittedKNeighbors> {
        let x = &x.clone().into_dyn();
        let y = &y.clone().into_dyn();
        let (n, _) = matrix("KNeighborsClassifier", x)?;
        if y.shape() != [n] {
            return Err(BachError::shape("KNeighborsClassifier", format!("x has {n} rows but y has shape {:?}", y.shape())));
        }
        if self.k == 0 || self.k > n {
            return Err(BachError::invalid("KNeighborsClassifier", format!("k must be in 1..={n}, not {}", self.k)));
        }
        let sq_norms = (x * x).try_sum_axis(Axis(1))?;
        Ok(FittedKNeighbors { x: x.clone(), y: y.clone(), sq_norms, k: self.k })
    }
}

/// The largest `k` the CUDA vote keeps in registers; above it the vote runs on the host.
pub const KNN_GPU_MAX_K: usize = 32;

/// [`Launch::Rows`] kernel of the k-nearest vote, `knn_vote_f64(rows, cols, d2, labels, out,
/// k)`: one thread per query row keeps its k nearest training points sorted by (distance,
/// index), as the CPU's bounded buffer does (NaN as +infinity; an equal distance never
/// displaces an earlier index), then the most frequent label, ties to the smallest: the same
/// rules, so the same labels, as [`numerics::knn_vote`].
pub const KNN_VOTE_SOURCE: &str = r#"// bach: the k-nearest vote (annotations/src/ml/mod.rs), one thread per query row
#define BACH_KNN_MAX_K 32
extern "C" __global__ void knn_vote_f64(unsigned long long rows, unsigned long long cols, const double* d2, const long long* labels, long long* out, double k_param) {
    const int k = (int)k_param;
    for (unsigned long long r = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; r < rows; r += (unsigned long long)gridDim.x * blockDim.x) {
        double best_d[BACH_KNN_MAX_K];
        unsigned long long best_j[BACH_KNN_MAX_K];
        int m = 0;
        const double* row = d2 + r * cols;
        for (unsigned long long j = 0; j < cols; ++j) {
            double d = row[j];
            if (d != d) d = __longlong_as_double(0x7ff0000000000000LL);
            if (m == k) {
                if (d >= best_d[k - 1]) continue;
                --m;
            }
            int at = m;
            while (at > 0 && best_d[at - 1] > d) {
                best_d[at] = best_d[at - 1];
                best_j[at] = best_j[at - 1];
                --at;
            }
            best_d[at] = d;
            best_j[at] = j;
            ++m;
        }
        long long winner = 0;
        int winner_count = 0;
        for (int a = 0; a < m; ++a) {
            const long long label = labels[best_j[a]];
            int count = 0;
            for (int b = 0; b < m; ++b) count += labels[best_j[b]] == label;
            if (count > winner_count || (count == winner_count && label < winner)) {
                winner = label;
                winner_count = count;
            }
        }
        out[r] = winner;
    }
}
"#;

pub(crate) fn knn_vote_op(k: usize) -> Arc<Annotation> {
    let b = oa("knn_vote").family(Family::Other).args([split::rows(), split::broadcast()]).accelerator_launch("knn_vote", KNN_VOTE_SOURCE, Launch::Rows { params: vec![k as f64] });
    let b = if k > KNN_GPU_MAX_K { b.cpu_only(format!("the k-nearest vote for k = {k} runs on the host (its CUDA kernel keeps at most {KNN_GPU_MAX_K})")) } else { b };
    b.shape(|m: &[Meta]| match (m[0].shape.as_slice(), m[1].shape.as_slice()) {
        ([_, t], [u]) if t == u && m[1].dtype == DType::I64 => Ok(Meta::new(DType::I64, [m[0].shape[0]])),
        (a, b) => Err(BachError::shape("knn_vote", format!("distances {a:?} and labels {b:?} (i64) do not match"))),
    })
    // A partial selection and a vote per row, per distance: 0.47-0.65 ns on two threads
    // for k = 5, 2.3 ns for k = 15 (measured here), as `other` elements.
    .weight(0.1 + 0.12 * k as f64)
    .cpu(move |_, args| {
        let d2 = as2(args[0].array::<f64>("knn_vote")?, "knn_vote")?;
        let y = as1(args[1].array::<i64>("knn_vote")?, "knn_vote")?;
        Ok(Value::from(numerics::knn_vote(d2, y, k).into_dyn()))
    })
    .build()
}

impl FittedKNeighbors {
    /// Squared distances from each row of `q` to each training row: `|q|^2 - 2 q x^T + |x|^2`
    /// (as scikit-learn's `euclidean_distances`), negatives clipped to 0.
    pub fn squared_distances<D: ndarray::Dimension>(&self, q: &Array<f64, D>) -> Result<Array<f64>> {
        let q = &q.clone().into_dyn();
        let (_, d) = matrix("KNeighborsClassifier.predict", q)?;
        if self.x.shape()[1] != d {
            return Err(BachError::shape("KNeighborsClassifier.predict", format!("fitted on {} features, got {d}", self.x.shape()[1])));
        }
        let q_norms = (q * q).try_sum_axis(Axis(1))?.try_insert_axis(Axis(1))?;
        let cross = q.try_dot(&self.x.t())?;
        Ok((&q_norms - &(&cross * 2.0)).try_add(&self.sq_norms)?.maximum(0.0))
    }
    /// The majority label of each row's k nearest training rows (ties: the smallest label).
    pub fn predict<D: ndarray::Dimension>(&self, q: &Array<f64, D>) -> Result<Array<i64>> {
        let q = &q.clone().into_dyn();
        let d2 = self.squared_distances(q)?;
        knn_vote(&d2, &self.y, self.k)
    }
}

// ---------------------------------------------------------------------------------------------
// DBSCAN
// ---------------------------------------------------------------------------------------------

/// `sklearn.cluster.DBSCAN(eps, min_samples)`, Euclidean.
#[derive(Clone, Copy, Debug)]
pub struct Dbscan {
    pub eps: f64,
    pub min_samples: usize,
}

impl Dbscan {
    pub fn params(eps: f64, min_samples: usize) -> Dbscan {
        Dbscan { eps, min_samples }
    }
    /// Cluster labels (`-1`: noise), unsplittable: the neighbourhoods need every point. Two
    /// ops: the neighbourhoods ([`radius_neighbours`], on the GPU a cross product) and the
    /// labelling (`dbscan_labels`, on the host).
    pub fn fit_predict<D: ndarray::Dimension>(&self, x: &Array<f64, D>) -> Result<Array<i64>> {
        let x = &x.clone().into_dyn();
        if self.eps.is_nan() || self.eps <= 0.0 || self.min_samples == 0 {
            return Err(BachError::invalid("Dbscan", format!("eps must be > 0 and min_samples >= 1 (got {} and {})", self.eps, self.min_samples)));
        }
        matrix("Dbscan", x)?;
        let bits = radius_neighbours(x, self.eps)?;
        bits.call(&dbscan_labels_op(self.min_samples), &[])
    }
}

/// The neighbourhoods of the points `x` (rows) within Euclidean distance `eps`, themselves
/// included, as a bit matrix (lazy, unsplittable): `n x ceil(n / 64)` i64 words, bit `j % 64`
/// of word `j / 64` of row `i` set when point `j` is a neighbour of point `i`
/// ([`numerics::radius_bits`], [`numerics::neighbour_lists`] gives lists). On the CPU each pair
/// is computed once, tiled; on CUDA the cross products `X X^T` come from cuBLAS a block of rows
/// at a time, and [`RADIUS_BITS_SOURCE`] turns each block into words.
pub fn radius_neighbours(x: &Array<f64>, eps: f64) -> Result<Array<i64>> {
    matrix("radius_neighbours", x)?;
    if eps.is_nan() || eps < 0.0 {
        return Err(BachError::invalid("radius_neighbours", format!("eps must be >= 0, not {eps}")));
    }
    let sq = (x * x).try_sum_axis(Axis(1))?;
    x.call(&radius_op(eps), &[&x.lazy(), &sq.lazy()])
}

/// [`Launch::Cross`] kernel of [`radius_neighbours`], `radius_bits_f64(rows, cols, first, c,
/// x, x, sq, out, eps2)`: one thread per 64-bit word of the block's rows, each comparing 64
/// of its row's squared distances `(-2 c + sq_i) + sq_j` (the CPU's expansion) with `eps^2`;
/// a point is its own neighbour. The op is unsplittable, so the block's rows are the rows of
/// the whole value and `sq` indexes both sides.
pub const RADIUS_BITS_SOURCE: &str = r#"// bach: DBSCAN's neighbourhoods as bits (annotations/src/ml/mod.rs), one thread per word
extern "C" __global__ void radius_bits_f64(unsigned long long rows, unsigned long long cols, unsigned long long first, const double* c, const double* x, const double* x_again, const double* sq, long long* out, double eps2) {
    const unsigned long long words = (cols + 63) / 64;
    for (unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; t < rows * words; t += (unsigned long long)gridDim.x * blockDim.x) {
        const unsigned long long r = t / words, w = t % words, i = first + r;
        const double* ci = c + r * cols;
        const double si = sq[i];
        const unsigned long long j0 = w * 64, j1 = j0 + 64 < cols ? j0 + 64 : cols;
        unsigned long long bits = 0;
        for (unsigned long long j = j0; j < j1; ++j) {
            const double d2 = (-2.0 * ci[j] + si) + sq[j];
            if (d2 <= eps2 || j == i) bits |= 1ULL << (j - j0);
        }
        out[i * words + w] = (long long)bits;
    }
}
"#;

pub(crate) fn radius_op(eps: f64) -> Arc<Annotation> {
    oa("radius_neighbours")
        .unsplittable()
        .args([split::unsplittable(), split::unsplittable(), split::unsplittable()])
        .accelerator_launch("radius_bits", RADIUS_BITS_SOURCE, Launch::Cross { params: vec![eps * eps] })
        .shape(|m: &[Meta]| match (m[0].shape.as_slice(), m[2].shape.as_slice()) {
            ([n, _], [k]) if n == k && m[0].dtype == DType::F64 && m[1] == m[0] => Ok(Meta::new(DType::I64, [*n, n.div_ceil(64)])),
            (a, b) => Err(BachError::shape("radius_neighbours", format!("points {a:?} ({}) and their squared norms {b:?} do not match", m[0].dtype))),
        })
        // A product's worth of flops over the upper triangle (`n^2 d`, at its inefficiency for
        // small d) and a comparison per pair (1.4 ns on two threads here: 0.3 of a product's
        // result element).
        .work(|args, _| {
            let (n, d) = (args[0].shape[0] as f64, args[0].shape[1]);
            Work { elements: 0.3 * n * n, flops: n * n * d as f64 * bach_runtime::cost::product_inefficiency(d) }
        })
        .cpu(move |_, args| {
            let x = as2(args[0].array::<f64>("radius_neighbours")?, "radius_neighbours")?;
            let sq = as1(args[2].array::<f64>("radius_neighbours")?, "radius_neighbours")?;
            Ok(Value::from(numerics::radius_bits(x, sq, eps).into_dyn()))
        })
        .build()
}

fn dbscan_labels_op(min_samples: usize) -> Arc<Annotation> {
    oa("dbscan_labels")
        .family(Family::Other)
        .unsplittable()
        .cpu_only("DBSCAN's labelling walks the neighbourhoods point by point in scikit-learn's order: on the host")
        .shape(|m: &[Meta]| match m[0].shape.as_slice() {
            [n, w] if m[0].dtype == DType::I64 && *w == n.div_ceil(64) => Ok(Meta::new(DType::I64, [*n])),
            s => Err(BachError::shape("dbscan_labels", format!("expects neighbourhoods as n x ceil(n/64) i64 words, got {} {s:?}", m[0].dtype))),
        })
        // A word's popcount and at most one masked read per core point's word.
        .weight(0.1)
        .cpu(move |_, args| {
            let bits = as2(args[0].array::<i64>("dbscan_labels")?, "dbscan_labels")?;
            Ok(Value::from(numerics::dbscan_labels(bits, min_samples).into_dyn()))
        })
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vote_kernel_keeps_as_many_neighbours_as_the_host_allows() {
        assert!(KNN_VOTE_SOURCE.contains(&format!("#define BACH_KNN_MAX_K {KNN_GPU_MAX_K}\n")));
        assert!(knn_vote_op(KNN_GPU_MAX_K).cpu_only_reason().is_none());
        assert!(knn_vote_op(KNN_GPU_MAX_K + 1).cpu_only_reason().is_some());
    }
}

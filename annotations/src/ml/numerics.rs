//! CPU numerical kernels on `ndarray` (f64 only) for the machine-learning ports: a symmetric
//! eigendecomposition (Householder tridiagonalisation + implicit QL, as EISPACK tred2/tql2),
//! squared Euclidean distances by the GEMM expansion, k-nearest-neighbour majority votes,
//! radius neighbourhoods and DBSCAN labelling. Each function says which numpy / scikit-learn
//! result it reproduces; all are pure (no global state) and use rayon where it pays.

use ndarray::linalg::general_mat_mul;
use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, ArrayViewMut2, Axis, Zip};
use rayon::prelude::*;

/// Rows of the left operand per parallel task in [`squared_distances`] and [`radius_neighbours`].
const ROW_BLOCK: usize = 256;
/// Columns (points of the right operand) per distance tile in [`radius_neighbours`]: a tile is
/// `ROW_BLOCK x COL_BLOCK` f64 (4 MiB), whatever the number of points.
const COL_BLOCK: usize = 2048;
/// [`squared_distances`] splits its rows over threads above this many multiply-adds.
const PAR_MIN_FLOPS: usize = 1 << 20;
/// [`knn_vote`] keeps a sorted buffer of the best `k` for `k` up to this, and uses
/// `select_nth_unstable_by` over the whole row above it.
const KNN_INSERTION_MAX_K: usize = 32;
/// QL iterations allowed per eigenvalue before [`symmetric_eigen`] accepts the current value
/// (EISPACK's limit is 30; convergence is cubic and takes 1 to 3 in practice).
const QL_MAX_ITER: usize = 60;

/// Eigenvalues and eigenvectors of a real symmetric `d x d` matrix, reading only its lower
/// triangle (as `numpy.linalg.eigh(a)` with its default `UPLO='L'`).
///
/// Returns `(values, vectors)`: the eigenvalues sorted descending, and the unit eigenvectors as
/// the COLUMNS of `vectors` in the same order, each column signed by [`canonical_signs`] (its
/// largest-magnitude entry positive). This is `numpy.linalg.eigh` with the order reversed and the
/// signs canonicalised; eigenvectors of a repeated eigenvalue are some orthonormal basis of its
/// eigenspace, which need not be LAPACK's.
///
/// The algorithm is the classic one of EISPACK tred2/tql2 (as in JAMA): Householder reduction to
/// tridiagonal form, then the implicit QL method with Wilkinson-style shifts, written here so that
/// every inner loop runs along a contiguous row (the transformations are accumulated into the
/// transpose of the eigenvector matrix). O(d^3); d = 512 takes a few hundred milliseconds.
/// A matrix with a non-finite entry in its lower triangle gives all-NaN values and vectors.
///
/// # Panics
/// If `a` is not square.
pub fn symmetric_eigen(a: ArrayView2<f64>) -> (Array1<f64>, Array2<f64>) {
    let n = a.nrows();
    assert_eq!(a.ncols(), n, "symmetric_eigen: the matrix must be square, got shape {:?}", a.shape());
    if n == 0 {
        return (Array1::zeros(0), Array2::zeros((0, 0)));
    }
    // Full symmetric copy of the lower triangle, row-major.
    let mut w = vec![0.0; n * n];
    let mut finite = true;
    for i in 0..n {
        for j in 0..=i {
            let v = a[[i, j]];
            finite &= v.is_finite();
            w[i * n + j] = v;
            w[j * n + i] = v;
        }
    }
    if !finite {
        return (Array1::from_elem(n, f64::NAN), Array2::from_elem((n, n), f64::NAN));
    }
    let (mut d, mut e, mut z) = tridiagonalise(&mut w, n);
    tql2(&mut d, &mut e, &mut z, n);

    // Row r of `z` is the eigenvector of d[r]: sort descending and transpose into columns.
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&p, &q| d[q].total_cmp(&d[p]));
    let values = Array1::from_iter(order.iter().map(|&r| d[r]));
    let mut vectors = Array2::zeros((n, n));
    for (col, &r) in order.iter().enumerate() {
        vectors.column_mut(col).assign(&ArrayView1::from(&z[r * n..(r + 1) * n]));
    }
    canonical_signs(&mut vectors);
    (values, vectors)
}

/// Flips the sign of each column of `v` whose largest-magnitude entry is negative (the first
/// such entry when several share the largest magnitude), so that every column's largest-|.|
/// entry is positive. Columns of zeros (or NaNs) are left as they are. This is the sign
/// convention of [`symmetric_eigen`]; apply it to `numpy.linalg.eigh`'s vectors to compare.
pub fn canonical_signs(v: &mut Array2<f64>) {
    for mut col in v.columns_mut() {
        let mut largest = 0.0;
        let mut at_largest = 0.0;
        for &x in col.iter() {
            if x.abs() > largest {
                largest = x.abs();
                at_largest = x;
            }
        }
        if at_largest < 0.0 {
            col.mapv_inplace(|x| -x);
        }
    }
}

/// Householder reduction of the full symmetric row-major `n x n` matrix `w` (n >= 1) to
/// tridiagonal form `T = Q^T A Q`. Returns the diagonal `d`, the subdiagonal `e` (`e[i] = T[i+1][i]`,
/// `e[n-1] = 0`) and `Q^T` as a row-major `n x n` buffer. `w` is overwritten.
///
/// Step `i` (from `n-1` down to 2) reflects row `i` of the leading `(i+1) x (i+1)` block onto its
/// subdiagonal entry with `H_i = I - u u^T / h` (u supported on `0..i`), applies `H_i` on both
/// sides of the leading `i x i` block as a rank-2 update, and keeps `u` in row `i` of `w`.
/// Then `Q^T = H_2 H_3 ... H_{n-1}`, accumulated from the left so that only the leading block
/// of the product is touched at each step. This is EISPACK tred2 with rows and columns swapped.
fn tridiagonalise(w: &mut [f64], n: usize) -> (Vec<f64>, Vec<f64>, Vec<f64>) {
    let mut e = vec![0.0; n];
    let mut hs = vec![0.0; n];
    let mut q_buf = vec![0.0; n];
    for i in (2..n).rev() {
        let (head, tail) = w.split_at_mut(i * n);
        let u = &mut tail[..i];
        let scale: f64 = u.iter().map(|v| v.abs()).sum();
        if scale == 0.0 {
            // Row i is already reduced (and its subdiagonal entry is zero).
            e[i - 1] = 0.0;
            continue;
        }
        let mut h = 0.0;
        for v in u.iter_mut() {
            *v /= scale;
            h += *v * *v;
        }
        let f = u[i - 1];
        let g = if f > 0.0 { -h.sqrt() } else { h.sqrt() };
        e[i - 1] = scale * g;
        h -= f * g;
        u[i - 1] = f - g;
        hs[i] = h;
        let u = &*u;
        // p = A u / h, K = u.p / 2h, q = p - K u, A <- A - u q^T - q u^T on the leading i x i block.
        let q = &mut q_buf[..i];
        for (qr, row) in q.iter_mut().zip(head.chunks_exact(n)) {
            *qr = dot(&row[..i], u) / h;
        }
        let k = dot(u, q) / (2.0 * h);
        for (qr, &ur) in q.iter_mut().zip(u) {
            *qr -= k * ur;
        }
        let q = &*q;
        for ((row, &ur), &qr) in head.chunks_exact_mut(n).zip(u).zip(q) {
            for ((x, &uc), &qc) in row[..i].iter_mut().zip(u).zip(q) {
                *x -= ur * qc + qr * uc;
            }
        }
    }
    let d: Vec<f64> = (0..n).map(|i| w[i * n + i]).collect();
    if n >= 2 {
        e[0] = w[n];
    }
    // Q^T = H_2 ... H_{n-1}: before step i the product differs from I only in its leading
    // i x i block, so Z <- Z H_i touches rows 0..i, columns 0..i.
    let mut z = vec![0.0; n * n];
    for i in 0..n {
        z[i * n + i] = 1.0;
    }
    for i in 2..n {
        let h = hs[i];
        if h == 0.0 {
            continue;
        }
        let u = &w[i * n..i * n + i];
        for row in z.chunks_exact_mut(n).take(i) {
            let row = &mut row[..i];
            let c = dot(row, u) / h;
            for (x, &uc) in row.iter_mut().zip(u) {
                *x -= c * uc;
            }
        }
    }
    (d, e, z)
}

/// Implicit QL with shifts on the symmetric tridiagonal matrix (`d` diagonal, `e[i]` between
/// rows i and i+1, `e[n-1] = 0`), as EISPACK tql2 / JAMA. On return `d` holds the eigenvalues
/// (unsorted) and row `r` of the row-major `z` the eigenvector of `d[r]`, `z` having held `Q^T`.
/// Each plane rotation of columns `(i, i+1)` of the eigenvector matrix is a rotation of rows
/// `(i, i+1)` of `z`, two contiguous rows.
fn tql2(d: &mut [f64], e: &mut [f64], z: &mut [f64], n: usize) {
    let eps = f64::EPSILON;
    let mut f = 0.0;
    let mut tst1: f64 = 0.0;
    for l in 0..n {
        // Find a negligible subdiagonal element e[m], m >= l.
        tst1 = tst1.max(d[l].abs() + e[l].abs());
        let mut m = l;
        while m < n - 1 && e[m].abs() > eps * tst1 {
            m += 1;
        }
        if m > l {
            let mut iter = 0;
            loop {
                iter += 1;
                // Implicit shift.
                let g = d[l];
                let mut p = (d[l + 1] - g) / (2.0 * e[l]);
                let mut r = p.hypot(1.0);
                if p < 0.0 {
                    r = -r;
                }
                d[l] = e[l] / (p + r);
                d[l + 1] = e[l] * (p + r);
                let dl1 = d[l + 1];
                let mut h = g - d[l];
                for x in &mut d[l + 2..] {
                    *x -= h;
                }
                f += h;
                // QL sweep from m-1 down to l.
                p = d[m];
                let (mut c, mut c2, mut c3) = (1.0, 1.0, 1.0);
                let el1 = e[l + 1];
                let (mut s, mut s2) = (0.0, 0.0);
                for i in (l..m).rev() {
                    c3 = c2;
                    c2 = c;
                    s2 = s;
                    let g = c * e[i];
                    h = c * p;
                    r = p.hypot(e[i]);
                    e[i + 1] = s * r;
                    s = e[i] / r;
                    c = p / r;
                    p = c * d[i] - s * g;
                    d[i + 1] = h + s * (c * g + s * d[i]);
                    let (zi, zi1) = z[i * n..(i + 2) * n].split_at_mut(n);
                    for (a, b) in zi.iter_mut().zip(zi1.iter_mut()) {
                        let t = *b;
                        *b = s * *a + c * t;
                        *a = c * *a - s * t;
                    }
                }
                p = -s * s2 * c3 * el1 * e[l] / dl1;
                e[l] = s * p;
                d[l] = c * p;
                if e[l].abs() <= eps * tst1 || iter >= QL_MAX_ITER {
                    break;
                }
            }
        }
        d[l] += f;
        e[l] = 0.0;
    }
}

/// Dot product with eight independent accumulators (vectorises; the sum order is fixed).
#[inline]
fn dot(a: &[f64], b: &[f64]) -> f64 {
    debug_assert_eq!(a.len(), b.len());
    let mut acc = [0.0f64; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let tail: f64 = ca.remainder().iter().zip(cb.remainder()).map(|(x, y)| x * y).sum();
    for (x, y) in ca.zip(cb) {
        for ((s, &xv), &yv) in acc.iter_mut().zip(x).zip(y) {
            *s += xv * yv;
        }
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

/// Squared Euclidean norm of each row.
fn row_sq_norms(a: ArrayView2<f64>) -> Array1<f64> {
    Array1::from_iter(a.rows().into_iter().map(|r| r.dot(&r)))
}

/// `out[i][j] = max(0, (-2 a_i.b_j + a_sq[i]) + b_sq[j])`, the product by one GEMM; single-threaded.
fn sq_dist_block(a: ArrayView2<f64>, a_sq: ArrayView1<f64>, b: ArrayView2<f64>, b_sq: ArrayView1<f64>, mut out: ArrayViewMut2<f64>) {
    general_mat_mul(-2.0, &a, &b.t(), 0.0, &mut out);
    Zip::from(out.rows_mut()).and(a_sq).for_each(|mut row, &asq| {
        Zip::from(&mut row).and(b_sq).for_each(|v, &bsq| {
            let t = (*v + asq) + bsq;
            // Clip negatives from cancellation, as np.maximum(d, 0): NaN stays NaN.
            *v = if t < 0.0 { 0.0 } else { t };
        });
    });
}

/// The `(a.nrows() x b.nrows())` matrix of squared Euclidean distances between the rows of `a`
/// and the rows of `b`, computed as scikit-learn's `euclidean_distances(a, b, squared=True)`
/// does: `-2 a_i.b_j` by one matrix product (ndarray's `dot`, matrixmultiply's GEMM), plus
/// `||a_i||^2`, plus `b_sq_norms[j]` (pass the squared row norms of `b`, which callers usually
/// reuse), negatives from cancellation clipped to 0. Unlike scikit-learn with `Y=None`, the
/// diagonal is not forced to 0 when `a` and `b` are the same points: it holds the rounding error.
/// Rows of `a` are split over rayon threads for large inputs.
///
/// # Panics
/// If `a` and `b` have different numbers of columns or `b_sq_norms.len() != b.nrows()`.
pub fn squared_distances(a: ArrayView2<f64>, b: ArrayView2<f64>, b_sq_norms: ArrayView1<f64>) -> Array2<f64> {
    assert_eq!(a.ncols(), b.ncols(), "squared_distances: a has {} features, b has {}", a.ncols(), b.ncols());
    assert_eq!(b_sq_norms.len(), b.nrows(), "squared_distances: {} norms for {} rows of b", b_sq_norms.len(), b.nrows());
    let a_sq = row_sq_norms(a);
    let mut out = Array2::zeros((a.nrows(), b.nrows()));
    let flops = a.nrows().saturating_mul(b.nrows()).saturating_mul(a.ncols().max(1));
    if a.nrows() > ROW_BLOCK && flops >= PAR_MIN_FLOPS {
        out.axis_chunks_iter_mut(Axis(0), ROW_BLOCK)
            .into_par_iter()
            .zip(a.axis_chunks_iter(Axis(0), ROW_BLOCK).into_par_iter())
            .zip(a_sq.axis_chunks_iter(Axis(0), ROW_BLOCK).into_par_iter())
            .for_each(|((o, ab), asq)| sq_dist_block(ab, asq, b, b_sq_norms, o));
    } else {
        sq_dist_block(a, a_sq.view(), b, b_sq_norms, out.view_mut());
    }
    out
}

/// k-nearest-neighbour majority vote: for each row of `d2` (query points x training points,
/// squared or plain distances: only their order matters), the label among `labels` (one per
/// training point) that occurs most often among the `k` nearest training points; ties in
/// distance go to the smaller training index, ties in the vote to the smallest label. NaN
/// distances count as +infinity.
///
/// This is scikit-learn's `KNeighborsClassifier(n_neighbors=k, weights='uniform').predict`,
/// whose vote is `scipy.stats.mode` (or an argmax over sorted classes), both of which return the
/// smallest of the most frequent labels. scikit-learn's own choice among training points at
/// exactly equal distance depends on its tree or heap and is not the index order in general.
/// Selection is partial (a bounded sorted buffer for small `k`, `select_nth_unstable_by`
/// otherwise); rows run in parallel with rayon.
///
/// # Panics
/// If `labels.len() != d2.ncols()`, or unless `1 <= k <= d2.ncols()`.
pub fn knn_vote(d2: ArrayView2<f64>, labels: ArrayView1<i64>, k: usize) -> Array1<i64> {
    let n = d2.ncols();
    assert_eq!(labels.len(), n, "knn_vote: {} labels for {} training points", labels.len(), n);
    assert!(k >= 1 && k <= n, "knn_vote: k = {k} must be in 1..={n}");
    let votes: Vec<i64> =
        d2.axis_iter(Axis(0)).into_par_iter().map_init(KnnScratch::default, |scratch, row| scratch.vote(row, labels, k)).collect();
    Array1::from_vec(votes)
}

/// Per-thread buffers of [`knn_vote`].
#[derive(Default)]
struct KnnScratch {
    candidates: Vec<(f64, u32)>,
    votes: Vec<i64>,
}

impl KnnScratch {
    fn vote(&mut self, row: ArrayView1<f64>, labels: ArrayView1<i64>, k: usize) -> i64 {
        let key = |d: f64| if d.is_nan() { f64::INFINITY } else { d };
        let best = &mut self.candidates;
        best.clear();
        if k <= KNN_INSERTION_MAX_K {
            // Sorted by (distance, index): indices arrive in increasing order, so a candidate goes
            // after every kept one at an equal distance, and an equal distance never displaces.
            for (j, &d) in row.iter().enumerate() {
                let d = key(d);
                if best.len() == k {
                    if d >= best[k - 1].0 {
                        continue;
                    }
                    best.pop();
                }
                let at = best.partition_point(|&(bd, _)| bd <= d);
                best.insert(at, (d, j as u32));
            }
        } else {
            best.extend(row.iter().enumerate().map(|(j, &d)| (key(d), j as u32)));
            best.select_nth_unstable_by(k - 1, |x, y| x.0.partial_cmp(&y.0).expect("NaN was mapped to infinity").then(x.1.cmp(&y.1)));
            best.truncate(k);
        }
        let votes = &mut self.votes;
        votes.clear();
        votes.extend(best.iter().map(|&(_, j)| labels[j as usize]));
        votes.sort_unstable();
        // Longest run in ascending order; a later run must be strictly longer to win.
        let (mut winner, mut winner_count) = (votes[0], 0);
        let mut at = 0;
        while at < votes.len() {
            let run = votes[at..].iter().take_while(|&&v| v == votes[at]).count();
            if run > winner_count {
                winner = votes[at];
                winner_count = run;
            }
            at += run;
        }
        winner
    }
}

/// For each row of `x` (a point), the indices in ascending order of all points at Euclidean
/// distance `<= eps` from it, itself included: scikit-learn's
/// `NearestNeighbors(radius=eps).fit(x).radius_neighbors(x, return_distance=False)` (sorted), as
/// `DBSCAN` uses it. Squared distances come from [`squared_distances`]' GEMM expansion and are
/// compared with `eps * eps`, as scikit-learn's brute-force path does (its tree paths compute
/// exact distances, which can differ in the last bits at the boundary). A point is always its own
/// neighbour (scikit-learn's `euclidean_distances(X)` zeroes the diagonal likewise).
///
/// Distances are computed in tiles of 256 query rows by 2048 points (4 MiB each), the row
/// blocks in parallel with rayon, so memory is bounded by the tiles in flight plus the output,
/// for any number of points (e.g. 2^16 points of 256 features).
///
/// # Panics
/// If `eps` is negative or NaN, or there are more than `u32::MAX` points.
pub fn radius_neighbours(x: ArrayView2<f64>, eps: f64) -> Vec<Vec<u32>> {
    radius_neighbours_tiled(x, eps, ROW_BLOCK, COL_BLOCK)
}

fn radius_neighbours_tiled(x: ArrayView2<f64>, eps: f64, row_block: usize, col_block: usize) -> Vec<Vec<u32>> {
    assert!(eps >= 0.0, "radius_neighbours: eps must be >= 0, got {eps}");
    let n = x.nrows();
    assert!(u32::try_from(n).is_ok(), "radius_neighbours: {n} points do not fit u32 indices");
    let eps2 = eps * eps;
    let sq = row_sq_norms(x);
    let mut out: Vec<Vec<u32>> = vec![Vec::new(); n];
    out.par_chunks_mut(row_block).enumerate().for_each(|(block, lists)| {
        let r0 = block * row_block;
        let rows = x.slice(s![r0..r0 + lists.len(), ..]);
        let rows_sq = sq.slice(s![r0..r0 + lists.len()]);
        let mut tile = Array2::zeros((lists.len(), col_block.min(n)));
        for c0 in (0..n).step_by(col_block) {
            let c1 = (c0 + col_block).min(n);
            let mut t = tile.slice_mut(s![.., ..c1 - c0]);
            sq_dist_block(rows, rows_sq, x.slice(s![c0..c1, ..]), sq.slice(s![c0..c1]), t.view_mut());
            for (r, (list, trow)) in lists.iter_mut().zip(t.rows()).enumerate() {
                let i = r0 + r;
                for (j, &d2) in (c0..c1).zip(trow) {
                    if d2 <= eps2 || j == i {
                        list.push(j as u32);
                    }
                }
            }
        }
    });
    out
}

/// DBSCAN cluster labels from precomputed neighbourhoods (`neighbours[i]`: the points within
/// `eps` of point `i`, itself included, in any order), exactly as scikit-learn's `DBSCAN.fit`
/// computes `labels_` with `sklearn/cluster/_dbscan_inner.pyx`: a point is core when its
/// neighbourhood has at least `min_samples` points; points are visited in index order and each
/// unlabelled core point starts cluster 0, 1, 2, ..., grown depth-first with a stack (pop a point,
/// label it if unlabelled, and if it is core push its unlabelled neighbours). A border point
/// reachable from several clusters keeps the first cluster that reaches it, i.e. the lowest
/// numbered one, whatever its distances. Noise is -1.
///
/// # Panics
/// If a neighbour index is out of range.
pub fn dbscan_labels(neighbours: &[Vec<u32>], min_samples: usize) -> Array1<i64> {
    let n = neighbours.len();
    let is_core: Vec<bool> = neighbours.iter().map(|nb| nb.len() >= min_samples).collect();
    let mut labels = vec![-1i64; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut label_num = 0i64;
    for start in 0..n {
        if labels[start] != -1 || !is_core[start] {
            continue;
        }
        let mut i = start;
        loop {
            if labels[i] == -1 {
                labels[i] = label_num;
                if is_core[i] {
                    stack.extend(neighbours[i].iter().map(|&v| v as usize).filter(|&v| labels[v] == -1));
                }
            }
            match stack.pop() {
                Some(v) => i = v,
                None => break,
            }
        }
        label_num += 1;
    }
    Array1::from_vec(labels)
}

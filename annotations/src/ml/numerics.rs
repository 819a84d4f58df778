//! CPU numerical kernels on `ndarray` (f64 only) for the machine-learning ports: a symmetric
//! eigendecomposition (Householder tridiagonalisation + implicit QL, as EISPACK tred2/tql2),
//! squared Euclidean distances by the GEMM expansion, k-nearest-neighbour majority votes,
//! radius neighbourhoods and DBSCAN labelling. Each function says which numpy / scikit-learn
//! result it reproduces; all are pure (no global state) and use rayon where it pays.

use ndarray::linalg::general_mat_mul;
use ndarray::{s, Array1, Array2, ArrayView1, ArrayView2, ArrayViewMut2, Axis, Zip};
use rayon::prelude::*;

/// Rows of the left operand per parallel task in [`squared_distances`] and [`radius_bits`].
const ROW_BLOCK: usize = 256;
/// Columns (points of the right operand) per distance tile in [`radius_bits`]: a tile is
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
/// tridiagonal form, then the implicit QL method with shifts, written here so that every inner
/// loop runs along a contiguous row (the transformations are accumulated into the transpose of
/// the eigenvector matrix). O(d^3), single-threaded: d = 512 takes about 0.15 s.
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
/// Then `Q^T = H_2 H_3 ... H_{n-1}` is accumulated as `Z <- Z H_i` for i = 2, 3, ..., which touches
/// only the leading block of `Z` at each step. This is EISPACK tred2 with rows and columns swapped.
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
pub fn row_sq_norms(a: ArrayView2<f64>) -> Array1<f64> {
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
/// does: `-2 a_i.b_j` by one matrix product (ndarray's `general_mat_mul`, the matrixmultiply GEMM
/// behind `dot`), plus
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
    let votes: Vec<i64> = d2.axis_iter(Axis(0)).into_par_iter().map_init(KnnScratch::default, |scratch, row| scratch.vote(row, labels, k)).collect();
    Array1::from_vec(votes)
}

/// Per-thread buffers of [`knn_vote`].
#[derive(Default)]
struct KnnScratch {
    candidates: Vec<(f64, usize)>,
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
                best.insert(at, (d, j));
            }
        } else {
            best.extend(row.iter().enumerate().map(|(j, &d)| (key(d), j)));
            best.select_nth_unstable_by(k - 1, |x, y| x.0.partial_cmp(&y.0).expect("NaN was mapped to infinity").then(x.1.cmp(&y.1)));
            best.truncate(k);
        }
        let votes = &mut self.votes;
        votes.clear();
        votes.extend(best.iter().map(|&(_, j)| labels[j]));
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

/// The neighbourhoods of the points `x` (rows) as a bit matrix: row `i` of the result
/// (`n x ceil(n / 64)` words, i64 as Bach's integer dtype) has bit `j % 64` of word `j / 64`
/// set when point `j` is at Euclidean distance `<= eps` from point `i`, itself included:
/// scikit-learn's `NearestNeighbors(radius=eps).fit(x).radius_neighbors(x)` as `DBSCAN` uses
/// it, in `n^2 / 8` bytes whatever the data (a fixed-size value, which a GPU can hand back).
/// `sq` holds the squared norms of the rows (`x * x` summed along each row). Squared distances
/// come from the GEMM expansion, `max(0, (-2 x_i.x_j + sq_i) + sq_j)`, compared with
/// `eps * eps`, as scikit-learn's brute-force path (`RadiusNeighbors`) does; its kd/ball-tree
/// paths compute distances directly and can differ in the last bits at the boundary. A point
/// is always its own neighbour, whatever the rounding (scikit-learn's `euclidean_distances(X)`
/// zeroes its diagonal likewise). Bits past `n` in the last word are 0.
///
/// Each pair is computed once, for `i < j`, and mirrored 64 x 64 bits at a time, so the
/// neighbourhoods are symmetric (`j` in `N(i)` iff `i` in `N(j)`) and the GEMM work is halved.
/// Distances are computed in tiles of 256 rows by 2048 points (4 MiB each), the row blocks in
/// parallel with rayon, so the memory beyond the output is the tiles in flight.
///
/// # Panics
/// If `eps` is negative or NaN, or `sq` is not one norm per row.
pub fn radius_bits(x: ArrayView2<f64>, sq: ArrayView1<f64>, eps: f64) -> Array2<i64> {
    radius_bits_tiled(x, sq, eps, ROW_BLOCK, COL_BLOCK)
}

fn radius_bits_tiled(x: ArrayView2<f64>, sq: ArrayView1<f64>, eps: f64, row_block: usize, col_block: usize) -> Array2<i64> {
    assert!(eps >= 0.0, "radius_bits: eps must be >= 0, got {eps}");
    let n = x.nrows();
    assert_eq!(sq.len(), n, "radius_bits: {} norms for {n} points", sq.len());
    let words = n.div_ceil(64);
    let eps2 = eps * eps;
    // The upper triangle and the diagonal: row block [r0, r1) sets its rows' bits for j >= i,
    // comparing its rows with points r0.. in tiles of col_block points.
    let mut upper = Array2::<u64>::zeros((n, words));
    upper.axis_chunks_iter_mut(Axis(0), row_block.max(1)).into_par_iter().enumerate().for_each(|(block, mut out)| {
        let (r0, r1) = (block * row_block, block * row_block + out.nrows());
        let (rows, rows_sq) = (x.slice(s![r0..r1, ..]), sq.slice(s![r0..r1]));
        let mut tile = Array2::zeros((r1 - r0, col_block.min(n - r0)));
        for c0 in (r0..n).step_by(col_block) {
            let c1 = (c0 + col_block).min(n);
            let mut t = tile.slice_mut(s![.., ..c1 - c0]);
            sq_dist_block(rows, rows_sq, x.slice(s![c0..c1, ..]), sq.slice(s![c0..c1]), t.view_mut());
            for (i, (mut bits, trow)) in (r0..r1).zip(out.rows_mut().into_iter().zip(t.rows())) {
                let from = (i + 1).clamp(c0, c1);
                for (j, &d2) in (from..c1).zip(trow.slice(s![from - c0..])) {
                    bits[j / 64] |= u64::from(d2 <= eps2) << (j % 64);
                }
            }
        }
        for (i, mut bits) in (r0..r1).zip(out.rows_mut()) {
            bits[i / 64] |= 1 << (i % 64);
        }
    });
    // The lower triangle is the upper one transposed: the 64 x 64 bits of rows group g, word
    // h (h < g) are those of rows group h, word g, transposed.
    let mut bits = Array2::<i64>::zeros((n, words));
    bits.axis_chunks_iter_mut(Axis(0), 64).into_par_iter().enumerate().for_each(|(g, mut out)| {
        for h in 0..=g {
            let mut tile = [0u64; 64];
            for (r, t) in tile.iter_mut().enumerate().take(n - 64 * h) {
                *t = upper[[64 * h + r, g]];
            }
            transpose_bits(&mut tile);
            for (o, t) in out.column_mut(h).iter_mut().zip(tile) {
                *o = t as i64;
            }
        }
        for (mut o, u) in out.rows_mut().into_iter().zip(upper.slice(s![64 * g.., ..]).rows()) {
            for (o, &u) in o.iter_mut().zip(u).skip(g) {
                *o |= u as i64;
            }
        }
    });
    bits
}

/// Transpose a 64 x 64 bit matrix in place (row `r` is `m[r]`, column `c` its bit `c`): the
/// off-diagonal halves of each block swap, halving the block size six times.
fn transpose_bits(m: &mut [u64; 64]) {
    let mut j = 32;
    let mut mask: u64 = 0x0000_0000_FFFF_FFFF;
    while j != 0 {
        for k in (0..64).filter(|k| k & j == 0) {
            let t = ((m[k] >> j) ^ m[k + j]) & mask;
            m[k] ^= t << j;
            m[k + j] ^= t;
        }
        j >>= 1;
        mask ^= mask << j;
    }
}

/// The neighbourhoods of a bit matrix of [`radius_bits`] as lists of indices, ascending.
pub fn neighbour_lists(bits: ArrayView2<i64>) -> Vec<Vec<u32>> {
    bits.rows()
        .into_iter()
        .map(|row| {
            let mut list = Vec::new();
            for (w, &word) in row.iter().enumerate() {
                let mut m = word as u64;
                while m != 0 {
                    list.push((64 * w) as u32 + m.trailing_zeros());
                    m &= m - 1;
                }
            }
            list
        })
        .collect()
}

/// DBSCAN cluster labels from the neighbourhoods of `n` points as a bit matrix (`bits`, `n x
/// ceil(n / 64)` words as [`radius_bits`] gives; row `i` the points within `eps` of point `i`,
/// itself included), exactly as scikit-learn's `DBSCAN.fit` computes `labels_` with
/// `sklearn/cluster/_dbscan_inner.pyx`: a point is core when its neighbourhood has at least
/// `min_samples` points; points are visited in index order and each unlabelled core point starts
/// cluster 0, 1, 2, ..., grown depth-first (scikit-learn: pop a point, label it if unlabelled,
/// and if it is core push its unlabelled neighbours). A border point reachable from several
/// clusters keeps the first cluster that reaches it, i.e. the lowest numbered one, whatever its
/// distances. Noise is -1. A cluster's points do not depend on the order they are pushed in,
/// so each is pushed once: a bit set of the points not yet reached is masked off word by word.
///
/// # Panics
/// If `bits` is not `n x ceil(n / 64)`.
pub fn dbscan_labels(bits: ArrayView2<i64>, min_samples: usize) -> Array1<i64> {
    let n = bits.nrows();
    let words = n.div_ceil(64);
    assert_eq!(bits.ncols(), words, "dbscan_labels: {n} points need {words} words a row, not {}", bits.ncols());
    let bits = bits.as_standard_layout();
    let row = |i: usize| &bits.as_slice().expect("standard layout")[i * words..(i + 1) * words];
    let is_core: Vec<bool> = (0..n).into_par_iter().map(|i| row(i).iter().map(|w| w.count_ones() as usize).sum::<usize>() >= min_samples).collect();
    let mut unreached: Vec<u64> = (0..words).map(|w| if 64 * (w + 1) <= n { u64::MAX } else { (1u64 << (n % 64)) - 1 }).collect();
    let mut labels = vec![-1i64; n];
    let mut stack: Vec<usize> = Vec::new();
    let mut label_num = 0i64;
    for start in 0..n {
        if labels[start] != -1 || !is_core[start] {
            continue;
        }
        unreached[start / 64] &= !(1 << (start % 64));
        stack.push(start);
        while let Some(i) = stack.pop() {
            labels[i] = label_num;
            if is_core[i] {
                for (w, (&word, open)) in row(i).iter().zip(unreached.iter_mut()).enumerate() {
                    let mut m = word as u64 & *open;
                    *open &= !m;
                    while m != 0 {
                        stack.push(64 * w + m.trailing_zeros() as usize);
                        m &= m - 1;
                    }
                }
            }
        }
        label_num += 1;
    }
    Array1::from_vec(labels)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    // ---- reference values (numpy 2.4.6, scikit-learn 1.9.1) ----------------------------------

    // numpy.linalg.eigh(EIG4), reordered descending, columns canonicalised
    const EIG4: [[f64; 4]; 4] = [[4.0, 1.0, -2.0, 2.0], [1.0, 2.0, 0.0, 1.0], [-2.0, 0.0, 3.0, -2.0], [2.0, 1.0, -2.0, -1.0]];
    const EIG4_VALUES: [f64; 4] = [6.844621107234965, 2.2685314064312423, 1.0843644637732166, -2.1975169774394243];
    const EIG4_VECTORS: [[f64; 4]; 4] = [
        [0.7180459594506796, 0.20171109662094233, 0.6422600067660328, -0.17670517062447652],
        [0.2211529881551807, 0.7894499124874399, -0.5441878481946866, -0.17810046990630077],
        [-0.5573513771375096, 0.5796341693167878, 0.5202218509386148, 0.28766803431970117],
        [0.3533564748939929, 0.010280998686330589, -0.14398227457619123, 0.9242849167461132],
    ];
    // numpy.linalg.eigh of sin((i+1)(j+1)) + 1/(1+i+j), 13 x 13, reordered and canonicalised as above
    const EIG13_VALUES: [f64; 13] = [
        3.999015503745159,
        3.285380893939024,
        2.817967031648646,
        2.445070477435459,
        2.3208723807076233,
        1.7181281271630986,
        -0.6344494795612909,
        -1.6001614672598903,
        -2.338570922561283,
        -2.3581884768856525,
        -3.1018256209418524,
        -3.1996536204733736,
        -3.268665420571118,
    ];
    const EIG13_COLUMN0: [f64; 13] = [
        0.5762539541321043,
        0.3919533189202096,
        0.31252094871269914,
        0.2430531915550922,
        0.1655973852452645,
        -0.17344345448696438,
        0.18857858004305075,
        0.10694620224227691,
        0.00543310168930887,
        -0.08573758532624369,
        -0.16191646800536055,
        -0.282741905696423,
        0.37351693658506085,
    ];
    const EIG13_COLUMN6: [f64; 13] = [
        -0.09155539992155323,
        0.011054859739738798,
        0.04437706898136063,
        0.05270623864094536,
        0.035698880853744216,
        0.5004464295458037,
        0.300138138984705,
        0.045368568671246876,
        -0.015359181174756376,
        -0.033266153697105554,
        0.004620937083501201,
        0.5846735753366139,
        0.5474292596837216,
    ];
    const EIG13_COLUMN12: [f64; 13] = [
        -0.029465669062968613,
        0.1941422072141435,
        -0.3623305687604115,
        0.2552909541832455,
        -0.06385194837256612,
        -0.004705772211392079,
        0.017776619050399567,
        -0.24488760795668915,
        0.5965973685631509,
        -0.5532054913225076,
        0.19613505635493875,
        -0.01039748359316979,
        0.0075297581427519605,
    ];

    // sklearn KNeighborsClassifier(n_neighbors=5).fit(train, labels).predict(queries): 40 x 3 training points, 5 a row
    const KNN0_TRAIN: [[f64; 15]; 8] = [
        [0.11, -1.23, -0.75, -1.87, -1.26, 0.07, -0.75, 1.31, 0.39, -0.58, 0.19, -0.16, -0.83, -1.68, -0.92],
        [1.36, -1.25, 0.59, 0.18, 0.7, 1.51, 0.76, -0.9, -0.2, 0.64, 1.15, 0.19, -0.96, 0.21, 0.45],
        [-1.57, -0.25, -1.45, -0.76, -1.64, -1.57, -1.09, 0.44, 0.15, -2.21, -1.25, -0.34, -2.88, -0.92, -1.09],
        [1.32, 2.03, -0.82, -0.31, 1.09, 1.03, -0.37, 1.04, -0.14, -0.06, 1.14, -1.61, -0.9, -0.9, 0.17],
        [-0.24, -0.48, -0.32, -0.28, 2.39, -0.5, -0.31, -1.75, -0.64, -1.69, -1.74, -0.58, -0.84, 1.5, 1.75],
        [-0.83, -0.33, -0.07, 0.55, 1.16, -0.7, -0.19, 0.07, -2.03, -0.08, 0.33, -1.33, 0.26, -0.56, 0.7],
        [-0.7, -0.37, -1.58, -0.12, -1.7, -1.41, 0.36, -1.83, 0.57, -2.64, 0.3, -1.84, 0.84, 1.47, -2.03],
        [0.36, 0.99, -1.06, -0.21, 1.18, -1.47, 1.16, 0.8, -0.54, -0.73, 0.71, -1.77, 0.37, -0.61, -0.03],
    ];
    const KNN0_LABELS: [[i64; 10]; 4] = [
        [-3, 2, 7, -3, 2, -3, 7, -3, 7, 2], // 0..10
        [2, 2, 2, 2, 2, 7, 7, 7, 7, 2],     // 10..20
        [2, 7, 2, -3, 7, -3, 7, 2, -3, -3], // 20..30
        [2, -3, -3, 2, 7, 2, 7, 7, 7, 2],   // 30..40
    ];
    // 15 x 3 query points, 5 a row
    const KNN0_QUERIES: [[f64; 15]; 3] = [
        [0.02, -0.83, -0.39, -0.67, 0.01, -0.45, -0.36, -1.65, -0.97, 1.98, -0.81, -1.26, 0.4, 1.69, -1.74],
        [-0.25, -0.76, -2.11, 0.88, -0.03, 0.09, -0.9, 0.55, -0.65, -0.17, -1.33, -1.46, 1.6, -0.61, 0.35],
        [-0.04, -0.53, -0.61, 0.76, -0.36, -0.18, 0.03, 1.41, 0.82, 0.46, -0.68, -1.66, 1.14, 1.16, -0.17],
    ];
    const KNN0_EXPECTED: [i64; 15] = [2, 2, 2, -3, 7, 2, -3, -3, 2, -3, -3, -3, 7, -3, 7];
    // sklearn KNeighborsClassifier(n_neighbors=4).fit(train, labels).predict(queries): 40 x 3 training points, 5 a row
    const KNN1_TRAIN: [[f64; 15]; 8] = [
        [1.05, 0.72, 1.24, -2.24, 0.2, -0.51, 0.03, -0.26, 0.73, -0.89, 1.2, 2.52, -2.64, 1.75, 0.4],
        [-1.26, -0.59, 0.03, 1.29, 0.7, 0.91, 0.25, 1.94, 0.81, -1.28, -1.15, -0.45, -2.33, -0.99, 2.85],
        [-1.2, -0.31, -0.45, 1.67, 0.94, 0.88, 0.49, 0.82, 1.64, 1.09, 1.0, -0.21, 1.05, 0.1, 1.93],
        [-0.35, -0.59, 1.51, -0.78, 2.5, 2.29, -1.71, 1.63, 0.87, -2.07, 1.03, 0.77, 0.63, -0.3, 0.56],
        [0.74, 0.73, 1.85, -1.25, 2.39, -0.06, 0.53, -2.27, 3.08, -0.28, 1.78, 1.16, 0.65, 1.0, 0.58],
        [0.34, 0.84, 2.34, -0.69, 0.8, -0.09, -1.88, 2.46, 1.0, -1.18, 0.52, -0.62, -1.31, 1.74, 0.1],
        [0.69, -0.68, 1.62, -1.05, 0.55, -0.02, 1.81, -1.23, 2.09, 2.45, -0.77, 0.91, 1.11, -0.46, 0.52],
        [1.38, 1.56, 1.26, 0.34, -0.26, 1.15, -0.33, -1.56, 2.79, -2.15, 1.94, 2.02, 0.8, 1.33, 2.78],
    ];
    const KNN1_LABELS: [[i64; 10]; 4] = [
        [9, -1, 4, -1, -1, -1, 9, 9, 4, 4],   // 0..10
        [-1, 9, 9, 9, 9, 4, 9, -1, 9, 9],     // 10..20
        [4, -1, 4, -1, 9, 9, -1, -1, -1, -1], // 20..30
        [4, 9, 4, 4, 4, 4, 9, 4, -1, 9],      // 30..40
    ];
    // 15 x 3 query points, 5 a row
    const KNN1_QUERIES: [[f64; 15]; 3] = [
        [-0.24, -0.71, -1.62, 0.05, 1.77, 1.15, -1.13, -1.03, -0.61, 0.35, -0.25, 0.26, 0.36, -0.36, -0.05],
        [0.25, -0.1, 0.6, 2.25, 0.71, 0.07, -2.02, 0.47, -2.34, -1.69, 1.03, 0.85, -0.18, -2.05, -0.45],
        [-0.81, 0.76, 2.71, 0.26, -0.94, -1.4, -0.07, -0.21, -1.38, 0.14, -1.38, 1.33, 1.28, 1.3, -0.57],
    ];
    const KNN1_EXPECTED: [i64; 15] = [-1, 9, -1, 4, 4, 4, 9, -1, -1, -1, 9, -1, -1, 4, 9];
    // sklearn DBSCAN(eps=0.5, min_samples=4).fit(points).labels_: three blobs and uniform noise, 60 points in 2-D, 6 a row
    const DB_BLOBS: [[f64; 12]; 10] = [
        [4.16, 3.07, 0.7, -0.04, -1.85, -1.05, -0.09, 2.7, -0.41, 2.78, 3.43, 0.4],
        [3.96, 2.09, -0.17, 0.21, 0.02, 0.61, 0.34, -0.83, 2.8, 0.99, 0.26, -0.03],
        [-1.71, 3.9, 3.16, 1.11, -1.08, 3.78, 2.01, -1.85, 3.62, 1.37, -0.07, 0.31],
        [-1.57, 3.76, -0.89, 4.18, -0.78, 3.27, -0.13, -0.24, -0.67, 0.02, 2.89, 1.35],
        [0.31, -0.06, 0.18, -0.3, 2.22, 1.06, -0.79, 3.46, -1.15, -2.69, 2.67, 1.17],
        [2.7, 0.62, 3.24, 0.67, 2.91, 0.63, 0.55, 3.29, -1.26, 3.82, 0.4, -0.1],
        [3.49, 0.42, -2.37, 1.89, -0.39, -0.68, -0.14, -2.51, 4.42, -1.8, 3.25, 1.47],
        [3.28, 1.18, 3.28, 1.27, -1.45, 4.07, -1.14, 2.91, -0.85, 3.11, -0.73, 3.45],
        [0.37, -0.09, 0.55, -0.23, -0.51, 3.77, -0.43, 4.31, -1.7, 4.99, 2.2, 1.16],
        [-0.21, -0.54, -0.86, -0.37, -1.72, 0.99, -2.72, -0.12, -0.29, 3.69, 3.32, 0.86],
    ];
    const DB_BLOBS_LABELS: [[i64; 10]; 6] = [
        [-1, 0, -1, -1, -1, 1, -1, 0, 0, -1], // 0..10
        [1, 0, 2, 1, 2, -1, 1, 0, 2, 2],      // 10..20
        [2, 0, -1, 1, 0, 0, 1, 2, -1, 1],     // 20..30
        [1, 1, 1, -1, 2, 0, 1, -1, 0, -1],    // 30..40
        [-1, 1, 1, 1, 2, 2, 2, 2, 0, 0],      // 40..50
        [2, -1, -1, 1, 0, -1, -1, -1, 2, 1],  // 50..60
    ];
    // sklearn DBSCAN(eps=0.6, min_samples=6): a border point, two ladders of 18 points, noise; 4 a row
    const DB_SHARED: [[f64; 8]; 10] = [
        [2.45, 0.1, 3.0, 0.0, 3.25, 0.0, 3.5, 0.0],
        [3.75, 0.0, 4.0, 0.0, 4.25, 0.0, 4.5, 0.0],
        [4.75, 0.0, 5.0, 0.0, 3.0, 0.2, 3.25, 0.2],
        [3.5, 0.2, 3.75, 0.2, 4.0, 0.2, 4.25, 0.2],
        [4.5, 0.2, 4.75, 0.2, 5.0, 0.2, 10.0, 10.0],
        [2.5, 3.0, 0.0, 0.0, 0.25, 0.0, 0.5, 0.0],
        [0.75, 0.0, 1.0, 0.0, 1.25, 0.0, 1.5, 0.0],
        [1.75, 0.0, 2.0, 0.0, 0.0, 0.2, 0.25, 0.2],
        [0.5, 0.2, 0.75, 0.2, 1.0, 0.2, 1.25, 0.2],
        [1.5, 0.2, 1.75, 0.2, 2.0, 0.2, 6.0, -3.0],
    ];
    const DB_SHARED_LABELS: [[i64; 10]; 4] = [
        [0, 0, 0, 0, 0, 0, 0, 0, 0, 0],  // 0..10
        [0, 0, 0, 0, 0, 0, 0, 0, 0, -1], // 10..20
        [-1, 1, 1, 1, 1, 1, 1, 1, 1, 1], // 20..30
        [1, 1, 1, 1, 1, 1, 1, 1, 1, -1], // 30..40
    ];
    // Integer grids, shuffled, 5 points a row; sklearn DBSCAN(eps=1.0, min_samples=3 and 5) labels
    const DB_GRID: [[f64; 10]; 5] = [
        [3.0, 1.0, 3.0, 0.0, 3.0, 3.0, 11.0, 1.0, 0.0, 0.0],
        [4.0, 1.0, 0.0, 3.0, 11.0, 0.0, 2.0, 0.0, 2.0, 1.0],
        [4.0, 2.0, 1.0, 2.0, 0.0, 1.0, 2.0, 2.0, 0.0, 2.0],
        [2.0, 3.0, 10.0, 0.0, 4.0, 0.0, 3.0, 2.0, 1.0, 0.0],
        [1.0, 3.0, 1.0, 1.0, 10.0, 1.0, 4.0, 3.0, 20.0, 20.0],
    ];
    const DB_GRID_LABELS_MS3: [i64; 25] = [0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, -1];
    const DB_GRID_LABELS_MS5: [i64; 25] = [0, 0, 0, -1, -1, 0, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0, -1, -1, 0, 0, 0, 0, -1, -1, -1];

    // ---- helpers -------------------------------------------------------------------------------

    /// SplitMix64: deterministic test data without a dependency.
    struct Rng(u64);

    impl Rng {
        fn next_u64(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        }
        fn uniform(&mut self) -> f64 {
            (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
        }
        fn normal(&mut self) -> f64 {
            let (u, v) = (1.0 - self.uniform(), self.uniform());
            (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
        }
        fn below(&mut self, n: u64) -> u64 {
            self.next_u64() % n
        }
    }

    fn random_matrix(rows: usize, cols: usize, seed: u64) -> Array2<f64> {
        let mut rng = Rng(seed);
        Array2::from_shape_fn((rows, cols), |_| rng.normal())
    }

    fn random_symmetric(n: usize, seed: u64) -> Array2<f64> {
        let m = random_matrix(n, n, seed);
        (&m + &m.t()) / 2.0
    }

    fn max_abs<'a>(values: impl IntoIterator<Item = &'a f64>) -> f64 {
        values.into_iter().fold(0.0, |m, x| m.max(x.abs()))
    }

    fn frobenius(a: &Array2<f64>) -> f64 {
        a.iter().map(|x| x * x).sum::<f64>().sqrt()
    }

    fn from_rows<const N: usize>(rows: &[[f64; N]]) -> Array2<f64> {
        Array2::from(rows.to_vec())
    }

    /// Points of `dim` coordinates stored several to a row of a constant.
    fn points<const W: usize>(rows: &[[f64; W]], dim: usize) -> Array2<f64> {
        let flat = rows.as_flattened().to_vec();
        Array2::from_shape_vec((flat.len() / dim, dim), flat).unwrap()
    }

    fn flat<const W: usize>(rows: &[[i64; W]]) -> Array1<i64> {
        Array1::from(rows.as_flattened().to_vec())
    }

    /// Descending values, A V = V diag(values) to 1e-10 ||A||_F, V^T V = I, canonical signs.
    fn check_eigen(a: &Array2<f64>, values: &Array1<f64>, vectors: &Array2<f64>) {
        let n = a.nrows();
        assert_eq!(values.len(), n);
        assert_eq!(vectors.dim(), (n, n));
        assert!(values.windows(2).into_iter().all(|w| w[0] >= w[1]), "not descending: {values}");
        let residual = a.dot(vectors) - vectors * values;
        let scale = frobenius(a).max(f64::MIN_POSITIVE);
        assert!(max_abs(&residual) <= 1e-10 * scale, "n = {n}: residual {:e} vs |A| {scale:e}", max_abs(&residual));
        let gram = vectors.t().dot(vectors) - Array2::<f64>::eye(n);
        assert!(max_abs(&gram) <= 1e-12 * (n as f64).max(10.0), "n = {n}: V^T V - I = {:e}", max_abs(&gram));
        assert_canonical(vectors);
    }

    fn assert_canonical(v: &Array2<f64>) {
        for (j, col) in v.columns().into_iter().enumerate() {
            let largest = max_abs(col);
            let first = col.iter().find(|x| x.abs() == largest).copied().unwrap_or(0.0);
            assert!(first >= 0.0, "column {j} has its largest entry {first} negative");
        }
    }

    /// Squared distances by differences, no expansion.
    fn direct_sq_dist(a: &Array2<f64>, b: &Array2<f64>) -> Array2<f64> {
        Array2::from_shape_fn((a.nrows(), b.nrows()), |(i, j)| a.row(i).iter().zip(b.row(j)).map(|(x, y)| (x - y) * (x - y)).sum())
    }

    fn sq_norms(a: &Array2<f64>) -> Array1<f64> {
        a.map_axis(Axis(1), |r| r.dot(&r))
    }

    /// k nearest by a full stable sort on (distance, index), then the smallest most frequent label.
    fn knn_reference(d2: &Array2<f64>, labels: &Array1<i64>, k: usize) -> Array1<i64> {
        Array1::from_iter(d2.rows().into_iter().map(|row| {
            let mut idx: Vec<usize> = (0..row.len()).collect();
            idx.sort_by(|&p, &q| row[p].partial_cmp(&row[q]).unwrap());
            let mut counts = BTreeMap::new();
            for &j in &idx[..k] {
                *counts.entry(labels[j]).or_insert(0) += 1;
            }
            let top = *counts.values().max().unwrap();
            *counts.iter().find(|(_, &c)| c == top).unwrap().0
        }))
    }

    /// The neighbourhoods of `x` within `eps`, as lists.
    fn radius_lists(x: ArrayView2<f64>, eps: f64) -> Vec<Vec<u32>> {
        neighbour_lists(radius_bits(x, row_sq_norms(x).view(), eps).view())
    }

    /// Neighbourhoods given as lists, as a bit matrix.
    fn lists_to_bits(lists: &[Vec<u32>]) -> Array2<i64> {
        let n = lists.len();
        let mut bits = Array2::<i64>::zeros((n, n.div_ceil(64)));
        for (i, list) in lists.iter().enumerate() {
            for &j in list {
                bits[[i, j as usize / 64]] |= 1 << (j % 64);
            }
        }
        bits
    }

    #[test]
    fn bit_transposes_match_the_definition() {
        let mut rng = Rng(7);
        for _ in 0..20 {
            let m: [u64; 64] = std::array::from_fn(|_| rng.next_u64());
            let mut t = m;
            transpose_bits(&mut t);
            for (r, row) in m.iter().enumerate() {
                for (c, column) in t.iter().enumerate() {
                    assert_eq!((column >> r) & 1, (row >> c) & 1, "({r}, {c})");
                }
            }
        }
    }

    /// Neighbourhoods by exact differences; also returns how close any pair came to eps^2.
    fn brute_neighbours(x: &Array2<f64>, eps: f64) -> (Vec<Vec<u32>>, f64) {
        let d2 = direct_sq_dist(x, x);
        let margin = d2.iter().fold(f64::INFINITY, |m, &d| m.min((d - eps * eps).abs()));
        let lists = d2.rows().into_iter().map(|r| (0..r.len() as u32).filter(|&j| r[j as usize] <= eps * eps).collect()).collect();
        (lists, margin)
    }

    /// DBSCAN by components: clusters are the connected components of the core points (symmetric
    /// neighbourhoods), numbered by their smallest core index; a border point takes the smallest
    /// cluster number among its core neighbours.
    fn dbscan_reference(neighbours: &[Vec<u32>], min_samples: usize) -> Array1<i64> {
        let n = neighbours.len();
        let core: Vec<bool> = neighbours.iter().map(|nb| nb.len() >= min_samples).collect();
        let mut parent: Vec<usize> = (0..n).collect();
        fn find(parent: &mut [usize], mut i: usize) -> usize {
            while parent[i] != i {
                parent[i] = parent[parent[i]];
                i = parent[i];
            }
            i
        }
        for i in (0..n).filter(|&i| core[i]) {
            for &j in &neighbours[i] {
                if core[j as usize] {
                    let (ri, rj) = (find(&mut parent, i), find(&mut parent, j as usize));
                    parent[ri.max(rj)] = ri.min(rj);
                }
            }
        }
        let mut number = BTreeMap::new();
        let mut labels = vec![-1i64; n];
        for i in (0..n).filter(|&i| core[i]) {
            let root = find(&mut parent, i);
            let next = number.len() as i64;
            labels[i] = *number.entry(root).or_insert(next);
        }
        for i in (0..n).filter(|&i| !core[i]) {
            labels[i] = neighbours[i].iter().filter(|&&j| core[j as usize]).map(|&j| labels[j as usize]).min().unwrap_or(-1);
        }
        Array1::from_vec(labels)
    }

    // ---- symmetric_eigen -----------------------------------------------------------------------

    #[test]
    fn eigen_matches_numpy_4x4() {
        let a = from_rows(&EIG4);
        let (values, vectors) = symmetric_eigen(a.view());
        let expected = from_rows(&EIG4_VECTORS);
        assert!(max_abs(&(&values - &Array1::from(EIG4_VALUES.to_vec()))) < 1e-13, "{values}");
        assert!(max_abs(&(&vectors - &expected)) < 1e-12, "{vectors}\nvs\n{expected}");
        check_eigen(&a, &values, &vectors);
    }

    #[test]
    fn eigen_matches_numpy_13x13() {
        let a = Array2::from_shape_fn((13, 13), |(i, j)| ((i + 1) as f64 * (j + 1) as f64).sin() + 1.0 / (1 + i + j) as f64);
        let (values, vectors) = symmetric_eigen(a.view());
        assert!(max_abs(&(&values - &Array1::from(EIG13_VALUES.to_vec()))) < 1e-12, "{values}");
        for (col, expected) in [(0, EIG13_COLUMN0), (6, EIG13_COLUMN6), (12, EIG13_COLUMN12)] {
            let err = max_abs(&(&vectors.column(col) - &Array1::from(expected.to_vec())));
            assert!(err < 1e-11, "column {col}: error {err:e}");
        }
        check_eigen(&a, &values, &vectors);
    }

    #[test]
    fn eigen_of_1x1_and_0x0() {
        for x in [3.5, -2.0, 0.0] {
            let (values, vectors) = symmetric_eigen(Array2::from_elem((1, 1), x).view());
            assert_eq!(values, Array1::from(vec![x]));
            assert_eq!(vectors, Array2::from_elem((1, 1), 1.0));
        }
        let (values, vectors) = symmetric_eigen(Array2::<f64>::zeros((0, 0)).view());
        assert_eq!((values.len(), vectors.dim()), (0, (0, 0)));
    }

    #[test]
    fn eigen_reconstructs_random_matrices() {
        for (n, seed) in [(2, 1), (3, 2), (5, 3), (50, 4), (300, 5), (512, 6)] {
            let a = random_symmetric(n, seed);
            let (values, vectors) = symmetric_eigen(a.view());
            check_eigen(&a, &values, &vectors);
            let trace: f64 = a.diag().sum();
            assert!((values.sum() - trace).abs() <= 1e-10 * frobenius(&a), "n = {n}: trace");
        }
    }

    #[test]
    fn eigen_reads_only_the_lower_triangle() {
        let a = random_symmetric(20, 7);
        let mut junk = a.clone();
        for i in 0..20 {
            for j in i + 1..20 {
                junk[[i, j]] = 1e3 * (i + j) as f64;
            }
        }
        assert_eq!(symmetric_eigen(a.view()), symmetric_eigen(junk.view()));
        // A transposed (column-major) view of the same symmetric matrix gives the same result.
        let t = a.t().to_owned();
        let (v1, w1) = symmetric_eigen(a.view());
        let (v2, w2) = symmetric_eigen(t.t());
        assert_eq!((v1, w1), (v2, w2));
    }

    #[test]
    fn eigen_of_structured_matrices() {
        // Zero matrix: all zero eigenvalues, an orthonormal basis.
        let zero = Array2::<f64>::zeros((6, 6));
        let (values, vectors) = symmetric_eigen(zero.view());
        assert!(values.iter().all(|&x| x == 0.0));
        check_eigen(&zero, &values, &vectors);
        // Diagonal: the sorted diagonal, permuted unit vectors.
        let diag = Array2::from_diag(&Array1::from(vec![1.0, -3.0, 4.0, 0.5, 2.0]));
        let (values, vectors) = symmetric_eigen(diag.view());
        assert_eq!(values, Array1::from(vec![4.0, 2.0, 1.0, 0.5, -3.0]));
        for (col, row) in [2, 4, 0, 3, 1].into_iter().enumerate() {
            assert!((vectors[[row, col]] - 1.0).abs() < 1e-15, "{vectors}");
        }
        check_eigen(&diag, &values, &vectors);
        // Reflection I - 2 u u^T / u.u: eigenvalue 1 repeated n-1 times, and -1.
        let u = Array1::from_iter((0..40).map(|i| (i as f64 * 0.37).cos()));
        let outer = u.view().insert_axis(Axis(1)).dot(&u.view().insert_axis(Axis(0)));
        let refl = Array2::<f64>::eye(40) - &outer * (2.0 / u.dot(&u));
        let (values, vectors) = symmetric_eigen(refl.view());
        assert!(values.iter().take(39).all(|&x| (x - 1.0).abs() < 1e-13) && (values[39] + 1.0).abs() < 1e-13, "{values}");
        check_eigen(&refl, &values, &vectors);
        let unit = &u / u.dot(&u).sqrt();
        let along = vectors.column(39).dot(&unit).abs();
        assert!((along - 1.0).abs() < 1e-12);
        // Rank one x x^T: ||x||^2 and x / ||x|| (canonically signed), then zeros.
        let outer = u.view().insert_axis(Axis(1)).dot(&u.view().insert_axis(Axis(0)));
        let (values, vectors) = symmetric_eigen(outer.view());
        assert!((values[0] - u.dot(&u)).abs() < 1e-12 * u.dot(&u) && max_abs(values.slice(s![1..])) < 1e-12 * u.dot(&u));
        assert!(max_abs(&(&vectors.column(0) - &unit)) < 1e-12, "unit[0] = {} is the largest entry and positive", unit[0]);
        check_eigen(&outer, &values, &vectors);
        // Already tridiagonal (the second-difference matrix): 2 - 2 cos(k pi / (n + 1)).
        let n = 30;
        let lap = Array2::from_shape_fn((n, n), |(i, j)| {
            if i == j {
                2.0
            } else if i.abs_diff(j) == 1 {
                -1.0
            } else {
                0.0
            }
        });
        let (values, vectors) = symmetric_eigen(lap.view());
        for (r, &x) in values.iter().enumerate() {
            let expected = 2.0 - 2.0 * ((n - r) as f64 * std::f64::consts::PI / (n + 1) as f64).cos();
            assert!((x - expected).abs() < 1e-13, "{r}: {x} vs {expected}");
        }
        check_eigen(&lap, &values, &vectors);
    }

    #[test]
    fn eigen_scales_with_the_matrix() {
        let a = random_symmetric(40, 8);
        let (values, vectors) = symmetric_eigen(a.view());
        for c in [1e-150, 1e-20, 1e20, 1e150] {
            let (vc, wc) = symmetric_eigen((&a * c).view());
            assert!(max_abs(&(&vc / c - &values)) < 1e-12 * frobenius(&a), "scale {c:e}");
            assert!(max_abs(&(&wc - &vectors)) < 1e-10, "scale {c:e}");
        }
    }

    #[test]
    fn eigen_of_non_finite_input_is_nan() {
        let mut a = random_symmetric(5, 9);
        a[[3, 1]] = f64::NAN;
        let (values, vectors) = symmetric_eigen(a.view());
        assert!(values.iter().chain(vectors.iter()).all(|x| x.is_nan()));
        a[[3, 1]] = f64::INFINITY;
        assert!(symmetric_eigen(a.view()).0.iter().all(|x| x.is_nan()));
    }

    #[test]
    #[should_panic(expected = "square")]
    fn eigen_rejects_non_square() {
        symmetric_eigen(Array2::<f64>::zeros((2, 3)).view());
    }

    #[test]
    fn canonical_signs_flip_columns_by_their_largest_entry() {
        let mut v = Array2::from(vec![[0.5, -0.5, 0.1, 0.0, -0.2], [-0.5, 0.5, -0.9, 0.0, 0.2], [0.2, 0.1, 0.3, 0.0, -0.1]]);
        canonical_signs(&mut v);
        // Columns 0 and 1 tie in magnitude: the first largest entry decides.
        let expected = Array2::from(vec![[0.5, 0.5, -0.1, 0.0, 0.2], [-0.5, -0.5, 0.9, 0.0, -0.2], [0.2, -0.1, -0.3, 0.0, 0.1]]);
        assert_eq!(v, expected);
        canonical_signs(&mut v);
        assert_eq!(v, expected, "idempotent");
        let mut empty = Array2::<f64>::zeros((0, 3));
        canonical_signs(&mut empty);
    }

    // ---- squared_distances ---------------------------------------------------------------------

    #[test]
    fn squared_distances_match_differences() {
        // 37 rows run serially, 600 rows in parallel chunks.
        for (rows, seed) in [(37, 10), (600, 11)] {
            let a = random_matrix(rows, 5, seed);
            let b = random_matrix(1000, 5, seed + 100);
            let d2 = squared_distances(a.view(), b.view(), sq_norms(&b).view());
            assert_eq!(d2.dim(), (rows, 1000));
            let err = max_abs(&(&d2 - &direct_sq_dist(&a, &b)));
            assert!(err < 1e-12 * 40.0, "{rows}: {err:e}");
        }
    }

    #[test]
    fn squared_distances_follow_the_sklearn_expansion() {
        let a = Array2::from(vec![[1.0, 2.0], [0.5, -1.0]]);
        let b = Array2::from(vec![[3.0, 0.0], [1.0, 2.0], [0.1, 0.7]]);
        let d2 = squared_distances(a.view(), b.view(), sq_norms(&b).view());
        for i in 0..2 {
            for j in 0..3 {
                let ab = a[[i, 0]] * b[[j, 0]] + a[[i, 1]] * b[[j, 1]];
                let expected = (-2.0 * ab + (a[[i, 0]].powi(2) + a[[i, 1]].powi(2))) + (b[[j, 0]].powi(2) + b[[j, 1]].powi(2));
                assert_eq!(d2[[i, j]], expected.max(0.0), "({i}, {j})");
            }
        }
        assert_eq!(d2[[0, 1]], 0.0);
    }

    #[test]
    fn squared_distances_clip_cancellation_to_zero() {
        // Far from the origin the expansion cancels badly; negatives must come back as 0.
        let mut x = random_matrix(300, 8, 12) * 1e-4;
        x += 1e4;
        let d2 = squared_distances(x.view(), x.view(), sq_norms(&x).view());
        assert!(d2.iter().all(|&d| d >= 0.0));
        assert!(d2.diag().iter().all(|&d| d < 1e-3), "diagonal holds only rounding error");
    }

    #[test]
    fn squared_distances_of_empty_shapes() {
        let b = random_matrix(4, 3, 13);
        assert_eq!(squared_distances(Array2::zeros((0, 3)).view(), b.view(), sq_norms(&b).view()).dim(), (0, 4));
        let a = random_matrix(2, 3, 14);
        assert_eq!(squared_distances(a.view(), Array2::zeros((0, 3)).view(), Array1::zeros(0).view()).dim(), (2, 0));
        let d = squared_distances(Array2::zeros((2, 0)).view(), Array2::zeros((3, 0)).view(), Array1::zeros(3).view());
        assert_eq!(d, Array2::<f64>::zeros((2, 3)));
    }

    #[test]
    #[should_panic(expected = "features")]
    fn squared_distances_reject_mismatched_features() {
        squared_distances(Array2::zeros((2, 3)).view(), Array2::zeros((2, 4)).view(), Array1::zeros(2).view());
    }

    // ---- knn_vote ------------------------------------------------------------------------------

    #[test]
    fn knn_matches_sklearn() {
        let cases = [
            (KNN0_TRAIN, KNN0_LABELS, KNN0_QUERIES, KNN0_EXPECTED, 5),
            // k = 4 with three labels: five of the fifteen votes tie, sklearn takes the smallest label.
            (KNN1_TRAIN, KNN1_LABELS, KNN1_QUERIES, KNN1_EXPECTED, 4),
        ];
        for (train, labels, queries, expected, k) in cases {
            let (train, queries, labels) = (points(&train, 3), points(&queries, 3), flat(&labels));
            assert_eq!((train.nrows(), queries.nrows()), (40, 15));
            let d2 = squared_distances(queries.view(), train.view(), sq_norms(&train).view());
            assert_eq!(knn_vote(d2.view(), labels.view(), k), Array1::from(expected.to_vec()));
            assert_eq!(knn_reference(&d2, &labels, k), Array1::from(expected.to_vec()));
        }
    }

    #[test]
    fn knn_breaks_ties_by_index_then_smallest_label() {
        let labels = Array1::from(vec![7, 3, 3, 7, 1]);
        let d2 = Array2::from(vec![[1.0, 0.5, 1.0, 0.5, 2.0], [f64::NAN, 1.0, f64::NAN, 2.0, 3.0], [0.0, 0.0, 0.0, 0.0, 0.0], [9.0, 9.0, 9.0, 9.0, 0.0]]);
        let vote = |k| knn_vote(d2.view(), labels.view(), k).to_vec();
        // Row 0, k = 1: index 1 (0.5, before index 3). k = 2: {3, 7} tie, 3 wins. k = 3: index 0 beats
        // index 2 at distance 1.0, {3, 7, 7}. k = 4: {3, 7, 7, 3}, 3. k = 5: 3 and 7 twice, 1 once: 3.
        // Row 1 (NaN as +inf), k = 3: {3, 7, 1} all once, 1 wins; k = 4 adds index 0 before index 2.
        assert_eq!(vote(1), [3, 3, 7, 1]);
        assert_eq!(vote(2), [3, 3, 3, 1]);
        assert_eq!(vote(3), [7, 1, 3, 1]);
        assert_eq!(vote(4), [3, 7, 3, 3]);
        assert_eq!(vote(5), [3, 3, 3, 3]);
        // Row 1 with NaN as +inf: k = 4 takes 1, 3, 4 and then index 0: {3, 7, 1, 7}.
        assert_eq!(knn_vote(d2.slice(s![1..2, ..]), labels.view(), 4).to_vec(), [7]);
        // Negative labels: the smallest of the tied labels is the most negative.
        let signed = Array1::from(vec![-4, 6, 6, -4, -9]);
        assert_eq!(knn_vote(d2.view(), signed.view(), 2).to_vec(), [-4, -4, -4, -9]);
    }

    #[test]
    fn knn_partial_selection_matches_a_full_sort() {
        let mut rng = Rng(15);
        // Integer distances: ties everywhere, both in distance and in the vote.
        let d2 = Array2::from_shape_fn((60, 97), |_| rng.below(6) as f64);
        let labels = Array1::from_iter((0..97).map(|_| rng.below(5) as i64 - 2));
        for k in [1, 2, 3, 5, 8, 31, 32, 33, 48, 64, 96, 97] {
            assert_eq!(knn_vote(d2.view(), labels.view(), k), knn_reference(&d2, &labels, k), "k = {k}");
        }
        let continuous = random_matrix(40, 200, 16);
        let labels = Array1::from_iter((0..200).map(|i| (i % 7) as i64));
        for k in [1, 7, 32, 40, 150] {
            assert_eq!(knn_vote(continuous.view(), labels.view(), k), knn_reference(&continuous, &labels, k), "k = {k}");
        }
        assert_eq!(knn_vote(Array2::zeros((0, 3)).view(), Array1::from(vec![1, 2, 3]).view(), 2).len(), 0);
    }

    #[test]
    #[should_panic(expected = "must be in 1..=3")]
    fn knn_rejects_k_above_the_training_size() {
        knn_vote(Array2::zeros((2, 3)).view(), Array1::from(vec![1, 2, 3]).view(), 4);
    }

    // ---- radius_neighbours ---------------------------------------------------------------------

    #[test]
    fn radius_neighbours_match_brute_force() {
        let x = random_matrix(300, 4, 17);
        let eps = 0.9;
        let (expected, margin) = brute_neighbours(&x, eps);
        assert!(margin > 1e-9, "test data too close to the boundary: {margin:e}");
        let sizes: Vec<usize> = expected.iter().map(Vec::len).collect();
        assert!(sizes.iter().any(|&s| s > 10) && sizes.contains(&1), "{sizes:?}");
        assert_eq!(radius_lists(x.view(), eps), expected);
        // Uneven blocks and tiles, and a single block and tile.
        for (rows, cols) in [(7, 13), (1, 1), (64, 5), (300, 300), (1000, 1000)] {
            assert_eq!(neighbour_lists(radius_bits_tiled(x.view(), row_sq_norms(x.view()).view(), eps, rows, cols).view()), expected, "tiles {rows} x {cols}");
        }
    }

    #[test]
    fn radius_neighbours_in_many_blocks() {
        // More points than one row block and one column tile.
        let x = random_matrix(2600, 3, 18);
        let eps = 0.25;
        let (expected, margin) = brute_neighbours(&x, eps);
        assert!(margin > 1e-9, "{margin:e}");
        let got = radius_lists(x.view(), eps);
        assert_eq!(got, expected);
        for (i, list) in got.iter().enumerate() {
            assert!(list.windows(2).all(|w| w[0] < w[1]) && list.contains(&(i as u32)));
            assert!(list.iter().all(|&j| got[j as usize].contains(&(i as u32))), "symmetric");
        }
    }

    #[test]
    fn radius_neighbours_include_the_boundary_and_self() {
        // Integer grid: neighbours at exactly eps = 1 count; the expansion is exact here.
        let grid = Array2::from_shape_fn((12, 2), |(i, c)| if c == 0 { (i / 3) as f64 } else { (i % 3) as f64 });
        let nb = radius_lists(grid.view(), 1.0);
        assert_eq!(nb[4], [1, 3, 4, 5, 7]);
        assert_eq!(nb[0], [0, 1, 3]);
        // eps = 0: only the point itself and exact duplicates.
        let dup = Array2::from(vec![[1.0, 2.0], [3.0, 4.0], [1.0, 2.0]]);
        assert_eq!(radius_lists(dup.view(), 0.0), [vec![0, 2], vec![1], vec![0, 2]]);
        assert!(radius_lists(Array2::zeros((0, 5)).view(), 1.0).is_empty());
        assert_eq!(radius_lists(Array2::zeros((3, 0)).view(), 0.5), vec![vec![0, 1, 2]; 3]);
    }

    #[test]
    #[should_panic(expected = "eps must be >= 0")]
    fn radius_neighbours_reject_nan_eps() {
        radius_lists(Array2::zeros((2, 2)).view(), f64::NAN);
    }

    // ---- dbscan_labels -------------------------------------------------------------------------

    fn dbscan(points: &Array2<f64>, eps: f64, min_samples: usize) -> Array1<i64> {
        dbscan_labels(radius_bits(points.view(), row_sq_norms(points.view()).view(), eps).view(), min_samples)
    }

    #[test]
    fn dbscan_matches_sklearn_on_blobs() {
        let labels = dbscan(&points(&DB_BLOBS, 2), 0.5, 4);
        assert_eq!(labels, flat(&DB_BLOBS_LABELS));
        assert_eq!((labels.iter().max(), labels.iter().filter(|&&l| l == -1).count()), (Some(&2), 18));
    }

    #[test]
    fn dbscan_gives_a_shared_border_point_to_the_first_cluster() {
        // Point 0 (2.45, 0.1) is within eps of the end of the left chain (0.46 away) and of the right
        // chain (0.56 away) but is not core. The right chain holds the lower indices, becomes cluster
        // 0 and reaches point 0 first: sklearn labels it 0 although it is nearer cluster 1.
        let labels = dbscan(&points(&DB_SHARED, 2), 0.6, 6);
        assert_eq!(labels, flat(&DB_SHARED_LABELS));
        assert_eq!((labels[0], labels[1], labels[29]), (0, 0, 1));
    }

    #[test]
    fn dbscan_matches_sklearn_on_a_grid_with_boundary_distances() {
        let grid = points(&DB_GRID, 2);
        assert_eq!(dbscan(&grid, 1.0, 3), Array1::from(DB_GRID_LABELS_MS3.to_vec()));
        assert_eq!(dbscan(&grid, 1.0, 5), Array1::from(DB_GRID_LABELS_MS5.to_vec()));
    }

    #[test]
    fn dbscan_from_hand_made_neighbourhoods() {
        // min_samples 4. Cores 0, 1, 2 (cluster 0) with border 3; noise 4; cores 5, 6, 7, 9
        // (cluster 1, lists scrambled); 8 is a border point of both (3 neighbours, within reach of
        // cores 0 and 6): the first cluster takes it.
        let nb: Vec<Vec<u32>> = vec![
            vec![0, 1, 2, 8],
            vec![1, 0, 2, 3],
            vec![2, 0, 1, 3],
            vec![3, 1, 2],
            vec![4],
            vec![9, 5, 6, 7],
            vec![6, 8, 9, 7, 5],
            vec![5, 7, 6, 9],
            vec![8, 6, 0],
            vec![7, 6, 9, 5],
        ];
        assert_eq!(dbscan_labels(lists_to_bits(&nb).view(), 4).to_vec(), [0, 0, 0, 0, -1, 1, 1, 1, 0, 1]);
        assert_eq!(dbscan_labels(lists_to_bits(&nb).view(), 4), dbscan_reference(&nb, 4));
        // min_samples 1: every point is core and 8 joins the two clusters; 4 is a cluster alone.
        assert_eq!(dbscan_labels(lists_to_bits(&nb).view(), 1).to_vec(), [0, 0, 0, 0, 1, 0, 0, 0, 0, 0]);
        // Nothing is core.
        assert_eq!(dbscan_labels(lists_to_bits(&nb).view(), 6).to_vec(), [-1; 10]);
        assert_eq!(dbscan_labels(lists_to_bits(&[]).view(), 3).len(), 0);
    }

    #[test]
    fn dbscan_matches_a_components_reference() {
        for seed in 0..20 {
            let mut rng = Rng(100 + seed);
            let n = 150 + rng.below(100) as usize;
            let x = Array2::from_shape_fn((n, 2), |_| rng.uniform() * 10.0);
            let eps = 0.4 + rng.uniform() * 0.6;
            let min_samples = 2 + rng.below(6) as usize;
            let (nb, _) = brute_neighbours(&x, eps);
            let labels = dbscan_labels(lists_to_bits(&nb).view(), min_samples);
            assert_eq!(labels, dbscan_reference(&nb, min_samples), "seed {seed}");
        }
    }
}

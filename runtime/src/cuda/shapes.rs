//! The arithmetic of launches, without a GPU: output shapes of pieces, how an elementwise
//! kernel indexes a broadcast argument (`div`/`mod`), reduction geometry, how a row-major
//! product maps onto column-major cuBLAS, grid sizes and the pool's size classes. Pure
//! functions, so they are tested on machines without a GPU.

/// Threads per block of elementwise and fill kernels (grid-stride loops).
pub(super) const BLOCK: u32 = 256;
/// Threads per block of reduction kernels (one block per output value).
pub(super) const REDUCE_BLOCK: u32 = 256;

/// Blocks for `n` elements: enough to fill the GPU, never more than one per 256 elements
/// (the kernels loop over the rest).
pub(super) fn blocks_for(n: u64, sms: u32) -> u32 {
    let wanted = n.div_ceil(BLOCK as u64);
    wanted.min(sms.max(1) as u64 * 32).max(1) as u32
}

/// Size class of an allocation: powers of two up to 1 MiB, multiples of 2 MiB above, so that
/// pieces of one stage reuse each other's blocks.
pub(super) fn size_class(bytes: usize) -> usize {
    const MIB: usize = 1 << 20;
    if bytes <= MIB {
        bytes.max(512).next_power_of_two()
    } else {
        bytes.div_ceil(2 * MIB) * 2 * MIB
    }
}

/// numpy's broadcast of argument shapes (right-aligned; 1 stretches).
pub(super) fn broadcast_shape(shapes: &[&[usize]]) -> Result<Vec<usize>, String> {
    let ndim = shapes.iter().map(|s| s.len()).max().unwrap_or(0);
    let mut out = vec![1usize; ndim];
    for s in shapes {
        for (k, &d) in s.iter().enumerate() {
            let o = &mut out[ndim - s.len() + k];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return Err(format!("arguments of shapes {shapes:?} do not broadcast together"));
            }
        }
    }
    Ok(out)
}

pub(super) use crate::annotation::broadcast_index as index_map;

/// Shape of the piece covering `rows` of a value of shape `shape` (a 0-d value is whole).
pub(super) fn piece_shape(shape: &[usize], rows: &std::ops::Range<usize>) -> Vec<usize> {
    let mut s = shape.to_vec();
    if let Some(first) = s.first_mut() {
        *first = rows.len();
    }
    s
}

/// A reduction of one piece: the piece as `rows x cols` (a 1-D piece is `rows x 1`, a 0-d
/// one `1 x 1`), the output's shape, and how many output values (blocks) there are.
#[derive(Debug, PartialEq, Eq)]
pub(super) struct ReduceGeometry {
    pub rows: u64,
    pub cols: u64,
    /// For a middle axis (a `*_lanes` kernel): elements after the axis; `rows` is then the
    /// elements before it and `cols` the axis's length.
    pub inner: Option<u64>,
    pub out_shape: Vec<usize>,
    pub outputs: u64,
}

/// How a reduction of a value of `shape` over `axis` launches ([`Launch::Reduce`]): whole
/// (rows x cols is every element), down axis 0 (rows = axis 0, cols = the rest), along the
/// last axis (rows = the rest, cols = the last axis), or a middle axis (outer x len x inner).
pub(super) fn reduce_geometry(shape: &[usize], axis: Option<usize>) -> Result<ReduceGeometry, String> {
    let n = shape.len();
    let prod = |s: &[usize]| s.iter().product::<usize>() as u64;
    let mut out_shape = shape.to_vec();
    let (rows, cols, inner) = match axis {
        None => {
            out_shape.clear();
            (shape.first().map_or(1, |&r| r as u64), prod(shape.get(1..).unwrap_or(&[])), None)
        }
        Some(a) if a >= n.max(1) => return Err(format!("axis {a} of a {n}-d array")),
        Some(0) if n <= 1 => {
            out_shape.clear();
            (shape.first().map_or(1, |&r| r as u64), 1, None)
        }
        Some(a) => {
            out_shape.remove(a);
            let (before, len, after) = (prod(&shape[..a]), shape[a] as u64, prod(&shape[a + 1..]));
            match a {
                0 => (len, after, None),
                _ if a == n - 1 => (before, len, None),
                _ => (before, len, Some(after)),
            }
        }
    };
    let outputs = out_shape.iter().product::<usize>() as u64;
    Ok(ReduceGeometry { rows, cols, inner, out_shape, outputs })
}

/// Which argument of `dot` plays a role in a cuBLAS call.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Which {
    Left,
    Right,
}

/// A row-major product as column-major cuBLAS calls (a row-major `r x c` matrix is a
/// column-major `c x r` one with leading dimension `c`: the transpose trick).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum GemmPlan {
    /// `out = left · right`, both vectors of `k` elements (cuBLAS dot).
    Dot { k: i64 },
    /// `y = op(M) x` with M column-major `m x n`, leading dimension `ld`; `op` transposes when
    /// `trans` (cuBLAS gemv).
    Gemv { trans: bool, m: i64, n: i64, ld: i64, matrix: Which, vector: Which },
    /// `C = op(A) op(B)`, column-major: C `m x n` (leading dimension m), op(A) `m x k`, op(B)
    /// `k x n`; `ta`/`tb` transpose A/B (stored `k x m`/`n x k`).
    Gemm { m: i64, n: i64, k: i64, a: Which, lda: i64, ta: bool, b: Which, ldb: i64, tb: bool },
    /// The shared dimension is empty: the result is zeros.
    Zeros,
    /// The result has no elements.
    Empty,
}

/// The plan and the output shape for `left · right` (the four cases of `dot`).
pub(super) fn gemm_plan(left: &[usize], right: &[usize]) -> Result<(GemmPlan, Vec<usize>), String> {
    let mismatch = || format!("cannot multiply shapes {left:?} and {right:?}");
    let (plan, out, k) = match (left, right) {
        (&[k], &[l]) if k == l => (GemmPlan::Dot { k: k as i64 }, vec![], k),
        // [n, k] · [k]: the row-major matrix is a column-major k x n one; y = M^T x.
        (&[n, k], &[l]) if k == l => (GemmPlan::Gemv { trans: true, m: k as i64, n: n as i64, ld: k.max(1) as i64, matrix: Which::Left, vector: Which::Right }, vec![n], k),
        // [k] · [k, m]: the row-major matrix is a column-major m x k one; y = M x.
        (&[k], &[l, m]) if k == l => (GemmPlan::Gemv { trans: false, m: m as i64, n: k as i64, ld: m.max(1) as i64, matrix: Which::Right, vector: Which::Left }, vec![m], k),
        // [n, k] · [k, m] = C row-major n x m = C^T column-major m x n = right^T left^T.
        (&[n, k], &[l, m]) if k == l => (
            GemmPlan::Gemm { m: m as i64, n: n as i64, k: k as i64, a: Which::Right, lda: m.max(1) as i64, ta: false, b: Which::Left, ldb: k.max(1) as i64, tb: false },
            vec![n, m],
            k,
        ),
        _ => return Err(mismatch()),
    };
    Ok(empty_or_zeros(plan, out, k))
}

/// The plan and the output shape for `X^T X` of a row-major `n x d` X: X is the column-major
/// `d x n` A, and `A A^T` (`d x d`, symmetric) reads the same in either order.
pub(super) fn gram_plan(x: &[usize]) -> Result<(GemmPlan, Vec<usize>), String> {
    let &[n, d] = x else { return Err(format!("X^T X of a {}-d array", x.len())) };
    let ld = d.max(1) as i64;
    let plan = GemmPlan::Gemm { m: d as i64, n: d as i64, k: n as i64, a: Which::Left, lda: ld, ta: false, b: Which::Left, ldb: ld, tb: true };
    Ok(empty_or_zeros(plan, vec![d, d], n))
}

/// The plan and the shape of `C = A · B^T` for row-major `A` (`rows x k`, `Which::Left`) and
/// `B` (`cols x k`, `Which::Right`): C row-major `rows x cols` is the column-major `cols x
/// rows` `B A^T`, where B is stored as the column-major `k x cols` (transposed) and A as the
/// column-major `k x rows` (as it is).
pub(super) fn cross_plan(rows: usize, cols: usize, k: usize) -> (GemmPlan, Vec<usize>) {
    let ld = k.max(1) as i64;
    let plan = GemmPlan::Gemm { m: cols as i64, n: rows as i64, k: k as i64, a: Which::Right, lda: ld, ta: true, b: Which::Left, ldb: ld, tb: false };
    empty_or_zeros(plan, vec![rows, cols], k)
}

/// Rows per block of a [`crate::annotation::Launch::Cross`] product: as many `cols`-wide rows of
/// `elem`-byte products as fit in `scratch` bytes, at least one, at most `rows`.
pub(super) fn cross_block_rows(rows: usize, cols: usize, elem: usize, scratch: usize) -> usize {
    (scratch / (cols * elem).max(1)).clamp(1, rows.max(1))
}

/// `plan`, unless its result `out` has no elements or its shared dimension `k` is empty.
fn empty_or_zeros(plan: GemmPlan, out: Vec<usize>, k: usize) -> (GemmPlan, Vec<usize>) {
    let len: usize = out.iter().product();
    match () {
        _ if len == 0 => (GemmPlan::Empty, out),
        _ if k == 0 => (GemmPlan::Zeros, out),
        _ => (plan, out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn size_classes_round_up_and_group_pieces() {
        assert_eq!(size_class(1), 512);
        assert_eq!(size_class(513), 1024);
        assert_eq!(size_class(1 << 20), 1 << 20);
        assert_eq!(size_class((1 << 20) + 1), 2 << 20);
        assert_eq!(size_class(5 << 20), 6 << 20);
        assert!(size_class(123_456_789) >= 123_456_789);
    }

    #[test]
    fn broadcast_like_numpy() {
        assert_eq!(broadcast_shape(&[&[4, 3], &[3]]).unwrap(), vec![4, 3]);
        assert_eq!(broadcast_shape(&[&[4, 1], &[4, 3]]).unwrap(), vec![4, 3]);
        assert_eq!(broadcast_shape(&[&[], &[5]]).unwrap(), vec![5]);
        assert_eq!(broadcast_shape(&[&[], &[]]).unwrap(), Vec::<usize>::new());
        assert!(broadcast_shape(&[&[4, 3], &[4]]).is_err());
    }

    #[test]
    fn index_maps_of_the_documented_cases() {
        assert_eq!(index_map(&[4, 3], &[4, 3]).unwrap(), (1, 12));
        assert_eq!(index_map(&[7], &[7]).unwrap(), (1, 7));
        assert_eq!(index_map(&[], &[4, 3]).unwrap(), (1, 1));
        assert_eq!(index_map(&[1, 1], &[4, 3]).unwrap(), (1, 1));
        assert_eq!(index_map(&[3], &[4, 3]).unwrap(), (1, 3));
        assert_eq!(index_map(&[1, 3], &[4, 3]).unwrap(), (1, 3));
        assert_eq!(index_map(&[4, 1], &[4, 3]).unwrap(), (3, 4));
        assert_eq!(index_map(&[4, 1, 1], &[4, 3, 2]).unwrap(), (6, 4));
        assert_eq!(index_map(&[3, 2], &[4, 3, 2]).unwrap(), (1, 6));
        assert_eq!(index_map(&[1, 3, 1], &[4, 3, 2]).unwrap(), (2, 3));
        // Size-1 axes of the output inside the run are fine.
        assert_eq!(index_map(&[4, 1, 2], &[4, 1, 2]).unwrap(), (1, 8));
        assert!(index_map(&[4, 1, 2], &[4, 3, 2]).unwrap_err().contains("contiguous"));
        assert!(index_map(&[5], &[4, 3]).is_err());
        assert!(index_map(&[2, 4, 3], &[4, 3]).is_err());
    }

    /// The map agrees with numpy broadcasting element by element.
    #[test]
    fn index_maps_agree_with_broadcast_indexing() {
        let out = [3usize, 4, 5];
        let args: [&[usize]; 7] = [&[3, 4, 5], &[4, 5], &[5], &[3, 1, 1], &[3, 4, 1], &[1, 4, 1], &[]];
        for arg in args {
            let (div, modulo) = index_map(arg, &out).unwrap();
            let pad = out.len() - arg.len();
            for i in 0..out.iter().product::<usize>() {
                let idx = [i / 20, (i / 5) % 4, i % 5];
                let mut flat = 0;
                for (k, &a) in arg.iter().enumerate() {
                    flat = flat * a + if a == 1 { 0 } else { idx[k + pad] };
                }
                assert_eq!((i as u64 / div) % modulo, flat as u64, "arg {arg:?} element {i}");
            }
        }
    }

    #[test]
    fn piece_shapes_cut_axis_zero() {
        assert_eq!(piece_shape(&[10, 3], &(2..5)), vec![3, 3]);
        assert_eq!(piece_shape(&[], &(0..1)), Vec::<usize>::new());
    }

    #[test]
    fn reduction_geometry() {
        let g = reduce_geometry(&[6, 4], None).unwrap();
        assert_eq!((g.rows, g.cols, g.outputs, g.out_shape.len()), (6, 4, 1, 0));
        let g = reduce_geometry(&[6, 4], Some(0)).unwrap();
        assert_eq!((g.outputs, g.out_shape), (4, vec![4]));
        let g = reduce_geometry(&[6, 4], Some(1)).unwrap();
        assert_eq!((g.outputs, g.out_shape), (6, vec![6]));
        let g = reduce_geometry(&[9], Some(0)).unwrap();
        assert_eq!((g.rows, g.cols, g.outputs, g.out_shape), (9, 1, 1, vec![]));
        assert_eq!(reduce_geometry(&[], None).unwrap().rows, 1);
        assert!(reduce_geometry(&[9], Some(1)).is_err());
        // More axes: whole, axis 0 and the last as a matrix; a middle axis as lanes.
        let g = reduce_geometry(&[2, 3, 4], None).unwrap();
        assert_eq!((g.rows * g.cols, g.outputs, g.inner), (24, 1, None));
        let g = reduce_geometry(&[2, 3, 4], Some(0)).unwrap();
        assert_eq!((g.rows, g.cols, g.inner, g.outputs, g.out_shape), (2, 12, None, 12, vec![3, 4]));
        let g = reduce_geometry(&[2, 3, 4], Some(2)).unwrap();
        assert_eq!((g.rows, g.cols, g.inner, g.outputs, g.out_shape), (6, 4, None, 6, vec![2, 3]));
        let g = reduce_geometry(&[2, 3, 4, 5], Some(2)).unwrap();
        assert_eq!((g.rows, g.cols, g.inner, g.outputs, g.out_shape), (6, 4, Some(5), 30, vec![2, 3, 5]));
        assert!(reduce_geometry(&[2, 2, 2], Some(3)).is_err());
    }

    #[test]
    fn blocks_fill_the_gpu_and_no_more() {
        assert_eq!(blocks_for(0, 132), 1);
        assert_eq!(blocks_for(1, 132), 1);
        assert_eq!(blocks_for(257, 132), 2);
        assert_eq!(blocks_for(1 << 30, 132), 132 * 32);
    }

    /// Column-major BLAS on the host, to check the plans' arguments.
    fn run_plan(plan: &GemmPlan, left: &[f64], right: &[f64], out_len: usize) -> Vec<f64> {
        let pick = |w: Which| if w == Which::Left { left } else { right };
        let mut out = vec![f64::NAN; out_len];
        match *plan {
            GemmPlan::Dot { k } => out[0] = (0..k as usize).map(|i| left[i] * right[i]).sum(),
            GemmPlan::Gemv { trans, m, n, ld, matrix, vector } => {
                let (a, x) = (pick(matrix), pick(vector));
                let (m, n, ld) = (m as usize, n as usize, ld as usize);
                let at = |i: usize, j: usize| a[i + j * ld];
                if trans {
                    assert_eq!(out.len(), n);
                    for (j, o) in out.iter_mut().enumerate() {
                        *o = (0..m).map(|i| at(i, j) * x[i]).sum();
                    }
                } else {
                    assert_eq!(out.len(), m);
                    for (i, o) in out.iter_mut().enumerate() {
                        *o = (0..n).map(|j| at(i, j) * x[j]).sum();
                    }
                }
            }
            GemmPlan::Gemm { m, n, k, a, lda, ta, b, ldb, tb } => {
                let (a, b) = (pick(a), pick(b));
                let (m, n, k, lda, ldb) = (m as usize, n as usize, k as usize, lda as usize, ldb as usize);
                let op_a = |i: usize, p: usize| if ta { a[p + i * lda] } else { a[i + p * lda] };
                let op_b = |p: usize, j: usize| if tb { b[j + p * ldb] } else { b[p + j * ldb] };
                assert_eq!(out.len(), m * n);
                for j in 0..n {
                    for i in 0..m {
                        out[i + j * m] = (0..k).map(|p| op_a(i, p) * op_b(p, j)).sum();
                    }
                }
            }
            GemmPlan::Zeros => out.iter_mut().for_each(|o| *o = 0.0),
            GemmPlan::Empty => assert_eq!(out_len, 0),
        }
        out
    }

    /// Row-major product, the definition.
    fn naive(left: &[f64], ls: &[usize], right: &[f64], rs: &[usize]) -> Vec<f64> {
        let (n, k) = if ls.len() == 2 { (ls[0], ls[1]) } else { (1, ls[0]) };
        let m = if rs.len() == 2 { rs[1] } else { 1 };
        let mut out = vec![0.0; n * m];
        for i in 0..n {
            for j in 0..m {
                out[i * m + j] = (0..k).map(|p| left[i * k + p] * right[p * m + j]).sum();
            }
        }
        out
    }

    #[test]
    fn gemm_plans_compute_row_major_products() {
        let cases: [(&[usize], &[usize]); 11] = [
            (&[5], &[5]),
            (&[3, 5], &[5]),
            (&[5], &[5, 4]),
            (&[3, 5], &[5, 4]),
            (&[1, 5], &[5, 1]),
            (&[3, 1], &[1, 4]),
            (&[3, 0], &[0, 4]),
            (&[0, 5], &[5, 4]),
            (&[0], &[0]),
            (&[3, 0], &[0]),
            (&[0], &[0, 2]),
        ];
        for (ls, rs) in cases {
            let left: Vec<f64> = (0..ls.iter().product::<usize>()).map(|i| (i as f64 * 0.37).sin()).collect();
            let right: Vec<f64> = (0..rs.iter().product::<usize>()).map(|i| (i as f64 * 0.91).cos()).collect();
            let (plan, out) = gemm_plan(ls, rs).unwrap();
            let len = out.iter().product();
            let got = run_plan(&plan, &left, &right, len);
            let want = naive(&left, ls, &right, rs);
            assert_eq!(got.len(), want.len(), "{ls:?} . {rs:?}");
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-12, "{ls:?} . {rs:?}: {got:?} vs {want:?} ({plan:?})");
            }
        }
        assert!(gemm_plan(&[3, 5], &[4]).is_err());
        // X^T X: the same interpreter, the one argument on both sides.
        for xs in [[7usize, 3], [1, 4], [4, 1], [0, 3], [5, 0]] {
            let x: Vec<f64> = (0..xs[0] * xs[1]).map(|i| (i as f64 * 0.53).sin()).collect();
            let (plan, out) = gram_plan(&xs).unwrap();
            assert_eq!(out, [xs[1], xs[1]]);
            let got = run_plan(&plan, &x, &[], xs[1] * xs[1]);
            let xt: Vec<f64> = (0..xs[1] * xs[0]).map(|i| x[(i % xs[0]) * xs[1] + i / xs[0]]).collect();
            let want = naive(&xt, &[xs[1], xs[0]], &x, &xs);
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-12, "gram {xs:?}: {got:?} vs {want:?} ({plan:?})");
            }
            assert_eq!(got.len(), want.len());
        }
        assert!(gram_plan(&[3]).is_err());
        assert!(gemm_plan(&[3], &[4, 5]).is_err());
        assert!(gemm_plan(&[2, 2, 2], &[2]).is_err());
    }

    #[test]
    fn cross_plans_compute_a_times_b_transposed() {
        for (rows, cols, k) in [(3usize, 5usize, 4usize), (1, 7, 2), (6, 1, 3), (4, 4, 1), (2, 3, 0), (0, 3, 2), (3, 0, 2)] {
            let a: Vec<f64> = (0..rows * k).map(|i| (i as f64 * 0.37).sin()).collect();
            let b: Vec<f64> = (0..cols * k).map(|i| (i as f64 * 0.91).cos()).collect();
            let (plan, out) = cross_plan(rows, cols, k);
            assert_eq!(out, [rows, cols]);
            let got = run_plan(&plan, &a, &b, rows * cols);
            let bt: Vec<f64> = (0..k * cols).map(|i| b[(i % cols) * k + i / cols]).collect();
            let want = naive(&a, &[rows, k], &bt, &[k, cols]);
            assert_eq!(got.len(), want.len());
            for (g, w) in got.iter().zip(&want) {
                assert!((g - w).abs() < 1e-12, "cross {rows} x {cols} x {k}: {got:?} vs {want:?} ({plan:?})");
            }
        }
    }

    #[test]
    fn cross_blocks_fit_their_scratch() {
        assert_eq!(cross_block_rows(1 << 14, 1 << 14, 8, 256 << 20), 2048);
        assert_eq!(cross_block_rows(100, 10, 8, 1 << 20), 100);
        assert_eq!(cross_block_rows(100, 1 << 30, 8, 1 << 20), 1);
        assert_eq!(cross_block_rows(0, 5, 8, 1 << 20), 1);
        assert_eq!(cross_block_rows(5, 0, 8, 1 << 20), 5);
    }
}

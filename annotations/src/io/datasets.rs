//! Data sets as scikit-learn makes them: `make_blobs` and `train_test_split`, drawn from
//! numpy's legacy `RandomState` exactly as scikit-learn draws them, so the same seed gives the
//! same numbers bit for bit (the workloads' reference results depend on it); any seed works.
//!
//! The host functions (`blobs`, `train_test_indices`) return plain ndarray arrays (the bench's
//! eager `cpu` mode uses them); `make_blobs` and `train_test_split` give lazy arrays.

use std::sync::Arc;

use bach_runtime::{oa, BachError, Element, Family, Meta, Result, Value, ValueRef};
use ndarray::{Array1, Array2, ArrayViewD, Axis};

use crate::array::Array;

/// The UCI Wine data set (Forina et al., UCI Machine Learning Repository,
/// <https://archive.ics.uci.edu/dataset/109/wine>, CC BY 4.0) as CSV: 178 rows, 13 feature
/// columns and `class` in {0, 1, 2}, in the row order of scikit-learn's `load_wine`.
pub const WINE_CSV: &str = include_str!("wine.csv");

/// [`WINE_CSV`] as a file to read with [`crate::read_csv`] (written once into the temporary
/// directory, like scikit-learn's bundled data sets): its path.
pub fn wine_csv_file() -> Result<std::path::PathBuf> {
    let dir = std::env::temp_dir().join("bach-datasets");
    let path = dir.join("wine.csv");
    if std::fs::read_to_string(&path).ok().as_deref() != Some(WINE_CSV) {
        std::fs::create_dir_all(&dir).map_err(|e| BachError::Io(format!("cannot create {}: {e}", dir.display())))?;
        // Written beside it, then renamed: two kernels never read a half-written file.
        let part = dir.join(format!("wine.csv.{}", std::process::id()));
        std::fs::write(&part, WINE_CSV).map_err(|e| BachError::Io(format!("cannot write {}: {e}", part.display())))?;
        std::fs::rename(&part, &path).map_err(|e| BachError::Io(format!("cannot write {}: {e}", path.display())))?;
    }
    Ok(path)
}
use crate::io::random::RandomState;

/// `sklearn.datasets.make_blobs` parameters (its defaults, with 32-bit seeds).
#[derive(Clone, Debug, PartialEq)]
pub struct Blobs {
    pub n_samples: usize,
    pub n_features: usize,
    pub centers: usize,
    pub cluster_std: f64,
    pub center_box: (f64, f64),
    pub seed: u32,
}

impl Default for Blobs {
    fn default() -> Self {
        Blobs { n_samples: 100, n_features: 2, centers: 3, cluster_std: 1.0, center_box: (-10.0, 10.0), seed: 0 }
    }
}

impl Blobs {
    /// The points (`n_samples x n_features`) and the index of each one's centre, as
    /// `make_blobs(n_samples, n_features, centers=k, cluster_std, center_box,
    /// random_state=seed)` returns them: centres uniform in the box (row-major), then each
    /// centre's samples (the first `n % k` centres get one more) normal around it, centre by
    /// centre, then the rows shuffled.
    pub fn generate(&self) -> (Array2<f64>, Array1<i64>) {
        let (n, d, k) = (self.n_samples, self.n_features, self.centers.max(1));
        let mut rs = RandomState::new(self.seed);
        let (lo, hi) = self.center_box;
        let centres: Vec<f64> = (0..k * d).map(|_| rs.uniform(lo, hi)).collect();
        let mut x = Array2::<f64>::zeros((n, d));
        let mut y = Array1::<i64>::zeros(n);
        let mut row = 0;
        for c in 0..k {
            let count = n / k + usize::from(c < n % k);
            for _ in 0..count {
                for (j, v) in x.row_mut(row).iter_mut().enumerate() {
                    *v = rs.normal(centres[c * d + j], self.cluster_std);
                }
                y[row] = c as i64;
                row += 1;
            }
        }
        let order = permutation(&mut rs, n);
        (x.select(Axis(0), &order), y.select(Axis(0), &order))
    }
}

/// `RandomState.permutation(n)`: `arange(n)` shuffled by numpy's legacy Fisher-Yates (from the
/// top, `j` drawn by masked rejection).
pub fn permutation(rs: &mut RandomState, n: usize) -> Vec<usize> {
    let mut p: Vec<usize> = (0..n).collect();
    for i in (1..n).rev() {
        let j = rs.bounded(i as u32) as usize;
        p.swap(i, j);
    }
    p
}

/// The row indices `train_test_split(.., train_size, random_state=seed)` puts in the training
/// and the test set, in its order: `n_train = floor(train_size * n)`, `n_test = n - n_train`,
/// the test rows first in a permutation of all rows. An error when either set is empty.
pub fn train_test_indices(n: usize, train_size: f64, seed: u32) -> Result<(Vec<usize>, Vec<usize>)> {
    if !(train_size > 0.0 && train_size < 1.0) {
        return Err(BachError::invalid("train_test_split", format!("train_size must be in (0, 1), not {train_size}")));
    }
    let n_train = (train_size * n as f64).floor() as usize;
    let n_test = n - n_train;
    if n_train == 0 || n_test == 0 {
        return Err(BachError::invalid("train_test_split", format!("{n} rows with train_size {train_size} leave an empty set")));
    }
    let p = permutation(&mut RandomState::new(seed), n);
    Ok((p[n_test..].to_vec(), p[..n_test].to_vec()))
}

/// `make_blobs` as lazy arrays: the points and their centre indices (generated on the host by
/// numpy's stream, then handed to the session as its values).
pub fn make_blobs(blobs: &Blobs) -> (Array<f64>, Array<i64>) {
    let (x, y) = blobs.generate();
    (Array::from_array(x).into_dyn(), Array::from_array(y).into_dyn())
}

/// What `train_test_split` returns: `(x_train, x_test, y_train, y_test)`.
pub type Split<A, B> = (Array<A>, Array<A>, Array<B>, Array<B>);

/// `train_test_split(x, y, train_size, random_state=seed)`: `(x_train, x_test, y_train,
/// y_test)`, rows taken lazily (`take_rows`). An error when `x` and `y` differ in rows.
pub fn train_test_split<A: Element, B: Element>(x: &Array<A>, y: &Array<B>, train_size: f64, seed: u32) -> Result<Split<A, B>> {
    let n = x.shape().first().copied().unwrap_or(0);
    if y.shape().first().copied().unwrap_or(0) != n {
        return Err(BachError::shape("train_test_split", format!("x has shape {:?} but y has shape {:?}", x.shape(), y.shape())));
    }
    let (train, test) = train_test_indices(n, train_size, seed)?;
    let (train, test) = (Arc::new(train), Arc::new(test));
    Ok((x.take_rows(&train)?, x.take_rows(&test)?, y.take_rows(&train)?, y.take_rows(&test)?))
}

impl<A: Element, S: crate::array::Data<Elem = A>, D: ndarray::Dimension> crate::array::ArrayBase<S, D> {
    /// The rows `indices` of this array, in that order (ndarray's `select(Axis(0), ..)`); an
    /// error at this line when an index is out of bounds.
    pub fn take_rows(&self, indices: &[usize]) -> Result<Array<A, D>> {
        let rows = self.shape().first().copied().unwrap_or(0);
        if self.ndim() == 0 {
            return Err(BachError::invalid("take_rows", "a 0-d array has no rows"));
        }
        if let Some(bad) = indices.iter().find(|&&i| i >= rows) {
            return Err(BachError::invalid("take_rows", format!("row {bad} of an array with {rows} rows")));
        }
        self.call(&take_rows_op(Arc::new(indices.to_vec())), &[])
    }
}

/// Gather rows (not generic: compiled here, not in each cell). CPU only for now: a gather
/// on the GPU is a copy kernel not written yet, and these are small (train/test splits).
fn take_rows_op(indices: Arc<Vec<usize>>) -> Arc<bach_runtime::Annotation> {
    let n = indices.len();
    oa("take_rows")
        .family(Family::Layout)
        .unsplittable()
        .cpu_only("row gather: CPU only (no GPU gather kernel yet)")
        .shape(move |m: &[Meta]| {
            let mut shape = m[0].shape.clone();
            shape[0] = n;
            Ok(Meta::new(m[0].dtype, shape))
        })
        .cpu(move |_, args| {
            fn take<A: Element>(a: &ArrayViewD<'_, A>, idx: &[usize]) -> Value {
                A::wrap(a.select(Axis(0), idx).into_shared())
            }
            Ok(match &args[0] {
                ValueRef::F64(a) => take(a, &indices),
                ValueRef::F32(a) => take(a, &indices),
                ValueRef::I64(a) => take(a, &indices),
                ValueRef::Bool(a) => take(a, &indices),
                v => return Err(BachError::dtype("take_rows", "a host array", v.dtype())),
            })
        })
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    // numpy 2.4 / scikit-learn 1.9:
    // X, y = make_blobs(n_samples=7, n_features=3, centers=2, random_state=42)
    #[test]
    fn blobs_match_scikit_learn() {
        let (x, y) = Blobs { n_samples: 7, n_features: 3, centers: 2, seed: 42, ..Blobs::default() }.generate();
        assert_eq!(y.to_vec(), BLOBS_Y);
        for (got, want) in x.iter().zip(BLOBS_X.iter()) {
            assert_eq!(got, want);
        }
    }
    const BLOBS_Y: [i64; 7] = [1, 0, 1, 0, 0, 0, 1];
    const BLOBS_X: [f64; 21] = [
        1.0651456084195212,
        -8.291930892486562,
        -5.414460824354393,
        -2.267235351486716,
        7.101005883540523,
        2.9149610037150686,
        1.7473933834541964,
        -6.812098986463346,
        -8.304857779489403,
        -0.9299848075453587,
        9.78172085735123,
        4.170404450293149,
        -3.071485152293723,
        8.001455007863898,
        4.954126168823375,
        -1.9666375794667856,
        8.550868435385858,
        4.174149082657845,
        1.4287869594155493,
        -6.768704601441404,
        -8.03110317069825,
    ];

    #[test]
    fn the_wine_split_is_scikit_learns() {
        let (train, test) = train_test_indices(178, 0.7, 42).unwrap();
        assert_eq!(train.len(), 124);
        assert_eq!(train[..5], [138, 104, 78, 36, 93]);
        assert_eq!(
            test,
            [
                19, 45, 140, 30, 67, 16, 119, 174, 109, 141, 24, 150, 41, 118, 15, 111, 113, 82, 9, 114, 18, 66, 60, 169, 171, 164, 117, 65, 90, 55, 29, 128, 145, 31, 12, 42, 158,
                137, 98, 159, 38, 108, 85, 68, 143, 2, 100, 122, 154, 51, 76, 56, 26, 153
            ]
        );
        let mut all: Vec<usize> = train.iter().chain(&test).copied().collect();
        all.sort_unstable();
        assert_eq!(all, (0..178).collect::<Vec<_>>());
        assert!(train_test_indices(1, 0.7, 0).is_err());
        assert!(train_test_indices(10, 1.5, 0).is_err());
    }
}

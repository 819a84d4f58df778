//! Data in and out: numpy's legacy `RandomState` bit for bit (`random.rs`), `.npy` files
//! (`npy.rs`), CSV files as lazy columns (`csv.rs`) and the data sets (`datasets.rs`: the
//! wine data, `make_blobs`, `train_test_split`).

pub(crate) mod csv;
pub mod datasets;
pub(crate) mod npy;
pub mod random;

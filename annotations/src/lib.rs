//! # bach: the annotated ndarray library
//!
//! Lazy n-d arrays whose API mirrors `ndarray`: every call adds a node to the session's
//! task graph (see `bach_runtime`), and values are computed when displayed, indexed or
//! `.eval()`ed. Porting an ndarray program changes its imports and little else:
//!
//! ```
//! use bach::prelude::*;
//! let x = Array::linspace(0.0, 1.0, 5);
//! let y = (&x * 2.0 + 1.0).sqrt();          // nothing has run yet
//! assert_eq!(y.shape(), &[5]);
//! let v = y.eval().unwrap();                // planned, run in pieces, cached
//! assert!((v[[4]] - 3f64.sqrt()).abs() < 1e-15);
//! ```
//!
//! Each op is an offload annotation: a CPU implementation, split types for its arguments and
//! result, whether it runs in pieces; the accelerator slot is filled by the CUDA device.

mod array;
mod calibrate;
mod host;
mod io;
pub mod ml;
pub mod notebook;
mod operators;
mod ops;
mod real;
pub mod registry;
pub mod sweep;
mod whatif;

pub use array::storage::{CowRepr, Data, DataMut, DataOwned, DataShared, OwnedArcRepr, OwnedRepr, RawData, RawDataClone, RawDataMut, RawDataSubst, ViewRepr, ViewsMut};
pub use array::{
    arr0, arr1, arr2, arr3, aview0, aview1, aview2, aview_mut1, concatenate, evaluate, stack, ArcArray, ArcArray1, ArcArray2, Array, Array0, Array1, Array2, Array3, Array4,
    Array5, Array6, ArrayBase, ArrayD, ArrayView, ArrayView0, ArrayView1, ArrayView2, ArrayView3, ArrayView4, ArrayView5, ArrayView6, ArrayViewD, ArrayViewMut, ArrayViewMut0,
    ArrayViewMut1, ArrayViewMut2, ArrayViewMut3, ArrayViewMut4, ArrayViewMut5, ArrayViewMut6, ArrayViewMutD, AsLazy, AssignFrom, AssignOperand, AxisViews, AxisViewsMut, BinOp,
    CowArray, CowArray1, CowArray2, Device, Explanation, Host, Lanes, LanesMut, Operand, Scalar, ShapeArg, Zip,
};
pub use bach_runtime as runtime;
pub use bach_runtime::{BachError, Result};
pub use calibrate::{calibrate, calibrate_session, Calibration, Fitted};
pub use io::csv::{read_csv, ColumnKey, Table};
pub use io::{datasets, random};
pub use linalg::Dot;
#[doc(hidden)]
pub use ndarray as nd;
pub use notebook::{comm, widgets};
pub use ops::elementwise::where_;
pub use ops::host_ops::Integer;
pub use ops::kernels;
/// ndarray's `linalg` for the array family (`Dot`, `general_mat_mul`, `general_mat_vec_mul`,
/// `kron`); shadows `ndarray::linalg` in the glob re-export below.
#[allow(hidden_glob_reexports)]
pub use ops::linalg;
pub use ops::reduce::pairwise_sum;
pub use real::Real;
pub use whatif::{whatif, whatif_profile, WhatIf};

/// Everything a notebook needs: `use bach::prelude::*;`
///
/// It holds what `ndarray::prelude::*` holds, with Bach's array family in place of ndarray's
/// (`ArrayBase<S, D>` and its aliases `Array`, `ArcArray`, `ArrayView`, `CowArray`, the
/// storage traits `Data`.., `arr1`/`aview1`.., `array!`), ndarray's mutable views, and its
/// dimension types and macros as they are, so ndarray code ports by changing its imports.
pub mod prelude {
    pub use crate::array;
    pub use crate::prelude_without_macros::*;
}

/// [`prelude`] without the `array!` macro: what the Jupyter kernel imports into every
/// session, so that a cell's own `use ndarray::prelude::*` (ndarray code as written) meets no
/// second `array!` (two macros of one name from two glob imports are an error; two types are
/// not: the cell's own import wins).
#[doc(hidden)]
pub mod prelude_without_macros {
    pub use crate::{
        arr0, arr1, arr2, arr3, aview0, aview1, aview2, aview_mut1, evaluate, where_, ArcArray, Array, Array0, Array1, Array2, Array3, Array4, Array5, Array6, ArrayBase, ArrayD,
        ArrayView, ArrayView0, ArrayView1, ArrayView2, ArrayView3, ArrayView4, ArrayView5, ArrayView6, ArrayViewD, ArrayViewMut, ArrayViewMut0, ArrayViewMut1, ArrayViewMut2,
        ArrayViewMut3, ArrayViewMut4, ArrayViewMut5, ArrayViewMut6, ArrayViewMutD, CowArray, Data, DataMut, DataOwned, Device, Dot, RawData, Real,
    };
    pub use bach_runtime::{BachError, Plan};
    pub use ndarray::{azip, s, Axis, Dim, Dimension, Ix, Ix0, Ix1, Ix2, Ix3, Ix4, Ix5, Ix6, IxDyn, NewAxis, RawArrayView, RawArrayViewMut, ShapeBuilder};
}

// Every other public name of ndarray, so that `use bach::{Zip, s, NdFloat};` reads as
// `use ndarray::..` (the crate's own `Array`, `Array1`.., `array!` come first).
pub use ndarray::*;

/// ndarray's `array!` giving a Bach array: `array![1., 2., 3.]` is an `Array1<f64>`,
/// `array![[1., 2.], [3., 4.]]` an `Array2<f64>` (made on the host, evaluated already).
#[macro_export]
macro_rules! array {
    ($([$($t:tt)*]),+ $(,)?) => {
        $crate::Array::from_array($crate::nd::array![$([$($t)*]),+])
    };
    ($($x:expr),* $(,)?) => {
        $crate::Array1::from_elems([$($x),*])
    };
}

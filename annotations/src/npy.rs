//! `.npy` files, for exchanging arrays with Python users.

use std::path::Path;

use bach_runtime::{BachError, Element, Result};
use ndarray_npy::{ReadableElement, WritableElement};

use crate::array::Array;

impl<A: Element + ReadableElement> Array<A> {
    /// Read an `.npy` file now (a missing file or a wrong dtype is an error at this line).
    pub fn read_npy(path: impl AsRef<Path>) -> Result<Self> {
        let path = path.as_ref();
        let a: ndarray::ArrayD<A> = ndarray_npy::read_npy(path).map_err(|e| BachError::Io(format!("cannot read `{}` as {} .npy: {e}", path.display(), A::DTYPE)))?;
        Ok(Self::from_array(a))
    }
}

impl<A: Element + WritableElement> Array<A> {
    /// Evaluate and write to an `.npy` file.
    pub fn write_npy(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let v = self.eval()?;
        ndarray_npy::write_npy(path, &v).map_err(|e| BachError::Io(format!("cannot write `{}`: {e}", path.display())))
    }
}

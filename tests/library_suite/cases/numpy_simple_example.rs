// source: PyO3/rust-numpy examples/simple/src/lib.rs @3b4b1b09 (BSD-2-Clause)
{
    use ndarray::{Array1, ArrayD, ArrayView1, ArrayViewD, ArrayViewMutD};
    use ndarray::{Array3, IxDyn};
    use std::ops::Add;
    // changed: the `numpy::ndarray` re-export path used directly as `ndarray`; the pyo3
    // wrappers and the Python-object and complex-number examples dropped

    // example using immutable borrows producing a new array
    fn axpy(a: f64, x: ArrayViewD<'_, f64>, y: ArrayViewD<'_, f64>) -> ArrayD<f64> {
        a * &x + &y
    }

    // example using a mutable borrow to modify an array in-place
    fn mult(a: f64, mut x: ArrayViewMutD<'_, f64>) {
        x *= a;
    }

    // example using generics
    fn generic_add<T: Copy + Add<Output = T>>(
        x: ArrayView1<'_, T>,
        y: ArrayView1<'_, T>,
    ) -> Array1<T> {
        &x + &y
    }

    // what the Python wrappers hand over: dynamic-dimensional views of NumPy arrays
    let x = Array3::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 12 + j * 4 + k) as f64).into_dyn();
    let y = ArrayD::from_elem(IxDyn(&[2, 3, 4]), 0.5);
    let z = axpy(2.0, x.view(), y.view());
    println!("axpy shape {:?}, z[1] =\n{}", z.shape(), z.index_axis(ndarray::Axis(0), 1));
    let mut w = x.clone();
    mult(-1.5, w.view_mut());
    println!("mult sum = {}", w.sum());
    // a transposed (non-contiguous) NumPy array
    let xt = x.t();
    let zt = axpy(1.0, xt.clone(), xt);
    println!("axpy on a transpose: shape {:?}, first row {}", zt.shape(), zt.slice(ndarray::s![.., 0, 0]));
    let mut m = x.clone();
    mult(0.5, m.slice_mut(ndarray::s![.., 1, ..]).into_dyn());
    println!("mult on a slice: {}", m.index_axis(ndarray::Axis(1), 1));
    let a = ndarray::array![1, 2, 3];
    let b = ndarray::array![10, 20, 30];
    println!("generic_add i32 = {}", generic_add(a.view(), b.view()));
    println!("generic_add f32 = {}", generic_add(ndarray::arr1(&[0.5f32, 1.5]).view(), ndarray::arr1(&[1.0f32, -1.0]).view()));
}

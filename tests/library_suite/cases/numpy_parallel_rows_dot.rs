// source: PyO3/rust-numpy examples/parallel/src/lib.rs @3b4b1b09 (BSD-2-Clause)
{
    use ndarray::Zip;
    use ndarray::{Array1, Array2, ArrayView1, ArrayView2, s};
    // changed: the pyo3 wrapper taking and returning NumPy arrays replaced by a function taking
    // the views it extracted (`x.as_array()`, `y.as_array()`) and returning the Array1; rayon's
    // `par_map_collect` made the sequential `map_collect`

    fn rows_dot(x: ArrayView2<f64>, y: ArrayView1<f64>) -> Array1<f64> {
        let z = Zip::from(x.rows()).map_collect(|row| row.dot(&y));
        z
    }

    let x = Array2::from_shape_fn((5, 4), |(i, j)| (i as f64 + 1.0) * if j % 2 == 0 { 1.0 } else { -0.5 });
    let y = Array1::from_vec(vec![1.0, 2.0, 3.0, 4.0]);
    println!("rows_dot = {}", rows_dot(x.view(), y.view()));
    // a Fortran-ordered (transposed) input and strided slices, as NumPy may hand over
    let xt = x.t().to_owned();
    println!("on a transposed view = {}", rows_dot(xt.t(), y.view()));
    println!("every other row and column = {}", rows_dot(x.slice(s![..;2, ..;2]), y.slice(s![..;2])));
    println!("reversed rows = {}", rows_dot(x.slice(s![..;-1, ..]), y.view()));
}

// source: src/doc/ndarray_for_numpy_users/mod.rs (specifying element type and dimensionality; shapes printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::prelude::*;

    // This is an example where the compiler can infer the element type
    // because `f64::sin` can only be called on `f64` elements:
    let arr1 = Array::zeros((3, 2, 4).f());
    let sines = arr1.mapv(f64::sin);

    // Specify just the element type and infer the dimensionality:
    let arr2 = Array::<f64, _>::zeros((3, 2, 4).f());
    let arr3: Array<f64, _> = Array::zeros((3, 2, 4).f());

    // Specify both the element type and dimensionality:
    let arr4 = Array3::<f64>::zeros((3, 2, 4).f());
    let arr5: Array3<f64> = Array::zeros((3, 2, 4).f());
    let arr6 = Array::<f64, Ix3>::zeros((3, 2, 4).f());
    let arr7: Array<f64, Ix3> = Array::zeros((3, 2, 4).f());

    println!("{:?} {}", sines.shape(), sines.sum());
    for a in [&arr2, &arr3, &arr4, &arr5, &arr6, &arr7] {
        println!("{:?} {} {}", a.shape(), a.len(), a.sum());
    }
}

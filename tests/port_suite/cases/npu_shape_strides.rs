// source: src/doc/ndarray_for_numpy_users/mod.rs ("Shape and strides" table, each row run and printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::prelude::*;

    let a = Array::<f64, _>::zeros((3, 4, 5));
    // np.ndim(a)
    println!("{}", a.ndim());
    // np.size(a)
    println!("{}", a.len());
    // np.shape(a)
    println!("{:?} {:?}", a.shape(), a.dim());
    // a.shape[axis]
    println!("{}", a.len_of(Axis(1)));
    // a.strides
    println!("{:?}", a.strides());
    // np.size(a) == 0
    println!("{}", a.is_empty());
    let e = Array2::<f64>::zeros((0, 3));
    println!("{} {:?}", e.is_empty(), e.shape());
}

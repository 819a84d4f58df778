// source: src/doc/ndarray_for_numpy_users/mod.rs ("Convenience methods for 2-D arrays" table, each row run and printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::prelude::*;

    let mut a = Array2::from_shape_fn((3, 5), |(i, j)| (i * 5 + j) as i64);
    // len(a) or a.shape[0]
    println!("{}", a.nrows());
    // a.shape[1]
    println!("{}", a.ncols());
    // a[1] or a[1,:]
    println!("{}", a.row(1));
    a.row_mut(1).fill(0);
    // a[:,4]
    println!("{}", a.column(4));
    a.column_mut(4).mapv_inplace(|x| x * 10);
    println!("{}", a);
    // a.shape[0] == a.shape[1]
    println!("{}", a.is_square());
    println!("{}", Array2::<f64>::eye(2).is_square());
}

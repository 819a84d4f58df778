// source: src/doc/ndarray_for_numpy_users/mod.rs ("Type conversions" table, each row run and printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::prelude::*;
    use std::convert::TryFrom;

    let a: Array2<u8> = array![[1, 2], [3, 250]];
    // a.astype(np.float32)
    println!("{}", a.mapv(f32::from));
    // a.astype(np.int32)
    println!("{}", a.mapv(i32::from));
    // a.astype(np.uint8)
    let b: Array1<i8> = array![3, 0, 120];
    println!("{}", b.mapv(|x| u8::try_from(x).unwrap()));
    // a.astype(np.int32) from f32
    let c: Array1<f32> = array![1.5, -2.7, 300.2, 1e10, -1e10];
    println!("{}", c.mapv(|x| x as i32));
}

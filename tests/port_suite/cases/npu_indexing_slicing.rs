// source: src/doc/ndarray_for_numpy_users/mod.rs ("Indexing and slicing" table, each row run and printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::prelude::*;
    use ndarray::Slice;

    let v = Array::range(0., 6., 1.);
    let a = Array::from_shape_fn((6, 10), |(i, j)| (10 * i + j) as i32);
    let a3 = Array::from_shape_fn((3, 2, 4), |(i, j, k)| 100 * i + 10 * j + k);

    // a[-1]
    println!("{}", v[v.len() - 1]);
    // a[1, 4]
    println!("{}", a[[1, 4]]);
    // a[1] or a[1, :, :]
    println!("{}", a3.slice(s![1, .., ..]));
    println!("{}", a3.index_axis(Axis(0), 1));
    // a[0:5] or a[:5] or a[0:5, :]
    println!("{}", a.slice(s![0..5, ..]));
    println!("{}", a.slice(s![..5, ..]));
    println!("{}", a.slice_axis(Axis(0), Slice::from(0..5)));
    // a[-5:] or a[-5:, :]
    println!("{}", a.slice(s![-5.., ..]));
    println!("{}", a.slice_axis(Axis(0), Slice::from(-5..)));
    // a[:3, 4:9]
    println!("{}", a.slice(s![..3, 4..9]));
    // a[1:4:2, ::-1]
    println!("{}", a.slice(s![1..4;2, ..;-1]));
    // a.take([4, 2])
    println!("{}", a.select(Axis(0), &[4, 2]));
}

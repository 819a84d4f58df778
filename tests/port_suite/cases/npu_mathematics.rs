// source: src/doc/ndarray_for_numpy_users/mod.rs ("Mathematics" table, each row run and printed; allclose needs the approx feature and is left out); ndarray is MIT OR Apache-2.0
{
    use ndarray::prelude::*;

    let a = array![[1., 2.], [3., 4.]];
    let b = array![[0.5, -1.], [2., 0.25]];
    let mat1 = array![[1., 2., 3.], [4., 5., 6.]];
    let mat2 = array![[1., 0.], [0., 1.], [2., -1.]];
    let vec = array![1., -1., 2.];
    let vec1 = array![1., 2., 3.];
    let vec2 = array![4., 5., 6.];
    let a3 = Array::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 12 + j * 4 + k) as f64);

    // a.transpose() or a.T
    println!("{}", mat1.t());
    println!("{}", mat1.clone().reversed_axes());
    // mat1.dot(mat2)
    println!("{}", mat1.dot(&mat2));
    // mat.dot(vec)
    println!("{}", mat1.dot(&vec));
    // vec.dot(mat)
    println!("{}", array![1., 1.].dot(&mat1));
    // vec1.dot(vec2)
    println!("{}", vec1.dot(&vec2));
    // a * b, a + b, etc.
    println!("{}", &a * &b);
    println!("{}", &a + &b);
    println!("{}", &a - &b);
    println!("{}", &a / &b);
    // a**3
    println!("{}", a.mapv(|a: f64| a.powi(3)));
    // np.sqrt(a)
    println!("{:.6}", a.mapv(f64::sqrt));
    // (a>0.5)
    println!("{}", b.mapv(|a| a > 0.5));
    // np.sum(a)
    println!("{}", a.sum());
    // np.sum(a, axis=2)
    println!("{}", a3.sum_axis(Axis(2)));
    // np.mean(a)
    println!("{}", a3.mean().unwrap());
    // np.mean(a, axis=2)
    println!("{}", a3.mean_axis(Axis(2)).unwrap());
    // np.diag(a)
    println!("{}", a.diag());
}

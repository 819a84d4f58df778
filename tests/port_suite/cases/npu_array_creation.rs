// source: src/doc/ndarray_for_numpy_users/mod.rs ("Array creation" table, each row run and printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::prelude::*;

    // np.array([[1.,2.,3.], [4.,5.,6.]])
    let a = array![[1.,2.,3.], [4.,5.,6.]];
    let a2 = arr2(&[[1.,2.,3.], [4.,5.,6.]]);
    println!("{}\n{}", a, a2);
    // np.arange(0., 10., 0.5)
    println!("{}", Array::range(0., 10., 0.5));
    // np.linspace(0., 10., 11)
    println!("{}", Array::linspace(0., 10., 11));
    // np.logspace(2.0, 3.0, num=4, base=10.0)
    println!("{:.4}", Array::logspace(10.0, 2.0, 3.0, 4));
    // np.geomspace(1., 1000., num=4)
    println!("{:.4}", Array::geomspace(1e0, 1e3, 4).unwrap());
    // np.ones((3, 4, 5))
    let ones: Array3<f64> = Array::ones((3, 4, 5));
    println!("{:?} {}", ones.shape(), ones.sum());
    // np.zeros((3, 4, 5))
    let zeros: Array3<f64> = Array::zeros((3, 4, 5));
    println!("{:?} {}", zeros.shape(), zeros.sum());
    // np.zeros((3, 4, 5), order='F')
    let zf: Array3<f64> = Array::zeros((3, 4, 5).f());
    println!("{:?} {}", zf.shape(), zf.sum());
    // np.zeros_like(a, order='C')
    let zl: Array2<f64> = Array::zeros(a.raw_dim());
    println!("{}", zl);
    // np.full((3, 4), 7.)
    println!("{}", Array::from_elem((3, 4), 7.));
    // np.eye(3)
    let eye: Array2<f64> = Array::eye(3);
    println!("{}", eye);
    // np.diag(np.array([1, 2, 3]))
    println!("{}", Array2::from_diag(&arr1(&[1, 2, 3])));
    // np.array([1, 2, 3, 4]).reshape((2, 2))
    println!("{}", Array::from_shape_vec((2, 2), vec![1, 2, 3, 4]).unwrap());
    // np.array([1, 2, 3, 4]).reshape((2, 2), order='F')
    println!("{}", Array::from_shape_vec((2, 2).f(), vec![1, 2, 3, 4]).unwrap());
}

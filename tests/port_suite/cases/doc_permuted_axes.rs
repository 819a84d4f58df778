// source: src/impl_methods.rs (docs of swap_axes and permuted_axes; results printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::{arr2, Array3};

    let mut a = arr2(&[[1., 2., 3.]]);
    a.swap_axes(0, 1);
    assert!(
        a == arr2(&[[1.], [2.], [3.]])
    );
    println!("{}", a);

    let a = arr2(&[[0, 1], [2, 3]]);
    assert_eq!(a.view().permuted_axes([1, 0]), a.t());
    println!("{}", a.view().permuted_axes([1, 0]));

    let b = Array3::<u8>::zeros((1, 2, 3));
    assert_eq!(b.permuted_axes([1, 0, 2]).shape(), &[2, 1, 3]);

    let c = Array3::from_shape_fn((2, 3, 4), |(i, j, k)| 100 * i + 10 * j + k);
    let p = c.permuted_axes([2, 0, 1]);
    println!("{:?}\n{}", p.shape(), p);
}

// source: src/impl_methods.rs (docs of select; result printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::{arr2, Axis};

    let x = arr2(&[[0., 1.],
                   [2., 3.],
                   [4., 5.],
                   [6., 7.],
                   [8., 9.]]);

    let r = x.select(Axis(0), &[0, 4, 3]);
    assert!(
            r == arr2(&[[0., 1.],
                        [8., 9.],
                        [6., 7.]])
    );
    println!("{}", r);
    println!("{}", x.select(Axis(1), &[1, 1, 0]));
}

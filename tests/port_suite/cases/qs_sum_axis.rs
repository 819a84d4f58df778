// source: README-quick-start.md ("Basic operations", sum_axis; results printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::{aview0, aview1, arr2, Axis};

    let a = arr2(&[[1., 2., 3.],
                   [4., 5., 6.]]);
    assert!(
        a.sum_axis(Axis(0)) == aview1(&[5., 7., 9.]) &&
        a.sum_axis(Axis(1)) == aview1(&[6., 15.]) &&

        a.sum_axis(Axis(0)).sum_axis(Axis(0)) == aview0(&21.) &&
        a.sum_axis(Axis(0)).sum_axis(Axis(0)) == aview0(&a.sum())
    );
    println!("{}", a.sum_axis(Axis(0)));
    println!("{}", a.sum_axis(Axis(1)));
    println!("{}", a.sum_axis(Axis(0)).sum_axis(Axis(0)));
    println!("{}", a.sum());
}

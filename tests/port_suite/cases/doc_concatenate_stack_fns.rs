// source: src/stacking.rs (docs of concatenate and stack; results printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::{arr2, arr3, concatenate, stack, Axis};

    let a = arr2(&[[2., 2.],
                   [3., 3.]]);
    assert!(
        concatenate(Axis(0), &[a.view(), a.view()])
        == Ok(arr2(&[[2., 2.],
                     [3., 3.],
                     [2., 2.],
                     [3., 3.]]))
    );
    assert!(
        stack(Axis(0), &[a.view(), a.view()])
        == Ok(arr3(&[[[2., 2.],
                      [3., 3.]],
                     [[2., 2.],
                      [3., 3.]]]))
    );
    println!("{}", concatenate(Axis(0), &[a.view(), a.view()]).unwrap());
    println!("{}", concatenate(Axis(1), &[a.view(), a.view()]).unwrap());
    println!("{}", stack(Axis(0), &[a.view(), a.view()]).unwrap());
    println!("{}", stack(Axis(2), &[a.view(), a.view()]).unwrap());
}

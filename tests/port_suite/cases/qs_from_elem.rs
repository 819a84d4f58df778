// source: README-quick-start.md ("Creating arrays with different initial values and/or different types"; printed with {} instead of {:?}); ndarray is MIT OR Apache-2.0
{
    use ndarray::{Array, Ix3};

    let a = Array::<bool, Ix3>::from_elem((3, 2, 4), false);
    println!("{}", a);
}

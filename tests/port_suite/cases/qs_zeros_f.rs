// source: README-quick-start.md ("Element type and dimensionality"; printed with {} instead of {:?}); ndarray is MIT OR Apache-2.0
{
    use ndarray::prelude::*;
    use ndarray::Array;

    let a = Array::<f64, _>::zeros((3, 2, 4).f());
    println!("{}", a);
    println!("{:?}", a.shape());
}

// source: README-quick-start.md ("Changing the shape of an array"; printed with {} instead of {:?}); ndarray is MIT OR Apache-2.0
{
    use ndarray::prelude::*;
    use ndarray::Array;
    use std::iter::FromIterator;

    let a = array![
        [3., 7., 3., 4.],
        [1., 4., 2., 2.],
        [7., 2., 4., 9.]];
        
    println!("a = \n{}\n", a);
    
    // use trait FromIterator to flatten a matrix to a vector
    let b = Array::from_iter(a.iter());
    println!("b = \n{}\n", b);
    
    let c = b.into_shape_with_order([6, 2]).unwrap(); // consume b and generate c with new shape
    println!("c = \n{}", c);
}

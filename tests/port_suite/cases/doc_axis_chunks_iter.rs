// source: src/impl_methods.rs (docs of axis_chunks_iter; every chunk printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::Array;
    use ndarray::{arr3, Axis};

    let a = Array::from_iter(0..28).into_shape_with_order((2, 7, 2)).unwrap();
    let mut iter = a.axis_chunks_iter(Axis(1), 2);

    // first iteration yields a 2 × 2 × 2 view
    assert_eq!(iter.next().unwrap(),
               arr3(&[[[ 0,  1], [ 2, 3]],
                      [[14, 15], [16, 17]]]));

    // however the last element is a 2 × 1 × 2 view since 7 % 2 == 1
    assert_eq!(iter.next_back().unwrap(), arr3(&[[[12, 13]],
                                                 [[26, 27]]]));

    for chunk in a.axis_chunks_iter(Axis(1), 2) {
        println!("{:?}\n{}", chunk.shape(), chunk);
    }
}

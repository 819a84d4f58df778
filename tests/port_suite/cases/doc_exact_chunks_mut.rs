// source: src/impl_methods.rs (docs of exact_chunks_mut; result printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::Array;
    use ndarray::arr2;
    let mut a = Array::zeros((6, 7));

    // Fill each 2 × 2 chunk with the index of where it appeared in iteration
    for (i, mut chunk) in a.exact_chunks_mut((2, 2)).into_iter().enumerate() {
        chunk.fill(i);
    }

    // The resulting array is:
    assert_eq!(
      a,
      arr2(&[[0, 0, 1, 1, 2, 2, 0],
             [0, 0, 1, 1, 2, 2, 0],
             [3, 3, 4, 4, 5, 5, 0],
             [3, 3, 4, 4, 5, 5, 0],
             [6, 6, 7, 7, 8, 8, 0],
             [6, 6, 7, 7, 8, 8, 0]]));
    println!("{}", a);
}

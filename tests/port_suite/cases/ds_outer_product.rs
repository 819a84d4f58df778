// source: written for this suite
{
    use ndarray::prelude::*;

    let a = array![1.0, 2.0, 3.0];
    let b = array![10.0, 20.0];

    // outer product by broadcasting a column against a row
    let outer = &a.view().insert_axis(Axis(1)) * &b.view().insert_axis(Axis(0));
    println!("{}", outer);

    // and by a (3, 1) x (1, 2) matrix product
    let outer2 = a.clone().into_shape_with_order((3, 1)).unwrap().dot(&b.clone().into_shape_with_order((1, 2)).unwrap());
    println!("{}", outer2);

    // multiplication table with from_shape_fn
    let table = Array2::from_shape_fn((4, 5), |(i, j)| (i + 1) * (j + 1));
    println!("{}", table);

    // Kronecker-like tiling of a block
    let block = array![[1, 2], [3, 4]];
    let mut tiled = Array2::<i32>::zeros((4, 6));
    for bi in 0..2 {
        for bj in 0..3 {
            tiled.slice_mut(s![2 * bi..2 * bi + 2, 2 * bj..2 * bj + 2]).assign(&block);
        }
    }
    println!("{}", tiled);
}

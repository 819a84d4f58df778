// source: src/lib.rs (docs, "Subviews"; results printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::{arr3, aview1, aview2, s, Axis};


    // 2 submatrices of 2 rows with 3 elements per row, means a shape of `[2, 2, 3]`.

    let a = arr3(&[[[ 1,  2,  3],    // \ axis 0, submatrix 0
                    [ 4,  5,  6]],   // /
                   [[ 7,  8,  9],    // \ axis 0, submatrix 1
                    [10, 11, 12]]]); // /
            //        \
            //         axis 2, column 0

    assert_eq!(a.shape(), &[2, 2, 3]);

    // Let’s take a subview along the greatest dimension (axis 0),
    // taking submatrix 0, then submatrix 1

    let sub_0 = a.index_axis(Axis(0), 0);
    let sub_1 = a.index_axis(Axis(0), 1);

    assert_eq!(sub_0, aview2(&[[ 1,  2,  3],
                               [ 4,  5,  6]]));
    assert_eq!(sub_1, aview2(&[[ 7,  8,  9],
                               [10, 11, 12]]));
    assert_eq!(sub_0.shape(), &[2, 3]);
    println!("{}\n{}", sub_0, sub_1);

    // This is the subview picking only axis 2, column 0
    let sub_col = a.index_axis(Axis(2), 0);

    assert_eq!(sub_col, aview2(&[[ 1,  4],
                                 [ 7, 10]]));
    println!("{}", sub_col);

    // You can take multiple subviews at once (and slice at the same time)
    let double_sub = a.slice(s![1, .., 0]);
    assert_eq!(double_sub, aview1(&[7, 10]));
    println!("{}", double_sub);
}

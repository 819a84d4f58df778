// source: src/lib.rs (docs, "Slicing"; results printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::{arr2, arr3, s, ArrayBase, DataMut, Dimension, NewAxis, Slice};

    // 2 submatrices of 2 rows with 3 elements per row, means a shape of `[2, 2, 3]`.

    let a = arr3(&[[[ 1,  2,  3],     // -- 2 rows  \_
                    [ 4,  5,  6]],    // --         /
                   [[ 7,  8,  9],     //            \_ 2 submatrices
                    [10, 11, 12]]]);  //            /
    //  3 columns ..../.../.../

    assert_eq!(a.shape(), &[2, 2, 3]);

    // Let’s create a slice with
    //
    // - Both of the submatrices of the greatest dimension: `..`
    // - Only the first row in each submatrix: `0..1`
    // - Every element in each row: `..`

    let b = a.slice(s![.., 0..1, ..]);
    let c = arr3(&[[[ 1,  2,  3]],
                   [[ 7,  8,  9]]]);
    assert_eq!(b, c);
    assert_eq!(b.shape(), &[2, 1, 3]);
    println!("{}\n{:?}", b, b.shape());

    // Let’s create a slice with
    //
    // - Both submatrices of the greatest dimension: `..`
    // - The last row in each submatrix: `-1..`
    // - Row elements in reverse order: `..;-1`
    let d = a.slice(s![.., -1.., ..;-1]);
    let e = arr3(&[[[ 6,  5,  4]],
                   [[12, 11, 10]]]);
    assert_eq!(d, e);
    assert_eq!(d.shape(), &[2, 1, 3]);
    println!("{}\n{:?}", d, d.shape());

    // Let’s create a slice while selecting a subview and inserting a new axis with
    //
    // - Both submatrices of the greatest dimension: `..`
    // - The last row in each submatrix, removing that axis: `-1`
    // - Row elements in reverse order: `..;-1`
    // - A new axis at the end.
    let f = a.slice(s![.., -1, ..;-1, NewAxis]);
    let g = arr3(&[[ [6],  [5],  [4]],
                   [[12], [11], [10]]]);
    assert_eq!(f, g);
    assert_eq!(f.shape(), &[2, 3, 1]);
    println!("{}\n{:?}", f, f.shape());

    // Let's take two disjoint, mutable slices of a matrix with
    //
    // - One containing all the even-index columns in the matrix
    // - One containing all the odd-index columns in the matrix
    let mut h = arr2(&[[0, 1, 2, 3],
                       [4, 5, 6, 7]]);
    let (s0, s1) = h.multi_slice_mut((s![.., ..;2], s![.., 1..;2]));
    let i = arr2(&[[0, 2],
                   [4, 6]]);
    let j = arr2(&[[1, 3],
                   [5, 7]]);
    assert_eq!(s0, i);
    assert_eq!(s1, j);
    println!("{}\n{}", s0, s1);

    // Generic function which assigns the specified value to the elements which
    // have indices in the lower half along all axes.
    fn fill_lower<S, D>(arr: &mut ArrayBase<S, D>, x: S::Elem)
    where
        S: DataMut,
        S::Elem: Clone,
        D: Dimension,
    {
        arr.slice_each_axis_mut(|ax| Slice::from(0..ax.len / 2)).fill(x);
    }
    fill_lower(&mut h, 9);
    let k = arr2(&[[9, 9, 2, 3],
                   [4, 5, 6, 7]]);
    assert_eq!(h, k);
    println!("{}", h);
}

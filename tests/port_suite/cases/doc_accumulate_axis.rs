// source: src/impl_methods.rs (docs of accumulate_axis_inplace; result printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::{array, Axis};

    let mut arr = array![
        [[1, 2], [3, 4], [5, 6]],
        [[7, 8], [9, 10], [11, 12]],
    ];
    arr.accumulate_axis_inplace(Axis(1), |&prev, curr| *curr += prev);
    assert_eq!(
        arr,
        array![
            [[1, 2], [4, 6], [9, 12]],
            [[7, 8], [16, 18], [27, 30]],
        ],
    );
    println!("{}", arr);
}

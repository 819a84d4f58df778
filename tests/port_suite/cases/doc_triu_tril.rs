// source: src/tri.rs (docs of triu and tril; results printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::array;

    let arr = array![
        [1, 2, 3],
        [4, 5, 6],
        [7, 8, 9]
    ];
    assert_eq!(
        arr.triu(0),
        array![
            [1, 2, 3],
            [0, 5, 6],
            [0, 0, 9]
        ]
    );
    assert_eq!(
        arr.tril(0),
        array![
            [1, 0, 0],
            [4, 5, 0],
            [7, 8, 9]
        ]
    );
    println!("{}\n{}", arr.triu(0), arr.tril(0));
    println!("{}\n{}", arr.triu(1), arr.tril(-1));
}

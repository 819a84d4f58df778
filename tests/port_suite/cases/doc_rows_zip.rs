// source: src/lib.rs (docs, ".rows(), .columns() and .lanes()"; results printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::Array;

    // 1. Loop over the rows of a 2D array
    let mut a = Array::zeros((10, 10));
    for mut row in a.rows_mut() {
        row.fill(1.);
    }

    // 2. Use Zip to pair each row in 2D `a` with elements in 1D `b`
    use ndarray::Zip;
    let mut b = Array::zeros(a.nrows());

    Zip::from(a.rows())
        .and(&mut b)
        .for_each(|a_row, b_elt| {
            *b_elt = a_row[a.ncols() - 1] - a_row[0];
        });

    println!("{}", a.sum());
    println!("{}", b);
}

// source: src/zip/mod.rs (docs of Zip; results printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::Zip;
    use ndarray::Array2;

    type M = Array2<f64>;

    // Create four 2d arrays of the same size
    let mut a = M::zeros((64, 32));
    let b = M::from_elem(a.dim(), 1.);
    let c = M::from_elem(a.dim(), 2.);
    let d = M::from_elem(a.dim(), 3.);

    // Example 1: Perform an elementwise arithmetic operation across
    // the four arrays a, b, c, d.

    Zip::from(&mut a)
        .and(&b)
        .and(&c)
        .and(&d)
        .for_each(|w, &x, &y, &z| {
            *w += x + y * z;
        });

    // Example 2: Create a new array `totals` with one entry per row of `a`.
    //  Use Zip to traverse the rows of `a` and assign to the corresponding
    //  entry in `totals` with the sum across each row.
    //  This is possible because the producer for `totals` and the row producer
    //  for `a` have the same shape and dimensionality.
    //  The rows producer yields one array view (`row`) per iteration.

    use ndarray::{Array1, Axis};

    let mut totals = Array1::zeros(a.nrows());

    Zip::from(&mut totals)
        .and(a.rows())
        .for_each(|totals, row| *totals = row.sum());

    // Check the result against the built in `.sum_axis()` along axis 1.
    assert_eq!(totals, a.sum_axis(Axis(1)));


    // Example 3: Recreate Example 2 using map_collect to make a new array

    let totals2 = Zip::from(a.rows()).map_collect(|row| row.sum());

    // Check the result against the previous example.
    assert_eq!(totals, totals2);

    println!("{} {} {}", a[[0, 0]], a.sum(), totals.len());
    println!("{} {}", totals[0], totals[63]);
    println!("{}", totals2.sum());
}

// source: src/doc/ndarray_for_numpy_users/mod.rs ("Iteration" table, each row run and printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::prelude::*;

    let a = array![[1, 2, 3], [4, 5, 6]];
    // a.flat
    for x in a.iter() {
        print!("{} ", x);
    }
    println!();
    // np.ndenumerate(a)
    for ((i, j), x) in a.indexed_iter() {
        println!("({}, {}) {}", i, j, x);
    }
    // iter(a)
    for row in a.outer_iter() {
        println!("{}", row);
    }
    for col in a.axis_iter(Axis(1)) {
        println!("{}", col);
    }
}

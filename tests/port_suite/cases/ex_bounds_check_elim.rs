// source: examples/bounds_check_elim.rs (#[no_mangle] dropped; main calls each function and prints); ndarray is MIT OR Apache-2.0
{
    // Test cases for bounds check elimination

    use ndarray::prelude::*;

    pub fn test1d_single(a: &Array1<f64>, i: usize) -> f64
    {
        if i < a.len() {
            a[i]
        } else {
            0.
        }
    }

    pub fn test1d_single_mut(a: &mut Array1<f64>, i: usize) -> f64
    {
        if i < a.len() {
            *&mut a[i]
        } else {
            0.
        }
    }

    pub fn test1d_len_of(a: &Array1<f64>) -> f64
    {
        let a = &*a;
        let mut sum = 0.;
        for i in 0..a.len_of(Axis(0)) {
            sum += a[i];
        }
        sum
    }

    pub fn test1d_range(a: &Array1<f64>) -> f64
    {
        let mut sum = 0.;
        for i in 0..a.len() {
            sum += a[i];
        }
        sum
    }

    pub fn test1d_while(a: &Array1<f64>) -> f64
    {
        let mut sum = 0.;
        let mut i = 0;
        while i < a.len() {
            sum += a[i];
            i += 1;
        }
        sum
    }

    pub fn test2d_ranges(a: &Array2<f64>) -> f64
    {
        let mut sum = 0.;
        for i in 0..a.nrows() {
            for j in 0..a.ncols() {
                sum += a[[i, j]];
            }
        }
        sum
    }

    pub fn test2d_whiles(a: &Array2<f64>) -> f64
    {
        let mut sum = 0.;
        let mut i = 0;
        while i < a.nrows() {
            let mut j = 0;
            while j < a.ncols() {
                sum += a[[i, j]];
                j += 1;
            }
            i += 1;
        }
        sum
    }

    let a = Array1::from_iter((0..10).map(|i| i as f64 * 0.5));
    let mut am = a.clone();
    let m = Array2::from_shape_fn((3, 4), |(i, j)| (i * 4 + j) as f64);
    println!("{}", test1d_single(&a, 3));
    println!("{}", test1d_single(&a, 30));
    println!("{}", test1d_single_mut(&mut am, 4));
    println!("{}", test1d_len_of(&a));
    println!("{}", test1d_range(&a));
    println!("{}", test1d_while(&a));
    println!("{}", test2d_ranges(&m));
    println!("{}", test2d_whiles(&m));
}

// source: written for this suite
{
    use ndarray::prelude::*;

    let x = array![3.0, 1.0, 4.0, 1.0, 5.0, 9.0, 2.0, 6.0];
    let mut acc = 0.0;
    let cumsum: Array1<f64> = x.iter().map(|&v| { acc += v; acc }).collect();
    println!("{}", cumsum);

    let mut c2 = x.clone();
    c2.accumulate_axis_inplace(Axis(0), |&prev, cur| *cur += prev);
    println!("{}", c2);

    let m = array![[1, 2, 3], [4, 5, 6], [7, 8, 9]];
    let mut rows = m.clone();
    rows.accumulate_axis_inplace(Axis(1), |&prev, cur| *cur += prev);
    let mut cols = m.clone();
    cols.accumulate_axis_inplace(Axis(0), |&prev, cur| *cur += prev);
    println!("{}\n{}", rows, cols);

    let mut prod = 1.0;
    let cumprod: Vec<f64> = x.iter().map(|&v| { prod *= v; prod }).collect();
    println!("{:?}", cumprod);
}

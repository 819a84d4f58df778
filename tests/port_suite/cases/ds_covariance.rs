// source: written for this suite
{
    use ndarray::prelude::*;

    let x = array![
        [2.1, 8.0, -1.0],
        [2.5, 10.0, -0.5],
        [3.6, 12.0, 0.0],
        [4.0, 14.0, 0.5],
        [4.8, 17.5, 2.0],
        [5.2, 18.0, 1.5]
    ];
    let n = x.nrows() as f64;
    let mean = x.mean_axis(Axis(0)).unwrap();
    let centered = &x - &mean;
    let cov = centered.t().dot(&centered) / (n - 1.0);
    println!("cov =\n{:.6}", cov);

    let sd = cov.diag().mapv(f64::sqrt);
    let corr = Array2::from_shape_fn(cov.raw_dim(), |(i, j)| cov[[i, j]] / (sd[i] * sd[j]));
    println!("corr =\n{:.6}", corr);
    println!("variances = {:.6}", x.var_axis(Axis(0), 1.0));
}

// source: written for this suite
{
    use ndarray::prelude::*;

    // y = 2 + 3 x (+ a small deterministic wiggle)
    let x = Array::linspace(0.0, 1.0, 11);
    let wiggle = x.mapv(|v: f64| 0.01 * (13.0 * v).sin());
    let y = x.mapv(|v| 2.0 + 3.0 * v) + &wiggle;

    // design matrix [1, x]
    let mut design = Array2::<f64>::ones((x.len(), 2));
    design.column_mut(1).assign(&x);

    // normal equations: (X^T X) beta = X^T y, solved for the 2x2 case
    let xtx = design.t().dot(&design);
    let xty = design.t().dot(&y);
    let det = xtx[[0, 0]] * xtx[[1, 1]] - xtx[[0, 1]] * xtx[[1, 0]];
    let inv = array![[xtx[[1, 1]], -xtx[[0, 1]]], [-xtx[[1, 0]], xtx[[0, 0]]]] / det;
    let beta = inv.dot(&xty);
    println!("X^T X =\n{:.6}", xtx);
    println!("X^T y = {:.6}", xty);
    println!("beta = {:.6}", beta);

    let fitted = design.dot(&beta);
    let residuals = &y - &fitted;
    let sse = residuals.dot(&residuals);
    let ss_tot = y.mapv(|v| (v - y.mean().unwrap()).powi(2)).sum();
    println!("sse = {:.6e}", sse);
    println!("r2 = {:.6}", 1.0 - sse / ss_tot);
}

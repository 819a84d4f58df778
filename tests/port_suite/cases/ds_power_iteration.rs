// source: written for this suite
{
    use ndarray::prelude::*;

    let a = array![[4.0, 1.0, 0.0], [1.0, 3.0, 1.0], [0.0, 1.0, 2.0]];
    let mut v = Array1::<f64>::ones(3);
    let mut lambda = 0.0;
    for _ in 0..200 {
        let w = a.dot(&v);
        let norm = w.dot(&w).sqrt();
        v = w / norm;
        lambda = v.dot(&a.dot(&v));
    }
    println!("lambda = {:.6}", lambda);
    println!("v = {:.6}", v);
    let residual = &a.dot(&v) - &(lambda * &v);
    println!("residual small: {}", residual.iter().all(|r| r.abs() < 1e-9));
    println!("trace = {}", a.diag().sum());
}

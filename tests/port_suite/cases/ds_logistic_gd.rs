// source: written for this suite
{
    use ndarray::prelude::*;

    fn sigmoid(z: &Array1<f64>) -> Array1<f64> {
        z.mapv(|v| 1.0 / (1.0 + (-v).exp()))
    }

    let x = array![
        [1.0, 0.5, 1.0],
        [1.0, 1.5, 2.0],
        [1.0, 2.0, 0.5],
        [1.0, 3.0, 3.5],
        [1.0, 3.5, 2.5],
        [1.0, 0.2, 0.1]
    ];
    let y = array![0.0, 0.0, 0.0, 1.0, 1.0, 0.0];
    let mut w = Array1::<f64>::zeros(3);
    let lr = 0.5;
    for epoch in 0..200 {
        let p = sigmoid(&x.dot(&w));
        let grad = x.t().dot(&(&p - &y)) / y.len() as f64;
        w = &w - &(lr * &grad);
        if epoch % 50 == 0 {
            let loss = -(&y * &p.mapv(f64::ln) + &(1.0 - &y) * &p.mapv(|v| (1.0 - v).ln())).mean().unwrap();
            println!("epoch {} loss {:.6}", epoch, loss);
        }
    }
    println!("w = {:.6}", w);
    let pred = sigmoid(&x.dot(&w)).mapv(|v| (v > 0.5) as u8);
    println!("pred = {}", pred);
}

// source: written for this suite
{
    use ndarray::prelude::*;

    // integrate sin on [0, pi] with the trapezoid rule
    let n = 101;
    let x = Array::linspace(0.0, std::f64::consts::PI, n);
    let y = x.mapv(f64::sin);
    let dx = &x.slice(s![1..]) - &x.slice(s![..-1]);
    let avg = (&y.slice(s![1..]) + &y.slice(s![..-1])) * 0.5;
    let integral = (&dx * &avg).sum();
    println!("integral = {:.6}", integral);

    // polynomial evaluation with Horner's rule on a whole array
    let coeffs = [1.0, -3.0, 0.5, 2.0]; // 2x^3 + 0.5x^2 - 3x + 1, highest last
    let xs = Array::linspace(-2.0, 2.0, 9);
    let mut p = Array1::<f64>::zeros(xs.len());
    for &c in coeffs.iter().rev() {
        p = p * &xs + c;
    }
    println!("{:.6}", p);
}

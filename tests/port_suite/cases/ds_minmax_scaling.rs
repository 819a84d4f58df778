// source: written for this suite
{
    use ndarray::prelude::*;
    use ndarray::Zip;

    let mut x = array![[1.0, 200.0], [2.0, 300.0], [4.0, 100.0], [3.0, 500.0]];
    let mins = x.fold_axis(Axis(0), f64::INFINITY, |&m, &v| m.min(v));
    let maxs = x.fold_axis(Axis(0), f64::NEG_INFINITY, |&m, &v| m.max(v));
    println!("{} {}", mins, maxs);

    for mut col in x.columns_mut() {
        let lo = col.fold(f64::INFINITY, |m, &v| m.min(v));
        let hi = col.fold(f64::NEG_INFINITY, |m, &v| m.max(v));
        col.mapv_inplace(|v| (v - lo) / (hi - lo));
    }
    println!("{:.6}", x);

    // clip to [0.2, 0.8] with Zip
    let mut clipped = Array2::<f64>::zeros(x.raw_dim());
    Zip::from(&mut clipped).and(&x).for_each(|c, &v| *c = v.max(0.2).min(0.8));
    println!("{:.6}", clipped);
}

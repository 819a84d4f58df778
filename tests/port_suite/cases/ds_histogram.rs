// source: written for this suite
{
    use ndarray::prelude::*;

    let data = Array::from_shape_fn(40, |i| ((i * 37) % 23) as f64 / 2.0);
    let (lo, hi) = (0.0, 11.5);
    let bins = 5;
    let width = (hi - lo) / bins as f64;
    let mut counts = Array1::<usize>::zeros(bins);
    for &x in data.iter() {
        let b = (((x - lo) / width) as usize).min(bins - 1);
        counts[b] += 1;
    }
    println!("data = {}", data);
    println!("counts = {}", counts);
    println!("total = {}", counts.sum());
    let edges = Array::linspace(lo, hi, bins + 1);
    println!("edges = {:.3}", edges);
    let density = counts.mapv(|c| c as f64 / (data.len() as f64 * width));
    println!("density = {:.6}", density);
}

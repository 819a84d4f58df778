// source: written for this suite
{
    use ndarray::prelude::*;

    let x = array![7.0, 1.0, 3.5, 9.0, 2.0, 8.5, 4.0, 6.0, 5.5, 0.5, 10.0];
    let mut sorted = x.to_vec();
    sorted.sort_by(|a, b| a.partial_cmp(b).unwrap());
    let s = Array1::from_vec(sorted);
    println!("sorted = {}", s);

    let percentile = |q: f64| {
        let pos = q / 100.0 * (s.len() - 1) as f64;
        let lo = pos.floor() as usize;
        let hi = pos.ceil() as usize;
        s[lo] + (s[hi] - s[lo]) * (pos - lo as f64)
    };
    println!("p25 = {:.6}, median = {:.6}, p75 = {:.6}", percentile(25.0), percentile(50.0), percentile(75.0));
    println!("mean = {:.6}, std = {:.6}", x.mean().unwrap(), x.std(0.0));

    // ranks of the original values
    let ranks = x.mapv(|v| s.iter().position(|&t| t == v).unwrap());
    println!("ranks = {}", ranks);

    // mean of each column of a matrix sorted by its first column
    let m = array![[3.0, 30.0], [1.0, 10.0], [2.0, 20.0]];
    let mut order: Vec<usize> = (0..m.nrows()).collect();
    order.sort_by(|&i, &j| m[[i, 0]].partial_cmp(&m[[j, 0]]).unwrap());
    println!("{:?}", order);
    println!("{}", m.select(Axis(0), &order));
}

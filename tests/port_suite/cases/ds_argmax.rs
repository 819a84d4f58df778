// source: written for this suite
{
    use ndarray::prelude::*;

    let scores = array![0.3, 2.5, -1.0, 2.4, 0.0, 1.9];
    let (best_i, best_v) = scores
        .iter()
        .enumerate()
        .fold((0, f64::NEG_INFINITY), |(bi, bv), (i, &v)| if v > bv { (i, v) } else { (bi, bv) });
    println!("argmax = {}, max = {}", best_i, best_v);

    let argmin = scores
        .iter()
        .enumerate()
        .min_by(|a, b| a.1.partial_cmp(b.1).unwrap())
        .map(|(i, _)| i)
        .unwrap();
    println!("argmin = {}", argmin);

    // argmax of each row of a matrix of class scores
    let m = array![[0.1, 0.7, 0.2], [0.5, 0.3, 0.2], [0.05, 0.15, 0.8], [0.4, 0.4, 0.2]];
    let labels: Vec<usize> = m
        .rows()
        .into_iter()
        .map(|row| {
            row.iter()
                .enumerate()
                .fold((0, f64::NEG_INFINITY), |(bi, bv), (i, &v)| if v > bv { (i, v) } else { (bi, bv) })
                .0
        })
        .collect();
    println!("{:?}", labels);
}

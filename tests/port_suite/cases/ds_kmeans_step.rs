// source: written for this suite
{
    use ndarray::prelude::*;

    let points = array![
        [1.0, 1.0], [1.5, 2.0], [3.0, 4.0], [5.0, 7.0],
        [3.5, 5.0], [4.5, 5.0], [3.5, 4.5], [0.5, 1.5]
    ];
    let mut centroids = array![[1.0, 1.0], [5.0, 7.0]];
    let k = centroids.nrows();
    let mut assign = vec![0usize; points.nrows()];

    for iter in 0..5 {
        // assignment step
        for (i, p) in points.outer_iter().enumerate() {
            let mut best = 0;
            let mut best_d = f64::INFINITY;
            for (c, centroid) in centroids.outer_iter().enumerate() {
                let diff = &p - &centroid;
                let d = diff.dot(&diff);
                if d < best_d {
                    best_d = d;
                    best = c;
                }
            }
            assign[i] = best;
        }
        // update step
        let mut sums = Array2::<f64>::zeros((k, 2));
        let mut counts = vec![0usize; k];
        for (i, p) in points.outer_iter().enumerate() {
            let mut row = sums.row_mut(assign[i]);
            row += &p;
            counts[assign[i]] += 1;
        }
        for c in 0..k {
            let mean = &sums.row(c) / counts[c] as f64;
            centroids.row_mut(c).assign(&mean);
        }
        println!("iteration {}: {:?}", iter, assign);
    }
    println!("{:.6}", centroids);
}

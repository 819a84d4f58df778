// source: written for this suite
{
    use ndarray::prelude::*;

    let points = array![[0.0, 0.0], [3.0, 4.0], [1.0, 1.0], [-2.0, 5.0]];
    let n = points.nrows();

    // broadcasting: (n, 1, d) - (1, n, d)
    let a = points.view().insert_axis(Axis(1));
    let b = points.view().insert_axis(Axis(0));
    let diff = &a - &b;
    let dist = diff.mapv(|v| v * v).sum_axis(Axis(2)).mapv(f64::sqrt);
    println!("{:.6}", dist);

    // the same with loops
    let mut d2 = Array2::<f64>::zeros((n, n));
    for i in 0..n {
        for j in 0..n {
            let d = &points.row(i) - &points.row(j);
            d2[[i, j]] = d.dot(&d).sqrt();
        }
    }
    println!("{:.6}", d2);

    // nearest other point of each point
    for i in 0..n {
        let mut best = (usize::MAX, f64::INFINITY);
        for j in 0..n {
            if i != j && dist[[i, j]] < best.1 {
                best = (j, dist[[i, j]]);
            }
        }
        println!("{} -> {} ({:.6})", i, best.0, best.1);
    }
}

// source: written for this suite
// one more line: sim[[i, j]] = cosine(docs.row(i), docs.row(j)); ==> sim[[i, j]] = cosine(docs.view().row(i), docs.view().row(j));
{
    use ndarray::prelude::*;

    fn cosine(a: ArrayView1<f64>, b: ArrayView1<f64>) -> f64 {
        a.dot(&b) / (a.dot(&a).sqrt() * b.dot(&b).sqrt())
    }

    let docs = array![
        [1.0, 0.0, 2.0, 3.0],
        [0.0, 1.0, 0.0, 1.0],
        [2.0, 0.0, 4.0, 6.0],
        [1.0, 1.0, 1.0, 1.0]
    ];
    let n = docs.nrows();
    let mut sim = Array2::<f64>::zeros((n, n));
    for i in 0..n {
        for j in 0..n {
            sim[[i, j]] = cosine(docs.row(i), docs.row(j));
        }
    }
    println!("{:.6}", sim);

    // the same as a matrix product of unit rows
    let norms = docs.map_axis(Axis(1), |r| r.dot(&r).sqrt());
    let unit = &docs / &norms.insert_axis(Axis(1));
    let sim2 = unit.dot(&unit.t());
    println!("{:.6}", sim2);
}

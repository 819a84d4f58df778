// source: written for this suite
// one more line: out.row_mut(i).assign(&softmax(&row.to_owned())); ==> out.row_mut(i).assign(&softmax(&row.to_owned().into()));
{
    use ndarray::prelude::*;

    fn softmax(x: &Array1<f64>) -> Array1<f64> {
        let max = x.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
        let e = x.mapv(|v| (v - max).exp());
        let total = e.sum();
        e / total
    }

    let logits = array![2.0, 1.0, 0.1, -1.5, 3.2];
    let p = softmax(&logits);
    println!("{:.6}", p);
    println!("sum = {:.6}", p.sum());

    // row-wise softmax of a batch
    let batch = array![[1.0, 2.0, 3.0], [1.0, 1.0, 1.0], [-2.0, 0.0, 2.0]];
    let mut out = Array2::<f64>::zeros(batch.raw_dim());
    for (i, row) in batch.rows().into_iter().enumerate() {
        out.row_mut(i).assign(&softmax(&row.to_owned()));
    }
    println!("{:.6}", out);
    println!("{:.6}", out.sum_axis(Axis(1)));
}

// source: written for this suite
{
    use ndarray::prelude::*;

    let y_true: Array1<usize> = array![0, 1, 2, 2, 1, 0, 1, 2, 0, 1];
    let y_pred: Array1<usize> = array![0, 2, 2, 2, 1, 0, 0, 1, 0, 1];
    let classes = 3;
    let mut cm = Array2::<u32>::zeros((classes, classes));
    for (&t, &p) in y_true.iter().zip(y_pred.iter()) {
        cm[[t, p]] += 1;
    }
    println!("{}", cm);

    let correct: u32 = cm.diag().sum();
    let total: u32 = cm.sum();
    println!("accuracy = {:.6}", correct as f64 / total as f64);

    let col_sums = cm.sum_axis(Axis(0));
    let row_sums = cm.sum_axis(Axis(1));
    for c in 0..classes {
        let precision = cm[[c, c]] as f64 / col_sums[c] as f64;
        let recall = cm[[c, c]] as f64 / row_sums[c] as f64;
        println!("class {}: precision {:.6} recall {:.6}", c, precision, recall);
    }
}

// source: written for this suite
{
    use ndarray::prelude::*;

    let m: Array2<f64> = array![[3.0, 4.0, 0.0], [1.0, 1.0, 1.0], [0.0, -2.0, 0.0], [2.0, 3.0, 6.0]];

    // L2 normalisation of each row
    let norms = m.map_axis(Axis(1), |row| row.dot(&row).sqrt());
    println!("norms = {:.6}", norms);
    let unit = &m / &norms.view().insert_axis(Axis(1));
    println!("{:.6}", unit);
    println!("{:.6}", unit.map_axis(Axis(1), |row| row.dot(&row)));

    // L1 normalisation in place, row by row
    let mut l1 = m.clone();
    for mut row in l1.rows_mut() {
        let s: f64 = row.iter().map(|x| x.abs()).sum();
        row /= s;
    }
    println!("{:.6}", l1);
}

// source: rust-lang-nursery/rust-cookbook src/science/mathematics/linear_algebra/vector-norm.md @8771295d (CC0-1.0)
{
    use ndarray::{array, Array1, ArrayView1};
    use ndarray::Array2;

    fn l1_norm(x: ArrayView1<f64>) -> f64 {
        x.fold(0., |acc, elem| acc + elem.abs())
    }

    fn l2_norm(x: ArrayView1<f64>) -> f64 {
        x.dot(&x).sqrt()
    }

    fn normalize(mut x: Array1<f64>) -> Array1<f64> {
        let norm = l2_norm(x.view());
        x.mapv_inplace(|e| e/norm);
        x
    }

    let x = array![1., 2., 3., 4., 5.];
    println!("||x||_2 = {}", l2_norm(x.view()));
    println!("||x||_1 = {}", l1_norm(x.view()));
    println!("Normalizing x yields {:.6}", normalize(x));
    // the same functions on rows, columns and strided slices of a matrix
    let m = Array2::from_shape_fn((3, 4), |(i, j)| (i as f64 - 1.0) * (j as f64 + 0.5));
    for (i, row) in m.rows().into_iter().enumerate() {
        println!("row {}: l1 {:.4}, l2 {:.4}", i, l1_norm(row), l2_norm(row));
    }
    println!("column 2: l2 {:.4}", l2_norm(m.column(2)));
    println!("every other element: l1 {:.4}", l1_norm(m.row(2).slice(ndarray::s![..;2])));
    println!("normalized column = {:.4}", normalize(m.column(3).to_owned()));
}

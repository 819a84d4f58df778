// source: written for this suite
{
    use ndarray::prelude::*;

    let labels = [2usize, 0, 1, 2, 3, 0];
    let n_classes = 4;
    let mut onehot = Array2::<f64>::zeros((labels.len(), n_classes));
    for (i, &l) in labels.iter().enumerate() {
        onehot[[i, l]] = 1.0;
    }
    println!("{}", onehot);
    println!("class counts = {}", onehot.sum_axis(Axis(0)));

    // and back
    let decoded: Vec<usize> = onehot
        .rows()
        .into_iter()
        .map(|r| r.iter().position(|&v| v == 1.0).unwrap())
        .collect();
    println!("{:?}", decoded);

    // integer one-hot with from_shape_fn
    let ints = Array2::from_shape_fn((labels.len(), n_classes), |(i, j)| (labels[i] == j) as u8);
    println!("{}", ints);
}

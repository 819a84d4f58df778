// source: src/doc/ndarray_for_numpy_users/coord_transform.rs (the improved version with azip!; results printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::prelude::*;

    let nelems = 4;
    let bunge = Array2::<f64>::ones((3, nelems));

    let mut rmat = Array::zeros((3, 3, nelems).f());
    azip!((mut rmat in rmat.axis_iter_mut(Axis(2)), bunge in bunge.axis_iter(Axis(1))) {
        let s1 = bunge[0].sin();
        let c1 = bunge[0].cos();
        let s2 = bunge[1].sin();
        let c2 = bunge[1].cos();
        let s3 = bunge[2].sin();
        let c3 = bunge[2].cos();

        rmat[[0, 0]] = c1 * c3 - s1 * s3 * c2;
        rmat[[0, 1]] = -c1 * s3 - s1 * c2 * c3;
        rmat[[0, 2]] = s1 * s2;

        rmat[[1, 0]] = s1 * c3 + c1 * c2 * s3;
        rmat[[1, 1]] = -s1 * s3 + c1 * c2 * c3;
        rmat[[1, 2]] = -c1 * s2;

        rmat[[2, 0]] = s2 * s3;
        rmat[[2, 1]] = s2 * c3;
        rmat[[2, 2]] = c2;
    });

    let eye2d = Array2::<f64>::eye(3);

    let mut rotated = Array3::<f64>::zeros((3, 3, nelems).f());
    azip!((mut rotated in rotated.axis_iter_mut(Axis(2)), rmat in rmat.axis_iter(Axis(2))) {
        rotated.assign(&rmat.dot(&eye2d));
    });

    println!("rotated =\n{:.6}", rotated);
    println!("sum = {:.6}", rotated.sum());
}

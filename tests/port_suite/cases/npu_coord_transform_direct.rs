// source: src/doc/ndarray_for_numpy_users/coord_transform.rs (the direct translation; results printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::prelude::*;

    let nelems = 4;
    let bunge = Array::ones((3, nelems));

    let s1 = bunge.slice(s![0, ..]).mapv(f64::sin);
    let c1 = bunge.slice(s![0, ..]).mapv(f64::cos);
    let s2 = bunge.slice(s![1, ..]).mapv(f64::sin);
    let c2 = bunge.slice(s![1, ..]).mapv(f64::cos);
    let s3 = bunge.slice(s![2, ..]).mapv(f64::sin);
    let c3 = bunge.slice(s![2, ..]).mapv(f64::cos);

    let mut rmat = Array::zeros((3, 3, nelems).f());
    for i in 0..nelems {
        rmat[[0, 0, i]] = c1[i] * c3[i] - s1[i] * s3[i] * c2[i];
        rmat[[0, 1, i]] = -c1[i] * s3[i] - s1[i] * c2[i] * c3[i];
        rmat[[0, 2, i]] = s1[i] * s2[i];

        rmat[[1, 0, i]] = s1[i] * c3[i] + c1[i] * c2[i] * s3[i];
        rmat[[1, 1, i]] = -s1[i] * s3[i] + c1[i] * c2[i] * c3[i];
        rmat[[1, 2, i]] = -c1[i] * s2[i];

        rmat[[2, 0, i]] = s2[i] * s3[i];
        rmat[[2, 1, i]] = s2[i] * c3[i];
        rmat[[2, 2, i]] = c2[i];
    }

    let eye2d = Array::eye(3);

    let mut rotated = Array::zeros((3, 3, nelems).f());
    for i in 0..nelems {
        rotated
            .slice_mut(s![.., .., i])
            .assign(&rmat.slice(s![.., .., i]).dot(&eye2d));
    }

    println!("rmat[.., .., 0] =\n{:.6}", rmat.slice(s![.., .., 0]));
    println!("rotated =\n{:.6}", rotated);
    println!("sum = {:.6}", rotated.sum());
}

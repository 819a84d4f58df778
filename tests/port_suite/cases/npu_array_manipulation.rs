// source: src/doc/ndarray_for_numpy_users/mod.rs ("Array manipulation" table, each row run and printed); ndarray is MIT OR Apache-2.0
{
    use ndarray::prelude::*;
    use ndarray::{concatenate, stack};

    let mut a = Array2::<f64>::zeros((6, 4));
    let b = Array2::from_shape_fn((6, 4), |(i, j)| (i * 4 + j) as f64);
    // a[:] = 3.
    a.fill(3.);
    println!("{}", a);
    // a[:] = b
    a.assign(&b);
    println!("{}", a);
    // a[:5, 2] = 3.
    a.slice_mut(s![..5, 2]).fill(3.);
    println!("{}", a);
    // a[:5, 2] = b
    let col = Array::linspace(10., 14., 5);
    a.slice_mut(s![..5, 2]).assign(&col);
    println!("{}", a);

    let x = array![[1., 2.], [3., 4.]];
    let y = array![[5., 6.], [7., 8.]];
    // np.concatenate((a,b), axis=1)
    println!("{}", concatenate![Axis(1), x, y]);
    println!("{}", concatenate(Axis(1), &[x.view(), y.view()]).unwrap());
    // np.stack((a,b), axis=1)
    println!("{}", stack![Axis(1), x, y]);
    println!("{}", stack(Axis(1), &[x.view(), y.view()]).unwrap());

    let v = array![1., 2., 3.];
    // a[:,np.newaxis] or np.expand_dims(a, axis=1)
    println!("{}", v.slice(s![.., NewAxis]));
    println!("{}", v.clone().insert_axis(Axis(1)));
    // a.transpose() or a.T
    println!("{}", x.t());
    println!("{}", x.clone().reversed_axes());
    // np.diag(a)
    println!("{}", x.diag());
    // a.flatten()
    use std::iter::FromIterator;
    println!("{}", Array::from_iter(x.iter().cloned()));
}

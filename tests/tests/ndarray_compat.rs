//! ndarray code ported by its import: Bach's arrays carry ndarray's dimension types, return
//! what ndarray returns, and evaluate where code that is not annotated touches their values
//! (iteration, indexing, closures, mutation), each checked against ndarray itself.

use bach::prelude::*;
use bach::Zip;

/// Written against ndarray's types, as users write them.
fn column_means(x: &Array2<f64>) -> Array1<f64> {
    x.mean_axis(Axis(0)).unwrap()
}
fn norm(v: ArrayView1<f64>) -> f64 {
    v.dot(&v).sqrt()
}
fn total(x: &Array1<f64>) -> f64 {
    x.sum()
}

#[test]
fn dimension_types_and_shapes() {
    let m = Array::<f64, _>::ones((2, 3));
    let _: &Array2<f64> = &m;
    assert_eq!(m.dim(), (2, 3));
    assert_eq!(m.raw_dim(), Ix2(2, 3));
    assert_eq!((m.nrows(), m.ncols(), m.ndim(), m.len(), m.is_empty()), (2, 3, 2, 6, false));
    assert_eq!(m.shape(), &[2, 3]);
    let z = Array2::<f64>::zeros(Ix2(4, 5));
    assert_eq!(z.dim(), (4, 5));
    let c = Array::<f64, _>::zeros([2, 3, 4]);
    let _: &Array3<f64> = &c;
    let d = c.clone().into_dyn();
    let _: &ArrayD<f64> = &d;
    assert_eq!(d.into_dimensionality::<Ix3>().unwrap().dim(), (2, 3, 4));
    assert!(m.clone().into_dimensionality::<Ix1>().is_err());
    assert_eq!(column_means(&array![[1.0, 2.0], [3.0, 4.0]]), array![2.0, 3.0]);
    // Small allocations are made at once; large ones are lazy, made where first used.
    assert!(m.is_evaluated() && !Array2::<f64>::zeros((1000, 100)).is_evaluated());
}

#[test]
fn return_types_are_ndarrays() {
    let x = array![1.0, 2.0, 3.0, 4.0];
    let plain = ndarray::array![1.0, 2.0, 3.0, 4.0];
    let s: f64 = x.sum();
    assert_eq!(s, plain.sum());
    assert_eq!(total(&x), 10.0);
    assert_eq!(x.mean(), plain.mean());
    assert_eq!(Array1::<f64>::zeros(0).mean(), None);
    assert!((x.var(1.0) - plain.var(1.0)).abs() < 1e-15);
    assert!((x.std(0.0) - plain.std(0.0)).abs() < 1e-15);
    let d: f64 = x.dot(&x);
    assert_eq!(d, 30.0);
    assert_eq!(norm(x.view()), 30f64.sqrt());
    let m = array![[1.0, 2.0], [3.0, 4.0]];
    let mv: Array1<f64> = m.dot(&array![1.0, 1.0]);
    assert_eq!(mv, array![3.0, 7.0]);
    let mm: Array2<f64> = m.dot(&m);
    assert_eq!(mm, ndarray::array![[7.0, 10.0], [15.0, 22.0]]);
    // The lazy forms stay lazy (of a lazy value: small host values run at once).
    let lazy = (&Array::<f64, _>::linspace(1.0, 1.0, 10_000) * 2.0).sum_lazy();
    assert!(!lazy.is_evaluated());
    assert_eq!(lazy.to_scalar().unwrap(), 20_000.0);
    assert_eq!(x.dot_lazy(&x).to_scalar().unwrap(), 30.0);
    let e = x.insert_axis(Axis(1));
    assert_eq!(e.dim(), (4, 1));
}

#[test]
fn iteration_and_interop() {
    let a = array![[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]];
    let plain = ndarray::array![[1.0, -2.0, 3.0], [4.0, 5.0, -6.0]];
    let lazy = &a * 1.0; // a graph node: iteration evaluates it
    assert_eq!(lazy.iter().copied().collect::<Vec<_>>(), plain.iter().copied().collect::<Vec<_>>());
    let mut n = 0;
    for &v in &lazy {
        n += (v > 0.0) as usize;
    }
    assert_eq!(n, 4);
    assert_eq!(lazy.fold(f64::NEG_INFINITY, |m, &v| m.max(v)), 5.0);
    let (argmax, _) = lazy.indexed_iter().fold(((0, 0), f64::MIN), |best, (ij, &v)| if v > best.1 { (ij, v) } else { best });
    assert_eq!(argmax, (1, 1));
    assert_eq!(lazy.outer_iter().map(|r| r.sum()).collect::<Vec<_>>(), vec![2.0, 3.0]);
    assert_eq!(lazy.rows().count(), 2);
    assert_eq!(lazy.axis_iter(Axis(1)).count(), 3);
    assert_eq!(lazy.row(0).to_vec(), vec![1.0, -2.0, 3.0]);
    assert_eq!(lazy.as_slice().unwrap().len(), 6);
    assert_eq!(lazy[[1, 2]], -6.0);
    assert_eq!(lazy[(0, 1)], -2.0);
    // Zip over Bach arrays, writing into one.
    let mut out = Array2::<f64>::zeros((2, 3));
    Zip::from(&mut out).and(&a).and(&lazy).for_each(|o, &x, &y| *o = x + y);
    assert_eq!(out, &plain * 2.0);
    // To and from ndarray, collect, ==.
    let back: ndarray::Array2<f64> = lazy.clone().into();
    assert_eq!(back, plain);
    let c: Array1<f64> = (0..4).map(|i| i as f64).collect();
    assert_eq!(c, Array::range(0.0, 4.0, 1.0));
    assert!(a == lazy && a != out);
}

#[test]
fn mutation_is_copy_on_write() {
    let a = Array::<f64, _>::linspace(0.0, 3.0, 4);
    let b = a.clone();
    let mut c = a.clone();
    c += 1.0; // a new node bound to c
    c *= &a;
    assert_eq!(c, array![0.0, 2.0, 6.0, 12.0]);
    assert_eq!(a, array![0.0, 1.0, 2.0, 3.0]);
    let mut d = b.clone();
    d[1] = 10.0;
    d.mapv_inplace(|v| v * 2.0);
    d.slice_mut(s![2..]).fill(-1.0);
    assert_eq!(d, array![0.0, 20.0, -1.0, -1.0]);
    assert_eq!(b, array![0.0, 1.0, 2.0, 3.0], "another handle never sees a mutation");
    // Later annotated calls see the mutated value (a small one at once, a large one lazily).
    let e = (&d + 1.0).sqrt();
    assert_eq!(e.to_vec(), vec![1.0, 21f64.sqrt(), 0.0, 0.0]);
    let mut big = Array1::<f64>::ones(100_000);
    let before = big.clone();
    big[0] = 5.0;
    let e = &big + 1.0;
    assert!(!e.is_evaluated());
    assert_eq!((e[0], e[1], before[0]), (6.0, 2.0, 1.0));
    let mut m = Array2::<f64>::zeros((3, 2));
    m.row_mut(1).fill(1.0);
    m.column_mut(0).assign(&ndarray::array![5.0, 6.0, 7.0]);
    m.assign(&(&m * 2.0));
    assert_eq!(m, ndarray::array![[10.0, 0.0], [12.0, 2.0], [14.0, 0.0]]);
    m.accumulate_axis_inplace(Axis(0), |&prev, cur| *cur += prev);
    assert_eq!(m.column(0).to_vec(), vec![10.0, 22.0, 36.0]);
    let mut one_hot = Array2::<f64>::zeros((3, 3));
    for (i, &k) in [2usize, 0, 1].iter().enumerate() {
        one_hot[[i, k]] = 1.0;
    }
    assert_eq!(one_hot.sum_axis(Axis(0)), array![1.0, 1.0, 1.0]);
    // A compound assignment that would change the shape does not compile with static
    // dimensions; with dynamic ones it is refused at its line.
    let p = std::panic::catch_unwind(|| {
        let mut v = ArrayD::<f64>::zeros(vec![3]);
        v += &ArrayD::<f64>::zeros(vec![2, 3]);
    })
    .unwrap_err();
    assert!(p.downcast_ref::<String>().is_some_and(|m| m.contains("add_assign")), "{p:?}");
}

#[test]
fn closures_as_ndarray_takes_them() {
    let x: Array1<f64> = array![1.0, 4.0, 9.0];
    let (mu, sigma) = (x.mean().unwrap(), x.std(0.0));
    let z = x.mapv(|v| (v - mu) / sigma); // borrows locals
    assert!((z.sum()).abs() < 1e-12);
    let mask: Array1<bool> = x.mapv(|v| v > 2.0);
    assert_eq!(mask, array![false, true, true]);
    let narrow: Array1<f32> = x.mapv(|v| v as f32);
    assert_eq!(narrow.sum(), 14.0f32);
    let sq = x.map(|v| v * v);
    assert_eq!(sq, array![1.0, 16.0, 81.0]);
    let m = array![[1.0, 2.0], [3.0, 4.0]];
    assert_eq!(m.map_axis(Axis(1), |r| r.iter().copied().fold(f64::MIN, f64::max)), array![2.0, 4.0]);
}

#[test]
fn constructors_and_shape_methods() {
    assert_eq!(Array2::<f64>::eye(2), array![[1.0, 0.0], [0.0, 1.0]]);
    assert_eq!(Array::from_shape_fn((2, 2), |(i, j)| (i * 2 + j) as f64), array![[0.0, 1.0], [2.0, 3.0]]);
    assert_eq!(Array::from_shape_vec((2, 2), vec![1.0, 2.0, 3.0, 4.0]).unwrap(), array![[1.0, 2.0], [3.0, 4.0]]);
    assert_eq!(Array::from_elem(3, 7.0), array![7.0, 7.0, 7.0]);
    let lg = Array::<f64, _>::logspace(10.0, 0.0, 2.0, 3);
    assert!(lg.iter().zip([1.0, 10.0, 100.0]).all(|(a, b)| (a - b).abs() < 1e-12));
    let g = Array::<f64, _>::geomspace(1.0, 1000.0, 4).unwrap();
    assert!(g.iter().zip(ndarray::Array1::geomspace(1.0, 1000.0, 4).unwrap().iter()).all(|(a, b)| (a - b).abs() < 1e-9));
    let a = Array::range(0.0, 6.0, 1.0);
    let m = a.clone().into_shape_with_order((2, 3)).unwrap();
    assert_eq!(m, array![[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]);
    assert!(a.to_shape((4, 2)).is_err());
    assert_eq!(m.t().flatten(), array![0.0, 3.0, 1.0, 4.0, 2.0, 5.0]);
    assert_eq!(m.select(Axis(1), &[2, 0]), array![[2.0, 0.0], [5.0, 3.0]]);
    let c = Array::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 12 + j * 4 + k) as f64);
    let plain = ndarray::Array::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 12 + j * 4 + k) as f64);
    assert_eq!(c.clone().permuted_axes([2, 0, 1]), plain.clone().permuted_axes([2, 0, 1]));
    let st = bach::stack(Axis(0), &[a.view(), a.view()]).unwrap();
    assert_eq!(st.dim(), (2, 6));
}

#[test]
fn reductions_of_more_than_two_axes() {
    let plain = ndarray::Array::from_shape_fn((3, 4, 5), |(i, j, k)| ((i * 7 + j * 3 + k) % 11) as f64 - 4.0);
    let c = Array::from_array(plain.clone());
    for ax in 0..3 {
        let got: Array2<f64> = c.sum_axis(Axis(ax));
        assert_eq!(got, plain.sum_axis(Axis(ax)), "sum_axis({ax})");
        assert_eq!(c.mean_axis(Axis(ax)).unwrap(), plain.mean_axis(Axis(ax)).unwrap(), "mean_axis({ax})");
        let v = c.var_axis(Axis(ax), 1.0);
        let want = plain.var_axis(Axis(ax), 1.0);
        assert!(v.iter().zip(want.iter()).all(|(a, b)| (a - b).abs() < 1e-12), "var_axis({ax})");
        assert_eq!(c.max_axis(Axis(ax)), plain.fold_axis(Axis(ax), f64::MIN, |a, &b| a.max(b)), "max_axis({ax})");
    }
    assert_eq!(c.sum(), plain.sum());
    assert_eq!((&c * 2.0 + 1.0).sum_axis(Axis(2)), (&plain * 2.0 + 1.0).sum_axis(Axis(2)));
    let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| c.sum_axis(Axis(3)))).unwrap_err();
    assert!(e.downcast_ref::<String>().is_some_and(|m| m.contains("axis 3")), "{e:?}");
}

#[test]
fn ndarray_arrays_and_views_mix_with_bach_arrays() {
    let b = array![1.0, 2.0, 3.0];
    let nd = ndarray::array![10.0, 20.0, 30.0];
    let sum: Array1<f64> = &b + nd.view();
    assert_eq!(sum, array![11.0, 22.0, 33.0]);
    let diff: Array1<f64> = &nd - &b;
    assert_eq!(diff, array![9.0, 18.0, 27.0]);
    let m = Array2::<f64>::ones((2, 3));
    let row: Array2<f64> = &m * &nd;
    assert_eq!(row.row(1).to_vec(), vec![10.0, 20.0, 30.0]);
}

#[test]
fn small_host_values_run_at_once_and_large_ones_are_planned() {
    let s = bach_runtime::Session::new();
    bach_runtime::with_session(&s, || {
        let before = s.trace().evals().count();
        let small = Array::from_vec(vec![1.0, 2.0, 3.0]);
        let y = (&small * 2.0 + 1.0).sqrt();
        assert!(y.is_evaluated(), "small host values run at once");
        assert_eq!(y.sum(), 3f64.sqrt() + 5f64.sqrt() + 7f64.sqrt());
        assert_eq!(s.trace().evals().count(), before, "without a plan or an evaluation");
        // A lazy input (an allocation) is planned as before, and so is a large array.
        let lazy = (&Array1::<f64>::ones(10_000) * 2.0).sum_lazy();
        assert!(!lazy.is_evaluated());
        let large = Array::from_array(ndarray::Array1::<f64>::ones(100_000));
        let big = &large * 2.0;
        assert!(!big.is_evaluated());
        assert_eq!(big.sum(), 200_000.0);
        assert!(s.trace().evals().count() > before);
    });
}

/// Arrays of element types the graph does not hold (`u8`, `i32`, `usize`, `char`, a struct)
/// are host arrays: every op runs at once through ndarray, with ndarray's results.
#[test]
fn host_arrays_of_any_element_type() {
    // Counting, as ndarray code does it.
    let mut counts = Array1::<usize>::zeros(3);
    for &b in [0usize, 2, 2, 1, 2].iter() {
        counts[b] += 1;
    }
    assert_eq!(counts, ndarray::array![1usize, 1, 3]);
    assert_eq!(counts.sum(), 5);
    let mut cm = Array2::<u32>::zeros((2, 2));
    cm[[1, 0]] += 4;
    assert_eq!(cm.sum_axis(Axis(0)), ndarray::array![4u32, 0]);
    // Integer arithmetic with arrays, views and scalars, broadcasting as ndarray.
    let a = array![[1, 2, 3], [4, 5, 6]];
    let _: &Array2<i32> = &a;
    let row = ndarray::array![10, 20, 30];
    assert_eq!(&a + &row, ndarray::array![[11, 22, 33], [14, 25, 36]]);
    assert_eq!(&a * 2 - 1, ndarray::array![[1, 3, 5], [7, 9, 11]]);
    assert_eq!(10 - &a, ndarray::array![[9, 8, 7], [6, 5, 4]]);
    assert_eq!(&a % 4, ndarray::array![[1, 2, 3], [0, 1, 2]]);
    assert_eq!(a.clone() + row.view(), &row.view() + &a);
    let mut b = a.clone();
    b += 1;
    b *= &a;
    assert_eq!(b, ndarray::array![[2, 6, 12], [20, 30, 42]]);
    assert_eq!(a, ndarray::array![[1, 2, 3], [4, 5, 6]], "a += on a clone leaves the original");
    assert_eq!(-&a, ndarray::array![[-1, -2, -3], [-4, -5, -6]]);
    // Constructors and by-value shape methods, and conversions to and from the graph's types.
    let t = Array3::from_shape_fn((2, 3, 4), |(i, j, k)| 100 * i + 10 * j + k);
    let p = t.permuted_axes([2, 0, 1]);
    assert_eq!((p.shape(), p[[3, 1, 2]]), (&[4usize, 2, 3][..], 123));
    let u: Array2<u8> = array![[1, 2], [3, 250]];
    let f = u.mapv(f64::from);
    let _: &Array2<f64> = &f;
    assert_eq!(f.sum(), 256.0);
    assert_eq!(f.mapv(|x| x as u8), u);
    assert_eq!(Array::from_elem(3, 'x').iter().collect::<String>(), "xxx");
    assert_eq!(Array2::<i64>::eye(2), ndarray::Array2::<i64>::eye(2));
    assert_eq!(Array2::from_diag(&ndarray::arr1(&[1, 2])), ndarray::array![[1, 0], [0, 2]]);
    assert_eq!(Array2::from_diag(&array![1.0, 2.0]).sum(), 3.0);
    assert_eq!(format!("{}", array![1u8, 2]), format!("{}", ndarray::array![1u8, 2]));
    assert_eq!(format!("{:?}", array![1u8, 2]), format!("{:?}", ndarray::array![1u8, 2]));
}

/// The trace says why a lazy value was computed where ndarray code asked for it.
#[test]
fn the_trace_says_why_a_value_was_evaluated() {
    let s = bach_runtime::Session::new();
    bach_runtime::with_session(&s, || {
        let x = &Array1::<f64>::ones(10_000) * 2.0;
        assert_eq!(x.iter().filter(|&&v| v == 2.0).count(), 10_000);
        let why = s.trace().last().and_then(|e| e.reason.clone()).expect("a reason");
        assert!(why.contains("ndarray code") && why.contains("on the host"), "{why}");
        assert_eq!((&x + 1.0).sum(), 30_000.0);
        let why = s.trace().last().and_then(|e| e.reason.clone()).expect("a reason");
        assert!(why.contains("`sum` returns a number") && why.contains("sum_lazy"), "{why}");
        // An evaluation the code asked for itself says nothing more.
        (&x * 3.0).eval().unwrap();
        assert_eq!(s.trace().last().unwrap().reason, None);
    });
}

//! The examples of README.md, kept compiling and checked against plain ndarray.

use bach::prelude::*;

#[test]
fn readme_lazy_arrays_example() -> Result<(), BachError> {
    let price = Array::random_uniform(1 << 20, 10.0, 50.0, 42);
    let strike = Array::full(1 << 20, 30.0);
    let ratio = (&price / &strike).ln();
    let up = where_(&ratio.gt(0.0), &ratio, 0.0);
    let total = up.sum_lazy();
    assert!(!total.is_evaluated());
    let shown = format!("{}", total);
    assert!(total.is_evaluated());
    let plan = up.plan()?.to_string();
    assert!(plan.contains("stage 0 on cpu"), "{plan}");
    let v: ndarray::ArrayD<f64> = up.to_array()?;

    // The same program eagerly, on numpy-compatible inputs.
    let mut rs = bach::random::RandomState::new(42);
    let p = ndarray::Array1::from_iter((0..1 << 20).map(|_| rs.uniform(10.0, 50.0)));
    let expect = (&p / 30.0).mapv(|x| if x.ln() > 0.0 { x.ln() } else { 0.0 });
    assert_eq!(v.into_dimensionality::<ndarray::Ix1>().unwrap(), expect);
    let s: f64 = shown.parse().expect("a 0-d array displays as its number");
    assert!((s - expect.sum()).abs() <= 1e-9 * expect.sum().abs(), "{s} vs {}", expect.sum());
    Ok(())
}

#[test]
fn readme_slicing_example() -> Result<(), BachError> {
    let plain = ndarray::Array2::from_shape_fn((6, 5), |(i, j)| (10 * i + j) as f64);
    let m = Array::from_array(plain.clone());
    assert_eq!(m.slice(s![1..5, ..;2]).to_array2()?, plain.slice(ndarray::s![1..5, ..;2]));
    assert_eq!(m.slice(s![.., 3]).to_array1()?, plain.column(3));
    let tail = m.slice(s![-3.., NewAxis, ..]).to_array()?;
    assert_eq!(tail.shape(), &[3, 1, 5]);
    assert_eq!(tail, plain.slice(ndarray::s![-3.., ndarray::NewAxis, ..]).into_dyn());
    assert_eq!(m.row(2).to_array1()?, plain.row(2));
    assert_eq!(m.column(4).to_array1()?, plain.column(4));
    // Lazy: composed with the rest before anything runs (of a lazy value; a small array
    // like `m` runs at once).
    let big = Array::from_array(ndarray::Array2::from_shape_fn((6000, 5), |(i, j)| plain[[i % 6, j]]));
    let total = (&big.slice(s![..6, ..]).column(0) * 2.0).sum_lazy();
    assert!(!total.is_evaluated());
    assert_eq!(total.to_scalar()?, 2.0 * plain.column(0).sum());
    Ok(())
}

#[test]
fn ndarray_style_reductions_and_products_read_as_ndarray() {
    // The same lines as with ndarray: no `?` after sum_axis, var/std, dot.
    let plain = ndarray::Array2::from_shape_fn((50, 3), |(i, j)| ((i * 7 + j * 3) % 11) as f64);
    let x = Array::from_array(plain.clone());
    let z = (&x - &x.mean_axis(Axis(0)).unwrap()) / &x.std_axis(Axis(0), 0.0);
    let want = (&plain - &plain.mean_axis(Axis(0)).unwrap()) / &plain.std_axis(Axis(0), 0.0);
    let got = z.to_array2().unwrap();
    assert!(got.iter().zip(&want).all(|(a, b)| (a - b).abs() <= 1e-12 * b.abs().max(1.0)), "{got} vs {want}");
    let g = x.t().dot(&x);
    assert_eq!(g.to_array2().unwrap(), plain.t().dot(&plain));
    assert_eq!(x.sum_axis(Axis(1)).to_array1().unwrap(), plain.sum_axis(Axis(1)));
    assert!((x.var(1.0) - plain.var(1.0)).abs() < 1e-12 * plain.var(1.0));
    // A mistake panics at its line with the reason, as ndarray's do; the try_ twins return it.
    let p = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| x.dot(&x))).expect_err("[50, 3] . [50, 3]");
    let msg = p.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("dot") && msg.contains("[50, 3]"), "{msg}");
    assert!(matches!(x.try_dot(&x), Err(BachError::Shape { .. })));
    let p = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| x.sum_axis(Axis(2)))).expect_err("no axis 2");
    assert!(p.downcast_ref::<String>().is_some_and(|m| m.contains("axis")), "{:?}", p.downcast_ref::<String>());
    assert!(x.try_var_axis(Axis(0), 50.0).is_err());
}

#[test]
fn readme_shape_mismatch_example() {
    let a = Array1::<f64>::zeros(3);
    let b = Array1::<f64>::zeros(4);
    let err = a.try_add(&b).unwrap_err();
    assert!(matches!(err, BachError::Shape { .. }), "{err}");
    let panic = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| &a + &b)).unwrap_err();
    let msg = panic.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("shape mismatch in `add`"), "{msg}");
}

#[test]
fn readme_user_annotation_example() -> Result<(), BachError> {
    use bach::runtime::{oa, Value};
    let x = Array::linspace(-3.0, 3.0, 100_001);
    let softplus = oa("softplus").cpu(|_ctx, args| Ok(Value::from(args[0].array::<f64>("softplus")?.mapv(|v| (1.0 + v.exp()).ln())))).build();
    let y = Array::<f64>::from_lazy(softplus.call(&[&x.lazy()])?)?;
    assert!(y.plan()?.total_pieces() > 1);
    let expect = ndarray::Array1::linspace(-3.0, 3.0, 100_001).mapv(|v: f64| (1.0 + v.exp()).ln());
    assert_eq!(y.to_array1()?, expect);
    Ok(())
}

#[test]
fn readme_machine_learning_example() -> Result<(), BachError> {
    use bach::datasets::{make_blobs, train_test_split, Blobs};
    use bach::ml::{Dbscan, KNeighborsClassifier, Pca, StandardScaler, TruncatedSvd};

    let (x, y) = make_blobs(&Blobs { n_samples: 1 << 10, n_features: 256, centers: 32, center_box: (-2.0, 2.0), seed: 42, ..Blobs::default() });
    let scaled = StandardScaler.fit(&x)?.transform(&x)?;
    let labels: Array<i64> = Dbscan::params(16.0, 2).fit_predict(&scaled)?;
    let labels = labels.to_array()?;
    assert_eq!(labels.iter().max(), Some(&31), "32 clusters");
    assert!(labels.iter().all(|&l| l >= 0), "no noise");

    let (x_train, x_test, y_train, y_test) = train_test_split(&x, &y, 0.7, 42)?;
    let pca = Pca::params(2).fit(&x_train)?;
    let knn = KNeighborsClassifier::params(5).fit(&pca.transform(&x_train)?, &y_train)?;
    let predicted = knn.predict(&pca.transform(&x_test)?)?;
    assert_eq!(predicted.shape(), y_test.shape());
    let (_, usv) = TruncatedSvd::params(2).fit_transform(&x)?;
    assert_eq!(usv.shape(), &[1 << 10, 2]);

    let wine = bach::read_csv(bach::datasets::wine_csv_file()?)?;
    let alcohol = wine.column("alcohol")?;
    assert_eq!((wine.len(), wine.columns().len()), (178, 14));
    assert_eq!(alcohol.get(&[0][..]), Some(&14.23));
    Ok(())
}

//! Bach's array family (`ArrayBase<S, D>` with ndarray's storage kinds): library code
//! written generic over storage and dimension, or against views, ports by its import; views
//! are Bach's and lazy where the array is; operators between any members of the family give
//! Bach arrays. Each result is checked against the same code run with ndarray.

// Written as ndarray's users write it (`&view + &view`, though views are `Copy`).
#![allow(clippy::reversed_empty_ranges, clippy::op_ref)]

use bach::prelude::*;
use bach::{Data, RemoveAxis, Zip};

// --- Library code as its authors write it (generic over S and D). ---

fn softmax<S: Data<Elem = f64>, D: Dimension + RemoveAxis>(x: &ArrayBase<S, D>, axis: Axis) -> Array<f64, D> {
    let max = x.fold_axis(axis, f64::NEG_INFINITY, |&a, &b| a.max(b));
    let max = max.insert_axis(axis).into_dimensionality::<D>().unwrap();
    let e = (x - &max).mapv(f64::exp);
    let s = e.sum_axis(axis).insert_axis(axis).into_dimensionality::<D>().unwrap();
    e / s
}

fn standardize<S: Data<Elem = f64>>(x: &ArrayBase<S, Ix2>) -> Array2<f64> {
    let mean = x.mean_axis(Axis(0)).unwrap();
    let std = x.std_axis(Axis(0), 0.0);
    (x - &mean) / &std
}

fn zeros_like<S: Data<Elem = f64>, D: Dimension>(x: &ArrayBase<S, D>) -> Array<f64, D> {
    Array::zeros(x.raw_dim())
}

fn row_norms(x: ArrayView2<f64>) -> Array1<f64> {
    x.outer_iter().map(|r| r.dot(&r).sqrt()).collect()
}

fn laplacian(u: &Array3<f64>) -> Array3<f64> {
    let (nx, ny, nz) = u.dim();
    let mut out = Array3::zeros((nx, ny, nz));
    let inner = &u.slice(s![2.., 1..-1, 1..-1])
        + &u.slice(s![..-2, 1..-1, 1..-1])
        + &u.slice(s![1..-1, 2.., 1..-1])
        + &u.slice(s![1..-1, ..-2, 1..-1])
        + &u.slice(s![1..-1, 1..-1, 2..])
        + &u.slice(s![1..-1, 1..-1, ..-2])
        - 6.0 * &u.slice(s![1..-1, 1..-1, 1..-1]);
    out.slice_mut(s![1..-1, 1..-1, 1..-1]).assign(&inner.as_nd());
    out
}

fn rk_step(y: &Array1<f64>, h: f64) -> Array1<f64> {
    let f = |v: ArrayView1<f64>| -> Array1<f64> { v.mapv(|x| -0.5 * x) };
    let k1 = f(y.view());
    let k2 = f((y + &(&k1 * (h / 2.0))).view());
    y + &(k1 + k2) * (h / 2.0)
}

// --- The same code with ndarray, for the expected values. ---
mod reference {
    use ndarray::prelude::*;
    use ndarray::{Data, RemoveAxis};
    pub fn softmax<S: Data<Elem = f64>, D: Dimension + RemoveAxis>(x: &ArrayBase<S, D>, axis: Axis) -> Array<f64, D> {
        let max = x.fold_axis(axis, f64::NEG_INFINITY, |&a, &b| a.max(b));
        let max = max.insert_axis(axis).into_dimensionality::<D>().unwrap();
        let e = (x - &max).mapv(f64::exp);
        let s = e.sum_axis(axis).insert_axis(axis).into_dimensionality::<D>().unwrap();
        e / s
    }
    pub fn standardize<S: Data<Elem = f64>>(x: &ArrayBase<S, Ix2>) -> Array2<f64> {
        let mean = x.mean_axis(Axis(0)).unwrap();
        let std = x.std_axis(Axis(0), 0.0);
        (x - &mean) / &std
    }
}

fn close<D: Dimension>(a: &Array<f64, D>, b: &ndarray::Array<f64, D>) -> bool {
    a.shape() == b.shape() && a.as_nd().iter().zip(b.iter()).all(|(x, y)| (x - y).abs() < 1e-12)
}

fn data(n: usize, m: usize) -> ndarray::Array2<f64> {
    ndarray::Array2::from_shape_fn((n, m), |(i, j)| ((i * 7 + j * 3) % 11) as f64 * 0.37 - 1.1)
}

#[test]
fn generic_library_code_takes_arrays_and_views() {
    let nd = data(6, 4);
    let x = Array2::from(nd.clone());
    assert!(close(&softmax(&x, Axis(1)), &reference::softmax(&nd, Axis(1))));
    assert!(close(&softmax(&x.view(), Axis(0)), &reference::softmax(&nd.view(), Axis(0))));
    assert!(close(&softmax(&x.t(), Axis(0)), &reference::softmax(&nd.t(), Axis(0))));
    assert!(close(&standardize(&x.slice(s![1.., ..])), &reference::standardize(&nd.slice(ndarray::s![1.., ..]))));
    let cube = Array3::from_shape_fn((3, 4, 5), |(i, j, k)| (i * 20 + j * 5 + k) as f64 * 0.1);
    let nd_cube = cube.to_nd().unwrap();
    assert!(close(&softmax(&cube, Axis(2)), &reference::softmax(&nd_cube, Axis(2))));
    assert_eq!(zeros_like(&x.row(0)).shape(), &[4]);
    assert_eq!(zeros_like(&cube.view()).shape(), &[3, 4, 5]);
}

#[test]
fn views_are_bach_views_and_operators_give_bach_arrays() {
    let x = Array2::from(data(5, 3));
    let r: ArrayView1<f64> = x.row(2);
    let c: ArrayView1<f64> = x.column(1);
    let s: Array1<f64> = &r + &x.row(3);
    let _: Array1<f64> = r.to_owned();
    let _: Array1<f64> = 2.0 * &c - &c / 3.0;
    let _: Array2<f64> = x.t().dot(&x);
    let _: Array1<f64> = x.index_axis(Axis(0), 1).into_owned();
    assert_eq!(s.to_nd().unwrap(), &data(5, 3).row(2) + &data(5, 3).row(3));
    // A view of a host array shares its buffer: no copy, no node.
    assert!(std::ptr::eq(&r[0], &x[[2, 0]]));
    let norms = row_norms(x.view());
    let want: ndarray::Array1<f64> = data(5, 3).outer_iter().map(|r| r.dot(&r).sqrt()).collect();
    assert!(close(&norms, &want));
    // Iterating a view by value hands out references, as ndarray's.
    let total: f64 = x.row(1).into_iter().sum();
    assert!((total - data(5, 3).row(1).sum()).abs() < 1e-12);
    for &v in x.column(0) {
        assert!(v.is_finite());
    }
    // An owned array by value gives its elements.
    let v: Vec<f64> = Array1::from(vec![1.0, 2.0]).into_iter().collect();
    assert_eq!(v, vec![1.0, 2.0]);
    // Tuple and array indexing.
    assert_eq!(x[(1, 2)], x[[1, 2]]);
    // Zip over views by value and arrays by reference.
    let mut out = Array1::<f64>::zeros(3);
    Zip::from(&mut out).and(x.row(0)).and(&x.row(1)).for_each(|o, &a, &b| *o = a * b);
    assert!(close(&out, &(&data(5, 3).row(0) * &data(5, 3).row(1))));
}

#[test]
fn a_view_of_a_lazy_array_is_lazy() {
    let big = Array2::<f64>::ones((300, 300)) * 2.0;
    assert!(!big.is_evaluated());
    let r = big.row(5);
    let t = big.t();
    let sl = big.slice(s![10..20, ..]);
    assert!(!r.is_evaluated() && !t.is_evaluated() && !sl.is_evaluated(), "views of a lazy array stay lazy");
    let y = &sl * 3.0;
    assert!(!y.is_evaluated());
    assert_eq!(y.sum(), 10.0 * 300.0 * 6.0);
    // Iterating evaluates, and reads the parent's buffer.
    assert_eq!(r.into_iter().copied().sum::<f64>(), 600.0);
    assert_eq!(t.shape(), &[300, 300]);
}

#[test]
fn three_d_and_generic_shapes() {
    let u = Array3::from_shape_fn((6, 5, 4), |(i, j, k)| (i * i + j + k * 2) as f64);
    let lap = laplacian(&u);
    let nd = u.to_nd().unwrap();
    let (i, j, k) = (2, 2, 1);
    let want = nd[[i + 1, j, k]] + nd[[i - 1, j, k]] + nd[[i, j + 1, k]] + nd[[i, j - 1, k]] + nd[[i, j, k + 1]] + nd[[i, j, k - 1]] - 6.0 * nd[[i, j, k]];
    assert_eq!(lap[[i, j, k]], want);
    let y = rk_step(&array![1.0, 2.0], 0.1);
    assert!((y[0] - (1.0 + 0.05 * (-0.5 + -0.5 * (1.0 - 0.025)))).abs() < 1e-12);
    // Shapes generic code builds: `x.raw_dim()`, `(n, m).f()`, `D::zeros`.
    let z = Array::<f64, Ix3>::zeros(u.raw_dim());
    assert_eq!(z.dim(), (6, 5, 4));
    let f = Array2::<f64>::zeros((2, 3).f());
    assert_eq!(f.dim(), (2, 3));
}

#[test]
fn bach_values_go_to_ndarray_crates_and_back() {
    let x = Array2::from(data(4, 3));
    let v: ndarray::ArrayView2<f64> = x.as_nd();
    assert!(std::ptr::eq(v.as_ptr(), x.as_nd().as_ptr()), "as_nd shares the buffer");
    let owned: ndarray::Array2<f64> = x.clone().into_nd();
    let back: Array2<f64> = owned.clone().into();
    assert_eq!(back, owned);
    let from_view: Array2<f64> = Array2::from(&owned.view());
    assert_eq!(from_view, x);
    let bv: ArrayView2<f64> = ArrayView::from(owned.view());
    assert_eq!(bv.sum(), owned.sum());
    let a1 = aview1(&[1.0, 2.0, 3.0]);
    assert_eq!(a1.iter().sum::<f64>(), 6.0);
    assert_eq!(arr2(&[[1.0, 2.0]]).dim(), (1, 2));
}

/// Code generic over its element type, as numeric libraries write it.
fn scaled_residual<F: bach::NdFloat, S: Data<Elem = F>>(x: &ArrayBase<S, Ix1>, y: ArrayView1<F>, alpha: F) -> Array1<F> {
    let r = &(x * alpha) - &y;
    -(&r / alpha) + F::one()
}
fn add_any<T: Clone + std::ops::Add<Output = T>>(a: ArrayView1<T>, b: ArrayView1<T>) -> Array1<T> {
    &a + &b
}

#[test]
fn element_generic_code_computes_as_ndarray() {
    let x = array![1.0, 2.0, 4.0];
    let y = array![0.5, 0.5, 1.0];
    let got = scaled_residual(&x, y.view(), 2.0);
    let want: [f64; 3] = [1.0 - (2.0 - 0.5) / 2.0, 1.0 - (4.0 - 0.5) / 2.0, 1.0 - (8.0 - 1.0) / 2.0];
    assert!(got.iter().zip(want).all(|(g, w)| (g - w).abs() < 1e-15), "{got}");
    let x32 = array![1.0f32, 2.0];
    assert_eq!(scaled_residual(&x32, x32.view(), 1.0f32), array![1.0f32, 1.0]);
    let (i, j) = (Array1::from(vec![1i32, 2, 3]), Array1::from(vec![10i32, 20, 30]));
    assert_eq!(add_any(i.view(), j.view()), Array1::from(vec![11, 22, 33]));
    let mut m = Array1::from(vec![true, false]);
    m |= &Array1::from(vec![false, false]);
    m &= &Array1::from(vec![true, true]);
    assert_eq!(m, Array1::from(vec![true, false]));
    assert_eq!(x.mean_axis(Axis(0)).map(|m| m.into_scalar()), Some(7.0 / 3.0));
    assert!(Array2::<f64>::zeros((0, 2)).mean_axis(Axis(0)).is_none());
    assert_eq!(arr3(&[[[1.0, 2.0]], [[3.0, 4.0]]]).dim(), (2, 1, 2));
}

#[test]
fn mutable_ndarray_views_take_bach_operands_and_views_split_and_swap() {
    let mut a = Array2::<f64>::zeros((2, 3));
    let r = array![1.0, 2.0, 3.0];
    {
        let mut row = a.row_mut(1);
        row += &r.view();
        row *= &r;
    }
    assert_eq!(a.row(1).to_owned(), array![1.0, 4.0, 9.0]);
    let (top, bottom) = a.view().split_at(Axis(0), 1);
    assert_eq!((top.dim(), bottom.dim()), ((1, 3), (1, 3)));
    assert_eq!(bottom.into_iter().copied().sum::<f64>(), 14.0);
    let mut t = a.clone();
    t.swap_axes(0, 1);
    assert_eq!(t.dim(), (3, 2));
    assert_eq!(t[[2, 1]], 9.0);
    let mut v = a.view();
    v.swap_axes(0, 1);
    assert_eq!(v.into_iter().copied().collect::<Vec<_>>(), vec![0.0, 1.0, 0.0, 4.0, 0.0, 9.0]);
}

// --- Mutable views: Bach's, writing into their parent as ndarray's do. ---

/// eom-style in-place integrator: generic over `S: DataMut`, given a column of a larger array.
fn euler_inplace<S: bach::DataMut<Elem = f64>>(x: &mut ArrayBase<S, Ix1>, dt: f64) {
    let dx = x.mapv(|v| -v);
    *x += &(dx * dt);
}
fn euler_inplace_nd<S: ndarray::DataMut<Elem = f64>>(x: &mut ndarray::ArrayBase<S, ndarray::Ix1>, dt: f64) {
    let dx = x.mapv(|v| -v);
    *x += &(dx * dt);
}
fn normalize_rows(mut m: ArrayViewMut2<f64>) {
    for mut row in m.rows_mut() {
        let n = row.dot(&row).sqrt();
        row /= n;
    }
}
fn normalize_rows_nd(mut m: ndarray::ArrayViewMut2<f64>) {
    for mut row in m.rows_mut() {
        let n = row.dot(&row).sqrt();
        row /= n;
    }
}
fn same_kind_sum<S: Data<Elem = f64>>(a: &ArrayBase<S, Ix2>, b: &ArrayBase<S, Ix2>) -> f64 {
    a.sum() + b.sum()
}

#[test]
fn mutable_views_are_bach_views_that_write_into_their_parent() {
    let nd = data(4, 3);
    let (mut b, mut n) = (Array::from_array(nd.clone()), nd.clone());
    // A column handed to generic in-place code; a row through `assign`; a slice in place.
    for (mut bc, mut nc) in b.columns_mut().zip(n.columns_mut()) {
        euler_inplace(&mut bc, 0.1);
        euler_inplace_nd(&mut nc, 0.1);
    }
    b.row_mut(2).assign(&array![1.0, 2.0, 3.0]);
    n.row_mut(2).assign(&ndarray::array![1.0, 2.0, 3.0]);
    b.slice_mut(s![.., 1..]).mapv_inplace(|v| v * 2.0);
    n.slice_mut(ndarray::s![.., 1..]).mapv_inplace(|v| v * 2.0);
    normalize_rows(b.view_mut());
    normalize_rows_nd(n.view_mut());
    assert!(close(&b, &n));
    // Views of a mutable view are Bach's; a reversed or reshaped one still writes back.
    {
        let mut v = b.view_mut();
        let first: ArrayView1<f64> = v.row(0);
        assert_eq!(first.len(), 3);
        let mut t = v.view_mut().reversed_axes();
        t[[2, 0]] = 7.0;
    }
    assert_eq!(b[[0, 2]], 7.0);
    {
        let mut flat = b.view_mut().into_shape_with_order(12).unwrap();
        flat[11] = -1.0;
    }
    assert_eq!(b[[3, 2]], -1.0);
    // By value, a mutable view hands out references into its parent, as ndarray's.
    for x in b.row_mut(1) {
        *x = 0.5;
    }
    Zip::from(b.row_mut(3)).for_each(|x| *x += 1.0);
    assert_eq!(b.row(1).to_vec(), vec![0.5; 3]);
    assert_eq!(b[[3, 2]], 0.0);
    // `axis_iter_mut`, `split_at` and `aview_mut1`.
    for (i, mut plane) in b.axis_iter_mut(Axis(0)).enumerate() {
        plane.fill(i as f64);
    }
    let (mut left, mut right) = b.view_mut().split_at(Axis(1), 1);
    left.fill(-2.0);
    right += 10.0;
    assert_eq!(b.row(3).to_vec(), vec![-2.0, 13.0, 13.0]);
    let mut raw = vec![1.0, 2.0, 3.0];
    aview_mut1(&mut raw).mapv_inplace(|v| v * v);
    assert_eq!(raw, vec![1.0, 4.0, 9.0]);
}

#[test]
fn a_views_borrow_ends_at_its_last_use_as_ndarrays() {
    let mut a = Array::from_array(data(3, 3));
    let r = a.row(0);
    let s = r.sum();
    a[[0, 0]] = s; // the view is not used again: its borrow has ended
    let mut m = a.view_mut();
    m[[1, 1]] = 2.0;
    a[[2, 2]] = 3.0;
    // Views of a temporary and of a variable, in one call of one storage kind.
    let total = same_kind_sum(&a.view(), &Array2::<f64>::ones((3, 3)).view());
    assert!((total - (a.sum() + 9.0)).abs() < 1e-12);
}

/// An element type that is not `Clone` (ndarray reshapes such arrays; Bach did not).
#[derive(Debug, PartialEq)]
struct Cell(u32);

fn into_col<S: Data>(a: ArrayBase<S, Ix1>) -> ArrayBase<S, Ix2> {
    let n = a.len();
    a.into_shape_with_order((n, 1)).unwrap()
}

fn indices<T: bach::NdFloat>(n: usize) -> Array1<T> {
    Array::range(T::zero(), T::from(n).unwrap(), T::one())
}

#[test]
fn reshaping_and_ranges_ask_what_ndarrays_ask() {
    // Any element type, `Clone` or not, and any storage kind keeps its kind.
    let cells = Array1::from_shape_fn(3, |i| Cell(i as u32));
    let col = into_col(cells);
    assert_eq!(col.shape(), &[3, 1]);
    assert_eq!(col[[2, 0]], Cell(2));
    let v = arr1(&[1.0, 2.0, 3.0, 4.0]);
    let row: ArrayView2<f64> = v.view().into_shape_with_order((2, 2)).unwrap();
    assert_eq!(row.to_owned(), ndarray::arr2(&[[1.0, 2.0], [3.0, 4.0]]));
    // A mutable view reshaped still writes into its parent; a strided one is refused.
    let mut m = Array2::<f64>::zeros((2, 3));
    m.row_mut(1).into_shape_with_order((3, 1)).unwrap().fill(7.0);
    assert_eq!(m.row(1).to_vec(), vec![7.0; 3]);
    assert!(m.column_mut(0).into_shape_with_order((1, 2)).is_err());
    // A transposed host value is copied into row-major order first.
    let t = Array2::from_array(ndarray::arr2(&[[1.0, 2.0], [3.0, 4.0]])).t().to_owned();
    assert_eq!(t.into_shape_with_order(4).unwrap().to_vec(), vec![1.0, 3.0, 2.0, 4.0]);
    // `range` of a generic float: Bach's path for f64/f32, ndarray's for any other.
    assert_eq!(indices::<f64>(4).to_vec(), ndarray::Array1::<f64>::range(0.0, 4.0, 1.0).to_vec());
    assert_eq!(indices::<f32>(3).to_vec(), vec![0.0f32, 1.0, 2.0]);
    assert_eq!(Array1::<f64>::linspace(0.0, 1.0, 5).to_vec(), ndarray::Array1::linspace(0.0, 1.0, 5).to_vec());
}

#[test]
fn moving_cuts_keep_the_storage_kind_as_ndarrays() {
    let nd = ndarray::Array3::from_shape_fn((3, 4, 5), |(i, j, k)| (100 * i + 10 * j + k) as f64);
    let a = Array3::from_array(nd.clone());
    // An array stays an array; a view a view of the same parent.
    let owned: Array2<f64> = a.clone().slice_move(s![1.., 2, ..;2]);
    assert_eq!(owned, nd.clone().slice_move(s![1.., 2, ..;2]));
    let view: ArrayView2<f64> = a.view().index_axis_move(Axis(1), 3);
    assert_eq!(view, nd.view().index_axis_move(Axis(1), 3));
    assert_eq!(view.slice_move(s![.., -1]), nd.slice(s![.., 3, -1]));
    // In place: every axis kept, an index leaves length 1.
    let (mut v, mut w) = (a.view(), nd.view());
    v.slice_collapse(s![.., -2, 1..;2]);
    w.slice_collapse(s![.., -2, 1..;2]);
    assert_eq!(v, w);
    let (mut v, mut w) = (a.view(), nd.view());
    v.collapse_axis(Axis(2), 4);
    w.collapse_axis(Axis(2), 4);
    assert_eq!(v, w);
    // A mutable view cut by value still writes into its parent.
    let mut m = Array3::<f64>::zeros((2, 3, 4));
    m.slice_mut(s![.., 1.., ..]).index_axis_move(Axis(0), 1).fill(5.0);
    let mut e = ndarray::Array3::<f64>::zeros((2, 3, 4));
    e.slice_mut(s![.., 1.., ..]).index_axis_move(Axis(0), 1).fill(5.0);
    assert_eq!(m, e);
    // Rolling windows over borrowed memory, as ndarray's `from_shape_ptr`.
    use ndarray::ShapeBuilder;
    let xs = [1.0, 2.0, 3.0, 4.0, 5.0];
    let windows = unsafe { ArrayView2::<f64>::from_shape_ptr((3, 3).strides((1, 1)), xs.as_ptr()) };
    assert_eq!(windows.sum_axis(Axis(1)).to_vec(), vec![6.0, 9.0, 12.0]);
}

fn rows_dot(x: ArrayView2<f64>, y: ArrayView1<f64>) -> Array1<f64> {
    Zip::from(x.rows()).map_collect(|row| row.dot(&y))
}

#[test]
fn zip_collects_into_bach_arrays_and_is_ndarrays_zip_otherwise() {
    let nd = ndarray::Array2::from_shape_fn((5, 4), |(i, j)| (i as f64 + 1.0) * if j % 2 == 0 { 1.0 } else { -0.5 });
    let (x, y) = (Array2::from_array(nd.clone()), arr1(&[1.0, 2.0, 3.0, 4.0]));
    let want = nd.dot(&ndarray::arr1(&[1.0, 2.0, 3.0, 4.0]));
    assert_eq!(rows_dot(x.view(), y.view()), want);
    assert_eq!(rows_dot(x.slice(s![..;2, ..]), y.view()), want.slice(s![..;2]));
    let par: Array1<f64> = Zip::from(x.rows()).par_map_collect(|row| row.sum());
    assert_eq!(par, nd.sum_axis(Axis(1)));
    // Indexed, broadcast, fold, and an output assigned through a mutable view.
    let mut out = Array2::<f64>::zeros((5, 4));
    Zip::indexed(out.view_mut()).and(&x).and_broadcast(&y).for_each(|(i, j), o, &a, &b| *o = a * b + (i * 10 + j) as f64);
    let mut expect = ndarray::Array2::<f64>::zeros((5, 4));
    ndarray::Zip::indexed(&mut expect).and(&nd).and_broadcast(&ndarray::arr1(&[1.0, 2.0, 3.0, 4.0])).for_each(|(i, j), o, &a, &b| *o = a * b + (i * 10 + j) as f64);
    assert_eq!(out, expect);
    assert_eq!(Zip::from(&x).and(&out).fold(0.0, |s, &a, &b| s + a * b), ndarray::Zip::from(&nd).and(&expect).fold(0.0, |s, &a, &b| s + a * b));
    assert!(Zip::from(&x).all(|&a| a.abs() <= 5.0));
    // A collected element type that is not Clone, and a Fortran-order result made row-major.
    let cells = Zip::from(&y).map_collect(|&v| Cell(v as u32));
    assert_eq!(cells[3], Cell(4));
    let f: Array2<f64> = Zip::from(x.t()).map_collect(|&v| v);
    assert_eq!(f, nd.t());
    use rayon::prelude::*;
    let total: f64 = Zip::from(&x).into_par_iter().map(|(&a,)| a).sum();
    assert_eq!(total, nd.sum());
}

/// The first element of a lane's slice, as a helper of ndimage's padding takes it: a view of
/// the family.
fn first_of(lane: ArrayView1<f64>) -> f64 {
    lane[0]
}

#[test]
fn zips_closures_get_bach_views_as_ndarrays_get_ndarrays() {
    let nd = ndarray::Array2::from_shape_fn((3, 5), |(i, j)| (i * 10 + j) as f64);
    let mut x = Array2::from_array(nd.clone());
    // Lanes by mutable view: each item a Bach `ArrayViewMut1`, sliced and handed on as a view.
    Zip::from(x.lanes_mut(Axis(1))).for_each(|mut lane| {
        let v = first_of(lane.slice(s![2..]));
        lane[0] = v;
    });
    let mut expect = nd.clone();
    ndarray::Zip::from(expect.lanes_mut(ndarray::Axis(1))).for_each(|mut lane| lane[0] = lane[2]);
    assert_eq!(x, expect);
    // Rows by view, folded and collected with a function of the family.
    let firsts: Array1<f64> = Zip::from(x.rows()).map_collect(first_of);
    assert_eq!(firsts, expect.column(0));
    let total = Zip::from(x.rows()).and(&firsts).fold(0.0, |s, row: ArrayView1<f64>, &f| s + row.sum() - f);
    assert_eq!(total, expect.sum() - expect.column(0).sum());
}

#[test]
fn arrays_made_element_by_element_as_ndarrays() {
    use std::mem::MaybeUninit;
    let mut u = Array3::<f64>::uninit((2, 3, 4));
    for ((i, j, k), x) in u.indexed_iter_mut() {
        *x = MaybeUninit::new((100 * i + 10 * j + k) as f64);
    }
    let a = unsafe { u.assume_init() };
    assert_eq!(a, ndarray::Array3::from_shape_fn((2, 3, 4), |(i, j, k)| (100 * i + 10 * j + k) as f64));
    assert_eq!((&a * 2.0).sum(), 2.0 * a.sum());
    let mut v = Array1::<usize>::uninit(5);
    Zip::indexed(&mut v).for_each(|i, x| {
        x.write(i * i);
    });
    assert_eq!(unsafe { v.assume_init() }.to_vec(), vec![0, 1, 4, 9, 16]);
}

/// ndarray-linalg's `replicate` and `generalize` (lax/src/convert.rs style): generic over the
/// owned kind `So`, with no `Clone` asked of the elements.
fn replicate<A: Copy, Sv: Data<Elem = A>, So: bach::DataOwned<Elem = A> + bach::DataMut, D: Dimension>(a: &ArrayBase<Sv, D>) -> ArrayBase<So, D> {
    unsafe { ArrayBase::<So, D>::build_uninit(a.dim(), |view| a.assign_to(view)).assume_init() }
}
fn generalize<A, S: bach::DataOwned<Elem = A>, D: Dimension>(a: Array<A, D>) -> ArrayBase<S, D> {
    let f = !a.is_standard_layout();
    let (dim, (v, _)) = (a.dim(), a.into_raw_vec_and_offset());
    if f {
        ArrayBase::from_shape_vec(dim.f(), v).unwrap()
    } else {
        ArrayBase::from_shape_vec(dim, v).unwrap()
    }
}
fn eye_of<S: bach::DataOwned<Elem = f64>>(n: usize) -> ArrayBase<S, Ix2> {
    ArrayBase::eye(n)
}

#[test]
fn owned_constructors_of_either_kind_and_taking_arrays_apart_as_ndarrays() {
    let a = Array3::from_shape_fn((4, 3, 2), |(i, j, k)| (100 * i + 10 * j + k) as f64);
    let r: Array3<f64> = replicate(&a);
    let s: ArcArray<f64, Ix3> = replicate(&a.view());
    assert_eq!((r, s.to_owned()), (a.clone(), a.clone()));
    // Memory order kept: a column-major value comes apart column by column, as ndarray's.
    let f = Array2::from_shape_vec((2, 3).f(), vec![1, 2, 3, 4, 5, 6]).unwrap();
    let (v, offset) = f.clone().into_raw_vec_and_offset();
    assert_eq!((v, offset), (vec![1, 2, 3, 4, 5, 6], Some(0)));
    let g: ArcArray<i32, Ix2> = generalize(f.clone());
    assert_eq!((g.strides(), g.to_owned()), (&[1isize, 2][..], f));
    // Elements that are not `Clone`: made, reshaped and taken apart without copying.
    struct Token(usize);
    let t: Array2<Token> = ArrayBase::from_shape_vec((2, 2), (0..4).map(Token).collect()).unwrap();
    assert_eq!(t.into_raw_vec().iter().map(|t| t.0).collect::<Vec<_>>(), vec![0, 1, 2, 3]);
    // A shared graph value is copied; the array that shares it keeps its values.
    let x = Array1::from_vec(vec![1.0, 2.0, 3.0]);
    let y = x.clone();
    assert_eq!((x.into_raw_vec(), y.to_vec()), (vec![1.0, 2.0, 3.0], vec![1.0, 2.0, 3.0]));
    // Constants of either kind, from generic code.
    let e: ArcArray<f64, Ix2> = eye_of(3);
    assert_eq!(e.to_owned(), ndarray::Array2::<f64>::eye(3));
    assert_eq!(ArcArray::<f64, Ix1>::linspace(0.0, 1.0, 3).to_vec(), vec![0.0, 0.5, 1.0]);
    assert_eq!(ArcArray::<i64, Ix2>::from_elem((2, 2), 7).sum(), 28);
    assert_eq!(ArcArray::<f64, Ix2>::zeros((2, 3)).shape(), &[2, 3]);
}

#[test]
fn a_shared_value_of_elements_that_cannot_be_copied_is_a_clear_panic() {
    struct Token(#[allow(dead_code)] usize);
    let t: ArcArray<Token, Ix1> = ArcArray::from_shape_fn(3, Token);
    let shares = t.clone();
    let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| t.into_raw_vec())).err().expect("shared");
    assert!(e.downcast_ref::<&str>().is_some_and(|m| m.contains("shared with another array")), "{e:?}");
    assert_eq!(shares.len(), 3);
}

#[test]
fn growing_diagonals_broadcasts_and_defaults_as_ndarrays() {
    let m = Array2::from_shape_fn((3, 3), |(i, j)| (3 * i + j) as f64);
    let nd = ndarray::Array2::from_shape_fn((3, 3), |(i, j)| (3 * i + j) as f64);
    // Views of the family: their arithmetic and `to_owned` give Bach arrays.
    let d: Array1<f64> = m.diag().to_owned() * 2.0;
    assert_eq!(d, nd.diag().to_owned() * 2.0);
    let b: Array2<f64> = d.broadcast((2, 3)).expect("broadcasts").to_owned();
    assert_eq!(b, (nd.diag().to_owned() * 2.0).broadcast((2, 3)).unwrap().to_owned());
    assert!(d.broadcast((2, 4)).is_none());
    assert_eq!(bach::linalg::kron(&m, &m.view()), ndarray::linalg::kron(&nd, &nd));
    assert_eq!(Array2::<f64>::default((2, 2)), ndarray::Array2::<f64>::zeros((2, 2)));
    assert_eq!(Array1::<String>::default(2).to_vec(), vec![String::new(); 2]);
    // Growing an owned array, as ndarray's (errors included).
    let (mut g, mut h) = (m.clone(), nd.clone());
    g.push_row(ArrayView1::from(&[9.0, 9.0, 9.0])).unwrap();
    h.push_row(ndarray::ArrayView1::from(&[9.0, 9.0, 9.0])).unwrap();
    g.push_column(aview1(&[1.0, 2.0, 3.0, 4.0])).unwrap();
    h.push_column(ndarray::aview1(&[1.0, 2.0, 3.0, 4.0])).unwrap();
    g.append(Axis(0), m.slice(s![..1, ..]).broadcast((2, 3)).unwrap().to_owned().push_column_of(0.5).view()).unwrap();
    h.append(Axis(0), ndarray::Array2::from_shape_fn((2, 4), |(_, j)| if j < 3 { j as f64 } else { 0.5 }).view()).unwrap();
    assert_eq!(g, h);
    assert!(g.push_row(aview1(&[1.0])).is_err());
    assert_eq!(g.shape(), &[6, 4]);
    // A grown array computes as any other.
    assert_eq!((&g * 2.0).sum(), 2.0 * h.sum());
}

trait PushColumnOf {
    fn push_column_of(self, v: f64) -> Array2<f64>;
}
impl PushColumnOf for Array2<f64> {
    fn push_column_of(mut self, v: f64) -> Array2<f64> {
        let n = self.nrows();
        self.push_column(Array1::from_elem(n, v).view()).unwrap();
        self
    }
}

/// An owned operand's small value is computed in its own buffer, as ndarray's operators
/// compute on an owned operand (`a * 2.0`, `(&a + &b) + &c`, `2.0 * a`, `a += &b`): no new
/// value, and the same bits as a new value; a value another handle shares is never written.
#[test]
fn an_owned_operand_computes_in_its_own_buffer_and_no_other_handle_sees_it() {
    let fresh = || array![0.1, -2.5, 3.0e-300, 7.0];
    let y = array![0.3, 1.0 / 3.0, -1.0e10, 2.0];
    let nd = |v: &Array1<f64>| ndarray::arr1(&v.to_vec());
    let (nx, ny) = (nd(&fresh()), nd(&y));
    // Each operator, each side: in place, and the bits ndarray's give.
    let a = fresh();
    let p = a.as_ptr();
    let b = a * 2.0;
    assert_eq!(b.as_ptr(), p, "computed in its own buffer");
    assert_eq!(b.to_vec(), (&nx * 2.0).to_vec());
    for (r, want) in [
        (fresh() + &y, &nx + &ny),
        (fresh() - &y, &nx - &ny),
        (fresh() * &y, &nx * &ny),
        (fresh() / &y, &nx / &ny),
        (fresh() % &y, &nx % &ny),
        (fresh() - 1.5, &nx - 1.5),
        (1.5 - fresh(), 1.5 - &nx),
        (1.5 / fresh(), 1.5 / &nx),
        (1.5 + fresh(), 1.5 + &nx),
        (1.5 * fresh(), 1.5 * &nx),
    ] {
        assert_eq!(r.to_vec().iter().map(|v| v.to_bits()).collect::<Vec<_>>(), want.iter().map(|v| v.to_bits()).collect::<Vec<_>>());
    }
    let mut c = fresh();
    let p = c.as_ptr();
    c -= &y;
    c /= 4.0;
    assert_eq!(c.as_ptr(), p);
    assert_eq!(c.to_vec(), ((&nx - &ny) / 4.0).to_vec());
    // Shared: a new value, and the other handle keeps its values.
    let d = fresh();
    let shared = d.clone();
    let e = d + 1.0;
    assert_ne!(e.as_ptr(), shared.as_ptr());
    assert_eq!(shared.to_vec(), fresh().to_vec());
    let mut f = shared.clone();
    f *= &y;
    assert_eq!(shared.to_vec(), fresh().to_vec());
    assert_eq!(f.to_vec(), (&nx * &ny).to_vec());
    // A shape that broadcasts to a larger one is a new value of that shape.
    let g = array![[1.0], [2.0]] + &array![[10.0, 20.0]];
    assert_eq!(g.iter().copied().collect::<Vec<_>>(), vec![11.0, 21.0, 12.0, 22.0]);
}

/// A small vector copied out of a matrix (`k.row(3).to_owned()`) or made by a small
/// matrix·vector product (`k.t().dot(&a)`) is written into a spent value of its length: the
/// same values, bits and layout as ndarray's, a buffer of its own (writing it changes
/// nothing else), and a spent value is reused, not shared.
#[test]
fn a_small_copy_or_product_reuses_spent_values_and_shares_nothing() {
    let rows = [[0.5, -1.25], [3.0e-300, 7.0], [1.0 / 3.0, -2.0], [1.0e10, 0.1]];
    let k = Array2::from_shape_fn((4, 2), |(i, j)| rows[i][j]);
    let nk = ndarray::Array2::from_shape_fn((4, 2), |(i, j)| rows[i][j]);
    let (a, na) = (array![0.25, -4.0, 1.5, 2.0 / 3.0], ndarray::arr1(&[0.25, -4.0, 1.5, 2.0 / 3.0]));
    let bits = |v: Vec<f64>| v.iter().map(|x| x.to_bits()).collect::<Vec<_>>();
    let mut seen = std::collections::HashSet::new();
    for step in 0..4 {
        let mut f = k.row(3).to_owned();
        assert_eq!(bits(f.to_vec()), bits(nk.row(3).to_vec()));
        f[0] = 99.0;
        assert_eq!(k[[3, 0]], 1.0e10, "the matrix keeps its values");
        let p = k.t().dot(&a);
        assert_eq!(bits(p.to_vec()), bits(nk.t().dot(&na).to_vec()), "ndarray's bits");
        let q = k.slice(s![..2, ..]).t().dot(&a.slice(s![..2]));
        assert_eq!(bits(q.to_vec()), bits(nk.slice(ndarray::s![..2, ..]).t().dot(&na.slice(ndarray::s![..2])).to_vec()));
        assert_ne!(p.as_ptr(), q.as_ptr());
        assert_ne!(f.as_ptr(), q.as_ptr());
        if step > 0 {
            // From the second step on, the values dropped the step before are reused.
            assert!(seen.contains(&(p.as_ptr() as usize)) || seen.contains(&(f.as_ptr() as usize)), "a spent value is reused");
        }
        seen.extend([p.as_ptr() as usize, q.as_ptr() as usize, f.as_ptr() as usize]);
    }
    // A reversed column is copied in ndarray's layout (reversed), so not into a spent value.
    let c = k.column(0);
    let r = c.slice(s![..;-1]).to_owned();
    let nr = nk.column(0).slice_move(ndarray::s![..;-1]).to_owned();
    assert_eq!((r.to_vec(), r.strides()), (nr.to_vec(), nr.strides()));
}

/// A slice that does not fit says why, at the caller, for a slice of an array, of a mutable
/// view and of a lazy array, and a slice with a negative step (cut by ndarray) gives
/// ndarray's view.
#[test]
fn a_mutable_slice_that_does_not_fit_says_why() {
    let why = |f: &mut dyn FnMut()| {
        let e = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).expect_err("a slice that does not fit panics");
        e.downcast_ref::<String>().cloned().unwrap_or_default()
    };
    let mut a = Array2::<f64>::zeros((4, 2));
    let m = why(&mut || {
        a.slice_mut(s![4, ..]).fill(1.0);
    });
    assert!(m.contains("slice_mut") && m.contains("[4, 2]") && m.contains("past the end"), "{m}");
    let m = why(&mut || {
        let mut v = a.view_mut();
        v.slice_mut(s![.., -3]).fill(1.0);
    });
    assert!(m.contains("slice_mut") && m.contains("before the start"), "{m}");
    let mut lazy = Array1::<f64>::ones(100_000) * 2.0;
    let m = why(&mut || {
        lazy.slice_mut(s![..200_000]).fill(1.0);
    });
    assert!(m.contains("slice_mut") && m.contains("[100000]"), "{m}");
    let mut b = Array1::from_vec(vec![1.0, 2.0, 3.0, 4.0]);
    b.slice_mut(s![..;-2]).fill(0.0);
    assert_eq!(b.to_vec(), vec![1.0, 0.0, 3.0, 0.0]);
    assert_eq!(lazy.slice(s![..3]).to_vec(), vec![2.0; 3], "the array survives");
}

/// Library code generic over its element type with no bounds writes its arrays through
/// mutable views (`view_mut`, `index_axis_mut`, `slice_mut`), as it does ndarray's: an owned
/// array asks no `A: Clone` (finalfrontier's `HogwildArray<A, D>`), and writes land in it.
#[test]
fn an_owned_array_of_any_element_type_is_written_through_mutable_views() {
    struct Wrapper<A, D>(Array<A, D>);
    impl<A, D: Dimension + RemoveAxis> Wrapper<A, D> {
        fn subview_mut(&mut self, axis: Axis, index: usize) -> ArrayViewMut<'_, A, D::Smaller> {
            self.0.index_axis_mut(axis, index)
        }
        fn all_mut(&mut self) -> ArrayViewMut<'_, A, D> {
            self.0.view_mut()
        }
    }
    // An element type without Clone.
    #[derive(Debug, PartialEq)]
    struct Cell(i64);
    let mut w = Wrapper(Array2::from_shape_fn((3, 2), |(i, j)| Cell((10 * i + j) as i64)));
    w.subview_mut(Axis(0), 1)[1] = Cell(-1);
    for c in w.all_mut().slice_mut(s![.., 0]).iter_mut() {
        c.0 += 100;
    }
    let got: Vec<i64> = w.0.iter().map(|c| c.0).collect();
    assert_eq!(got, vec![100, 1, 110, -1, 120, 21]);
    // A reversed axis (negative strides) is written where ndarray writes.
    let mut f = Wrapper(Array2::from_shape_fn((2, 3), |(i, j)| (3 * i + j) as f64));
    f.0.invert_axis(Axis(1));
    f.subview_mut(Axis(0), 0)[0] = -7.0;
    assert_eq!(f.0.iter().copied().collect::<Vec<_>>(), vec![-7.0, 1.0, 0.0, 5.0, 4.0, 3.0]);
    // A shared value is copied before it is written (copy on write): the other array keeps it.
    let g = Array1::from_vec(vec![1.0, 2.0, 3.0]);
    let mut h = Wrapper(g.clone());
    h.all_mut()[0] = 9.0;
    assert_eq!((g.to_vec(), h.0.to_vec()), (vec![1.0, 2.0, 3.0], vec![9.0, 2.0, 3.0]));
    // A shared array of a Clone type made owned is its own too.
    let s = ArcArray::from_vec(vec![String::from("a"), String::from("b")]);
    let mut o = Wrapper(s.clone().into_owned());
    o.all_mut()[0].push('!');
    assert_eq!((s[0].as_str(), o.0[0].as_str()), ("a", "a!"));
}

// source: rust-ndarray/ndarray-linalg ndarray-linalg/src/convert.rs @b9b57f07 (MIT OR Apache-2.0)
{
    use ndarray::*;
    // changed: lax::UPLO is a local enum and cauchy's Scalar a small local trait (f64 only, with
    // `conj`); the Lapack bound dropped; into_matrix/transpose_data (which need the crate's
    // MatrixLayout) dropped
    #[derive(Debug, Clone, Copy)]
    pub enum UPLO {
        Upper,
        Lower,
    }
    pub trait Scalar: Copy {
        fn conj(&self) -> Self;
    }
    impl Scalar for f64 {
        fn conj(&self) -> f64 {
            *self
        }
    }

    pub fn into_col<S>(a: ArrayBase<S, Ix1>) -> ArrayBase<S, Ix2>
    where
        S: Data,
    {
        let n = a.len();
        a.into_shape_with_order((n, 1)).unwrap()
    }
    pub fn into_row<S>(a: ArrayBase<S, Ix1>) -> ArrayBase<S, Ix2>
    where
        S: Data,
    {
        let n = a.len();
        a.into_shape_with_order((1, n)).unwrap()
    }
    pub fn flatten<S>(a: ArrayBase<S, Ix2>) -> ArrayBase<S, Ix1>
    where
        S: Data,
    {
        let n = a.len();
        a.into_shape_with_order(n).unwrap()
    }
    pub fn replicate<A, Sv, So, D>(a: &ArrayBase<Sv, D>) -> ArrayBase<So, D>
    where
        A: Copy,
        Sv: Data<Elem = A>,
        So: DataOwned<Elem = A> + DataMut,
        D: Dimension,
    {
        unsafe {
            let ret = ArrayBase::<So, D>::build_uninit(a.dim(), |view| {
                a.assign_to(view);
            });
            ret.assume_init()
        }
    }
    pub fn generalize<A, S, D>(a: Array<A, D>) -> ArrayBase<S, D>
    where
        S: DataOwned<Elem = A>,
        D: Dimension,
    {
        // FIXME
        // https://github.com/bluss/rust-ndarray/issues/325
        let strides: Vec<isize> = a.strides().to_vec();
        let new = if a.is_standard_layout() {
            ArrayBase::from_shape_vec(a.dim(), a.into_raw_vec_and_offset().0).unwrap()
        } else {
            ArrayBase::from_shape_vec(a.dim().f(), a.into_raw_vec_and_offset().0).unwrap()
        };
        assert_eq!(
            new.strides(),
            strides.as_slice(),
            "Custom stride is not supported"
        );
        new
    }
    pub(crate) fn triangular_fill_hermitian<A, S>(a: &mut ArrayBase<S, Ix2>, uplo: UPLO)
    where
        A: Scalar,
        S: DataMut<Elem = A>,
    {
        assert!(a.is_square());
        match uplo {
            UPLO::Upper => {
                for row in 0..a.nrows() {
                    for col in 0..row {
                        a[(row, col)] = a[(col, row)].conj();
                    }
                }
            }
            UPLO::Lower => {
                for col in 0..a.ncols() {
                    for row in 0..col {
                        a[(row, col)] = a[(col, row)].conj();
                    }
                }
            }
        }
    }

    let v = arr1(&[1.0, 2.0, 3.0]);
    println!("into_col = {:?}", into_col(v.clone()).shape());
    println!("into_row of a view =\n{}", into_row(v.view()));
    let m = Array2::from_shape_fn((2, 3), |(i, j)| (10 * i + j) as f64);
    println!("flatten = {}", flatten(m.clone()));
    // replicate a (non-contiguous) transposed 3-d view into an owned array and a shared array
    let cube = Array3::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 100 + j * 10 + k) as f64);
    let owned: Array3<f64> = replicate(&cube.view().reversed_axes());
    println!("replicate: shape {:?}, standard layout {}, [3, 2, 1] = {}", owned.shape(), owned.is_standard_layout(), owned[[3, 2, 1]]);
    let shared: ArcArray<f64, Ix3> = replicate(&cube.slice(s![.., 1.., ..;2]));
    println!("replicate into ArcArray: {}", shared.index_axis(Axis(0), 1));
    let f_order = Array2::from_shape_vec((2, 3).f(), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    let g: Array2<f64> = generalize(f_order);
    println!("generalize keeps strides {:?}:\n{}", g.strides(), g);
    let mut h = arr2(&[[1.0, 2.0, 3.0], [0.0, 4.0, 5.0], [0.0, 0.0, 6.0]]);
    triangular_fill_hermitian(&mut h, UPLO::Upper);
    println!("filled from the upper triangle =\n{}", h);
    let mut l = arr2(&[[1.0, 9.0, 9.0], [2.0, 4.0, 9.0], [3.0, 5.0, 6.0]]);
    triangular_fill_hermitian(&mut l, UPLO::Lower);
    println!("filled from the lower triangle =\n{}", l);
}

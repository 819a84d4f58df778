// source: rust-ml/linfa algorithms/linfa-preprocessing/src/norm_scaling.rs @7fe5c86e (MIT OR Apache-2.0)
{
    use ndarray::{Array2, ArrayBase, Axis, Data, Ix2, Zip};
    use ndarray::{array, NdFloat};
    // changed: linfa's Float and Transformer traits and linfa_linalg's Norm trait replaced by
    // small local ones; `with_lapack()`/`without_lapack()` (identity conversions here) dropped
    pub trait AsF64 {
        fn as_f64(self) -> f64;
    }
    impl AsF64 for f64 { fn as_f64(self) -> f64 { self } }
    impl AsF64 for f32 { fn as_f64(self) -> f64 { self as f64 } }
    impl AsF64 for usize { fn as_f64(self) -> f64 { self as f64 } }
    pub trait Float: NdFloat + std::iter::Sum + AsF64 {
        fn cast<T: AsF64>(x: T) -> Self;
    }
    impl Float for f64 {
        fn cast<T: AsF64>(x: T) -> Self { x.as_f64() }
    }
    impl Float for f32 {
        fn cast<T: AsF64>(x: T) -> Self { x.as_f64() as f32 }
    }
    pub trait Norm<F> {
        fn norm_l1(&self) -> F;
        fn norm_l2(&self) -> F;
        fn norm_max(&self) -> F;
    }
    impl<F: Float, S: ndarray::Data<Elem = F>, D: ndarray::Dimension> Norm<F> for ndarray::ArrayBase<S, D> {
        fn norm_l1(&self) -> F { self.iter().map(|x| x.abs()).sum() }
        fn norm_l2(&self) -> F { self.iter().map(|x| *x * *x).sum::<F>().sqrt() }
        fn norm_max(&self) -> F { self.iter().fold(F::zero(), |m, x| m.max(x.abs())) }
    }
    pub trait Transformer<R, T> {
        fn transform(&self, x: R) -> T;
    }

    #[derive(Debug, Clone, PartialEq, Eq)]
    enum Norms {
        L1,
        L2,
        Max,
    }

    /// Norm scaler: scales all samples in a dataset to have unit norm, according to the specified norm
    /// measure
    ///
    /// ### Example
    ///
    /// ```rust
    /// use linfa::traits::Transformer;
    /// use linfa_preprocessing::norm_scaling::NormScaler;
    ///
    /// // Load dataset
    /// let dataset = linfa_datasets::diabetes();
    /// // Initialize scaler
    /// let scaler = NormScaler::l2();
    /// // Scale dataset
    /// let dataset = scaler.transform(dataset);
    /// ```
    #[derive(Debug, Clone, PartialEq, Eq)]
    pub struct NormScaler {
        norm: Norms,
    }

    impl NormScaler {
        /// Initializes a norm scaler that uses l2 norm
        pub fn l2() -> Self {
            Self { norm: Norms::L2 }
        }

        /// Initializes a norm scaler that uses l1 norm
        pub fn l1() -> Self {
            Self { norm: Norms::L1 }
        }

        /// Initializes a norm scaler that uses max norm
        pub fn max() -> Self {
            Self { norm: Norms::Max }
        }
    }

    impl<F: Float> Transformer<Array2<F>, Array2<F>> for NormScaler {
        /// Scales all samples in the array of shape (nsamples, nfeatures) to have unit norm.
        fn transform(&self, x: Array2<F>) -> Array2<F> {
            // add Lapack trait bound
            let x = x;

            let norms = match &self.norm {
                Norms::L1 => x.map_axis(Axis(1), |row| F::cast(row.norm_l1())),
                Norms::L2 => x.map_axis(Axis(1), |row| F::cast(row.norm_l2())),
                Norms::Max => x.map_axis(Axis(1), |row| F::cast(row.norm_max())),
            };

            // remove Lapack trait bound
            let mut x = x;

            Zip::from(x.rows_mut())
                .and(&norms)
                .for_each(|mut row, &norm| {
                    row.mapv_inplace(|el| el / norm);
                });
            x
        }
    }

    let data = array![[3.0, -4.0, 0.0], [1.0, 1.0, 1.0], [-2.0, 0.5, 6.0], [0.25, 0.0, -0.25]];
    println!("l2 =\n{:.4}", NormScaler::l2().transform(data.clone()));
    println!("l1 =\n{:.4}", NormScaler::l1().transform(data.clone()));
    println!("max =\n{:.4}", NormScaler::max().transform(data.t().to_owned()));
    let single: Array2<f32> = array![[1.0, 2.0, 2.0]];
    println!("f32 l2 = {:.4}", NormScaler::l2().transform(single));
}

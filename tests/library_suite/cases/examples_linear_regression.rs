// source: rust-ndarray/ndarray-examples linear_regression/src/lib.rs @d7d43e01 (MIT OR Apache-2.0)
{
    use ndarray::{concatenate, Array, Array1, ArrayBase, Axis, Data, Ix1, Ix2};
    use ndarray::{array, Array2};
    // changed: ndarray_linalg's Solve::solve_into replaced by a small local trait of the same
    // name (Gaussian elimination with partial pivoting); `stack` (ndarray 0.13, which joined
    // along an existing axis) updated to `concatenate`
    pub trait Solve {
        fn solve_into(self, b: Array1<f64>) -> Result<Array1<f64>, String>;
    }
    impl Solve for Array2<f64> {
        fn solve_into(mut self, mut b: Array1<f64>) -> Result<Array1<f64>, String> {
            let n = b.len();
            for k in 0..n {
                let p = (k..n).max_by(|&i, &j| self[[i, k]].abs().partial_cmp(&self[[j, k]].abs()).unwrap()).unwrap();
                if self[[p, k]] == 0.0 {
                    return Err("singular".to_string());
                }
                for j in 0..n {
                    self.swap([k, j], [p, j]);
                }
                b.swap(k, p);
                for i in k + 1..n {
                    let f = self[[i, k]] / self[[k, k]];
                    for j in k..n {
                        self[[i, j]] -= f * self[[k, j]];
                    }
                    b[i] -= f * b[k];
                }
            }
            for i in (0..n).rev() {
                let s: f64 = (i + 1..n).map(|j| self[[i, j]] * b[j]).sum();
                b[i] = (b[i] - s) / self[[i, i]];
            }
            Ok(b)
        }
    }


    /// The simple linear regression model is
    ///     y = bX + e  where e ~ N(0, sigma^2 * I)
    /// In probabilistic terms this corresponds to
    ///     y - bX ~ N(0, sigma^2 * I)
    ///     y | X, b ~ N(bX, sigma^2 * I)
    /// The loss for the model is simply the squared error between the model
    /// predictions and the true values:
    ///     Loss = ||y - bX||^2
    /// The maximum likelihood estimation for the model parameters `beta` can be computed
    /// in closed form via the normal equation:
    ///     b = (X^T X)^{-1} X^T y
    /// where (X^T X)^{-1} X^T is known as the pseudoinverse or Moore-Penrose inverse.
    ///
    /// Adapted from: https://github.com/ddbourgin/numpy-ml
    pub struct LinearRegression {
        pub beta: Option<Array1<f64>>,
        fit_intercept: bool,
    }

    impl LinearRegression {
        pub fn new(fit_intercept: bool) -> LinearRegression {
            LinearRegression {
                beta: None,
                fit_intercept,
            }
        }

        /// Given:
        /// - an input matrix `X`, with shape `(n_samples, n_features)`;
        /// - a target variable `y`, with shape `(n_samples,)`;
        /// `fit` tunes the `beta` parameter of the linear regression model
        /// to match the training data distribution.
        ///
        /// `self` is modified in place, nothing is returned.
        pub fn fit<A, B>(&mut self, X: &ArrayBase<A, Ix2>, y: &ArrayBase<B, Ix1>)
        where
            A: Data<Elem = f64>,
            B: Data<Elem = f64>,
        {
            let (n_samples, _) = X.dim();

            // Check that our inputs have compatible shapes
            assert_eq!(y.dim(), n_samples);

            // If we are fitting the intercept, we need an additional column
            self.beta = if self.fit_intercept {
                let dummy_column: Array<f64, _> = Array::ones((n_samples, 1));
                let X = concatenate(Axis(1), &[dummy_column.view(), X.view()]).unwrap();
                Some(LinearRegression::solve_normal_equation(&X, y))
            } else {
                Some(LinearRegression::solve_normal_equation(X, y))
            };
        }

        /// Given an input matrix `X`, with shape `(n_samples, n_features)`,
        /// `predict` returns the target variable according to linear model
        /// learned from the training data distribution.
        ///
        /// **Panics** if `self` has not be `fit`ted before calling `predict.
        pub fn predict<A>(&self, X: &ArrayBase<A, Ix2>) -> Array1<f64>
        where
            A: Data<Elem = f64>,
        {
            let (n_samples, _) = X.dim();

            // If we are fitting the intercept, we need an additional column
            if self.fit_intercept {
                let dummy_column: Array<f64, _> = Array::ones((n_samples, 1));
                let X = concatenate(Axis(1), &[dummy_column.view(), X.view()]).unwrap();
                self._predict(&X)
            } else {
                self._predict(X)
            }
        }

        fn solve_normal_equation<A, B>(X: &ArrayBase<A, Ix2>, y: &ArrayBase<B, Ix1>) -> Array1<f64>
        where
            A: Data<Elem = f64>,
            B: Data<Elem = f64>,
        {
            let rhs = X.t().dot(y);
            let linear_operator = X.t().dot(X);
            linear_operator.solve_into(rhs).unwrap()
        }

        fn _predict<A>(&self, X: &ArrayBase<A, Ix2>) -> Array1<f64>
        where
            A: Data<Elem = f64>,
        {
            match &self.beta {
                None => panic!("The linear regression estimator has to be fitted first!"),
                Some(beta) => X.dot(beta),
            }
        }
    }

    // y = 2 + 3 x0 - x1 + small deterministic noise
    let X = Array2::from_shape_fn((10, 2), |(i, j)| if j == 0 { i as f64 * 0.5 } else { ((i * 7) % 5) as f64 });
    let noise = Array1::from_shape_fn(10, |i| ((i * 13) % 7) as f64 * 0.01 - 0.03);
    let y = X.column(0).mapv(|x| 3.0 * x) - &X.column(1) + 2.0 + &noise;
    let mut model = LinearRegression::new(true);
    model.fit(&X, &y);
    println!("beta (with intercept) = {:.4}", model.beta.as_ref().unwrap());
    let test = array![[1.0, 1.0], [4.0, 0.0], [0.0, 3.0]];
    println!("predictions = {:.4}", model.predict(&test));
    let mut no_intercept = LinearRegression::new(false);
    no_intercept.fit(&X.view(), &y.view());
    println!("beta (no intercept) = {:.4}", no_intercept.beta.as_ref().unwrap());
    println!("predictions on a slice = {:.4}", no_intercept.predict(&X.slice(ndarray::s![..3, ..])));
}

// source: rust-ndarray/ndarray-stats src/summary_statistics/means.rs @7997e201 (MIT OR Apache-2.0)
{
    use ndarray::{Array, ArrayBase, Axis, Data, Dimension, Ix1, RemoveAxis};
    use ndarray::{array, Array2, Array3};
    // changed: the element type fixed to f64 (`type A = f64`, num_traits bounds dropped); small
    // local Zero/One/FromPrimitive traits give f64 the `A::zero()`, `A::one()`, `A::from_usize`
    // the bodies call, and a local IterBinomial stands in for num_integer's; the crate's error
    // types replaced by local ones; the trait trimmed to the methods used here
    type A = f64;
    pub trait Zero {
        fn zero() -> Self;
    }
    impl Zero for f64 {
        fn zero() -> Self {
            0.0
        }
    }
    pub trait One {
        fn one() -> Self;
    }
    impl One for f64 {
        fn one() -> Self {
            1.0
        }
    }
    pub trait FromPrimitive: Sized {
        fn from_usize(n: usize) -> Option<Self>;
    }
    impl FromPrimitive for f64 {
        fn from_usize(n: usize) -> Option<Self> {
            Some(n as f64)
        }
    }
    struct IterBinomial {
        n: usize,
        k: usize,
        a: usize,
    }
    impl IterBinomial {
        fn new(n: usize) -> IterBinomial {
            IterBinomial { n, k: 0, a: 1 }
        }
    }
    impl Iterator for IterBinomial {
        type Item = usize;
        fn next(&mut self) -> Option<usize> {
            if self.k > self.n {
                return None;
            }
            let r = self.a;
            self.a = self.a * (self.n - self.k) / (self.k + 1);
            self.k += 1;
            Some(r)
        }
    }

    #[derive(Debug, Clone, PartialEq)]
    pub struct EmptyInput;
    #[derive(Debug, Clone, PartialEq)]
    pub struct ShapeMismatch {
        pub first_shape: Vec<usize>,
        pub second_shape: Vec<usize>,
    }
    #[derive(Debug, Clone, PartialEq)]
    pub enum MultiInputError {
        EmptyInput,
        ShapeMismatch(ShapeMismatch),
    }
    macro_rules! return_err_if_empty {
        ($arr:expr) => {
            if $arr.len() == 0 {
                return Err(MultiInputError::EmptyInput);
            }
        };
    }

    pub trait SummaryStatisticsExt<A, S, D>
    where
        S: Data<Elem = A>,
        D: Dimension,
    {
        fn mean(&self) -> Result<A, EmptyInput>;

        fn weighted_mean_axis(
            &self,
            axis: Axis,
            weights: &ArrayBase<S, Ix1>,
        ) -> Result<Array<A, D::Smaller>, MultiInputError>
        where
            D: RemoveAxis;

        fn weighted_sum_axis(
            &self,
            axis: Axis,
            weights: &ArrayBase<S, Ix1>,
        ) -> Result<Array<A, D::Smaller>, MultiInputError>
        where
            D: RemoveAxis;

        fn weighted_var_axis(
            &self,
            axis: Axis,
            weights: &ArrayBase<S, Ix1>,
            ddof: A,
        ) -> Result<Array<A, D::Smaller>, MultiInputError>
        where
            D: RemoveAxis;

        fn kurtosis(&self) -> Result<A, EmptyInput>;

        fn skewness(&self) -> Result<A, EmptyInput>;

        fn central_moment(&self, order: u16) -> Result<A, EmptyInput>;

        fn central_moments(&self, order: u16) -> Result<Vec<A>, EmptyInput>;
    }

    impl<S, D> SummaryStatisticsExt<A, S, D> for ArrayBase<S, D>
    where
        S: Data<Elem = A>,
        D: Dimension,
    {
        fn mean(&self) -> Result<A, EmptyInput> {
            let n_elements = self.len();
            if n_elements == 0 {
                Err(EmptyInput)
            } else {
                let n_elements = A::from_usize(n_elements)
                    .expect("Converting number of elements to `A` must not fail.");
                Ok(self.sum() / n_elements)
            }
        }

        fn weighted_mean_axis(
            &self,
            axis: Axis,
            weights: &ArrayBase<S, Ix1>,
        ) -> Result<Array<A, D::Smaller>, MultiInputError>
        where
            D: RemoveAxis,
        {
            return_err_if_empty!(self);
            let mut weighted_sum = self.weighted_sum_axis(axis, weights)?;
            let weights_sum = weights.sum();
            weighted_sum.mapv_inplace(|v| v / weights_sum);
            Ok(weighted_sum)
        }

        fn weighted_sum_axis(
            &self,
            axis: Axis,
            weights: &ArrayBase<S, Ix1>,
        ) -> Result<Array<A, D::Smaller>, MultiInputError>
        where
            D: RemoveAxis,
        {
            if self.shape()[axis.index()] != weights.len() {
                return Err(MultiInputError::ShapeMismatch(ShapeMismatch {
                    first_shape: self.shape().to_vec(),
                    second_shape: weights.shape().to_vec(),
                }));
            }

            // We could use `lane.weighted_sum` here, but we're avoiding 2
            // conditions and an unwrap per lane.
            Ok(self.map_axis(axis, |lane| {
                lane.iter()
                    .zip(weights)
                    .fold(A::zero(), |acc, (&d, &w)| acc + d * w)
            }))
        }

        fn weighted_var_axis(
            &self,
            axis: Axis,
            weights: &ArrayBase<S, Ix1>,
            ddof: A,
        ) -> Result<Array<A, D::Smaller>, MultiInputError>
        where
            D: RemoveAxis,
        {
            return_err_if_empty!(self);
            if self.shape()[axis.index()] != weights.len() {
                return Err(MultiInputError::ShapeMismatch(ShapeMismatch {
                    first_shape: self.shape().to_vec(),
                    second_shape: weights.shape().to_vec(),
                }));
            }
            let zero = A::from_usize(0).expect("Converting 0 to `A` must not fail.");
            let one = A::from_usize(1).expect("Converting 1 to `A` must not fail.");
            assert!(
                !(ddof < zero || ddof > one),
                "`ddof` must not be less than zero or greater than one",
            );

            // `weights` must be a view because `lane` is a view in this context.
            let weights = weights.view();
            Ok(self.map_axis(axis, |lane| {
                inner_weighted_var(&lane, &weights, ddof, zero).unwrap()
            }))
        }

        fn kurtosis(&self) -> Result<A, EmptyInput> {
            let central_moments = self.central_moments(4)?;
            Ok(central_moments[4] / central_moments[2].powi(2))
        }

        fn skewness(&self) -> Result<A, EmptyInput> {
            let central_moments = self.central_moments(3)?;
            Ok(central_moments[3] / central_moments[2].sqrt().powi(3))
        }

        fn central_moment(&self, order: u16) -> Result<A, EmptyInput> {
            if self.is_empty() {
                return Err(EmptyInput);
            }
            match order {
                0 => Ok(A::one()),
                1 => Ok(A::zero()),
                n => {
                    let mean = self.mean().unwrap();
                    let shifted_array = self.mapv(|x| x - mean);
                    let shifted_moments = moments(shifted_array, n);
                    let correction_term = -shifted_moments[1];

                    let coefficients = central_moment_coefficients(&shifted_moments);
                    Ok(horner_method(coefficients, correction_term))
                }
            }
        }

        fn central_moments(&self, order: u16) -> Result<Vec<A>, EmptyInput> {
            if self.is_empty() {
                return Err(EmptyInput);
            }
            match order {
                0 => Ok(vec![A::one()]),
                1 => Ok(vec![A::one(), A::zero()]),
                n => {
                    // We only perform these operations once, and then reuse their
                    // result to compute all the required moments
                    let mean = self.mean().unwrap();
                    let shifted_array = self.mapv(|x| x - mean);
                    let shifted_moments = moments(shifted_array, n);
                    let correction_term = -shifted_moments[1];

                    let mut central_moments = vec![A::one(), A::zero()];
                    for k in 2..=n {
                        let coefficients =
                            central_moment_coefficients(&shifted_moments[..=(k as usize)]);
                        let central_moment = horner_method(coefficients, correction_term);
                        central_moments.push(central_moment)
                    }
                    Ok(central_moments)
                }
            }
        }
    }

    /// Private function for `weighted_var` without conditions and asserts.
    fn inner_weighted_var<S, D>(
        arr: &ArrayBase<S, D>,
        weights: &ArrayBase<S, D>,
        ddof: A,
        zero: A,
    ) -> Result<A, MultiInputError>
    where
        S: Data<Elem = A>,
        D: Dimension,
    {
        let mut weight_sum = zero;
        let mut mean = zero;
        let mut s = zero;
        for (&x, &w) in arr.iter().zip(weights.iter()) {
            weight_sum += w;
            let x_minus_mean = x - mean;
            mean += (w / weight_sum) * x_minus_mean;
            s += w * x_minus_mean * (x - mean);
        }
        Ok(s / (weight_sum - ddof))
    }

    fn moments<S, D>(a: ArrayBase<S, D>, order: u16) -> Vec<A>
    where
        S: Data<Elem = A>,
        D: Dimension,
    {
        let n_elements =
            A::from_usize(a.len()).expect("Converting number of elements to `A` must not fail");
        let order = i32::from(order);

        // When k=0, we are raising each element to the 0th power
        // No need to waste CPU cycles going through the array
        let mut moments = vec![A::one()];

        if order >= 1 {
            // When k=1, we don't need to raise elements to the 1th power (identity)
            moments.push(a.sum() / n_elements)
        }

        for k in 2..=order {
            moments.push(a.map(|x| x.powi(k)).sum() / n_elements)
        }
        moments
    }

    fn central_moment_coefficients(moments: &[A]) -> Vec<A> {
        let order = moments.len();
        IterBinomial::new(order)
            .zip(moments.iter().rev())
            .map(|(binom, &moment)| A::from_usize(binom).unwrap() * moment)
            .collect()
    }

    fn horner_method(coefficients: Vec<A>, indeterminate: A) -> A {
        let mut result = A::zero();
        for coefficient in coefficients.into_iter().rev() {
            result = coefficient + indeterminate * result
        }
        result
    }

    let x = array![1.0, 2.0, 2.0, 3.0, 7.0, 11.0, 4.0, 0.5];
    println!("mean = {:.6}", x.mean().unwrap());
    println!("central moments = {:?}", x.central_moments(4).unwrap().iter().map(|m| format!("{:.6}", m)).collect::<Vec<_>>());
    println!("2nd central moment = {:.6}", x.central_moment(2).unwrap());
    println!("skewness = {:.6}", x.skewness().unwrap());
    println!("kurtosis = {:.6}", x.kurtosis().unwrap());

    let m = Array2::from_shape_fn((4, 3), |(i, j)| ((i * 3 + j) as f64).sqrt() + j as f64);
    let w = array![1.0, 2.0, 3.0, 4.0];
    println!("weighted sum axis 0 = {:.4}", m.weighted_sum_axis(Axis(0), &w).unwrap());
    println!("weighted mean axis 0 = {:.4}", m.weighted_mean_axis(Axis(0), &w).unwrap());
    println!("weighted var axis 0 = {:.4}", m.weighted_var_axis(Axis(0), &w, 0.0).unwrap());

    let cube = Array3::from_shape_fn((3, 2, 4), |(i, j, k)| (i as f64 - 1.0) * 0.5 + (j * k) as f64);
    let wc = array![2.0, 3.0, 5.0];
    println!("3-d weighted mean over axis 0 =\n{:.4}", cube.weighted_mean_axis(Axis(0), &wc).unwrap());
    println!("3-d weighted var over axis 0 (ddof 1) =\n{:.4}", cube.weighted_var_axis(Axis(0), &wc, 1.0).unwrap());
    println!("3-d skewness = {:.6}", cube.skewness().unwrap());
    println!("mismatch: {:?}", m.weighted_sum_axis(Axis(1), &w).is_err());
}

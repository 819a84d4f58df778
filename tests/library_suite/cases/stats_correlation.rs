// source: rust-ndarray/ndarray-stats src/correlation.rs @7997e201 (MIT OR Apache-2.0)
{
    use ndarray::prelude::*;
    use ndarray::Data;
    // changed: the element type fixed to f64 (`type A = f64`, the num_traits `Float +
    // FromPrimitive` bounds dropped), with small local Zero/FromPrimitive traits giving f64 the
    // `A::zero()` and `A::from_usize` the bodies call; EmptyInput is a local type; the trait's
    // docs and private marker dropped
    type A = f64;
    pub trait Zero {
        fn zero() -> Self;
    }
    impl Zero for f64 {
        fn zero() -> Self {
            0.0
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
    #[derive(Debug, Clone, PartialEq)]
    pub struct EmptyInput;

    pub trait CorrelationExt<A, S>
    where
        S: Data<Elem = A>,
    {
        fn cov(&self, ddof: A) -> Result<Array2<A>, EmptyInput>;

        fn pearson_correlation(&self) -> Result<Array2<A>, EmptyInput>;
    }

    impl<S> CorrelationExt<A, S> for ArrayBase<S, Ix2>
    where
        S: Data<Elem = A>,
    {
        fn cov(&self, ddof: A) -> Result<Array2<A>, EmptyInput> {
            let observation_axis = Axis(1);
            let n_observations = A::from_usize(self.len_of(observation_axis)).unwrap();
            let dof = if ddof >= n_observations {
                panic!(
                    "`ddof` needs to be strictly smaller than the \
                     number of observations provided for each \
                     random variable!"
                )
            } else {
                n_observations - ddof
            };
            let mean = self.mean_axis(observation_axis);
            match mean {
                Some(mean) => {
                    let denoised = self - &mean.insert_axis(observation_axis);
                    let covariance = denoised.dot(&denoised.t());
                    Ok(covariance.mapv_into(|x| x / dof))
                }
                None => Err(EmptyInput),
            }
        }

        fn pearson_correlation(&self) -> Result<Array2<A>, EmptyInput> {
            match self.dim() {
                (n, m) if n > 0 && m > 0 => {
                    let observation_axis = Axis(1);
                    // The ddof value doesn't matter, as long as we use the same one
                    // for computing covariance and standard deviation
                    // We choose 0 as it is the smallest number admitted by std_axis
                    let ddof = A::zero();
                    let cov = self.cov(ddof).unwrap();
                    let std = self
                        .std_axis(observation_axis, ddof)
                        .insert_axis(observation_axis);
                    let std_matrix = std.dot(&std.t());
                    // element-wise division
                    Ok(cov / std_matrix)
                }
                _ => Err(EmptyInput),
            }
        }
    }

    let a = arr2(&[[1., 3., 5.], [2., 4., 6.]]);
    println!("doc example cov =\n{:.4}", a.cov(1.).unwrap());
    // three random variables (rows), six observations (columns)
    let m = array![
        [2.1, 2.5, 3.6, 4.0, 4.8, 5.2],
        [8.0, 10.0, 12.0, 14.0, 17.5, 18.0],
        [-1.0, -0.5, 0.0, 0.5, 2.0, 1.5]
    ];
    println!("cov(ddof=1) =\n{:.4}", m.cov(1.).unwrap());
    println!("pearson =\n{:.4}", m.pearson_correlation().unwrap());
    // the same on the transpose of the observations-first layout (a view)
    let obs_first = m.t().to_owned();
    println!("pearson of a transposed view =\n{:.4}", obs_first.t().pearson_correlation().unwrap());
    println!("empty: {:?}", Array2::<f64>::zeros((0, 3)).pearson_correlation());
}

// source: rust-ndarray/ndarray-stats src/deviation.rs @7997e201 (MIT OR Apache-2.0)
{
    use ndarray::{ArrayBase, Data, Dimension, Zip};
    use ndarray::{array, Array3};
    use std::ops::AddAssign;
    // changed: num_traits::{Signed, ToPrimitive} (and Zero) replaced by small local traits
    // implemented for f64 and i32; the crate's error types and its two error macros replaced by
    // local ones; the trait trimmed to the methods used here (docs and private marker dropped)
    pub trait Zero {
        fn zero() -> Self;
    }
    pub trait Signed: Zero + Copy + std::ops::Sub<Output = Self> + std::ops::Mul<Output = Self> {
        fn abs(&self) -> Self;
    }
    pub trait ToPrimitive {
        fn to_f64(&self) -> Option<f64>;
    }
    impl Zero for f64 {
        fn zero() -> Self {
            0.0
        }
    }
    impl Signed for f64 {
        fn abs(&self) -> Self {
            f64::abs(*self)
        }
    }
    impl ToPrimitive for f64 {
        fn to_f64(&self) -> Option<f64> {
            Some(*self)
        }
    }
    impl Zero for i32 {
        fn zero() -> Self {
            0
        }
    }
    impl Signed for i32 {
        fn abs(&self) -> Self {
            i32::abs(*self)
        }
    }
    impl ToPrimitive for i32 {
        fn to_f64(&self) -> Option<f64> {
            Some(*self as f64)
        }
    }

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
    impl From<ShapeMismatch> for MultiInputError {
        fn from(err: ShapeMismatch) -> Self {
            MultiInputError::ShapeMismatch(err)
        }
    }
    macro_rules! return_err_if_empty {
        ($arr:expr) => {
            if $arr.len() == 0 {
                return Err(MultiInputError::EmptyInput);
            }
        };
    }
    macro_rules! return_err_unless_same_shape {
        ($arr_a:expr, $arr_b:expr) => {
            if $arr_a.shape() != $arr_b.shape() {
                return Err(MultiInputError::ShapeMismatch(ShapeMismatch {
                    first_shape: $arr_a.shape().to_vec(),
                    second_shape: $arr_b.shape().to_vec(),
                })
                .into());
            }
        };
    }

    pub trait DeviationExt<A, S, D>
    where
        S: Data<Elem = A>,
        D: Dimension,
    {
        fn count_eq<T>(&self, other: &ArrayBase<T, D>) -> Result<usize, MultiInputError>
        where
            A: PartialEq,
            T: Data<Elem = A>;

        fn sq_l2_dist<T>(&self, other: &ArrayBase<T, D>) -> Result<A, MultiInputError>
        where
            A: AddAssign + Clone + Signed,
            T: Data<Elem = A>;

        fn l2_dist<T>(&self, other: &ArrayBase<T, D>) -> Result<f64, MultiInputError>
        where
            A: AddAssign + Clone + Signed + ToPrimitive,
            T: Data<Elem = A>;

        fn l1_dist<T>(&self, other: &ArrayBase<T, D>) -> Result<A, MultiInputError>
        where
            A: AddAssign + Clone + Signed,
            T: Data<Elem = A>;

        fn linf_dist<T>(&self, other: &ArrayBase<T, D>) -> Result<A, MultiInputError>
        where
            A: Clone + PartialOrd + Signed,
            T: Data<Elem = A>;

        fn mean_abs_err<T>(&self, other: &ArrayBase<T, D>) -> Result<f64, MultiInputError>
        where
            A: AddAssign + Clone + Signed + ToPrimitive,
            T: Data<Elem = A>;

        fn mean_sq_err<T>(&self, other: &ArrayBase<T, D>) -> Result<f64, MultiInputError>
        where
            A: AddAssign + Clone + Signed + ToPrimitive,
            T: Data<Elem = A>;

        fn root_mean_sq_err<T>(&self, other: &ArrayBase<T, D>) -> Result<f64, MultiInputError>
        where
            A: AddAssign + Clone + Signed + ToPrimitive,
            T: Data<Elem = A>;

        fn peak_signal_to_noise_ratio<T>(
            &self,
            other: &ArrayBase<T, D>,
            maxv: A,
        ) -> Result<f64, MultiInputError>
        where
            A: AddAssign + Clone + Signed + ToPrimitive,
            T: Data<Elem = A>;
    }

    impl<A, S, D> DeviationExt<A, S, D> for ArrayBase<S, D>
    where
        S: Data<Elem = A>,
        D: Dimension,
    {
        fn count_eq<T>(&self, other: &ArrayBase<T, D>) -> Result<usize, MultiInputError>
        where
            A: PartialEq,
            T: Data<Elem = A>,
        {
            return_err_if_empty!(self);
            return_err_unless_same_shape!(self, other);

            let mut count = 0;

            Zip::from(self).and(other).for_each(|a, b| {
                if a == b {
                    count += 1;
                }
            });

            Ok(count)
        }

        fn sq_l2_dist<T>(&self, other: &ArrayBase<T, D>) -> Result<A, MultiInputError>
        where
            A: AddAssign + Clone + Signed,
            T: Data<Elem = A>,
        {
            return_err_if_empty!(self);
            return_err_unless_same_shape!(self, other);

            let mut result = A::zero();

            Zip::from(self).and(other).for_each(|self_i, other_i| {
                let (a, b) = (self_i.clone(), other_i.clone());
                let diff = a - b;
                result += diff.clone() * diff;
            });

            Ok(result)
        }

        fn l2_dist<T>(&self, other: &ArrayBase<T, D>) -> Result<f64, MultiInputError>
        where
            A: AddAssign + Clone + Signed + ToPrimitive,
            T: Data<Elem = A>,
        {
            let sq_l2_dist = self
                .sq_l2_dist(other)?
                .to_f64()
                .expect("failed cast from type A to f64");

            Ok(sq_l2_dist.sqrt())
        }

        fn l1_dist<T>(&self, other: &ArrayBase<T, D>) -> Result<A, MultiInputError>
        where
            A: AddAssign + Clone + Signed,
            T: Data<Elem = A>,
        {
            return_err_if_empty!(self);
            return_err_unless_same_shape!(self, other);

            let mut result = A::zero();

            Zip::from(self).and(other).for_each(|self_i, other_i| {
                let (a, b) = (self_i.clone(), other_i.clone());
                result += (a - b).abs();
            });

            Ok(result)
        }

        fn linf_dist<T>(&self, other: &ArrayBase<T, D>) -> Result<A, MultiInputError>
        where
            A: Clone + PartialOrd + Signed,
            T: Data<Elem = A>,
        {
            return_err_if_empty!(self);
            return_err_unless_same_shape!(self, other);

            let mut max = A::zero();

            Zip::from(self).and(other).for_each(|self_i, other_i| {
                let (a, b) = (self_i.clone(), other_i.clone());
                let diff = (a - b).abs();
                if diff > max {
                    max = diff;
                }
            });

            Ok(max)
        }

        fn mean_abs_err<T>(&self, other: &ArrayBase<T, D>) -> Result<f64, MultiInputError>
        where
            A: AddAssign + Clone + Signed + ToPrimitive,
            T: Data<Elem = A>,
        {
            let l1_dist = self
                .l1_dist(other)?
                .to_f64()
                .expect("failed cast from type A to f64");
            let n = self.len() as f64;

            Ok(l1_dist / n)
        }

        fn mean_sq_err<T>(&self, other: &ArrayBase<T, D>) -> Result<f64, MultiInputError>
        where
            A: AddAssign + Clone + Signed + ToPrimitive,
            T: Data<Elem = A>,
        {
            let l2_dist = self
                .sq_l2_dist(other)?
                .to_f64()
                .expect("failed cast from type A to f64");
            let n = self.len() as f64;

            Ok(l2_dist / n)
        }

        fn root_mean_sq_err<T>(&self, other: &ArrayBase<T, D>) -> Result<f64, MultiInputError>
        where
            A: AddAssign + Clone + Signed + ToPrimitive,
            T: Data<Elem = A>,
        {
            let msd = self.mean_sq_err(other)?;
            Ok(msd.sqrt())
        }

        fn peak_signal_to_noise_ratio<T>(
            &self,
            other: &ArrayBase<T, D>,
            maxv: A,
        ) -> Result<f64, MultiInputError>
        where
            A: AddAssign + Clone + Signed + ToPrimitive,
            T: Data<Elem = A>,
        {
            let maxv_f = maxv.to_f64().expect("failed cast from type A to f64");
            let msd = self.mean_sq_err(other)?;
            let psnr = 10. * f64::log10(maxv_f * maxv_f / msd);

            Ok(psnr)
        }
    }

    // two 2x3x4 "volumes": a reference and a noisy reconstruction
    let reference = Array3::from_shape_fn((2, 3, 4), |(i, j, k)| (i * 12 + j * 4 + k) as f64 / 4.0);
    let noisy = Array3::from_shape_fn((2, 3, 4), |(i, j, k)| {
        (i * 12 + j * 4 + k) as f64 / 4.0 + if (i + j + k) % 3 == 0 { 0.25 } else { -0.125 }
    });
    println!("count_eq = {}", reference.count_eq(&reference.view()).unwrap());
    println!("sq_l2_dist = {:.6}", reference.sq_l2_dist(&noisy).unwrap());
    println!("l2_dist = {:.6}", reference.l2_dist(&noisy).unwrap());
    println!("l1_dist = {:.6}", reference.l1_dist(&noisy).unwrap());
    println!("linf_dist = {:.6}", reference.linf_dist(&noisy).unwrap());
    println!("mean_abs_err = {:.6}", reference.mean_abs_err(&noisy).unwrap());
    println!("mean_sq_err = {:.6}", reference.mean_sq_err(&noisy).unwrap());
    println!("root_mean_sq_err = {:.6}", reference.root_mean_sq_err(&noisy).unwrap());
    println!("psnr = {:.6}", reference.peak_signal_to_noise_ratio(&noisy, 6.0).unwrap());
    // integer images, compared through a slice of each
    let a = array![[1, 2, 3], [4, 5, 6], [7, 8, 9]];
    let b = array![[1, 0, 3], [4, 9, 6], [0, 8, 9]];
    println!("int l1 = {}", a.l1_dist(&b).unwrap());
    println!("int linf on a column = {}", a.column(1).linf_dist(&b.column(1)).unwrap());
    println!("int count_eq = {}", a.count_eq(&b).unwrap());
    println!("shape mismatch: {:?}", a.row(0).l1_dist(&array![1, 2]));
}

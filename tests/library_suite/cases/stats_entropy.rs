// source: rust-ndarray/ndarray-stats src/entropy.rs @7997e201 (MIT OR Apache-2.0)
{
    use ndarray::{Array, ArrayBase, Data, Dimension, Zip};
    use ndarray::{array, Array3};
    // changed: num_traits::Float replaced by ndarray's NdFloat (which extends it); the crate's
    // error types replaced by small local ones; the trait trimmed of its docs and private marker
    use ndarray::NdFloat as Float;

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
    impl From<ShapeMismatch> for MultiInputError {
        fn from(err: ShapeMismatch) -> Self {
            MultiInputError::ShapeMismatch(err)
        }
    }

    pub trait EntropyExt<A, S, D>
    where
        S: Data<Elem = A>,
        D: Dimension,
    {
        fn entropy(&self) -> Result<A, EmptyInput>
        where
            A: Float;

        fn kl_divergence<S2>(&self, q: &ArrayBase<S2, D>) -> Result<A, MultiInputError>
        where
            S2: Data<Elem = A>,
            A: Float;

        fn cross_entropy<S2>(&self, q: &ArrayBase<S2, D>) -> Result<A, MultiInputError>
        where
            S2: Data<Elem = A>,
            A: Float;
    }

    impl<A, S, D> EntropyExt<A, S, D> for ArrayBase<S, D>
    where
        S: Data<Elem = A>,
        D: Dimension,
    {
        fn entropy(&self) -> Result<A, EmptyInput>
        where
            A: Float,
        {
            if self.is_empty() {
                Err(EmptyInput)
            } else {
                let entropy = -self
                    .mapv(|x| {
                        if x == A::zero() {
                            A::zero()
                        } else {
                            x * x.ln()
                        }
                    })
                    .sum();
                Ok(entropy)
            }
        }

        fn kl_divergence<S2>(&self, q: &ArrayBase<S2, D>) -> Result<A, MultiInputError>
        where
            A: Float,
            S2: Data<Elem = A>,
        {
            if self.is_empty() {
                return Err(MultiInputError::EmptyInput);
            }
            if self.shape() != q.shape() {
                return Err(ShapeMismatch {
                    first_shape: self.shape().to_vec(),
                    second_shape: q.shape().to_vec(),
                }
                .into());
            }

            let mut temp = Array::zeros(self.raw_dim());
            Zip::from(&mut temp)
                .and(self)
                .and(q)
                .for_each(|result, &p, &q| {
                    *result = {
                        if p == A::zero() {
                            A::zero()
                        } else {
                            p * (q / p).ln()
                        }
                    }
                });
            let kl_divergence = -temp.sum();
            Ok(kl_divergence)
        }

        fn cross_entropy<S2>(&self, q: &ArrayBase<S2, D>) -> Result<A, MultiInputError>
        where
            S2: Data<Elem = A>,
            A: Float,
        {
            if self.is_empty() {
                return Err(MultiInputError::EmptyInput);
            }
            if self.shape() != q.shape() {
                return Err(ShapeMismatch {
                    first_shape: self.shape().to_vec(),
                    second_shape: q.shape().to_vec(),
                }
                .into());
            }

            let mut temp = Array::zeros(self.raw_dim());
            Zip::from(&mut temp)
                .and(self)
                .and(q)
                .for_each(|result, &p, &q| {
                    *result = {
                        if p == A::zero() {
                            A::zero()
                        } else {
                            p * q.ln()
                        }
                    }
                });
            let cross_entropy = -temp.sum();
            Ok(cross_entropy)
        }
    }

    let p = array![0.1, 0.2, 0.3, 0.4];
    let q = array![0.25, 0.25, 0.25, 0.25];
    println!("entropy(p) = {:.6}", p.entropy().unwrap());
    println!("kl(p||q) = {:.6}", p.kl_divergence(&q).unwrap());
    println!("cross_entropy(p, q) = {:.6}", p.cross_entropy(&q).unwrap());

    // a joint distribution over a 2x2x3 grid, compared with its view and a flat distribution
    let joint = Array3::from_shape_fn((2, 2, 3), |(i, j, k)| (1 + i + 2 * j + 3 * k) as f64 / 66.0);
    let flat = Array3::from_elem((2, 2, 3), 1.0 / 12.0);
    println!("sum = {:.6}", joint.sum());
    println!("entropy(joint) = {:.6}", joint.view().entropy().unwrap());
    println!("kl(joint||flat) = {:.6}", joint.kl_divergence(&flat.view()).unwrap());
    println!("cross_entropy(joint, flat) = {:.6}", joint.cross_entropy(&flat).unwrap());
    let zeros = array![0.0, 0.5, 0.5];
    println!("entropy with a zero = {:.6}", zeros.entropy().unwrap());
    println!("shape mismatch: {:?}", p.kl_divergence(&array![0.5, 0.5]));
    println!("empty: {:?}", ndarray::Array1::<f64>::zeros(0).entropy());
}

// source: argmin-rs/argmin examples/gaussnewton/src/main.rs and crates/argmin/src/solver/gaussnewton/gaussnewton_method.rs @b3002851 (MIT OR Apache-2.0)
{
    use ndarray::{Array1, Array2};
    // changed: argmin's Operator/Jacobian traits reduced to local versions; the Executor and
    // the GaussNewton solver replaced by a loop running the solver's `next_iter` arithmetic
    // (written with ndarray's methods, the matrix inverse by a small local 2x2 `inv`) and its
    // termination test; the slog observer dropped
    type Error = String;
    pub trait Operator {
        type Param;
        type Output;
        fn apply(&self, p: &Self::Param) -> Result<Self::Output, Error>;
    }
    pub trait Jacobian {
        type Param;
        type Jacobian;
        fn jacobian(&self, p: &Self::Param) -> Result<Self::Jacobian, Error>;
    }
    trait Inv {
        fn inv(&self) -> Result<Array2<f64>, Error>;
    }
    impl Inv for Array2<f64> {
        fn inv(&self) -> Result<Array2<f64>, Error> {
            let det = self[[0, 0]] * self[[1, 1]] - self[[0, 1]] * self[[1, 0]];
            if det == 0.0 {
                return Err("singular".to_string());
            }
            Ok(ndarray::array![[self[[1, 1]], -self[[0, 1]]], [-self[[1, 0]], self[[0, 0]]]] / det)
        }
    }

    type Rate = f64;
    type S = f64;
    type Measurement = (S, Rate);

    struct Problem {
        data: Vec<Measurement>,
    }

    impl Operator for Problem {
        type Param = Array1<f64>;
        type Output = Array1<f64>;

        fn apply(&self, p: &Self::Param) -> Result<Self::Output, Error> {
            Ok(self
                .data
                .iter()
                .map(|(s, rate)| rate - (p[0] * s) / (p[1] + s))
                .collect::<Array1<f64>>())
        }
    }

    impl Jacobian for Problem {
        type Param = Array1<f64>;
        type Jacobian = Array2<f64>;

        fn jacobian(&self, p: &Self::Param) -> Result<Self::Jacobian, Error> {
            Ok(Array2::from_shape_fn((self.data.len(), 2), |(si, i)| {
                if i == 0 {
                    -self.data[si].0 / (p[1] + self.data[si].0)
                } else {
                    p[0] * self.data[si].0 / (p[1] + self.data[si].0).powi(2)
                }
            }))
        }
    }

    // Example taken from Wikipedia: https://en.wikipedia.org/wiki/Gauss%E2%80%93Newton_algorithm
    let problem = Problem {
        data: vec![
            (0.038, 0.050),
            (0.194, 0.127),
            (0.425, 0.094),
            (0.626, 0.2122),
            (1.253, 0.2729),
            (2.5, 0.2665),
            (3.74, 0.3317),
        ],
    };
    let gamma = 1.0;
    let tol = f64::EPSILON.sqrt();
    let mut param: Array1<f64> = Array1::from(vec![0.9, 0.2]);
    let mut residuals = problem.apply(&param).unwrap();
    let mut cost = residuals.dot(&residuals).sqrt();
    println!("init: param {:.6}, cost {:.6}", param, cost);
    for iter in 0..10 {
        let jacobian = problem.jacobian(&param).unwrap();
        let p = jacobian
            .clone()
            .t()
            .dot(&jacobian)
            .inv()
            .unwrap()
            .dot(&jacobian.t().dot(&residuals));
        let new_param = &param - &(p * gamma);
        residuals = problem.apply(&new_param).unwrap();
        let prev_cost = cost;
        cost = residuals.dot(&residuals).sqrt();
        param = new_param;
        println!("iter {}: param {:.6}, cost {:.6}", iter, param, cost);
        if (prev_cost - cost).abs() < tol {
            println!("converged");
            break;
        }
    }
}

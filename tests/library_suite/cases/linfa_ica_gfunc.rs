// source: rust-ml/linfa algorithms/linfa-ica/src/fast_ica.rs @7fe5c86e (MIT OR Apache-2.0)
{
    use ndarray::{Array1, Array2, Axis};
    use ndarray::{array, NdFloat};
    // changed: the float type parameter `A: Float` of the four GFunc methods fixed to f64
    // (`type A = f64`), since the bodies call `mean_axis`, which needs num_traits bounds; linfa's
    // Float trait replaced by a small local one (NdFloat + Sum + `cast`), the crate's
    // Result/FastIcaError by local ones; the serde attributes dropped
    type A = f64;
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
    #[derive(Debug)]
    pub enum FastIcaError {
        InvalidValue(String),
    }
    type Result<T> = std::result::Result<T, FastIcaError>;

    #[derive(Debug, Clone, PartialEq, Copy)]
    pub enum GFunc {
        Logcosh(f64),
        Exp,
        Cube,
    }

    impl GFunc {
        // Function to select the correct non-linear function and execute it
        // returning a tuple, consisting of the first and second derivatives of the
        // non-linear function
        fn exec(&self, x: &Array2<A>) -> Result<(Array2<A>, Array1<A>)> {
            match self {
                Self::Cube => Ok(Self::cube(x)),
                Self::Exp => Ok(Self::exp(x)),
                Self::Logcosh(alpha) => Self::logcosh(x, *alpha),
            }
        }

        fn cube(x: &Array2<A>) -> (Array2<A>, Array1<A>) {
            (
                x.mapv(|x| x.powi(3)),
                x.mapv(|x| A::cast(3.) * x.powi(2))
                    .mean_axis(Axis(1))
                    .unwrap(),
            )
        }

        fn exp(x: &Array2<A>) -> (Array2<A>, Array1<A>) {
            let exp = x.mapv(|x| (-x.powi(2) / A::cast(2.)).exp());
            (
                x * &exp,
                (x.mapv(|x| A::cast(1.) - x.powi(2)) * &exp)
                    .mean_axis(Axis(1))
                    .unwrap(),
            )
        }

        //#[allow(clippy::manual_range_contains)]
        fn logcosh(x: &Array2<A>, alpha: f64) -> Result<(Array2<A>, Array1<A>)> {
            //if alpha < 1.0 || alpha > 2.0 {
            if !(1.0..=2.0).contains(&alpha) {
                return Err(FastIcaError::InvalidValue(format!(
                    "alpha must be between 1 and 2 inclusive, got {alpha}"
                )));
            }
            let alpha = A::cast(alpha);

            let gx = x.mapv(|x| (x * alpha).tanh());
            let g_x = gx.mapv(|x| alpha * (A::cast(1.) - x.powi(2)));

            Ok((gx, g_x.mean_axis(Axis(1)).unwrap()))
        }
    }


    // whitened signals: 2 components x 6 samples
    let x = array![[0.5, -1.2, 0.3, 2.0, -0.7, 0.1], [1.5, 0.2, -0.4, -1.1, 0.9, -2.2]];
    for g in [GFunc::Cube, GFunc::Exp, GFunc::Logcosh(1.0), GFunc::Logcosh(1.5)] {
        let (gx, g_x) = g.exec(&x).unwrap();
        println!("{:?}:\n  g(x) =\n{:.4}\n  mean g'(x) = {:.4}", g, gx, g_x);
    }
    let (_, d) = GFunc::Logcosh(2.0).exec(&x.t().to_owned()).unwrap();
    println!("logcosh(2) derivative means of the transpose = {:.4}", d);
    match GFunc::Logcosh(3.0).exec(&x) {
        Err(FastIcaError::InvalidValue(msg)) => println!("error: {}", msg),
        Ok(_) => println!("unexpected"),
    }
}

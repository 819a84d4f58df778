// source: argmin-rs/argmin crates/argmin-math/src/ndarray_m/{dot.rs,l2norm.rs,minmax.rs,signum.rs} and crates/argmin-math/src/lib.rs @b3002851 (MIT OR Apache-2.0)
{
    use ndarray::{Array1, Array2};
    use ndarray::array;
    // changed: only the real-float instantiations of the macros kept (the complex and integer
    // ones need num_complex / num_integer)

    pub trait ArgminDot<T, U> {
        fn dot(&self, other: &T) -> U;
    }

    pub trait ArgminL2Norm<U> {
        fn l2_norm(&self) -> U;
    }

    pub trait ArgminMinMax {
        fn min(x: &Self, y: &Self) -> Self;
        fn max(x: &Self, y: &Self) -> Self;
    }

    pub trait ArgminSignum {
        fn signum(self) -> Self;
    }

    macro_rules! make_dot_ndarray {
        ($t:ty) => {
            impl ArgminDot<Array1<$t>, $t> for Array1<$t> {
                #[inline]
                fn dot(&self, other: &Array1<$t>) -> $t {
                    ndarray::Array1::dot(self, other)
                }
            }

            impl ArgminDot<$t, Array1<$t>> for Array1<$t> {
                #[inline]
                fn dot(&self, other: &$t) -> Array1<$t> {
                    self.iter().cloned().map(|s| s * *other).collect()
                }
            }

            impl ArgminDot<Array1<$t>, Array1<$t>> for $t {
                #[inline]
                fn dot(&self, other: &Array1<$t>) -> Array1<$t> {
                    other.iter().cloned().map(|o| o * *self).collect()
                }
            }

            impl ArgminDot<Array1<$t>, Array2<$t>> for Array1<$t> {
                #[inline]
                fn dot(&self, other: &Array1<$t>) -> Array2<$t> {
                    Array2::from_shape_fn((self.len(), other.len()), |(i, j)| self[i] * other[j])
                }
            }

            impl ArgminDot<Array1<$t>, Array1<$t>> for Array2<$t> {
                #[inline]
                fn dot(&self, other: &Array1<$t>) -> Array1<$t> {
                    ndarray::Array2::dot(self, other)
                }
            }

            impl ArgminDot<Array2<$t>, Array2<$t>> for Array2<$t> {
                #[inline]
                fn dot(&self, other: &Array2<$t>) -> Array2<$t> {
                    ndarray::Array2::dot(self, other)
                }
            }

            impl ArgminDot<$t, Array2<$t>> for Array2<$t> {
                #[inline]
                fn dot(&self, other: &$t) -> Array2<$t> {
                    Array2::from_shape_fn((self.nrows(), self.ncols()), |(i, j)| *other * self[(i, j)])
                }
            }

            impl ArgminDot<Array2<$t>, Array2<$t>> for $t {
                #[inline]
                fn dot(&self, other: &Array2<$t>) -> Array2<$t> {
                    Array2::from_shape_fn((other.nrows(), other.ncols()), |(i, j)| {
                        *self * other[(i, j)]
                    })
                }
            }

        };
    }

    macro_rules! make_norm_float {
        ($t:ty) => {
            impl ArgminL2Norm<$t> for Array1<$t> {
                #[inline]
                fn l2_norm(&self) -> $t {
                    self.iter().map(|a| a.powi(2)).sum::<$t>().sqrt()
                }
            }
        };
    }

    macro_rules! make_minmax {
        ($t:ty) => {
            impl ArgminMinMax for Array1<$t> {
                #[inline]
                fn min(x: &Self, y: &Self) -> Array1<$t> {
                    assert_eq!(x.shape(), y.shape());
                    x.iter()
                        .zip(y)
                        .map(|(&a, &b)| if a < b { a } else { b })
                        .collect()
                }

                #[inline]
                fn max(x: &Self, y: &Self) -> Array1<$t> {
                    assert_eq!(x.shape(), y.shape());
                    x.iter()
                        .zip(y)
                        .map(|(&a, &b)| if a > b { a } else { b })
                        .collect()
                }
            }

            impl ArgminMinMax for Array2<$t> {
                #[inline]
                fn min(x: &Self, y: &Self) -> Array2<$t> {
                    assert_eq!(x.shape(), y.shape());
                    let m = x.shape()[0];
                    let n = x.shape()[1];
                    let mut out = x.clone();
                    for i in 0..m {
                        for j in 0..n {
                            let a = x[(i, j)];
                            let b = y[(i, j)];
                            out[(i, j)] = if a < b { a } else { b };
                        }
                    }
                    out
                }

                #[inline]
                fn max(x: &Self, y: &Self) -> Array2<$t> {
                    assert_eq!(x.shape(), y.shape());
                    let m = x.shape()[0];
                    let n = x.shape()[1];
                    let mut out = x.clone();
                    for i in 0..m {
                        for j in 0..n {
                            let a = x[(i, j)];
                            let b = y[(i, j)];
                            out[(i, j)] = if a > b { a } else { b };
                        }
                    }
                    out
                }
            }
        };
    }

    macro_rules! make_signum {
        ($t:ty) => {
            impl ArgminSignum for Array1<$t> {
                #[inline]
                fn signum(mut self) -> Array1<$t> {
                    for a in &mut self {
                        *a = a.signum();
                    }
                    self
                }
            }

            impl ArgminSignum for Array2<$t> {
                #[inline]
                fn signum(mut self) -> Array2<$t> {
                    let m = self.shape()[0];
                    let n = self.shape()[1];
                    for i in 0..m {
                        for j in 0..n {
                            self[(i, j)] = self[(i, j)].signum();
                        }
                    }
                    self
                }
            }
        };
    }

    make_dot_ndarray!(f32);
    make_dot_ndarray!(f64);
    make_norm_float!(f32);
    make_norm_float!(f64);
    make_minmax!(f32);
    make_minmax!(f64);
    make_signum!(f32);
    make_signum!(f64);

    // a few steepest-descent steps on f(x) = 1/2 x^T A x - b^T x, written with the traits
    let a: Array2<f64> = array![[4.0, 1.0, 0.0], [1.0, 3.0, -1.0], [0.0, -1.0, 2.0]];
    let b: Array1<f64> = array![1.0, 2.0, 3.0];
    let mut x: Array1<f64> = Array1::zeros(3);
    for it in 0..6 {
        let ax: Array1<f64> = a.dot(&x);
        let grad = &ax - &b;
        let ag: Array1<f64> = ArgminDot::dot(&a, &grad);
        let step = ArgminDot::<Array1<f64>, f64>::dot(&grad, &grad) / ArgminDot::<Array1<f64>, f64>::dot(&grad, &ag);
        let delta: Array1<f64> = ArgminDot::dot(&grad, &step);
        x = &x - &delta;
        println!("iteration {}: |grad| = {:.6}, x = {:.6}", it, grad.l2_norm(), x);
    }
    let outer: Array2<f64> = ArgminDot::dot(&b, &x);
    println!("outer(b, x) =\n{:.4}", outer);
    let scaled: Array2<f64> = ArgminDot::dot(&0.5, &a);
    println!("0.5 * A =\n{:.4}", scaled);
    let lo: Array1<f32> = array![1.0, -2.0, 3.0];
    let hi: Array1<f32> = array![0.5, 4.0, 3.5];
    println!("min = {:?}, max = {:?}", ArgminMinMax::min(&lo, &hi).to_vec(), ArgminMinMax::max(&lo, &hi).to_vec());
    println!("signum = {}", array![[-2.0, 0.0], [3.0, -0.5]].signum());
    println!("f32 norm = {:.4}", lo.l2_norm());
}

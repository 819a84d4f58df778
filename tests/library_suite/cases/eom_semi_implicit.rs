// source: termoshtt/eom src/traits.rs, src/semi_implicit.rs, src/ode/lorenz63.rs @a8e3c613 (MIT)
{
    use ndarray::*;
    // changed: ndarray_linalg's Scalar trait replaced by a small local one (f64 only, with the
    // `real`, `mul_real` and `exp` the schemes call); the traits' docs dropped and
    // `Time: Scalar + Float` reduced to `Time: Scalar`
    pub trait Scalar: LinalgScalar + std::fmt::Debug + std::ops::MulAssign + std::ops::AddAssign {
        type Real: Scalar + Copy + std::ops::Mul<Output = Self::Real> + std::ops::Div<Output = Self::Real>;
        fn real<T: Into<f64>>(re: T) -> Self::Real;
        fn mul_real(self, re: Self::Real) -> Self;
        fn exp(self) -> Self;
    }
    impl Scalar for f64 {
        type Real = f64;
        fn real<T: Into<f64>>(re: T) -> f64 {
            re.into()
        }
        fn mul_real(self, re: f64) -> f64 {
            self * re
        }
        fn exp(self) -> f64 {
            f64::exp(self)
        }
    }

    pub trait ModelSpec: Clone {
        type Scalar: Scalar;
        type Dim: Dimension;
        fn model_size(&self) -> <Self::Dim as Dimension>::Pattern;
    }

    pub trait TimeStep {
        type Time: Scalar;
        fn get_dt(&self) -> Self::Time;
        fn set_dt(&mut self, dt: Self::Time);
    }

    pub trait SemiImplicit: ModelSpec {
        fn nlin<'a, S>(
            &mut self,
            x: &'a mut ArrayBase<S, Self::Dim>,
        ) -> &'a mut ArrayBase<S, Self::Dim>
        where
            S: DataMut<Elem = Self::Scalar>;
        fn diag(&self) -> Array<Self::Scalar, Self::Dim>;
    }

    pub trait TimeEvolution: ModelSpec + TimeStep {
        fn iterate<'a, S>(
            &mut self,
            x: &'a mut ArrayBase<S, Self::Dim>,
        ) -> &'a mut ArrayBase<S, Self::Dim>
        where
            S: DataMut<Elem = Self::Scalar>;

        fn iterate_n<'a, S>(
            &mut self,
            a: &'a mut ArrayBase<S, Self::Dim>,
            n: usize,
        ) -> &'a mut ArrayBase<S, Self::Dim>
        where
            S: DataMut<Elem = Self::Scalar>,
        {
            for _ in 0..n {
                self.iterate(a);
            }
            a
        }
    }

    pub trait Scheme: TimeEvolution {
        type Core: ModelSpec<Scalar = Self::Scalar, Dim = Self::Dim>;
        fn new(f: Self::Core, dt: Self::Time) -> Self;
        fn core(&self) -> &Self::Core;
        fn core_mut(&mut self) -> &mut Self::Core;
    }


    #[derive(Debug, Clone)]
    pub struct Diagonal<F: SemiImplicit> {
        exp_diag: Array<F::Scalar, F::Dim>,
        diag: Array<F::Scalar, F::Dim>,
        dt: <F::Scalar as Scalar>::Real,
    }

    impl<F: SemiImplicit> TimeStep for Diagonal<F> {
        type Time = <F::Scalar as Scalar>::Real;

        fn get_dt(&self) -> Self::Time {
            self.dt
        }
        fn set_dt(&mut self, dt: Self::Time) {
            Zip::from(&mut self.exp_diag)
                .and(&self.diag)
                .for_each(|a, &b| {
                    *a = b.mul_real(dt).exp();
                });
        }
    }

    impl<F: SemiImplicit> ModelSpec for Diagonal<F> {
        type Scalar = F::Scalar;
        type Dim = F::Dim;

        fn model_size(&self) -> <Self::Dim as Dimension>::Pattern {
            self.exp_diag.dim()
        }
    }

    impl<F: SemiImplicit> TimeEvolution for Diagonal<F> {
        fn iterate<'a, S>(
            &mut self,
            x: &'a mut ArrayBase<S, Self::Dim>,
        ) -> &'a mut ArrayBase<S, Self::Dim>
        where
            S: DataMut<Elem = Self::Scalar>,
        {
            for (val, d) in x.iter_mut().zip(self.exp_diag.iter()) {
                *val *= *d;
            }
            x
        }
    }

    impl<F: SemiImplicit> Diagonal<F> {
        fn new(f: F, dt: <Self as TimeStep>::Time) -> Self {
            let diag = f.diag();
            let mut exp_diag = diag.to_owned();
            for v in exp_diag.iter_mut() {
                *v = v.mul_real(dt).exp();
            }
            Diagonal { exp_diag, diag, dt }
        }
    }

    #[derive(Debug, Clone)]
    pub struct DiagRK4<F: SemiImplicit> {
        nlin: F,
        lin: Diagonal<F>,
        dt: <Diagonal<F> as TimeStep>::Time,
        x: Array<F::Scalar, F::Dim>,
        lx: Array<F::Scalar, F::Dim>,
        k1: Array<F::Scalar, F::Dim>,
        k2: Array<F::Scalar, F::Dim>,
        k3: Array<F::Scalar, F::Dim>,
    }

    impl<F: SemiImplicit> Scheme for DiagRK4<F> {
        type Core = F;
        fn new(nlin: F, dt: Self::Time) -> Self {
            let lin = Diagonal::new(nlin.clone(), dt / F::Scalar::real(2.0));
            let x = Array::zeros(lin.model_size());
            let lx = Array::zeros(lin.model_size());
            let k1 = Array::zeros(lin.model_size());
            let k2 = Array::zeros(lin.model_size());
            let k3 = Array::zeros(lin.model_size());
            DiagRK4 {
                nlin,
                lin,
                dt,
                x,
                lx,
                k1,
                k2,
                k3,
            }
        }
        fn core(&self) -> &Self::Core {
            &self.nlin
        }
        fn core_mut(&mut self) -> &mut Self::Core {
            &mut self.nlin
        }
    }

    impl<F: SemiImplicit> TimeStep for DiagRK4<F> {
        type Time = <Diagonal<F> as TimeStep>::Time;

        fn get_dt(&self) -> Self::Time {
            self.dt
        }

        fn set_dt(&mut self, dt: Self::Time) {
            self.lin.set_dt(dt / F::Scalar::real(2.0));
        }
    }

    impl<F: SemiImplicit> ModelSpec for DiagRK4<F> {
        type Scalar = F::Scalar;
        type Dim = F::Dim;

        fn model_size(&self) -> <Self::Dim as Dimension>::Pattern {
            self.nlin.model_size() // TODO check
        }
    }

    impl<F: SemiImplicit> TimeEvolution for DiagRK4<F> {
        fn iterate<'a, S>(
            &mut self,
            x: &'a mut ArrayBase<S, Self::Dim>,
        ) -> &'a mut ArrayBase<S, Self::Dim>
        where
            S: DataMut<Elem = Self::Scalar>,
        {
            // constants
            let dt = self.dt;
            let dt_2 = self.dt / F::Scalar::real(2.0);
            let dt_3 = self.dt / F::Scalar::real(3.0);
            let dt_6 = self.dt / F::Scalar::real(6.0);
            // operators
            let l = &mut self.lin;
            let f = &mut self.nlin;
            // calc
            self.x.zip_mut_with(x, |buf, x| *buf = *x);
            self.lx.zip_mut_with(x, |buf, lx| *buf = *lx);
            l.iterate(&mut self.lx);
            let k1 = f.nlin(x);
            self.k1.zip_mut_with(k1, |buf, k1| *buf = *k1);
            Zip::from(&mut *k1).and(&self.x).for_each(|k1, &x_| {
                *k1 = x_ + k1.mul_real(dt_2);
            });
            let k2 = f.nlin(l.iterate(k1));
            self.k2.zip_mut_with(k2, |buf, k| *buf = *k);
            Zip::from(&mut *k2).and(&self.lx).for_each(|k2, &lx| {
                *k2 = lx + k2.mul_real(dt_2);
            });
            let k3 = f.nlin(k2);
            self.k3.zip_mut_with(k3, |buf, k| *buf = *k);
            Zip::from(&mut *k3).and(&self.lx).for_each(|k3, &lx| {
                *k3 = lx + k3.mul_real(dt);
            });
            let k4 = f.nlin(l.iterate(k3));
            Zip::from(&mut self.x)
                .and(&self.k1)
                .for_each(|x_, k1_| *x_ += k1_.mul_real(dt_6));
            l.iterate(&mut self.x);
            Zip::from(&mut self.x)
                .and(&self.k2)
                .and(&self.k3)
                .for_each(|x_, &k2_, &k3_| *x_ += (k2_ + k3_).mul_real(dt_3));
            l.iterate(&mut self.x);
            Zip::from(&mut *k4).and(&self.x).for_each(|k4, &x_| {
                *k4 = x_ + k4.mul_real(dt_6);
            });
            k4
        }
    }

    #[derive(Clone, Copy, Debug)]
    pub struct Lorenz63 {
        pub p: f64,
        pub r: f64,
        pub b: f64,
    }

    impl Default for Lorenz63 {
        fn default() -> Self {
            Lorenz63 {
                p: 10.0,
                r: 28.0,
                b: 8.0 / 3.0,
            }
        }
    }

    impl Lorenz63 {
        pub fn new(p: f64, r: f64, b: f64) -> Self {
            Lorenz63 { p, r, b }
        }
    }

    impl ModelSpec for Lorenz63 {
        type Scalar = f64;
        type Dim = Ix1;

        fn model_size(&self) -> usize {
            3
        }
    }

    impl SemiImplicit for Lorenz63 {
        fn nlin<'a, S>(&mut self, v: &'a mut ArrayBase<S, Ix1>) -> &'a mut ArrayBase<S, Ix1>
        where
            S: DataMut<Elem = f64>,
        {
            let x = v[0];
            let y = v[1];
            let z = v[2];
            v[0] = self.p * y;
            v[1] = x * (self.r - z);
            v[2] = x * y;
            v
        }

        fn diag(&self) -> Array<f64, Ix1> {
            Array::from(vec![-self.p, -1.0, -self.b])
        }
    }

    // Lorenz63 split into its stiff linear part (diag) and the nonlinear rest (nlin)
    let l63 = Lorenz63::default();
    println!("diag = {:.6}", l63.diag());
    let mut lin = Diagonal::new(l63, 0.01);
    let mut v = arr1(&[1.0, 1.0, 1.0]);
    lin.iterate(&mut v);
    println!("exact linear step = {:.6}", v);
    let mut teo = DiagRK4::new(Lorenz63::default(), 0.01);
    let mut x = arr1(&[1.0, 0.0, 0.0]);
    teo.iterate_n(&mut x, 100);
    println!("DiagRK4 after 100 steps = {:.6}", x);
    teo.set_dt(0.005);
    let mut y = arr1(&[1.0, 0.0, 0.0]);
    teo.iterate_n(&mut y, 200);
    println!("with dt set to 0.005, after 200 steps = {:.6}", y);
    // the state can be a column of a larger array
    let mut states = Array2::<f64>::zeros((3, 2));
    states.column_mut(0).assign(&arr1(&[0.0, 1.0, 20.0]));
    states.column_mut(1).assign(&arr1(&[-1.0, 2.0, 15.0]));
    for mut col in states.columns_mut() {
        teo.iterate_n(&mut col, 50);
    }
    println!("states =\n{:.6}", states);
}

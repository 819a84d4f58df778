// source: termoshtt/eom src/adaptor.rs, src/traits.rs, src/explicit.rs, src/ode/lorenz63.rs, src/ode/lorenz96.rs @a8e3c613 (MIT)
{
    use ndarray::*;
    // changed: ndarray_linalg's Scalar trait replaced by a small local one (f64 only, with the
    // `real` and `mul_real` the schemes call) and its Norm by a small local `norm`; num_traits'
    // FromPrimitive by a small local trait; the Lapack bound dropped; the traits' docs dropped
    // and `Time: Scalar + Float` reduced to `Time: Scalar`
    pub trait FromPrimitive: Sized {
        fn from_usize(n: usize) -> Option<Self>;
    }
    impl FromPrimitive for f64 {
        fn from_usize(n: usize) -> Option<Self> {
            Some(n as f64)
        }
    }
    pub trait Norm<R> {
        fn norm(&self) -> R;
    }
    impl<A: Scalar, S: Data<Elem = A>, D: Dimension> Norm<A::Real> for ArrayBase<S, D> {
        fn norm(&self) -> A::Real {
            A::l2_norm(self.iter().cloned())
        }
    }
    pub trait Scalar: LinalgScalar + std::fmt::Debug + FromPrimitive {
        type Real: Scalar + Copy + std::ops::Mul<Output = Self::Real> + std::ops::Div<Output = Self::Real> + FromPrimitive;
        fn real<T: Into<f64>>(re: T) -> Self::Real;
        fn mul_real(self, re: Self::Real) -> Self;
        fn l2_norm<I: Iterator<Item = Self>>(it: I) -> Self::Real;
    }
    impl Scalar for f64 {
        type Real = f64;
        fn real<T: Into<f64>>(re: T) -> f64 {
            re.into()
        }
        fn mul_real(self, re: f64) -> f64 {
            self * re
        }
        fn l2_norm<I: Iterator<Item = f64>>(it: I) -> f64 {
            it.map(|x| x * x).sum::<f64>().sqrt()
        }
    }

    pub trait ModelSpec: Clone {
        type Scalar: Scalar;
        type Dim: Dimension;
        /// Number of scalars to describe the system state.
        fn model_size(&self) -> <Self::Dim as Dimension>::Pattern;
    }

    /// Interface for set/get time step for integration
    pub trait TimeStep {
        type Time: Scalar;
        fn get_dt(&self) -> Self::Time;
        fn set_dt(&mut self, dt: Self::Time);
    }

    pub trait Explicit: ModelSpec {
        fn rhs<'a, S>(&mut self, x: &'a mut ArrayBase<S, Self::Dim>) -> &'a mut ArrayBase<S, Self::Dim>
        where
            S: DataMut<Elem = Self::Scalar>;
    }

    /// Time-evolution operator
    pub trait TimeEvolution: ModelSpec + TimeStep {
        /// calculate next step
        fn iterate<'a, S>(
            &mut self,
            x: &'a mut ArrayBase<S, Self::Dim>,
        ) -> &'a mut ArrayBase<S, Self::Dim>
        where
            S: DataMut<Elem = Self::Scalar>;

        /// calculate n-step
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

    /// Time evolution schemes
    pub trait Scheme: TimeEvolution {
        type Core: ModelSpec<Scalar = Self::Scalar, Dim = Self::Dim>;
        /// Initialize with a core implementation
        fn new(f: Self::Core, dt: Self::Time) -> Self;
        /// Get immutable core
        fn core(&self) -> &Self::Core;
        /// Get mutable core
        fn core_mut(&mut self) -> &mut Self::Core;
    }

    #[derive(Debug, Clone)]
    pub struct Euler<F: Explicit> {
        f: F,
        dt: <F::Scalar as Scalar>::Real,
        x: Array<F::Scalar, F::Dim>,
    }

    impl<A: Scalar, F: Explicit<Scalar = A>> TimeStep for Euler<F> {
        type Time = A::Real;

        fn get_dt(&self) -> Self::Time {
            self.dt
        }

        fn set_dt(&mut self, dt: Self::Time) {
            self.dt = dt;
        }
    }

    impl<F: Explicit> Scheme for Euler<F> {
        type Core = F;
        fn new(f: F, dt: Self::Time) -> Self {
            let x = Array::zeros(f.model_size());
            Self { f, dt, x }
        }
        fn core(&self) -> &Self::Core {
            &self.f
        }
        fn core_mut(&mut self) -> &mut Self::Core {
            &mut self.f
        }
    }

    impl<F: Explicit> ModelSpec for Euler<F> {
        type Scalar = F::Scalar;
        type Dim = F::Dim;
        fn model_size(&self) -> <Self::Dim as Dimension>::Pattern {
            self.f.model_size()
        }
    }

    impl<F: Explicit> TimeEvolution for Euler<F> {
        fn iterate<'a, S>(&mut self, x: &'a mut ArrayBase<S, F::Dim>) -> &'a mut ArrayBase<S, Self::Dim>
        where
            S: DataMut<Elem = Self::Scalar>,
        {
            self.x.zip_mut_with(x, |buf, x| *buf = *x);
            let fx = self.f.rhs(x);
            Zip::from(&mut *fx).and(&self.x).for_each(|vfx, vx| {
                *vfx = *vx + vfx.mul_real(self.dt);
            });
            fx
        }
    }

    #[derive(Debug, Clone)]
    pub struct Heun<F: Explicit> {
        f: F,
        dt: <F::Scalar as Scalar>::Real,
        x: Array<F::Scalar, F::Dim>,
        k1: Array<F::Scalar, F::Dim>,
    }

    impl<A: Scalar, F: Explicit<Scalar = A>> TimeStep for Heun<F> {
        type Time = A::Real;

        fn get_dt(&self) -> Self::Time {
            self.dt
        }

        fn set_dt(&mut self, dt: Self::Time) {
            self.dt = dt;
        }
    }

    impl<F: Explicit> Scheme for Heun<F> {
        type Core = F;
        fn new(f: F, dt: Self::Time) -> Self {
            let x = Array::zeros(f.model_size());
            let k1 = Array::zeros(f.model_size());
            Self { f, dt, x, k1 }
        }
        fn core(&self) -> &Self::Core {
            &self.f
        }
        fn core_mut(&mut self) -> &mut Self::Core {
            &mut self.f
        }
    }

    impl<F: Explicit> ModelSpec for Heun<F> {
        type Scalar = F::Scalar;
        type Dim = F::Dim;
        fn model_size(&self) -> <Self::Dim as Dimension>::Pattern {
            self.f.model_size()
        }
    }

    impl<F: Explicit> TimeEvolution for Heun<F> {
        fn iterate<'a, S>(&mut self, x: &'a mut ArrayBase<S, F::Dim>) -> &'a mut ArrayBase<S, Self::Dim>
        where
            S: DataMut<Elem = Self::Scalar>,
        {
            let dt = self.dt;
            let dt_2 = self.dt * F::Scalar::real(0.5);
            // calc
            self.x.zip_mut_with(x, |buf, x| *buf = *x);
            let k1 = self.f.rhs(x);
            self.k1.zip_mut_with(k1, |buf, k1| *buf = *k1);
            Zip::from(&mut *k1).and(&self.x).for_each(|k1, &x_| {
                *k1 = k1.mul_real(dt) + x_;
            });
            let k2 = self.f.rhs(k1);
            Zip::from(&mut *k2)
                .and(&self.x)
                .and(&self.k1)
                .for_each(|k2, &x_, &k1_| {
                    *k2 = x_ + (k1_ + *k2).mul_real(dt_2);
                });
            k2
        }
    }

    #[derive(Debug, Clone)]
    pub struct RK4<F: Explicit> {
        f: F,
        dt: <F::Scalar as Scalar>::Real,
        x: Array<F::Scalar, F::Dim>,
        k1: Array<F::Scalar, F::Dim>,
        k2: Array<F::Scalar, F::Dim>,
        k3: Array<F::Scalar, F::Dim>,
    }

    impl<A: Scalar, F: Explicit<Scalar = A>> TimeStep for RK4<F> {
        type Time = A::Real;

        fn get_dt(&self) -> Self::Time {
            self.dt
        }

        fn set_dt(&mut self, dt: Self::Time) {
            self.dt = dt;
        }
    }

    impl<F: Explicit> Scheme for RK4<F> {
        type Core = F;
        fn new(f: F, dt: Self::Time) -> Self {
            let x = Array::zeros(f.model_size());
            let k1 = Array::zeros(f.model_size());
            let k2 = Array::zeros(f.model_size());
            let k3 = Array::zeros(f.model_size());
            Self {
                f,
                dt,
                x,
                k1,
                k2,
                k3,
            }
        }
        fn core(&self) -> &Self::Core {
            &self.f
        }
        fn core_mut(&mut self) -> &mut Self::Core {
            &mut self.f
        }
    }

    impl<F: Explicit> ModelSpec for RK4<F> {
        type Scalar = F::Scalar;
        type Dim = F::Dim;
        fn model_size(&self) -> <Self::Dim as Dimension>::Pattern {
            self.f.model_size()
        }
    }

    impl<F: Explicit> TimeEvolution for RK4<F> {
        fn iterate<'a, S>(&mut self, x: &'a mut ArrayBase<S, F::Dim>) -> &'a mut ArrayBase<S, Self::Dim>
        where
            S: DataMut<Elem = Self::Scalar>,
        {
            let two = F::Scalar::real(2.0);
            let dt = self.dt;
            let dt_2 = self.dt * F::Scalar::real(0.5);
            let dt_6 = self.dt / F::Scalar::real(6.0);
            self.x.zip_mut_with(x, |buf, x| *buf = *x);
            // k1
            let k1 = self.f.rhs(x);
            self.k1.zip_mut_with(k1, |buf, k1| *buf = *k1);
            Zip::from(&mut *k1).and(&self.x).for_each(|k1, &x| {
                *k1 = k1.mul_real(dt_2) + x;
            });
            // k2
            let k2 = self.f.rhs(k1);
            self.k2.zip_mut_with(k2, |buf, k| *buf = *k);
            Zip::from(&mut *k2).and(&self.x).for_each(|k2, &x| {
                *k2 = x + k2.mul_real(dt_2);
            });
            // k3
            let k3 = self.f.rhs(k2);
            self.k3.zip_mut_with(k3, |buf, k| *buf = *k);
            Zip::from(&mut *k3).and(&self.x).for_each(|k3, &x| {
                *k3 = x + k3.mul_real(dt);
            });
            let k4 = self.f.rhs(k3);
            Zip::from(&mut *k4)
                .and(&self.x)
                .and(&self.k1)
                .and(&self.k2)
                .and(&self.k3)
                .for_each(|k4, &x, &k1, &k2, &k3| {
                    *k4 = x + (k1 + (k2 + k3).mul_real(two) + *k4).mul_real(dt_6);
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

    impl Explicit for Lorenz63 {
        fn rhs<'a, S>(&mut self, v: &'a mut ArrayBase<S, Ix1>) -> &'a mut ArrayBase<S, Ix1>
        where
            S: DataMut<Elem = f64>,
        {
            let x = v[0];
            let y = v[1];
            let z = v[2];
            v[0] = self.p * (y - x);
            v[1] = x * (self.r - z) - y;
            v[2] = x * y - self.b * z;
            v
        }
    }


    #[derive(Clone, Copy, Debug)]
    pub struct Lorenz96 {
        /// $F$ in the equation, default is $8.0$
        pub f: f64,
        /// Number of elements, default is $40$
        pub n: usize,
    }

    impl Default for Lorenz96 {
        fn default() -> Self {
            Lorenz96 { f: 8.0, n: 40 }
        }
    }

    impl ModelSpec for Lorenz96 {
        type Scalar = f64;
        type Dim = Ix1;

        fn model_size(&self) -> usize {
            self.n
        }
    }

    impl Explicit for Lorenz96 {
        fn rhs<'a, S>(&mut self, v: &'a mut ArrayBase<S, Ix1>) -> &'a mut ArrayBase<S, Ix1>
        where
            S: DataMut<Elem = f64>,
        {
            let n = v.len();
            let v0 = v.to_owned();
            for i in 0..n {
                let p1 = (i + 1) % n;
                let m1 = (i + n - 1) % n;
                let m2 = (i + n - 2) % n;
                v[i] = (v0[p1] - v0[m2]) * v0[m1] - v0[i] + self.f;
            }
            v
        }
    }

    pub fn accuracy<A, D, Sc>(
        mut teo: Sc,
        init: Array<A, D>,
        dt_base: A::Real,
        step_base: usize,
        num_scale: u32,
    ) -> Vec<(Sc::Time, A::Real)>
    where
        A: Scalar,
        D: Dimension,
        Sc: Scheme<Scalar = A, Dim = D, Time = A::Real>,
    {
        let data: Vec<_> = (0..num_scale)
            .map(|n| {
                let rate = 2_usize.pow(n);
                let dt = dt_base / A::real(rate as f64);
                let t = step_base * rate;
                teo.set_dt(dt);
                (dt, iterate(&mut teo, init.clone(), t))
            })
            .collect();
        data.windows(2)
            .map(|w| {
                let dt = w[0].0;
                let dev = (&w[1].1 - &w[0].1).norm();
                (dt, dev)
            })
            .collect()
    }

    pub fn iterate<S, TEO>(
        teo: &mut TEO,
        mut x0: ArrayBase<S, TEO::Dim>,
        step: usize,
    ) -> ArrayBase<S, TEO::Dim>
    where
        S: DataMut<Elem = TEO::Scalar> + Data + RawDataClone,
        TEO: TimeEvolution,
    {
        teo.iterate_n(&mut x0, step);
        x0
    }

    pub struct TimeSeries<'a, S, TEO>
    where
        S: DataMut<Elem = TEO::Scalar> + Data + RawDataClone,
        TEO: TimeEvolution + 'a,
    {
        state: ArrayBase<S, TEO::Dim>,
        teo: &'a mut TEO,
    }

    pub fn time_series<S, TEO>(x0: ArrayBase<S, TEO::Dim>, teo: &mut TEO) -> TimeSeries<'_, S, TEO>
    where
        S: DataMut<Elem = TEO::Scalar> + Data + RawDataClone,
        TEO: TimeEvolution,
    {
        TimeSeries { state: x0, teo }
    }

    impl<'a, S, TEO> TimeSeries<'a, S, TEO>
    where
        S: DataMut<Elem = TEO::Scalar> + Data + RawDataClone,
        TEO: TimeEvolution,
    {
        pub fn iterate(&mut self) {
            self.teo.iterate(&mut self.state);
        }
    }

    impl<'a, S, TEO> Iterator for TimeSeries<'a, S, TEO>
    where
        S: DataMut<Elem = TEO::Scalar> + Data + RawDataClone,
        TEO: TimeEvolution,
    {
        type Item = ArrayBase<S, TEO::Dim>;
        fn next(&mut self) -> Option<Self::Item> {
            self.iterate();
            Some(self.state.clone())
        }
    }

    #[derive(Debug, Clone)]
    pub struct NStep<TEO: TimeEvolution> {
        teo: TEO,
        n: usize,
    }

    pub fn nstep<TEO: TimeEvolution>(teo: TEO, n: usize) -> NStep<TEO> {
        NStep { teo, n }
    }

    impl<TEO: TimeEvolution> ModelSpec for NStep<TEO> {
        type Scalar = TEO::Scalar;
        type Dim = TEO::Dim;

        fn model_size(&self) -> <Self::Dim as Dimension>::Pattern {
            self.teo.model_size()
        }
    }

    impl<TEO: TimeEvolution> TimeStep for NStep<TEO> {
        type Time = TEO::Time;

        fn get_dt(&self) -> Self::Time {
            self.teo.get_dt() * TEO::Time::from_usize(self.n).unwrap()
        }

        fn set_dt(&mut self, dt: Self::Time) {
            self.teo.set_dt(dt / TEO::Time::from_usize(self.n).unwrap());
        }
    }

    impl<TEO: TimeEvolution> TimeEvolution for NStep<TEO> {
        fn iterate<'a, S>(
            &mut self,
            x: &'a mut ArrayBase<S, TEO::Dim>,
        ) -> &'a mut ArrayBase<S, TEO::Dim>
        where
            S: DataMut<Elem = TEO::Scalar>,
        {
            for _ in 0..self.n {
                self.teo.iterate(x);
            }
            x
        }
    }

    // a time series of the Lorenz63 system, every 10th step through NStep
    let teo = nstep(RK4::new(Lorenz63::default(), 0.01), 10);
    println!("NStep dt = {:.3}", teo.get_dt());
    let mut teo = teo;
    let series: Vec<Array1<f64>> = time_series(arr1(&[1.0, 0.0, 0.0]), &mut teo).take(5).collect();
    for (i, x) in series.iter().enumerate() {
        println!("t = {:.1}: {:.6}", (i + 1) as f64 * 0.1, x);
    }
    let end = iterate(&mut RK4::new(Lorenz96 { f: 8.0, n: 6 }, 0.01), Array1::from_shape_fn(6, |i| 8.0 + if i == 2 { 0.01 } else { 0.0 }), 100);
    println!("Lorenz96 after 100 steps = {:.6}", end);
    // convergence of RK4 vs Euler: differences between successive halvings of dt
    for (name, acc) in [
        ("RK4", accuracy(RK4::new(Lorenz63::default(), 0.01), arr1(&[1.0, 0.0, 0.0]), 0.01, 20, 4)),
        ("Euler", accuracy(Euler::new(Lorenz63::default(), 0.01), arr1(&[1.0, 0.0, 0.0]), 0.01, 20, 4)),
    ] {
        println!("{}: {:?}", name, acc.iter().map(|(dt, dev)| format!("dt {:.5}: {:.1e}", dt, dev)).collect::<Vec<_>>());
    }
}

// source: patrickbuchner/ndarray-ode src/ode/traits.rs, src/ode/one_step.rs, src/ode/solver/euler/explicit.rs, examples/keppler/src/main.rs @b5358418 (MIT OR Apache-2.0)
{
    use ndarray::*;
    // changed: the tqdm progress bar replaced by the plain loop; only the explicit parts kept
    // (the implicit solvers need the crate's automatic differentiation)
    #[allow(non_upper_case_globals)]
    const μ: f64 = 1.;

    pub trait Explicit {
        fn next(&self, x: ArrayView1<f64>) -> Array1<f64>;
    }

    /// Defines what an ODE solver needs
    pub trait ODE<Scheme> {
        /// Set the step size `h` which should be used throughout the whole computation.
        fn set_step_size(&mut self, h: f64) -> &mut Self;
        /// Set the total runtime of the simulation.
        #[allow(non_snake_case)]
        fn set_t(&mut self, T: f64) -> &mut Self;
        /// To deactivate tqdm during runtime
        fn set_with_progress(&mut self, with_progress: bool) -> &mut Self;
        /// Consumes the defined ODE and runs the simulation.
        ///
        /// It returns a vector of all time steps and an array which corresponds to the state at each timestep.
        ///
        /// columns: state
        ///
        /// rows: timestep
        fn run(self) -> (Vec<f64>, Array2<f64>);
    }

    pub trait OneStep {
        type Scheme;
        fn new(scheme: Self::Scheme, initial: Array1<f64>) -> Self;
    }

    pub struct ExplicitEuler<Flow>
    where
        Flow: Fn(ArrayView1<f64>) -> Array1<f64>,
    {
        flow: Flow,
        h: f64,
    }

    impl<Flow> ExplicitEuler<Flow>
    where
        Flow: Fn(ArrayView1<f64>) -> Array1<f64>,
    {
        pub fn new(h: f64, flow: Flow) -> Self {
            ExplicitEuler { flow, h }
        }
    }
    impl<Flow> Explicit for ExplicitEuler<Flow>
    where
        Flow: Fn(ArrayView1<f64>) -> Array1<f64>,
    {
        #[inline]
        fn next(&self, x: ArrayView1<f64>) -> Array1<f64> {
            let h = self.h;
            let mut flow = (self.flow)(x);
            // Zip::from(x)
            //     .and(&mut flow)
            //     .for_each(|&x0, f| *f = x0 + h * *f);
            flow.iter_mut()
                .zip(x.iter())
                .for_each(|(f, &x)| *f = x + h * *f);
            flow
        }
    }

    #[allow(non_snake_case)]
    pub struct OdeEx<Scheme>
    where
        Scheme: Explicit + std::marker::Sync,
    {
        scheme: Scheme,
        initial: Array1<f64>,
        h: f64,
        T: f64,
        with_progress: bool,
    }

    impl<Scheme> ODE<Scheme> for OdeEx<Scheme>
    where
        Scheme: Explicit + std::marker::Sync,
    {
        fn set_step_size(&mut self, h: f64) -> &mut Self {
            self.h = h;
            self
        }

        #[allow(non_snake_case)]
        fn set_t(&mut self, T: f64) -> &mut Self {
            self.T = T;
            self
        }

        fn run(self) -> (Vec<f64>, Array2<f64>) {
            let n: f64 = self.T / self.h;
            let n = n.floor() as usize;
            let mut x0 = self.initial.clone();

            let mut result: Array2<f64> = Array::zeros((n, x0.len()));
            result
                .row_mut(0)
                .iter_mut()
                .zip(x0.iter())
                .for_each(|(x, &y)| *x = y);
            let mut time = vec![0.0; n];

            if self.with_progress {
                for t in 1..n {
                    x0 = self.execute(t, x0, &mut result, &mut time);
                }
            } else {
                for t in 1..n {
                    x0 = self.execute(t, x0, &mut result, &mut time);
                }
            }
            (time, result)
        }

        fn set_with_progress(&mut self, with_progress: bool) -> &mut Self {
            self.with_progress = with_progress;
            self
        }
    }

    impl<Scheme> OdeEx<Scheme>
    where
        Scheme: Explicit + std::marker::Sync,
    {
        #[inline]
        fn execute(
            &self,
            t: usize,
            x0: Array1<f64>,
            result: &mut Array2<f64>,
            time: &mut Vec<f64>,
        ) -> Array1<f64> {
            // let mut x1 = result.row_mut(t);

            // self.scheme.next1(x0.view(), x1);

            let x1 = self.scheme.next(x0.view());
            result
                .row_mut(t)
                .iter_mut()
                .zip(x1.iter())
                .for_each(|(x, &y)| *x = y);
            time[t] = t as f64 * self.h;
            x1
        }
    }

    impl<Scheme> OneStep for OdeEx<Scheme>
    where
        Scheme: Explicit + std::marker::Sync,
    {
        type Scheme = Scheme;
        fn new(scheme: Self::Scheme, initial: Array1<f64>) -> Self {
            OdeEx {
                scheme,
                initial,
                h: 0.1,
                T: 1.0,
                with_progress: true,
            }
        }
    }

    #[inline]
    fn keppler_f64(x: ArrayView1<f64>) -> Array1<f64> {
        let (x, y, px, py) = (x[0], x[1], x[2], x[3]);
        let factor = -μ * (x * x + y * y).powi(3).sqrt();
        array![px, py, factor * x, factor * y]
    }

    let x0 = array![1.0, 0.0, 0.0, 1.0];
    let euler = ExplicitEuler::new(0.01, keppler_f64);
    let mut ode = OdeEx::new(euler, x0.clone());
    ode.set_step_size(0.01).set_t(1.0).set_with_progress(false);
    let (time, result) = ode.run();
    println!("{} steps, last time {:.2}", time.len(), time[time.len() - 1]);
    println!("every 20th state =\n{:.6}", result.slice(s![..;20, ..]));
    let energy = result.map_axis(Axis(1), |s| 0.5 * (s[2] * s[2] + s[3] * s[3]) - 1.0 / (s[0] * s[0] + s[1] * s[1]).sqrt());
    println!("energy drift = {:.6}", energy[energy.len() - 1] - energy[0]);
    // a damped oscillator through the same scheme
    let damped = ExplicitEuler::new(0.1, |x: ArrayView1<f64>| array![x[1], -x[0] - 0.5 * x[1]]);
    println!("one step = {:.6}", damped.next(array![1.0, 0.0].view()));
    let mut ode2 = OdeEx::new(damped, array![1.0, 0.0]);
    ode2.set_step_size(0.1).set_t(2.0).set_with_progress(true);
    println!("damped trajectory end = {:.6}", ode2.run().1.row(19));
}

//! `bach-bench small-arrays`: ndarray code over small arrays in a loop, run as written (with
//! ndarray) and ported to Bach by its import alone, side by side in one process: the
//! overhead a ported program pays where arrays are too small for a plan to pay off. The
//! program is one macro instantiated twice, so the two differ in their `use` line only.

use std::time::Instant;

/// A classic fourth-order Runge-Kutta integration of the Lorenz system (a 3-vector state),
/// written as ordinary ndarray code: owned arrays, arithmetic operators, indexing.
macro_rules! runge_kutta {
    ($module:ident, $($import:tt)*) => {
        pub mod $module {
            $($import)*

            fn lorenz(y: &Array1<f64>) -> Array1<f64> {
                array![10.0 * (y[1] - y[0]), y[0] * (28.0 - y[2]) - y[1], y[0] * y[1] - 8.0 / 3.0 * y[2]]
            }

            /// `n` damped oscillators (`y'' = -k y - c y'`, positions then velocities in one
            /// array of `2n`), one RK4 step of size `h`, with slices and whole-array math.
            fn oscillators(y: &Array1<f64>, k: &Array1<f64>) -> Array1<f64> {
                let n = y.len() / 2;
                let (x, v) = (y.slice(s![..n]), y.slice(s![n..]));
                let a = -(&x * k) - &(&v * 0.1);
                let mut out = Array1::<f64>::zeros(2 * n);
                out.slice_mut(s![..n]).assign(&v);
                out.slice_mut(s![n..]).assign(&a);
                out
            }

            /// `steps` RK4 steps of `n` oscillators; the final state's sum.
            pub fn integrate_many(n: usize, steps: usize, h: f64) -> f64 {
                let k = Array1::from_shape_fn(n, |i| 1.0 + i as f64 / n as f64);
                let mut y = Array1::from_shape_fn(2 * n, |i| if i < n { 1.0 } else { 0.0 });
                for _ in 0..steps {
                    let k1 = oscillators(&y, &k);
                    let k2 = oscillators(&(&y + &(&k1 * (h / 2.0))), &k);
                    let k3 = oscillators(&(&y + &(&k2 * (h / 2.0))), &k);
                    let k4 = oscillators(&(&y + &(&k3 * h)), &k);
                    y = &y + &((&k1 + &(&k2 * 2.0) + &(&k3 * 2.0) + &k4) * (h / 6.0));
                }
                y.sum()
            }

            /// The "ndarray for NumPy users" guide's efficient Runge-Kutta step (Bogacki-Shampine
            /// 3(2), SciPy's RK23), as the guide writes it: views in, a scratch matrix `k`
            /// written through a mutable view. One line differs from the guide: the result
            /// `.into()` the caller's `Array1` (a view's arithmetic gives ndarray's array;
            /// for ndarray itself the conversion is the identity).
            #[allow(clippy::too_many_arguments, clippy::useless_conversion)]
            fn rk_step<F>(
                mut fun: F,
                t: f64,
                y: ArrayView1<f64>,
                f: ArrayView1<f64>,
                h: f64,
                a: &[ArrayView1<f64>],
                b: ArrayView1<f64>,
                c: ArrayView1<f64>,
                e: ArrayView1<f64>,
                mut k: ArrayViewMut2<f64>,
            ) -> (Array1<f64>, Array1<f64>)
            where
                F: FnMut(f64, ArrayView1<f64>, ArrayViewMut1<f64>),
            {
                k.slice_mut(s![0, ..]).assign(&f);
                for (s, (a, c)) in a.iter().zip(c).enumerate() {
                    let dy = k.slice(s![..s + 1, ..]).t().dot(a) * h;
                    fun(c.mul_add(h, t), (dy + &y).view(), k.slice_mut(s![s + 1, ..]));
                }
                let y_new = h * k.slice(s![..-1, ..]).t().dot(&b) + &y;
                fun(t + h, y_new.view(), k.slice_mut(s![-1, ..]));
                let error = k.t().dot(&e) * h;
                (y_new.into(), error.into())
            }

            /// `steps` guide steps of `y'' = -y` from (1, 0), as the guide's driver loop
            /// writes it; the final state and the largest error estimate.
            pub fn guide(steps: usize, h: f64) -> (Vec<f64>, f64) {
                let c = array![1.0 / 2.0, 3.0 / 4.0];
                let a1 = array![1.0 / 2.0];
                let a2 = array![0.0, 3.0 / 4.0];
                let a = [a1.view(), a2.view()];
                let b = array![2.0 / 9.0, 1.0 / 3.0, 4.0 / 9.0];
                let e = array![5.0 / 72.0, -1.0 / 12.0, -1.0 / 9.0, 1.0 / 8.0];
                fn fun(_t: f64, y: ArrayView1<f64>, mut out: ArrayViewMut1<f64>) {
                    out[0] = y[1];
                    out[1] = -y[0];
                }
                let mut k = Array2::<f64>::zeros((4, 2));
                let mut t = 0.0;
                let mut y = array![1.0, 0.0];
                let mut f = Array1::<f64>::zeros(2);
                fun(t, y.view(), f.view_mut());
                let mut worst = 0.0f64;
                for _ in 0..steps {
                    let (y_new, error) = rk_step(fun, t, y.view(), f.view(), h, &a, b.view(), c.view(), e.view(), k.view_mut());
                    t += h;
                    y = y_new;
                    f = k.row(3).to_owned();
                    worst = error.iter().fold(worst, |m, &x| m.max(x.abs()));
                }
                (y.to_vec(), worst)
            }

            /// `steps` steps of size `h` from (1, 1, 1); the final state.
            pub fn integrate(steps: usize, h: f64) -> Vec<f64> {
                let mut y = array![1.0, 1.0, 1.0];
                for _ in 0..steps {
                    let k1 = lorenz(&y);
                    let k2 = lorenz(&(&y + &(&k1 * (h / 2.0))));
                    let k3 = lorenz(&(&y + &(&k2 * (h / 2.0))));
                    let k4 = lorenz(&(&y + &(&k3 * h)));
                    y = &y + &((&k1 + &(&k2 * 2.0) + &(&k3 * 2.0) + &k4) * (h / 6.0));
                }
                y.to_vec()
            }
        }
    };
}
runge_kutta!(eager, use ndarray::prelude::*;);
runge_kutta!(ported, use bach::prelude::*;);

/// The command: `small-arrays [--steps N] [--repeat R] [--only lorenz|guide|oscillators]`.
/// Prints the best time of each over `repeat` interleaved runs and their ratio; fails when
/// the two final states differ.
pub fn main(args: &[String]) -> Result<(), String> {
    let (mut steps, mut repeat, mut only) = (10_000usize, 5usize, None);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--steps" => steps = value.parse().map_err(|e| format!("--steps: {e}"))?,
            "--repeat" => repeat = value.parse::<usize>().map_err(|e| format!("--repeat: {e}"))?.max(1),
            "--only" if ["lorenz", "guide", "oscillators"].contains(&value.as_str()) => only = Some(value.as_str()),
            other => return Err(format!("small-arrays takes --steps, --repeat and --only lorenz|guide|oscillators, not {other} {value}")),
        }
    }
    let h = 0.001;
    let runs = |name: &str| only.is_none_or(|o| o == name);
    if runs("lorenz") {
        lorenz(steps, repeat, h)?;
    }
    if runs("guide") {
        guide(steps, repeat, h)?;
    }
    if runs("oscillators") {
        oscillators(steps, repeat, h)?;
    }
    Ok(())
}

fn lorenz(steps: usize, repeat: usize, h: f64) -> Result<(), String> {
    let (mut best_nd, mut best_bach) = (f64::INFINITY, f64::INFINITY);
    let (mut y_nd, mut y_bach) = (vec![], vec![]);
    for _ in 0..repeat {
        let t = Instant::now();
        y_nd = eager::integrate(steps, h);
        best_nd = best_nd.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        y_bach = ported::integrate(steps, h);
        best_bach = best_bach.min(t.elapsed().as_secs_f64());
    }
    if y_nd != y_bach {
        return Err(format!("the ported program's state {y_bach:?} differs from ndarray's {y_nd:?}"));
    }
    println!("runge-kutta (Lorenz, 3-vector state), {steps} steps, best of {repeat}:");
    println!("  ndarray        {:>9.3} ms  ({:.2} us a step)", best_nd * 1e3, best_nd * 1e6 / steps as f64);
    println!("  bach (ported)  {:>9.3} ms  ({:.2} us a step)", best_bach * 1e3, best_bach * 1e6 / steps as f64);
    println!("  bach/ndarray   {:>9.2}x", best_bach / best_nd);
    println!("final state {y_nd:?}");
    Ok(())
}

fn guide(steps: usize, repeat: usize, h: f64) -> Result<(), String> {
    let (mut best_nd, mut best_bach) = (f64::INFINITY, f64::INFINITY);
    let (mut g_nd, mut g_bach) = ((vec![], 0.0), (vec![], 0.0));
    for _ in 0..repeat {
        let t = Instant::now();
        g_nd = eager::guide(steps, h);
        best_nd = best_nd.min(t.elapsed().as_secs_f64());
        let t = Instant::now();
        g_bach = ported::guide(steps, h);
        best_bach = best_bach.min(t.elapsed().as_secs_f64());
    }
    if g_nd != g_bach {
        return Err(format!("the guide's step: the ported program's (state, error) {g_bach:?} differs from ndarray's {g_nd:?}"));
    }
    println!("runge-kutta (the ndarray guide's rk_step, RK23 on y'' = -y), {steps} steps, best of {repeat}:");
    println!("  ndarray        {:>9.3} ms  ({:.2} us a step)", best_nd * 1e3, best_nd * 1e6 / steps as f64);
    println!("  bach (ported)  {:>9.3} ms  ({:.2} us a step)", best_bach * 1e3, best_bach * 1e6 / steps as f64);
    println!("  bach/ndarray   {:>9.2}x", best_bach / best_nd);
    Ok(())
}

fn oscillators(steps: usize, repeat: usize, h: f64) -> Result<(), String> {
    for n in [50usize, 500] {
        let steps = (steps / 10).max(1);
        let (mut best_nd, mut best_bach) = (f64::INFINITY, f64::INFINITY);
        let (mut s_nd, mut s_bach) = (0.0, 0.0);
        for _ in 0..repeat {
            let t = Instant::now();
            s_nd = eager::integrate_many(n, steps, h);
            best_nd = best_nd.min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            s_bach = ported::integrate_many(n, steps, h);
            best_bach = best_bach.min(t.elapsed().as_secs_f64());
        }
        if (s_nd - s_bach).abs() > 1e-9 * s_nd.abs().max(1.0) {
            return Err(format!("{n} oscillators: the ported program's sum {s_bach} differs from ndarray's {s_nd}"));
        }
        println!("runge-kutta ({n} damped oscillators, {} elements, slices and assign), {steps} steps, best of {repeat}:", 2 * n);
        println!("  ndarray        {:>9.3} ms  ({:.2} us a step)", best_nd * 1e3, best_nd * 1e6 / steps as f64);
        println!("  bach (ported)  {:>9.3} ms  ({:.2} us a step)", best_bach * 1e3, best_bach * 1e6 / steps as f64);
        println!("  bach/ndarray   {:>9.2}x", best_bach / best_nd);
    }
    Ok(())
}

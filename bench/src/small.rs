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

/// The command: `small-arrays [--steps N] [--repeat R]`. Prints the best time of each over
/// `repeat` interleaved runs and their ratio; fails when the two final states differ.
pub fn main(args: &[String]) -> Result<(), String> {
    let (mut steps, mut repeat) = (10_000usize, 5usize);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let value = it.next().ok_or(format!("{flag} needs a value"))?;
        match flag.as_str() {
            "--steps" => steps = value.parse().map_err(|e| format!("--steps: {e}"))?,
            "--repeat" => repeat = value.parse::<usize>().map_err(|e| format!("--repeat: {e}"))?.max(1),
            other => return Err(format!("small-arrays takes --steps and --repeat, not {other}")),
        }
    }
    let h = 0.001;
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

// source: src/doc/ndarray_for_numpy_users/rk_step.rs (the direct translation, driven with SciPy's RK23 tableau on y'' = -y); ndarray is MIT OR Apache-2.0
// one more line: (y_new, f_new, error) ==> (y_new.into(), f_new, error.into())
{
    use ndarray::prelude::*;

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
    ) -> (Array1<f64>, Array1<f64>, Array1<f64>)
    where
        F: FnMut(f64, ArrayView1<f64>) -> Array1<f64>,
    {
        k.slice_mut(s![0, ..]).assign(&f);
        for (s, (a, c)) in a.iter().zip(c).enumerate() {
            let dy = k.slice(s![..s + 1, ..]).t().dot(a) * h;
            k.slice_mut(s![s + 1, ..])
                .assign(&(fun(t + c * h, (&y + &dy).view())));
        }

        let y_new = &y + &(h * k.slice(s![..-1, ..]).t().dot(&b));
        let f_new = fun(t + h, y_new.view());

        k.slice_mut(s![-1, ..]).assign(&f_new);
        let error = k.t().dot(&e) * h;

        (y_new, f_new, error)
    }

    // Bogacki-Shampine 3(2) (SciPy's RK23): C, A, B, E
    let c = array![1.0 / 2.0, 3.0 / 4.0];
    let a1 = array![1.0 / 2.0];
    let a2 = array![0.0, 3.0 / 4.0];
    let a = [a1.view(), a2.view()];
    let b = array![2.0 / 9.0, 1.0 / 3.0, 4.0 / 9.0];
    let e = array![5.0 / 72.0, -1.0 / 12.0, -1.0 / 9.0, 1.0 / 8.0];

    // y = (position, velocity) of y'' = -y
    fn fun(_t: f64, y: ArrayView1<f64>) -> Array1<f64> {
        array![y[1], -y[0]]
    }
    let mut k = Array2::<f64>::zeros((4, 2));
    let mut t = 0.0;
    let mut y = array![1.0, 0.0];
    let mut f = fun(t, y.view());
    let h = 0.1;
    for step in 0..10 {
        let (y_new, f_new, error) = rk_step(fun, t, y.view(), f.view(), h, &a, b.view(), c.view(), e.view(), k.view_mut());
        t += h;
        y = y_new;
        f = f_new;
        let err = error.iter().fold(0.0f64, |m, &x| m.max(x.abs()));
        println!("step {} t={:.2} y={:.6} f={:.6} err={:.3e}", step, t, y, f, err);
    }
    println!("cos(1) = {:.6}, -sin(1) = {:.6}", 1f64.cos(), -1f64.sin());
}

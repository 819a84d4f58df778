// source: rust-ml/linfa algorithms/linfa-elasticnet/src/algorithm.rs @7fe5c86e (MIT OR Apache-2.0)
{
    use ndarray::{Array1, ArrayView1, ArrayView2, Axis};
    use ndarray::{array, NdFloat};
    // changed: linfa's Float trait replaced by a small local one (NdFloat + Sum + `cast`) and
    // linfa_linalg's Norm trait (norm_l1, norm_max) by a small local one
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
    pub trait Norm<F> {
        fn norm_l1(&self) -> F;
        fn norm_l2(&self) -> F;
        fn norm_max(&self) -> F;
    }
    impl<F: Float, S: ndarray::Data<Elem = F>, D: ndarray::Dimension> Norm<F> for ndarray::ArrayBase<S, D> {
        fn norm_l1(&self) -> F { self.iter().map(|x| x.abs()).sum() }
        fn norm_l2(&self) -> F { self.iter().map(|x| *x * *x).sum::<F>().sqrt() }
        fn norm_max(&self) -> F { self.iter().fold(F::zero(), |m, x| m.max(x.abs())) }
    }

    fn block_soft_thresholding<F: Float>(x: ArrayView1<F>, threshold: F) -> Array1<F> {
        let norm_x = x.dot(&x).sqrt();
        if norm_x < threshold {
            return Array1::<F>::zeros(x.len());
        }
        let scale = F::one() - threshold / norm_x;
        &x * scale
    }

    fn duality_gap<'a, F: Float>(
        x: ArrayView2<'a, F>,
        y: ArrayView1<'a, F>,
        w: ArrayView1<'a, F>,
        r: ArrayView1<'a, F>,
        l1_ratio: F,
        penalty: F,
    ) -> F {
        let half = F::cast(0.5);
        let n_samples = F::cast(x.nrows());
        let l1_reg = l1_ratio * penalty * n_samples;
        let l2_reg = (F::one() - l1_ratio) * penalty * n_samples;
        let xta = x.t().dot(&r) - &w * l2_reg;

        let dual_norm_xta = xta.norm_max();
        let r_norm2 = r.dot(&r);
        let w_norm2 = w.dot(&w);
        let (const_, mut gap) = if dual_norm_xta > l1_reg {
            let const_ = l1_reg / dual_norm_xta;
            let a_norm2 = r_norm2 * const_ * const_;
            (const_, half * (r_norm2 + a_norm2))
        } else {
            (F::one(), r_norm2)
        };
        let l1_norm = w.norm_l1();
        gap += l1_reg * l1_norm - const_ * r.dot(&y)
            + half * l2_reg * (F::one() + const_ * const_) * w_norm2;
        gap
    }

    fn duality_gap_mtl<'a, F: Float>(
        x: ArrayView2<'a, F>,
        y: ArrayView2<'a, F>,
        w: ArrayView2<'a, F>,
        r: ArrayView2<'a, F>,
        l1_ratio: F,
        penalty: F,
    ) -> F {
        let half = F::cast(0.5);
        let n_samples = F::cast(x.nrows());
        let l1_reg = l1_ratio * penalty * n_samples;
        let l2_reg = (F::one() - l1_ratio) * penalty * n_samples;
        let xta = x.t().dot(&r) - &w * l2_reg;

        let dual_norm_xta = xta.map_axis(Axis(1), |x| x.dot(&x).sqrt()).norm_max();
        let r_norm2 = r.iter().map(|&rij| rij * rij).sum();
        let w_norm2 = w.iter().map(|&wij| wij * wij).sum();
        let (const_, mut gap) = if dual_norm_xta > l1_reg {
            let const_ = l1_reg / dual_norm_xta;
            let a_norm2 = r_norm2 * const_ * const_;
            (const_, half * (r_norm2 + a_norm2))
        } else {
            (F::one(), r_norm2)
        };
        let rty = r.t().dot(&y);
        let trace_rty = rty.diag().sum();
        let l21_norm = w.map_axis(Axis(1), |wj| (wj.dot(&wj)).sqrt()).sum();
        gap += l1_reg * l21_norm - const_ * trace_rty
            + half * l2_reg * (F::one() + const_ * const_) * w_norm2;
        gap
    }

    let x = array![[1.0, 0.5, -0.2], [0.3, -1.0, 0.8], [0.0, 0.4, 1.2], [-0.6, 0.9, 0.1]];
    let y = array![0.7, -0.4, 1.1, 0.2];
    let w = array![0.3, -0.1, 0.6];
    let r = &y - &x.dot(&w);
    for (l1_ratio, penalty) in [(0.5, 0.1), (0.9, 0.5), (0.1, 2.0)] {
        println!("gap(l1_ratio {}, penalty {}) = {:.6}", l1_ratio, penalty,
            duality_gap(x.view(), y.view(), w.view(), r.view(), l1_ratio, penalty));
    }
    for t in [0.1, 0.5, 2.0] {
        println!("block_soft_thresholding(w, {}) = {:.6}", t, block_soft_thresholding(w.view(), t));
    }
    // the multi-task variant, with two tasks
    let y2 = ndarray::stack![Axis(1), y, y.mapv(|v| 0.5 * v - 0.1)];
    let w2 = ndarray::stack![Axis(1), w, w.mapv(|v| -v)];
    let r2 = &y2 - &x.dot(&w2);
    println!("mtl gap = {:.6}", duality_gap_mtl(x.view(), y2.view(), w2.view(), r2.view(), 0.7, 0.2));
    println!("row 1 thresholded = {:.6}", block_soft_thresholding(w2.row(1), 0.05));
}

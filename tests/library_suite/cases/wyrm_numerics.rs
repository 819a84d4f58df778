// source: maciejkula/wyrm src/numerics.rs, src/lib.rs @12715ae9 (MIT)
{
    use std;

    use ndarray::linalg::{general_mat_mul, general_mat_vec_mul};
    use ndarray::{ArrayBase, ArrayViewMut, Axis, Data, DataMut, Ix1, Ix2};
    use ndarray::{arr1, arr2, Array2};
    // changed: updated from ndarray 0.11: `rows()`/`cols()` to `nrows()`/`ncols()`,
    // `subview(_mut)` to `index_axis(_mut)`, and the anonymous trait parameters given names;
    // the fast-math approximations (off by default) replaced by the std functions they stand
    // in for; itertools::izip! replaced by a small local macro of the same name
    macro_rules! izip {
        ($a:expr, $b:expr) => {
            $a.zip($b)
        };
        ($a:expr, $b:expr, $c:expr) => {
            $a.zip($b).zip($c).map(|((a, b), c)| (a, b, c))
        };
    }
    pub type Arr = ndarray::Array2<f32>;

    pub trait ArraySlice {
        fn fast_slice(&self) -> &[f32];
    }

    pub trait ArraySliceMut {
        fn fast_slice_mut(&mut self) -> &mut [f32];
    }

    macro_rules! fast_slice {
        ($x:ty) => {
            impl<T> ArraySlice for $x
            where
                T: Data<Elem = f32>,
            {
                fn fast_slice(&self) -> &[f32] {
                    if cfg!(debug_assertions) {
                        self.as_slice().unwrap()
                    } else {
                        self.as_slice_memory_order().unwrap()
                    }
                }
            }
            impl<T> ArraySliceMut for $x
            where
                T: DataMut<Elem = f32>,
            {
                fn fast_slice_mut(&mut self) -> &mut [f32] {
                    if cfg!(debug_assertions) {
                        self.as_slice_mut().unwrap()
                    } else {
                        self.as_slice_memory_order_mut().unwrap()
                    }
                }
            }
        };
    }

    fast_slice!(ArrayBase<T, Ix1>);
    fast_slice!(ArrayBase<T, Ix2>);

    pub trait ArraySliceOps<RHS> {
        fn slice_assign(&mut self, rhs: RHS);
        fn slice_add_assign(&mut self, rhs: RHS);
        fn slice_sub_assign(&mut self, rhs: RHS);
    }

    macro_rules! slice_op {
        ($lhs:ty, $($rhs:ty),*) => {
            $(
            impl<'a, 'b, T> ArraySliceOps<&'a $rhs> for $lhs
            where
                T: Data<Elem = f32>,
            {
                fn slice_assign(&mut self, other: &$rhs) {
                    let lhs_slice = self.fast_slice_mut();
                    let rhs_slice = other.fast_slice();

                    lhs_slice.copy_from_slice(rhs_slice);
                }
                fn slice_add_assign(&mut self, other: &$rhs) {
                    let lhs_slice = self.fast_slice_mut();
                    let rhs_slice = other.fast_slice();

                    for (lhs, &rhs) in lhs_slice.iter_mut().zip(rhs_slice.iter()) {
                        *lhs += rhs;
                    }
                }
                fn slice_sub_assign(&mut self, other: &$rhs) {
                    let lhs_slice = self.fast_slice_mut();
                    let rhs_slice = other.fast_slice();

                    for (lhs, &rhs) in lhs_slice.iter_mut().zip(rhs_slice.iter()) {
                        *lhs -= rhs;
                    }
                }
            }
            )*
        }
    }

    slice_op!(Arr, ArrayBase<T, Ix2>);
    slice_op!(ArrayViewMut<'b, f32, Ix1>, ArrayBase<T, Ix1>);

    impl ArraySliceOps<f32> for Arr {
        fn slice_assign(&mut self, rhs: f32) {
            for lhs in self.fast_slice_mut().iter_mut() {
                *lhs = rhs;
            }
        }
        fn slice_add_assign(&mut self, rhs: f32) {
            for lhs in self.fast_slice_mut().iter_mut() {
                *lhs += rhs;
            }
        }
        fn slice_sub_assign(&mut self, rhs: f32) {
            for lhs in self.fast_slice_mut().iter_mut() {
                *lhs -= rhs;
            }
        }
    }


    /// Uses approximate e^x when the fast-math feature is enabled.
    #[inline(always)]
    pub fn exp(x: f32) -> f32 {
        if cfg!(feature = "fast-math") {
            x.exp()
        } else {
            x.exp()
        }
    }

    /// Uses approximate ln(x) when the fast-math feature is enabled.
    #[inline(always)]
    pub fn ln(x: f32) -> f32 {
        if cfg!(feature = "fast-math") {
            x.ln()
        } else {
            x.ln()
        }
    }

    /// Uses approximate ln(x) when the fast-math feature is enabled.
    #[inline(always)]
    pub fn tanh(x: f32) -> f32 {
        if cfg!(feature = "fast-math") {
            x.tanh()
        } else {
            x.tanh()
        }
    }

    #[inline(always)]
    pub fn sigmoid(x: f32) -> f32 {
        let critical_value = 10.0;

        if x > critical_value {
            1.0
        } else if x < -critical_value {
            0.0
        } else {
            1.0 / (1.0 + exp(-x))
        }
    }

    #[inline(always)]
    pub fn pow2(x: f32) -> f32 {
        x.powi(2)
    }

    pub fn softmax_exp_sum(xs: &[f32], max: f32) -> f32 {
        let mut xs = xs;
        let mut s = 0.;

        let (mut p0, mut p1, mut p2, mut p3, mut p4, mut p5, mut p6, mut p7) =
            (0., 0., 0., 0., 0., 0., 0., 0.);

        while xs.len() >= 8 {
            p0 += exp(xs[0] - max);
            p1 += exp(xs[1] - max);
            p2 += exp(xs[2] - max);
            p3 += exp(xs[3] - max);
            p4 += exp(xs[4] - max);
            p5 += exp(xs[5] - max);
            p6 += exp(xs[6] - max);
            p7 += exp(xs[7] - max);

            xs = &xs[8..];
        }
        s += p0 + p4;
        s += p1 + p5;
        s += p2 + p6;
        s += p3 + p7;

        for i in 0..xs.len() {
            s += exp(xs[i] - max)
        }

        s
    }

    pub fn mat_mul<S1, S2, S3>(
        alpha: f32,
        lhs: &ArrayBase<S1, Ix2>,
        rhs: &ArrayBase<S2, Ix2>,
        beta: f32,
        out: &mut ArrayBase<S3, Ix2>,
    ) where
        S1: Data<Elem = f32>,
        S2: Data<Elem = f32>,
        S3: DataMut<Elem = f32>,
    {
        match (lhs.nrows(), rhs.ncols()) {
            (_, 1) => {
                general_mat_vec_mul(
                    alpha,
                    lhs,
                    &rhs.index_axis(Axis(1), 0),
                    beta,
                    &mut out.index_axis_mut(Axis(1), 0),
                );
            }
            (1, _) => {
                general_mat_vec_mul(
                    alpha,
                    &rhs.t(),
                    &lhs.index_axis(Axis(0), 0),
                    beta,
                    &mut out.index_axis_mut(Axis(0), 0),
                );
            }
            _ => {
                general_mat_mul(alpha, lhs, rhs, beta, out);
            }
        }
    }


    macro_rules! slice_binary_op {
        ( $name:ident, $slice_name:ident,
          $increment_name:ident,$slice_increment_name:ident, $op:tt ) => {
            pub fn $name(xs: &Arr, ys: &Arr, out: &mut Arr) {
                $slice_name(xs.fast_slice(),
                           ys.fast_slice(),
                           out.fast_slice_mut());
            }

            fn $slice_name(xs: &[f32], ys: &[f32], outs: &mut [f32]) {
                for (&x_scalar, &y_scalar, out_scalar) in
                    izip!(xs.iter(), ys.iter(), outs.iter_mut())
                {
                    *out_scalar = x_scalar $op y_scalar;
                }
            }

            #[allow(dead_code)]
            pub fn $increment_name(xs: &Arr, ys: &Arr, out: &mut Arr) {
                $slice_increment_name(xs.fast_slice(),
                                     ys.fast_slice(),
                                     out.fast_slice_mut());
            }

            #[allow(dead_code)]
            fn $slice_increment_name(xs: &[f32], ys: &[f32], outs: &mut [f32]) {
                for (&x_scalar, &y_scalar, out_scalar) in
                    izip!(xs.iter(), ys.iter(), outs.iter_mut())
                {
                    *out_scalar += x_scalar $op y_scalar;
                }
            }
        }
    }

    slice_binary_op!(sub, slice_sub, increment_sub, increment_slice_sub, -);
    slice_binary_op!(mul, slice_mul, increment_mul, increment_slice_mul, *);
    slice_binary_op!(div, slice_div, increment_div, increment_slice_div, /);

    pub fn slice_assign(xs: &mut [f32], ys: &[f32]) {
        for (x, &y) in xs.iter_mut().zip(ys.iter()) {
            *x = y;
        }
    }

    pub fn map_assign<F>(xs: &mut Arr, ys: &Arr, func: F)
    where
        F: Fn(f32) -> f32,
    {
        let xs = xs.fast_slice_mut();
        let ys = ys.fast_slice();

        for (x, &y) in xs.iter_mut().zip(ys.iter()) {
            *x = func(y);
        }
    }

    pub fn map_add_assign_slice<F>(xs: &mut [f32], ys: &[f32], func: F)
    where
        F: Fn(f32) -> f32,
    {
        for (x, &y) in xs.iter_mut().zip(ys.iter()) {
            *x += func(y);
        }
    }

    pub fn map_assign_binary<F>(xs: &mut Arr, ys: &Arr, zs: &Arr, func: F)
    where
        F: Fn(f32, f32) -> f32,
    {
        let xs = xs.fast_slice_mut();
        let ys = ys.fast_slice();
        let zs = zs.fast_slice();

        for (x, &y, &z) in izip!(xs.iter_mut(), ys.iter(), zs.iter()) {
            *x = func(y, z);
        }
    }

    #[allow(dead_code)]
    pub fn map_inplace_assign<F>(xs: &mut Arr, ys: &Arr, func: F)
    where
        F: Fn(&mut f32, f32),
    {
        let xs = xs.fast_slice_mut();
        let ys = ys.fast_slice();

        for (x, &y) in izip!(xs.iter_mut(), ys.iter()) {
            func(x, y);
        }
    }

    #[allow(dead_code)]
    pub fn map_inplace_assign_binary<F>(xs: &mut Arr, ys: &Arr, zs: &Arr, func: F)
    where
        F: Fn(&mut f32, f32, f32),
    {
        let xs = xs.fast_slice_mut();
        let ys = ys.fast_slice();
        let zs = zs.fast_slice();

        for (x, &y, &z) in izip!(xs.iter_mut(), ys.iter(), zs.iter()) {
            func(x, y, z);
        }
    }


    let a: Arr = Array2::from_shape_fn((3, 4), |(i, j)| (i as f32 + 1.0) * 0.5 - j as f32 * 0.25);
    let b: Arr = Array2::from_shape_fn((4, 2), |(i, j)| if (i + j) % 2 == 0 { 1.0 } else { -0.5 });
    let mut out: Arr = Array2::zeros((3, 2));
    mat_mul(1.0, &a, &b, 0.0, &mut out);
    println!("a b =\n{:.4}", out);
    let col = b.slice(ndarray::s![.., 0..1]).to_owned();
    let mut out_col: Arr = Array2::ones((3, 1));
    mat_mul(2.0, &a, &col, 0.5, &mut out_col);
    println!("2 a b[:, 0] + 0.5 =\n{:.4}", out_col);
    let row = a.slice(ndarray::s![1..2, ..]).to_owned();
    let mut out_row: Arr = Array2::zeros((1, 2));
    mat_mul(1.0, &row, &b, 0.0, &mut out_row);
    println!("a[1] b = {:.4}", out_row);

    let x: Arr = arr2(&[[0.5, -1.0, 2.0], [3.0, 0.0, -2.5]]);
    let y: Arr = arr2(&[[1.0, 2.0, 4.0], [0.5, 1.0, -1.0]]);
    let mut z: Arr = Array2::zeros((2, 3));
    mul(&x, &y, &mut z);
    increment_sub(&x, &y, &mut z);
    println!("x*y + (x-y) =\n{:.4}", z);
    map_assign(&mut z, &x, sigmoid);
    println!("sigmoid(x) =\n{:.4}", z);
    z.slice_add_assign(&y);
    z.slice_sub_assign(0.5);
    println!("+ y - 0.5 =\n{:.4}", z);
    let logits = [1.0f32, 2.0, 0.5, -1.0, 3.0, 0.0, 1.5, 2.5, -0.5, 0.25];
    let max = logits.iter().cloned().fold(f32::MIN, f32::max);
    println!("softmax exp sum = {:.5}", softmax_exp_sum(&logits, max));
    let mut v = arr1(&[1.0f32, 2.0, 3.0]);
    v.view_mut().slice_add_assign(&arr1(&[0.5f32, 0.5, 0.5]));
    println!("view add = {}", v);
}

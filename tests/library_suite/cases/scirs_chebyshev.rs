// source: cool-japan/scirs scirs2-integrate/src/pde/spectral/mod.rs @a176b462 (MIT OR Apache-2.0)
{
    use ndarray::{Array1, Array2, ArrayView1};
    use std::f64::consts::PI;

    pub fn chebyshev_diff_matrix(n: usize) -> Array2<f64> {
        let mut d = Array2::zeros((n, n));

        // Compute Chebyshev points
        let mut x = Array1::zeros(n);
        for j in 0..n {
            x[j] = (j as f64 * PI / (n - 1) as f64).cos();
        }

        // Compute the matrix entries
        for i in 0..n {
            for j in 0..n {
                if i != j {
                    let c_i = if i == 0 || i == n - 1 { 2.0 } else { 1.0 };
                    let c_j = if j == 0 || j == n - 1 { 2.0 } else { 1.0 };

                    d[[i, j]] = c_i / c_j * (-1.0_f64).powf((i + j) as f64) / (x[i] - x[j]);
                }
            }
        }

        // Compute diagonal entries by enforcing row sums to be zero
        for i in 0..n {
            let mut row_sum = 0.0;
            for j in 0..n {
                if i != j {
                    row_sum += d[[i, j]];
                }
            }
            d[[i, i]] = -row_sum;
        }

        d
    }

    pub fn chebyshev_diff2_matrix(n: usize) -> Array2<f64> {
        let d1 = chebyshev_diff_matrix(n);
        d1.dot(&d1) // D^2 = D * D
    }

    pub fn chebyshev_points(n: usize) -> Array1<f64> {
        let mut x = Array1::zeros(n);
        for j in 0..n {
            x[j] = (j as f64 * PI / (n - 1) as f64).cos();
        }
        x
    }

    pub fn chebyshev_transform(u: &ArrayView1<f64>) -> Array1<f64> {
        let n = u.len();
        let mut coeffs = Array1::zeros(n);

        // Simple direct transform
        for k in 0..n {
            let mut sum = 0.0;
            for j in 0..n {
                let _x_j = (j as f64 * PI / (n - 1) as f64).cos();
                sum += u[j] * (k as f64 * j as f64 * PI / (n - 1) as f64).cos();
            }

            let norm = if k == 0 || k == n - 1 {
                n - 1
            } else {
                2 * (n - 1)
            };
            coeffs[k] = 2.0 * sum / norm as f64;
        }

        coeffs
    }

    pub fn chebyshev_inverse_transform(coeffs: &ArrayView1<f64>) -> Array1<f64> {
        let n = coeffs.len();
        let mut u = Array1::zeros(n);

        // Generate Chebyshev points
        let _x = chebyshev_points(n);

        // Evaluate the Chebyshev series at each point
        for j in 0..n {
            let mut sum = 0.0;
            for k in 0..n {
                sum += coeffs[k] * (k as f64 * j as f64 * PI / (n - 1) as f64).cos();
            }
            u[j] = sum;
        }

        u
    }

    let n = 9;
    let x = chebyshev_points(n);
    println!("points = {:.6}", x);
    let u = x.mapv(|x| (2.0 * x).sin() + x * x * x);
    let du_exact = x.mapv(|x| 2.0 * (2.0 * x).cos() + 3.0 * x * x);
    let d = chebyshev_diff_matrix(n);
    let du = d.dot(&u);
    println!("max derivative error = {:.3e}", (&du - &du_exact).iter().fold(0.0f64, |m, v| m.max(v.abs())));
    let d2 = chebyshev_diff2_matrix(n);
    println!("second derivative at the ends = {:.6} {:.6}", d2.row(0).dot(&u), d2.row(n - 1).dot(&u));
    println!("row sums of D vanish: {}", d.sum_axis(ndarray::Axis(1)).iter().all(|v| v.abs() < 1e-10));
    let c = chebyshev_transform(&u.view());
    println!("coefficients = {:.6}", c);
    let back = chebyshev_inverse_transform(&c.view());
    println!("inverse transform = {:.6}", back);
    println!("transform of every other point = {:.6}", chebyshev_transform(&u.slice(ndarray::s![..;2])));
}

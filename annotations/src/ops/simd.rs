//! Vectorised CPU kernels for the unary math ops that bound the elementwise workloads on a
//! CPU (Haversine's `sin`, `cos`, `asin`): four lanes at a time (Agner Fog's vector class
//! library's polynomials), within 2 ulp of the C library's scalar functions where each lane
//! is in the kernel's accurate range; a group of four with a lane outside it (large angles,
//! NaN, infinities, out of domain) runs the scalar function. With AVX2 and FMA (checked at
//! run time) `avx2.rs`'s kernels run; elsewhere `wide`'s `f64x4`, which this build compiles
//! for SSE2. `erf` (Black-Scholes' cost on a CPU) is `erf.rs`: the same bits as the scalar
//! function (vector only with AVX2).

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
mod erf;

use ndarray::{ArrayD, ArrayViewD};
use wide::{f64x4, CmpLe};

/// A kernel from a slice of arguments into a slice of results as long.
pub(crate) type SliceKernel = fn(&[f64], &mut [f64]);

/// A vector kernel of a unary f64 op.
pub(crate) enum VectorOp {
    /// Four lanes at a time, accurate for `|x| <= limit`.
    Lanes { f: fn(f64x4) -> f64x4, limit: f64 },
    /// A whole slice into one as long, accurate everywhere.
    Slice(SliceKernel),
}

/// The vector kernel of the unary op `name`, when it has one: with AVX2 and FMA, `avx2.rs`'s
/// (four lanes in one instruction), else `wide`'s (two instructions of two lanes each).
pub(crate) fn unary_f64(name: &str) -> Option<VectorOp> {
    if name == "erf" {
        return Some(VectorOp::Slice(erf::erf_slice));
    }
    #[cfg(target_arch = "x86_64")]
    if avx2_kernels() {
        return avx2_slice(name).map(VectorOp::Slice);
    }
    lanes_f64(name)
}

/// `wide`'s kernel of `name` (any processor).
fn lanes_f64(name: &str) -> Option<VectorOp> {
    // sin/cos: 3-part Cody-Waite reduction, exact to 2 ulp up to |x| = 1e7 (measured),
    // hopeless beyond 1e8.
    match name {
        "sin" => Some(VectorOp::Lanes { f: f64x4::sin, limit: 1e7 }),
        "cos" => Some(VectorOp::Lanes { f: f64x4::cos, limit: 1e7 }),
        "asin" => Some(VectorOp::Lanes { f: f64x4::asin, limit: 1.0 }),
        "acos" => Some(VectorOp::Lanes { f: f64x4::acos, limit: 1.0 }),
        _ => None,
    }
}

/// The AVX2 kernel of `name`, for a processor that has AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
fn avx2_slice(name: &str) -> Option<SliceKernel> {
    // SAFETY (each): `unary_f64` returns these only where `avx2_kernels()`.
    fn sin(xs: &[f64], out: &mut [f64]) {
        unsafe { avx2::sin_slice(xs, out) }
    }
    fn cos(xs: &[f64], out: &mut [f64]) {
        unsafe { avx2::cos_slice(xs, out) }
    }
    fn asin(xs: &[f64], out: &mut [f64]) {
        unsafe { avx2::asin_slice(xs, out) }
    }
    fn acos(xs: &[f64], out: &mut [f64]) {
        unsafe { avx2::acos_slice(xs, out) }
    }
    match name {
        "sin" => Some(sin),
        "cos" => Some(cos),
        "asin" => Some(asin),
        "acos" => Some(acos),
        _ => None,
    }
}

/// Whether this processor runs the AVX2 kernels (`erf` four lanes at a time, the others four
/// lanes in one instruction), which changes what the math functions cost beside each other.
pub(crate) fn avx2_kernels() -> bool {
    #[cfg(target_arch = "x86_64")]
    return avx2::available();
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// `op` over `a` (standard layout; otherwise `scalar` element by element), each group of four
/// with a lane past the op's limit (or NaN) by `scalar`.
pub(crate) fn map(a: ArrayViewD<'_, f64>, op: &VectorOp, scalar: impl Fn(f64) -> f64) -> ArrayD<f64> {
    let Some(xs) = a.as_slice() else { return a.mapv(scalar) };
    let (f, limit) = match *op {
        VectorOp::Lanes { f, limit } => (f, limit),
        VectorOp::Slice(f) => {
            let mut out = vec![0.0; xs.len()];
            f(xs, &mut out);
            return ArrayD::from_shape_vec(a.raw_dim(), out).expect("one result per element");
        }
    };
    let mut out = Vec::with_capacity(xs.len());
    let limit = f64x4::splat(limit);
    let mut chunks = xs.chunks_exact(4);
    for c in &mut chunks {
        let x = f64x4::from([c[0], c[1], c[2], c[3]]);
        if x.abs().cmp_le(limit).all() {
            out.extend_from_slice(&f(x).to_array());
        } else {
            out.extend(c.iter().map(|&v| scalar(v)));
        }
    }
    out.extend(chunks.remainder().iter().map(|&v| scalar(v)));
    ArrayD::from_shape_vec(a.raw_dim(), out).expect("one result per element")
}

#[cfg(test)]
mod tests {
    use super::*;
    use ndarray::{Array1, IxDyn};

    /// Distance in units in the last place (across zero: in ulps of 1).
    fn ulps(a: f64, b: f64) -> f64 {
        if a == b || (a.is_nan() && b.is_nan()) {
            return 0.0;
        }
        if a.is_sign_negative() != b.is_sign_negative() || !a.is_finite() || !b.is_finite() {
            return (a - b).abs() / f64::EPSILON;
        }
        (a.to_bits() as i64 - b.to_bits() as i64).abs() as f64
    }

    fn uniform(n: usize, lo: f64, hi: f64, seed: u32) -> Vec<f64> {
        let mut rs = crate::io::random::RandomState::new(seed);
        (0..n).map(|_| rs.uniform(lo, hi)).collect()
    }

    /// An op, its scalar function, and ranges to draw arguments from.
    type Case = (&'static str, fn(f64) -> f64, &'static [(f64, f64)]);

    const CASES: [Case; 4] = [
        ("sin", f64::sin, &[(-3.5, 3.5), (-100.0, 100.0), (1e3, 1e7), (1e7, 1e12), (-1e-300, 1e-300)]),
        ("cos", f64::cos, &[(-3.5, 3.5), (-100.0, 100.0), (1e3, 1e7), (1e7, 1e12), (-1e-300, 1e-300)]),
        ("asin", f64::asin, &[(-1.0, 1.0), (0.99, 1.0), (-1e-10, 1e-10), (-1.5, 1.5)]),
        ("acos", f64::acos, &[(-1.0, 1.0), (0.99, 1.0), (-1e-10, 1e-10), (-1.5, 1.5)]),
    ];

    #[test]
    fn within_two_ulp_of_the_c_library_everywhere() {
        // This processor's kernels (AVX2 where it has it) and `wide`'s, which others run.
        for (name, scalar, ranges) in CASES {
            for op in [unary_f64(name).unwrap(), lanes_f64(name).unwrap()] {
                for (k, &(lo, hi)) in ranges.iter().enumerate() {
                    // An odd length: the last elements go the scalar way.
                    let xs = Array1::from(uniform(200_003, lo, hi, 17 + k as u32)).into_dyn();
                    let got = map(xs.view(), &op, scalar);
                    let worst = got.iter().zip(&xs).map(|(&g, &x)| (ulps(g, scalar(x)), x)).fold((0.0, 0.0), |a, b| if b.0 > a.0 { b } else { a });
                    assert!(worst.0 <= 2.0, "{name} over [{lo:e}, {hi:e}]: {} ulp at {:e}", worst.0, worst.1);
                }
            }
        }
    }

    #[test]
    fn special_values_as_the_c_library() {
        let specials = [f64::NAN, f64::INFINITY, f64::NEG_INFINITY, -0.0, 0.0, 1.0, -1.0, 1.0 + f64::EPSILON, f64::MIN_POSITIVE / 4.0, 1e300, -2e7, 1e7];
        for (name, scalar, _) in CASES {
            for op in [unary_f64(name).unwrap(), lanes_f64(name).unwrap()] {
                // Each special value alone among ordinary lanes, and four of them together.
                for &v in &specials {
                    let xs = ArrayD::from_shape_vec(IxDyn(&[8]), vec![0.5, v, 0.25, -0.5, v, v, v, v]).unwrap();
                    let got = map(xs.view(), &op, scalar);
                    for (&g, &x) in got.iter().zip(&xs) {
                        let want = scalar(x);
                        assert!(
                            ulps(g, want) <= 2.0 && g.is_sign_negative() == want.is_sign_negative() || (g.is_nan() && want.is_nan()),
                            "{name}({x:e}) = {g:e}, C library {want:e}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn strided_views_take_the_scalar_way() {
        let xs = ArrayD::from_shape_vec(IxDyn(&[6, 2]), uniform(12, -3.0, 3.0, 5)).unwrap();
        let t = xs.t();
        let got = map(t.view(), &unary_f64("sin").unwrap(), f64::sin);
        assert_eq!(got, t.mapv(f64::sin));
        assert_eq!(got.shape(), &[2, 6]);
        assert!(unary_f64("exp").is_none());
    }
}

/// What an element costs, scalar and vector (the figures in `elementwise.rs`'s weights): a
/// measurement that asserts nothing, run by hand with
/// `cargo test --release -p bach --lib kernel_speed -- --ignored --nocapture` (REPS=n sets
/// the repetitions over 8192 random arguments, in cache as a piece's are).
#[cfg(test)]
mod speed {
    use super::*;

    #[test]
    #[ignore = "a measurement, run by hand"]
    fn kernel_speed() {
        let reps: usize = std::env::var("REPS").map_or(400, |v| v.parse().unwrap());
        // Spread-out arguments (`elementwise.rs`'s weights), then the calibration chain's
        // (`calibrate.rs`'s).
        type Case = (&'static str, fn(f64) -> f64, f64, f64);
        let cases: [Case; 10] = [
            ("exp", f64::exp, -3.0, 3.0),
            ("erf", libm::erf, -3.0, 3.0),
            ("sin", f64::sin, -3.5, 3.5),
            ("cos", f64::cos, -3.5, 3.5),
            ("asin", f64::asin, -1.0, 1.0),
            ("acos", f64::acos, -1.0, 1.0),
            ("exp", f64::exp, 0.5, 1.5),
            ("sin", f64::sin, 0.7, 1.2),
            ("erf", libm::erf, 0.65, 0.93),
            ("asin", f64::asin, 0.64, 0.81),
        ];
        let mut rs = crate::io::random::RandomState::new(3);
        for (name, scalar, lo, hi) in cases {
            let xs = ArrayD::from_shape_vec(ndarray::IxDyn(&[8192]), (0..8192).map(|_| rs.uniform(lo, hi)).collect()).unwrap();
            let time = |f: &dyn Fn() -> ArrayD<f64>| {
                let t = std::time::Instant::now();
                for _ in 0..reps {
                    std::hint::black_box(f());
                }
                t.elapsed().as_secs_f64() / (reps * 8192) as f64 * 1e9
            };
            let plain = time(&|| xs.mapv(scalar));
            let here = unary_f64(name).map(|op| time(&|| map(xs.view(), &op, scalar)));
            let wide = lanes_f64(name).map(|op| time(&|| map(xs.view(), &op, scalar)));
            println!("{name} over [{lo}, {hi}]: scalar {plain:.1} ns, this machine's kernel {here:.1?} ns, wide's {wide:.1?} ns");
        }
    }
}

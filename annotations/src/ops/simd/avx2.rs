//! AVX2 and FMA: whether the processor has them, and the helpers the vector kernels are
//! written with (`std::arch` intrinsics in `#[target_feature]` functions, chosen at run time:
//! the build targets plain x86-64, and `wide`'s types pick their instructions when the crate
//! is compiled, so they stay SSE2 there). The compiler's own vectorisation of lane-by-lane
//! code was tried for `erf` and made it slower: it turned each region's branch into a blend
//! (every region evaluated for every group) and mixed in scalar code.
//!
//! Also here: `sin`, `cos`, `asin` and `acos` four lanes at a time, `wide`'s algorithms
//! (Agner Fog's vector class library) with fused multiply-adds and the processor's rounding,
//! where `wide`'s SSE2 build rounds and converts lane by lane.

// The coefficients as the vector class library prints them (more digits than an f64 holds).
#![allow(clippy::excessive_precision)]

use std::arch::x86_64::*;

/// Whether this processor has AVX2 and FMA (checked once, then cached by the standard library).
pub(crate) fn available() -> bool {
    is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
}

pub(crate) type D = __m256d;

#[target_feature(enable = "avx2,fma")]
pub(crate) fn sp(v: f64) -> D {
    _mm256_set1_pd(v)
}
#[target_feature(enable = "avx2,fma")]
pub(crate) fn add(a: D, b: D) -> D {
    _mm256_add_pd(a, b)
}
#[target_feature(enable = "avx2,fma")]
pub(crate) fn sub(a: D, b: D) -> D {
    _mm256_sub_pd(a, b)
}
#[target_feature(enable = "avx2,fma")]
pub(crate) fn mul(a: D, b: D) -> D {
    _mm256_mul_pd(a, b)
}
#[target_feature(enable = "avx2,fma")]
pub(crate) fn div(a: D, b: D) -> D {
    _mm256_div_pd(a, b)
}
/// Lanes where `a < v` (false for NaN).
#[target_feature(enable = "avx2,fma")]
pub(crate) fn lt(a: D, v: f64) -> D {
    _mm256_cmp_pd::<_CMP_LT_OQ>(a, sp(v))
}
/// `t` where `mask`, else `f`.
#[target_feature(enable = "avx2,fma")]
pub(crate) fn select(mask: D, t: D, f: D) -> D {
    _mm256_blendv_pd(f, t, mask)
}
#[target_feature(enable = "avx2,fma")]
pub(crate) fn any(mask: D) -> bool {
    _mm256_movemask_pd(mask) != 0
}
#[target_feature(enable = "avx2,fma")]
pub(crate) fn and(a: D, b: D) -> D {
    _mm256_and_pd(a, b)
}
/// `a` and not `b`.
#[target_feature(enable = "avx2,fma")]
pub(crate) fn and_not(a: D, b: D) -> D {
    _mm256_andnot_pd(b, a)
}
#[target_feature(enable = "avx2,fma")]
pub(crate) fn abs(a: D) -> D {
    and_not(a, sp(-0.0))
}
/// `|m|` with the sign of `x`.
#[target_feature(enable = "avx2,fma")]
pub(crate) fn signed_as(m: D, x: D) -> D {
    _mm256_or_pd(abs(m), and(x, sp(-0.0)))
}
/// `c[0] + z * (c[1] + z * (... + z * c[n-1]))`, innermost first, as msun writes it.
#[target_feature(enable = "avx2,fma")]
pub(crate) fn horner<const K: usize>(z: D, c: &[f64; K]) -> D {
    let mut acc = sp(c[K - 1]);
    for k in (0..K - 1).rev() {
        acc = add(sp(c[k]), mul(z, acc));
    }
    acc
}
/// `1 + z * (c[0] + z * (c[1] + ...))`: the denominators, whose constant term is 1.
#[target_feature(enable = "avx2,fma")]
pub(crate) fn horner1<const K: usize>(z: D, c: &[f64; K]) -> D {
    add(sp(1.0), mul(z, horner(z, c)))
}
/// `a * b + c`, rounded once.
#[target_feature(enable = "avx2,fma")]
pub(crate) fn mul_add(a: D, b: D, c: D) -> D {
    _mm256_fmadd_pd(a, b, c)
}
/// `c - a * b`, rounded once.
#[target_feature(enable = "avx2,fma")]
pub(crate) fn mul_neg_add(a: D, b: D, c: D) -> D {
    _mm256_fnmadd_pd(a, b, c)
}
#[target_feature(enable = "avx2,fma")]
pub(crate) fn xor(a: D, b: D) -> D {
    _mm256_xor_pd(a, b)
}
/// Lanes where `|a| <= v` (false for NaN).
#[target_feature(enable = "avx2,fma")]
pub(crate) fn abs_le(a: D, v: f64) -> D {
    _mm256_cmp_pd::<_CMP_LE_OQ>(abs(a), sp(v))
}
#[target_feature(enable = "avx2,fma")]
pub(crate) fn all(mask: D) -> bool {
    _mm256_movemask_pd(mask) == 0b1111
}

/// `f` over each group of four of `xs` whose lanes all pass `ok`, `scalar` over the other
/// groups and the last elements.
macro_rules! each_group {
    ($xs:expr, $out:expr, $ok:expr, $f:expr, $scalar:expr) => {{
        let (xs, out): (&[f64], &mut [f64]) = ($xs, $out);
        assert_eq!(xs.len(), out.len(), "one result per element");
        let whole = xs.len() / 4 * 4;
        for g in (0..whole).step_by(4) {
            // SAFETY: `g + 4 <= whole <= xs.len() == out.len()`.
            let x = unsafe { _mm256_loadu_pd(xs.as_ptr().add(g)) };
            if all($ok(x)) {
                unsafe { _mm256_storeu_pd(out.as_mut_ptr().add(g), $f(x)) };
            } else {
                for i in g..g + 4 {
                    out[i] = $scalar(xs[i]);
                }
            }
        }
        for i in whole..xs.len() {
            out[i] = $scalar(xs[i]);
        }
    }};
}

/// Largest `|x|` of the sin/cos kernel: its 3-part Cody-Waite reduction is exact to 2 ulp up
/// to 1e7 (measured), hopeless beyond 1e8.
pub(crate) const TRIG_LIMIT: f64 = 1e7;

#[target_feature(enable = "avx2,fma")]
pub(crate) fn sin_slice(xs: &[f64], out: &mut [f64]) {
    each_group!(xs, out, |x| abs_le(x, TRIG_LIMIT), |x| sin_cos(x).0, f64::sin)
}
#[target_feature(enable = "avx2,fma")]
pub(crate) fn cos_slice(xs: &[f64], out: &mut [f64]) {
    each_group!(xs, out, |x| abs_le(x, TRIG_LIMIT), |x| sin_cos(x).1, f64::cos)
}
#[target_feature(enable = "avx2,fma")]
pub(crate) fn asin_slice(xs: &[f64], out: &mut [f64]) {
    each_group!(xs, out, |x| abs_le(x, 1.0), |x| asin_acos(x).0, f64::asin)
}
#[target_feature(enable = "avx2,fma")]
pub(crate) fn acos_slice(xs: &[f64], out: &mut [f64]) {
    each_group!(xs, out, |x| abs_le(x, 1.0), |x| asin_acos(x).1, f64::acos)
}

/// (sin x, cos x) for `|x| <= TRIG_LIMIT`: `wide`'s `f64x4::sin_cos`.
#[target_feature(enable = "avx2,fma")]
fn sin_cos(x: D) -> (D, D) {
    const P_SIN: [f64; 6] =
        [-1.66666666666666307295E-1, 8.33333333332211858878E-3, -1.98412698295895385996E-4, 2.75573136213857245213E-6, -2.50507477628578072866E-8, 1.58962301576546568060E-10];
    const P_COS: [f64; 6] =
        [4.16666666666665929218E-2, -1.38888888888730564116E-3, 2.48015872888517045348E-5, -2.75573141792967388112E-7, 2.08757008419747316778E-9, -1.13585365213876817300E-11];
    const DP1: f64 = 7.853981554508209228515625E-1 * 2.;
    const DP2: f64 = 7.94662735614792836714E-9 * 2.;
    const DP3: f64 = 3.06161699786838294307E-17 * 2.;
    let xa = abs(x);
    let y = _mm256_round_pd::<{ _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC }>(mul(xa, sp(2.0 / std::f64::consts::PI)));
    // The quadrant's low bits: y (an integer under 2^51) + 2^52 holds it in its low mantissa.
    let q = _mm256_castpd_si256(add(y, sp(4503599627370496.0)));
    let r = mul_neg_add(y, sp(DP3), mul_neg_add(y, sp(DP2), mul_neg_add(y, sp(DP1), xa)));
    let r2 = mul(r, r);
    let s = mul_add(mul(r, r2), polynomial_5(r2, &P_SIN), r);
    let c = mul_add(mul(r2, r2), polynomial_5(r2, &P_COS), mul_neg_add(r2, sp(0.5), sp(1.0)));
    let swap = _mm256_castsi256_pd(_mm256_cmpeq_epi64(_mm256_and_si256(q, _mm256_set1_epi64x(1)), _mm256_set1_epi64x(1)));
    // sin: negative in quadrants 2 and 3, and for negative x.
    let sign_sin = and(xor(_mm256_castsi256_pd(_mm256_slli_epi64::<62>(q)), x), sp(-0.0));
    let sin = xor(select(swap, c, s), sign_sin);
    // cos: negative in quadrants 1 and 2.
    let sign_cos = _mm256_castsi256_pd(_mm256_slli_epi64::<62>(_mm256_and_si256(_mm256_add_epi64(q, _mm256_set1_epi64x(1)), _mm256_set1_epi64x(2))));
    let cos = xor(select(swap, s, c), sign_cos);
    (sin, cos)
}

/// `c[0] + c[1] x + ... + c[5] x^5` as `wide`'s `polynomial_5!` groups it.
#[target_feature(enable = "avx2,fma")]
fn polynomial_5(x: D, c: &[f64; 6]) -> D {
    let x2 = mul(x, x);
    let x4 = mul(x2, x2);
    let lo = mul_add(sp(c[1]), x, sp(c[0]));
    let hi = mul_add(mul_add(sp(c[5]), x, sp(c[4])), x4, lo);
    mul_add(mul_add(sp(c[3]), x, sp(c[2])), x2, hi)
}

/// (asin x, acos x) for `|x| <= 1`: `wide`'s `f64x4::asin_acos`.
#[target_feature(enable = "avx2,fma")]
fn asin_acos(x: D) -> (D, D) {
    const R: [f64; 5] = [2.853665548261061424989E1, -2.556901049652824852289E1, 6.968710824104713396794E0, -5.634242780008963776856E-1, 2.967721961301243206100E-3];
    const S: [f64; 4] = [3.424398657913078477438E2, -3.838770957603691357202E2, 1.470656354026814941758E2, -2.194779531642920639778E1];
    const P: [f64; 6] =
        [-8.198089802484824371615E0, 1.956261983317594739197E1, -1.626247967210700244449E1, 5.444622390564711410273E0, -6.019598008014123785661E-1, 4.253011369004428248960E-3];
    const Q: [f64; 5] = [-4.918853881490881290097E1, 1.395105614657485689735E2, -1.471791292232726029859E2, 7.049610280856842141659E1, -1.474091372988853791896E1];
    let xa = abs(x);
    let big = _mm256_cmp_pd::<_CMP_GE_OQ>(xa, sp(0.625));
    let x1 = select(big, sub(sp(1.0), xa), mul(xa, xa));
    let x2 = mul(x1, x1);
    let x3 = mul(x2, x1);
    let x4 = mul(x2, x2);
    let x5 = mul(x4, x1);
    let (do_big, do_small) = (any(big), !all(big));
    let (mut rx, mut sx, mut px, mut qx) = (sp(0.0), sp(0.0), sp(0.0), sp(0.0));
    if do_big {
        rx = add(mul_add(x3, sp(R[3]), mul(x2, sp(R[2]))), mul_add(x4, sp(R[4]), mul_add(x1, sp(R[1]), sp(R[0]))));
        sx = add(mul_add(x3, sp(S[3]), x4), mul_add(x2, sp(S[2]), mul_add(x1, sp(S[1]), sp(S[0]))));
    }
    if do_small {
        px = add(add(mul_add(x3, sp(P[3]), sp(P[0])), mul_add(x4, sp(P[4]), mul(x1, sp(P[1])))), mul_add(x5, sp(P[5]), mul(x2, sp(P[2]))));
        qx = add(add(mul_add(x4, sp(Q[4]), x5), mul_add(x3, sp(Q[3]), mul(x1, sp(Q[1])))), mul_add(x2, sp(Q[2]), sp(Q[0])));
    }
    let y1 = mul(div(select(big, rx, px), select(big, sx, qx)), x1);
    let (mut z1, mut z2) = (sp(0.0), sp(0.0));
    if do_big {
        let xb = _mm256_sqrt_pd(add(x1, x1));
        z1 = mul_add(xb, y1, xb);
    }
    if do_small {
        z2 = mul_add(xa, y1, xa);
    }
    let sign = and(x, sp(-0.0));
    let asin = xor(select(big, sub(sp(std::f64::consts::FRAC_PI_2), z1), z2), sign);
    let negative = _mm256_cmp_pd::<_CMP_LT_OQ>(x, sp(0.0));
    let acos_big = select(negative, sub(sp(std::f64::consts::PI), z1), z1);
    let acos_small = sub(sp(std::f64::consts::FRAC_PI_2), xor(z2, sign));
    (asin, select(big, acos_big, acos_small))
}

//! `erf` four lanes at a time, bit for bit the `libm` crate's scalar `erf` (FreeBSD msun's
//! `s_erf.c`, coefficients and the order of every operation kept): each lane takes its own
//! region's formula, and only the regions some lane needs are evaluated. No fused multiply-add
//! (rounding would differ), no reassociation; the two `exp` calls of the tail are msun's
//! `e_exp.c` the same way, for the arguments `erf` gives them. The C library's `erf` costs
//! about 20 ns an element on random arguments, most of it mispredicted branches between its
//! regions; this costs a fraction of that and gives the same bits, so results do not depend
//! on which path ran.
//!
//! Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved. Developed at SunPro, a
//! Sun Microsystems, Inc. business. Permission to use, copy, modify, and distribute this
//! software is freely granted, provided that this notice is preserved.

// The coefficients as msun prints them (more digits than an f64 holds, same values).
#![allow(clippy::excessive_precision)]
// Only the x86-64 kernel uses the coefficients; elsewhere `erf_slice` is the scalar function.
#![cfg_attr(not(target_arch = "x86_64"), allow(dead_code))]

const ERX: f64 = 8.45062911510467529297e-01;
const EFX8: f64 = 1.02703333676410069053e+00;
// erf on [0, 0.84375]: x + x * P(x^2) / Q(x^2).
const PP: [f64; 5] = [1.28379167095512558561e-01, -3.25042107247001499370e-01, -2.84817495755985104766e-02, -5.77027029648944159157e-03, -2.37630166566501626084e-05];
const QQ: [f64; 5] = [3.97917223959155352819e-01, 6.50222499887672944485e-02, 5.08130628187576562776e-03, 1.32494738004321644526e-04, -3.96022827877536812320e-06];
// erf on [0.84375, 1.25]: ERX + P(s) / Q(s), s = |x| - 1.
const PA: [f64; 7] = [
    -2.36211856075265944077e-03,
    4.14856118683748331666e-01,
    -3.72207876035701323847e-01,
    3.18346619901161753674e-01,
    -1.10894694282396677476e-01,
    3.54783043256182359371e-02,
    -2.16637559486879084300e-03,
];
const QA: [f64; 6] =
    [1.06420880400844228286e-01, 5.40397917702171048937e-01, 7.18286544141962662868e-02, 1.26171219808761642112e-01, 1.36370839120290507362e-02, 1.19844998467991074170e-02];
// erfc on [1.25, 1/0.35]: exp(-x^2 - 0.5625 + R(s) / S(s)) / x, s = 1 / x^2.
const RA: [f64; 8] = [
    -9.86494403484714822705e-03,
    -6.93858572707181764372e-01,
    -1.05586262253232909814e+01,
    -6.23753324503260060396e+01,
    -1.62396669462573470355e+02,
    -1.84605092906711035994e+02,
    -8.12874355063065934246e+01,
    -9.81432934416914548592e+00,
];
const SA: [f64; 8] = [
    1.96512716674392571292e+01,
    1.37657754143519042600e+02,
    4.34565877475229228821e+02,
    6.45387271733267880336e+02,
    4.29008140027567833386e+02,
    1.08635005541779435134e+02,
    6.57024977031928170135e+00,
    -6.04244152148580987438e-02,
];
// erfc on [1/0.35, 6]: the same form.
const RB: [f64; 7] = [
    -9.86494292470009928597e-03,
    -7.99283237680523006574e-01,
    -1.77579549177547519889e+01,
    -1.60636384855821916062e+02,
    -6.37566443368389627722e+02,
    -1.02509513161107724954e+03,
    -4.83519191608651397019e+02,
];
const SB: [f64; 7] = [
    3.03380607434824582924e+01,
    3.25792512996573918826e+02,
    1.53672958608443695994e+03,
    3.19985821950859553908e+03,
    2.55305040643316442583e+03,
    4.74528541206955367215e+02,
    -2.24409524465858183362e+01,
];

/// The smallest positive f64 whose high word is `hi`: msun's `ix < hi` on the high word of
/// `|x|` is `|x| < at(hi)`.
const fn at(hi: u64) -> f64 {
    f64::from_bits(hi << 32)
}

/// The `libm` crate's `erf` of each element of `xs`, bit for bit, into `out` (as long): four
/// lanes at a time where the processor has AVX2 and FMA, else the scalar function itself.
pub(crate) fn erf_slice(xs: &[f64], out: &mut [f64]) {
    assert_eq!(xs.len(), out.len(), "one result per element");
    #[cfg(target_arch = "x86_64")]
    if super::avx2_kernels() {
        // SAFETY: the processor has AVX2 and FMA, all that `vector::erf_slice` needs.
        return unsafe { vector::erf_slice(xs, out) };
    }
    for (o, &x) in out.iter_mut().zip(xs) {
        *o = libm::erf(x);
    }
}

/// The AVX2 kernels, on `simd/avx2.rs`'s helpers (only their plain multiplications and
/// additions: a fused multiply-add would round differently from the scalar function).
#[cfg(target_arch = "x86_64")]
mod vector {
    use super::*;
    use crate::ops::simd::avx2::*;
    use std::arch::x86_64::*;

    /// Elements taken at a time: their tail lanes are gathered into groups of four.
    const BLOCK: usize = 256;

    /// Each group of four runs the regions its lanes need. The tail (`1.25 <= |x| < 6`, two
    /// `exp`s) costs four times the rest, and Black-Scholes' arguments fall half near zero and
    /// half in the tail, so nearly every group would need both: tail lanes are gathered into
    /// groups of their own and computed after each block.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn erf_slice(xs: &[f64], out: &mut [f64]) {
        let (mut tail_x, mut tail_at) = ([0.0f64; BLOCK + 4], [0usize; BLOCK]);
        for (bx, bo) in xs.chunks(BLOCK).zip(out.chunks_mut(BLOCK)) {
            let whole = bx.len() / 4 * 4;
            let mut n = 0;
            for g in (0..whole).step_by(4) {
                // SAFETY: `g + 4 <= whole <= bx.len() == bo.len()`.
                let x = unsafe { _mm256_loadu_pd(bx.as_ptr().add(g)) };
                let (y, tail) = erf_except_tail(x);
                unsafe { _mm256_storeu_pd(bo.as_mut_ptr().add(g), y) };
                let mut bits = _mm256_movemask_pd(tail);
                while bits != 0 {
                    let lane = bits.trailing_zeros() as usize;
                    tail_x[n] = bx[g + lane];
                    tail_at[n] = g + lane;
                    n += 1;
                    bits &= bits - 1;
                }
            }
            // The last group is filled up with a tail argument; its results are dropped.
            tail_x[n..(n + 4).min(BLOCK + 4)].fill(2.0);
            for g in (0..n).step_by(4) {
                let mut y = [0.0; 4];
                // SAFETY: `g + 4 <= n + 3 < BLOCK + 4`, both arrays hold four f64s.
                unsafe { _mm256_storeu_pd(y.as_mut_ptr(), erf_tail(_mm256_loadu_pd(tail_x.as_ptr().add(g)))) };
                for (lane, &v) in y.iter().enumerate().take(n - g) {
                    bo[tail_at[g + lane]] = v;
                }
            }
            for (x, o) in bx[whole..].iter().zip(&mut bo[whole..]) {
                *o = libm::erf(*x);
            }
        }
    }

    /// The `libm` crate's `erf` lane by lane, bit for bit (NaN lanes give NaN), except lanes
    /// in the tail (`1.25 <= |x| < 6`), which give garbage; and which lanes those are.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn erf_except_tail(x: D) -> (D, D) {
        let ax = abs(x);
        let near = lt(ax, at(0x3ff40000)); // |x| < 1.25
        let tail = and_not(lt(ax, at(0x40180000)), near); // 1.25 <= |x| < 6
                                                          // |x| >= 6: sign(x) * (1 - 2^-1022), which is sign(x) * 1; NaN stays NaN.
        let nan = _mm256_cmp_pd::<_CMP_UNORD_Q>(x, x);
        let mut out = select(nan, x, signed_as(sp(1.0 - f64::MIN_POSITIVE), x));
        if any(near) {
            let small = lt(ax, at(0x3feb0000)); // |x| < 0.84375
            let mut y = sp(0.0);
            if any(and(near, small)) {
                let z = mul(x, x);
                let r = div(horner(z, &PP), horner1(z, &QQ));
                let tiny = lt(ax, at(0x3e300000)); // |x| < 2^-28
                let t = mul(sp(0.125), add(mul(sp(8.0), x), mul(sp(EFX8), x)));
                y = select(tiny, t, add(x, mul(x, r)));
            }
            if any(and_not(near, small)) {
                let s = sub(ax, sp(1.0));
                let erfc = sub(sp(1.0 - ERX), div(horner(s, &PA), horner1(s, &QA)));
                y = select(small, y, signed_as(sub(sp(1.0), erfc), x));
            }
            out = select(near, y, out);
        }
        (out, tail)
    }

    /// The `libm` crate's `erf` lane by lane, bit for bit, for lanes in `1.25 <= |x| < 6`.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn erf_tail(x: D) -> D {
        let ax = abs(x);
        let s = div(sp(1.0), mul(ax, ax));
        let mid = lt(ax, at(0x4006db6d)); // |x| < 1/0.35
        let (mut r, mut big_s) = (sp(0.0), sp(1.0));
        if any(mid) {
            r = horner(s, &RA);
            big_s = horner1(s, &SA);
        }
        if _mm256_movemask_pd(mid) != 0b1111 {
            r = select(mid, r, horner(s, &RB));
            big_s = select(mid, big_s, horner1(s, &SB));
        }
        // z: |x| with the low word cleared, so that z * z is exact.
        let z = and(ax, sp(f64::from_bits(0xffff_ffff_0000_0000)));
        let e1 = exp(sub(mul(sub(sp(0.0), z), z), sp(0.5625)));
        let e2 = exp(add(mul(sub(z, ax), add(z, ax)), div(r, big_s)));
        let erfc = div(mul(e1, e2), ax);
        signed_as(sub(sp(1.0), erfc), x)
    }

    /// The `libm` crate's `exp` (msun's `e_exp.c`) lane by lane, bit for bit, for
    /// `|x| < 708`: all `erf` gives it (-37 to -2 and about -0.1 to 0). Lanes outside give
    /// something finite.
    #[target_feature(enable = "avx2,fma")]
    pub(super) fn exp(x: D) -> D {
        let ax = abs(x);
        // k: libm's `(INVLN2 * x + HALF[sign]) as i32` where |x| >= 1.5 ln2, else sign(x)
        // where |x| > ln2 / 2, else 0.
        let t = add(mul(sp(INVLN2), x), signed_as(sp(0.5), x));
        let t = _mm256_max_pd(_mm256_min_pd(t, sp(1000.0)), sp(-1000.0));
        let round = _mm256_round_pd::<{ _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC }>(t);
        let one = signed_as(sp(1.0), x);
        let kf = select(lt(ax, at(0x3ff0a2b2)), select(lt(ax, at(0x3fd62e43)), sp(0.0), one), round);
        // k = 0 goes through the same lines: x - 0 * LN2HI = x and lo = 0.
        let hi = sub(x, mul(kf, sp(LN2HI)));
        let lo = mul(kf, sp(LN2LO));
        let r = sub(hi, lo);
        let rr = mul(r, r);
        let c = sub(r, mul(rr, horner(rr, &P)));
        let y = add(sp(1.0), add(sub(div(mul(r, c), sub(sp(2.0), c)), lo), hi));
        // 2^k, built from k's bits as scalbn does.
        let k = _mm256_cvtepi32_epi64(_mm256_cvtpd_epi32(kf));
        let scale = _mm256_castsi256_pd(_mm256_slli_epi64::<52>(_mm256_add_epi64(k, _mm256_set1_epi64x(0x3ff))));
        // |x| <= 2^-28: 1 + x.
        select(lt(ax, at(0x3e300001)), add(sp(1.0), x), mul(y, scale))
    }
}

const LN2HI: f64 = 6.93147180369123816490e-01;
const LN2LO: f64 = 1.90821492927058770002e-10;
// 1 / ln 2, msun's 0x3ff71547652b82fe: the same f64 as `LOG2_E`.
const INVLN2: f64 = std::f64::consts::LOG2_E;
const P: [f64; 5] = [1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05, -1.65339022054652515390e-06, 4.13813679705723846039e-08];

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether this processor runs the vector kernels (else these tests compare the scalar
    /// function with itself, and say so).
    fn has_avx2() -> bool {
        let yes = crate::ops::simd::avx2_kernels();
        if !yes {
            eprintln!("no AVX2 and FMA on this processor: erf runs the scalar function, nothing vector to compare");
        }
        yes
    }

    fn check(xs: &[f64]) {
        let mut got = vec![0.0; xs.len()];
        erf_slice(xs, &mut got);
        for (&g, &x) in got.iter().zip(xs) {
            let want = libm::erf(x);
            assert!(g.to_bits() == want.to_bits() || (g.is_nan() && want.is_nan()), "erf({x:e} = {:#x}) = {g:e}, libm {want:e}", x.to_bits());
        }
    }

    #[test]
    fn the_same_bits_as_libm_over_every_region() {
        has_avx2();
        let mut rs = crate::io::random::RandomState::new(3);
        for (lo, hi) in [(-8.0, 8.0), (-1.3, 1.3), (0.8, 1.3), (1.2, 3.0), (2.8, 6.1), (-1e-7, 1e-7), (-30.0, 30.0)] {
            // An odd length: blocks of 256, then a last group of three for the scalar function.
            let xs: Vec<f64> = (0..200_003).map(|_| rs.uniform(lo, hi)).collect();
            check(&xs);
        }
    }

    #[test]
    fn the_same_bits_as_libm_at_the_region_edges_and_special_values() {
        has_avx2();
        let mut xs = vec![0.0, -0.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, f64::MIN_POSITIVE, 5e-324, -5e-324, f64::MAX, 1.0, -1.0, 28.0];
        for hi in [0x3e300000u64, 0x3feb0000, 0x3ff40000, 0x4006db6d, 0x40180000] {
            let edge = at(hi);
            for v in [edge, f64::from_bits(edge.to_bits() - 1), f64::from_bits(edge.to_bits() + 1)] {
                xs.extend([v, -v]);
            }
        }
        // Each value beside lanes of every region, in every position.
        let others = [0.3, 1.0, 2.0, 4.0];
        for &v in &xs {
            for pos in 0..4 {
                let mut lanes = others;
                lanes[pos] = v;
                check(&lanes);
            }
        }
    }

    #[test]
    fn exp_gives_the_same_bits_as_libm_where_erf_calls_it() {
        if !has_avx2() {
            return;
        }
        #[cfg(target_arch = "x86_64")]
        {
            use std::arch::x86_64::{_mm256_loadu_pd, _mm256_storeu_pd};
            let mut rs = crate::io::random::RandomState::new(9);
            for (lo, hi) in [(-37.0, -1.0), (-0.2, 0.0), (-0.4, 0.4), (-1.1, 1.1), (-1e-8, 1e-8)] {
                for _ in 0..50_000 {
                    let v: [f64; 4] = std::array::from_fn(|_| rs.uniform(lo, hi));
                    let mut got = [0.0; 4];
                    // SAFETY: AVX2 is there (checked above); both arrays hold four f64s.
                    unsafe { _mm256_storeu_pd(got.as_mut_ptr(), vector::exp(_mm256_loadu_pd(v.as_ptr()))) };
                    for (g, x) in got.into_iter().zip(v) {
                        assert_eq!(g.to_bits(), libm::exp(x).to_bits(), "exp({x:e})");
                    }
                }
            }
        }
    }
}

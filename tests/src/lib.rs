//! Shared helpers of Bach's end-to-end tests: seeded inputs, tolerant comparisons, and
//! independent eager (plain ndarray) implementations of the evaluation workloads, written
//! from the formulas in `shared/workloads.md` without calling Bach.

use ndarray::{Array1, ArrayD, Dimension, Zip};

// ---------------------------------------------------------------------------------------------
// Seeded inputs
// ---------------------------------------------------------------------------------------------

/// A small 64-bit LCG (Knuth's MMIX constants): independent of Bach's own RandomState.
#[derive(Clone, Debug)]
pub struct Lcg(u64);

impl Lcg {
    pub fn new(seed: u64) -> Self {
        let mut l = Lcg(seed ^ 0x9E37_79B9_7F4A_7C15);
        l.next_u64();
        l
    }
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        self.0
    }
    /// Uniform in [0, 1) with 53 bits.
    pub fn unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.unit()
    }
    pub fn below(&mut self, n: usize) -> usize {
        ((self.next_u64() >> 33) as usize) % n.max(1)
    }
    pub fn vec(&mut self, n: usize, lo: f64, hi: f64) -> Vec<f64> {
        (0..n).map(|_| self.uniform(lo, hi)).collect()
    }
}

/// `n` uniform values in [lo, hi) from `seed`.
pub fn uniform_vec(seed: u64, n: usize, lo: f64, hi: f64) -> Vec<f64> {
    Lcg::new(seed).vec(n, lo, hi)
}

/// Values that exercise the corners of IEEE arithmetic.
pub const SPECIALS: [f64; 12] = [0.0, -0.0, 1.0, -1.0, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e-310, -1e-310, 1e300, -1e300, 0.5];

/// Random values in [lo, hi) with the special values spliced in at seeded positions (when
/// `specials` is true and there is room).
pub fn mixed_vec(seed: u64, n: usize, lo: f64, hi: f64, specials: bool) -> Vec<f64> {
    let mut rng = Lcg::new(seed);
    let mut v = rng.vec(n, lo, hi);
    if specials && n > 0 {
        for (k, s) in SPECIALS.iter().enumerate() {
            let at = if n > SPECIALS.len() * 4 { rng.below(n) } else { k % n };
            v[at] = *s;
        }
    }
    v
}

/// An ndarray array of `shape` filled from `v` (row-major).
pub fn nd(shape: &[usize], v: Vec<f64>) -> ArrayD<f64> {
    ArrayD::from_shape_vec(shape.to_vec(), v).expect("shape matches data")
}

pub fn to_f32(a: &ArrayD<f64>) -> ArrayD<f32> {
    a.mapv(|x| x as f32)
}

// ---------------------------------------------------------------------------------------------
// Comparisons
// ---------------------------------------------------------------------------------------------

/// Float element behaviour the comparisons need, for f64 and f32.
pub trait TestFloat: Copy + PartialEq + PartialOrd + std::fmt::Debug + Send + Sync + 'static {
    fn is_nan_(self) -> bool;
    fn to_f64_(self) -> f64;
    fn bits(self) -> u64;
}
impl TestFloat for f64 {
    fn is_nan_(self) -> bool {
        self.is_nan()
    }
    fn to_f64_(self) -> f64 {
        self
    }
    fn bits(self) -> u64 {
        self.to_bits()
    }
}
impl TestFloat for f32 {
    fn is_nan_(self) -> bool {
        self.is_nan()
    }
    fn to_f64_(self) -> f64 {
        self as f64
    }
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
}

/// Whether `got` equals `want` within `rel` relative error (NaN equals NaN; infinities must
/// be equal). `scale` is a floor under the magnitude the error is relative to.
pub fn close<T: TestFloat>(got: T, want: T, rel: f64, scale: f64) -> bool {
    let (g, w) = (got.to_f64_(), want.to_f64_());
    if g.is_nan() || w.is_nan() {
        return g.is_nan() && w.is_nan();
    }
    if g == w {
        return true;
    }
    if g.is_infinite() || w.is_infinite() {
        return false;
    }
    (g - w).abs() <= rel * g.abs().max(w.abs()).max(scale)
}

/// Element by element: shapes equal and every element `close`. Panics naming the first
/// differing index.
#[track_caller]
pub fn assert_close<T: TestFloat>(what: &str, got: &ArrayD<T>, want: &ArrayD<T>, rel: f64) {
    assert_close_scaled(what, got, want, rel, 0.0)
}

#[track_caller]
pub fn assert_close_scaled<T: TestFloat>(what: &str, got: &ArrayD<T>, want: &ArrayD<T>, rel: f64, scale: f64) {
    assert_eq!(got.shape(), want.shape(), "{what}: shapes differ");
    let mut bad = 0usize;
    let mut first = None;
    for ((i, &g), &w) in got.indexed_iter().zip(want.iter()) {
        if !close(g, w, rel, scale) {
            bad += 1;
            if first.is_none() {
                first = Some((i.slice().to_vec(), g, w));
            }
        }
    }
    if let Some((i, g, w)) = first {
        panic!("{what}: {bad} of {} elements differ beyond {rel:e}; first at {i:?}: got {g:?}, want {w:?}", got.len());
    }
}

/// Bit-for-bit equality (NaN equals NaN of any payload; -0.0 differs from 0.0).
#[track_caller]
pub fn assert_exact<T: TestFloat>(what: &str, got: &ArrayD<T>, want: &ArrayD<T>) {
    assert_eq!(got.shape(), want.shape(), "{what}: shapes differ");
    let mut bad = 0usize;
    let mut first = None;
    for ((i, &g), &w) in got.indexed_iter().zip(want.iter()) {
        let same = (g.is_nan_() && w.is_nan_()) || g.bits() == w.bits();
        if !same {
            bad += 1;
            if first.is_none() {
                first = Some((i.slice().to_vec(), g, w));
            }
        }
    }
    if let Some((i, g, w)) = first {
        panic!("{what}: {bad} of {} elements differ; first at {i:?}: got {g:?}, want {w:?}", got.len());
    }
}

/// Compensated (Neumaier) sum in f64: a reference far more accurate than pairwise summation.
pub fn exact_sum(xs: impl IntoIterator<Item = f64>) -> f64 {
    let mut s = 0.0f64;
    let mut c = 0.0f64;
    for x in xs {
        let t = s + x;
        if s.abs() >= x.abs() {
            c += (s - t) + x;
        } else {
            c += (x - t) + s;
        }
        s = t;
    }
    s + c
}

/// Sum of absolute values: the scale rounding errors of a sum are relative to.
pub fn abs_sum(xs: impl IntoIterator<Item = f64>) -> f64 {
    xs.into_iter().map(f64::abs).sum()
}

// ---------------------------------------------------------------------------------------------
// Workloads, eagerly, from the formulas of shared/workloads.md
// ---------------------------------------------------------------------------------------------

/// Black-Scholes constants (the original's unusual values).
pub const BS_C05: f64 = 3.0;
pub const BS_C10: f64 = 1.5;

/// Black-Scholes call and put prices, element by element in plain Rust over ndarray.
pub fn black_scholes_eager(price: &Array1<f64>, strike: &Array1<f64>, t: &Array1<f64>, rate: &Array1<f64>, vol: &Array1<f64>) -> (Array1<f64>, Array1<f64>) {
    let n = price.len();
    let invsqrt2 = 1.0 / 2f64.sqrt();
    let mut call = Array1::zeros(n);
    let mut put = Array1::zeros(n);
    for i in 0..n {
        let (p, k, t, r, v) = (price[i], strike[i], t[i], rate[i], vol[i]);
        let rsig = v * v * BS_C05 + r;
        let vol_sqrt = t.sqrt() * v;
        let d1 = ((p / k).log2() + rsig * t) / vol_sqrt;
        let d2 = d1 - vol_sqrt;
        let big_d1 = BS_C05 + BS_C05 * libm::erf(d1 * invsqrt2);
        let big_d2 = BS_C05 + BS_C05 * libm::erf(d2 * invsqrt2);
        let e_rt = (-r * t).exp();
        call[i] = p * big_d1 - e_rt * k * big_d2;
        put[i] = e_rt * k * (BS_C10 - big_d2) - p * (BS_C10 - big_d1);
    }
    (call, put)
}

pub const HAV_LAT1: f64 = 0.70984286;
pub const HAV_LON1: f64 = 1.23892197;
pub const HAV_MILES: f64 = 3959.0;

/// Haversine distance (miles) from (lat1, lon1) to every (lat2, lon2), eagerly.
pub fn haversine_eager(lat2: &Array1<f64>, lon2: &Array1<f64>) -> Array1<f64> {
    let lat1_cos = HAV_LAT1.cos();
    Zip::from(lat2).and(lon2).map_collect(|&la, &lo| {
        let dlat = ((la - HAV_LAT1) / 2.0).sin().powi(2);
        let dlon = ((lo - HAV_LON1) / 2.0).sin().powi(2);
        let a = dlat + la.cos() * lat1_cos * dlon;
        2.0 * a.sqrt().asin() * HAV_MILES
    })
}

/// The accelerators the device conformance suite runs on: always the emulated accelerator,
/// and two and four of them (each with `emulated_capacity` bytes, small enough to make stages
/// page), and a CUDA GPU, alone and as two logical devices (`cuda:0,cuda:0`), when this
/// machine has one. With `BACH_REQUIRE_CUDA=1` a missing GPU fails instead of being
/// skipped (for runs on a GPU host). Each comes as a fresh session on (CPU, accelerator)
/// with the `greedy` policy: the suite tests what the device does with the ops it is given.
pub fn accelerator_sessions(emulated_capacity: u64) -> Vec<(String, std::sync::Arc<bach_runtime::Session>)> {
    use bach_runtime::{DeviceChoice, Devices, Policy, Session};
    let greedy = |d: Devices| {
        let s = Session::with_devices(d);
        s.update_config(|c| c.policy = Policy::Greedy);
        s
    };
    let emulated = |count: usize| Devices::select(DeviceChoice::EmulatedSet { count, memory: Some(emulated_capacity) }).expect("emulated accelerators are always there");
    let mut out = vec![
        ("emulated accelerator".to_string(), greedy(Devices::select(DeviceChoice::Emulated(Some(emulated_capacity))).expect("the emulated accelerator is always there"))),
        ("2 emulated accelerators".to_string(), greedy(emulated(2))),
        ("4 emulated accelerators".to_string(), greedy(emulated(4))),
    ];
    match Devices::select(DeviceChoice::Cuda) {
        Ok(d) => {
            out.push(("cuda".to_string(), greedy(d)));
            // Two logical devices on GPU 0: the data-parallel path, checkable on a one-GPU host.
            match Devices::select(DeviceChoice::CudaSet(vec![0, 0])) {
                Ok(d) => out.push(("cuda:0,cuda:0".to_string(), greedy(d))),
                Err(why) => panic!("one GPU opened but not as two logical devices: {why}"),
            }
        }
        Err(why) if std::env::var("BACH_REQUIRE_CUDA").as_deref() == Ok("1") => panic!("BACH_REQUIRE_CUDA=1 but there is no GPU: {why}"),
        Err(why) => eprintln!("device conformance: CUDA skipped (no GPU: {why})"),
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_sum_beats_naive() {
        let xs = [1e16, 1.0, -1e16, 1.0];
        assert_eq!(exact_sum(xs), 2.0);
    }

    #[test]
    fn close_handles_nan_and_inf() {
        assert!(close(f64::NAN, f64::NAN, 0.0, 0.0));
        assert!(!close(f64::NAN, 1.0, 1.0, 0.0));
        assert!(close(f64::INFINITY, f64::INFINITY, 0.0, 0.0));
        assert!(!close(f64::INFINITY, 1e308, 1.0, 0.0));
        assert!(close(1.0, 1.0 + 1e-13, 1e-12, 0.0));
        assert!(!close(1.0, 1.0 + 1e-11, 1e-12, 0.0));
    }

    #[test]
    fn eager_workloads_give_the_reference_values() {
        let four = Array1::from_elem(3, 4.0);
        let (call, put) = black_scholes_eager(&four, &four, &four, &four, &four);
        for i in 0..3 {
            assert!(close(call[i], 23.999997299155808, 1e-12, 0.0), "{}", call[i]);
            assert!(close(put[i], 17.999997974366856, 1e-12, 0.0), "{}", put[i]);
        }
        let c = Array1::from_elem(3, 0.0698132);
        let d = haversine_eager(&c, &c);
        for &x in &d {
            assert!(close(x, 4839.959830633562, 1e-12, 0.0), "{x}");
        }
    }
}

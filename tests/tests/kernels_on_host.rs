//! The library's hand-written CUDA kernels run on the host, so their logic is checked without a
//! GPU: a kernel's source is compiled as C++ (`c++`, or `$CXX`) under a small shim (`__global__`
//! dropped, `threadIdx`/`blockIdx`/`blockDim`/`gridDim` as globals, the CUDA intrinsics it uses
//! written out), and a launch is a loop over every block and thread in turn. That is exact for
//! kernels whose threads share nothing (no `__shared__`, no `__syncthreads`), which is what is
//! checked here; NVRTC compiling the same source is `nvrtc.rs`, and the GPU itself is the GPU
//! bundle's. Without a C++ compiler the tests pass saying loudly that they were skipped, or fail
//! under `BACH_REQUIRE_CXX=1` (CI sets it).

use std::path::{Path, PathBuf};
use std::process::Command;

use ndarray::{Array1, Array2};

/// The C++ compiler, or None (after saying so) when there is none.
fn cxx(test: &str) -> Option<String> {
    let cxx = std::env::var("CXX").unwrap_or_else(|_| "c++".into());
    match Command::new(&cxx).arg("--version").output() {
        Ok(out) if out.status.success() => Some(cxx),
        _ if std::env::var("BACH_REQUIRE_CXX").as_deref() == Ok("1") => panic!("BACH_REQUIRE_CXX=1 but `{cxx}` does not run (apt-get install g++)"),
        _ => {
            eprintln!("\n**** {test}: skipped: no C++ compiler (`{cxx}`) ****\n");
            None
        }
    }
}

/// What CUDA gives a kernel, for a host build: thread coordinates and the intrinsics used.
const SHIM: &str = r#"
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
struct BachDim { unsigned int x, y, z; };
static BachDim threadIdx, blockIdx, blockDim, gridDim;
#define __global__
static double __longlong_as_double(long long v) { double d; std::memcpy(&d, &v, sizeof d); return d; }
"#;

/// Compile `source` plus `main` into an executable in `dir`.
fn build(cxx: &str, dir: &Path, source: &str, main: &str) -> PathBuf {
    let src = dir.join("kernel_on_host.cpp");
    std::fs::write(&src, format!("{SHIM}\n{source}\n{main}")).unwrap();
    let exe = dir.join("kernel_on_host");
    let out = Command::new(cxx).args(["-O1", "-std=c++17", "-o"]).arg(&exe).arg(&src).output().unwrap();
    assert!(out.status.success(), "{cxx} failed on the kernel:\n{}", String::from_utf8_lossy(&out.stderr));
    exe
}

/// Run a kernel's host build: `input` written to a file in `dir`, then `exe IN OUT args...`;
/// its output file as 8-byte little-endian words.
fn run_on_host(exe: &Path, dir: &Path, input: Vec<u8>, args: &[String]) -> Vec<[u8; 8]> {
    let (inp, out) = (dir.join("in.bin"), dir.join("out.bin"));
    std::fs::write(&inp, input).unwrap();
    let status = Command::new(exe).arg(&inp).arg(&out).args(args).status().unwrap();
    assert!(status.success(), "the kernel's host build failed: {status}");
    std::fs::read(&out).unwrap().chunks_exact(8).map(|c| c.try_into().unwrap()).collect()
}

/// `knn_vote_f64` over every row, launched as `grid` blocks of `block` threads.
const KNN_MAIN: &str = r#"
int main(int argc, char** argv) {
    unsigned long long rows = strtoull(argv[3], 0, 10), cols = strtoull(argv[4], 0, 10);
    double k = atof(argv[5]);
    std::vector<double> d2(rows * cols);
    std::vector<long long> labels(cols), out(rows, -999);
    FILE* f = fopen(argv[1], "rb");
    if (fread(d2.data(), 8, rows * cols, f) != rows * cols || fread(labels.data(), 8, cols, f) != cols) return 2;
    fclose(f);
    gridDim.x = atoi(argv[6]);
    blockDim.x = atoi(argv[7]);
    for (blockIdx.x = 0; blockIdx.x < gridDim.x; ++blockIdx.x)
        for (threadIdx.x = 0; threadIdx.x < blockDim.x; ++threadIdx.x)
            knn_vote_f64(rows, cols, d2.data(), labels.data(), out.data(), k);
    FILE* o = fopen(argv[2], "wb");
    fwrite(out.data(), 8, rows, o);
    fclose(o);
    return 0;
}
"#;

/// A small xorshift stream: the same inputs on every run.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[test]
fn the_cuda_knn_vote_gives_the_cpu_vote() {
    let Some(cxx) = cxx("the_cuda_knn_vote_gives_the_cpu_vote") else { return };
    let dir = std::env::temp_dir().join(format!("bach-kernels-on-host-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = build(&cxx, &dir, bach::ml::KNN_VOTE_SOURCE, KNN_MAIN);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut cases = 0;
    for (rows, cols) in [(37usize, 50usize), (5, 32), (64, 200), (1, 7)] {
        for k in [1usize, 2, 3, 5, 7, 32] {
            if k > cols || k > bach::ml::KNN_GPU_MAX_K {
                continue;
            }
            for levels in [4u64, 1000] {
                // Few distance levels make ties in distance; NaN and infinities are in the mix;
                // labels include negatives and ties in the vote.
                let d2 = Array2::from_shape_fn((rows, cols), |_| match rng.below(40) {
                    0 => f64::NAN,
                    1 => f64::INFINITY,
                    _ => rng.below(levels) as f64 * 0.25,
                });
                let labels = Array1::from_shape_fn(cols, |_| rng.below(5) as i64 - 2);
                let want = bach::ml::numerics::knn_vote(d2.view(), labels.view(), k);
                let mut bytes: Vec<u8> = d2.iter().flat_map(|v| v.to_le_bytes()).collect();
                bytes.extend(labels.iter().flat_map(|v| v.to_le_bytes()));
                // Fewer threads than rows: the grid-stride loop takes the rest.
                let got: Vec<i64> = run_on_host(&exe, &dir, bytes, &[rows, cols, k, 3, 4].map(|v| v.to_string())).into_iter().map(i64::from_le_bytes).collect();
                assert_eq!(got, want.to_vec(), "{rows} x {cols}, k = {k}, {levels} levels");
                cases += 1;
            }
        }
    }
    assert!(cases >= 30, "{cases} cases");
    let _ = std::fs::remove_dir_all(&dir);
}

/// `radius_bits_f64` over the rows in blocks of `block_rows` (as the device's cross launch
/// cuts them), each block launched as `grid` blocks of `block` threads.
const RADIUS_MAIN: &str = r#"
int main(int argc, char** argv) {
    unsigned long long rows = strtoull(argv[3], 0, 10), block_rows = strtoull(argv[4], 0, 10);
    double eps2 = atof(argv[5]);
    unsigned long long words = (rows + 63) / 64;
    std::vector<double> c(rows * rows), sq(rows);
    std::vector<long long> out(rows * words, -999);
    FILE* f = fopen(argv[1], "rb");
    if (fread(c.data(), 8, rows * rows, f) != rows * rows || fread(sq.data(), 8, rows, f) != rows) return 2;
    fclose(f);
    gridDim.x = atoi(argv[6]);
    blockDim.x = atoi(argv[7]);
    for (unsigned long long first = 0; first < rows; first += block_rows) {
        unsigned long long r = rows - first < block_rows ? rows - first : block_rows;
        for (blockIdx.x = 0; blockIdx.x < gridDim.x; ++blockIdx.x)
            for (threadIdx.x = 0; threadIdx.x < blockDim.x; ++threadIdx.x)
                radius_bits_f64(r, rows, first, c.data() + first * rows, nullptr, nullptr, sq.data(), out.data(), eps2);
    }
    FILE* o = fopen(argv[2], "wb");
    fwrite(out.data(), 8, rows * words, o);
    fclose(o);
    return 0;
}
"#;

#[test]
fn the_cuda_neighbourhood_bits_give_the_cpu_bits() {
    let Some(cxx) = cxx("the_cuda_neighbourhood_bits_give_the_cpu_bits") else { return };
    let dir = std::env::temp_dir().join(format!("bach-kernels-on-host-radius-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = build(&cxx, &dir, bach::ml::RADIUS_BITS_SOURCE, RADIUS_MAIN);
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for (n, d, eps, block_rows) in [(150usize, 3usize, 0.3f64, 64usize), (64, 2, 0.5, 64), (129, 4, 0.45, 50), (5, 2, 0.0, 2), (1, 3, 1.0, 1), (300, 2, 0.2, 1000)] {
        // Points in a few clumps; eps kept away from every distance (checked) so that the
        // order of the products' sums cannot move a neighbour.
        let x = Array2::from_shape_fn((n, d), |(i, _)| (i % 5) as f64 * 0.7 + rng.below(1 << 20) as f64 / (1u64 << 20) as f64 * 0.5);
        let c = x.dot(&x.t());
        let sq = bach::ml::numerics::row_sq_norms(x.view());
        let margin = (0..n)
            .flat_map(|i| (0..n).map(move |j| (i, j)))
            .filter(|(i, j)| i != j)
            .map(|(i, j)| ((sq[i] + sq[j] - 2.0 * c[[i, j]]) - eps * eps).abs())
            .fold(f64::INFINITY, f64::min);
        assert!(margin > 1e-9, "points too near the boundary: {margin:e}");
        let want = bach::ml::numerics::radius_bits(x.view(), sq.view(), eps);
        let mut bytes: Vec<u8> = c.iter().flat_map(|v| v.to_le_bytes()).collect();
        bytes.extend(sq.iter().flat_map(|v| v.to_le_bytes()));
        // Fewer threads than words: the grid-stride loop takes the rest.
        let args = [n.to_string(), block_rows.to_string(), format!("{:e}", eps * eps), "3".into(), "4".into()];
        let got: Vec<i64> = run_on_host(&exe, &dir, bytes, &args).into_iter().map(i64::from_le_bytes).collect();
        assert_eq!(got, want.iter().copied().collect::<Vec<i64>>(), "{n} points in {d}-d, eps {eps}, blocks of {block_rows} rows");
        let neighbours: usize = got.iter().map(|w| w.count_ones() as usize).sum();
        assert!(n < 100 || (neighbours > 2 * n && neighbours < n * n / 2), "{n} points, {neighbours} neighbour pairs: not a telling case");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// `bach_eigen_check` over the matrix, then `bach_eigen_order` over syevd's outputs, each as
/// `grid` blocks of `block` threads.
const EIGEN_MAIN: &str = r#"
int main(int argc, char** argv) {
    unsigned long long d = strtoull(argv[3], 0, 10);
    std::vector<double> a(d * d), w(d), v(d * d), out((d + 1) * d, -999.0);
    FILE* f = fopen(argv[1], "rb");
    if (fread(a.data(), 8, d * d, f) != d * d || fread(w.data(), 8, d, f) != d || fread(v.data(), 8, d * d, f) != d * d) return 2;
    fclose(f);
    int flags[2] = {0, 0};
    gridDim.x = atoi(argv[4]);
    blockDim.x = atoi(argv[5]);
    for (blockIdx.x = 0; blockIdx.x < gridDim.x; ++blockIdx.x)
        for (threadIdx.x = 0; threadIdx.x < blockDim.x; ++threadIdx.x)
            bach_eigen_check(d, a.data(), flags);
    for (blockIdx.x = 0; blockIdx.x < gridDim.x; ++blockIdx.x)
        for (threadIdx.x = 0; threadIdx.x < blockDim.x; ++threadIdx.x)
            bach_eigen_order(d, w.data(), v.data(), flags, out.data());
    FILE* o = fopen(argv[2], "wb");
    fwrite(out.data(), 8, (d + 1) * d, o);
    fclose(o);
    return 0;
}
"#;

#[test]
fn the_cuda_eigen_ordering_gives_the_cpu_layout() {
    let Some(cxx) = cxx("the_cuda_eigen_ordering_gives_the_cpu_layout") else { return };
    let dir = std::env::temp_dir().join(format!("bach-kernels-on-host-eigen-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = build(&cxx, &dir, bach_runtime::cuda::EIGEN_SOURCE, EIGEN_MAIN);
    let mut rng = Rng(0x1234_5678_9abc_def1);
    for (d, poison) in [(6usize, None), (1, None), (9, Some((7usize, 2usize))), (9, Some((2, 7))), (4, Some((3, 3)))] {
        let x = Array2::from_shape_fn((d + 3, d), |_| rng.below(1000) as f64 / 250.0 - 2.0);
        let mut a = x.t().dot(&x);
        if let Some((i, j)) = poison {
            a[[i, j]] = if i == j { f64::INFINITY } else { f64::NAN };
        }
        let lower_poisoned = poison.is_some_and(|(i, j)| j <= i);
        let clean = a.mapv(|v| if v.is_finite() { v } else { 0.0 });
        // What syevd hands back: eigenvalues ascending, eigenvectors as the columns of a
        // column-major matrix (each column contiguous), with whatever signs.
        let (values, vectors) = bach::ml::numerics::symmetric_eigen(clean.view());
        let w: Vec<f64> = values.iter().rev().copied().collect();
        let mut v = Vec::with_capacity(d * d);
        for c in 0..d {
            let sign = if rng.below(2) == 0 { -1.0 } else { 1.0 };
            v.extend(vectors.column(d - 1 - c).iter().map(|e| sign * e));
        }
        let bytes: Vec<u8> = a.iter().chain(&w).chain(&v).flat_map(|e| e.to_le_bytes()).collect();
        let got: Vec<f64> = run_on_host(&exe, &dir, bytes, &[d.to_string(), "2".into(), "3".into()]).into_iter().map(f64::from_le_bytes).collect();
        if lower_poisoned {
            assert!(got.iter().all(|e| e.is_nan()), "d = {d}, {poison:?}: {got:?}");
            continue;
        }
        let mut want: Vec<f64> = values.to_vec();
        want.extend(vectors.t().iter().copied());
        assert_eq!(got, want, "d = {d}, {poison:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every unary op's generated kernel (`unary_source`, f64 and f32) against the CPU's Rust
/// function over signed zeros, halves, infinities, NaN, subnormals and a spread of values:
/// the C expressions (`signum` of -0, `round` of halves, `recip`) and the `f`-suffixed f32
/// calls. Bit for bit where the op is exact; within 2 ulp where the host's C library and
/// Rust's may round differently (the GPU's own accuracy is the GPU bundle's to check).
#[test]
fn the_cuda_unary_kernels_give_the_cpu_results() {
    let Some(cxx) = cxx("the_cuda_unary_kernels_give_the_cpu_results") else { return };
    type Case = (&'static str, fn(f64) -> f64, fn(f32) -> f32, bool);
    let cases: Vec<Case> = vec![
        ("sqrt", f64::sqrt, f32::sqrt, true),
        ("exp", f64::exp, f32::exp, false),
        ("ln", f64::ln, f32::ln, false),
        ("abs", f64::abs, f32::abs, true),
        ("neg", |x| -x, |x| -x, true),
        ("tanh", f64::tanh, f32::tanh, false),
        ("sinh", f64::sinh, f32::sinh, false),
        ("cosh", f64::cosh, f32::cosh, false),
        ("exp_m1", f64::exp_m1, f32::exp_m1, false),
        ("ln_1p", f64::ln_1p, f32::ln_1p, false),
        ("cbrt", f64::cbrt, f32::cbrt, false),
        ("exp2", f64::exp2, f32::exp2, false),
        ("floor", f64::floor, f32::floor, true),
        ("ceil", f64::ceil, f32::ceil, true),
        ("round", f64::round, f32::round, true),
        ("trunc", f64::trunc, f32::trunc, true),
        ("recip", f64::recip, f32::recip, true),
        ("signum", f64::signum, f32::signum, true),
    ];
    let mut calls = String::new();
    for (k, (name, ..)) in cases.iter().enumerate() {
        calls.push_str(&format!("    if (op == {k}) {{ {name}_f64(n, o64.data(), x64.data(), 1, n); {name}_f32(n, o32.data(), x32.data(), 1, n); }}\n"));
    }
    let main = format!(
        r#"
int main(int argc, char** argv) {{
    int op = atoi(argv[3]);
    unsigned long long n = strtoull(argv[4], 0, 10);
    std::vector<double> x64(n), o64(n);
    std::vector<float> x32(n), o32(n);
    FILE* f = fopen(argv[1], "rb");
    if (fread(x64.data(), 8, n, f) != n) return 2;
    fclose(f);
    for (unsigned long long i = 0; i < n; ++i) x32[i] = (float)x64[i];
    gridDim.x = 1; blockDim.x = 1; blockIdx.x = 0; threadIdx.x = 0;
{calls}
    FILE* o = fopen(argv[2], "wb");
    for (unsigned long long i = 0; i < n; ++i) {{ double w = (double)o32[i]; fwrite(&o64[i], 8, 1, o); fwrite(&w, 8, 1, o); }}
    fclose(o);
    return 0;
}}
"#
    );
    let dir = std::env::temp_dir().join(format!("bach-unary-on-host-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = build(&cxx, &dir, &format!("#include <math.h>\n{}", bach::registry::unary_source()), &main);
    let mut xs: Vec<f64> =
        vec![-0.0, 0.0, 0.5, -0.5, 1.5, -2.5, 2.5, 0.49999999999999994, f64::INFINITY, f64::NEG_INFINITY, f64::NAN, 1e300, -1e-300, 5e-324, 3.7, -3.7, 1e-3, 50.0, -1.0, 1.0];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    xs.extend((0..200).map(|_| (rng.below(1 << 30) as f64 / (1u64 << 30) as f64 - 0.5) * 16.0));
    let input: Vec<u8> = xs.iter().flat_map(|x| x.to_le_bytes()).collect();
    let ulps = |a: f64, b: f64| if a.is_nan() && b.is_nan() || a == b { 0 } else { (a.to_bits() as i64).wrapping_sub(b.to_bits() as i64).unsigned_abs() };
    let ulps32 = |a: f32, b: f32| if a.is_nan() && b.is_nan() || a == b { 0 } else { (a.to_bits() as i32).wrapping_sub(b.to_bits() as i32).unsigned_abs() as u64 };
    for (k, &(name, f64_op, f32_op, exact)) in cases.iter().enumerate() {
        let words = run_on_host(&exe, &dir, input.clone(), &[k.to_string(), xs.len().to_string()]);
        for (i, &x) in xs.iter().enumerate() {
            let (got64, got32) = (f64::from_le_bytes(words[2 * i]), f64::from_le_bytes(words[2 * i + 1]) as f32);
            let (want64, want32) = (f64_op(x), f32_op(x as f32));
            let same_bits = |g: f64, w: f64| g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan());
            if exact {
                assert!(same_bits(got64, want64), "{name}_f64({x:e}) = {got64:e}, the CPU gives {want64:e}");
                assert!(same_bits(got32 as f64, want32 as f64), "{name}_f32({:e}) = {got32:e}, the CPU gives {want32:e}", x as f32);
            } else {
                assert!(ulps(got64, want64) <= 2, "{name}_f64({x:e}) = {got64:e}, the CPU gives {want64:e}");
                assert!(ulps32(got32, want32) <= 2, "{name}_f32({:e}) = {got32:e}, the CPU gives {want32:e}", x as f32);
            }
        }
    }
    let _ = std::fs::remove_dir_all(dir);
}

/// One kernel function of `source` (from its `extern "C"` line to the next one).
fn function_of(source: &str, name: &str) -> String {
    let head = format!("extern \"C\" __global__ void {name}(");
    let at = source.find(&head).unwrap_or_else(|| panic!("no {name} in the source"));
    let end = source[at + head.len()..].find("extern \"C\"").map_or(source.len(), |e| at + head.len() + e);
    source[at..end].to_string()
}

#[test]
fn the_cuda_lanes_reductions_give_the_cpu_results() {
    use bach::prelude::*;
    let Some(cxx) = cxx("the_cuda_lanes_reductions_give_the_cpu_results") else { return };
    let src = bach::registry::reduce_source();
    let kernels: String = ["sum_lanes_f64", "min_lanes_f64", "max_lanes_f64"].iter().map(|k| function_of(src, k)).collect();
    let main = r#"
int main(int argc, char** argv) {
    unsigned long long outer = strtoull(argv[3], 0, 10), len = strtoull(argv[4], 0, 10), inner = strtoull(argv[5], 0, 10);
    std::vector<double> x(outer * len * inner), s(outer * inner), lo(outer * inner), hi(outer * inner);
    FILE* f = fopen(argv[1], "rb");
    if (fread(x.data(), 8, x.size(), f) != x.size()) return 2;
    fclose(f);
    gridDim.x = 3; blockDim.x = 7;
    for (blockIdx.x = 0; blockIdx.x < gridDim.x; ++blockIdx.x)
        for (threadIdx.x = 0; threadIdx.x < blockDim.x; ++threadIdx.x) {
            sum_lanes_f64(outer, len, inner, x.data(), s.data());
            min_lanes_f64(outer, len, inner, x.data(), lo.data());
            max_lanes_f64(outer, len, inner, x.data(), hi.data());
        }
    FILE* o = fopen(argv[2], "wb");
    fwrite(s.data(), 8, s.size(), o); fwrite(lo.data(), 8, lo.size(), o); fwrite(hi.data(), 8, hi.size(), o);
    fclose(o);
    return 0;
}
"#;
    let dir = std::env::temp_dir().join(format!("bach-kernels-on-host-lanes-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let exe = build(&cxx, &dir, &kernels, main);
    let mut rng = Rng(0x5eed_1a4e);
    // Lanes shorter and longer than a block of eight, and up to the 128 that pairwise sums
    // add in the same order.
    for (outer, len, inner) in [(3usize, 37usize, 5usize), (2, 5, 3), (4, 128, 2), (1, 9, 1)] {
        let v: Vec<f64> = (0..outer * len * inner).map(|_| (rng.below(2_000_000) as f64 - 1e6) / 7.0).collect();
        let input: Vec<u8> = v.iter().flat_map(|x| x.to_le_bytes()).collect();
        let out = run_on_host(&exe, &dir, input, &[outer.to_string(), len.to_string(), inner.to_string()]);
        let got: Vec<f64> = out.iter().map(|w| f64::from_le_bytes(*w)).collect();
        // The CPU's own reductions over the middle axis of a 4-d array (a leading axis of 1).
        let a = Array::<f64>::from_shape_vec(vec![1, outer, len, inner], v).unwrap();
        let (s, lo, hi) = (a.sum_axis(Axis(2)), a.min_axis(Axis(2)), a.max_axis(Axis(2)));
        let n = outer * inner;
        for (k, want) in [s, lo, hi].iter().enumerate() {
            let want: Vec<f64> = want.eval().unwrap().iter().copied().collect();
            assert_eq!(&got[k * n..(k + 1) * n], &want[..], "outer {outer}, len {len}, inner {inner}, reducer {k}");
        }
    }
}

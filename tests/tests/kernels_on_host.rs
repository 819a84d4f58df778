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
                let input = dir.join("in.bin");
                let mut bytes: Vec<u8> = d2.iter().flat_map(|v| v.to_le_bytes()).collect();
                bytes.extend(labels.iter().flat_map(|v| v.to_le_bytes()));
                std::fs::write(&input, bytes).unwrap();
                let output = dir.join("out.bin");
                // Fewer threads than rows: the grid-stride loop takes the rest.
                let status = Command::new(&exe).arg(&input).arg(&output).args([rows, cols, k, 3, 4].map(|v| v.to_string())).status().unwrap();
                assert!(status.success(), "the kernel's host build failed: {status}");
                let got: Vec<i64> = std::fs::read(&output).unwrap().chunks_exact(8).map(|c| i64::from_le_bytes(c.try_into().unwrap())).collect();
                assert_eq!(got, want.to_vec(), "{rows} x {cols}, k = {k}, {levels} levels");
                cases += 1;
            }
        }
    }
    assert!(cases >= 30, "{cases} cases");
    let _ = std::fs::remove_dir_all(&dir);
}

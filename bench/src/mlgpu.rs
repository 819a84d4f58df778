//! The `gpu` mode of the four ML/CSV workloads (`ml.rs`): each as a hand-written program on
//! cudarc, cuBLAS and cuSOLVER, the way one would write it without Bach, to time Bach against.
//!
//! A run goes from the host inputs to host outputs, like the other modes: inputs are copied in
//! through two pinned staging buffers (the host copy of one chunk overlaps the transfer of the
//! other), the large work runs on the GPU, small results come back with plain copies.
//! - **TruncatedSvd**: `X^T X` by one GEMM, cuSOLVER's `syevd`, the two leading eigenvectors
//!   gathered on the GPU, `X V` by one GEMM; only `n x 2` values and `d` eigenvalues come back.
//! - **DBSCAN**: column means and standard deviations (two passes, in row blocks), the
//!   standardised points, their squared norms, the Gram matrix `S S^T` by one GEMM, and one
//!   kernel that turns it into the neighbourhood bit matrix of `numerics::radius_bits`; the
//!   labels are then computed on the host by `numerics::dbscan_labels`, as Bach does too.
//! - **PCA+kNN**: the fit (a 124 x 13 training set: scaler, covariance, 13 x 13 eigen problem,
//!   the training points' projections) on the host with the same `numerics`, then one kernel
//!   for the test set: each test row standardised, projected, compared with every training
//!   point and voted on (k nearest, the smallest of the most frequent labels).
//! - **Crime Index**: the three CSV files parsed on the host (as the cpu mode does), one fused
//!   kernel for the expression and per-block partial sums, the partials summed on the host.
//!
//! Context, NVRTC compilation, cuBLAS/cuSOLVER handles and the staging buffers are set up once,
//! outside the timed region ([`MlGpu::new`]), as for the elementwise `gpu` mode; device
//! buffers are allocated per run. The kernels are compiled with `--fmad=false`.

use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::Arc;

use cudarc::cublas::{result as blas_result, sys as blas_sys};
use cudarc::cusolver::sys as solver_sys;
use cudarc::driver::sys::CUdevice_attribute;
use cudarc::driver::{result, CudaContext, CudaFunction, CudaStream, LaunchConfig, PushKernelArg};
use ndarray::{s, Array1, Array2, Axis};

use crate::gpu::{compile_source, driver, grid_for, open, panic_text, par_copy, DevBuf, Pinned, THREADS};
use crate::ml::{Inputs, Outputs, Workload};
use bach::ml::numerics;

/// The kernels of the four programs (see the module documentation).
pub const ML_KERNELS: &str = r#"
// Column sums of a row-major n x d matrix over row blocks: block (bx, p) sums the rows
// [p * rows, (p + 1) * rows) of columns 32 bx .. 32 bx + 31, each column's value or, with
// `squares`, its squared deviation from centre[j]; part[p * d + j] gets the sum.
extern "C" __global__ void col_part_sums(const double* __restrict__ x, long long n, long long d, long long rows,
                                         const double* __restrict__ centre, int squares, double* __restrict__ part)
{
    __shared__ double acc[8][32];
    long long j = blockIdx.x * 32LL + threadIdx.x;
    long long p = blockIdx.y;
    long long r0 = p * rows;
    long long r1 = r0 + rows < n ? r0 + rows : n;
    double s = 0.0;
    if (j < d) {
        double c = squares ? centre[j] : 0.0;
        for (long long i = r0 + threadIdx.y; i < r1; i += 8) {
            double v = x[i * d + j];
            if (squares) { v = v - c; v = v * v; }
            s += v;
        }
    }
    acc[threadIdx.y][threadIdx.x] = s;
    __syncthreads();
    if (threadIdx.y == 0 && j < d) {
        double t = 0.0;
        for (int k = 0; k < 8; k++) t += acc[k][threadIdx.x];
        part[p * d + j] = t;
    }
}

// From col_part_sums' parts: the mean (squares = 0), or the population standard deviation
// with 0 replaced by 1 (squares = 1), as StandardScaler.
extern "C" __global__ void col_finish(const double* __restrict__ part, long long parts, long long d, long long n,
                                      int squares, double* __restrict__ out)
{
    long long j = blockIdx.x * (long long)blockDim.x + threadIdx.x;
    if (j >= d) return;
    double t = 0.0;
    for (long long p = 0; p < parts; p++) t += part[p * d + j];
    double v = t / (double)n;
    if (squares) { v = sqrt(v); if (v == 0.0) v = 1.0; }
    out[j] = v;
}

// out = (x - mean) / std, row-major n x d.
extern "C" __global__ void standardise(const double* __restrict__ x, long long n, long long d, const double* __restrict__ mean,
                                       const double* __restrict__ sd, double* __restrict__ out)
{
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < n * d; t += (long long)blockDim.x * gridDim.x) {
        long long j = t % d;
        out[t] = (x[t] - mean[j]) / sd[j];
    }
}

// Squared norm of each row.
extern "C" __global__ void row_sq_norms(const double* __restrict__ x, long long n, long long d, double* __restrict__ out)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) {
        double s = 0.0;
        for (long long k = 0; k < d; k++) { double v = x[i * d + k]; s += v * v; }
        out[i] = s;
    }
}

// The neighbourhood bit matrix (n x words, row-major) from the Gram matrix g (n x n) and the
// squared norms: bit j of row i is set when max(0, (-2 g[a][c] + sq[a]) + sq[c]) <= eps2 with
// a = min(i, j), c = max(i, j) (one value per pair, so the neighbourhoods are symmetric), and
// always for i == j.
extern "C" __global__ void radius_bits(const double* __restrict__ g, const double* __restrict__ sq, long long n, long long words,
                                       double eps2, long long* __restrict__ bits)
{
    for (long long t = blockIdx.x * (long long)blockDim.x + threadIdx.x; t < n * words; t += (long long)blockDim.x * gridDim.x) {
        long long i = t / words, w = t % words;
        unsigned long long m = 0;
        for (int b = 0; b < 64; b++) {
            long long j = w * 64 + b;
            if (j >= n) break;
            bool hit = i == j;
            if (!hit) {
                long long a = i < j ? i : j, c = i < j ? j : i;
                double d2 = (-2.0 * g[a * n + c] + sq[a]) + sq[c];
                if (d2 < 0.0) d2 = 0.0;
                hit = d2 <= eps2;
            }
            if (hit) m |= 1ULL << b;
        }
        bits[t] = (long long)m;
    }
}

// PCA+kNN's prediction, one test row per thread: z = ((x - mean) / sd) - pmean, p = z comps
// (comps: d x 2 row-major), squared distances to the m training projections (train: m x 2,
// train_sq their squared norms) as max(0, (-2 p.t + |p|^2) + |t|^2), the k nearest (ties to
// the smaller index; NaN as infinity), and the smallest of their most frequent labels.
#define KNN_MAX_K 32
extern "C" __global__ void pca_knn(const double* __restrict__ x, long long n, long long d, const double* __restrict__ mean,
                                   const double* __restrict__ sd, const double* __restrict__ pmean, const double* __restrict__ comps,
                                   const double* __restrict__ train, const double* __restrict__ train_sq, const long long* __restrict__ labels,
                                   long long m, int k, long long* __restrict__ out)
{
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) {
        double p0 = 0.0, p1 = 0.0;
        for (long long f = 0; f < d; f++) {
            double z = ((x[i * d + f] - mean[f]) / sd[f]) - pmean[f];
            p0 += z * comps[f * 2];
            p1 += z * comps[f * 2 + 1];
        }
        double asq = p0 * p0 + p1 * p1;
        double bd[KNN_MAX_K];
        long long bi[KNN_MAX_K];
        int cnt = 0;
        for (long long j = 0; j < m; j++) {
            double dot = p0 * train[j * 2] + p1 * train[j * 2 + 1];
            double d2 = (-2.0 * dot + asq) + train_sq[j];
            if (d2 < 0.0) d2 = 0.0;
            if (isnan(d2)) d2 = 1.0 / 0.0;
            if (cnt == k) {
                if (d2 >= bd[k - 1]) continue;
                cnt--;
            }
            int at = cnt;
            while (at > 0 && bd[at - 1] > d2) { bd[at] = bd[at - 1]; bi[at] = bi[at - 1]; at--; }
            bd[at] = d2;
            bi[at] = j;
            cnt++;
        }
        long long lab[KNN_MAX_K];
        for (int a = 0; a < cnt; a++) {
            long long v = labels[bi[a]];
            int b = a;
            while (b > 0 && lab[b - 1] > v) { lab[b] = lab[b - 1]; b--; }
            lab[b] = v;
        }
        long long winner = lab[0];
        int best = 0;
        for (int a = 0; a < cnt;) {
            int run = 1;
            while (a + run < cnt && lab[a + run] == lab[a]) run++;
            if (run > best) { best = run; winner = lab[a]; }
            a += run;
        }
        out[i] = winner;
    }
}

// Crime Index's expression and per-block partial sums (blockDim.x = 256).
extern "C" __global__ void crime_index(const double* __restrict__ total, const double* __restrict__ adult,
                                       const double* __restrict__ robberies, long long n, double* __restrict__ part)
{
    __shared__ double acc[256];
    double s = 0.0;
    for (long long i = blockIdx.x * (long long)blockDim.x + threadIdx.x; i < n; i += (long long)blockDim.x * gridDim.x) {
        double t = total[i];
        double big = t > 500000.0 ? 0.0 : t;
        double dp = (adult[i] * 2.0 + big) - robberies[i] * 2000.0;
        double c = dp / 100000.0;
        c = c > 0.02 ? 0.032 : c;
        c = c < 0.01 ? 0.005 : c;
        s += c;
    }
    acc[threadIdx.x] = s;
    __syncthreads();
    for (int h = 128; h > 0; h >>= 1) {
        if (threadIdx.x < h) acc[threadIdx.x] += acc[threadIdx.x + h];
        __syncthreads();
    }
    if (threadIdx.x == 0) part[blockIdx.x] = acc[0];
}
"#;

/// Elements per staging buffer (32 MiB of f64).
const STAGE: usize = 1 << 22;
/// Rows per block of `col_part_sums`.
const PART_ROWS: usize = 256;

/// The GPU set up for the ML programs: context, kernels, handles, staging buffers.
pub struct MlGpu {
    pub name: String,
    sms: u32,
    ctx: Arc<CudaContext>,
    /// Compute and the first staging slot's copies run on streams[0]; the other slot's copies
    /// on streams[1].
    streams: [Arc<CudaStream>; 2],
    staging: [Pinned<f64>; 2],
    blas: blas_sys::cublasHandle_t,
    solver: solver_sys::cusolverDnHandle_t,
    col_part_sums: CudaFunction,
    col_finish: CudaFunction,
    standardise: CudaFunction,
    row_sq_norms: CudaFunction,
    radius_bits: CudaFunction,
    pca_knn: CudaFunction,
    crime_index: CudaFunction,
}

impl Drop for MlGpu {
    fn drop(&mut self) {
        // SAFETY: handles made in `new`, destroyed once; no work is in flight after a run.
        unsafe {
            let _ = blas_result::destroy_handle(self.blas);
            let _ = solver_sys::cusolverDnDestroy(self.solver);
        }
    }
}

/// A library call under `catch_unwind` (cudarc's dynamic loading panics on a missing symbol).
fn guarded<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or_else(|p| Err(format!("{what}: {}", panic_text(&*p))))
}

fn blas_ok(what: &str) -> impl Fn(blas_result::CublasError) -> String + '_ {
    move |e| format!("cuBLAS {what}: {:?}", e.0)
}

fn solver_ok(what: &str, s: solver_sys::cusolverStatus_t) -> Result<(), String> {
    if s == solver_sys::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS {
        Ok(())
    } else {
        Err(format!("cuSOLVER {what}: {s:?}"))
    }
}

/// `n` as the 32-bit size cuBLAS and cuSOLVER take.
fn int(n: usize) -> Result<i32, String> {
    i32::try_from(n).map_err(|_| format!("{n} is beyond the 32-bit sizes of cuBLAS/cuSOLVER"))
}

impl MlGpu {
    /// GPU 0 with the kernels compiled and cuBLAS/cuSOLVER started; `Err("no GPU: ...")`
    /// without one, never a panic.
    pub fn new() -> Result<MlGpu, String> {
        let ctx = open()?;
        let name = ctx.name().map_err(driver("device name"))?;
        let (major, minor) = ctx.compute_capability().map_err(driver("compute capability"))?;
        let sms = ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT).map_err(driver("attribute"))? as u32;
        let ptx = compile_source(ML_KERNELS, "bach_bench_ml.cu", Some(&format!("compute_{major}{minor}"))).or_else(|_| compile_source(ML_KERNELS, "bach_bench_ml.cu", None))?;
        let module = ctx.load_module(ptx).map_err(driver("load module"))?;
        let f = |n: &str| module.load_function(n).map_err(driver("load function"));
        let streams = [ctx.new_stream().map_err(driver("stream"))?, ctx.new_stream().map_err(driver("stream"))?];
        // SAFETY: only probe whether the shared libraries load.
        if !guarded("cuBLAS", || Ok(unsafe { blas_sys::is_culib_present() }))? {
            return Err("no cuBLAS (libcublas.so.13): install the CUDA 13 toolkit or `pip install nvidia-cublas`".into());
        }
        if !guarded("cuSOLVER", || Ok(unsafe { solver_sys::is_culib_present() }))? {
            return Err("no cuSOLVER (libcusolver.so.12): install the CUDA 13 toolkit or `pip install nvidia-cusolver`".into());
        }
        let cu = streams[0].cu_stream();
        let blas = guarded("cuBLAS", || {
            let h = blas_result::create_handle().map_err(blas_ok("create"))?;
            // SAFETY: a live handle and stream.
            unsafe { blas_result::set_stream(h, cu as _) }.map_err(blas_ok("set stream"))?;
            Ok(h)
        })?;
        let solver = guarded("cuSOLVER", || {
            let mut h = std::ptr::null_mut();
            // SAFETY: writes the handle; then a live handle and stream.
            unsafe {
                solver_ok("create", solver_sys::cusolverDnCreate(&mut h))?;
                solver_ok("set stream", solver_sys::cusolverDnSetStream(h, cu as _))?;
            }
            Ok(h)
        })?;
        Ok(MlGpu {
            name: format!("{name} (sm_{major}{minor}, {sms} SMs, hand-written cudarc + cuBLAS + cuSOLVER)"),
            sms,
            staging: [Pinned::new(STAGE, 0)?, Pinned::new(STAGE, 0)?],
            streams,
            blas,
            solver,
            col_part_sums: f("col_part_sums")?,
            col_finish: f("col_finish")?,
            standardise: f("standardise")?,
            row_sq_norms: f("row_sq_norms")?,
            radius_bits: f("radius_bits")?,
            pca_knn: f("pca_knn")?,
            crime_index: f("crime_index")?,
            ctx,
        })
    }

    fn grid(&self, n: usize) -> LaunchConfig {
        grid_for(n, self.sms)
    }

    /// `C = op(A) op(B)` by cuBLAS on streams[0], column-major: `transposed` says which of A
    /// and B are transposed (`CUBLAS_OP_T`), `(m, n, k)` the sizes, each matrix its buffer
    /// and leading dimension.
    fn gemm(&self, what: &str, transposed: (bool, bool), (m, n, k): (i32, i32, i32), a: (&DevBuf, i32), b: (&DevBuf, i32), c: (&DevBuf, i32)) -> Result<(), String> {
        let op = |t: bool| if t { blas_sys::cublasOperation_t::CUBLAS_OP_T } else { blas_sys::cublasOperation_t::CUBLAS_OP_N };
        let (one, zero) = (1.0f64, 0.0f64);
        // SAFETY: a live handle on streams[0]; the callers pass buffers of the sizes the
        // dimensions and leading dimensions say.
        unsafe {
            blas_result::dgemm(
                self.blas,
                op(transposed.0),
                op(transposed.1),
                m,
                n,
                k,
                &one,
                a.0.ptr as *const f64,
                a.1,
                b.0.ptr as *const f64,
                b.1,
                &zero,
                c.0.ptr as *mut f64,
                c.1,
            )
        }
        .map_err(blas_ok(&format!("gemm {what}")))
    }

    /// Host f64s to a new device buffer, through the staging buffers in chunks; returns when
    /// the copies are done.
    fn upload(&mut self, src: &[f64]) -> Result<DevBuf, String> {
        let dev = DevBuf::new(src.len() * 8)?;
        let mut pending = [false; 2];
        for (c, chunk) in src.chunks(STAGE).enumerate() {
            let slot = c % 2;
            if pending[slot] {
                self.streams[slot].synchronize().map_err(driver("synchronize"))?;
            }
            let h = &mut self.staging[slot].as_mut_slice()[..chunk.len()];
            par_copy(h, chunk);
            // SAFETY: the device buffer holds src.len() f64s; the staging slot is not written
            // again before its stream is synchronized.
            unsafe { result::memcpy_htod_async(dev.ptr + (c * STAGE * 8) as u64, &*h, self.streams[slot].cu_stream()) }.map_err(driver("copy to device"))?;
            pending[slot] = true;
        }
        for s in &self.streams {
            s.synchronize().map_err(driver("synchronize"))?;
        }
        Ok(dev)
    }

    /// `len` values of a device buffer to the host, after the work queued on streams[0].
    fn download<T: Copy + Default + cudarc::driver::DeviceRepr>(&self, dev: &DevBuf, len: usize) -> Result<Vec<T>, String> {
        self.streams[0].synchronize().map_err(driver("synchronize"))?;
        let mut v = vec![T::default(); len];
        // SAFETY: the buffer holds at least `len` values of T; the work writing it is done.
        unsafe { result::memcpy_dtoh_sync(&mut v, dev.ptr) }.map_err(driver("copy to host"))?;
        Ok(v)
    }

    /// Column means and population standard deviations (0 as 1) of the row-major `n x d`
    /// matrix at `x`, on the GPU.
    fn mean_std(&self, x: &DevBuf, n: usize, d: usize) -> Result<(DevBuf, DevBuf), String> {
        let parts = n.div_ceil(PART_ROWS).max(1);
        let part = DevBuf::new(parts * d * 8)?;
        let (mean, sd) = (DevBuf::new(d * 8)?, DevBuf::new(d * 8)?);
        let (n64, d64, rows, parts64) = (n as i64, d as i64, PART_ROWS as i64, parts as i64);
        let sums = LaunchConfig { grid_dim: (d.div_ceil(32) as u32, parts as u32, 1), block_dim: (32, 8, 1), shared_mem_bytes: 0 };
        let finish = LaunchConfig { grid_dim: (d.div_ceil(THREADS as usize).max(1) as u32, 1, 1), block_dim: (THREADS, 1, 1), shared_mem_bytes: 0 };
        let s = &self.streams[0];
        for (squares, out) in [(0i32, &mean), (1i32, &sd)] {
            // SAFETY: arguments match the kernels' signatures; buffers of the sizes given.
            unsafe { s.launch_builder(&self.col_part_sums).arg(&x.ptr).arg(&n64).arg(&d64).arg(&rows).arg(&mean.ptr).arg(&squares).arg(&part.ptr).launch(sums) }
                .map_err(driver("col_part_sums"))?;
            // SAFETY: as above.
            unsafe { s.launch_builder(&self.col_finish).arg(&part.ptr).arg(&parts64).arg(&d64).arg(&n64).arg(&squares).arg(&out.ptr).launch(finish) }
                .map_err(driver("col_finish"))?;
        }
        Ok((mean, sd))
    }

    /// One run of `w`'s program on the GPU, host inputs to host outputs.
    pub fn run(&mut self, w: Workload, inp: &Inputs) -> Result<Outputs, String> {
        self.ctx.bind_to_thread().map_err(driver("bind context"))?;
        match w {
            Workload::Tsvd => self.tsvd(inp),
            Workload::Dbscan => self.dbscan(inp),
            Workload::PcaKnn => self.pca_knn(inp),
            Workload::CrimeIndex => self.crime_index(inp),
        }
    }

    fn tsvd(&mut self, inp: &Inputs) -> Result<Outputs, String> {
        let x = inp.f64s["X"].view().into_dimensionality::<ndarray::Ix2>().map_err(|e| e.to_string())?;
        let (n, d) = x.dim();
        if d < 2 {
            return Err(format!("TruncatedSvd with 2 components needs 2 features or more, got {d}"));
        }
        let xs = x.as_slice().ok_or("X is not contiguous")?;
        let dx = self.upload(xs)?;
        let (ni, di) = (int(n)?, int(d)?);
        let gram = DevBuf::new(d * d * 8)?;
        // Row-major X (n x d) is column-major X^T (d x n, ld d): G = X^T (X^T)^T, d x d.
        self.gemm("X^T X", (false, true), (di, di, ni), (&dx, di), (&dx, di), (&gram, di))?;
        let values = self.syevd(&gram, d)?;
        // syevd leaves the eigenvectors as columns (ascending); V's column 0 is the largest.
        let v = DevBuf::new(2 * d * 8)?;
        let s = self.streams[0].cu_stream();
        // SAFETY: columns d-1 and d-2 of the d x d eigenvector matrix into V (column-major d x 2).
        unsafe {
            result::memcpy_dtod_async(v.ptr, gram.ptr + ((d - 1) * d * 8) as u64, d * 8, s).map_err(driver("copy"))?;
            result::memcpy_dtod_async(v.ptr + (d * 8) as u64, gram.ptr + ((d - 2) * d * 8) as u64, d * 8, s).map_err(driver("copy"))?;
        }
        // T^T (2 x n, column-major = row-major T, n x 2) = V^T X^T.
        let t = DevBuf::new(n * 2 * 8)?;
        self.gemm("X V", (true, false), (2, ni, di), (&v, di), (&dx, di), (&t, 2))?;
        let transformed = Array2::from_shape_vec((n, 2), self.download::<f64>(&t, n * 2)?).map_err(|e| e.to_string())?;
        let mut out = Outputs::default();
        out.figures.insert("sigma_0".into(), values[d - 1].max(0.0).sqrt());
        out.figures.insert("sigma_1".into(), values[d - 2].max(0.0).sqrt());
        out.f64s.insert("transformed".into(), transformed.into_dyn());
        Ok(out)
    }

    /// cuSOLVER's `syevd` on the symmetric `d x d` matrix in `a` (overwritten by the
    /// eigenvectors, as columns, ascending); returns the eigenvalues, ascending.
    fn syevd(&self, a: &DevBuf, d: usize) -> Result<Vec<f64>, String> {
        let di = int(d)?;
        let values = DevBuf::new(d * 8)?;
        let info = DevBuf::new(8)?;
        let (jobz, uplo) = (solver_sys::cusolverEigMode_t::CUSOLVER_EIG_MODE_VECTOR, solver_sys::cublasFillMode_t::CUBLAS_FILL_MODE_UPPER);
        let mut lwork = 0i32;
        // SAFETY: a live handle; a and values hold d x d and d doubles.
        solver_ok("syevd workspace", unsafe {
            solver_sys::cusolverDnDsyevd_bufferSize(self.solver, jobz, uplo, di, a.ptr as *const f64, di, values.ptr as *const f64, &mut lwork)
        })?;
        let work = DevBuf::new(lwork.max(1) as usize * 8)?;
        // SAFETY: as above, with lwork doubles of workspace and one int of status.
        solver_ok("syevd", unsafe {
            solver_sys::cusolverDnDsyevd(self.solver, jobz, uplo, di, a.ptr as *mut f64, di, values.ptr as *mut f64, work.ptr as *mut f64, lwork, info.ptr as *mut i32)
        })?;
        let status = self.download::<i32>(&info, 1)?[0];
        if status != 0 {
            return Err(format!("cuSOLVER's syevd did not converge (info {status})"));
        }
        self.download::<f64>(&values, d)
    }

    fn dbscan(&mut self, inp: &Inputs) -> Result<Outputs, String> {
        let x = inp.f64s["X"].view().into_dimensionality::<ndarray::Ix2>().map_err(|e| e.to_string())?;
        let (n, d) = x.dim();
        let dx = self.upload(x.as_slice().ok_or("X is not contiguous")?)?;
        let (mean, sd) = self.mean_std(&dx, n, d)?;
        let scaled = DevBuf::new(n * d * 8)?;
        let sq = DevBuf::new(n * 8)?;
        let (n64, d64) = (n as i64, d as i64);
        let st = &self.streams[0];
        // SAFETY: arguments match the kernels' signatures; buffers of the sizes given.
        unsafe { st.launch_builder(&self.standardise).arg(&dx.ptr).arg(&n64).arg(&d64).arg(&mean.ptr).arg(&sd.ptr).arg(&scaled.ptr).launch(self.grid(n * d)) }
            .map_err(driver("standardise"))?;
        // SAFETY: as above.
        unsafe { st.launch_builder(&self.row_sq_norms).arg(&scaled.ptr).arg(&n64).arg(&d64).arg(&sq.ptr).launch(self.grid(n)) }.map_err(driver("row_sq_norms"))?;
        let gram = DevBuf::new(n * n * 8)?;
        let (ni, di) = (int(n)?, int(d)?);
        // Row-major S (n x d) is column-major S^T (d x n, ld d): G = (S^T)^T S^T, n x n.
        self.gemm("S S^T", (true, false), (ni, ni, di), (&scaled, di), (&scaled, di), (&gram, ni))?;
        let words = n.div_ceil(64);
        let bits = DevBuf::new(n * words * 8)?;
        let (words64, eps2) = (words as i64, 16.0f64 * 16.0);
        // SAFETY: as above.
        unsafe { st.launch_builder(&self.radius_bits).arg(&gram.ptr).arg(&sq.ptr).arg(&n64).arg(&words64).arg(&eps2).arg(&bits.ptr).launch(self.grid(n * words)) }
            .map_err(driver("radius_bits"))?;
        let host_bits = Array2::from_shape_vec((n, words), self.download::<i64>(&bits, n * words)?).map_err(|e| e.to_string())?;
        let labels = numerics::dbscan_labels(host_bits.view(), crate::ml::min_samples(inp.n)).into_dyn();
        let mut out = Outputs::default();
        let (c, noise) = crate::ml::clusters_and_noise(&labels);
        out.figures.insert("clusters".into(), c);
        out.figures.insert("noise".into(), noise);
        out.i64s.insert("labels".into(), labels);
        Ok(out)
    }

    fn pca_knn(&mut self, inp: &Inputs) -> Result<Outputs, String> {
        const K: i32 = 5;
        let xt = inp.f64s["X_train"].view().into_dimensionality::<ndarray::Ix2>().map_err(|e| e.to_string())?;
        let yt = inp.i64s["y_train"].view().into_dimensionality::<ndarray::Ix1>().map_err(|e| e.to_string())?;
        let xq = inp.f64s["X_test"].view().into_dimensionality::<ndarray::Ix2>().map_err(|e| e.to_string())?;
        // The fit, on the host: the training set is 124 x 13.
        let mean = xt.mean_axis(Axis(0)).ok_or("no training rows")?;
        let std = xt.std_axis(Axis(0), 0.0).mapv(|s| if s == 0.0 { 1.0 } else { s });
        let scaled = (&xt - &mean) / &std;
        let pmean = scaled.mean_axis(Axis(0)).ok_or("no training rows")?;
        let centred = &scaled - &pmean;
        let cov = centred.t().dot(&centred) / (xt.nrows() - 1) as f64;
        let (values, vectors) = numerics::symmetric_eigen(cov.view());
        let comps = vectors.slice(s![.., ..2]).as_standard_layout().to_owned();
        let train_p = centred.dot(&comps);
        let train_sq: Array1<f64> = train_p.map_axis(Axis(1), |r| r.dot(&r));
        let (n, d, m) = (xq.nrows(), xq.ncols(), xt.nrows());
        if (K as usize) > m {
            return Err(format!("k = {K} nearest neighbours of {m} training points"));
        }
        // The prediction, on the GPU.
        let dq = self.upload(xq.as_slice().ok_or("X_test is not contiguous")?)?;
        let small = |v: &[f64]| -> Result<DevBuf, String> {
            let b = DevBuf::new(v.len() * 8)?;
            // SAFETY: a buffer of v.len() f64s.
            unsafe { result::memcpy_htod_sync(b.ptr, v) }.map_err(driver("copy to device"))?;
            Ok(b)
        };
        let std_v = std.to_vec();
        let (dmean, dsd, dpmean, dcomps) = (small(&mean.to_vec())?, small(&std_v)?, small(&pmean.to_vec())?, small(comps.as_slice().expect("standard layout"))?);
        let train_p = train_p.as_standard_layout().to_owned();
        let (dtrain, dtrain_sq) = (small(train_p.as_slice().expect("standard layout"))?, small(&train_sq.to_vec())?);
        let dlabels = DevBuf::new(m * 8)?;
        let labels: Vec<i64> = yt.to_vec();
        // SAFETY: a buffer of m i64s.
        unsafe { result::memcpy_htod_sync(dlabels.ptr, &labels[..]) }.map_err(driver("copy to device"))?;
        let predicted = DevBuf::new(n * 8)?;
        let (n64, d64, m64) = (n as i64, d as i64, m as i64);
        let st = &self.streams[0];
        // SAFETY: arguments match the kernel's signature; buffers of the sizes given.
        unsafe {
            st.launch_builder(&self.pca_knn)
                .arg(&dq.ptr)
                .arg(&n64)
                .arg(&d64)
                .arg(&dmean.ptr)
                .arg(&dsd.ptr)
                .arg(&dpmean.ptr)
                .arg(&dcomps.ptr)
                .arg(&dtrain.ptr)
                .arg(&dtrain_sq.ptr)
                .arg(&dlabels.ptr)
                .arg(&m64)
                .arg(&K)
                .arg(&predicted.ptr)
                .launch(self.grid(n))
        }
        .map_err(driver("pca_knn"))?;
        let predicted = Array1::from_vec(self.download::<i64>(&predicted, n)?).into_dyn();
        let total: f64 = values.iter().map(|v| v.max(0.0)).sum();
        let mut out = Outputs::default();
        out.figures.insert("explained_variance_ratio_0".into(), values[0] / total);
        out.figures.insert("explained_variance_ratio_1".into(), values[1] / total);
        out.figures.insert("accuracy".into(), crate::ml::accuracy(&predicted, &inp.i64s["y_test"]));
        out.i64s.insert("predicted".into(), predicted);
        Ok(out)
    }

    fn crime_index(&mut self, inp: &Inputs) -> Result<Outputs, String> {
        let total = crate::ml::read_column(&inp.files["total_population"])?;
        let adult = crate::ml::read_column(&inp.files["adult_population"])?;
        let robberies = crate::ml::read_column(&inp.files["num_robberies"])?;
        let n = total.len();
        if adult.len() != n || robberies.len() != n {
            return Err(format!("the columns differ in length: {n}, {}, {}", adult.len(), robberies.len()));
        }
        let dt = self.upload(total.as_slice().expect("a fresh column"))?;
        let da = self.upload(adult.as_slice().expect("a fresh column"))?;
        let dr = self.upload(robberies.as_slice().expect("a fresh column"))?;
        let cfg = self.grid(n);
        let blocks = cfg.grid_dim.0 as usize;
        let part = DevBuf::new(blocks * 8)?;
        let n64 = n as i64;
        // SAFETY: arguments match the kernel's signature (256 threads a block); buffers of n
        // f64s and one partial sum per block.
        unsafe { self.streams[0].launch_builder(&self.crime_index).arg(&dt.ptr).arg(&da.ptr).arg(&dr.ptr).arg(&n64).arg(&part.ptr).launch(cfg) }.map_err(driver("crime_index"))?;
        let parts = self.download::<f64>(&part, blocks)?;
        let result = bach::pairwise_sum(&parts);
        let mut out = Outputs::default();
        out.figures.insert("result".into(), result);
        out.f64s.insert("result".into(), ndarray::arr0(result).into_dyn());
        Ok(out)
    }
}

impl crate::ml::GpuRunner for MlGpu {
    fn name(&self) -> String {
        self.name.clone()
    }
    fn run(&mut self, w: Workload, inp: &Inputs) -> Result<Outputs, String> {
        MlGpu::run(self, w, inp)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_gpu_is_an_error_with_a_reason_never_a_panic() {
        if crate::gpu::open().is_err() {
            let e = MlGpu::new().err().expect("no GPU here");
            assert!(e.contains("no GPU"), "{e}");
        }
    }

    #[test]
    fn ml_kernels_compile_with_nvrtc() {
        // SAFETY: only probes whether the shared library loads.
        if !unsafe { cudarc::nvrtc::sys::is_culib_present() } {
            assert!(!bach_runtime::knobs::Knobs::from_env().require_nvrtc, "BACH_REQUIRE_NVRTC is set but NVRTC is missing");
            return;
        }
        let ptx = compile_source(ML_KERNELS, "bach_bench_ml.cu", Some("compute_90")).unwrap();
        for k in ["col_part_sums", "col_finish", "standardise", "row_sq_norms", "radius_bits", "pca_knn", "crime_index"] {
            assert!(ptx.to_src().contains(&format!(".entry {k}(")), "{k} missing from the PTX");
        }
    }
}

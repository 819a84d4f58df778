//! Products through cuBLAS (`X^T X`, general products) and the symmetric eigen problem
//! through cuSOLVER, with the device's own kernels around `syevd`.

use std::sync::PoisonError;

use cudarc::cublas::sys::{self as blas, cublasOperation_t};
use cudarc::cusolver::sys as solver_sys;
use cudarc::driver::result;

use super::buffers::{Input, KArg};
use super::device::CudaDevice;
use super::memory::Lane;
use super::shapes::{blocks_for, gemm_plan, gram_plan, GemmPlan, Which, BLOCK};
use super::At;
use crate::device::Tag;
use crate::error::{BachError, Result};
use crate::trace::EventKind;
use crate::value::{DType, Meta, Value};

/// The device's own kernels around cuSOLVER's `syevd` ([`Launch::SymmetricEigen`]):
/// `bach_eigen_check` flags a NaN or infinity in the lower triangle (`flags[1] = 1`; `syevd`
/// would not say), `bach_eigen_order` writes the op's result from `syevd`'s ascending
/// eigenvalues `w` and column-major eigenvectors `v`, one thread per result row: row 0 the
/// values reversed, row `1 + i` column `d - 1 - i` with its first largest-magnitude entry made
/// positive (the CPU's `canonical_signs`).
pub const EIGEN_SOURCE: &str = r#"// bach: around cuSOLVER's syevd (runtime/src/cuda/device.rs)
extern "C" __global__ void bach_eigen_check(unsigned long long d, const double* a, int* flags) {
    for (unsigned long long t = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; t < d * d; t += (unsigned long long)gridDim.x * blockDim.x) {
        const double v = a[t];
        if (t % d <= t / d && v - v != 0.0) flags[1] = 1;
    }
}
extern "C" __global__ void bach_eigen_order(unsigned long long d, const double* w, const double* v, const int* flags, double* out) {
    const double nan = __longlong_as_double(0x7ff8000000000000LL);
    for (unsigned long long r = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x; r < d + 1; r += (unsigned long long)gridDim.x * blockDim.x) {
        double* o = out + r * d;
        if (flags[1]) {
            for (unsigned long long j = 0; j < d; ++j) o[j] = nan;
        } else if (r == 0) {
            for (unsigned long long j = 0; j < d; ++j) o[j] = w[d - 1 - j];
        } else {
            const double* col = v + (d - r) * d;
            double largest = 0.0, at = 0.0;
            for (unsigned long long k = 0; k < d; ++k) {
                const double x = col[k] < 0.0 ? -col[k] : col[k];
                if (x > largest) {
                    largest = x;
                    at = col[k];
                }
            }
            const double s = at < 0.0 ? -1.0 : 1.0;
            for (unsigned long long k = 0; k < d; ++k) o[k] = s * col[k];
        }
    }
}
"#;

impl CudaDevice {
    /// `X^T X` through cuBLAS ([`gram_plan`]).
    pub(super) fn gram(&self, at: At<'_>, inputs: &[Input<'_>], span: (Tag, EventKind)) -> Result<Value> {
        let [x] = inputs else { return Err(at.invalid("X^T X takes one argument")) };
        let dtype = x.meta.dtype;
        if !matches!(dtype, DType::F64 | DType::F32) {
            return Err(BachError::dtype(at.op, "f64 or f32", dtype));
        }
        let (plan, out_shape) = gram_plan(&x.meta.shape).map_err(|e| at.invalid(e))?;
        self.blas_product(at, inputs, dtype, plan, out_shape, span)
    }

    /// The four cases of `dot` through cuBLAS ([`gemm_plan`]).
    pub(super) fn gemm(&self, at: At<'_>, inputs: &[Input<'_>], span: (Tag, EventKind)) -> Result<Value> {
        let [l, r] = inputs else { return Err(at.invalid("a product takes two arguments")) };
        let dtype = l.meta.dtype;
        if r.meta.dtype != dtype || !matches!(dtype, DType::F64 | DType::F32) {
            return Err(BachError::dtype(at.op, "two f64 or two f32 arrays", format!("{} and {}", dtype, r.meta.dtype)));
        }
        let (plan, out_shape) = gemm_plan(&l.meta.shape, &r.meta.shape).map_err(|e| at.invalid(e))?;
        self.blas_product(at, inputs, dtype, plan, out_shape, span)
    }

    /// Run a product `plan` (row-major data, column-major BLAS) over `inputs` (its `Which::Left`
    /// and `Which::Right`) into a new `out_shape` array of `dtype` (f64 or f32).
    pub(super) fn blas_product(&self, at: At<'_>, inputs: &[Input<'_>], dtype: DType, plan: GemmPlan, out_shape: Vec<usize>, span: (Tag, EventKind)) -> Result<Value> {
        let out_meta = Meta::new(dtype, out_shape);
        let out = self.gpu.pool.alloc(out_meta.bytes(), at)?;
        for i in inputs {
            self.wait_for(Lane::Compute, i.buf, at)?;
        }
        out.touch(Lane::Compute);
        let start = self.gpu.begin(Lane::Compute).map_err(|e| at.cuda("cuEventRecord", e))?;
        let (left, right) = (inputs.first().map_or(0, |i| i.ptr), inputs.get(1).map_or(0, |i| i.ptr));
        self.blas_into(at, [left, right], dtype, &plan, out.ptr, out_meta.bytes())?;
        let end = self.gpu.end(Lane::Compute, self.owner, Some(span), start).map_err(|e| at.cuda("cuEventRecord", e))?;
        Ok(self.value(out, out_meta, end, Lane::Compute))
    }

    /// Queue a product `plan` on the compute stream: `ptrs` the `Which::Left` and
    /// `Which::Right` operands, into the `out_bytes` bytes at `out` (zeroed for
    /// `GemmPlan::Zeros`). The caller has made the stream wait for the operands.
    pub(super) fn blas_into(&self, at: At<'_>, ptrs: [u64; 2], dtype: DType, plan: &GemmPlan, out: u64, out_bytes: usize) -> Result<()> {
        let stream = self.gpu.stream(Lane::Compute).cu_stream();
        let ptr = |w: Which| ptrs[usize::from(w == Which::Right)];
        let op = |t: bool| if t { cublasOperation_t::CUBLAS_OP_T } else { cublasOperation_t::CUBLAS_OP_N };
        let handles = self.gpu.blas.lock().unwrap_or_else(PoisonError::into_inner);
        macro_rules! blas_calls {
            ($t:ty, $dot:ident, $gemv:ident, $gemm:ident) => {{
                let (one, zero): ($t, $t) = (1.0, 0.0);
                let o = out as *mut $t;
                let p = |w: Which| ptr(w) as *const $t;
                // SAFETY: the pointers are live blocks of the shapes the plan was made from;
                // the handles run on the compute stream, after the inputs' ready events.
                unsafe {
                    match *plan {
                        GemmPlan::Dot { k } => blas::$dot(handles.device, k, p(Which::Left), 1, p(Which::Right), 1, o),
                        GemmPlan::Gemv { trans, m, n, ld, matrix, vector } => blas::$gemv(handles.host, op(trans), m, n, &one, p(matrix), ld, p(vector), 1, &zero, o, 1),
                        GemmPlan::Gemm { m, n, k, a, lda, ta, b, ldb, tb } => blas::$gemm(handles.host, op(ta), op(tb), m, n, k, &one, p(a), lda, p(b), ldb, &zero, o, m.max(1)),
                        GemmPlan::Zeros | GemmPlan::Empty => blas::cublasStatus_t::CUBLAS_STATUS_SUCCESS,
                    }
                }
            }};
        }
        let status = match dtype {
            DType::F64 => blas_calls!(f64, cublasDdot_v2_64, cublasDgemv_v2_64, cublasDgemm_v2_64),
            _ => blas_calls!(f32, cublasSdot_v2_64, cublasSgemv_v2_64, cublasSgemm_v2_64),
        };
        drop(handles);
        match status {
            blas::cublasStatus_t::CUBLAS_STATUS_SUCCESS => {}
            blas::cublasStatus_t::CUBLAS_STATUS_ALLOC_FAILED => {
                return Err(BachError::DeviceOutOfMemory { device: at.device.to_string(), detail: format!("cuBLAS could not allocate its workspace for `{}`", at.op) })
            }
            s => return Err(at.fail(format!("cuBLAS ({plan:?}): {s:?}"))),
        }
        if *plan == GemmPlan::Zeros {
            // SAFETY: the output holds out_bytes bytes.
            unsafe { result::memset_d8_async(out, 0, out_bytes, stream) }.map_err(|e| at.cuda("cuMemsetD8Async", e))?;
        }
        Ok(())
    }

    /// [`Launch::SymmetricEigen`]: the matrix copied (syevd overwrites it), checked for NaN
    /// and infinities, solved by cuSOLVER's `syevd` (upper triangle of the column-major view:
    /// the row-major lower triangle), then ordered and signed by [`EIGEN_SOURCE`]. The stream
    /// is synchronized to read `syevd`'s status: a failure is an error at the op.
    pub(super) fn symmetric_eigen(&self, at: At<'_>, inputs: &[Input<'_>], span: (Tag, EventKind)) -> Result<Value> {
        let [a] = inputs else { return Err(at.invalid("the symmetric eigen problem takes one argument")) };
        if a.meta.dtype != DType::F64 {
            return Err(BachError::dtype(at.op, "f64", a.meta.dtype));
        }
        let &[d, d2] = a.meta.shape.as_slice() else { return Err(at.invalid(format!("expects a square matrix, got shape {:?}", a.meta.shape))) };
        if d != d2 {
            return Err(at.invalid(format!("expects a square matrix, got shape {:?}", a.meta.shape)));
        }
        let n = i32::try_from(d).map_err(|_| at.invalid(format!("a {d} x {d} matrix is beyond cuSOLVER's 32-bit sizes")))?;
        let out_meta = Meta::new(DType::F64, [d + 1, d]);
        let out = self.gpu.pool.alloc(out_meta.bytes(), at)?;
        let matrix = self.gpu.pool.alloc(d * d * 8, at)?;
        let values = self.gpu.pool.alloc(d * 8, at)?;
        let flags = self.gpu.pool.alloc(8, at)?;
        let check = self.gpu.function(EIGEN_SOURCE, "bach_eigen_check").map_err(|e| at.fail(format!("kernel `bach_eigen_check`: {e}")))?;
        let order = self.gpu.function(EIGEN_SOURCE, "bach_eigen_order").map_err(|e| at.fail(format!("kernel `bach_eigen_order`: {e}")))?;
        for i in inputs {
            self.wait_for(Lane::Compute, i.buf, at)?;
        }
        for b in [&out, &matrix, &values, &flags] {
            b.touch(Lane::Compute);
        }
        let stream = self.gpu.stream(Lane::Compute).cu_stream();
        let start = self.gpu.begin(Lane::Compute).map_err(|e| at.cuda("cuEventRecord", e))?;
        if d > 0 {
            // SAFETY: live blocks of the sizes given, on the compute stream.
            unsafe {
                result::memcpy_dtod_async(matrix.ptr, a.ptr, d * d * 8, stream).map_err(|e| at.cuda("cuMemcpyDtoDAsync", e))?;
                result::memset_d8_async(flags.ptr, 0, 8, stream).map_err(|e| at.cuda("cuMemsetD8Async", e))?;
            }
            self.queue_kernel(at, &check, "bach_eigen_check", blocks_for((d * d) as u64, self.gpu.sms), BLOCK, &[KArg::U64(d as u64), KArg::U64(a.ptr), KArg::U64(flags.ptr)])?;
            let guard = self.gpu.solver();
            let Some(Ok(solver)) = guard.as_ref() else { return Err(at.fail("cuSOLVER is not available")) };
            let (jobz, uplo) = (solver_sys::cusolverEigMode_t::CUSOLVER_EIG_MODE_VECTOR, solver_sys::cublasFillMode_t::CUBLAS_FILL_MODE_UPPER);
            let mut lwork = 0i32;
            // SAFETY: a live handle; the pointers are live blocks of d x d and d doubles.
            let status = unsafe { solver_sys::cusolverDnDsyevd_bufferSize(solver.handle, jobz, uplo, n, matrix.ptr as *const f64, n.max(1), values.ptr as *const f64, &mut lwork) };
            if status != solver_sys::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS {
                return Err(at.fail(format!("cuSOLVER's syevd workspace query: {status:?}")));
            }
            let work = self.gpu.pool.alloc(lwork.max(1) as usize * 8, at)?;
            work.touch(Lane::Compute);
            // SAFETY: as above, with a workspace of lwork doubles and the status int in flags.
            let status = unsafe {
                solver_sys::cusolverDnDsyevd(
                    solver.handle,
                    jobz,
                    uplo,
                    n,
                    matrix.ptr as *mut f64,
                    n.max(1),
                    values.ptr as *mut f64,
                    work.ptr as *mut f64,
                    lwork,
                    flags.ptr as *mut i32,
                )
            };
            drop(guard);
            match status {
                solver_sys::cusolverStatus_t::CUSOLVER_STATUS_SUCCESS => {}
                solver_sys::cusolverStatus_t::CUSOLVER_STATUS_ALLOC_FAILED => {
                    return Err(BachError::DeviceOutOfMemory { device: at.device.to_string(), detail: format!("cuSOLVER could not allocate for `{}`", at.op) })
                }
                s => return Err(at.fail(format!("cuSOLVER's syevd: {s:?}"))),
            }
            let kargs = [KArg::U64(d as u64), KArg::U64(values.ptr), KArg::U64(matrix.ptr), KArg::U64(flags.ptr), KArg::U64(out.ptr)];
            self.queue_kernel(at, &order, "bach_eigen_order", blocks_for(d as u64 + 1, self.gpu.sms), BLOCK, &kargs)?;
        }
        let end = self.gpu.end(Lane::Compute, self.owner, Some(span), start).map_err(|e| at.cuda("cuEventRecord", e))?;
        if d > 0 {
            let mut status = [0i32; 2];
            self.gpu.stream(Lane::Compute).synchronize().map_err(|e| at.cuda("waiting for cuSOLVER's syevd", e))?;
            // SAFETY: flags holds two ints, written by the work just waited for.
            unsafe { result::memcpy_dtoh_sync(&mut status, flags.ptr) }.map_err(|e| at.cuda("reading syevd's status", e))?;
            if status[0] != 0 && status[1] == 0 {
                return Err(at.fail(format!(
                    "cuSOLVER's syevd did not converge (info {}: {} off-diagonal elements of an intermediate tridiagonal form did not converge to zero)",
                    status[0], status[0]
                )));
            }
        }
        Ok(self.value(out, out_meta, end, Lane::Compute))
    }
}

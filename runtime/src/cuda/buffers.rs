//! What lives in GPU memory and what a kernel takes: [`CudaBuffer`] (a value's memory and the
//! event after the work that wrote it), [`CudaConstant`] (a one-element value kept as its
//! bits), kernel parameters and arguments.

use std::sync::Arc;

use cudarc::driver::CudaEvent;

use super::memory::{Block, Lane};
use super::At;
use crate::error::Result;
use crate::knobs::knobs;
use crate::value::{DType, DeviceBuffer, DeviceValue, Meta};

/// Memory of one value (or of several row pieces of one) on the GPU.
pub(super) struct CudaBuffer {
    pub(super) block: Block,
    /// Recorded after the work that wrote the contents; `None` if nothing did (empty).
    pub(super) ready: Option<Arc<CudaEvent>>,
    /// The stream that work ran on (readers on other streams wait for `ready`).
    pub(super) lane: Lane,
}

impl DeviceBuffer for CudaBuffer {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

/// A one-element value copied to the GPU (a scalar constant of an expression): kept as its
/// bits, not copied. A fused kernel takes it as a parameter by value ([`fuse::generate`]);
/// anything that needs it in memory gets it copied there at first use (one 8-byte copy, as
/// before), `BACH_CUDA_CONST=0` copies it at once. Every scalar was its own copy and event
/// pair before: Black-Scholes has nine.
pub(super) struct CudaConstant {
    pub(super) dtype: DType,
    /// The element's bytes (an f32's in the low four).
    pub(super) bits: u64,
    /// The value in device memory, once something needed it there.
    pub(super) memory: std::sync::OnceLock<CudaBuffer>,
}

impl DeviceBuffer for CudaConstant {
    fn as_any(&self) -> &dyn std::any::Any {
        self
    }
}

impl CudaConstant {
    /// The constant as a kernel parameter of its C type.
    pub(super) fn karg(&self) -> KArg {
        match self.dtype {
            DType::F32 => KArg::F32(f32::from_bits(self.bits as u32)),
            DType::F64 => KArg::F64(f64::from_bits(self.bits)),
            _ => KArg::U64(self.bits),
        }
    }
}

/// A constant of `meta` (one element) with the bits `bits`, for tests of the generated kernels.
#[cfg(test)]
pub(super) fn constant_for_tests(meta: Meta, bits: u64) -> DeviceValue {
    let dtype = meta.dtype;
    DeviceValue { device: crate::device::DeviceId(1), meta, offset: 0, buffer: Arc::new(CudaConstant { dtype, bits, memory: std::sync::OnceLock::new() }) }
}

/// Whether `v` is a constant that a fused kernel takes by value.
pub(super) fn is_constant(v: &DeviceValue) -> bool {
    v.buffer::<CudaConstant>().is_some()
}

/// Whether one-element values stay constants (`BACH_CUDA_CONST=0`: copied at once;
/// [`crate::knobs::Knobs::cuda_const`], read once).
pub(super) fn constants_on() -> bool {
    knobs().cuda_const
}

/// A kernel parameter.
pub(super) enum KArg {
    U64(u64),
    F64(f64),
    F32(f32),
}

/// An argument of a kernel: where its piece starts, and its meta.
pub(super) struct Input<'v> {
    pub(super) ptr: u64,
    pub(super) meta: &'v Meta,
    pub(super) buf: &'v CudaBuffer,
}

pub(super) fn suffix(dtype: DType, at: At<'_>) -> Result<&'static str> {
    match dtype {
        DType::F64 => Ok("f64"),
        DType::F32 => Ok("f32"),
        DType::I64 => Ok("i64"),
        DType::Bool => Ok("bool"),
        DType::Opaque => Err(at.invalid("opaque values have no GPU kernels")),
    }
}

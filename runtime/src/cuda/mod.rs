//! The CUDA device: the only module that calls cudarc.
//!
//! - [`detect`] finds a GPU and says why there is none (no driver, no device, an old driver,
//!   no NVRTC, no cuBLAS), never panicking: the CUDA libraries are loaded at run time, so the
//!   same binary runs on machines without them.
//! - `gpu`: the GPU as the process holds it (context, streams, pools, cuBLAS, compiled
//!   kernels, the timeline of CUDA events), opened once per process and ordinal.
//! - `device`: [`CudaDevice`], the [`Device`] the executor drives: copies through pinned
//!   staging buffers on their own streams, kernels launched by their [`crate::annotation::Launch`]
//!   convention, products through cuBLAS.
//! - `memory`: the caching pool of device memory and the pinned staging buffers.
//! - `nvrtc`: CUDA C to CUBIN/PTX; [`nvrtc_compile`] needs no GPU (CI checks every kernel).
//! - `shapes`: the launch arithmetic (broadcast indexing, reductions, products as
//!   column-major BLAS), tested without a GPU.
//!
//! Every call into CUDA runs under `device::catch_panics`: a panic in cudarc becomes a
//! [`BachError::Kernel`] naming the op, and CUDA errors name the op and the call.

use std::sync::Arc;

use cudarc::driver::result::DriverError;

use crate::device::{panic_text, Device, DeviceId};
use crate::error::BachError;

mod blas;
mod buffers;
mod device;
mod fuse;
mod gpu;
mod launch;
mod memory;
mod nvrtc;
mod readahead;
mod shapes;
mod transfers;

pub use blas::EIGEN_SOURCE;
pub use device::CudaDevice;

/// A GPU found by [`detect`], and notes for the user (every GPU listed, which one is used).
pub struct Found {
    pub device: Arc<dyn Device>,
    pub notes: Vec<String>,
}

/// Find a CUDA GPU to use as device `id` (the one numbered `BACH_CUDA_DEVICE`, default 0:
/// [`crate::knobs::Knobs::cuda_device`], read at each call);
/// never panics: the error says why there is none.
pub fn detect(id: DeviceId) -> Result<Found, String> {
    let ordinal = ordinal(crate::knobs::Knobs::from_env().cuda_device.as_deref())?;
    crate::device::catch_panics(|| {
        let gpu = gpu::open(ordinal)?;
        let notes = gpu.notes.clone();
        let device: Arc<dyn Device> = Arc::new(CudaDevice::new(id, gpu));
        Ok(Found { device, notes })
    })
    .unwrap_or_else(|p| Err(format!("the CUDA libraries panicked: {}", panic_text(&*p))))
}

/// GPUs found by [`detect_all`], one device each, and notes for the user.
pub struct FoundSet {
    pub devices: Vec<Arc<dyn Device>>,
    pub notes: Vec<String>,
}

/// The CUDA GPUs `ordinals` names (`None`: every GPU of the machine), as devices numbered
/// from `first` in that order. The same ordinal twice is two logical devices on one GPU:
/// each its own [`CudaDevice`] on the GPU's one context, streams and pool. Never panics.
pub fn detect_all(ordinals: Option<&[usize]>, first: DeviceId) -> Result<FoundSet, String> {
    let ordinals: Vec<usize> = match ordinals {
        Some(list) if !list.is_empty() => list.to_vec(),
        Some(_) => return Err("no GPU asked for".into()),
        None => (0..gpu::count()?).collect(),
    };
    if ordinals.len() > crate::profile::MAX_ACCELERATORS {
        return Err(format!("{} GPUs asked for; at most {}", ordinals.len(), crate::profile::MAX_ACCELERATORS));
    }
    crate::device::catch_panics(|| {
        let mut devices: Vec<Arc<dyn Device>> = Vec::new();
        let mut notes: Vec<String> = Vec::new();
        for (k, &ordinal) in ordinals.iter().enumerate() {
            let gpu = gpu::open(ordinal)?;
            if k == 0 {
                notes.extend(gpu.notes.iter().cloned());
            }
            devices.push(Arc::new(CudaDevice::new(DeviceId(first.0 + k as u8), gpu)));
        }
        if devices.len() > 1 {
            let mut seen = ordinals.clone();
            seen.sort_unstable();
            seen.dedup();
            notes.push(format!(
                "{} accelerators on {} GPU(s): {}",
                devices.len(),
                seen.len(),
                ordinals.iter().enumerate().map(|(k, o)| format!("device {} = cuda:{o}", first.0 as usize + k)).collect::<Vec<_>>().join(", ")
            ));
        }
        Ok(FoundSet { devices, notes })
    })
    .unwrap_or_else(|p| Err(format!("the CUDA libraries panicked: {}", panic_text(&*p))))
}

/// The GPU number `BACH_CUDA_DEVICE` asks for (0 when unset).
fn ordinal(var: Option<&str>) -> Result<usize, String> {
    match var.map(str::trim) {
        None | Some("") => Ok(0),
        Some(s) => s.parse().map_err(|_| format!("BACH_CUDA_DEVICE={s} is not a GPU number (0, 1, ...)")),
    }
}

/// Compile CUDA C `source` with NVRTC for `arch` (`compute_XY`: PTX, `sm_XY`: CUBIN) and
/// return the size of the image. Needs only NVRTC (no GPU, no driver): the error is NVRTC's
/// log, or why NVRTC cannot be loaded (it then starts with "NVRTC not found").
pub fn nvrtc_compile(source: &str, arch: &str) -> Result<usize, String> {
    nvrtc::compile_checked(source, arch).map(|image| image.len())
}

/// The PTX NVRTC makes of CUDA C `source` for `arch` (`compute_XY`), to check which entry
/// points a source defines (`.entry name`); errors as [`nvrtc_compile`].
pub fn nvrtc_ptx(source: &str, arch: &str) -> Result<String, String> {
    if !arch.starts_with("compute_") {
        return Err(format!("PTX is made for a virtual architecture (compute_XY), not {arch}"));
    }
    let image = nvrtc::compile_checked(source, arch)?;
    Ok(String::from_utf8_lossy(image.split(|&b| b == 0).next().unwrap_or_default()).into_owned())
}

/// NVRTC's version, or why it cannot be loaded ("NVRTC not found ...").
pub fn nvrtc_version() -> Result<(i32, i32), String> {
    nvrtc::version()
}

/// Where a CUDA call happens, to name it in errors: the op and the device.
#[derive(Clone, Copy)]
pub(crate) struct At<'a> {
    pub op: &'a str,
    pub device: &'a str,
}

impl At<'_> {
    /// A failed driver call; out of memory is [`BachError::DeviceOutOfMemory`].
    fn cuda(&self, call: &str, e: DriverError) -> BachError {
        if e.0 == cudarc::driver::sys::cudaError_enum::CUDA_ERROR_OUT_OF_MEMORY {
            return BachError::DeviceOutOfMemory { device: self.device.to_string(), detail: format!("{call} in `{}`", self.op) };
        }
        self.fail(format!("{call}: {}", describe(&e)))
    }
    fn fail(&self, detail: impl Into<String>) -> BachError {
        BachError::Kernel { op: self.op.to_string(), device: self.device.to_string(), detail: detail.into() }
    }
    fn invalid(&self, detail: impl Into<String>) -> BachError {
        BachError::invalid(self.op, detail)
    }
}

/// `CUDA_ERROR_NAME: what the driver says`.
fn describe(e: &DriverError) -> String {
    crate::device::catch_panics(|| {
        let name = e.error_name().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|_| format!("{:?}", e.0));
        match e.error_string() {
            Ok(s) => format!("{name} ({})", s.to_string_lossy()),
            Err(_) => name,
        }
    })
    .unwrap_or_else(|_| format!("{:?}", e.0))
}

/// Whether this machine has a CUDA driver library (tests skip what needs its absence).
#[cfg(test)]
pub(crate) fn driver_present() -> bool {
    // SAFETY: only tries to load the driver library.
    unsafe { cudarc::driver::sys::is_culib_present() }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_driver_is_a_reason_not_a_crash() {
        if driver_present() {
            eprintln!("skipped: this machine has a CUDA driver");
            return;
        }
        let why = detect(DeviceId(1)).err().expect("no GPU without a driver");
        assert!(why.contains("no libcuda.so found"), "{why}");
    }

    #[test]
    fn the_device_number_comes_from_the_environment() {
        assert_eq!(ordinal(None), Ok(0));
        assert_eq!(ordinal(Some(" ")), Ok(0));
        assert_eq!(ordinal(Some("2")), Ok(2));
        assert!(ordinal(Some("first")).unwrap_err().contains("BACH_CUDA_DEVICE=first"));
    }

    #[test]
    fn nvrtc_compile_never_panics() {
        match nvrtc_compile("extern \"C\" __global__ void k(double* x) { x[0] = 1.0; }", "compute_90") {
            Ok(n) => assert!(n > 0),
            Err(e) => assert!(e.starts_with("NVRTC not found"), "{e}"),
        }
        match nvrtc_compile("extern \"C\" __global__ void k(double* x) { x[0] = oops; }", "compute_90") {
            Ok(_) => panic!("a typo compiled"),
            Err(e) => assert!(e.starts_with("NVRTC not found") || e.contains("oops"), "{e}"),
        }
    }
}

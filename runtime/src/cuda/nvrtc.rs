//! NVRTC: CUDA C to a loadable image (CUBIN for the GPU's own architecture, PTX otherwise).
//! Needs only `libnvrtc` (no GPU, no driver), so CI checks that every kernel compiles.

use std::ffi::{c_char, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

use cudarc::nvrtc::{result as nvrtc, sys};

/// What to tell a user when NVRTC is missing.
const HOW_TO_GET_NVRTC: &str = "install the CUDA toolkit, or `pip install nvidia-cuda-nvrtc==13.0.*` and add its `nvidia/cu13/lib` directory to LD_LIBRARY_PATH";

/// NVRTC's version, or why it cannot be loaded.
pub(super) fn version() -> Result<(i32, i32), String> {
    let present = catch_unwind(|| unsafe { sys::is_culib_present() }).unwrap_or(false);
    if !present {
        return Err(format!("NVRTC not found (no libnvrtc.so.13 or libnvrtc.so on the library path): {HOW_TO_GET_NVRTC}"));
    }
    catch_unwind(|| {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two valid out-pointers.
        unsafe { sys::nvrtcVersion(&mut major, &mut minor) }.result().map_err(|e| format!("nvrtcVersion failed: {:?}", e.0))?;
        Ok((major, minor))
    })
    .unwrap_or_else(|p| Err(format!("NVRTC could not be used: {}", crate::device::panic_text(&*p))))
}

/// Architectures this NVRTC compiles for (e.g. 75, 80, ..., 90, 100, 120).
pub(super) fn supported_archs() -> Result<Vec<i32>, String> {
    catch_unwind(|| {
        let mut n = 0;
        // SAFETY: a valid out-pointer, then a buffer of the size NVRTC reported.
        unsafe { sys::nvrtcGetNumSupportedArchs(&mut n) }.result().map_err(|e| format!("nvrtcGetNumSupportedArchs: {:?}", e.0))?;
        let mut archs = vec![0; n.max(0) as usize];
        if n > 0 {
            unsafe { sys::nvrtcGetSupportedArchs(archs.as_mut_ptr()) }.result().map_err(|e| format!("nvrtcGetSupportedArchs: {:?}", e.0))?;
        }
        Ok(archs)
    })
    .unwrap_or_else(|p| Err(format!("NVRTC could not be used: {}", crate::device::panic_text(&*p))))
}

/// The architecture to compile for on a GPU of compute capability `cc`: its own (`sm_XY`,
/// a CUBIN) when this NVRTC knows it, else PTX for the newest one it knows below (the driver
/// compiles that PTX for the GPU).
pub(super) fn arch_for(cc: (i32, i32), supported: &[i32]) -> Result<String, String> {
    let own = cc.0 * 10 + cc.1;
    if supported.contains(&own) {
        return Ok(format!("sm_{own}"));
    }
    match supported.iter().copied().filter(|&a| a <= own).max() {
        Some(a) => Ok(format!("compute_{a}")),
        None => Err(format!("the GPU (sm_{own}) is older than every architecture this NVRTC compiles for (oldest: sm_{})", supported.iter().min().copied().unwrap_or(0))),
    }
}

/// An NVRTC program, destroyed on drop.
struct Program(sys::nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by nvrtcCreateProgram and destroyed once, here.
        let _ = unsafe { nvrtc::destroy_program(self.0) };
    }
}

fn text(chars: Vec<c_char>) -> String {
    let bytes: Vec<u8> = chars.into_iter().take_while(|&c| c != 0).map(|c| c as u8).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// Compile CUDA C `source` for `arch` (`sm_XY`: a CUBIN; `compute_XY`: NUL-terminated PTX).
/// The error is NVRTC's log, naming the file `bach_kernel.cu` and the line.
pub(super) fn compile(source: &str, arch: &str) -> Result<Vec<u8>, String> {
    let src = CString::new(source).map_err(|_| "the kernel source contains a NUL byte".to_string())?;
    let prog = Program(nvrtc::create_program(&src, Some(c"bach_kernel.cu")).map_err(|e| format!("nvrtcCreateProgram: {:?}", e.0))?);
    let options = [format!("--gpu-architecture={arch}")];
    // SAFETY: a live program; options without NUL bytes.
    let compiled = unsafe { nvrtc::compile_program(prog.0, &options) };
    if let Err(e) = compiled {
        // SAFETY: a live program.
        let log = unsafe { nvrtc::get_program_log(prog.0) }.map(text).unwrap_or_default();
        return Err(format!("NVRTC {:?} compiling for {arch}:\n{}", e.0, log.trim_end()));
    }
    if arch.starts_with("sm_") {
        let mut size = 0usize;
        // SAFETY: a compiled program; the buffer has the size NVRTC reported.
        unsafe { sys::nvrtcGetCUBINSize(prog.0, &mut size) }.result().map_err(|e| format!("nvrtcGetCUBINSize: {:?}", e.0))?;
        let mut cubin = vec![0u8; size];
        unsafe { sys::nvrtcGetCUBIN(prog.0, cubin.as_mut_ptr() as *mut c_char) }.result().map_err(|e| format!("nvrtcGetCUBIN: {:?}", e.0))?;
        Ok(cubin)
    } else {
        // SAFETY: a compiled program.
        let ptx = unsafe { nvrtc::get_ptx(prog.0) }.map_err(|e| format!("nvrtcGetPTX: {:?}", e.0))?;
        Ok(ptx.into_iter().map(|c| c as u8).collect())
    }
}

/// [`compile`] behind the checks a caller without a GPU needs: NVRTC present, no panic.
pub(super) fn compile_checked(source: &str, arch: &str) -> Result<Vec<u8>, String> {
    version()?;
    catch_unwind(AssertUnwindSafe(|| compile(source, arch))).unwrap_or_else(|p| Err(format!("NVRTC panicked: {}", crate::device::panic_text(&*p))))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_architecture_when_known_else_ptx_below() {
        let archs = [75, 80, 86, 89, 90, 100, 120];
        assert_eq!(arch_for((9, 0), &archs).unwrap(), "sm_90");
        assert_eq!(arch_for((8, 7), &archs).unwrap(), "compute_86");
        assert_eq!(arch_for((12, 1), &archs).unwrap(), "compute_120");
        assert!(arch_for((7, 0), &archs).unwrap_err().contains("older"));
    }
}

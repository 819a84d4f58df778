//! The devices a session runs on: which ones this machine has (`BACH_DEVICE`, detection of a
//! GPU), and why there is no accelerator when there is none. The only module that builds the
//! CUDA and emulated devices.

use std::sync::Arc;

use crate::device::{CpuDevice, Device};
use crate::error::{BachError, Result};
use crate::profile::{DeviceId, DeviceKind, DeviceProfile};

/// Memory of the emulated accelerator when none is given.
pub const DEFAULT_EMULATED_MEMORY: u64 = 4 << 30;

/// Which devices a session (or a benchmark) asks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// A GPU when there is one, else the CPU.
    Auto,
    Cpu,
    /// A CUDA GPU, or an error saying why there is none.
    Cuda,
    /// The emulated accelerator (host memory, CPU kernels), with this much memory.
    Emulated(Option<u64>),
}

impl std::str::FromStr for DeviceChoice {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        let t = s.trim();
        match t {
            "auto" | "" => Ok(DeviceChoice::Auto),
            "cpu" => Ok(DeviceChoice::Cpu),
            "cuda" | "gpu" => Ok(DeviceChoice::Cuda),
            "emulated" => Ok(DeviceChoice::Emulated(None)),
            _ => match t.strip_prefix("emulated:") {
                Some(size) => crate::units::parse_bytes(size).map(|b| DeviceChoice::Emulated(Some(b))).map_err(|e| e.to_string()),
                None => Err(format!("unknown device `{t}` (auto, cpu, cuda, emulated, emulated:SIZE)")),
            },
        }
    }
}

/// The devices of a session, and why there is no accelerator when there is none.
#[derive(Clone)]
pub struct Devices {
    devices: Vec<Arc<dyn Device>>,
    notes: Vec<String>,
}

impl Devices {
    /// Find this machine's devices, as `BACH_DEVICE` says ([`crate::knobs::Knobs::device`], read at each call: `auto`, the default: a GPU if
    /// there is one; `cpu`; `cuda`; `emulated` or `emulated:SIZE`). No accelerator is a normal
    /// case: the runtime runs on the CPU and says why. A choice that cannot be had falls back
    /// to the CPU with the reason in the notes (a session must always start).
    pub fn detect() -> Self {
        let choice = crate::knobs::Knobs::from_env().device;
        match choice.parse::<DeviceChoice>().and_then(Devices::select) {
            Ok(d) => d,
            Err(why) => Devices { devices: vec![Arc::new(CpuDevice::new())], notes: vec![format!("no GPU: running on CPU ({why})")] },
        }
    }
    /// The devices for `choice`; an error says why they cannot be had (no GPU, say).
    pub fn select(choice: DeviceChoice) -> std::result::Result<Self, String> {
        let cpu: Arc<dyn Device> = Arc::new(CpuDevice::new());
        match choice {
            DeviceChoice::Cpu => Ok(Devices { devices: vec![cpu], notes: vec!["running on CPU (asked for the CPU only)".into()] }),
            DeviceChoice::Emulated(memory) => {
                let memory = memory.unwrap_or(DEFAULT_EMULATED_MEMORY);
                Ok(Devices {
                    devices: vec![cpu, Arc::new(crate::emulated::EmulatedDevice::new(DeviceId(1), memory))],
                    notes: vec!["the accelerator is emulated in host memory with CPU kernels: it is not a GPU".into()],
                })
            }
            DeviceChoice::Cuda | DeviceChoice::Auto => match crate::cuda::detect(DeviceId(1)) {
                Ok(found) => Ok(Devices { devices: vec![cpu, found.device], notes: found.notes }),
                Err(why) if choice == DeviceChoice::Auto => Ok(Devices { devices: vec![cpu], notes: vec![format!("no GPU: running on CPU ({why})")] }),
                Err(why) => Err(why),
            },
        }
    }
    /// A device list of one's own: the CPU first, each device's id its position.
    pub fn new(devices: Vec<Arc<dyn Device>>, notes: Vec<String>) -> Result<Self> {
        if devices.first().map(|d| d.profile().kind) != Some(DeviceKind::Cpu) {
            return Err(BachError::invalid("devices", "the first device must be the CPU"));
        }
        if let Some((i, d)) = devices.iter().enumerate().find(|(i, d)| d.profile().id.0 as usize != *i) {
            return Err(BachError::invalid("devices", format!("device {} at position {i} has id {}", d.profile().name, d.profile().id.0)));
        }
        Ok(Devices { devices, notes })
    }
    /// Every device, the CPU first.
    pub fn all(&self) -> impl Iterator<Item = &Arc<dyn Device>> {
        self.devices.iter()
    }
    pub fn get(&self, id: DeviceId) -> Option<&Arc<dyn Device>> {
        self.devices.get(id.0 as usize)
    }
    pub fn profiles(&self) -> Vec<DeviceProfile> {
        self.devices.iter().map(|d| d.profile().clone()).collect()
    }
    /// Human-readable report: each device, then notes (why no GPU).
    pub fn report(&self) -> String {
        let mut s = String::new();
        for d in &self.devices {
            s += &format!("{}\n", d.profile());
        }
        for d in &self.devices {
            if let Some(n) = d.state_note() {
                s += &format!("{n}\n");
            }
        }
        for n in &self.notes {
            s += &format!("{n}\n");
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_gpu_driver_falls_back_to_the_cpu_and_says_why() {
        if crate::cuda::driver_present() {
            eprintln!("skipped: this machine has a CUDA driver");
            return;
        }
        let why = Devices::select(DeviceChoice::Cuda).err().expect("asking for CUDA without a driver is an error");
        assert!(why.contains("no libcuda.so found"), "{why}");
        let auto = Devices::select(DeviceChoice::Auto).expect("auto falls back to the CPU");
        assert_eq!(auto.profiles().len(), 1);
        assert!(auto.report().contains("no GPU: running on CPU (no libcuda.so found"), "{}", auto.report());
        if matches!(crate::knobs::Knobs::from_env().device.as_str(), "auto" | "cuda") {
            let report = Devices::detect().report();
            assert!(report.contains("no GPU: running on CPU (no libcuda.so found"), "{report}");
        }
    }
}

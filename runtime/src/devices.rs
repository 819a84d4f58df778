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
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceChoice {
    /// A GPU when there is one, else the CPU.
    Auto,
    Cpu,
    /// The CUDA GPUs `BACH_CUDA_DEVICES` (or `BACH_CUDA_DEVICE`) names, GPU 0 when neither
    /// is set, or an error saying why there is none.
    Cuda,
    /// These CUDA GPUs by ordinal, one device each, in order (`cuda:0,cuda:1`; `cuda:0,cuda:0`
    /// is two logical devices on one GPU, sharing its streams and memory).
    CudaSet(Vec<usize>),
    /// The emulated accelerator (host memory, CPU kernels), with this much memory.
    Emulated(Option<u64>),
    /// `count` emulated accelerators, each with a memory of its own of this size.
    EmulatedSet {
        count: usize,
        memory: Option<u64>,
    },
}

pub use crate::profile::MAX_ACCELERATORS;

/// `cuda:N` (N a GPU number) or `cuda:all`, as in `BACH_DEVICE=cuda:0,cuda:1`.
fn cuda_ordinals(list: &str) -> std::result::Result<Option<Vec<usize>>, String> {
    let mut out = Vec::new();
    for item in list.split(',').map(str::trim) {
        match item.strip_prefix("cuda:").or_else(|| item.strip_prefix("gpu:")) {
            Some("all") => return Ok(None),
            Some(n) => out.push(n.parse::<usize>().map_err(|_| format!("`{item}` is not a GPU (cuda:0, cuda:1, ..., cuda:all)"))?),
            None => return Err(format!("`{item}` in a device list is not a GPU (cuda:0, cuda:1, ..., cuda:all)")),
        }
    }
    if out.len() > MAX_ACCELERATORS {
        return Err(format!("{} GPUs asked for; at most {MAX_ACCELERATORS}", out.len()));
    }
    Ok(Some(out))
}

/// `BACH_CUDA_DEVICES` (`0,1`, `all`) else `BACH_CUDA_DEVICE` (one number): the GPUs `cuda`
/// uses, `None` for every GPU of the machine.
pub fn cuda_ordinals_from_env() -> std::result::Result<Option<Vec<usize>>, String> {
    let knobs = crate::knobs::Knobs::from_env();
    match knobs.cuda_devices.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
        Some("all") => Ok(None),
        Some(list) => list
            .split(',')
            .map(|n| n.trim().parse::<usize>().map_err(|_| format!("BACH_CUDA_DEVICES={list} is not a list of GPU numbers (0,1 or all)")))
            .collect::<std::result::Result<Vec<_>, _>>()
            .map(Some),
        None => match knobs.cuda_device.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            None => Ok(Some(vec![0])),
            Some(s) => s.parse().map(|n| Some(vec![n])).map_err(|_| format!("BACH_CUDA_DEVICE={s} is not a GPU number (0, 1, ...)")),
        },
    }
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
            _ if t.starts_with("cuda:") || t.starts_with("gpu:") => Ok(match cuda_ordinals(t)? {
                Some(list) => DeviceChoice::CudaSet(list),
                None => DeviceChoice::Cuda,
            }),
            _ => match t.strip_prefix("emulated:") {
                // `emulated:4` (a count), `emulated:4:1GiB` (each one's memory), `emulated:1GiB`.
                Some(rest) => {
                    let (first, size) = rest.split_once(':').map_or((rest, None), |(a, b)| (a, Some(b)));
                    let memory = size.map(crate::units::parse_bytes).transpose().map_err(|e| e.to_string())?;
                    match first.trim().parse::<usize>() {
                        Ok(0) => Err("emulated:0: at least one emulated accelerator".into()),
                        Ok(n) if n > MAX_ACCELERATORS => Err(format!("emulated:{n}: at most {MAX_ACCELERATORS} accelerators")),
                        Ok(count) => Ok(DeviceChoice::EmulatedSet { count, memory }),
                        Err(_) if size.is_none() => crate::units::parse_bytes(first).map(|b| DeviceChoice::Emulated(Some(b))).map_err(|e| e.to_string()),
                        Err(_) => Err(format!("`emulated:{rest}`: a count, then a size (emulated:4:1GiB)")),
                    }
                }
                None => Err(format!("unknown device `{t}` (auto, cpu, cuda, cuda:0,cuda:1, cuda:all, emulated, emulated:SIZE, emulated:N[:SIZE])")),
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
            DeviceChoice::Emulated(memory) => Ok(Devices::emulated(1, memory)),
            DeviceChoice::EmulatedSet { count, memory } => Ok(Devices::emulated(count, memory)),
            DeviceChoice::Cuda | DeviceChoice::Auto | DeviceChoice::CudaSet(_) => {
                let ordinals = match &choice {
                    DeviceChoice::CudaSet(list) => Ok(Some(list.clone())),
                    _ => cuda_ordinals_from_env(),
                };
                let found = ordinals.and_then(|o| crate::cuda::detect_all(o.as_deref(), DeviceId(1)));
                match found {
                    Ok(found) => Ok(Devices { devices: std::iter::once(cpu).chain(found.devices).collect(), notes: found.notes }),
                    Err(why) if choice == DeviceChoice::Auto => Ok(Devices { devices: vec![cpu], notes: vec![format!("no GPU: running on CPU ({why})")] }),
                    Err(why) => Err(why),
                }
            }
        }
    }
    /// The CPU and `count` emulated accelerators of `memory` bytes each (ids 1..=count).
    fn emulated(count: usize, memory: Option<u64>) -> Self {
        let memory = memory.unwrap_or(DEFAULT_EMULATED_MEMORY);
        let cpu: Arc<dyn Device> = Arc::new(CpuDevice::new());
        let accelerators = (1..=count).map(|k| Arc::new(crate::emulated::EmulatedDevice::new(DeviceId(k as u8), memory)) as Arc<dyn Device>);
        let note = if count == 1 {
            "the accelerator is emulated in host memory with CPU kernels: it is not a GPU".to_string()
        } else {
            format!("{count} accelerators are emulated in host memory with CPU kernels, each with a memory of its own: they are not GPUs, and they share the host's cores")
        };
        Devices { devices: std::iter::once(cpu).chain(accelerators).collect(), notes: vec![note] }
    }
    /// The accelerators (every device but the CPU), in id order.
    pub fn accelerators(&self) -> impl Iterator<Item = &Arc<dyn Device>> {
        self.devices.iter().skip(1)
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
    /// How reports name device `id`: its name, with its number after it (`[2]`) when the
    /// session has several accelerators (they may share a name: `emulated:4`, `cuda:0,cuda:0`).
    pub fn label(&self, id: DeviceId) -> String {
        match self.get(id) {
            Some(d) if id != crate::profile::CPU && self.devices.len() > 2 => format!("{} [{}]", d.profile().name, id.0),
            Some(d) => d.profile().name.clone(),
            None => format!("device {}", id.0),
        }
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
        let several = self.devices.len() > 2;
        for d in &self.devices {
            if let Some(n) = d.state_note() {
                s += &if several { format!("[{}] {n}\n", d.profile().id.0) } else { format!("{n}\n") };
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

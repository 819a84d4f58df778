//! The cost model: what the planner believes an op and a copy cost, as one value a person can
//! print, change and save. Time of an op on a device = `per_call + per_element * elements +
//! per_flop * flops`, with the parameters looked up by the op's [`Family`] and the device's
//! kind; time of a copy = `latency + bytes / bandwidth`, by direction and host memory kind.
//!
//! Where the figures come from is part of the value ([`CostModel::source`]): the defaults
//! for this machine, or a profile measured on another one ([`CostModel::h100`]), in which case
//! plans made against it are predictions. An annotation's own estimator (the paper's
//! log-linear functions) takes precedence over the table for its op.

mod file;
mod h100;
mod param;
mod table;

pub use file::{host_name, profile_dir, profile_key, saved_profile_path};
pub use param::{paths, CopyField, CopyRate, Devices, Field, OpField, OpRate, Param, Planner, PlannerField, Unit};
pub use table::{parse_seconds, seconds};

use std::fmt;
use std::str::FromStr;

use crate::profile::{DeviceKind, DeviceProfile};
use crate::value::Meta;

/// Ops that cost alike: the rows of the table.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "lowercase"))]
pub enum Family {
    /// One result element per argument element, a few cycles each (`+`, `*`, `where`,
    /// comparisons, casts).
    Elementwise,
    /// Elementwise functions that cost tens of cycles per element on a CPU (`exp`, `ln`,
    /// `sin`, `erf`, `sqrt`, `powf`).
    Math,
    /// Many elements to few (`sum`, `mean`, `max` along an axis).
    Reduce,
    /// Matrix products: `2 n k m` flops.
    Product,
    /// Values made from nothing (`zeros`, `linspace`, `random`).
    Alloc,
    /// Data moved, not computed (`transpose`, row slices).
    Layout,
    /// A Rust closure (`mapv`): CPU only.
    Closure,
    /// Anything else: the default row.
    Other,
    /// Not an op: what a stage costs beyond its ops. `per_call` once per stage (dispatch,
    /// pieces, merging), `per_element` per element the stage streams: the values it reads from
    /// outside and the values it writes out (fresh memory touched, caches filled and spilled).
    /// On a CPU this is most of a cheap op's cost at large sizes.
    Stage,
}

impl Family {
    pub const ALL: [Family; 9] = [Family::Elementwise, Family::Math, Family::Reduce, Family::Product, Family::Alloc, Family::Layout, Family::Closure, Family::Other, Family::Stage];
    pub fn name(self) -> &'static str {
        match self {
            Family::Elementwise => "elementwise",
            Family::Math => "math",
            Family::Reduce => "reduce",
            Family::Product => "product",
            Family::Alloc => "alloc",
            Family::Layout => "layout",
            Family::Closure => "closure",
            Family::Other => "other",
            Family::Stage => "stage",
        }
    }
}

impl fmt::Display for Family {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for Family {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Family::ALL.into_iter().find(|f| f.name() == s).ok_or_else(|| format!("unknown op family `{s}` (known: {})", names(Family::ALL.iter().map(|f| f.name()))))
    }
}

/// What one run of an op does, in the units the table prices.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Work {
    /// Elements of its iteration space: the largest of its arguments and its result (for
    /// products and layout ops, the result's elements: each is written once).
    pub elements: f64,
    /// Floating-point operations beyond one per element. Products: `2 m k n`, times up to 8
    /// when a dimension is under 64 (a GEMM's kernel blocks are half empty, its packing and
    /// memory traffic no longer hidden: measured here, an `8192x13 . 13x8192` product runs at
    /// a tenth of a `1024^3` one's flop rate, a `16384x512 . 512x8` one at a third).
    pub flops: f64,
}

/// How much slower than a large GEMM, per flop, a product is whose smallest dimension is
/// `min_dim`: 1 from 64 up, 64 / min_dim below, at most 8.
pub fn product_inefficiency(min_dim: usize) -> f64 {
    (64.0 / min_dim.max(1) as f64).clamp(1.0, 8.0)
}

impl Work {
    /// The work of an op of `family` over arguments `args` with result `result`.
    pub fn of(family: Family, args: &[Meta], result: &Meta) -> Work {
        if let (Family::Product, Some(a)) = (family, args.first()) {
            let k = a.shape.last().copied().unwrap_or(1);
            let (m, n) = match result.shape.as_slice() {
                [] => (1, 1),
                [m] => (*m, 1),
                s => (s[..s.len() - 1].iter().product(), s[s.len() - 1]),
            };
            let flops = 2.0 * result.len() as f64 * k as f64 * product_inefficiency(m.min(n).min(k));
            return Work { elements: result.len() as f64, flops };
        }
        // Layout ops (transposes, slices, gathers) copy their result, however large their
        // argument: a slice of two rows of a 65 x 64 matrix is two rows' work.
        let elements = match family {
            Family::Layout => result.len(),
            _ => args.iter().map(Meta::len).chain([result.len()]).max().unwrap_or(0),
        } as f64;
        let flops = 0.0;
        Work { elements, flops }
    }
}

impl OpRate {
    pub fn seconds(&self, work: Work) -> f64 {
        self.per_call + self.per_element * work.elements + self.per_flop * work.flops
    }
}

/// Which way a copy goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "lowercase"))]
pub enum Direction {
    /// Host to device.
    H2d,
    /// Device to host.
    D2h,
}

/// The host memory a copy reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize), serde(rename_all = "lowercase"))]
pub enum MemoryKind {
    /// Ordinary host memory (every ndarray): Bach copies it through pinned staging.
    Pageable,
    /// Page-locked memory the copy engine reads directly.
    Pinned,
}

impl CopyRate {
    pub fn seconds(&self, bytes: usize) -> f64 {
        self.latency + bytes as f64 / self.bandwidth
    }
}

/// One row of the op table.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct OpRow {
    pub family: Family,
    pub device: DeviceKind,
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub rate: OpRate,
}

/// One row of the copy table.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CopyRow {
    pub device: DeviceKind,
    pub direction: Direction,
    pub memory: MemoryKind,
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub rate: CopyRate,
}

/// The cost model the planner reads: op and copy tables plus the planner's sizing knobs.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
pub struct CostModel {
    /// Where the figures come from, in words ("defaults for this machine, 2 threads").
    pub source: String,
    /// The machine the figures were measured on, when it is not necessarily this one: plans
    /// made with them are predictions for that machine.
    pub measured_on: Option<String>,
    pub ops: Vec<OpRow>,
    pub copies: Vec<CopyRow>,
    #[cfg_attr(feature = "serde", serde(flatten))]
    pub planner: Planner,
}

impl Default for CostModel {
    /// The defaults for this machine's CPU (its thread count) and a nominal GPU.
    fn default() -> Self {
        CostModel::for_cpu_threads(rayon::current_num_threads())
    }
}

/// Seconds per element of ops of each family on one CPU thread (f64, ndarray, measured on
/// the 2-core development machine: an `exp` 4.5 ns (`math` is per op of weight 1, an
/// `exp`), an add 1 ns, a sum 0.4 ns, and Black-Scholes' 33 ops at 2.7 ns each on one core
/// of the H100 host). A stage streams an element in or out for 0.5 ns (in cache) to 2.4 ns
/// (32 MiB values, fresh pages) per thread. Products (matrixmultiply, f64): 44 GFLOP/s a
/// thread in large GEMMs (87 on both cores for `X^T X` at 8192x512), and 5 ns a thread per
/// result element written (a `8192x13 . 13x8192` product, 2.7 ns per element on two threads,
/// is bound by its result, not its flops).
const CPU_THREAD_SECONDS_PER_ELEMENT: [(Family, f64, f64); 9] = [
    // (family, per element, per flop)
    (Family::Elementwise, 1.0e-9, 0.0),
    (Family::Math, 4.5e-9, 0.0),
    (Family::Reduce, 0.5e-9, 0.0),
    (Family::Product, 5.0e-9, 1.0 / 40e9),
    (Family::Alloc, 0.5e-9, 0.0),
    (Family::Layout, 1.0e-9, 0.0),
    (Family::Closure, 3.0e-9, 0.0),
    (Family::Other, 2.5e-9, 0.0),
    (Family::Stage, 1.0e-9, 0.0),
];

impl CostModel {
    /// The defaults: a CPU of `threads` threads (per-thread rates divided among them, a 2 us
    /// dispatch per call), the emulated accelerator (the same kernels, host memcpy copies),
    /// and the H100 profile's figures for CUDA until a GPU's own copies are measured.
    pub fn for_cpu_threads(threads: usize) -> Self {
        let t = threads.max(1) as f64;
        let mut ops = Vec::new();
        for (family, per_element, per_flop) in CPU_THREAD_SECONDS_PER_ELEMENT {
            let rate = OpRate { per_call: 2e-6, per_element: per_element / t, per_flop: per_flop / t };
            ops.push(OpRow { family, device: DeviceKind::Cpu, rate });
            ops.push(OpRow { family, device: DeviceKind::Emulated, rate });
        }
        let (cuda_ops, mut copies) = h100::cuda_rows();
        ops.extend(cuda_ops);
        for direction in [Direction::H2d, Direction::D2h] {
            for memory in [MemoryKind::Pageable, MemoryKind::Pinned] {
                // A copy between two host buffers: memcpy at a few GB/s per thread.
                copies.push(CopyRow { device: DeviceKind::Emulated, direction, memory, rate: CopyRate { latency: 1e-6, bandwidth: 4e9 * t.min(4.0) } });
            }
        }
        CostModel {
            source: format!("defaults for this machine ({threads} CPU threads, uncalibrated); CUDA rows from the H100 profile"),
            measured_on: None,
            ops,
            copies,
            planner: Planner::default(),
        }
    }

    /// The profile measured on an NVIDIA H100 host with 16 cores (see `h100.rs` for each
    /// figure's source). Plans made with it elsewhere are predictions for that machine.
    pub fn h100() -> Self {
        h100::profile()
    }

    /// The defaults, with copy rates a device measured when it opened (CUDA measures its
    /// pinned copies) in place of the nominal ones.
    pub fn for_devices(devices: &[DeviceProfile]) -> Self {
        let mut model = CostModel::default();
        for d in devices {
            if let Some((h2d, d2h)) = d.measured_copies {
                for row in model.copies.iter_mut().filter(|r| r.device == d.kind && r.memory == MemoryKind::Pinned) {
                    row.rate.bandwidth = if row.direction == Direction::H2d { h2d } else { d2h };
                }
                model.source.push_str(&format!("; pinned copies measured on {}", d.name));
            }
        }
        model
    }

    /// The model a session on `devices` starts with: the profile `bach::calibrate()` saved
    /// for this host and these devices, else the defaults ([`CostModel::for_devices`]). The
    /// second value says why a saved profile was not used, when one was there.
    pub fn for_this_machine(devices: &[DeviceProfile]) -> (Self, Option<String>) {
        match saved_profile_path(devices).filter(|p| p.exists()) {
            Some(path) => match CostModel::load(&path) {
                Ok(model) => (model, None),
                Err(e) => (CostModel::for_devices(devices), Some(format!("the saved cost profile was not loaded ({e}); using the defaults"))),
            },
            None => (CostModel::for_devices(devices), None),
        }
    }

    /// The rates of `family` on a device of `kind` (the `other` row when the table has none).
    pub fn op_rate(&self, family: Family, kind: DeviceKind) -> OpRate {
        let find = |f: Family| self.ops.iter().find(|r| r.family == f && r.device == kind).map(|r| r.rate);
        find(family).or_else(|| find(Family::Other)).unwrap_or(OpRate { per_call: 0.0, per_element: 1e-9, per_flop: 0.0 })
    }

    /// Seconds of one run of an op of `family` doing `work` on `device`, its elements costing
    /// `weight` times its family's on CPU kernels (the CPU and the emulated accelerator; a
    /// GPU's elementwise kernels wait on memory, not on the function).
    pub fn op_seconds(&self, family: Family, weight: f64, work: Work, device: &DeviceProfile) -> f64 {
        let mut rate = self.op_rate(family, device.kind);
        if device.kind != DeviceKind::Cuda {
            rate.per_element *= weight;
        }
        rate.seconds(work)
    }

    /// The rates of copies `direction` between the host's `memory` and a device of `kind`.
    pub fn copy_rate(&self, kind: DeviceKind, direction: Direction, memory: MemoryKind) -> CopyRate {
        self.copies.iter().find(|r| r.device == kind && r.direction == direction && r.memory == memory).map_or(CopyRate { latency: 0.0, bandwidth: f64::INFINITY }, |r| r.rate)
    }

    /// Seconds to copy `bytes` of ordinary (pageable) host memory `direction` for `device`;
    /// 0 for the CPU itself.
    pub fn copy_seconds(&self, bytes: usize, direction: Direction, device: &DeviceProfile) -> f64 {
        self.copy_seconds_of(bytes, direction, MemoryKind::Pageable, device)
    }

    /// Seconds to copy `bytes` of host memory of kind `memory` `direction` for `device`; 0
    /// for the CPU itself.
    pub fn copy_seconds_of(&self, bytes: usize, direction: Direction, memory: MemoryKind, device: &DeviceProfile) -> f64 {
        if device.kind == DeviceKind::Cpu {
            return 0.0;
        }
        self.copy_rate(device.kind, direction, memory).seconds(bytes)
    }
}

fn names<'a>(it: impl Iterator<Item = &'a str>) -> String {
    it.collect::<Vec<_>>().join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::value::DType;

    fn m(shape: &[usize]) -> Meta {
        Meta { dtype: DType::F64, shape: shape.to_vec() }
    }

    #[test]
    fn a_product_counts_its_flops_and_an_elementwise_op_its_elements() {
        let w = Work::of(Family::Product, &[m(&[100, 300]), m(&[300, 70])], &m(&[100, 70]));
        assert_eq!(w, Work { elements: 7000.0, flops: 2.0 * 100.0 * 70.0 * 300.0 });
        // A thin product is priced as a slower one (its smallest dimension, 7, under 64).
        let thin = Work::of(Family::Product, &[m(&[100, 30]), m(&[30, 7])], &m(&[100, 7]));
        assert_eq!(thin, Work { elements: 700.0, flops: 2.0 * 100.0 * 7.0 * 30.0 * 8.0 });
        assert_eq!(Work::of(Family::Product, &[m(&[5]), m(&[5])], &m(&[])).flops, 2.0 * 5.0 * 8.0);
        assert_eq!(Work::of(Family::Elementwise, &[m(&[10]), m(&[1])], &m(&[10])), Work { elements: 10.0, flops: 0.0 });
        assert_eq!(Work::of(Family::Reduce, &[m(&[10, 4])], &m(&[4])).elements, 40.0);
        assert_eq!(Work::of(Family::Layout, &[m(&[65, 64])], &m(&[2, 64])).elements, 128.0);
    }

    #[test]
    fn cpu_rates_divide_among_threads_and_every_family_has_a_row_per_device() {
        let one = CostModel::for_cpu_threads(1);
        let eight = CostModel::for_cpu_threads(8);
        let e = |c: &CostModel| c.op_rate(Family::Elementwise, DeviceKind::Cpu).per_element;
        assert!((e(&one) / e(&eight) - 8.0).abs() < 1e-9);
        for kind in [DeviceKind::Cpu, DeviceKind::Cuda, DeviceKind::Emulated] {
            for f in Family::ALL {
                assert!(one.ops.iter().any(|r| r.family == f && r.device == kind), "{f} on {kind:?}");
            }
            if kind != DeviceKind::Cpu {
                for d in [Direction::H2d, Direction::D2h] {
                    for mk in [MemoryKind::Pageable, MemoryKind::Pinned] {
                        assert!(one.copies.iter().any(|r| r.device == kind && r.direction == d && r.memory == mk));
                    }
                }
            }
        }
    }

    #[test]
    fn a_copy_is_latency_plus_bytes_over_bandwidth_and_free_on_the_cpu() {
        let c = CostModel::h100();
        let gpu = DeviceProfile::hypothetical_gpu("H100", 80 << 30);
        let r = c.copy_rate(DeviceKind::Cuda, Direction::H2d, MemoryKind::Pageable);
        assert!((c.copy_seconds(1 << 30, Direction::H2d, &gpu) - (r.latency + (1u64 << 30) as f64 / r.bandwidth)).abs() < 1e-12);
        assert_eq!(c.copy_seconds(1 << 30, Direction::H2d, &DeviceProfile::cpu()), 0.0);
    }
}

#[cfg(all(test, feature = "serde"))]
mod json {
    use super::*;

    #[test]
    fn the_model_survives_json_and_names_its_rows_in_words() {
        let c = CostModel::h100();
        let text = serde_json::to_string(&c).unwrap();
        assert!(text.contains(r#""family":"elementwise","device":"cuda","per_call":3.4e-6"#), "{text}");
        let back: CostModel = serde_json::from_str(&text).unwrap();
        assert_eq!(back, c);
    }
}

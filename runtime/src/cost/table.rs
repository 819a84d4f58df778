//! The cost model as a person reads it: a table whose columns are the declared parameters
//! (`param.rs`), and seconds written and read as a person does.

use std::fmt;

use super::param::{CopyField, Field, OpField, PlannerField, Unit};
use super::{CostModel, Direction, Family, MemoryKind};
use crate::profile::DeviceKind;

impl CostModel {
    /// The table for devices of `kinds` only (a session shows the kinds it has).
    pub fn table(&self, kinds: &[DeviceKind]) -> String {
        let mut out = String::new();
        let w = &mut out;
        use std::fmt::Write;
        let _ = writeln!(w, "cost model: {}", self.source);
        if let Some(m) = &self.measured_on {
            let _ = writeln!(w, "measured on {m}: plans made with it elsewhere are predictions for that machine");
        }
        let _ = writeln!(
            w,
            "op time = per_call + per_element * elements + per_flop * flops; a stage adds its `stage` row: per_call + per_element * elements it reads in and writes out"
        );
        let _ = write!(w, "  {:<12} {:<9}", "family", "device");
        for f in OpField::ALL {
            let _ = write!(w, " {:>12}", f.name());
        }
        w.push('\n');
        for f in Family::ALL {
            for r in self.ops.iter().filter(|r| r.family == f && kinds.contains(&r.device)) {
                let _ = write!(w, "  {:<12} {:<9}", f.name(), r.device.name());
                for field in OpField::ALL {
                    let _ = write!(w, " {:>12}", cell(field.unit(), field.get(&r.rate)));
                }
                w.push('\n');
            }
        }
        let copies: Vec<_> = self.copies.iter().filter(|r| kinds.contains(&r.device)).collect();
        if !copies.is_empty() {
            let _ = writeln!(w, "copy time = latency + bytes / bandwidth (Bach copies host arrays as pageable memory)");
            let _ = write!(w, "  {:<12} {:<9} {:<9}", "transfer", "device", "memory");
            for f in CopyField::ALL {
                let _ = write!(w, " {:>12}", f.name());
            }
            w.push('\n');
            for r in copies {
                let dir = if r.direction == Direction::H2d { "h2d" } else { "d2h" };
                let mem = if r.memory == MemoryKind::Pinned { "pinned" } else { "pageable" };
                let _ = write!(w, "  {:<12} {:<9} {:<9}", dir, r.device.name(), mem);
                for field in CopyField::ALL {
                    let _ = write!(w, " {:>12}", cell(field.unit(), field.get(&r.rate)));
                }
                w.push('\n');
            }
        }
        let planner: Vec<String> = PlannerField::ALL.iter().map(|f| format!("{} {}", f.name(), f.unit().show(f.get(&self.planner)))).collect();
        let _ = writeln!(w, "planner: {}", planner.join(", "));
        out
    }
}

impl fmt::Display for CostModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.table(&[DeviceKind::Cpu, DeviceKind::Cuda, DeviceKind::Emulated]))
    }
}

/// Seconds as a person writes them: `5ms`, `20 us`, `0.1`.
pub fn parse_seconds(value: &str) -> Result<f64, String> {
    Unit::Seconds.parse(value)
}

/// A table cell: "-" for 0.
fn cell(unit: Unit, v: f64) -> String {
    if v == 0.0 {
        "-".into()
    } else {
        unit.show(v)
    }
}

/// Seconds in a unit a person reads at a glance.
pub fn seconds(s: f64) -> String {
    match s {
        0.0 => "0 s".into(),
        s if !s.is_finite() => "inf".into(),
        s if s >= 1.0 => format!("{s:.3} s"),
        s if s >= 1e-3 => format!("{:.3} ms", s * 1e3),
        s if s >= 1e-6 => format!("{:.2} us", s * 1e6),
        s if s >= 1e-9 => format!("{:.3} ns", s * 1e9),
        s => format!("{:.2} ps", s * 1e12),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_parameter_set_by_its_path_changes_that_row_only() {
        let mut c = CostModel::for_cpu_threads(2);
        let before = c.clone();
        c.set("elementwise.cuda.per_element", "2e-11").unwrap();
        assert_eq!(c.op_rate(Family::Elementwise, DeviceKind::Cuda).per_element, 2e-11);
        assert_eq!(c.op_rate(Family::Elementwise, DeviceKind::Cpu), before.op_rate(Family::Elementwise, DeviceKind::Cpu));
        c.set("reduce.accelerator.per_call", "5us").unwrap();
        assert!((c.op_rate(Family::Reduce, DeviceKind::Emulated).per_call - 5e-6).abs() < 1e-18);
        assert!((c.op_rate(Family::Reduce, DeviceKind::Cuda).per_call - 5e-6).abs() < 1e-18);
        c.set("transfer.h2d.bandwidth", "20GB/s").unwrap();
        assert_eq!(c.copy_rate(DeviceKind::Cuda, Direction::H2d, MemoryKind::Pageable).bandwidth, 20e9);
        assert_eq!(c.copy_rate(DeviceKind::Cuda, Direction::H2d, MemoryKind::Pinned), before.copy_rate(DeviceKind::Cuda, Direction::H2d, MemoryKind::Pinned));
        c.set("transfer.d2h.pinned.cuda.latency", "1 ms").unwrap();
        assert!((c.copy_rate(DeviceKind::Cuda, Direction::D2h, MemoryKind::Pinned).latency - 1e-3).abs() < 1e-15);
        c.set("planner.cpu_piece_bytes", "128KiB").unwrap();
        assert_eq!(c.planner.cpu_piece_bytes, 128 << 10);
    }

    #[test]
    fn bad_paths_and_values_say_what_is_expected() {
        let mut c = CostModel::for_cpu_threads(2);
        let e = c.set("elementwise.tpu.per_call", "1").unwrap_err();
        assert!(e.contains("cuda, emulated"), "{e}");
        assert!(c.set("sorting.cpu.per_call", "1").unwrap_err().contains("unknown op family `sorting`"));
        assert!(c.set("transfer.h2d.bandwidth", "0").unwrap_err().contains("above 0"));
        assert!(c.set("transfer.h2d.bandwidth", "fast").unwrap_err().contains("not a number"));
        assert!(c.set("elementwise.cpu.per_call", "3 GB/s").unwrap_err().contains("does not fit"));
        assert!(c.set("planner.accelerator_memory_fraction", "1.5").is_err());
        assert_eq!(c, CostModel::for_cpu_threads(2), "a refused setting changes nothing");
    }

    #[test]
    fn the_table_shows_the_kinds_asked_for_and_the_source() {
        let c = CostModel::h100();
        let t = c.table(&[DeviceKind::Cpu, DeviceKind::Cuda]);
        assert!(t.contains("predictions"), "{t}");
        assert!(t.contains("elementwise  cuda") && t.contains("55.1 GB/s"), "{t}");
        assert!(!t.contains("emulated"), "{t}");
    }
}

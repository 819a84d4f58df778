//! The cost model as a person reads and changes it: a table, and `path = value` settings
//! (`elementwise.cuda.per_element = 2e-11`, `transfer.h2d.bandwidth = 20GB/s`).

use std::fmt;

use super::{CostModel, Direction, Family, MemoryKind};
use crate::profile::DeviceKind;
use crate::units::bytes;

/// The settable paths, for help texts and errors.
pub const PATHS: &str = "\
  <family>.<device>.<per_call|per_element|per_flop>   family: elementwise, math, reduce, product, alloc, layout, closure, other,
                                                     or stage (what a stage adds: per stage, per element it reads in or writes out)
                                                     device: cpu, cuda, emulated, accelerator (= cuda and emulated)
  transfer.<h2d|d2h>[.<pageable|pinned>][.<cuda|emulated>].<latency|bandwidth>   (default: pageable, every accelerator)
  planner.<cpu_piece_bytes|accelerator_piece_bytes|accelerator_memory_fraction>
  values: 2e-9, 5us, 3.4 ms, 17GB/s, 64KiB";

impl CostModel {
    /// Set one parameter: `path` as in [`PATHS`], `value` a number with an optional unit.
    pub fn set(&mut self, path: &str, value: &str) -> Result<(), String> {
        let parts: Vec<&str> = path.trim().split('.').collect();
        let usage = || format!("`{path}` is not a cost parameter; the paths are:\n{PATHS}");
        match parts.as_slice() {
            ["planner", knob] => {
                match *knob {
                    "cpu_piece_bytes" => self.cpu_piece_bytes = size(value)?,
                    "accelerator_piece_bytes" => self.accelerator_piece_bytes = size(value)?,
                    "accelerator_memory_fraction" => {
                        let f = number(value, Unit::Plain)?;
                        if !(f > 0.0 && f <= 1.0) {
                            return Err(format!("accelerator_memory_fraction must be in (0, 1], not {f}"));
                        }
                        self.accelerator_memory_fraction = f;
                    }
                    _ => return Err(usage()),
                }
                Ok(())
            }
            ["transfer", direction, rest @ .., param] => {
                let direction = match *direction {
                    "h2d" => Direction::H2d,
                    "d2h" => Direction::D2h,
                    _ => return Err(usage()),
                };
                let (mut memory, mut device) = (MemoryKind::Pageable, None);
                for r in rest {
                    match *r {
                        "pageable" => memory = MemoryKind::Pageable,
                        "pinned" => memory = MemoryKind::Pinned,
                        d => device = Some(kind(d).ok_or_else(usage)?),
                    }
                }
                let v = match *param {
                    "latency" => number(value, Unit::Seconds)?,
                    "bandwidth" => number(value, Unit::Bandwidth)?,
                    _ => return Err(usage()),
                };
                check(v, *param == "bandwidth")?;
                let mut n = 0;
                for row in self.copies.iter_mut().filter(|r| r.direction == direction && r.memory == memory && device.is_none_or(|d| r.device == d)) {
                    if *param == "latency" {
                        row.rate.latency = v;
                    } else {
                        row.rate.bandwidth = v;
                    }
                    n += 1;
                }
                if n == 0 {
                    return Err(format!("the model has no copy row for `{path}`"));
                }
                Ok(())
            }
            [family, device, param] => {
                let family: Family = family.parse().map_err(|e| format!("{e}\nthe paths are:\n{PATHS}"))?;
                let kinds: Vec<DeviceKind> = match *device {
                    "accelerator" => vec![DeviceKind::Cuda, DeviceKind::Emulated],
                    d => vec![kind(d).ok_or_else(usage)?],
                };
                let unit = if *param == "per_call" { Unit::Seconds } else { Unit::Plain };
                let v = number(value, unit)?;
                check(v, false)?;
                for k in kinds {
                    let i = match self.ops.iter().position(|r| r.family == family && r.device == k) {
                        Some(i) => i,
                        None => {
                            self.ops.push(super::OpRow { family, device: k, rate: self.op_rate(family, k) });
                            self.ops.len() - 1
                        }
                    };
                    let rate = &mut self.ops[i].rate;
                    match *param {
                        "per_call" => rate.per_call = v,
                        "per_element" => rate.per_element = v,
                        "per_flop" => rate.per_flop = v,
                        _ => return Err(usage()),
                    }
                }
                Ok(())
            }
            _ => Err(usage()),
        }
    }

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
        let _ = writeln!(w, "  {:<12} {:<9} {:>10} {:>12} {:>10}", "family", "device", "per_call", "per_element", "per_flop");
        for f in Family::ALL {
            for r in self.ops.iter().filter(|r| r.family == f && kinds.contains(&r.device)) {
                let _ = writeln!(w, "  {:<12} {:<9} {:>10} {:>12} {:>10}", f.name(), r.device.name(), cell(r.rate.per_call), cell(r.rate.per_element), cell(r.rate.per_flop));
            }
        }
        let copies: Vec<_> = self.copies.iter().filter(|r| kinds.contains(&r.device)).collect();
        if !copies.is_empty() {
            let _ = writeln!(w, "copy time = latency + bytes / bandwidth (Bach copies host arrays as pageable memory)");
            let _ = writeln!(w, "  {:<12} {:<9} {:<9} {:>10} {:>12}", "transfer", "device", "memory", "latency", "bandwidth");
            for r in copies {
                let dir = if r.direction == Direction::H2d { "h2d" } else { "d2h" };
                let mem = if r.memory == MemoryKind::Pinned { "pinned" } else { "pageable" };
                let _ = writeln!(w, "  {:<12} {:<9} {:<9} {:>10} {:>12}", dir, r.device.name(), mem, cell(r.rate.latency), format!("{:.1} GB/s", r.rate.bandwidth / 1e9));
            }
        }
        let _ = writeln!(
            w,
            "planner: cpu_piece_bytes {}, accelerator_piece_bytes {}, accelerator_memory_fraction {}",
            bytes(self.cpu_piece_bytes),
            bytes(self.accelerator_piece_bytes),
            self.accelerator_memory_fraction
        );
        out
    }
}

impl fmt::Display for CostModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.table(&[DeviceKind::Cpu, DeviceKind::Cuda, DeviceKind::Emulated]))
    }
}

fn kind(name: &str) -> Option<DeviceKind> {
    match name {
        "cpu" => Some(DeviceKind::Cpu),
        "cuda" | "gpu" => Some(DeviceKind::Cuda),
        "emulated" => Some(DeviceKind::Emulated),
        _ => None,
    }
}

fn check(v: f64, positive: bool) -> Result<(), String> {
    if !v.is_finite() || v < 0.0 || (positive && v == 0.0) {
        return Err(format!("{v} is not a usable value here (it must be finite and {})", if positive { "above 0" } else { "0 or more" }));
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq)]
enum Unit {
    Plain,
    Seconds,
    Bandwidth,
}

/// A number with an optional unit: seconds (`s`, `ms`, `us`, `ns`, `ps`) or bandwidth
/// (`GB/s`, `MB/s`, `GiB/s`), by what the parameter is.
fn number(value: &str, unit: Unit) -> Result<f64, String> {
    let t = value.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E').unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let n: f64 = num.trim().parse().map_err(|_| format!("`{value}` is not a number (e.g. 2e-9, 5us, 17GB/s)"))?;
    let scale = match (unit, suffix.trim()) {
        (_, "") => 1.0,
        (Unit::Seconds | Unit::Plain, "s") => 1.0,
        (Unit::Seconds | Unit::Plain, "ms") => 1e-3,
        (Unit::Seconds | Unit::Plain, "us") => 1e-6,
        (Unit::Seconds | Unit::Plain, "ns") => 1e-9,
        (Unit::Seconds | Unit::Plain, "ps") => 1e-12,
        (Unit::Bandwidth, "GB/s") => 1e9,
        (Unit::Bandwidth, "MB/s") => 1e6,
        (Unit::Bandwidth, "GiB/s") => (1u64 << 30) as f64,
        (Unit::Bandwidth, "MiB/s") => (1u64 << 20) as f64,
        (_, other) => return Err(format!("unit `{other}` does not fit this parameter")),
    };
    Ok(n * scale)
}

/// Seconds as a person writes them: `5ms`, `20 us`, `0.1`.
pub fn parse_seconds(value: &str) -> Result<f64, String> {
    let s = number(value, Unit::Seconds)?;
    check(s, false)?;
    Ok(s)
}

fn size(value: &str) -> Result<usize, String> {
    let b = crate::units::parse_bytes(value)? as usize;
    if b == 0 {
        return Err("a piece size must be above 0 bytes".into());
    }
    Ok(b)
}

/// A table cell: "-" for 0.
fn cell(s: f64) -> String {
    if s == 0.0 {
        "-".into()
    } else {
        seconds(s)
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
        assert_eq!(c.cpu_piece_bytes, 128 << 10);
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

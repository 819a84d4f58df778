//! Every parameter of the cost model, declared once.
//!
//! A parameter is one row below: its field, its doc, its [`Unit`] (how a value is written,
//! read, bounded and shown) and the powers of ten a log slider spans. From those rows come
//! the fields of [`OpRate`], [`CopyRate`] and [`Planner`], `:bach cost set` and its paths
//! ([`Param`], [`paths`]), the table's columns, the profile file's entries and the panel's
//! sliders; a value stays an `f64` of its unit from the slider or the file to the planner.
//! Adding a parameter is one row here (and the arithmetic that uses it).
//!
//! A parameter's address, [`Param`], is typed; its path is how a person writes it:
//! `elementwise.cuda.per_element`, `transfer.h2d.pinned.cuda.bandwidth`,
//! `planner.cpu_piece_bytes`.

use std::fmt;
use std::str::FromStr;

use super::{CostModel, Direction, Family, MemoryKind, OpRow};
use crate::profile::DeviceKind;
use crate::units::{bytes, parse_bytes};

/// What a field of a declared parameter struct says about itself.
pub trait Field: Copy + Eq + fmt::Debug + 'static {
    /// The struct the field belongs to.
    type Of;
    /// Every field, in declaration order (the table's columns, the profile's entries).
    const ALL: &'static [Self];
    fn name(self) -> &'static str;
    fn doc(self) -> &'static str;
    fn unit(self) -> Unit;
    /// Powers of ten a log slider for it spans.
    fn slider(self) -> (f64, f64);
    fn get(self, of: &Self::Of) -> f64;
    fn put(self, of: &mut Self::Of, value: f64);
}

/// Declares a struct of parameters and its field enum from one row per parameter:
/// `/// doc` then `Variant field: type = Unit, lo..hi` (`, default value` where the struct
/// has defaults).
macro_rules! parameters {
    (@fields $S:ident, $F:ident, $( $(#[doc = $doc:literal])+ $V:ident $name:ident : $ty:ty = $unit:ident, $lo:literal..$hi:literal; )+) => {
        /// The fields of
        #[doc = concat!("[`", stringify!($S), "`]")]
        /// as values: see the module's docs.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum $F {
            $( $(#[doc = $doc])+ $V, )+
        }

        impl Field for $F {
            type Of = $S;
            const ALL: &'static [Self] = &[$($F::$V),+];
            fn name(self) -> &'static str {
                match self { $($F::$V => stringify!($name),)+ }
            }
            fn doc(self) -> &'static str {
                match self { $($F::$V => concat!($($doc),+).trim_ascii(),)+ }
            }
            fn unit(self) -> Unit {
                match self { $($F::$V => Unit::$unit,)+ }
            }
            fn slider(self) -> (f64, f64) {
                match self { $($F::$V => ($lo as f64, $hi as f64),)+ }
            }
            fn get(self, of: &$S) -> f64 {
                match self { $($F::$V => of.$name as f64,)+ }
            }
            fn put(self, of: &mut $S, value: f64) {
                match self { $($F::$V => of.$name = value as $ty,)+ }
            }
        }
    };
    ($(#[$meta:meta])* pub struct $S:ident, fields $F:ident { $( $(#[doc = $doc:literal])+ $V:ident $name:ident : $ty:ty = $unit:ident, $lo:literal..$hi:literal; )+ }) => {
        $(#[$meta])*
        pub struct $S {
            $( $(#[doc = $doc])+ pub $name: $ty, )+
        }
        parameters!(@fields $S, $F, $( $(#[doc = $doc])+ $V $name: $ty = $unit, $lo..$hi; )+);
    };
    ($(#[$meta:meta])* pub struct $S:ident, fields $F:ident, defaults { $( $(#[doc = $doc:literal])+ $V:ident $name:ident : $ty:ty = $unit:ident, $lo:literal..$hi:literal, default $default:expr; )+ }) => {
        $(#[$meta])*
        pub struct $S {
            $( $(#[doc = $doc])+ pub $name: $ty, )+
        }
        impl Default for $S {
            fn default() -> Self {
                $S { $( $name: $default, )+ }
            }
        }
        parameters!(@fields $S, $F, $( $(#[doc = $doc])+ $V $name: $ty = $unit, $lo..$hi; )+);
    };
}

parameters! {
    /// The parameters of one family on one kind of device: an op's time is
    /// `per_call + per_element * elements + per_flop * flops`.
    #[derive(Clone, Copy, Debug, PartialEq)]
    #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
    pub struct OpRate, fields OpField {
        /// seconds per run whatever its size (launch, dispatch to threads)
        PerCall per_call: f64 = Seconds, -9..-1;
        /// seconds per element of its iteration space
        PerElement per_element: f64 = Seconds, -14..-6;
        /// seconds per floating-point operation beyond one per element (products)
        PerFlop per_flop: f64 = Seconds, -16..-8;
    }
}

parameters! {
    /// The parameters of copies one way between the host and one kind of device: a copy's
    /// time is `latency + bytes / bandwidth`.
    #[derive(Clone, Copy, Debug, PartialEq)]
    #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
    pub struct CopyRate, fields CopyField {
        /// seconds per copy whatever its size
        Latency latency: f64 = Seconds, -7..-2;
        /// bytes per second
        Bandwidth bandwidth: f64 = Bandwidth, 7..12;
    }
}

parameters! {
    /// How the planner cuts stages into pieces and fills an accelerator.
    #[derive(Clone, Copy, Debug, PartialEq)]
    #[cfg_attr(feature = "serde", derive(serde::Serialize, serde::Deserialize))]
    pub struct Planner, fields PlannerField, defaults {
        /// bytes of the widest value of a CPU stage per piece: small enough that a piece's
        /// live values stay in the core's cache while every op of the stage runs over it
        CpuPieceBytes cpu_piece_bytes: usize = Bytes, 3..9, default 64 * 1024;
        /// bytes per row times rows of one accelerator piece when the stage fits: pieces this
        /// big keep launches few while copies of one piece overlap compute of another
        AcceleratorPieceBytes accelerator_piece_bytes: usize = Bytes, 4..11, default 256 << 20;
        /// fraction of an accelerator's memory the planner fills (the rest is headroom)
        AcceleratorMemoryFraction accelerator_memory_fraction: f64 = Fraction, -2..0, default 0.9;
    }
}

/// How a parameter's value is written, read, bounded and shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unit {
    /// Seconds (per call, per element, per flop, per copy): `2e-9`, `5us`, `3.4 ms`; 0 or more.
    Seconds,
    /// Bytes per second: `17GB/s`, `2e10`; above 0.
    Bandwidth,
    /// Bytes: `64KiB`, `4096`; at least 1.
    Bytes,
    /// A fraction in (0, 1].
    Fraction,
}

impl Unit {
    /// A value as a person writes it: a number with an optional unit, checked.
    pub fn parse(self, text: &str) -> Result<f64, String> {
        let v = match self {
            Unit::Bytes => parse_bytes(text)? as f64,
            _ => number(text, self)?,
        };
        self.check(v)?;
        Ok(v)
    }

    /// `Ok` where `value` is one this unit allows.
    pub fn check(self, v: f64) -> Result<(), String> {
        let ok = v.is_finite()
            && match self {
                Unit::Seconds => v >= 0.0,
                Unit::Bandwidth => v > 0.0,
                Unit::Bytes => v >= 1.0,
                Unit::Fraction => v > 0.0 && v <= 1.0,
            };
        if ok {
            return Ok(());
        }
        Err(match self {
            Unit::Seconds => format!("{v} is not a usable value here (it must be finite and 0 or more)"),
            Unit::Bandwidth => format!("{v} is not a usable value here (it must be finite and above 0)"),
            Unit::Bytes => format!("{v} is not a usable size (a piece size must be at least 1 byte)"),
            Unit::Fraction => format!("{v} is not a usable fraction (it must be in (0, 1])"),
        })
    }

    /// A value as the table shows it.
    pub fn show(self, v: f64) -> String {
        match self {
            Unit::Seconds => super::seconds(v),
            Unit::Bandwidth => format!("{:.1} GB/s", v / 1e9),
            Unit::Bytes => bytes(v as usize),
            Unit::Fraction => format!("{v}"),
        }
    }

    /// Ways of writing a value, for the help.
    fn examples(self) -> &'static str {
        match self {
            Unit::Seconds => "2e-9, 5us, 3.4 ms",
            Unit::Bandwidth => "17GB/s, 2e10",
            Unit::Bytes => "64KiB, 4096",
            Unit::Fraction => "0.9",
        }
    }
}

/// A number with an optional unit suffix: seconds (`s`, `ms`, `us`, `ns`, `ps`) for
/// [`Unit::Seconds`] (and plain fractions), bandwidth (`GB/s`, `MB/s`, `GiB/s`, `MiB/s`) for
/// [`Unit::Bandwidth`].
fn number(value: &str, unit: Unit) -> Result<f64, String> {
    let t = value.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E').unwrap_or(t.len());
    let (num, suffix) = t.split_at(split);
    let n: f64 = num.trim().parse().map_err(|_| format!("`{value}` is not a number (e.g. 2e-9, 5us, 17GB/s)"))?;
    let scale = match (unit, suffix.trim()) {
        (_, "") => 1.0,
        (Unit::Seconds, "s") => 1.0,
        (Unit::Seconds, "ms") => 1e-3,
        (Unit::Seconds, "us") => 1e-6,
        (Unit::Seconds, "ns") => 1e-9,
        (Unit::Seconds, "ps") => 1e-12,
        (Unit::Bandwidth, "GB/s") => 1e9,
        (Unit::Bandwidth, "MB/s") => 1e6,
        (Unit::Bandwidth, "GiB/s") => (1u64 << 30) as f64,
        (Unit::Bandwidth, "MiB/s") => (1u64 << 20) as f64,
        (_, other) => return Err(format!("unit `{other}` does not fit this parameter")),
    };
    Ok(n * scale)
}

/// Which devices' rows a parameter reaches.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Devices {
    One(DeviceKind),
    /// Every accelerator kind (CUDA and the emulated one): `accelerator` in an op's path, no
    /// device in a copy's.
    Accelerators,
}

impl Devices {
    fn reaches(self, kind: DeviceKind) -> bool {
        match self {
            Devices::One(k) => k == kind,
            Devices::Accelerators => kind != DeviceKind::Cpu,
        }
    }
}

/// The address of one parameter (or of the same parameter on several devices' rows).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Param {
    Op { family: Family, devices: Devices, field: OpField },
    Copy { direction: Direction, memory: MemoryKind, devices: Devices, field: CopyField },
    Planner(PlannerField),
}

impl Param {
    /// `field` of `family`'s row on devices of `kind`.
    pub fn op(family: Family, kind: DeviceKind, field: OpField) -> Param {
        Param::Op { family, devices: Devices::One(kind), field }
    }

    /// `field` of copies `direction` between the host's `memory` and a device of `kind`.
    pub fn copy(direction: Direction, memory: MemoryKind, kind: DeviceKind, field: CopyField) -> Param {
        Param::Copy { direction, memory, devices: Devices::One(kind), field }
    }

    /// The declaration's doc, unit and slider range, whichever struct declares the field.
    fn declared(self) -> (&'static str, Unit, (f64, f64)) {
        fn of<F: Field>(f: F) -> (&'static str, Unit, (f64, f64)) {
            (f.doc(), f.unit(), f.slider())
        }
        match self {
            Param::Op { field, .. } => of(field),
            Param::Copy { field, .. } => of(field),
            Param::Planner(field) => of(field),
        }
    }

    pub fn unit(self) -> Unit {
        self.declared().1
    }

    /// Powers of ten a log slider for it spans.
    pub fn slider(self) -> (f64, f64) {
        self.declared().2
    }

    pub fn doc(self) -> &'static str {
        self.declared().0
    }
}

/// Every device kind, in the order a parameter reaching several is read.
const KINDS: [DeviceKind; 3] = [DeviceKind::Cpu, DeviceKind::Cuda, DeviceKind::Emulated];

fn kind(name: &str) -> Option<DeviceKind> {
    match name {
        "cpu" => Some(DeviceKind::Cpu),
        "cuda" | "gpu" => Some(DeviceKind::Cuda),
        "emulated" => Some(DeviceKind::Emulated),
        _ => None,
    }
}

fn field<F: Field>(name: &str) -> Option<F> {
    F::ALL.iter().copied().find(|f| f.name() == name)
}

impl FromStr for Param {
    type Err = String;

    /// A path as [`paths`] describes them.
    fn from_str(path: &str) -> Result<Param, String> {
        let usage = || format!("`{path}` is not a cost parameter; the paths are:\n{}", paths());
        let parts: Vec<&str> = path.trim().split('.').collect();
        match parts.as_slice() {
            ["planner", name] => field(name).map(Param::Planner).ok_or_else(usage),
            ["transfer", direction, rest @ .., name] => {
                let direction = match *direction {
                    "h2d" => Direction::H2d,
                    "d2h" => Direction::D2h,
                    _ => return Err(usage()),
                };
                let (mut memory, mut devices) = (MemoryKind::Pageable, Devices::Accelerators);
                for r in rest {
                    match *r {
                        "pageable" => memory = MemoryKind::Pageable,
                        "pinned" => memory = MemoryKind::Pinned,
                        d => devices = Devices::One(kind(d).ok_or_else(usage)?),
                    }
                }
                Ok(Param::Copy { direction, memory, devices, field: field(name).ok_or_else(usage)? })
            }
            [family, device, name] => {
                let family: Family = family.parse().map_err(|e| format!("{e}\nthe paths are:\n{}", paths()))?;
                let devices = match *device {
                    "accelerator" => Devices::Accelerators,
                    d => Devices::One(kind(d).ok_or_else(usage)?),
                };
                Ok(Param::Op { family, devices, field: field(name).ok_or_else(usage)? })
            }
            _ => Err(usage()),
        }
    }
}

impl fmt::Display for Param {
    /// The path: a copy names its memory where it names its device, or where it is pinned.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Param::Op { family, devices, field } => {
                let device = match devices {
                    Devices::One(k) => k.name(),
                    Devices::Accelerators => "accelerator",
                };
                write!(f, "{}.{device}.{}", family.name(), field.name())
            }
            Param::Copy { direction, memory, devices, field } => {
                write!(f, "transfer.{}", if direction == Direction::H2d { "h2d" } else { "d2h" })?;
                if memory == MemoryKind::Pinned || matches!(devices, Devices::One(_)) {
                    write!(f, ".{}", if memory == MemoryKind::Pinned { "pinned" } else { "pageable" })?;
                }
                if let Devices::One(k) = devices {
                    write!(f, ".{}", k.name())?;
                }
                write!(f, ".{}", field.name())
            }
            Param::Planner(field) => write!(f, "planner.{}", field.name()),
        }
    }
}

/// The settable paths and what each parameter is, for help texts and errors.
pub fn paths() -> String {
    fn names<F: Field>() -> String {
        F::ALL.iter().map(|f| f.name()).collect::<Vec<_>>().join("|")
    }
    fn docs<F: Field>(out: &mut String) {
        for f in F::ALL {
            out.push_str(&format!("\n      {}: {} (e.g. {})", f.name(), f.doc().split_whitespace().collect::<Vec<_>>().join(" "), f.unit().examples()));
        }
    }
    let families: Vec<&str> = Family::ALL.iter().filter(|f| **f != Family::Stage).map(|f| f.name()).collect();
    let mut out = format!(
        "  <family>.<device>.<{}>   family: {},\n    or stage (what a stage adds: per stage, per element it reads in or writes out)\n    device: cpu, cuda, emulated, accelerator (= cuda and emulated)",
        names::<OpField>(),
        families.join(", ")
    );
    docs::<OpField>(&mut out);
    out.push_str(&format!("\n  transfer.<h2d|d2h>[.<pageable|pinned>][.<cuda|emulated>].<{}>   (default: pageable, every accelerator)", names::<CopyField>()));
    docs::<CopyField>(&mut out);
    out.push_str(&format!("\n  planner.<{}>", names::<PlannerField>()));
    docs::<PlannerField>(&mut out);
    out
}

impl CostModel {
    /// The value of a parameter (of the first row it reaches; the `other` row's for a family
    /// with no row of its own on that device).
    pub fn get(&self, param: Param) -> f64 {
        match param {
            Param::Op { family, devices, field } => {
                let kind = KINDS.into_iter().find(|k| devices.reaches(*k)).unwrap_or(DeviceKind::Cpu);
                field.get(&self.op_rate(family, kind))
            }
            Param::Copy { direction, memory, devices, field } => {
                let row = self.copies.iter().find(|r| r.direction == direction && r.memory == memory && devices.reaches(r.device));
                row.map_or(f64::NAN, |r| field.get(&r.rate))
            }
            Param::Planner(field) => field.get(&self.planner),
        }
    }

    /// Set a parameter to `value` (in its unit) on every row it reaches; a value its unit
    /// does not allow, or a copy row the model does not have, changes nothing.
    pub fn put(&mut self, param: Param, value: f64) -> Result<(), String> {
        param.unit().check(value)?;
        let value = if param.unit() == Unit::Bytes { value.round() } else { value };
        match param {
            Param::Op { family, devices, field } => {
                for k in KINDS.into_iter().filter(|k| devices.reaches(*k)) {
                    let i = match self.ops.iter().position(|r| r.family == family && r.device == k) {
                        Some(i) => i,
                        None => {
                            self.ops.push(OpRow { family, device: k, rate: self.op_rate(family, k) });
                            self.ops.len() - 1
                        }
                    };
                    field.put(&mut self.ops[i].rate, value);
                }
            }
            Param::Copy { direction, memory, devices, field } => {
                let rows = self.copies.iter_mut().filter(|r| r.direction == direction && r.memory == memory && devices.reaches(r.device));
                if rows.map(|r| field.put(&mut r.rate, value)).count() == 0 {
                    return Err(format!("the model has no copy row for `{param}`"));
                }
            }
            Param::Planner(field) => field.put(&mut self.planner, value),
        }
        Ok(())
    }

    /// Set one parameter: `path` as in [`paths`], `value` a number with an optional unit.
    pub fn set(&mut self, path: &str, value: &str) -> Result<(), String> {
        let param: Param = path.parse()?;
        let v = param.unit().parse(value)?;
        self.put(param, v)
    }

    /// Every parameter of every row, in table order: what a profile file holds.
    pub fn parameters(&self) -> Vec<(Param, f64)> {
        let mut out = Vec::new();
        for r in &self.ops {
            out.extend(OpField::ALL.iter().map(|&field| (Param::op(r.family, r.device, field), field.get(&r.rate))));
        }
        for r in &self.copies {
            out.extend(CopyField::ALL.iter().map(|&field| (Param::copy(r.direction, r.memory, r.device, field), field.get(&r.rate))));
        }
        out.extend(PlannerField::ALL.iter().map(|&field| (Param::Planner(field), field.get(&self.planner))));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_parameter_path_reads_back_as_the_parameter() {
        let c = CostModel::h100();
        let params = c.parameters();
        assert_eq!(params.len(), c.ops.len() * OpField::ALL.len() + c.copies.len() * CopyField::ALL.len() + PlannerField::ALL.len());
        for (p, v) in params {
            assert_eq!(p.to_string().parse::<Param>(), Ok(p), "{p}");
            assert_eq!(c.get(p).to_bits(), v.to_bits(), "{p}");
        }
        for path in ["transfer.h2d.bandwidth", "transfer.d2h.pinned.latency", "reduce.accelerator.per_call", "planner.accelerator_memory_fraction"] {
            assert_eq!(path.parse::<Param>().unwrap().to_string(), path);
        }
    }

    #[test]
    fn a_value_stays_typed_from_put_to_get() {
        let mut c = CostModel::for_cpu_threads(2);
        let p = Param::copy(Direction::H2d, MemoryKind::Pageable, DeviceKind::Cuda, CopyField::Bandwidth);
        let x = 1.234_567_890_123_4e10;
        c.put(p, x).unwrap();
        assert_eq!(c.get(p).to_bits(), x.to_bits());
        assert!(c.put(p, 0.0).unwrap_err().contains("above 0"));
        assert!(c.put(Param::Planner(PlannerField::AcceleratorMemoryFraction), 1.5).is_err());
        assert_eq!(c.get(p).to_bits(), x.to_bits(), "a refused value changes nothing");
    }

    #[test]
    fn the_help_names_every_declared_field_with_its_doc() {
        let help = paths();
        for (name, doc) in
            OpField::ALL.iter().map(|f| (f.name(), f.doc())).chain(CopyField::ALL.iter().map(|f| (f.name(), f.doc()))).chain(PlannerField::ALL.iter().map(|f| (f.name(), f.doc())))
        {
            assert!(help.contains(name), "{name} missing from\n{help}");
            assert!(help.contains(&doc.split_whitespace().take(4).collect::<Vec<_>>().join(" ")), "{name}'s doc missing from\n{help}");
        }
    }

    #[test]
    fn the_planner_defaults_are_the_declared_ones() {
        let p = Planner::default();
        assert_eq!((p.cpu_piece_bytes, p.accelerator_piece_bytes, p.accelerator_memory_fraction), (64 * 1024, 256 << 20, 0.9));
        assert_eq!(CostModel::for_cpu_threads(2).planner, p);
    }
}

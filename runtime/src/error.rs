//! Errors a notebook user can act on: each names the op and what was wrong with its input.

use std::fmt;

/// Everything that can go wrong when building or evaluating a lazy value.
///
/// `Display` is written out rather than derived with `thiserror`: notebooks compile against
/// this crate, and evcxr's rust-analyzer analyses every crate in their dependency graph when
/// the kernel starts; `thiserror` brings `syn`, `quote` and `proc-macro2` into that graph
/// (about 0.5 s of the first cell's wait, measured; see ARCHITECTURE.md).
#[derive(Debug, Clone, PartialEq)]
pub enum BachError {
    Shape { op: String, detail: String },
    DType { op: String, expected: String, got: String },
    EmptyReduction { op: String },
    Invalid { op: String, detail: String },
    SessionMismatch { op: String },
    Interrupted,
    Kernel { op: String, device: String, detail: String },
    DeviceOutOfMemory { device: String, detail: String },
    Io(String),
}

impl fmt::Display for BachError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BachError::Shape { op, detail } => write!(f, "shape mismatch in `{op}`: {detail}"),
            BachError::DType { op, expected, got } => write!(f, "dtype mismatch in `{op}`: expected {expected}, got {got}"),
            BachError::EmptyReduction { op } => write!(f, "`{op}` of an empty array is undefined"),
            BachError::Invalid { op, detail } => write!(f, "invalid argument to `{op}`: {detail}"),
            BachError::SessionMismatch { op } => write!(f, "values from different Bach sessions cannot be combined in `{op}`"),
            BachError::Interrupted => f.write_str("evaluation interrupted: values already computed are kept, the rest stays lazy"),
            BachError::Kernel { op, device, detail } => write!(f, "`{op}` failed on {device}: {detail}"),
            BachError::DeviceOutOfMemory { device, detail } => write!(f, "{device} is out of memory: {detail}"),
            BachError::Io(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for BachError {}

impl BachError {
    pub fn shape(op: &str, detail: impl Into<String>) -> Self {
        BachError::Shape { op: op.to_string(), detail: detail.into() }
    }
    pub fn invalid(op: &str, detail: impl Into<String>) -> Self {
        BachError::Invalid { op: op.to_string(), detail: detail.into() }
    }
    pub fn dtype(op: &str, expected: impl ToString, got: impl ToString) -> Self {
        BachError::DType { op: op.to_string(), expected: expected.to_string(), got: got.to_string() }
    }
}

pub type Result<T, E = BachError> = std::result::Result<T, E>;

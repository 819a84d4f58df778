//! Errors a notebook user can act on: each names the op and what was wrong with its input.

/// Everything that can go wrong when building or evaluating a lazy value.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BachError {
    #[error("shape mismatch in `{op}`: {detail}")]
    Shape { op: String, detail: String },
    #[error("dtype mismatch in `{op}`: expected {expected}, got {got}")]
    DType { op: String, expected: String, got: String },
    #[error("`{op}` of an empty array is undefined")]
    EmptyReduction { op: String },
    #[error("invalid argument to `{op}`: {detail}")]
    Invalid { op: String, detail: String },
    #[error("values from different Bach sessions cannot be combined in `{op}`")]
    SessionMismatch { op: String },
    #[error("evaluation interrupted: values already computed are kept, the rest stays lazy")]
    Interrupted,
    #[error("`{op}` failed on {device}: {detail}")]
    Kernel { op: String, device: String, detail: String },
    #[error("{device} is out of memory: {detail}")]
    DeviceOutOfMemory { device: String, detail: String },
    #[error("{0}")]
    Io(String),
}

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

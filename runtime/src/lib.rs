//! # Bach runtime
//!
//! A lazy offload runtime after *Offload Annotations* (Yuan et al., USENIX ATC 2020).
//! Calls of annotated functions add nodes to one task graph per [`Session`]; evaluating a
//! value plans the part of the graph it needs ([`plan::plan`], a pure function), then the
//! executor runs the plan in pieces on the session's devices and records a [`trace`].
//!
//! Layers, each printable and testable alone: graph (what) -> [`Plan`] (where and how) ->
//! executor (do it) -> [`trace::Trace`] (what happened).

pub mod annotation;
pub mod chart;
pub mod cost;
pub mod cuda;
pub mod device;
pub mod devices;
pub mod emulated;
pub mod error;
mod exec;
pub mod fresh;
pub mod json;
pub mod knobs;
pub mod plan;
pub mod profile;
pub mod progress;
pub mod session;
pub mod split;
pub mod trace;
pub mod units;
pub mod value;

pub use annotation::{oa, oa_alloc, AcceleratorKernel, Annotation, AnnotationBuilder, Fusable, FusedExpr, Launch, OpCtx, OpKind};
pub use cost::{CopyRate, CostModel, Direction, Family, MemoryKind, OpRate, Work};
pub use device::{CpuDevice, Device, DeviceId, DeviceKind, DeviceProfile, DeviceSpan, MemoryUse, PendingCopy, PendingWrite, Tag, CPU};
pub use devices::{DeviceChoice, Devices};
pub use emulated::EmulatedDevice;
pub use error::{BachError, Result};
pub use exec::piece_ranges;
pub use knobs::Knobs;
pub use plan::{Forced, Plan, PlanInput, Policy, Reason, Stage, Step, Transfer};
pub use session::{current, global, with_session, Config, Evaluated, Home, Lazy, MemoryReport, NodeInfo, Session};
pub use split::{SplitRef, SplitType};
pub use value::{DType, DeviceBuffer, DeviceValue, Element, HostRows, Meta, RowsOut, Value, ValueRef};

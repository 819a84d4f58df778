//! The link between the kernel (`kernel/`, a Jupyter server around evcxr) and the `bach`
//! crate in the cells' process (evcxr's child), written once and used by both sides, as
//! evcxr's own `evcxr_runtime` writes its content marker in one place.
//!
//! Two channels join the processes, and the kernel writes Rust into the cells:
//! - [`line`]: lines on the child's stdout that are not the cell's output (a display, a panic,
//!   the cell's start and end, a request to clear the output);
//! - [`comm`]: the Unix socket of Jupyter comms (one tab-separated line per message, both ways,
//!   with the socket's path in [`comm::SOCKET_ENV`]);
//! - [`calls`]: the `bach::notebook` calls the kernel writes into a cell (the cell's number,
//!   interrupt ticks, saving and restoring a session over a rebuild);
//! - [`magics`]: the `:bach` magics, each parsed and turned into its `bach::notebook` call.
//!
//! Dependency-free on purpose: the crate sits in every notebook's dependency graph.

#![forbid(unsafe_code)]

pub mod calls;
pub mod comm;
pub mod line;
pub mod magics;

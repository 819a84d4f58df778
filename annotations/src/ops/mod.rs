//! The op families: each annotation with its CPU kernels, split types, shape rule and CUDA
//! source, in the file of its family (`elementwise.rs`: unary and binary math, masks, casts,
//! `where_`; `reduce.rs`; `linalg.rs`: products, layout; `alloc.rs`: fills, ranges, random;
//! `host_ops.rs`: integer arithmetic on the host), the CUDA C generators they share
//! (`kernels.rs`) and the CPU's vector kernels (`simd.rs`). They stand on the array family
//! (`array/`); `registry.rs` lists them.

pub(crate) mod alloc;
pub(crate) mod elementwise;
pub(crate) mod host_ops;
pub mod kernels;
/// ndarray's `linalg` for the array family (`Dot`, `general_mat_mul`, `general_mat_vec_mul`,
/// `kron`).
pub mod linalg;
pub(crate) mod reduce;
pub(crate) mod simd;

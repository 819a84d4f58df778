//! The cost model measured on an NVIDIA H100 host (`H100 80GB HBM3`, 132 SMs, driver CUDA
//! 13.0, 16 host cores), 2026-11-23. Each figure and where it comes from:
//!
//! | figure | value | source |
//! |---|---|---|
//! | copy engine, host->device, pinned | 8 us + 1 / 55.1 GB/s | `bach-bench bandwidth`: 27.1 us for 1 MiB, 55.1 GB/s at 1 GiB |
//! | copy engine, device->host, pinned | 5.5 us + 1 / 51.2 GB/s | the same: 26.0 us for 1 MiB, 51.2 GB/s at 1 GiB |
//! | Bach's copy in of ordinary host memory | 10 us + 1 / 17 GB/s | Black-Scholes 2^26 timeline: 2.5 GiB in 154 ms, through pinned staging |
//! | Bach's copy out to ordinary host memory | 10 us + 1 / 45 GB/s | results written in place, their pages faulted in ahead (2026-11-26, same host kind): Black-Scholes 2^26 lazy 1 GiB out in 19.8 ms of copy-engine time, 2^27 2 GiB in 42.6 ms, Haversine 2^27 1 GiB in 20.6 ms; 15 GB/s before results landed in place |
//! | CUDA elementwise | 3.4 us + 10.9 ps/element | back-to-back launches 3.4 us; a `div` over 28 MiB pieces (3.7 M f64) 40 us |
//! | CUDA reduce | 9.2 us + 11 ps/element | launch + synchronize 9.2 us (partials come back); reads at the elementwise rate |
//! | CUDA product | 20 us + 20 fs/flop | cuBLAS DGEMM at about 50 TFLOP/s |
//! | CPU elementwise (16 threads) | 5 us + 166 ps/element | Black-Scholes 2^24 from host arrays: 0.092 s for 33 ops over 2^24 elements |
//!
//! Rows without a measurement there (CPU reduce, product, alloc, layout, closure, stage; CUDA
//! alloc and layout) use the defaults' per-thread rates for 16 threads or the CUDA elementwise
//! rate; the CUDA stage row: 0.3 ms per piece (measured, see `cuda_rows`), device memory at
//! 3 TB/s (an estimate).

use super::{CopyRate, CopyRow, CostModel, Direction, Family, MemoryKind, OpRate, OpRow};
use crate::profile::DeviceKind;

/// Host threads of the machine the profile was measured on.
const HOST_THREADS: usize = 16;

/// The CUDA rows, measured there.
pub(super) fn cuda_rows() -> (Vec<OpRow>, Vec<CopyRow>) {
    let rate = |per_call: f64, per_element: f64, per_flop: f64| OpRate { per_call, per_element, per_flop };
    let ops = [
        (Family::Elementwise, rate(3.4e-6, 10.9e-12, 0.0)),
        (Family::Math, rate(3.4e-6, 10.9e-12, 0.0)),
        (Family::Reduce, rate(9.2e-6, 11e-12, 0.0)),
        (Family::Product, rate(20e-6, 0.0, 20e-15)),
        (Family::Alloc, rate(3.4e-6, 5.5e-12, 0.0)),
        (Family::Layout, rate(3.4e-6, 10.9e-12, 0.0)),
        (Family::Closure, rate(3.4e-6, 10.9e-12, 0.0)),
        (Family::Other, rate(3.4e-6, 10.9e-12, 0.0)),
        // Per piece (an accelerator stage pays `per_call` once a piece): its copies'
        // bookkeeping, events, launches and buffers, 0.3 ms (Black-Scholes 2^22 in 63 pieces
        // of 8 MiB: 32.2-32.8 ms on the H100 and H200 hosts against 13.2 ms predicted for its
        // ops and copies, 2026-11-26); per element streamed: device memory at about 3 TB/s
        // (8-byte values), an estimate.
        (Family::Stage, rate(300e-6, 2.7e-12, 0.0)),
    ];
    let copy = |direction, memory, latency: f64, bandwidth: f64| CopyRow { device: DeviceKind::Cuda, direction, memory, rate: CopyRate { latency, bandwidth } };
    let copies = vec![
        copy(Direction::H2d, MemoryKind::Pinned, 8e-6, 55.1e9),
        copy(Direction::D2h, MemoryKind::Pinned, 5.5e-6, 51.2e9),
        copy(Direction::H2d, MemoryKind::Pageable, 10e-6, 17e9),
        copy(Direction::D2h, MemoryKind::Pageable, 10e-6, 45e9),
    ];
    (ops.iter().map(|&(family, rate)| OpRow { family, device: DeviceKind::Cuda, rate }).collect(), copies)
}

pub(super) fn profile() -> CostModel {
    let mut model = CostModel::for_cpu_threads(HOST_THREADS);
    for row in model.ops.iter_mut().filter(|r| r.device == DeviceKind::Cpu) {
        row.rate.per_call = 5e-6;
        if matches!(row.family, Family::Elementwise | Family::Math) {
            row.rate.per_element = 0.092 / (33.0 * (1u64 << 24) as f64);
        }
    }
    model.source = "H100 profile: measured on an NVIDIA H100 80GB HBM3 host with 16 cores, 2026-11-23".into();
    model.measured_on = Some("NVIDIA H100 80GB HBM3 (16 host cores)".into());
    model
}

//! `optimal`: devices for all free ops at once, minimising [`Problem::total`] exactly: with
//! two devices (the CPU and one accelerator) the total is a sum of terms each of which a
//! minimum s-t cut can charge, so the cheapest cut is the cheapest placement.
//!
//! The network: source = the CPU, sink = the accelerator; a vertex per free op (an allocation
//! shares its first user's vertex; a fixed node is the source or the sink itself). A vertex
//! on the sink's side runs on the accelerator.
//! - its own time: source -> v of its accelerator seconds (cut when v is on the accelerator),
//!   v -> sink of its CPU seconds (cut when it is on the CPU);
//! - a value copied to the accelerator once however many readers there need it: a helper
//!   vertex h with v -> h of the copy's seconds and h -> r of infinite capacity for each
//!   reader r; any reader on the sink's side pulls h there, and v -> h is cut once if v is on
//!   the CPU (one reader: the edge v -> r itself);
//! - a value copied back once: r -> h' infinite for each reader (and from the source when the
//!   evaluation wants it on the host), h' -> v of the copy's seconds.
//!
//! What it does not see (the total is then a lower bound of what the executor does): a
//! value between two accelerator stages that are paged comes back to the host and goes in
//! again; a split argument streamed into two accelerator stages is copied once per stage;
//! copies overlap compute in the executor but are summed here.

use super::maxflow::FlowNetwork;
use super::{At, Choice, PlacementPolicy, Problem};
use crate::plan::Reason;
use crate::profile::{DeviceId, CPU};

pub(crate) struct Optimal;

impl PlacementPolicy for Optimal {
    fn name(&self) -> &'static str {
        "optimal"
    }
    fn place(&self, p: &Problem) -> Vec<Choice> {
        let Some(accel) = p.accelerator else {
            return p.free.iter().map(|_| (CPU, Reason::NoAcceleratorPresent)).collect();
        };
        let device = p.devices(&solve(p, accel));
        p.free
            .iter()
            .map(|&i| {
                let d = device[i];
                let n = &p.nodes[i];
                let (copies_cpu_s, _) = p.copies_into(i, CPU, &device);
                let (copies_accelerator_s, copy_bytes) = p.copies_into(i, accel, &device);
                let why = Reason::Optimal {
                    on_accelerator: d != CPU,
                    cpu_s: n.cpu_s,
                    accelerator_s: n.accelerator_s,
                    copies_cpu_s,
                    copies_accelerator_s,
                    copy_bytes,
                    margin_s: p.margin(i, &device),
                };
                (d, why)
            })
            .collect()
    }
}

/// The device of each free op (in [`Problem::free`]'s order) in a cheapest placement; ties
/// go to the CPU.
pub(crate) fn solve(p: &Problem, accel: DeviceId) -> Vec<DeviceId> {
    const S: usize = 0;
    const T: usize = 1;
    let n = p.nodes.len();
    // The vertex of each node.
    let mut vertex = vec![S; n];
    let mut net = FlowNetwork::new(2);
    for &i in &p.free {
        vertex[i] = net.vertex();
    }
    for (i, node) in p.nodes.iter().enumerate() {
        vertex[i] = match node.at {
            At::Fixed(d) if d == CPU => S,
            At::Fixed(_) => T,
            At::Free => vertex[i],
            At::FollowsFirstUser(_) => usize::MAX,
        };
    }
    for (i, node) in p.nodes.iter().enumerate() {
        if let At::FollowsFirstUser(c) = node.at {
            vertex[i] = vertex[c];
        }
    }
    // Own times, gathered per vertex (an allocation adds its fill to its user's), then
    // lowered by their minimum: that part is paid on either side.
    let mut own = vec![(0.0f64, 0.0f64); net.vertices()];
    for (i, node) in p.nodes.iter().enumerate() {
        if matches!(node.at, At::Free | At::FollowsFirstUser(_)) {
            let v = vertex[i];
            own[v].0 += node.cpu_s;
            own[v].1 += node.accelerator_s;
        }
    }
    for (v, &(cpu, acc)) in own.iter().enumerate().skip(2) {
        let m = cpu.min(acc);
        net.edge(S, v, acc - m);
        net.edge(v, T, cpu - m);
    }
    // Copies.
    let mut readers: Vec<usize> = Vec::new();
    for (i, node) in p.nodes.iter().enumerate() {
        let v = vertex[i];
        readers.clear();
        readers.extend(node.readers.iter().map(|&r| vertex[r]).filter(|&r| r != v));
        readers.sort_unstable();
        readers.dedup();
        if v != T && node.to_accelerator_s > 0.0 {
            let there: Vec<usize> = readers.iter().copied().filter(|&r| r != S).collect();
            match there.as_slice() {
                [] => {}
                [r] => net.edge(v, *r, node.to_accelerator_s),
                rs => {
                    let h = net.vertex();
                    net.edge(v, h, node.to_accelerator_s);
                    for &r in rs {
                        net.edge(h, r, f64::INFINITY);
                    }
                }
            }
        }
        if v != S && node.to_host_s > 0.0 {
            let mut back: Vec<usize> = readers.iter().copied().filter(|&r| r != T).collect();
            if node.needed_on_host && !back.contains(&S) {
                back.push(S);
            }
            match back.as_slice() {
                [] => {}
                [r] => net.edge(*r, v, node.to_host_s),
                rs => {
                    let h = net.vertex();
                    for &r in rs {
                        net.edge(r, h, f64::INFINITY);
                    }
                    net.edge(h, v, node.to_host_s);
                }
            }
        }
    }
    net.max_flow(S, T);
    let sink = net.sink_side(T);
    p.free.iter().map(|&i| if sink[vertex[i]] { accel } else { CPU }).collect()
}

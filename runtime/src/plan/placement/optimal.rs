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

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use proptest::prelude::*;

    use super::super::{policy, problem, Policy};
    use super::*;
    use crate::annotation::{oa, oa_alloc, Annotation, Launch};
    use crate::cost::CostModel;
    use crate::plan::{Budget, GraphPart, PartNode};
    use crate::profile::DeviceProfile;
    use crate::split;
    use crate::value::{DType, Meta};

    /// What a random node is.
    #[derive(Clone, Debug)]
    enum Kind {
        SourceOnCpu,
        SourceOnAccelerator,
        /// A lazy allocation, with or without an accelerator version.
        Alloc(bool),
        /// Elementwise with an accelerator version, over 1 or 2 earlier values.
        Elementwise(usize, Option<usize>),
        /// Kept on the CPU by its annotation (a closure).
        CpuOnly(usize),
        /// No accelerator version.
        HostOnly(usize),
        /// A reduction to one value.
        Reduce(usize),
    }

    fn ops() -> [Arc<Annotation>; 7] {
        let two = || [split::rows(), split::rows()];
        [
            oa("add").elementwise().args(two()).accelerator("add", "").build(),
            oa("exp").elementwise().accelerator("exp", "").build(),
            oa("mapv").elementwise().cpu_only("a Rust closure runs on the CPU only").build(),
            oa("cumsum").build(),
            oa("sum")
                .accelerator_launch("sum", "", Launch::Reduce { axis: None })
                .result(split::unsplittable())
                .shape(|m: &[Meta]| Ok(Meta::new(m[0].dtype, Vec::<usize>::new())))
                .build(),
            oa_alloc("zeros").accelerator_launch("fill", "", Launch::Fill { params: vec![] }).build(),
            oa_alloc("random").build(),
        ]
    }

    /// A part from random kinds: arguments refer to earlier nodes (modulo their count), and
    /// every node has `len` elements unless it is a reduction's scalar.
    fn part(kinds: &[Kind], lens: &[usize], targets: u32, keep: u32) -> GraphPart {
        let [add, exp, mapv, cumsum, sum, zeros, random] = ops();
        let source = oa("source").build();
        let mut nodes: Vec<PartNode> = Vec::new();
        for (i, k) in kinds.iter().enumerate() {
            let pick = |a: usize| if i == 0 { None } else { Some(a % i) };
            let len = lens[i % lens.len()];
            let (op, inputs, materialized) = match *k {
                Kind::SourceOnCpu => (source.clone(), vec![], Some(CPU)),
                Kind::SourceOnAccelerator => (source.clone(), vec![], Some(DeviceId(1))),
                Kind::Alloc(version) => (if version { zeros.clone() } else { random.clone() }, vec![], None),
                Kind::Elementwise(a, b) => match (pick(a), b.and_then(pick)) {
                    (Some(a), Some(b)) => (add.clone(), vec![a, b], None),
                    (Some(a), None) => (exp.clone(), vec![a], None),
                    _ => (source.clone(), vec![], Some(CPU)),
                },
                Kind::CpuOnly(a) => pick(a).map_or((source.clone(), vec![], Some(CPU)), |a| (mapv.clone(), vec![a], None)),
                Kind::HostOnly(a) => pick(a).map_or((source.clone(), vec![], Some(CPU)), |a| (cumsum.clone(), vec![a], None)),
                Kind::Reduce(a) => pick(a).map_or((source.clone(), vec![], Some(CPU)), |a| (sum.clone(), vec![a], None)),
            };
            // Elementwise results take their first argument's length (scalars broadcast).
            let meta = if op.name() == "sum" {
                Meta::new(DType::F64, Vec::<usize>::new())
            } else if let Some(&a) = inputs.first() {
                nodes[a].meta.clone()
            } else {
                Meta::new(DType::F64, [len])
            };
            let arg_splits = inputs.iter().map(|_| split::broadcast()).collect();
            let bit = 1 << (i % 32);
            nodes.push(PartNode {
                id: i as u64,
                op,
                inputs,
                arg_splits,
                meta,
                cell: 1,
                materialized,
                host_memory: crate::cost::MemoryKind::Pageable,
                lands_in: crate::cost::MemoryKind::Pageable,
                target: targets & bit != 0 || i + 1 == kinds.len(),
                keep_on_device: keep & bit != 0,
                forced: None,
            });
        }
        GraphPart { nodes }
    }

    fn kind() -> impl Strategy<Value = Kind> {
        prop_oneof![
            1 => Just(Kind::SourceOnCpu),
            1 => Just(Kind::SourceOnAccelerator),
            1 => any::<bool>().prop_map(Kind::Alloc),
            5 => (any::<usize>(), proptest::option::of(any::<usize>())).prop_map(|(a, b)| Kind::Elementwise(a, b)),
            1 => any::<usize>().prop_map(Kind::CpuOnly),
            1 => any::<usize>().prop_map(Kind::HostOnly),
            1 => any::<usize>().prop_map(Kind::Reduce),
        ]
    }

    fn devices() -> Vec<DeviceProfile> {
        vec![DeviceProfile::cpu(), DeviceProfile::hypothetical_gpu("H100", 80 << 30)]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

        /// `optimal` finds the cheapest placement of all (brute force over every choice of the
        /// free ops), and so is never dearer than `greedy` or `threshold`.
        #[test]
        fn optimal_equals_brute_force_and_beats_the_fixed_rules(
            kinds in proptest::collection::vec(kind(), 1..22),
            lens in proptest::collection::vec(prop_oneof![Just(1usize), Just(1000), Just(100_000), Just(10_000_000), 1usize..50_000_000], 1..5),
            targets in any::<u32>(),
            keep in any::<u32>(),
            h100 in any::<bool>(),
            gpu_scale in prop_oneof![Just(1.0f64), 0.01f64..100.0],
        ) {
            let part = part(&kinds, &lens, targets, keep);
            let mut cost = if h100 { CostModel::h100() } else { CostModel::for_cpu_threads(2) };
            let per_element = cost.op_rate(crate::cost::Family::Elementwise, crate::profile::DeviceKind::Cuda).per_element * gpu_scale;
            cost.set("elementwise.cuda.per_element", &per_element.to_string()).unwrap();
            let budget = Budget { cost: &cost, memory_cap: None };
            let devices = devices();
            let p = problem(&part, &part.consumers(), &devices, &budget, &mut Vec::new());
            prop_assume!(p.free.len() <= 14);
            let total = |free: &[DeviceId]| p.total(&p.devices(free)).seconds();
            let mut best = f64::INFINITY;
            for mask in 0..(1u32 << p.free.len()) {
                let free: Vec<DeviceId> = (0..p.free.len()).map(|k| if mask & (1 << k) != 0 { DeviceId(1) } else { CPU }).collect();
                best = best.min(total(&free));
            }
            let chosen = |pol: Policy| -> Vec<DeviceId> { policy(pol).place(&p).into_iter().map(|c| c.0).collect() };
            let optimal = total(&chosen(Policy::Optimal));
            let tolerance = 1e-9 * best.max(1e-6);
            prop_assert!((optimal - best).abs() <= tolerance, "optimal {optimal} vs brute force {best}");
            for other in [Policy::Greedy, Policy::Threshold, Policy::CpuOnly] {
                let t = total(&chosen(other));
                prop_assert!(optimal <= t + tolerance, "optimal {optimal} > {other} {t}");
            }
            // The margins of a global optimum are never negative.
            let device = p.devices(&chosen(Policy::Optimal));
            for &i in &p.free {
                prop_assert!(p.margin(i, &device) >= -tolerance, "moving #{i} alone would gain {}", -p.margin(i, &device));
            }
        }
    }
}

//! Planning and bookkeeping overhead per graph node, on a 10,000-node graph.
//! Targets: below 5 microseconds per node (criterion prints time per node as throughput);
//! planning 10,000 nodes with `optimal` against a CPU and a GPU in under 50 ms.

use std::sync::Arc;

use bach_runtime::{oa, split, Annotation, DeviceProfile, Lazy, Policy, Session, Value};
use criterion::{criterion_group, criterion_main, BatchSize, Criterion, Throughput};
use ndarray::{ArrayD, IxDyn};

const NODES: usize = 10_000;

fn add() -> Arc<Annotation> {
    oa("add").elementwise().args([split::rows(), split::rows()]).cpu(|_, args| Ok(Value::from(&args[0].array::<f64>("add")? + &args[1].array::<f64>("add")?))).build()
}

/// A 10,000-node graph: a chain where each node also reads one of two sources, so the
/// graph has fan-in like a real program.
fn build(s: &Arc<Session>, op: &Arc<Annotation>, len: usize) -> Lazy {
    let a = s.source(Value::from(ArrayD::from_elem(IxDyn(&[len]), 1.0f64)), "a");
    let b = s.source(Value::from(ArrayD::from_elem(IxDyn(&[len]), 2.0f64)), "b");
    let mut cur = a.clone();
    for i in 0..NODES - 2 {
        cur = op.call(&[&cur, if i % 2 == 0 { &a } else { &b }]).expect("same shapes");
    }
    cur
}

/// A 10,000-node graph where placement has choices: each op reads two random earlier values
/// (fan-out and shared inputs), sizes vary from 16 to 4 M elements, and one op in ten is a
/// closure kept on the CPU.
fn random_dag(s: &Arc<Session>, gpu: &Arc<Annotation>, closure: &Arc<Annotation>) -> Vec<Lazy> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut rnd = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state as usize
    };
    let mut values: Vec<Lazy> = Vec::with_capacity(NODES);
    let sizes = [16usize, 4096, 1 << 22];
    for (k, len) in sizes.iter().enumerate() {
        for _ in 0..3 {
            values.push(s.source(Value::from(ArrayD::from_elem(IxDyn(&[*len]), k as f64)), "x"));
        }
    }
    while values.len() < NODES {
        // Arguments of one size: pick a size class, then two values of it.
        let class = rnd() % 3;
        let of_class: Vec<usize> = (0..values.len()).rev().filter(|&i| values[i].meta().shape == [sizes[class]]).take(64).collect();
        let (a, b) = (of_class[rnd() % of_class.len()], of_class[rnd() % of_class.len()]);
        let v = if rnd() % 10 == 0 { closure.call(&[&values[a]]) } else { gpu.call(&[&values[a], &values[b]]) };
        values.push(v.expect("same shapes"));
    }
    values
}

fn optimal(c: &mut Criterion) {
    let gpu = oa("gpu_add").elementwise().args([split::rows(), split::rows()]).accelerator("gpu_add", "").cpu(|_, args| Ok(args[0].to_value())).build();
    let closure = oa("mapv").elementwise().cpu_only("a Rust closure runs on the CPU only").cpu(|_, args| Ok(args[0].to_value())).build();
    let devices = vec![DeviceProfile::cpu(), DeviceProfile::hypothetical_gpu("H100", 80 << 30)];
    let mut g = c.benchmark_group("plan_10k_nodes_cpu_and_gpu");
    g.throughput(Throughput::Elements(NODES as u64));
    g.sample_size(20);
    let s = Session::new();
    let chain = build(&s, &gpu, 1 << 20);
    let dag = random_dag(&s, &gpu, &closure);
    // Every value a target: the part is the whole graph.
    let dag_targets: Vec<&Lazy> = dag.iter().collect();
    for policy in [Policy::Optimal, Policy::Greedy] {
        s.update_config(|c| c.policy = policy);
        g.bench_function(format!("chain_{policy}"), |bn| bn.iter(|| s.plan_for(&[&chain], &devices).expect("plans")));
        g.bench_function(format!("random_dag_{policy}"), |bn| bn.iter(|| s.plan_for(&dag_targets, &devices).expect("plans")));
    }
    g.finish();
}

fn overhead(c: &mut Criterion) {
    let op = add();
    let mut g = c.benchmark_group("graph_10k_nodes");
    g.throughput(Throughput::Elements(NODES as u64));
    g.sample_size(20);
    g.bench_function("build", |bn| bn.iter_batched(Session::new, |s| (build(&s, &op, 16), s), BatchSize::PerIteration));
    let s = Session::new();
    let last = build(&s, &op, 16);
    g.bench_function("plan", |bn| bn.iter(|| s.plan(&[&last]).expect("plans")));
    g.bench_function("build_plan_execute_16_elements", |bn| {
        bn.iter_batched(
            Session::new,
            |s| {
                let v = build(&s, &op, 16);
                v.eval().expect("evaluates");
                (v, s)
            },
            BatchSize::PerIteration,
        )
    });
    g.bench_function("drop", |bn| {
        bn.iter_batched(
            || {
                let s = Session::new();
                let v = build(&s, &op, 16);
                (s, v)
            },
            |(s, v)| {
                drop(v);
                s
            },
            BatchSize::PerIteration,
        )
    });
    g.finish();
}

criterion_group!(benches, overhead, optimal);
criterion_main!(benches);

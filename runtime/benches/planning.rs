//! Planning and bookkeeping overhead per graph node, on a 10,000-node graph.
//! Target: below 5 microseconds per node (criterion prints time per node as throughput).

use std::sync::Arc;

use bach_runtime::{oa, split, Annotation, Lazy, Session, Value};
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

criterion_group!(benches, overhead);
criterion_main!(benches);

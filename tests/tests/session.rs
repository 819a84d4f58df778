//! Graph behaviour on isolated sessions: cells, node lifetimes, caching, threads, errors at
//! the call, user annotations, kernel panics, interrupts and the trace.

use std::collections::BTreeSet;
use std::ops::Range;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use bach::prelude::*;
use bach_runtime::trace::EventKind;
use bach_runtime::{oa, split, with_session, BachError as E, Lazy, Meta, Session, Value, ValueRef, CPU};
use bach_tests::*;
use ndarray::{ArrayD, Axis as NdAxis, IxDyn};

const N: usize = 100_003;

/// A session of its own whose ops all go through the graph (small host values are not run
/// at once: these tests look at the graph's nodes and evaluations).
fn isolated() -> Arc<Session> {
    let s = Session::new();
    s.update_config(|c| c.eager_max_elements = 0);
    s
}

fn evals(s: &Session) -> usize {
    s.trace().evals().count()
}

#[test]
fn nodes_record_their_cell_op_and_arguments() {
    let s = isolated();
    with_session(&s, || {
        s.set_cell(1);
        let x = Array::from_vec(vec![1.0, 4.0, 9.0]);
        let y = x.sqrt();
        s.set_cell(2);
        let z = &y + 1.0;
        let nodes = s.nodes();
        let info = |id: u64| nodes.iter().find(|n| n.id == id).cloned().unwrap_or_else(|| panic!("node #{id} missing: {nodes:?}"));
        let (nx, ny, nz) = (info(x.lazy().id()), info(y.lazy().id()), info(z.lazy().id()));
        assert_eq!((nx.cell, ny.cell, nz.cell), (1, 1, 2));
        assert_eq!(ny.op, "sqrt");
        assert_eq!(nz.op, "add");
        assert!(nx.args.is_empty());
        assert!(nx.evaluated, "a host array is evaluated from the start");
        assert!(!ny.evaluated && !nz.evaluated);
        assert_eq!(ny.args, vec![x.lazy().id()]);
        assert_eq!(nz.args.len(), 2);
        assert_eq!(nz.args[0], y.lazy().id(), "cell 2's node reads cell 1's");
        let scalar = info(nz.args[1]);
        assert_eq!(scalar.cell, 2);
        assert_eq!(scalar.meta, Meta::new(bach_runtime::DType::F64, Vec::<usize>::new()));
        assert_eq!(nz.meta, Meta::new(bach_runtime::DType::F64, [3]));
        // Oldest first.
        assert!(nodes.windows(2).all(|w| w[0].id < w[1].id));

        // The plan and the trace keep the cell each node came from.
        let plan = z.plan().unwrap();
        assert_eq!(plan.step_of(y.lazy().id()).unwrap().cell, 1);
        assert_eq!(plan.step_of(z.lazy().id()).unwrap().cell, 2);
        s.set_cell(3);
        assert_eq!(z.to_array().unwrap(), ndarray::arr1(&[2.0, 3.0, 4.0]).into_dyn());
        let trace = s.trace();
        let last = trace.last().unwrap();
        assert_eq!(last.cell, 3, "the evaluation was asked for in cell 3");
        let cells: BTreeSet<(u64, u64)> = last.events.iter().filter(|e| e.kind == EventKind::Compute).map(|e| (e.node, e.cell)).collect();
        assert!(cells.contains(&(y.lazy().id(), 1)) && cells.contains(&(z.lazy().id(), 2)), "{cells:?}");
    });
}

#[test]
fn dropped_handles_remove_nodes_but_pending_inputs_stay() {
    let s = isolated();
    with_session(&s, || {
        assert_eq!(s.node_count(), 0);
        let x = Array::from_vec(vec![0.5; 10]);
        let y = x.sqrt();
        let z = y.exp();
        assert_eq!(s.node_count(), 3);
        let y_id = y.lazy().id();
        drop(y);
        assert_eq!(s.node_count(), 3, "z is pending and needs y");
        assert!(s.nodes().iter().any(|n| n.id == y_id));
        // Clones share the node: dropping one clone removes nothing.
        let z2 = z.clone();
        drop(z);
        assert_eq!(s.node_count(), 3);
        // Evaluating z lets go of its inputs: y has no handle, so it goes.
        assert_eq!(z2.to_array().unwrap(), ArrayD::from_elem(IxDyn(&[10]), 0.5f64.sqrt().exp()));
        assert!(!s.nodes().iter().any(|n| n.id == y_id), "y is collected once z holds its value");
        assert_eq!(s.node_count(), 2);
        drop(z2);
        assert_eq!(s.node_count(), 1);
        drop(x);
        assert_eq!(s.node_count(), 0);

        // A pending chain with its only handle dropped disappears entirely (scalars too).
        let x = Array::from_vec(vec![1.0; 10]);
        let w = ((&x + 1.0) * 2.0).sqrt();
        assert_eq!(s.node_count(), 6);
        drop(w);
        assert_eq!(s.node_count(), 1);
        // A lazy handle held as a plain Lazy keeps its node too.
        let l: Lazy = (&x * 3.0).lazy().clone();
        assert_eq!(s.node_count(), 3);
        assert_eq!(l.eval().unwrap().array::<f64>().unwrap().iter().copied().collect::<Vec<_>>(), vec![3.0; 10]);
        assert_eq!(s.node_count(), 2, "the scalar went with the evaluation");
        drop(l);
        assert_eq!(s.node_count(), 1);

        // The same input read twice by one node (two edges), then collected.
        let sq = &x * &x;
        let sum = &sq + &sq;
        assert_eq!(s.node_count(), 3);
        drop(sq);
        assert_eq!(s.node_count(), 3);
        assert_eq!(sum.to_array().unwrap(), ArrayD::from_elem(IxDyn(&[10]), 2.0));
        assert_eq!(s.node_count(), 2, "x and sum");
        drop(sum);
        let sq = &x * &x;
        drop(sq);
        assert_eq!(s.node_count(), 1, "a node reading x twice leaves x once it goes");
        drop(x);
        assert_eq!(s.node_count(), 0);
    });
}

#[test]
fn evaluate_returns_the_record_of_the_evaluation_that_computed_the_values() {
    let s = isolated();
    with_session(&s, || {
        let x = Array::from_vec(uniform_vec(3, N, 0.0, 1.0));
        let y = (&x * 2.0).sin();
        let first = s.evaluate(&[&y.lazy()]).unwrap();
        let record = first.record.expect("something ran");
        assert_eq!(Some(record.eval), s.trace().last().map(|e| e.eval), "the record is the one the trace keeps");
        assert!(record.pieces > 0);
        // Computed already: nothing runs, and there is no record.
        let again = s.evaluate(&[&y.lazy()]).unwrap();
        assert!(again.record.is_none());
        assert_eq!(again.values[0].array::<f64>(), first.values[0].array::<f64>());
        // A trial returns its record too.
        let z = &y + 1.0;
        let trial = s.trial(&[&z.lazy()]).unwrap().expect("ran");
        assert_eq!(trial.eval, record.eval + 1);
    });
}

#[test]
fn evaluate_edge_cases() {
    let s = isolated();
    with_session(&s, || {
        assert!(bach::evaluate(&[]).is_ok());
        let x = Array::from_vec(vec![1.0, 2.0]);
        let y = &x * 2.0;
        // The same target twice, and a target with its own input as a target.
        bach::evaluate(&[&y, &y, &x]).unwrap();
        assert_eq!(evals(&s), 1);
        let vals = s.evaluate(&[&y.lazy(), &y.lazy()]).unwrap().values;
        assert_eq!(vals.len(), 2);
        // A handle of the wrong element type is refused.
        assert!(matches!(Array::<f32>::from_lazy(y.lazy().clone()), Err(E::DType { .. })));
        assert!(matches!(Array::<bool>::from_lazy(y.lazy().clone()), Err(E::DType { .. })));
        // Evaluating a value from inside a kernel (a closure reading another lazy value).
        let offset = (&x + 10.0).sum_lazy();
        let big = Array::from_vec(uniform_vec(10, N, 0.0, 1.0));
        let off2 = offset.clone();
        let z = big.mapv_lazy(move |v| v + off2.to_scalar().unwrap());
        let want = big.to_array().unwrap().mapv(|v| v + 23.0);
        assert_exact("nested evaluation", &z.to_array().unwrap(), &want);
        assert!(offset.is_evaluated());
    });
}

#[test]
fn evaluated_values_are_cached() {
    let s = isolated();
    with_session(&s, || {
        let x = Array::from_array(ndarray::Array1::from(uniform_vec(1, N, 0.0, 1.0)));
        let y = (&x * 2.0).sqrt();
        let want = x.to_array().unwrap().mapv(|v| (v * 2.0).sqrt());
        assert_eq!(evals(&s), 0, "nothing runs before it is asked for");
        assert!(!y.is_evaluated());
        assert_exact("first eval", &y.to_array().unwrap(), &want);
        assert_eq!(evals(&s), 1);
        assert!(y.is_evaluated() && y.lazy().is_evaluated());
        // Again, through the same handle, the Lazy, and a fresh handle on the same node.
        assert_exact("second eval", &y.to_array().unwrap(), &want);
        let v = y.lazy().eval().unwrap();
        assert_exact("lazy eval", &v.array::<f64>().unwrap().to_owned(), &want);
        let fresh = Array::<f64>::from_lazy(y.lazy().clone()).unwrap();
        assert_exact("fresh handle", &fresh.to_array().unwrap(), &want);
        bach::evaluate(&[&y, &fresh]).unwrap();
        assert_eq!(evals(&s), 1, "a cached value is not computed again");
        // A user of y computes only itself.
        let z = &y + 1.0;
        z.eval().unwrap();
        assert_eq!(evals(&s), 2);
        let trace = s.trace();
        let ops: BTreeSet<String> = trace.last().unwrap().events.iter().filter(|e| e.kind == EventKind::Compute).map(|e| e.op.to_string()).collect();
        assert_eq!(ops, BTreeSet::from(["add".to_string()]), "only the new op runs");
    });
}

#[test]
fn a_long_loop_does_not_grow_the_graph() {
    let s = isolated();
    with_session(&s, || {
        let x = Array::from_vec(uniform_vec(2, 100, 0.0, 1.0));
        let before = s.node_count();
        for i in 0..10_000 {
            let t = (&x + i as f64).sqrt();
            if i % 1000 == 0 {
                assert!((t[0] - (x[0] + i as f64).sqrt()).abs() < 1e-12);
            }
        }
        assert_eq!(s.node_count(), before, "temporaries are collected");
        // Rebinding an accumulator, evaluated now and then: the chain is cut at each value.
        let mut acc = x.clone();
        let mut max_nodes = 0;
        for i in 0..10_000 {
            acc = &acc + 1.0;
            if i % 100 == 99 {
                acc.eval().unwrap();
            }
            max_nodes = max_nodes.max(s.node_count());
        }
        assert!(max_nodes <= before + 2 * 100 + 2, "graph peaked at {max_nodes} nodes");
        assert_eq!(s.node_count(), before + 1, "only x and the last acc remain");
        let want = x.to_array().unwrap().mapv(|v| v + 10_000.0);
        assert_close("acc", &acc.to_array().unwrap(), &want, 1e-12);
        drop((acc, x));
        assert_eq!(s.node_count(), 0);
    });
}

#[test]
fn handles_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Array<f64>>();
    send_sync::<Array<f32>>();
    send_sync::<Array<bool>>();
    send_sync::<Lazy>();
    send_sync::<Session>();
    send_sync::<BachError>();

    let s = isolated();
    let x = with_session(&s, || Array::from_vec(uniform_vec(3, N, 0.0, 1.0)));
    let want = x.to_array().unwrap();
    // Values built on other threads (ops go to their arguments' session, whatever thread).
    let built: Vec<Array1<f64>> = std::thread::scope(|sc| {
        let hs: Vec<_> = (0..4)
            .map(|k| {
                let x = &x;
                sc.spawn(move || (x * k as f64).exp())
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for (k, b) in built.iter().enumerate() {
        assert!(Arc::ptr_eq(b.lazy().session(), &s));
        assert_close(&format!("built on thread {k}"), &b.to_array().unwrap(), &want.mapv(|v| (v * k as f64).exp()), 1e-12);
    }
    // Evaluated on other threads, concurrently, one value from each and one shared.
    let shared = x.sqrt();
    std::thread::scope(|sc| {
        for k in 0..4 {
            let (x, shared, want) = (x.clone(), shared.clone(), &want);
            sc.spawn(move || {
                let mine = &x + k as f64;
                assert_exact("mine", &mine.to_array().unwrap(), &want.mapv(|v| v + k as f64));
                assert_close("shared", &shared.to_array().unwrap(), &want.mapv(f64::sqrt), 1e-12);
            });
        }
    });
    drop((built, shared, x));
    assert_eq!(s.node_count(), 0);
}

fn panic_text(p: Box<dyn std::any::Any + Send>) -> String {
    p.downcast_ref::<String>().cloned().or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string())).unwrap_or_default()
}

#[test]
fn shape_mismatch_is_an_error_at_the_call() {
    let s = isolated();
    with_session(&s, || {
        let x = Array::from_vec(vec![1.0, 2.0, 3.0]);
        let y = Array::from_vec(vec![1.0, 2.0, 3.0, 4.0]);
        let before = s.node_count();
        match x.try_add(&y) {
            Err(E::Shape { op, .. }) => assert_eq!(op, "add"),
            r => panic!("expected a shape error, got {:?}", r.map(|a| a.shape().to_vec())),
        }
        assert!(matches!(x.try_mul(&y), Err(E::Shape { .. })));
        assert_eq!(s.node_count(), before, "a failed call adds no node");
        let p = catch_unwind(AssertUnwindSafe(|| &x + &y)).expect_err("`&x + &y` panics at the call");
        let msg = panic_text(p);
        assert!(msg.contains("shape mismatch"), "panic message: {msg}");
        let p = catch_unwind(AssertUnwindSafe(|| x.gt(&y))).expect_err("gt panics");
        assert!(panic_text(p).contains("shape mismatch"));
        let m = x.gt(1.5);
        let p = catch_unwind(AssertUnwindSafe(|| where_(&m, &y, 0.0))).expect_err("where_ panics");
        assert!(panic_text(p).contains("shape mismatch"));
        let m2 = Array::from_array(ndarray::arr2(&[[1.0, 2.0], [3.0, 4.0]]));
        assert!(matches!(m2.try_add(&x), Err(E::Shape { .. })), "[2,2] + [3]");
        // Nothing was evaluated: the errors come from metas alone.
        assert_eq!(evals(&s), 0);
        // The session is fine afterwards.
        assert_eq!((&x + &x).to_array().unwrap(), ndarray::arr1(&[2.0, 4.0, 6.0]).into_dyn());
    });
}

#[test]
fn mixing_sessions_is_an_error() {
    let (s1, s2) = (isolated(), isolated());
    let x = with_session(&s1, || Array::from_vec(vec![1.0, 2.0]));
    let y = with_session(&s2, || Array::from_vec(vec![3.0, 4.0]));
    assert!(matches!(x.try_add(&y), Err(E::SessionMismatch { .. })));
    assert!(matches!(y.try_sub(&x), Err(E::SessionMismatch { .. })));
    assert!(matches!(x.try_dot(&y), Err(E::SessionMismatch { .. })));
    let p = catch_unwind(AssertUnwindSafe(|| &x * &y)).expect_err("operator panics");
    assert!(panic_text(p).contains("different Bach sessions"));
    assert!(matches!(bach::evaluate(&[&x, &y]), Err(E::SessionMismatch { .. })));
    assert!(matches!(s1.evaluate(&[&y.lazy()]), Err(E::SessionMismatch { .. })));
    // A scalar operand joins its array's session, whatever the current one is.
    let z = with_session(&s2, || &x + 1.0);
    assert!(Arc::ptr_eq(z.lazy().session(), &s1));
    assert_eq!(z.to_array().unwrap(), ndarray::arr1(&[2.0, 3.0]).into_dyn());
    assert_eq!(s2.node_count(), 1);
}

/// softplus, annotated by a user: records the pieces it was called on.
fn softplus(seen: Arc<Mutex<Vec<Range<usize>>>>) -> Arc<bach_runtime::Annotation> {
    oa("softplus")
        .elementwise()
        .cpu(move |ctx, args| {
            let x = args[0].array::<f64>("softplus")?;
            if x.len_of(NdAxis(0)) != ctx.rows.len() {
                return Err(E::invalid("softplus", "piece and ctx.rows disagree"));
            }
            assert_eq!(ctx.meta.shape, vec![N], "ctx.meta is the whole result's");
            seen.lock().unwrap().push(ctx.rows.clone());
            Ok(Value::from(x.mapv(|v| (1.0 + v.exp()).ln())))
        })
        .build()
}

#[test]
fn user_annotations_run_in_pieces() {
    let s = isolated();
    with_session(&s, || {
        let xs = ndarray::Array1::from(uniform_vec(4, N, -5.0, 5.0)).into_dyn();
        let x = Array::from_array(xs.clone());
        let seen = Arc::new(Mutex::new(Vec::new()));
        let sp = softplus(seen.clone());
        // Fused with library ops before and after it.
        let pre = &x * 0.5;
        let y = Array::<f64>::from_lazy(sp.call(&[&pre.lazy()]).unwrap()).unwrap();
        let out = &y + 1.0;
        let plan = out.plan().unwrap();
        let st = plan.step_of(y.lazy().id()).unwrap();
        let pieces = plan.stages[st.stage].pieces;
        assert!(pieces > 1, "a large input is cut into pieces:\n{plan}");
        assert_eq!(plan.step_of(pre.lazy().id()).unwrap().stage, st.stage, "fused with its producer:\n{plan}");
        let want = xs.mapv(|v| (1.0 + (v * 0.5).exp()).ln() + 1.0);
        assert_close("softplus", &out.to_array().unwrap(), &want, 1e-12);
        let mut ranges = seen.lock().unwrap().clone();
        ranges.sort_by_key(|r| r.start);
        assert_eq!(ranges.len(), pieces);
        assert_eq!(ranges.first().unwrap().start, 0);
        assert_eq!(ranges.last().unwrap().end, N);
        assert!(ranges.windows(2).all(|w| w[0].end == w[1].start), "pieces cover the rows once");

        // Two arguments, the second broadcast (declared), whole in every piece.
        let calls = Arc::new(AtomicUsize::new(0));
        let c2 = calls.clone();
        let scale_shift = oa("scale_shift")
            .args([split::rows(), split::broadcast()])
            .shape(|m: &[Meta]| {
                if m[0].ndim() != 2 || m[1].shape != m[0].shape[1..] {
                    return Err(E::shape("scale_shift", format!("{:?} and {:?}", m[0].shape, m[1].shape)));
                }
                Ok(m[0].clone())
            })
            .cpu(move |_, args| {
                c2.fetch_add(1, Ordering::SeqCst);
                let (x, w) = (args[0].array::<f64>("scale_shift")?, args[1].array::<f64>("scale_shift")?);
                if w.len() != x.shape()[1] {
                    return Err(E::invalid("scale_shift", "the broadcast argument was split"));
                }
                Ok(Value::from(&x * &w + 1.0))
            })
            .build();
        let m = nd(&[997, 101], uniform_vec(5, 997 * 101, -1.0, 1.0));
        let w = nd(&[101], uniform_vec(6, 101, -1.0, 1.0));
        let (lm, lw) = (Array::from_array(m.clone()), Array::from_array(w.clone()));
        let r = Array::<f64>::from_lazy(scale_shift.call(&[&lm.lazy(), &(&lw * 2.0).lazy()]).unwrap()).unwrap();
        let plan = r.plan().unwrap();
        let pieces = plan.stages[plan.step_of(r.lazy().id()).unwrap().stage].pieces;
        assert!(pieces > 1, "{plan}");
        let want = (&m * &w.mapv(|v| v * 2.0)) + 1.0;
        assert_exact("scale_shift", &r.to_array().unwrap(), &want);
        assert_eq!(calls.load(Ordering::SeqCst), pieces);
        // Its shape rule runs at the call.
        assert!(matches!(scale_shift.call(&[&lm.lazy(), &lm.lazy()]), Err(E::Shape { .. })));
        assert!(matches!(scale_shift.call(&[&lm.lazy()]), Err(E::Invalid { .. })), "wrong arity");

        // Elementwise with numpy broadcasting: a [k] operand of a [n, k] result is broadcast.
        let axpy = oa("axpy")
            .elementwise()
            .args([split::rows(), split::rows()])
            .shape(|m: &[Meta]| Ok(m[0].clone()))
            .cpu(|_, args| Ok(Value::from(&args[0].array::<f64>("axpy")? * 3.0 + &args[1].array::<f64>("axpy")?)))
            .build();
        let r = Array::<f64>::from_lazy(axpy.call(&[&lm.lazy(), &lw.lazy()]).unwrap()).unwrap();
        assert_exact("axpy", &r.to_array().unwrap(), &(&m * 3.0 + &w));

        // Unsplittable: one call over whole values.
        let whole_calls = Arc::new(Mutex::new(Vec::new()));
        let wc = whole_calls.clone();
        let cumsum = oa("cumsum")
            .unsplittable()
            .cpu(move |ctx, args| {
                wc.lock().unwrap().push(ctx.rows.clone());
                let x = args[0].array::<f64>("cumsum")?;
                let mut acc = 0.0;
                Ok(Value::from(x.mapv(|v| {
                    acc += v;
                    acc
                })))
            })
            .build();
        let c = Array::<f64>::from_lazy(cumsum.call(&[&(&x * 1.0).lazy()]).unwrap()).unwrap();
        let got = c.to_array().unwrap();
        let mut acc = 0.0;
        let want = xs.mapv(|v| {
            acc += v;
            acc
        });
        assert_exact("cumsum", &got, &want);
        assert_eq!(*whole_calls.lock().unwrap(), vec![0..N]);

        // A kernel that returns an error: the error comes back from the evaluation.
        let failing = oa("failing").cpu(|_, _| Err(E::invalid("failing", "no luck"))).build();
        let f = failing.call(&[&x.lazy()]).unwrap();
        assert!(matches!(f.eval(), Err(E::Invalid { ref detail, .. }) if detail == "no luck"));
    });
}

#[test]
fn a_panicking_closure_is_a_kernel_error() {
    let s = isolated();
    with_session(&s, || {
        let xs = ndarray::Array1::from(uniform_vec(7, N, 0.0, 1.0)).into_dyn();
        let x = Array::from_array(xs.clone());
        let y = x.mapv_lazy(|v| if v > 0.999 { panic!("boom: {v} is too big") } else { v * 2.0 });
        let z = &y + 1.0;
        match z.eval() {
            Err(E::Kernel { op, device, detail }) => {
                assert_eq!(op, "mapv");
                assert_eq!(device, "cpu");
                assert!(detail.contains("boom") && detail.contains("too big"), "{detail}");
            }
            r => panic!("expected a kernel error, got {:?}", r.map(|v| v.shape().to_vec())),
        }
        assert!(!z.is_evaluated());
        // Again: the same error, not a cached half-result.
        assert!(matches!(z.eval(), Err(E::Kernel { .. })));
        // The session still works, also with the same input, and in the same evaluation as a
        // value that depends on nothing failing.
        let ok = x.mapv_lazy(|v| v * 2.0);
        assert_exact("after the panic", &ok.to_array().unwrap(), &xs.mapv(|v| v * 2.0));
        let w = (&x + 2.0).sqrt();
        assert_close("after the panic", &w.to_array().unwrap(), &xs.mapv(|v| (v + 2.0).sqrt()), 1e-12);
        // A panic with a non-text payload.
        let q = x.mapv_lazy(|v| if v > 0.5 { std::panic::panic_any(42u8) } else { v });
        assert!(matches!(q.eval(), Err(E::Kernel { .. })));
    });
}

#[test]
fn interrupt_stops_an_evaluation_and_a_later_one_works() {
    let s = isolated();
    with_session(&s, || {
        let xs = ndarray::Array1::from(uniform_vec(8, N, 0.0, 1.0)).into_dyn();
        let x = Array::from_array(xs.clone());
        let y = (&x * 3.0).sqrt();
        s.interrupt();
        assert!(matches!(y.eval(), Err(E::Interrupted)));
        assert!(!y.is_evaluated());
        assert_close("after interrupt", &y.to_array().unwrap(), &xs.mapv(|v| (v * 3.0).sqrt()), 1e-12);

        // set_cell clears an interrupt left from the previous cell.
        let z = &y + 1.0;
        s.interrupt();
        s.set_cell(2);
        assert!(z.eval().is_ok());

        // An interrupt during an evaluation: a later stage stops; the earlier stage's values
        // are kept and not computed again.
        let armed = Arc::new(AtomicBool::new(true));
        let (sc, a2) = (s.clone(), armed.clone());
        let a = (&x * 2.0).exp(); // stage 1
        let total = a.sum_lazy(); // merged at the end of stage 1
        let b = (&a / &total).mapv_lazy(move |v| {
            if a2.swap(false, Ordering::SeqCst) {
                sc.interrupt();
            }
            v
        });
        let c = &b * 10.0;
        match c.eval() {
            Err(E::Interrupted) => {}
            r => panic!("expected Interrupted, got {:?}", r.map(|v| v.shape().to_vec())),
        }
        assert!(a.is_evaluated(), "stage 1 finished before the interrupt: its value is kept");
        assert!(!c.is_evaluated());
        let got = c.to_array().unwrap();
        let ea = xs.mapv(|v| (v * 2.0).exp());
        let t = exact_sum(ea.iter().copied());
        assert_close("c after resuming", &got, &ea.mapv(|v| v / t * 10.0), 1e-12);
        let trace = s.trace();
        let last = trace.last().unwrap();
        assert!(!last.events.iter().any(|e| e.node == a.lazy().id() && e.kind == EventKind::Compute), "a is not computed again");
    });
}

#[test]
fn the_trace_has_an_event_per_piece() {
    let s = isolated();
    with_session(&s, || {
        s.set_cell(7);
        let x = Array::from_array(ndarray::Array1::from(uniform_vec(9, N, 0.0, 1.0)));
        let y = x.sqrt();
        let plan = y.plan().unwrap();
        let stage = &plan.stages[plan.step_of(y.lazy().id()).unwrap().stage];
        assert!(stage.pieces > 1 && stage.device == CPU);
        s.set_cell(8);
        y.eval().unwrap();
        let trace = s.trace();
        let last = trace.last().unwrap();
        assert_eq!(last.cell, 8);
        assert_eq!(last.pieces, plan.total_pieces());
        assert_eq!(last.plan(), Some(&plan), "the trace keeps the plan it ran");
        assert!(last.start <= last.end);
        let computes: Vec<_> = last.events.iter().filter(|e| e.node == y.lazy().id() && e.kind == EventKind::Compute).collect();
        assert_eq!(computes.len(), stage.pieces);
        let pieces: BTreeSet<u32> = computes.iter().map(|e| e.piece).collect();
        assert_eq!(pieces, (0..stage.pieces as u32).collect(), "one event per piece");
        for e in &computes {
            assert_eq!(e.cell, 7, "the cell the node was made in");
            assert_eq!(e.device, CPU);
            assert_eq!(&*e.op, "sqrt");
            assert_eq!(e.eval, last.eval);
            assert!(e.start <= e.end);
            let rows = if (e.piece as usize) + 1 < stage.pieces { stage.piece_rows } else { N - stage.piece_rows * (stage.pieces - 1) };
            assert_eq!(e.bytes, (rows * 8) as u64, "piece {} bytes", e.piece);
        }
        assert_eq!(computes.iter().map(|e| e.bytes).sum::<u64>(), (N * 8) as u64);
        // Row results are written in place by their pieces: no merge event.
        assert!(!last.events.iter().any(|e| e.kind == EventKind::Merge), "rows need no merge");
        // A reduction's partials still merge.
        drop(trace);
        let total = y.sum_lazy();
        total.eval().unwrap();
        let trace = s.trace();
        let merges: Vec<_> = trace.last().unwrap().events.iter().filter(|e| e.node == total.lazy().id() && e.kind == EventKind::Merge).collect();
        assert_eq!(merges.len(), 1, "the partial sums merge once");
        // An allocation's pieces are Alloc events.
        drop(trace);
        let z: Array<f64> = Array::zeros(vec![N]);
        let u = &z + 1.0;
        u.eval().unwrap();
        let trace = s.trace();
        let allocs = trace.last().unwrap().events.iter().filter(|e| e.node == z.lazy().id() && e.kind == EventKind::Alloc).count();
        assert!(allocs > 1, "zeros made in pieces: {allocs}");
        assert!(trace.evals().map(|e| e.eval).collect::<Vec<_>>().windows(2).all(|w| w[0] < w[1]));
    });
}

#[test]
fn mapv_says_why_it_stays_on_the_cpu() {
    let s = isolated();
    with_session(&s, || {
        let x = Array::from_vec(vec![1.0; 1000]);
        let y = x.mapv_lazy(|v| v + 1.0);
        let plan = y.plan().unwrap();
        let step = plan.step_of(y.lazy().id()).unwrap();
        assert_eq!(step.op, "mapv");
        assert_eq!(step.reason, "a Rust closure runs on the CPU only");
        assert_eq!(step.device, CPU);
        assert!(plan.to_string().contains("a Rust closure runs on the CPU only"), "{plan}");
        let gpu = s.plan_for(&[&y.lazy()], &[bach_runtime::DeviceProfile::cpu(), bach_runtime::DeviceProfile::hypothetical_gpu("H100", 80 << 30)]).unwrap();
        let step = gpu.step_of(y.lazy().id()).unwrap();
        assert_eq!((step.device, step.reason.to_string().as_str()), (CPU, "a Rust closure runs on the CPU only"));
        let f32s = Array::from_vec(vec![1.0f32; 10]).mapv_lazy(|v| v * 2.0);
        assert_eq!(f32s.plan().unwrap().steps[0].reason, "a Rust closure runs on the CPU only");
        assert_eq!(f32s.to_array().unwrap(), ArrayD::from_elem(IxDyn(&[10]), 2.0f32));
    });
}

#[test]
fn values_are_usable_through_lazy_and_value_apis() {
    // The runtime API without the library: sources, ValueRef views and metas.
    let s = isolated();
    let v = Value::from(nd(&[4, 2], vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]));
    let x = s.source(v.clone(), "x");
    assert!(x.is_evaluated());
    assert_eq!(x.meta(), &Meta::new(bach_runtime::DType::F64, [4, 2]));
    let double = oa("double")
        .cpu(|_, a| match &a[0] {
            ValueRef::F64(x) => Ok(Value::from(x.mapv(|v| v * 2.0))),
            other => Err(E::dtype("double", "f64", other.dtype())),
        })
        .build();
    let y = double.call(&[&x]).unwrap();
    let out = y.eval().unwrap();
    assert_eq!(out.array::<f64>().unwrap().iter().copied().collect::<Vec<_>>(), vec![2.0, 4.0, 6.0, 8.0, 10.0, 12.0, 14.0, 16.0]);
    // The dtype error of a kernel names the op.
    let b = s.source(Value::from(ArrayD::from_elem(IxDyn(&[3]), true)), "mask");
    match double.call(&[&b]).unwrap().eval() {
        Err(e) => assert_eq!(e.to_string(), "dtype mismatch in `double`: expected f64, got bool"),
        Ok(_) => panic!("double of a mask"),
    }
}

/// Whoever changes the cost model (a magic, the panel, a calibration), the session stamps it:
/// `cost_model_since` is the last evaluation before the change; other settings leave it.
#[test]
fn a_cost_model_change_is_stamped_by_the_session() {
    let s = isolated();
    with_session(&s, || {
        assert_eq!(s.cost_model_since(), 0);
        let x = Array::from_vec(vec![1.0, 4.0, 9.0]);
        assert_eq!(x.sqrt().sum(), 6.0);
        assert_eq!(x.exp().sum(), 1.0f64.exp() + 4.0f64.exp() + 9.0f64.exp());
        let last = s.trace().last().map(|e| e.eval).expect("two evaluations");
        s.update_config(|c| c.policy = bach_runtime::Policy::Greedy);
        assert_eq!(s.cost_model_since(), 0, "a policy is not the cost model");
        let mut cost = s.config().cost;
        cost.set("elementwise.cpu.per_element", "3e-9").unwrap();
        s.update_config(|c| c.cost = cost.clone());
        assert_eq!(s.cost_model_since(), last);
        assert_eq!((&x * 2.0).sum(), 28.0);
        s.update_config(|c| c.cost = cost);
        assert_eq!(s.cost_model_since(), last, "the same model again is no change");
    });
}

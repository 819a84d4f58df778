//! Planning without executing: placement on a hypothetical GPU, transfers, lazy allocations,
//! paging under a memory cap, the CPU-only policy, printing; invariants every plan must keep
//! (a value is computed, and moved, before the stage that reads it); and random programs
//! that are planned for a GPU and run on the CPU against an eager interpretation.

use std::collections::HashMap;
use std::sync::Arc;

use bach::prelude::*;
use bach_runtime::plan::{self, GraphPart, PartNode};
use bach_runtime::{oa, split, with_session, Annotation, CostModel, DeviceId, DeviceProfile, Lazy, Meta, NodeInfo, Policy, Session, Value, CPU};
use bach_tests::*;
use ndarray::{ArrayD, IxDyn};
use proptest::prelude::*;

const GPU: DeviceId = DeviceId(1);

fn devices() -> Vec<DeviceProfile> {
    vec![DeviceProfile::cpu(), DeviceProfile::hypothetical_gpu("H100", 80 << 30)]
}

/// [`devices`] with a GPU that launches every elementwise op alone.
fn not_fusing_devices() -> Vec<DeviceProfile> {
    vec![DeviceProfile::cpu(), DeviceProfile { fuses_elementwise: false, ..DeviceProfile::hypothetical_gpu("H100", 80 << 30) }]
}

/// A user annotation with an accelerator version: `2x + 1` (CPU kernel for running here).
fn gpu_op(name: &str) -> Arc<Annotation> {
    oa(name)
        .elementwise()
        .accelerator(name, format!("extern \"C\" __global__ void {name}(const double* x, double* y, size_t n) {{ size_t i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] = 2.0 * x[i] + 1.0; }}"))
        .cpu(|_, args| Ok(Value::from(args[0].array::<f64>("gpu")?.mapv(|v| 2.0 * v + 1.0))))
        .build()
}

/// A two-argument accelerator op: `x + y`.
fn gpu_add() -> Arc<Annotation> {
    oa("gpu_add")
        .elementwise()
        .args([split::rows(), split::rows()])
        .accelerator("gpu_add", "extern \"C\" __global__ void gpu_add() {}")
        .shape(|m: &[Meta]| Ok(m[0].clone()))
        .cpu(|_, args| Ok(Value::from(&args[0].array::<f64>("gpu_add")? + &args[1].array::<f64>("gpu_add")?)))
        .build()
}

fn call(op: &Arc<Annotation>, args: &[&Lazy]) -> Array<f64> {
    Array::from_lazy(op.call(args).unwrap()).unwrap()
}

/// Every plan must compute a value before (or, in the same stage, earlier than) its users,
/// and move it to another device before the first stage there that reads it.
#[track_caller]
fn check_plan_order(plan: &Plan, nodes: &[NodeInfo]) {
    let args: HashMap<u64, &Vec<u64>> = nodes.iter().map(|n| (n.id, &n.args)).collect();
    let pos_in_stage = |id: u64| {
        let st = plan.step_of(id).unwrap();
        plan.stages[st.stage].steps.iter().position(|&k| plan.steps[k].id == id).unwrap()
    };
    for step in &plan.steps {
        assert!(plan.stages[step.stage].steps.iter().any(|&k| plan.steps[k].id == step.id), "#{} in its stage", step.id);
        for &a in args.get(&step.id).map(|v| v.as_slice()).unwrap_or(&[]) {
            let input_device = match plan.step_of(a) {
                Some(input) => {
                    assert!(
                        input.stage < step.stage || (input.stage == step.stage && pos_in_stage(a) < pos_in_stage(step.id)),
                        "#{} (stage {}) reads #{a} (stage {}) before it is computed:\n{plan}",
                        step.id,
                        step.stage,
                        input.stage
                    );
                    input.device
                }
                None => CPU, // evaluated already: on the host
            };
            if input_device != step.device {
                // Into an accelerator stage piece by piece (that very stage), or whole before
                // it; out of an accelerator piece by piece in the stage that computes it.
                let t = plan.transfers.iter().filter(|t| t.id == a && t.to == step.device).find(|t| {
                    if t.streamed && t.to != CPU {
                        t.stage == Some(step.stage)
                    } else {
                        t.stage.is_some_and(|ts| ts <= step.stage)
                    }
                });
                let t = t.unwrap_or_else(|| panic!("#{} on {:?} reads #{a} from {:?} with no transfer in time:\n{plan}", step.id, step.device, input_device));
                assert_eq!(t.from, input_device, "transfer of #{a} comes from where it is");
                let ts = t.stage.expect("checked");
                if let Some(input) = plan.step_of(a) {
                    if t.streamed && t.from != CPU {
                        assert_eq!(input.stage, ts, "#{a} streams out of the stage that computes it:\n{plan}");
                    } else {
                        assert!(input.stage < ts, "#{a} is moved (before stage {ts}) before it is computed (stage {}):\n{plan}", input.stage);
                    }
                }
            }
        }
    }
}

#[test]
fn an_accelerator_op_goes_to_the_gpu_with_its_transfers() {
    let s = Session::new();
    s.update_config(|c| c.policy = Policy::Greedy);
    with_session(&s, || {
        let k = gpu_op("k");
        let xs = nd(&[1000], uniform_vec(1, 1000, -1.0, 1.0));
        let x = Array::from_array(xs.clone());
        let y = call(&k, &[&x.lazy()]);
        let plan = s.plan_for(&[&y.lazy()], &devices()).unwrap();
        let step = plan.step_of(y.lazy().id()).unwrap();
        assert_eq!(step.device, GPU, "{plan}");
        assert_eq!(step.reason, "accelerator version (greedy)");
        let stage = &plan.stages[step.stage];
        assert_eq!(stage.device, GPU);
        assert!(!stage.paged);
        assert_eq!(stage.pieces, 1, "fits the GPU whole");
        let h2d: Vec<_> = plan.transfers.iter().filter(|t| t.from == CPU && t.to == GPU).collect();
        let d2h: Vec<_> = plan.transfers.iter().filter(|t| t.from == GPU && t.to == CPU).collect();
        assert_eq!(h2d.len(), 1, "{plan}");
        assert_eq!((h2d[0].id, h2d[0].bytes, h2d[0].stage, h2d[0].streamed), (x.lazy().id(), 8000, Some(step.stage), true), "x streams in with the pieces");
        assert_eq!(d2h.len(), 1, "{plan}");
        assert_eq!((d2h[0].id, d2h[0].bytes, d2h[0].stage, d2h[0].streamed), (y.lazy().id(), 8000, Some(step.stage), true), "the target streams back as its pieces finish");
        check_plan_order(&plan, &s.nodes());
        // Planning ran nothing; the plan for this machine (CPU only) runs the CPU kernel.
        assert_eq!(s.trace().evals().count(), 0);
        assert!(!y.is_evaluated());
        let here = y.plan().unwrap();
        assert_eq!(here.step_of(y.lazy().id()).unwrap().device, CPU);
        assert!(here.transfers.is_empty());
        assert_exact("k on the cpu", &y.to_array().unwrap(), &xs.mapv(|v| 2.0 * v + 1.0));
        // Planning is a pure function: the same plan twice.
        let z = call(&k, &[&x.lazy()]);
        assert_eq!(s.plan_for(&[&z.lazy()], &devices()).unwrap(), s.plan_for(&[&z.lazy()], &devices()).unwrap());
        // Printing names the stages, devices and transfers.
        let text = plan.to_string();
        for word in ["stage 0 on H100 (hypothetical)", "transfer #", "-> H100 (hypothetical)", "7.8 KiB", "greedy"] {
            assert!(text.contains(word), "`{word}` missing from\n{text}");
        }
    });
}

#[test]
fn a_chain_on_the_gpu_moves_only_its_ends() {
    let s = Session::new();
    s.update_config(|c| c.policy = Policy::Greedy);
    with_session(&s, || {
        let (k1, k2) = (gpu_op("k1"), gpu_op("k2"));
        let x = Array::from_array(nd(&[4096], uniform_vec(2, 4096, -1.0, 1.0)));
        let a = call(&k1, &[&x.lazy()]);
        let b = call(&k2, &[&a.lazy()]);
        let plan = s.plan_for(&[&b.lazy()], &devices()).unwrap();
        assert_eq!(plan.step_of(a.lazy().id()).unwrap().stage, plan.step_of(b.lazy().id()).unwrap().stage, "one GPU stage:\n{plan}");
        assert_eq!(plan.transfers.len(), 2, "x in, b out:\n{plan}");
        assert!(!plan.transfers.iter().any(|t| t.id == a.lazy().id()), "the intermediate stays on the GPU");
        check_plan_order(&plan, &s.nodes());

        // GPU -> a closure on the CPU -> GPU: the value goes down and back up.
        let m = a.mapv_lazy(|v| v * 3.0);
        let c = call(&k2, &[&m.lazy()]);
        let plan = s.plan_for(&[&c.lazy()], &devices()).unwrap();
        let (sa, sm, sc) = (plan.step_of(a.lazy().id()).unwrap(), plan.step_of(m.lazy().id()).unwrap(), plan.step_of(c.lazy().id()).unwrap());
        assert_eq!((sa.device, sm.device, sc.device), (GPU, CPU, GPU), "{plan}");
        assert!(sa.stage < sm.stage && sm.stage < sc.stage);
        assert!(plan.transfers.iter().any(|t| t.id == a.lazy().id() && t.from == GPU && t.to == CPU && t.stage == Some(sa.stage) && t.streamed), "{plan}");
        assert!(plan.transfers.iter().any(|t| t.id == m.lazy().id() && t.from == CPU && t.to == GPU && t.stage == Some(sc.stage)), "{plan}");
        check_plan_order(&plan, &s.nodes());
        // And it runs (on the CPU here).
        let xs = x.to_array().unwrap();
        assert_exact("k2(mapv(k1(x)))", &c.to_array().unwrap(), &xs.mapv(|v| 2.0 * ((2.0 * v + 1.0) * 3.0) + 1.0));
    });
}

#[test]
fn a_lazy_allocation_is_made_where_its_first_user_runs() {
    let s = Session::new();
    // Small allocations too are graph nodes here (not made at once on the host).
    s.update_config(|c| c.eager_max_elements = 0);
    with_session(&s, || {
        let k = gpu_op("k");
        // 32 MiB: large enough that the accelerator's piece (0.3 ms) is worth it.
        let z: Array<f64> = Array::zeros(vec![1 << 22]);
        let y = call(&k, &[&z.lazy()]);
        let plan = s.plan_for(&[&y.lazy()], &devices()).unwrap();
        assert_eq!(plan.allocations.len(), 1, "{plan}");
        let a = &plan.allocations[0];
        assert_eq!((a.id, a.device, a.first_user), (z.lazy().id(), GPU, Some(y.lazy().id())), "{plan}");
        assert_eq!(a.op, "zeros");
        assert!(!plan.transfers.iter().any(|t| t.id == z.lazy().id()), "no transfer for an allocation made on the GPU:\n{plan}");
        assert_eq!(plan.transfers.len(), 1, "only the result comes back:\n{plan}");
        assert!(plan.to_string().contains("allocation #"), "{plan}");
        check_plan_order(&plan, &s.nodes());

        // First user on the CPU (a closure): allocated on the host.
        let o: Array<f64> = Array::ones(vec![1 << 16]);
        let m = o.mapv_lazy(|v| v + 1.0);
        let plan = s.plan_for(&[&m.lazy()], &devices()).unwrap();
        assert_eq!(plan.allocations[0].device, CPU, "{plan}");
        assert!(plan.transfers.is_empty(), "{plan}");
        // No user at all: on the host.
        let lonely: Array<f64> = Array::full(vec![10], 3.0);
        let plan = s.plan_for(&[&lonely.lazy()], &devices()).unwrap();
        assert_eq!(plan.allocations[0].device, CPU);
        assert_eq!(plan.allocations[0].first_user, None);
        // It computes the same here.
        assert_exact("k(zeros)", &y.to_array().unwrap(), &ArrayD::from_elem(IxDyn(&[1 << 22]), 1.0));
    });
}

#[test]
fn a_stage_over_the_memory_cap_is_paged() {
    let s = Session::new();
    with_session(&s, || {
        // One cheap op is not worth its copies on this machine's defaults: greedy places it on
        // the accelerator, which this test needs to page.
        s.update_config(|c| c.policy = Policy::Greedy);
        let k = gpu_op("k");
        let n = 1 << 20; // 8 MiB of f64
        let x = Array::from_array(nd(&[n], uniform_vec(3, n, -1.0, 1.0)));
        let y = call(&k, &[&x.lazy()]);
        let whole = s.plan_for(&[&y.lazy()], &devices()).unwrap();
        let st = &whole.stages[whole.step_of(y.lazy().id()).unwrap().stage];
        assert!(!st.paged && st.pieces == 1, "80 GB holds 16 MiB:\n{whole}");

        s.update_config(|c| c.memory_cap = Some(1 << 20));
        let plan = s.plan_for(&[&y.lazy()], &devices()).unwrap();
        let step = plan.step_of(y.lazy().id()).unwrap();
        assert_eq!(step.device, GPU, "a splittable op still goes to the GPU, in pages:\n{plan}");
        let st = &plan.stages[step.stage];
        assert!(st.paged, "{plan}");
        assert!(st.pieces > 1, "{plan}");
        assert!(st.piece_rows * st.pieces >= n);
        // Two pieces in flight (input and output rows) fit the budget.
        let budget = ((1u64 << 20) as f64 * CostModel::default().planner.accelerator_memory_fraction) as usize;
        assert!(2 * st.piece_rows * 16 <= budget, "{} rows of 16 bytes, twice, over {budget}:\n{plan}", st.piece_rows);
        assert!(plan.to_string().contains("(paged)"), "{plan}");
        assert!(plan.notes.iter().any(|n| n.contains("paged")), "{:?}", plan.notes);
        check_plan_order(&plan, &s.nodes());

        // An unsplittable accelerator op that does not fit stays on the CPU, and says why.
        let big = oa("big").unsplittable().accelerator("big", "src").cpu(|_, a| Ok(a[0].to_value())).build();
        let b = call(&big, &[&x.lazy()]);
        let plan = s.plan_for(&[&b.lazy()], &devices()).unwrap();
        let step = plan.step_of(b.lazy().id()).unwrap();
        assert_eq!((step.device, &step.reason), (CPU, &plan::Reason::DoesNotFit), "{plan}");
        assert!(plan.notes.iter().any(|n| n.contains("big")), "{:?}", plan.notes);
        // Executing here is unaffected by the cap.
        let xs = x.to_array().unwrap();
        assert_exact("paged k", &y.to_array().unwrap(), &xs.mapv(|v| 2.0 * v + 1.0));
    });
}

#[test]
fn cpu_only_policy_puts_everything_on_the_cpu() {
    let s = Session::new();
    with_session(&s, || {
        s.update_config(|c| c.policy = Policy::CpuOnly);
        let k = gpu_op("k");
        let z: Array<f64> = Array::zeros(vec![5000]);
        let x = Array::from_array(nd(&[5000], uniform_vec(4, 5000, -1.0, 1.0)));
        let y = call(&k, &[&(&x + &z).lazy()]);
        let w = (&call(&k, &[&y.lazy()]) * 2.0).sum_lazy();
        let plan = s.plan_for(&[&w.lazy()], &devices()).unwrap();
        assert_eq!(plan.policy, Policy::CpuOnly);
        assert!(plan.steps.iter().all(|st| st.device == CPU), "{plan}");
        assert!(plan.stages.iter().all(|st| st.device == CPU && !st.paged));
        assert!(plan.transfers.is_empty(), "{plan}");
        assert!(plan.allocations.iter().all(|a| a.device == CPU));
        assert_eq!(plan.step_of(y.lazy().id()).unwrap().reason, "policy cpu");
        let text = plan.to_string();
        assert!(text.contains("policy cpu") && text.contains("transfers: none"), "{text}");
        check_plan_order(&plan, &s.nodes());
        // Greedy again: the accelerator ops move.
        s.update_config(|c| c.policy = Policy::Greedy);
        let plan = s.plan_for(&[&w.lazy()], &devices()).unwrap();
        assert_eq!(plan.step_of(y.lazy().id()).unwrap().device, GPU);
        check_plan_order(&plan, &s.nodes());
        assert_eq!("cpu".parse::<Policy>().unwrap(), Policy::CpuOnly);
        assert!("gpu-only".parse::<Policy>().is_err());
    });
}

/// The CPU's rates count all of its threads; a split stage of fewer pieces than threads keeps
/// only that many busy, and its prediction grows by as much (Black-Scholes at 2^16 on a
/// 16-thread host: 8 pieces, 2.5x its all-thread prediction).
#[test]
fn a_cpu_stage_of_fewer_pieces_than_threads_is_predicted_for_the_threads_it_keeps_busy() {
    let s = Session::new();
    with_session(&s, || {
        let n = 1 << 16;
        let x = Array::from_array(nd(&[n], uniform_vec(5, n, 0.1, 1.0)));
        let y = (&x.exp() + 1.0).ln();
        let with_threads = |threads: usize| {
            let mut cpu = DeviceProfile::cpu();
            cpu.threads = threads;
            s.plan_for(&[&y.lazy()], &[cpu]).unwrap()
        };
        let plan = with_threads(16);
        let stage = plan.stages.iter().position(|st| st.split_len.is_some()).expect("a split stage");
        let pieces = plan.stages[stage].pieces;
        assert!((2..16).contains(&pieces), "{plan}");
        assert_eq!(plan.stage_parallel_pieces(stage), pieces as f64 / 16.0, "{plan}");
        // As many threads as pieces, or fewer: every thread is busy, the rates hold.
        for threads in [pieces, 1] {
            let plan = with_threads(threads);
            assert_eq!(plan.stages[stage].pieces, pieces);
            assert_eq!(plan.stage_parallel_pieces(stage), 1.0, "{threads} threads");
        }
    });
}

/// An accelerator op whose annotation gives the paper's kind of estimators: seconds on the
/// CPU and on the accelerator, and of copying an argument there, each a function of the rows.
fn estimated_op(
    name: &str,
    cpu: impl Fn(f64) -> f64 + Send + Sync + 'static,
    accel: impl Fn(f64) -> f64 + Send + Sync + 'static,
    transfer: impl Fn(f64) -> f64 + Send + Sync + 'static,
) -> Arc<Annotation> {
    oa(name)
        .elementwise()
        .accelerator(name, format!("extern \"C\" __global__ void {name}() {{}}"))
        .cpu(|_, args| Ok(Value::from(args[0].array::<f64>("estimated")?.mapv(|v| v + 1.0))))
        .estimate(move |args, _, d| if d.kind == bach_runtime::DeviceKind::Cpu { cpu(args[0].rows() as f64) } else { accel(args[0].rows() as f64) })
        .estimate_transfer(move |m, _| transfer(m.rows() as f64))
        .build()
}

/// The paper's TSVD estimators (transfer `1*log2(n)`, CPU `2*log2(n)`, GPU `14`): `threshold`
/// keeps the op on the CPU below n = 2^14 rows and sends it to the accelerator from 2^14 on;
/// `greedy` sends it whatever the estimates say.
#[test]
fn threshold_reproduces_the_papers_tsvd_rule() {
    let s = Session::new();
    with_session(&s, || {
        s.update_config(|c| c.policy = Policy::Threshold);
        let tsvd = estimated_op("tsvd_like", |n| 2.0 * n.log2(), |_| 14.0, |n| n.log2());
        for k in [4, 10, 13, 14, 15, 20] {
            let n = 1usize << k;
            let x = Array::from_array(nd(&[n], vec![0.5; n]));
            let y = call(&tsvd, &[&x.lazy()]);
            let plan = s.plan_for(&[&y.lazy()], &devices()).unwrap();
            let step = plan.step_of(y.lazy().id()).unwrap();
            assert_eq!(step.device, if k < 14 { CPU } else { GPU }, "n = 2^{k}:\n{plan}");
            let want = plan::Reason::Estimates { cpu_s: 2.0 * k as f64, accelerator_s: 14.0, transfers_s: k as f64 };
            assert_eq!(step.reason, want, "n = 2^{k}");
            assert!(plan.to_string().contains("estimated accelerator"), "the plan says why:\n{plan}");
            check_plan_order(&plan, &s.nodes());
        }
        assert_eq!("threshold".parse::<Policy>().unwrap(), Policy::Threshold);
        s.update_config(|c| c.policy = Policy::Greedy);
        let x = Array::from_array(nd(&[16], vec![0.5; 16]));
        let y = call(&tsvd, &[&x.lazy()]);
        assert_eq!(s.plan_for(&[&y.lazy()], &devices()).unwrap().step_of(y.lazy().id()).unwrap().device, GPU, "greedy ignores estimates");
    });
}

/// `threshold` charges only the copies an op's arguments need: an argument its producer just
/// placed on the accelerator costs nothing to read there.
#[test]
fn threshold_charges_only_the_copies_an_op_needs() {
    let s = Session::new();
    with_session(&s, || {
        s.update_config(|c| c.policy = Policy::Threshold);
        // First op: 1 + 100 (copy in) <= 200 on the CPU: accelerator. Second: 1 <= 50 there,
        // since its argument is already on the accelerator (1 + 100 > 50 if it were copied).
        let first = estimated_op("first", |_| 200.0, |_| 1.0, |_| 100.0);
        let second = estimated_op("second", |_| 50.0, |_| 1.0, |_| 100.0);
        let x = Array::from_array(nd(&[64], vec![0.5; 64]));
        let a = call(&first, &[&x.lazy()]);
        let b = call(&second, &[&a.lazy()]);
        let plan = s.plan_for(&[&b.lazy()], &devices()).unwrap();
        assert_eq!(plan.step_of(a.lazy().id()).unwrap().device, GPU, "{plan}");
        assert_eq!(plan.step_of(b.lazy().id()).unwrap().device, GPU, "{plan}");
        // The same second op reading a host value pays the copy and stays on the CPU.
        let c = call(&second, &[&x.lazy()]);
        let plan = s.plan_for(&[&c.lazy()], &devices()).unwrap();
        assert_eq!(plan.step_of(c.lazy().id()).unwrap().device, CPU, "{plan}");
        check_plan_order(&plan, &s.nodes());
    });
}

/// Two GPU users of one CPU value, the first (in graph order) in a later stage than the
/// second: the value must be on the GPU before the *earlier* stage.
#[test]
fn a_transfer_comes_before_the_first_stage_that_needs_it() {
    let s = Session::new();
    s.update_config(|c| c.policy = Policy::Greedy);
    with_session(&s, || {
        let (k, add) = (gpu_op("k"), gpu_add());
        let x = Array::from_array(nd(&[4096], uniform_vec(5, 4096, -1.0, 1.0)));
        let u = x.mapv_lazy(|v| v * 0.5); // on the CPU (a closure), level 0
        let v = &u - &u.max_lazy().unwrap(); // on the CPU, after a merge: level 1
        let a = call(&add, &[&v.lazy(), &u.lazy()]); // GPU, level 2, reads u
        let b = call(&k, &[&u.lazy()]); // GPU, level 1, reads u
        let plan = s.plan_for(&[&a.lazy(), &b.lazy()], &devices()).unwrap();
        let (sa, sb) = (plan.step_of(a.lazy().id()).unwrap(), plan.step_of(b.lazy().id()).unwrap());
        assert_eq!((sa.device, sb.device), (GPU, GPU), "{plan}");
        assert!(sb.stage < sa.stage, "b runs in an earlier stage than a:\n{plan}");
        check_plan_order(&plan, &s.nodes());
    });
}

/// The smallest case: a host array read by two GPU ops; the one met first when walking the
/// graph from the targets runs in the later stage.
#[test]
fn a_host_input_reaches_the_gpu_before_its_first_gpu_stage() {
    let s = Session::new();
    with_session(&s, || {
        let (k, add) = (gpu_op("k"), gpu_add());
        let x = Array::from_array(nd(&[4096], uniform_vec(7, 4096, -1.0, 1.0)));
        let v = x.mapv_lazy(|v| v + 1.0); // CPU
        let a = call(&add, &[&v.lazy(), &x.lazy()]); // GPU, after v: stage 1
        let b = call(&k, &[&x.lazy()]); // GPU, stage 0
        let plan = s.plan_for(&[&a.lazy(), &b.lazy()], &devices()).unwrap();
        check_plan_order(&plan, &s.nodes());
    });
}

/// A GPU value that is both a target and read by a CPU op is copied back once, not twice.
#[test]
fn a_value_moves_to_a_device_at_most_once() {
    let s = Session::new();
    with_session(&s, || {
        let k = gpu_op("k");
        let x = Array::from_array(nd(&[4096], uniform_vec(8, 4096, -1.0, 1.0)));
        let g = call(&k, &[&x.lazy()]);
        let m = g.mapv(|v| v * 2.0);
        let plan = s.plan_for(&[&g.lazy(), &m.lazy()], &devices()).unwrap();
        check_plan_order(&plan, &s.nodes());
        for t in &plan.transfers {
            let same = plan.transfers.iter().filter(|u| u.id == t.id && u.to == t.to).count();
            assert_eq!(same, 1, "#{} moved to {:?} {same} times:\n{plan}", t.id, t.to);
        }
    });
}

/// The same with the roles reversed: a GPU value read by two CPU stages.
#[test]
fn a_transfer_back_comes_before_the_first_cpu_stage_that_needs_it() {
    let s = Session::new();
    with_session(&s, || {
        let k = gpu_op("k");
        let x = Array::from_array(nd(&[4096], uniform_vec(6, 4096, -1.0, 1.0)));
        let g = call(&k, &[&x.lazy()]); // GPU, stage 0
        let c = x.mapv(|v| v * 3.0); // CPU, level 0
        let s1 = (&c - &c.max_lazy().unwrap()).max_lazy().unwrap(); // a reduction in a level-1 stage
        let late = &g - &s1; // CPU, reads g directly, level 2
        let early = g.mapv(|v| v * 2.0); // CPU, reads g directly, level 1
        let plan = s.plan_for(&[&late.lazy(), &early.lazy()], &devices()).unwrap();
        check_plan_order(&plan, &s.nodes());
    });
}

#[test]
fn a_hand_built_graph_part() {
    // source -> a (rows) -> b (rows) -> c (a reduction: partials) ; d = b - c (new stage)
    let rows_op = |name: &str| oa(name).elementwise().cpu(|_, a| Ok(a[0].to_value())).build();
    let reduce = oa("r")
        .shape(|m: &[Meta]| Ok(Meta::new(m[0].dtype, Vec::<usize>::new())))
        .result(Arc::new(split::Partials::new("r", |mut p| Ok(p.remove(0)))))
        .cpu(|_, a| Ok(a[0].to_value()))
        .build();
    let sub = oa("sub").elementwise().args([split::rows(), split::rows()]).shape(|m: &[Meta]| Ok(m[0].clone())).cpu(|_, a| Ok(a[0].to_value())).build();
    let meta = Meta::new(bach_runtime::DType::F64, [1000]);
    let scalar = Meta::new(bach_runtime::DType::F64, Vec::<usize>::new());
    let node = |id: u64, op: &Arc<Annotation>, inputs: Vec<usize>, splits: Vec<bach_runtime::SplitRef>, meta: &Meta, target: bool| PartNode {
        id,
        op: op.clone(),
        inputs,
        arg_splits: splits,
        meta: meta.clone(),
        cell: 1,
        materialized: None,
        host_memory: bach_runtime::MemoryKind::Pageable,
        lands_in: bach_runtime::MemoryKind::Pageable,
        target,
        keep_on_device: false,
        forced: None,
    };
    let src = {
        let mut n = node(0, &rows_op("source"), vec![], vec![], &meta, false);
        n.materialized = Some(CPU);
        n
    };
    let part = GraphPart {
        nodes: vec![
            src,
            node(1, &rows_op("a"), vec![0], vec![split::rows()], &meta, false),
            node(2, &rows_op("b"), vec![1], vec![split::rows()], &meta, false),
            node(3, &reduce, vec![2], vec![split::rows()], &scalar, false),
            node(4, &sub, vec![2, 3], vec![split::rows(), split::broadcast()], &meta, true),
        ],
    };
    let cost = {
        let mut c = CostModel::default();
        c.planner.cpu_piece_bytes = 800;
        c
    };
    let p = plan::plan(&part, &cost, &devices()[..1], Policy::Greedy, None).unwrap();
    assert_eq!(p.stages.len(), 2, "{p}");
    let ids = |s: usize| p.stages[s].steps.iter().map(|&k| p.steps[k].id).collect::<Vec<_>>();
    assert_eq!(ids(0), vec![1, 2, 3]);
    assert_eq!(ids(1), vec![4]);
    assert_eq!((p.stages[0].piece_rows, p.stages[0].pieces), (100, 10), "800-byte pieces of 8-byte rows:\n{p}");
    // b and r are read by stage 1: merged at the end of stage 0; a is not.
    assert_eq!(p.stages[0].outputs, vec![2, 3]);
    assert_eq!(p.stages[1].outputs, vec![4]);
    assert!(p.transfers.is_empty());
    // The CPU must come first.
    let reversed = vec![devices()[1].clone(), devices()[0].clone()];
    assert!(plan::plan(&part, &cost, &reversed, Policy::Greedy, None).is_err());
    // An empty part plans to nothing.
    let empty = plan::plan(&GraphPart::default(), &cost, &devices(), Policy::Greedy, None).unwrap();
    assert!(empty.steps.is_empty() && empty.stages.is_empty());
}

#[test]
fn a_page_locked_host_array_is_priced_at_the_pinned_rate_and_can_move_its_reader() {
    // A 128 MiB host array read by an op with an accelerator version. Copies of ordinary
    // memory at 1 GB/s make the accelerator lose to the CPU (16.8 ms); once an accelerator
    // has page-locked the array (`Device::host_memory`), its copy in runs at the pinned rate
    // and the op moves there, with the transfer marked as from page-locked memory.
    let n = 1usize << 24;
    let meta = Meta::new(bach_runtime::DType::F64, [n]);
    let part = |memory: bach_runtime::MemoryKind| GraphPart {
        nodes: vec![
            PartNode {
                id: 0,
                op: oa("source").elementwise().cpu(|_, a| Ok(a[0].to_value())).build(),
                inputs: vec![],
                arg_splits: vec![],
                meta: meta.clone(),
                cell: 1,
                materialized: Some(CPU),
                host_memory: memory,
                lands_in: bach_runtime::MemoryKind::Pageable,
                target: false,
                keep_on_device: false,
                forced: None,
            },
            PartNode {
                id: 1,
                op: gpu_op("k"),
                inputs: vec![0],
                arg_splits: vec![split::rows()],
                meta: meta.clone(),
                cell: 1,
                materialized: None,
                host_memory: bach_runtime::MemoryKind::Pageable,
                lands_in: bach_runtime::MemoryKind::Pageable,
                target: true,
                keep_on_device: false,
                forced: None,
            },
        ],
    };
    let mut cost = CostModel::h100();
    for (path, value) in [
        ("elementwise.cpu.per_element", "1e-9"),
        ("transfer.h2d.pageable.cuda.bandwidth", "1e9"),
        ("transfer.h2d.pinned.cuda.bandwidth", "100e9"),
        ("transfer.d2h.pageable.cuda.bandwidth", "100e9"),
    ] {
        cost.set(path, value).unwrap();
    }
    // The policies that weigh copies (greedy takes every accelerator version there is).
    for policy in [Policy::Optimal, Policy::Threshold] {
        let ordinary = plan::plan(&part(bach_runtime::MemoryKind::Pageable), &cost, &devices(), policy, None).unwrap();
        assert_eq!(ordinary.stages[0].device, CPU, "{policy:?}, ordinary memory:\n{ordinary}");
        assert!(ordinary.transfers.is_empty());
        let locked = plan::plan(&part(bach_runtime::MemoryKind::Pinned), &cost, &devices(), policy, None).unwrap();
        assert_ne!(locked.stages[0].device, CPU, "{policy:?}, page-locked:\n{locked}");
        let copy_in = locked.transfers.iter().find(|t| t.id == 0).expect("the array is copied in");
        assert_eq!(copy_in.memory, bach_runtime::MemoryKind::Pinned);
        // 128 MiB at 100 GB/s (plus the row's latency), not at 1 GB/s.
        let seconds = locked.transfer_seconds(copy_in, &cost);
        assert!(seconds < 2e-3, "{seconds} s for the copy in");
        assert!(locked.predicted.seconds() < ordinary.predicted.seconds(), "{locked}");
    }
}

#[test]
fn pieces_of_an_accelerator_stage_are_priced_and_can_send_the_whole_plan_to_the_cpu() {
    // `k` over 2^20 rows from a host array, paged through a 1 MiB budget: many pieces. With
    // pieces free it runs on the accelerator; at 1 ms a piece the whole plan on the CPU is
    // cheaper, and `optimal` says so on the op and in the notes.
    let n = 1usize << 20;
    let meta = Meta::new(bach_runtime::DType::F64, [n]);
    let node = |id: u64, op: Arc<Annotation>, inputs: Vec<usize>, materialized: Option<DeviceId>, target: bool| PartNode {
        id,
        op,
        arg_splits: inputs.iter().map(|_| split::rows()).collect(),
        inputs,
        meta: meta.clone(),
        cell: 1,
        materialized,
        host_memory: bach_runtime::MemoryKind::Pageable,
        lands_in: bach_runtime::MemoryKind::Pageable,
        target,
        keep_on_device: false,
        forced: None,
    };
    let part =
        GraphPart { nodes: vec![node(0, oa("source").elementwise().cpu(|_, a| Ok(a[0].to_value())).build(), vec![], Some(CPU), false), node(1, gpu_op("k"), vec![0], None, true)] };
    let mut cost = CostModel::h100();
    for (path, value) in [("elementwise.cpu.per_element", "5e-9"), ("stage.cuda.per_call", "0")] {
        cost.set(path, value).unwrap();
    }
    let cap = Some(1 << 20);
    let free = plan::plan(&part, &cost, &devices(), Policy::Optimal, cap).unwrap();
    assert_ne!(free.stages[0].device, CPU, "pieces free: the accelerator\n{free}");
    let pieces = free.stages[0].pieces;
    assert!(pieces >= 8, "{free}");
    cost.set("stage.cuda.per_call", "1e-3").unwrap();
    let priced = plan::plan(&part, &cost, &devices(), Policy::Optimal, cap).unwrap();
    assert_eq!(priced.stages[0].device, CPU, "{pieces} pieces at 1 ms: the CPU\n{priced}");
    assert_eq!(priced.policy, Policy::Optimal);
    let step = priced.step_of(1).unwrap();
    assert!(matches!(step.reason, bach_runtime::plan::Reason::WholePlan { pieces: p, .. } if p == pieces), "{}", step.reason);
    assert!(priced.notes.iter().any(|n| n.contains("whole plan on the CPU")), "{:?}", priced.notes);
    // The accelerator's plan, had it run: its pieces at 1 ms each are in its prediction.
    let threshold = plan::plan(&part, &cost, &devices(), Policy::Threshold, cap).unwrap();
    assert_ne!(threshold.stages[0].device, CPU, "threshold weighs ops one by one\n{threshold}");
    assert!(threshold.predicted.seconds() >= pieces as f64 * 1e-3, "{threshold}");
    assert!((threshold.stage_calls(0) - pieces as f64).abs() < 0.5);
}

// ---------------------------------------------------------------------------------------------
// Random programs
// ---------------------------------------------------------------------------------------------

#[derive(Clone, Debug)]
enum Op {
    SqrtAbs(usize),
    Half(usize),
    Add(usize, usize),
    MinusMax(usize),
    Where(usize, usize),
    Closure(usize),
    Gpu(usize),
    GpuAdd(usize, usize),
    Cumsum(usize),
}

fn op_strategy() -> impl Strategy<Value = Op> {
    let i = any::<usize>();
    prop_oneof![
        i.prop_map(Op::SqrtAbs),
        i.prop_map(Op::Half),
        (i, i).prop_map(|(a, b)| Op::Add(a, b)),
        i.prop_map(Op::MinusMax),
        (i, i).prop_map(|(a, b)| Op::Where(a, b)),
        i.prop_map(Op::Closure),
        i.prop_map(Op::Gpu),
        (i, i).prop_map(|(a, b)| Op::GpuAdd(a, b)),
        i.prop_map(Op::Cumsum),
    ]
}

fn cumsum_op() -> Arc<Annotation> {
    oa("cumsum")
        .unsplittable()
        .cpu(|_, args| {
            let mut acc = 0.0;
            Ok(Value::from(args[0].array::<f64>("cumsum")?.mapv(|v| {
                acc += v;
                acc
            })))
        })
        .build()
}

/// The program in bach (lazy) and eagerly; values bit-exact by construction (no sums).
fn build(ops: &[Op], x: &ArrayD<f64>) -> (Vec<Array<f64>>, Vec<ArrayD<f64>>) {
    let (k, add, cs) = (gpu_op("k"), gpu_add(), cumsum_op());
    let mut lazy = vec![Array::from_array(x.clone())];
    let mut eager = vec![x.clone()];
    for op in ops {
        let n = lazy.len();
        let (l, e) = match *op {
            Op::SqrtAbs(a) => (lazy[a % n].abs().sqrt(), eager[a % n].mapv(|v| v.abs().sqrt())),
            Op::Half(a) => (&lazy[a % n] * 0.5, eager[a % n].mapv(|v| v * 0.5)),
            Op::Add(a, b) => (&lazy[a % n] + &lazy[b % n], &eager[a % n] + &eager[b % n]),
            Op::MinusMax(a) => {
                let m = eager[a % n].iter().copied().fold(f64::NEG_INFINITY, f64::max);
                (&lazy[a % n] - &lazy[a % n].max_lazy().unwrap(), eager[a % n].mapv(|v| v - m))
            }
            Op::Where(a, b) => {
                let (ea, eb) = (&eager[a % n], &eager[b % n]);
                let w = ndarray::Zip::from(ea).and(eb).map_collect(|&p, &q| if p > q { p } else { -q * 0.5 });
                (where_(&lazy[a % n].gt(&lazy[b % n]), &lazy[a % n], &(&lazy[b % n] * -0.5)), w)
            }
            Op::Closure(a) => (lazy[a % n].mapv(|v| v * 0.25 + 1.0), eager[a % n].mapv(|v| v * 0.25 + 1.0)),
            Op::Gpu(a) => (call(&k, &[&lazy[a % n].lazy()]), eager[a % n].mapv(|v| 2.0 * v + 1.0)),
            Op::GpuAdd(a, b) => (call(&add, &[&lazy[a % n].lazy(), &lazy[b % n].lazy()]), &eager[a % n] + &eager[b % n]),
            Op::Cumsum(a) => {
                let mut acc = 0.0;
                (
                    call(&cs, &[&lazy[a % n].lazy()]),
                    eager[a % n].mapv(|v| {
                        acc += v;
                        acc
                    }),
                )
            }
        };
        lazy.push(l);
        eager.push(e);
    }
    (lazy, eager)
}

/// Proptest settings: a fixed seed so that runs are reproducible (set PROPTEST_RNG_SEED to
/// explore others), and no regression files written into the source tree.
fn config(cases: u32) -> ProptestConfig {
    let seed = std::env::var("PROPTEST_RNG_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0xBAC4_2020);
    ProptestConfig { cases, failure_persistence: None, rng_seed: proptest::test_runner::RngSeed::Fixed(seed), ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config(96))]

    /// Random programs: the plan for a GPU keeps every ordering invariant, and running the
    /// program here (in pieces, some values evaluated early, unused handles dropped) gives
    /// the eager result bit for bit.
    #[test]
    fn random_programs(
        ops in proptest::collection::vec(op_strategy(), 1..14),
        n in 0usize..3000,
        piece_bytes in prop_oneof![8usize..256, 256usize..100_000],
        targets in any::<u32>(),
        early in any::<u32>(),
        cap in proptest::option::of(1u64 << 10..1u64 << 16),
        seed in any::<u64>(),
        policy in proptest::sample::select(vec![Policy::Greedy, Policy::Optimal, Policy::Threshold, Policy::CpuOnly]),
    ) {
        let s = Session::new();
        s.update_config(|c| {
            c.cost.planner.cpu_piece_bytes = piece_bytes;
            c.memory_cap = cap;
            c.policy = policy;
        });
        with_session(&s, || -> Result<(), TestCaseError> {
            let x = nd(&[n], uniform_vec(seed, n, -2.0, 2.0));
            let (lazy, eager) = build(&ops, &x);
            let last = lazy.len() - 1;
            let is_target = |i: usize| i == last || (targets >> (i % 32)) & 1 == 1;
            // Some values evaluated before the rest (they become the part's boundary).
            for (i, l) in lazy.iter().enumerate().skip(1) {
                if (early >> (i % 32)) & 1 == 1 && i % 3 == 0 {
                    l.eval().unwrap();
                }
            }
            // Handles not asked for are dropped: their nodes live while targets need them.
            let kept: Vec<(usize, Array<f64>)> = lazy.into_iter().enumerate().filter(|(i, _)| is_target(*i)).collect();
            let owned: Vec<Lazy> = kept.iter().map(|(_, l)| l.lazy()).collect();
            let lazies: Vec<&Lazy> = owned.iter().collect();
            let plan = s.plan_for(&lazies, &devices()).unwrap();
            check_plan_order(&plan, &s.nodes());
            for st in &plan.steps {
                match st.op.as_str() {
                    "k" | "gpu_add" if policy == Policy::Greedy => prop_assert_eq!(st.device, GPU, "{}", plan),
                    "mapv" | "cumsum" => prop_assert_eq!(st.device, CPU, "{}", plan),
                    _ => {}
                }
            }
            let here = s.plan(&lazies).unwrap();
            check_plan_order(&here, &s.nodes());
            let targets: Vec<&dyn bach::AsLazy> = kept.iter().map(|(_, l)| l as &dyn bach::AsLazy).collect();
            bach::evaluate(&targets).unwrap();
            for (i, l) in &kept {
                let got = l.to_array().unwrap();
                prop_assert_eq!(got.shape(), eager[*i].shape());
                for (j, (g, w)) in got.iter().zip(eager[*i].iter()).enumerate() {
                    prop_assert!(g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()), "value {} element {}: {} vs {}", i, j, g, w);
                }
            }
            drop(lazies);
            drop((kept, owned));
            prop_assert_eq!(s.node_count(), 0, "every node is collected once the handles are gone");
            Ok(())
        })?;
    }
}

/// A device that fuses elementwise chains (the CUDA device) holds only what it computes into
/// memory: a paged chain is cut for its inputs and outputs, not its intermediates. Ops it
/// launches alone hold their arguments and results; a device that does not fuse holds every
/// intermediate while it is live.
#[test]
fn a_fusing_device_is_paged_for_what_it_holds() {
    let s = Session::new();
    with_session(&s, || {
        s.update_config(|c| {
            c.policy = Policy::Greedy;
            c.memory_cap = Some(1 << 20);
        });
        let n = 1 << 20;
        let x = Array::from_array(nd(&[n], uniform_vec(5, n, 0.0, 1.0)));
        let y = Array::from_array(nd(&[n], uniform_vec(6, n, 0.0, 1.0)));
        let budget = ((1u64 << 20) as f64 * CostModel::default().planner.accelerator_memory_fraction) as usize;
        let rows = |plan: &Plan, v: &Array<f64>| {
            let st = &plan.stages[plan.step_of(v.lazy().id()).unwrap().stage];
            assert!(st.paged && st.device == GPU, "{plan}");
            st.piece_rows
        };
        let not_fusing = not_fusing_devices();

        // Five fused ops: x and y in, w out, 24 bytes a row, two pieces in flight.
        let w = ((&x * &y).exp() + &x).sqrt() - &y;
        let fused = s.plan_for(&[&w.lazy()], &devices()).unwrap();
        assert_eq!(rows(&fused, &w), budget / (2 * 24), "{fused}");
        let unfused = s.plan_for(&[&w.lazy()], &not_fusing).unwrap();
        assert!(rows(&unfused, &w) < rows(&fused, &w), "intermediates take memory without fusion:\n{unfused}");

        // An op launched alone in the middle: x * y is held for it, and its result for the
        // fused add after it (an output, to the end): 16 bytes of values, 32 a row with x, y.
        let v = call(&gpu_op("alone"), &[&(&x * &y).lazy()]) + &x;
        let plan = s.plan_for(&[&v.lazy()], &devices()).unwrap();
        assert_eq!(rows(&plan, &v), budget / (2 * 32), "{plan}");
        check_plan_order(&plan, &s.nodes());
    });
}

/// A fusing device runs a chain of elementwise ops as one kernel: the planner prices the ops
/// inside the chain (read only by fusable ops, not asked for) at their arithmetic alone, and
/// the op whose result leaves the chain as a kernel of its own. A device that does not fuse
/// pays every op's launch and memory traffic.
#[test]
fn a_fusing_device_prices_a_chain_as_one_kernel() {
    let s = Session::new();
    with_session(&s, || {
        s.update_config(|c| {
            c.policy = Policy::Greedy;
            c.cost = CostModel::h100();
        });
        let n = 1 << 22;
        let x = Array::from_array(nd(&[n], uniform_vec(7, n, 0.0, 1.0)));
        let y = Array::from_array(nd(&[n], uniform_vec(8, n, 0.0, 1.0)));
        let inner = &x * &y;
        let mid = inner.exp();
        let w = (&mid + &x).sqrt() - &y;
        let not_fusing = not_fusing_devices();
        let fused = s.plan_for(&[&w.lazy()], &devices()).unwrap();
        let unfused = s.plan_for(&[&w.lazy()], &not_fusing).unwrap();
        let on = |plan: &Plan, v: &Array<f64>| plan.step_of(v.lazy().id()).unwrap().accelerator_s;
        for v in [&inner, &mid] {
            assert_eq!(fused.step_of(v.lazy().id()).unwrap().device, GPU, "{fused}");
            assert_eq!(on(&fused, v), 0.0, "inside the chain: no launch, no memory traffic of its own\n{fused}");
            assert!(on(&unfused, v) > 0.0, "{unfused}");
        }
        assert!(on(&fused, &w) > 0.0 && on(&fused, &w) == on(&unfused, &w), "the chain's last op is priced as a kernel\n{fused}");
        assert!(fused.predicted.compute_s < unfused.predicted.compute_s, "{fused}\n{unfused}");
        // Asked for, an op's result leaves the chain: it is priced as a kernel.
        let asked = s.plan_for(&[&w.lazy(), &mid.lazy()], &devices()).unwrap();
        assert!(on(&asked, &mid) > 0.0, "{asked}");
    });
}

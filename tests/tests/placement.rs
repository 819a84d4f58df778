//! Placement as a user drives it: the cost model changed by path moves ops between devices;
//! `optimal` weighs copies against compute over the whole graph; values and cells force a
//! device and plans say so; explain gives per op the estimates, copies, margin and reason.

use std::sync::Arc;

use bach::prelude::*;
use bach_runtime::{oa, with_session, Annotation, DeviceId, DeviceProfile, Lazy, Policy, Session, Value, CPU};
use bach_tests::*;

const GPU: DeviceId = DeviceId(1);

fn devices() -> Vec<DeviceProfile> {
    vec![DeviceProfile::cpu(), DeviceProfile::hypothetical_gpu("H100", 80 << 30)]
}

/// `2x + 1` with an accelerator version.
fn gpu_op(name: &str) -> Arc<Annotation> {
    oa(name).elementwise().accelerator(name, "").cpu(|_, args| Ok(Value::from(args[0].array::<f64>("gpu")?.mapv(|v| 2.0 * v + 1.0)))).build()
}

fn call(op: &Arc<Annotation>, args: &[&Lazy]) -> Array<f64> {
    Array::from_lazy(op.call(args).unwrap()).unwrap()
}

fn device_of(s: &Session, a: &Array<f64>) -> DeviceId {
    s.plan_for(&[&a.lazy()], &devices()).unwrap().step_of(a.lazy().id()).unwrap().device
}

/// A chain of ten ops over 2^22 host values: with the H100 profile the GPU wins (copies in
/// and out once, ten ops at HBM speed); make its elementwise ops 1000x slower and the CPU
/// wins; reset, and the GPU wins again. The plan's reasons carry the figures.
#[test]
fn a_cost_parameter_changed_by_path_moves_the_placement() {
    let s = Session::new();
    with_session(&s, || {
        s.update_config(|c| c.cost = bach_runtime::CostModel::h100());
        let op = gpu_op("step");
        let x = Array::from_array(nd(&[1 << 22], vec![0.5; 1 << 22]));
        let mut y = call(&op, &[&x.lazy()]);
        for _ in 0..9 {
            y = call(&op, &[&y.lazy()]);
        }
        let plan = s.plan_for(&[&y.lazy()], &devices()).unwrap();
        assert_eq!(plan.policy, Policy::Optimal, "optimal is the default");
        assert!(plan.steps.iter().all(|st| st.device == GPU), "{plan}");
        assert!(plan.step_of(y.lazy().id()).unwrap().reason.to_string().starts_with("optimal: accelerator"), "{plan}");
        assert!(plan.predicted_for.as_deref().is_some_and(|m| m.contains("H100")), "the H100 profile on this machine is a prediction");
        assert!(plan.to_string().contains("a prediction for NVIDIA H100"), "{plan}");
        let on_gpu = plan.predicted.seconds();

        let mut cost = s.config().cost;
        let slow = cost.op_rate(bach_runtime::Family::Elementwise, bach_runtime::DeviceKind::Cuda).per_element * 1000.0;
        cost.set("elementwise.cuda.per_element", &slow.to_string()).unwrap();
        s.update_config(|c| c.cost = cost);
        let plan = s.plan_for(&[&y.lazy()], &devices()).unwrap();
        assert!(plan.steps.iter().all(|st| st.device == CPU), "{plan}");
        assert!(plan.predicted.copies_s == 0.0 && plan.predicted.seconds() > on_gpu, "{plan}");
        assert!(plan.step_of(y.lazy().id()).unwrap().reason.to_string().starts_with("optimal: cpu"), "{plan}");

        s.update_config(|c| c.cost = bach_runtime::CostModel::h100());
        assert_eq!(device_of(&s, &y), GPU);
    });
}

/// One cheap op between two host values is not worth its copies; the same op inside a long
/// chain on the accelerator is (the copy is paid once for the chain). `threshold` decides op
/// by op and keeps the first op of such a chain on the CPU when it alone does not pay for the
/// copy; `optimal` sees the chain.
#[test]
fn optimal_sees_a_chain_where_threshold_sees_one_op() {
    let s = Session::new();
    with_session(&s, || {
        s.update_config(|c| c.cost = bach_runtime::CostModel::h100());
        let op = gpu_op("step");
        let n = 1 << 20;
        let x = Array::from_array(nd(&[n], vec![0.5; n]));
        let one = call(&op, &[&x.lazy()]);
        assert_eq!(device_of(&s, &one), CPU, "one op does not pay for its copies");
        let mut y = one.clone();
        for _ in 0..39 {
            y = call(&op, &[&y.lazy()]);
        }
        let optimal = s.plan_for(&[&y.lazy()], &devices()).unwrap();
        assert!(optimal.steps.iter().all(|st| st.device == GPU), "{optimal}");
        s.update_config(|c| c.policy = Policy::Threshold);
        let threshold = s.plan_for(&[&y.lazy()], &devices()).unwrap();
        assert_eq!(threshold.step_of(one.lazy().id()).unwrap().device, CPU, "{threshold}");
        assert!(optimal.predicted.seconds() < threshold.predicted.seconds(), "optimal {} vs threshold {}", optimal.predicted.seconds(), threshold.predicted.seconds());
    });
}

/// `.on(Device::Gpu)` and `.on(Device::Cpu)` on a value, and `:bach cell` for a cell: plans
/// follow them and say so; an op that cannot run on the accelerator stays on the CPU and the
/// plan says why; the next cell is free again.
#[test]
fn values_and_cells_force_a_device_and_plans_say_so() {
    let s = Session::new();
    with_session(&s, || {
        let op = gpu_op("k");
        let x = Array::from_array(nd(&[16], vec![0.5; 16]));
        let small = call(&op, &[&x.lazy()]);
        assert_eq!(device_of(&s, &small), CPU, "16 elements are not worth a copy");
        let forced = call(&op, &[&x.lazy()]).on(Device::Gpu);
        let plan = s.plan_for(&[&forced.lazy()], &devices()).unwrap();
        let st = plan.step_of(forced.lazy().id()).unwrap();
        assert_eq!(st.device, GPU, "{plan}");
        assert_eq!(st.reason, "forced to the accelerator by .on(...)");
        assert_eq!(st.margin_s, None, "a forced op is not free to move");
        let closure = x.mapv_lazy(|v| v * 2.0).on(Device::Gpu);
        let st = s.plan_for(&[&closure.lazy()], &devices()).unwrap().step_of(closure.lazy().id()).unwrap().clone();
        assert_eq!(st.device, CPU);
        assert_eq!(st.reason, "a Rust closure runs on the CPU only", "the annotation's reason wins");
        let back = forced.clone().on(Device::Auto);
        assert_eq!(device_of(&s, &back), CPU);

        s.set_cell(7);
        s.force_cell(Some(true));
        let in_cell = call(&op, &[&x.lazy()]);
        let st = s.plan_for(&[&in_cell.lazy()], &devices()).unwrap().step_of(in_cell.lazy().id()).unwrap().clone();
        assert_eq!((st.device, st.reason.to_string().as_str()), (GPU, "forced to the accelerator by the cell"));
        let overridden = call(&op, &[&x.lazy()]).on(Device::Cpu);
        assert_eq!(s.plan_for(&[&overridden.lazy()], &devices()).unwrap().step_of(overridden.lazy().id()).unwrap().reason, "forced to the CPU by .on(...)");
        s.set_cell(8);
        let next = call(&op, &[&x.lazy()]);
        assert_eq!(device_of(&s, &next), CPU, "the next cell is free again");
        // Forced to the accelerator where there is none (this machine's own devices: the
        // CPU, unless a GPU is here): the plan says so.
        if s.devices().profiles().len() == 1 {
            let plan = s.plan(&[&in_cell.lazy()]).unwrap();
            assert_eq!(plan.step_of(in_cell.lazy().id()).unwrap().reason, "forced to the accelerator by the cell, but it cannot run there: on the CPU");
        }
        // Results are the same wherever they were computed.
        assert_eq!(in_cell.to_array().unwrap(), small.to_array().unwrap());
    });
}

/// Explain: a line per op with where it runs, both estimates, the copies, the margin and
/// the reason; paging in words; the predicted total.
#[test]
fn explain_gives_estimates_copies_margin_and_reason_per_op() {
    let s = Session::new();
    with_session(&s, || {
        s.update_config(|c| {
            c.cost = bach_runtime::CostModel::h100();
            c.memory_cap = Some(64 << 20);
        });
        let op = gpu_op("step");
        let n = 1 << 24;
        let x = Array::from_array(nd(&[n], vec![0.5; n]));
        let mut y = call(&op, &[&x.lazy()]);
        for _ in 0..9 {
            y = call(&op, &[&y.lazy()]);
        }
        let z = x.mapv_lazy(|v| v + 1.0);
        let plan = s.plan_for(&[&y.lazy(), &z.lazy()], &devices()).unwrap();
        let text = plan.explain();
        assert!(text.starts_with("policy optimal: predicted "), "{text}");
        assert!(text.contains("predictions for that machine"), "{text}");
        let line = |id: u64| text.lines().find(|l| l.starts_with(&format!("#{id} "))).unwrap_or_else(|| panic!("no line for #{id}:\n{text}")).to_string();
        let last = line(y.lazy().id());
        assert!(last.contains("accelerator") && last.contains("optimal: accelerator") && last.contains("paged in"), "{last}");
        assert!(last.contains('+'), "a positive margin: {last}");
        let closure = line(z.lazy().id());
        assert!(closure.contains("fixed") && closure.contains("a Rust closure runs on the CPU only"), "{closure}");
        // Under greedy the one op not worth its copies shows a negative margin.
        s.update_config(|c| c.policy = Policy::Greedy);
        let small = call(&op, &[&Array::from_array(nd(&[16], vec![0.5; 16])).lazy()]);
        let text = s.plan_for(&[&small.lazy()], &devices()).unwrap().explain();
        assert!(text.contains("moving it would save"), "{text}");
    });
}

/// A placeholder stands for a host array that is not here: it can be planned at any size,
/// and computing with it is an error that says so (the session goes on).
#[test]
fn a_placeholder_plans_like_a_host_array_and_refuses_to_compute() {
    let s = Session::new();
    with_session(&s, || {
        let op = gpu_op("k");
        let p = s.placeholder(bach_runtime::Meta::new(bach_runtime::DType::F64, [1usize << 33]), "huge");
        let y = call(&op, &[&p]);
        let plan = s.plan_for(&[&y.lazy()], &devices()).unwrap();
        assert_eq!(plan.transfers.iter().filter(|t| t.id == p.id()).count(), usize::from(plan.step_of(y.lazy().id()).unwrap().device == GPU), "{plan}");
        let e = y.to_array().unwrap_err().to_string();
        assert!(e.contains("placeholder for planning"), "{e}");
        let x = Array::from_array(nd(&[4], vec![1.0; 4]));
        assert_eq!(call(&op, &[&x.lazy()]).to_array().unwrap().iter().copied().collect::<Vec<_>>(), vec![3.0; 4]);
    });
}

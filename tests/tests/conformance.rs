//! The device conformance suite, part two: what every accelerator must do beyond computing
//! each op right (that is `ops_equivalence`, which runs on every accelerator too). Paging
//! with a memory cap smaller than the data, copies overlapping compute in the trace, values
//! kept on the device and reused without a copy, allocations created on the device, running
//! out of device memory, and a failing kernel. Runs on the emulated accelerator always and on
//! CUDA on a GPU host (`BACH_REQUIRE_CUDA=1` there makes a missing GPU a failure).

use std::sync::Arc;

use bach::prelude::*;
use bach_runtime::trace::{EvalTrace, EventKind};
use bach_runtime::{with_session, DeviceChoice, DeviceId, DeviceKind, Devices, Session, CPU};
use bach_tests::*;
use ndarray::ArrayD;

const ACCEL: DeviceId = DeviceId(1);

fn last_eval(s: &Session) -> EvalTrace {
    s.trace().last().expect("an evaluation ran").clone()
}

/// Relative tolerance for results computed on `s`'s accelerator: the emulated one runs the
/// CPU kernels (only sums may differ, by where pieces are cut); CUDA's math functions are
/// within a few ulp of the CPU's.
fn tol(s: &Session) -> f64 {
    match s.devices().profiles()[1].kind {
        DeviceKind::Emulated => 1e-15,
        _ => 1e-13,
    }
}

/// A chain of elementwise ops (one stage) and its eager ndarray version.
fn chain(x: &Array<f64>) -> Array<f64> {
    (((x * 2.0).exp() + 1.0).ln() - x).sqrt()
}
fn chain_eager(x: &ArrayD<f64>) -> ArrayD<f64> {
    x.mapv(|v| ((((v * 2.0).exp() + 1.0).ln()) - v).sqrt())
}

#[test]
fn a_stage_larger_than_the_memory_cap_pages_through_the_device() {
    for (name, s) in accelerator_sessions(64 << 20) {
        s.update_config(|c| c.memory_cap = Some(1 << 20));
        with_session(&s, || {
            let n = 1 << 20; // 8 MiB in, 8 MiB out: 16x the cap
            let xs = nd(&[n], uniform_vec(11, n, -3.0, 3.0));
            let x = Array::from_array(xs.clone());
            let y = chain(&x);
            let plan = y.plan().unwrap();
            let stage = &plan.stages[plan.step_of(y.lazy().id()).unwrap().stage];
            assert_eq!(stage.device, ACCEL, "{name}: the chain runs on the accelerator:\n{plan}");
            assert!(stage.paged && stage.pieces >= 16, "{name}: paged in many pieces:\n{plan}");
            assert_close(&name, &y.to_array().unwrap(), &chain_eager(&xs), tol(&s));
            let ev = last_eval(&s);
            let ins = ev.events.iter().filter(|e| e.kind == EventKind::Transfer && e.to.is_some_and(|d| d != CPU) && e.node == x.lazy().id()).count();
            let outs = ev.events.iter().filter(|e| e.kind == EventKind::Transfer && e.to == Some(CPU)).count();
            assert_eq!((ins, outs), (stage.pieces, stage.pieces), "{name}: one copy in and one out per piece");
            let moved_in: u64 = ev.events.iter().filter(|e| e.kind == EventKind::Transfer && e.to.is_some_and(|d| d != CPU) && e.node == x.lazy().id()).map(|e| e.bytes).sum();
            assert_eq!(moved_in, (n * 8) as u64, "{name}: every byte of x went in exactly once");
            assert!(!ev.plan_text().contains("out of memory"), "{name}: the plan fit the device:\n{}", ev.plan_text());
            if let Some(m) = s.devices().get(ACCEL).unwrap().memory() {
                if s.devices().profiles()[1].kind == DeviceKind::Emulated {
                    assert_eq!(m.used, 0, "{name}: every piece was freed");
                }
            }
        });
    }
}

#[test]
fn copies_overlap_compute_in_the_trace() {
    for (name, s) in accelerator_sessions(64 << 20) {
        let overlapping_workers = s.devices().profiles()[1].kind != DeviceKind::Emulated || s.devices().profiles()[1].threads > 1;
        if !overlapping_workers {
            eprintln!("{name}: one worker thread: nothing can overlap");
            continue;
        }
        if s.devices().profiles()[1].kind == DeviceKind::Cuda {
            // Measured on an H200 host: these small fused kernels and copies finish before
            // the host has filled the next piece's copy (the pipeline is host-bound), so no
            // lanes overlap on the GPU's clock. nvrtc.rs's
            // gpu_copies_overlap_a_long_kernel_of_another_piece checks the GPU's lanes with
            // a kernel long enough to be the slower side.
            eprintln!("{name}: the GPU's overlap is checked by nvrtc.rs with a long kernel");
            continue;
        }
        s.update_config(|c| c.memory_cap = Some(4 << 20));
        with_session(&s, || {
            let n = 1 << 21;
            let x = Array::from_array(nd(&[n], uniform_vec(12, n, 0.0, 1.0)));
            let y = chain(&x);
            y.eval().unwrap();
            let ev = last_eval(&s);
            // The accelerator's three lanes: copies in, compute, copies out. Pipelining shows
            // as a copy running while another lane works on another piece.
            let lane = |e: &&bach_runtime::trace::Event| match e.kind {
                EventKind::Transfer if e.to.is_some_and(|d| d != CPU) => Some(0),
                EventKind::Transfer => Some(2),
                EventKind::Compute if e.device != CPU => Some(1),
                _ => None,
            };
            let on_lanes: Vec<_> = ev.events.iter().filter_map(|e| lane(&e).map(|l| (l, e))).collect();
            let overlap =
                on_lanes.iter().any(|(la, a)| a.kind == EventKind::Transfer && on_lanes.iter().any(|(lb, b)| lb != la && b.piece != a.piece && a.start < b.end && b.start < a.end));
            let count = |l: usize| on_lanes.iter().filter(|(x, _)| *x == l).count();
            assert!(overlap, "{name}: no copy overlapped other work of another piece ({} copies in, {} kernels, {} copies out)", count(0), count(1), count(2));
        });
    }
}

#[test]
fn a_value_kept_on_the_device_is_reused_there_without_a_copy() {
    for (name, s) in accelerator_sessions(256 << 20) {
        with_session(&s, || {
            let n = 100_003;
            let xs = nd(&[n], uniform_vec(13, n, -1.0, 1.0));
            let x = Array::from_array(xs.clone());
            let y = &x * 3.0 + 1.0;
            assert_eq!(y.eval_on_device().unwrap(), ACCEL, "{name}");
            assert_eq!(y.lazy().location(), Some(ACCEL), "{name}");
            assert!(y.location().unwrap().contains(&s.devices().profiles()[1].name), "{name}");
            // A later "cell" reads it on the device: no copy of y.
            let z = (&y * &y).sqrt();
            let want = xs.mapv(|v| ((v * 3.0 + 1.0) * (v * 3.0 + 1.0)).sqrt());
            assert_close(&name, &z.to_array().unwrap(), &want, tol(&s));
            let ev = last_eval(&s);
            assert!(!ev.events.iter().any(|e| e.kind == EventKind::Transfer && e.node == y.lazy().id()), "{name}: y was copied although it is on the device:\n{}", ev.plan_text());
            // Reading it on the host copies it back, and it stays where it is.
            assert_close(&name, &y.to_array().unwrap(), &xs.mapv(|v| v * 3.0 + 1.0), tol(&s));
            assert_eq!(y.lazy().location(), Some(ACCEL), "{name}");
            // Used on the CPU (a closure): copied back once, before that stage.
            let m = y.mapv_lazy(|v| v - 1.0);
            assert_close(&name, &m.to_array().unwrap(), &xs.mapv(|v| v * 3.0), tol(&s));
            let ev = last_eval(&s);
            assert!(ev.events.iter().any(|e| e.kind == EventKind::Transfer && e.node == y.lazy().id() && e.to == Some(CPU)), "{name}:\n{}", ev.plan_text());
        });
    }
}

#[test]
fn an_allocation_whose_first_user_runs_on_the_device_is_made_there() {
    for (name, s) in accelerator_sessions(64 << 20) {
        with_session(&s, || {
            let n = 50_001;
            let xs = nd(&[n], uniform_vec(14, n, -1.0, 1.0));
            let x = Array::from_array(xs.clone());
            let twos: Array<f64> = Array::full(vec![n], 2.0);
            let y = &twos * &x;
            let plan = y.plan().unwrap();
            assert_eq!(plan.allocations.iter().find(|a| a.id == twos.lazy().id()).map(|a| a.device), Some(ACCEL), "{name}:\n{plan}");
            assert_close(&name, &y.to_array().unwrap(), &xs.mapv(|v| 2.0 * v), tol(&s));
            let ev = last_eval(&s);
            assert!(ev.events.iter().any(|e| e.kind == EventKind::Alloc && e.node == twos.lazy().id() && e.device != CPU), "{name}: made on the device");
            assert!(!ev.events.iter().any(|e| e.kind == EventKind::Transfer && e.node == twos.lazy().id()), "{name}: never copied");
        });
    }
}

/// The planner does not know what other values occupy; when a stage then does not fit, the
/// executor retries it in smaller pieces, and on the CPU when even that fails. The user sees
/// a result, and the trace says what happened. (Emulated only: its capacity is exact.)
#[test]
fn running_out_of_device_memory_means_smaller_pieces_then_the_cpu() {
    let s = Session::with_devices(Devices::select(DeviceChoice::Emulated(Some(4 << 20))).unwrap());
    s.update_config(|c| c.policy = bach_runtime::Policy::Greedy);
    let dev = s.devices().get(ACCEL).unwrap().clone();
    let occupy = |bytes: usize| {
        let host = bach_runtime::Value::from(ArrayD::<f64>::zeros(ndarray::IxDyn(&[bytes / 8])));
        dev.copy_in(host.view(), bach_runtime::Tag { node: 0, piece: 0 }).unwrap()
    };
    with_session(&s, || {
        // 3.5 MiB of the 4 MiB taken by someone else: the planner thinks the chain fits whole.
        let _held = occupy(7 << 19);
        let n = 1 << 15;
        let xs = nd(&[n], uniform_vec(16, n, -1.0, 1.0));
        let y = chain(&Array::from_array(xs.clone()));
        let plan = y.plan().unwrap();
        assert!(!plan.stages.iter().any(|st| st.paged), "the planner sees the whole capacity:\n{plan}");
        assert_close("after retries", &y.to_array().unwrap(), &chain_eager(&xs), 1e-15);
        let ev = last_eval(&s);
        assert!(ev.plan_text().contains("ran out of memory") && ev.plan_text().contains("retrying in"), "{}", ev.plan_text());
        // Each retry is a plan of its own in the trace, the planner's first, the one that ran last.
        assert!(ev.plans.len() > 1 && *ev.plans[0] == plan, "{} plan(s) recorded", ev.plans.len());
        assert!(ev.plan().unwrap().stages.iter().any(|st| st.paged && st.device == ACCEL), "the last plan ran the stage paged:\n{}", ev.plan_text());
        assert!(ev.events.iter().any(|e| e.kind == EventKind::Compute && e.device != CPU), "computed on the device in the end");

        // Now all but 16 bytes are taken: not even small pieces fit, so the stage runs on the CPU.
        let _held2 = occupy((1 << 19) - 16);
        let z = chain(&(Array::from_array(xs.clone()) * 0.5));
        assert_close("on the CPU", &z.to_array().unwrap(), &chain_eager(&xs.mapv(|v| v * 0.5)), 1e-15);
        let ev = last_eval(&s);
        assert!(ev.plan_text().contains("running the stage on the CPU"), "{}", ev.plan_text());
        assert!(ev.plan().unwrap().steps.iter().any(|st| st.op == "sqrt" && st.device == CPU), "the last plan says where it ran:\n{}", ev.plan_text());
        assert!(ev.events.iter().any(|e| e.kind == EventKind::Compute && e.device == CPU && e.op.as_ref() == "sqrt"), "computed on the CPU:\n{}", ev.plan_text());
    });
    assert_eq!(dev.memory().unwrap().used, 0, "everything was given back");
}

#[test]
fn a_failing_kernel_on_the_device_is_an_error_and_the_session_goes_on() {
    for (name, s) in accelerator_sessions(64 << 20) {
        if s.devices().profiles()[1].kind != DeviceKind::Emulated {
            continue; // a CUDA kernel cannot panic; CUDA errors are covered by the CUDA device's tests
        }
        with_session(&s, || {
            let bad = bach_runtime::oa("explodes").elementwise().accelerator("explodes", "/* emulated: the CPU kernel runs */").cpu(|_, _| panic!("kaboom")).build();
            let x = Array::from_array(nd(&[1000], uniform_vec(18, 1000, 0.0, 1.0)));
            let y: Array<f64> = Array::from_lazy(bad.call(&[&x.lazy()]).unwrap()).unwrap();
            let err = y.eval().unwrap_err().to_string();
            assert!(err.contains("explodes") && err.contains("kaboom") && err.contains("emulated"), "{name}: {err}");
            let fine = (&x + 1.0).sum_lazy().to_scalar().unwrap();
            assert!((fine - (exact_sum(x.to_array().unwrap().iter().copied()) + 1000.0)).abs() < 1e-9, "{name}");
        });
    }
}

#[test]
fn the_cpu_is_always_device_zero_and_emulated_says_it_is_not_a_gpu() {
    let d = Devices::select(DeviceChoice::Emulated(None)).unwrap();
    let p = d.profiles();
    assert_eq!((p[0].kind, p[1].kind), (DeviceKind::Cpu, DeviceKind::Emulated));
    assert!(p[1].name.contains("not a GPU"), "{}", p[1].name);
    assert!(d.report().contains("not a GPU"), "{}", d.report());
    assert!("emulated:64MiB".parse::<DeviceChoice>().unwrap() == DeviceChoice::Emulated(Some(64 << 20)));
    assert!("tpu".parse::<DeviceChoice>().is_err());
    let _unused: Option<Arc<Session>> = None;
}

/// The outputs of a stage run in pieces land in one host array each, row range by row range:
/// odd lengths, a last piece shorter than the others, 2-D rows, several dtypes; no merge runs.
#[test]
fn results_are_written_in_place_piece_by_piece() {
    for (name, s) in accelerator_sessions(64 << 20) {
        s.update_config(|c| c.memory_cap = Some(1 << 20));
        with_session(&s, || {
            let rows = 40_009; // prime: no piece size divides it
            let xs = nd(&[rows, 3], uniform_vec(21, rows * 3, -2.0, 2.0));
            let x = Array::from_array(xs.clone());
            let y = chain(&x.abs());
            let mask = y.gt(1.0);
            let narrow = y.cast::<f32>();
            bach::evaluate(&[&y, &mask, &narrow]).unwrap();
            let ev = last_eval(&s);
            assert!(ev.pieces > 4, "{name}: many pieces:\n{}", ev.plan_text());
            assert!(!ev.events.iter().any(|e| e.kind == EventKind::Merge), "{name}: row outputs need no merge:\n{}", ev.plan_text());
            let want = chain_eager(&xs.mapv(f64::abs));
            let got = y.to_array().unwrap();
            assert_close(&name, &got, &want, tol(&s));
            assert_eq!(mask.to_array().unwrap(), got.mapv(|v| v > 1.0), "{name}: the bool output");
            assert_eq!(narrow.to_array().unwrap(), got.mapv(|v| v as f32), "{name}: the f32 output");
        });
    }
}

/// The same on the CPU alone: pieces sized for the cache write their rows in parallel.
#[test]
fn cpu_results_are_written_in_place_piece_by_piece() {
    let s = Session::with_devices(Devices::select(DeviceChoice::Cpu).unwrap());
    // Small arrays too go through the plan and its pieces here (not run at once).
    s.update_config(|c| {
        c.cost.planner.cpu_piece_bytes = 1000;
        c.eager_max_elements = 0;
    });
    with_session(&s, || {
        for rows in [1usize, 2, 41, 1000, 10_007] {
            let xs = nd(&[rows, 2], uniform_vec(rows as u64, rows * 2, 0.0, 3.0));
            let x = Array::from_array(xs.clone());
            let y = chain(&x);
            let mask = y.lt(0.5);
            bach::evaluate(&[&y, &mask]).unwrap();
            let ev = last_eval(&s);
            assert!(!ev.events.iter().any(|e| e.kind == EventKind::Merge), "rows {rows}: no merge:\n{}", ev.plan_text());
            let got = y.to_array().unwrap();
            assert_close("cpu", &got, &chain_eager(&xs), 1e-15);
            assert_eq!(mask.to_array().unwrap(), got.mapv(|v| v < 0.5), "rows {rows}: the bool output");
            if rows >= 1000 {
                assert!(ev.pieces > 1, "rows {rows}: cut into pieces:\n{}", ev.plan_text());
            }
        }
    });
}

/// Reductions of arrays of 3 and 4 axes run on the accelerator along any axis (whole, axis 0
/// and the last axis as a matrix, a middle axis as lanes), in pieces of axis 0, and give the
/// CPU's values.
#[test]
fn reductions_of_more_axes_run_on_the_accelerator_along_any_axis() {
    for (name, s) in accelerator_sessions(64 << 20) {
        with_session(&s, || {
            let shape = [64usize, 24, 16, 9];
            let n: usize = shape.iter().product();
            let xs = nd(&shape, uniform_vec(23, n, -2.0, 2.0));
            let x = Array::from_array(xs.clone());
            let whole = x.sum_lazy();
            let plan = whole.plan().unwrap();
            assert_eq!(plan.stages[plan.step_of(whole.lazy().id()).unwrap().stage].device, ACCEL, "{name}: the whole sum runs on the accelerator:\n{plan}");
            let want = xs.sum();
            let got = whole.to_scalar().unwrap();
            assert!((got - want).abs() <= 1e-12 * want.abs().max(1.0) * n as f64, "{name}: sum {got} against {want}");
            for (axis, &len) in shape.iter().enumerate() {
                let r = x.sum_axis(Axis(axis));
                let plan = r.plan().unwrap();
                assert_eq!(plan.stages[plan.step_of(r.lazy().id()).unwrap().stage].device, ACCEL, "{name}: sum_axis({axis}) runs on the accelerator:\n{plan}");
                assert_close_scaled(&format!("{name}: sum_axis({axis})"), &r.to_array().unwrap(), &xs.sum_axis(Axis(axis)), 1e-13, 2.0 * len as f64);
                let m = x.max_axis(Axis(axis));
                assert_eq!(m.to_array().unwrap(), xs.fold_axis(Axis(axis), f64::NEG_INFINITY, |a, &b| a.max(b)), "{name}: max_axis({axis})");
            }
            // A 3-d middle axis after elementwise work, in one plan.
            let c = Array::from_array(nd(&[40, 33, 50], uniform_vec(5, 40 * 33 * 50, 0.0, 1.0)));
            let got = (&c * 2.0).min_axis(Axis(1)).to_array().unwrap();
            let want = (&c.to_array().unwrap() * 2.0).fold_axis(Axis(1), f64::INFINITY, |a, &b| a.min(b));
            assert_eq!(got, want, "{name}: min over a middle axis");
        });
    }
}

/// A broadcast the accelerator's elementwise kernels cannot index (an argument varying over
/// axes that are not one run of the result's, e.g. `[a, 1, c]` under `[a, b, c]`) is planned
/// on the CPU, saying why, and gives ndarray's values; one that is a run goes to the
/// accelerator.
#[test]
fn broadcasts_the_kernels_cannot_index_stay_on_the_cpu() {
    for (name, s) in accelerator_sessions(64 << 20) {
        with_session(&s, || {
            let xs = nd(&[30, 40, 50], uniform_vec(3, 30 * 40 * 50, 0.0, 1.0));
            let x = Array::from_array(xs.clone());
            let means = x.mean_axis(Axis(1)).unwrap().insert_axis(Axis(1));
            let centred = &x - &means;
            let plan = centred.plan().unwrap();
            let step = plan.step_of(centred.lazy().id()).unwrap();
            assert_eq!(plan.stages[step.stage].device, CPU, "{name}: [30, 1, 50] under [30, 40, 50] runs on the CPU:\n{plan}");
            assert!(step.reason.to_string().contains("not one contiguous run"), "{name}: {}", step.reason);
            let want = &xs - &xs.mean_axis(Axis(1)).unwrap().insert_axis(Axis(1));
            assert_close_scaled(&name, &centred.to_array().unwrap(), &want, 1e-13, 1.0);
            let rows = &x * &Array::from_array(nd(&[40, 50], uniform_vec(4, 2000, 1.0, 2.0)));
            let plan = rows.plan().unwrap();
            assert_eq!(plan.stages[plan.step_of(rows.lazy().id()).unwrap().stage].device, ACCEL, "{name}: trailing axes broadcast on the accelerator:\n{plan}");
        });
    }
}

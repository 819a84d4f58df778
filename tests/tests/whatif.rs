//! What-if plans and predicted timelines: a changed parameter or another machine's profile
//! re-plans a pending value without running it; the predicted trace adds up to its stages.

use bach::prelude::*;
use bach_runtime::{with_session, CostModel, Session, CPU};

/// exp, sin, cos and exp over 2^22 values, reduced: on a hypothetical H100 with the H100
/// profile the GPU wins (one exp alone is about even with its piece's 0.3 ms);
/// with copies made 1000x slower the same value stays on the CPU. Nothing is evaluated.
#[test]
fn a_whatif_re_plans_without_running_and_says_what_moves() {
    let s = Session::new();
    with_session(&s, || {
        s.update_config(|c| c.cost = CostModel::h100());
        let x = Array::from_array(ndarray::Array1::linspace(0.0, 1.0, 1 << 22));
        let y = (&x * 2.0 + 1.0).exp().sin().cos().exp().sum_lazy();
        let w = bach::whatif(&y, &[("transfer.h2d.bandwidth", "17MB/s"), ("transfer.d2h.bandwidth", "15MB/s")]).unwrap();
        assert!(w.current.steps.iter().any(|st| st.device != CPU), "{}", w.current);
        assert!(w.changed.steps.iter().all(|st| st.device == CPU), "{}", w.changed);
        let text = w.to_string();
        assert!(text.contains("what if transfer.h2d.bandwidth = 17MB/s, transfer.d2h.bandwidth = 15MB/s (a prediction: nothing ran)"), "{text}");
        assert!(text.contains("op(s) move:") && text.contains("-> cpu"), "{text}");
        assert_eq!(s.trace().evals().count(), 0, "a what-if runs nothing");
        assert!(!y.is_evaluated());
        assert_eq!(s.config().cost, CostModel::h100(), "the session's own model is unchanged");

        let (a, b) = w.traces();
        assert_eq!(a.end, b.end, "one time scale for both");
        for t in [&a, &b] {
            let stages: f64 = t.stages.iter().map(|st| st.predicted_s).sum();
            assert!((stages - t.stages.last().unwrap().end.as_secs_f64()).abs() < 1e-9);
            assert!(t.events.iter().all(|e| e.end >= e.start && e.end.as_secs_f64() <= stages + 1e-9));
        }
        assert!(a.events.iter().any(|e| e.kind == bach_runtime::trace::EventKind::Transfer), "the GPU plan copies");
        let (now, changed) = w.charts();
        assert!(now.contains("Predicted") && now.contains("current model"), "{}", &now[..now.len().min(400)]);
        assert!(changed.contains("what if transfer.h2d.bandwidth"));

        let bad = bach::whatif(&y, &[("elementwise.tpu.per_call", "1")]).unwrap_err().to_string();
        assert!(bad.contains("cuda, emulated"), "{bad}");
    });
}

/// Another machine's profile: the shipped H100 one, or a file written by the bench or by
/// `CostModel::save`; a missing file says what profiles there are.
#[test]
fn a_whatif_under_a_profile_file_or_the_h100_profile() {
    let s = Session::new();
    with_session(&s, || {
        let x = Array::from_array(ndarray::Array1::linspace(0.0, 1.0, 1 << 20));
        let y = (&x * 3.0).sin();
        let w = bach::whatif_profile(&y, "h100").unwrap();
        assert!(w.changed.predicted_for.as_deref().is_some_and(|m| m.contains("H100")), "{}", w.changed);
        let path = std::env::temp_dir().join(format!("bach-whatif-{}.json", std::process::id()));
        let mut slow = CostModel::h100();
        // 10 us an element of weight 1 (a sine weighs 0.46-1.75 of that, by the kernel this
        // processor runs).
        slow.set("math.cpu.per_element", "1e-5").unwrap();
        slow.save(&path).unwrap();
        let w = bach::whatif_profile(&y, path.to_str().unwrap()).unwrap();
        let sin = w.changed.step_of(y.lazy().id()).unwrap();
        assert!(sin.device != bach_runtime::CPU && sin.cpu_s > 1.0, "2^20 sines at 4.6 us or more each on the CPU: the GPU takes them: {}", w.changed);
        assert!(w.to_string().contains("measured on NVIDIA H100"), "{w}");
        let _ = std::fs::remove_file(&path);
        let e = bach::whatif_profile(&y, "/nonexistent/profile.json").unwrap_err().to_string();
        assert!(e.contains("cannot read cost profile") && e.contains("h100, default"), "{e}");
        assert_eq!(s.trace().evals().count(), 0);
    });
}

/// With the emulated accelerator (the tour's kernel), "what if this ran on an H100" plans for
/// that machine: the CPU and a hypothetical H100, not the emulated device priced by the H100
/// profile (whose emulated rows are a CPU's, so nothing ever moved). A changed parameter
/// keeps the session's devices.
#[test]
fn a_profile_whatif_with_the_emulated_accelerator_plans_for_the_profiles_gpu() {
    let devices = bach_runtime::Devices::select(bach_runtime::DeviceChoice::Emulated(None)).unwrap();
    let s = Session::with_devices(devices);
    with_session(&s, || {
        let w = Array::<f64, _>::linspace(0.0, 1.0, 1 << 24);
        let fresh = ((&w * 2.0).sin() + (&w * 0.5).cos()).sqrt();
        let what = bach::whatif_profile(&fresh, "h100").unwrap();
        assert!(what.current.devices.iter().any(|d| d.kind == bach_runtime::DeviceKind::Emulated), "{}", what.current);
        assert!(what.changed.devices.iter().all(|d| d.kind != bach_runtime::DeviceKind::Emulated), "{}", what.changed);
        assert!(what.changed.devices.iter().any(|d| d.kind == bach_runtime::DeviceKind::Cuda && d.name.contains("H100")), "{}", what.changed);
        assert!(what.changed.steps.iter().any(|st| st.device != CPU), "2^24 sines and cosines go to the H100:\n{}", what.changed);
        assert!(what.to_string().contains("NVIDIA H100"), "{what}");
        let setting = bach::whatif(&fresh, &[("math.emulated.per_element", "1e-12")]).unwrap();
        assert!(setting.changed.devices.iter().any(|d| d.kind == bach_runtime::DeviceKind::Emulated), "{}", setting.changed);
        assert_eq!(s.trace().evals().count(), 0);
    });
}

/// Every evaluation records per stage what the model predicted beside what it took.
#[test]
fn evaluations_record_predicted_and_actual_per_stage() {
    let s = Session::new();
    with_session(&s, || {
        let x = Array::from_array(ndarray::Array1::linspace(0.0, 1.0, 1 << 16));
        let y = (&x * 2.0).exp();
        let m = y.sum_lazy();
        m.eval().unwrap();
        let t = s.trace();
        let e = t.last().unwrap();
        assert!(!e.stages.is_empty());
        for st in &e.stages {
            assert!(st.predicted_s > 0.0 && st.actual_s() > 0.0 && st.start >= e.start && st.end <= e.end, "{st:?}");
        }
        assert!(e.stages.iter().any(|st| st.ops.iter().any(|o| o == "exp")), "{:?}", e.stages);
        assert!((e.predicted_s() - e.stages.iter().map(|s| s.predicted_s).sum::<f64>()).abs() < 1e-15);
    });
}

/// DBSCAN at the size of its GPU target (2^14 points x 256): under the H100 profile, the
/// neighbourhoods (a cross product) are planned on the GPU and their bits come back for the
/// labelling, which stays on the host and says why. Nothing is evaluated.
#[test]
fn on_an_h100_dbscan_neighbourhoods_go_to_the_gpu_and_the_labelling_stays_home() {
    let s = Session::new();
    with_session(&s, || {
        let x = Array::from_array(ndarray::Array2::<f64>::zeros((1 << 14, 256)));
        let labels = bach::ml::Dbscan::params(16.0, 4).fit_predict(&x).unwrap();
        let w = bach::whatif_profile(&labels, "h100").unwrap();
        let step = |op: &str| w.changed.steps.iter().find(|st| st.op == op).unwrap_or_else(|| panic!("no {op} in {}", w.changed));
        let radius = step("radius_neighbours");
        assert!(radius.device != CPU && radius.accelerator_s < radius.cpu_s / 10.0, "{}", w.changed);
        let walk = step("dbscan_labels");
        assert!(walk.device == CPU && walk.accelerator_s.is_infinite(), "{}", w.changed);
        assert!(w.changed.to_string().contains("on the host"), "{}", w.changed);
        assert_eq!(s.trace().evals().count(), 0);
    });
}

/// TruncatedSvd at the size of its GPU target (2^18 x 512, 1 GiB): under the H100 profile X
/// goes to the GPU once for `X^T X`, and `X V` reads that copy rather than streaming X again.
#[test]
fn on_an_h100_tsvd_copies_its_gigabyte_in_once() {
    let s = Session::new();
    with_session(&s, || {
        let x = Array::from_array(ndarray::Array2::<f64>::zeros((1 << 18, 512)));
        let (_, t) = bach::ml::TruncatedSvd::params(2).fit_transform(&x).unwrap();
        let w = bach::whatif_profile(&t, "h100").unwrap();
        let gram = w.changed.steps.iter().find(|st| st.op == "gram").unwrap();
        assert!(gram.device != CPU, "{}", w.changed);
        let x_in: Vec<_> = w.changed.transfers.iter().filter(|t| t.id == x.lazy().id() && t.to != CPU).collect();
        assert_eq!(x_in.len(), 1, "{}", w.changed);
        assert_eq!(s.trace().evals().count(), 0);
    });
}

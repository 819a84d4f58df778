//! Several accelerators in one session (#49): a set of devices from `BACH_DEVICE`, split
//! stages spread data-parallel over them with results equal to one device's, a timeline lane
//! per device, and the planner's prediction for four GPUs against one. The device
//! conformance suite and every op against ndarray run on 1, 2 and 4 emulated accelerators
//! too (`accelerator_sessions`).

use bach::prelude::*;
use bach_runtime::trace::EventKind;
use bach_runtime::{with_session, DeviceChoice, DeviceId, Devices, Policy, Session, CPU};
use bach_tests::*;
use std::collections::BTreeSet;

#[test]
fn device_lists_are_read_from_bach_device() {
    let parse = |s: &str| s.parse::<DeviceChoice>();
    assert_eq!(parse("emulated:4"), Ok(DeviceChoice::EmulatedSet { count: 4, memory: None }));
    assert_eq!(parse("emulated:2:64MiB"), Ok(DeviceChoice::EmulatedSet { count: 2, memory: Some(64 << 20) }));
    assert_eq!(parse("emulated:64MiB"), Ok(DeviceChoice::Emulated(Some(64 << 20))), "a size alone is one accelerator's memory");
    assert_eq!(parse("cuda:0,cuda:0"), Ok(DeviceChoice::CudaSet(vec![0, 0])));
    assert_eq!(parse("cuda:1"), Ok(DeviceChoice::CudaSet(vec![1])));
    assert_eq!(parse("cuda:all"), Ok(DeviceChoice::Cuda));
    for bad in ["emulated:0", "emulated:99", "cuda:x", "cuda:0,tpu", "emulated:2:lots"] {
        assert!(parse(bad).is_err(), "{bad} was accepted");
    }
    let d = Devices::select(DeviceChoice::EmulatedSet { count: 4, memory: Some(1 << 20) }).unwrap();
    let ids: Vec<u8> = d.profiles().iter().map(|p| p.id.0).collect();
    assert_eq!(ids, [0, 1, 2, 3, 4], "the CPU, then each accelerator numbered in turn");
    assert_eq!(d.accelerators().count(), 4);
    assert!(d.report().contains("4 accelerators are emulated") && d.report().contains("not GPUs"), "{}", d.report());
    for a in d.accelerators() {
        assert_eq!(a.memory().unwrap().capacity, 1 << 20, "each has a memory of its own");
    }
}

fn session(count: usize) -> std::sync::Arc<Session> {
    let s = Session::with_devices(Devices::select(DeviceChoice::EmulatedSet { count, memory: Some(256 << 20) }).unwrap());
    s.update_config(|c| c.policy = Policy::Greedy);
    s
}

fn black_scholes(price: &Array1<f64>, strike: &Array1<f64>, t: &Array1<f64>, rate: &Array1<f64>, vol: &Array1<f64>) -> (Array1<f64>, Array1<f64>) {
    let invsqrt2 = 1.0 / 2f64.sqrt();
    let rsig = &(vol * vol) * BS_C05 + rate;
    let vol_sqrt = &t.sqrt() * vol;
    let d1 = (&(price / strike).log2() + &(&rsig * t)) / &vol_sqrt;
    let d2 = &d1 - &vol_sqrt;
    let big_d1 = BS_C05 + BS_C05 * (&d1 * invsqrt2).erf();
    let big_d2 = BS_C05 + BS_C05 * (&d2 * invsqrt2).erf();
    let e_rt = (&(-rate) * t).exp();
    let call = &(price * &big_d1) - &(&(&e_rt * strike) * &big_d2);
    let put = &(&(&e_rt * strike) * &(BS_C10 - &big_d2)) - &(price * &(BS_C10 - &big_d1));
    (call, put)
}

fn haversine(lat2: &Array1<f64>, lon2: &Array1<f64>) -> Array1<f64> {
    let lat1_cos = HAV_LAT1.cos();
    let dlat = ((lat2 - HAV_LAT1) / 2.0).sin().powi(2);
    let dlon = ((lon2 - HAV_LON1) / 2.0).sin().powi(2);
    let a = &dlat + &(&(&lat2.cos() * lat1_cos) * &dlon);
    &(2.0 * a.sqrt().asin()) * HAV_MILES
}

fn col(seed: u64, n: usize, lo: f64, hi: f64) -> ndarray::Array1<f64> {
    ndarray::Array1::from(uniform_vec(seed, n, lo, hi))
}

/// Black-Scholes and Haversine on `count` emulated accelerators: the values, and the devices
/// each computing event ran on.
fn workloads_on(count: usize, n: usize) -> (Vec<ndarray::ArrayD<f64>>, BTreeSet<DeviceId>, String) {
    let s = session(count);
    with_session(&s, || {
        let cols: Vec<Array1<f64>> =
            [(1, 10.0, 50.0), (2, 10.0, 50.0), (3, 1.0, 2.0), (4, 0.01, 0.05), (5, 0.1, 0.5)].iter().map(|&(seed, lo, hi)| Array1::from_array(col(seed, n, lo, hi))).collect();
        let (call, put) = black_scholes(&cols[0], &cols[1], &cols[2], &cols[3], &cols[4]);
        let (lat, lon) = (Array1::from_array(col(6, n, 0.4, 0.9)), Array1::from_array(col(7, n, 1.0, 1.5)));
        let dist = haversine(&lat, &lon);
        let plan = call.plan().unwrap().to_string();
        bach::evaluate(&[&call, &put]).unwrap();
        let mut ran: BTreeSet<DeviceId> = s.trace().last().unwrap().events.iter().filter(|e| e.kind == EventKind::Compute).map(|e| e.device).collect();
        dist.eval().unwrap();
        ran.extend(s.trace().last().unwrap().events.iter().filter(|e| e.kind == EventKind::Compute).map(|e| e.device));
        let values = vec![call.to_array().unwrap().into_dyn(), put.to_array().unwrap().into_dyn(), dist.to_array().unwrap().into_dyn()];
        (values, ran, plan)
    })
}

#[test]
fn black_scholes_and_haversine_spread_over_four_accelerators_equal_one_devices_results() {
    let n = (1 << 18) + 7; // a last piece shorter than the others
    let (one, ran1, _) = workloads_on(1, n);
    assert_eq!(ran1, BTreeSet::from([DeviceId(1)]), "one accelerator computes everything");
    for count in [2usize, 4] {
        let (many, ran, plan) = workloads_on(count, n);
        let want: BTreeSet<DeviceId> = (1..=count as u8).map(DeviceId).collect();
        assert_eq!(ran, want, "every one of {count} accelerators computed:\n{plan}");
        assert!(plan.contains(&format!("spread over devices {}", (1..=count).map(|d| d.to_string()).collect::<Vec<_>>().join(", "))), "{plan}");
        for (what, (a, b)) in ["call", "put", "haversine"].iter().zip(one.iter().zip(&many)) {
            assert_exact(&format!("{what} on {count} accelerators against one"), b, a);
        }
    }
    // And against plain Rust over ndarray.
    let (call, put) = black_scholes_eager(&col(1, n, 10.0, 50.0), &col(2, n, 10.0, 50.0), &col(3, n, 1.0, 2.0), &col(4, n, 0.01, 0.05), &col(5, n, 0.1, 0.5));
    assert_close("call", &one[0], &call.into_dyn(), 1e-12);
    assert_close("put", &one[1], &put.into_dyn(), 1e-12);
    assert_close("haversine", &one[2], &haversine_eager(&col(6, n, 0.4, 0.9), &col(7, n, 1.0, 1.5)).into_dyn(), 1e-12);
}

#[test]
fn a_reduction_spread_over_accelerators_merges_its_partials_on_the_host() {
    let n = 300_001;
    let xs = col(8, n, -1.0, 1.0);
    let sums: Vec<f64> = [1usize, 4]
        .iter()
        .map(|&count| {
            let s = session(count);
            s.update_config(|c| c.cost.planner.accelerator_piece_bytes = 64 << 10);
            with_session(&s, || {
                let x = Array1::from_array(xs.clone());
                let total = (&x * 2.0).sum_lazy();
                let v = total.to_array().unwrap().into_iter().next().unwrap();
                let ran: BTreeSet<DeviceId> = s.trace().last().unwrap().events.iter().filter(|e| e.kind == EventKind::Compute && e.device != CPU).map(|e| e.device).collect();
                assert_eq!(ran.len(), count, "{count} accelerator(s) computed partial sums");
                v
            })
        })
        .collect();
    assert_eq!(sums[0].to_bits(), sums[1].to_bits(), "the same pieces, merged in the same order");
    assert!(close(sums[0], 2.0 * exact_sum(xs.iter().copied()), 1e-12, 2.0 * abs_sum(xs.iter().copied())));
}

#[test]
fn a_value_kept_on_one_accelerator_is_read_there_not_spread() {
    let s = session(4);
    with_session(&s, || {
        let n = 100_000;
        let x = Array1::from_array(col(9, n, 0.0, 1.0));
        let y = &x * 3.0;
        assert_eq!(y.eval_on_device().unwrap(), DeviceId(1));
        let z = (&y + 1.0).sqrt();
        let plan = z.plan().unwrap();
        assert!(plan.stages.iter().all(|st| st.shards.is_empty()), "owner computes:\n{plan}");
        assert!(plan.notes.iter().any(|n| n.contains("owner computes")), "{plan}");
        assert_close("z", &z.to_array().unwrap().into_dyn(), &col(9, n, 0.0, 1.0).mapv(|v| (v * 3.0 + 1.0).sqrt()).into_dyn(), 1e-15);
    });
}

#[test]
fn the_timeline_has_a_lane_per_accelerator_and_per_copy_link() {
    let s = session(4);
    with_session(&s, || {
        let n = 1 << 16;
        let x = Array1::from_array(col(10, n, 0.0, 1.0));
        (&x.exp() + 1.0).ln().eval().unwrap();
        let svg = bach_runtime::chart::timeline_svg(s.trace().last().unwrap(), &s.devices().profiles());
        for d in 1..=4 {
            assert!(svg.contains(&format!("emulated {d} compute")), "no lane for accelerator {d}");
            assert!(svg.contains(&format!("host→emulated {d}")), "no lane for the copies into accelerator {d}");
            assert!(svg.contains(&format!("emulated {d}→host")), "no lane for the copies out of accelerator {d}");
        }
    });
}

#[test]
fn four_h100s_are_predicted_at_most_0_3x_one_for_black_scholes_and_haversine() {
    let s = session(1);
    with_session(&s, || {
        let n = 1 << 24;
        // Lazy inputs (nothing is made: only planned).
        let cols: Vec<Array1<f64>> = (0..5).map(|k| Array1::<f64>::linspace(1.0 + k as f64, 2.0 + k as f64, n)).collect();
        let (call, _put) = black_scholes(&cols[0], &cols[1], &cols[2], &cols[3], &cols[4]);
        let dist = haversine(&cols[0], &cols[1]);
        for (what, v) in [("black-scholes", &call), ("haversine", &dist)] {
            let w = bach::whatif_profile(v, "h100:4").unwrap();
            let (one, four) = (w.current.predicted.seconds(), w.changed.predicted.seconds());
            assert_eq!(w.changed.devices.len(), 5, "{w}");
            eprintln!("{what} 2^24 on the H100 profile: one GPU {one:.5} s, four {four:.5} s ({:.2}x)", four / one);
            assert!(four <= 0.3 * one, "{what}: four H100s {four} s against one {one} s:\n{w}");
        }
    });
}

#[test]
fn a_value_asked_for_one_accelerator_runs_there_alone() {
    let s = session(4);
    with_session(&s, || {
        let n = 200_000;
        let xs = col(11, n, 0.0, 1.0);
        let y = (&Array1::from_array(xs.clone()) * 2.0).exp().on(Device::gpu(3));
        let plan = y.plan().unwrap();
        let stage = &plan.stages[plan.step_of(y.lazy().id()).unwrap().stage];
        assert_eq!((stage.device, stage.shards.len()), (DeviceId(3), 0), "{plan}");
        assert!(y.explain().unwrap().0.contains("forced to device 3 by .on(...)"), "{}", y.explain().unwrap());
        assert_close("y", &y.to_array().unwrap().into_dyn(), &xs.mapv(|v| (v * 2.0).exp()).into_dyn(), 1e-15);
        let ran: BTreeSet<DeviceId> = s.trace().last().unwrap().events.iter().filter(|e| e.kind == EventKind::Compute && e.op.as_ref() == "exp").map(|e| e.device).collect();
        assert_eq!(ran, BTreeSet::from([DeviceId(3)]));

        // A number the session does not have: the CPU, and the plan says why.
        let z = (&Array1::from_array(xs.clone()) * 4.0).exp().on(Device::gpu(9));
        let plan = z.plan().unwrap();
        assert_eq!(plan.step_of(z.lazy().id()).unwrap().device, CPU, "{plan}");
        assert!(z.explain().unwrap().0.contains("forced to device 9 by .on(...), but it cannot run there"), "{}", z.explain().unwrap());
        assert_close("z", &z.to_array().unwrap().into_dyn(), &xs.mapv(|v| (v * 4.0).exp()).into_dyn(), 1e-15);

        // A cell asking for accelerator 2.
        s.force_cell_device(DeviceId(2));
        let w = (&Array1::from_array(xs.clone()) + 1.0).sqrt();
        assert_eq!(w.plan().unwrap().step_of(w.lazy().id()).unwrap().device, DeviceId(2));
        s.force_cell(None);
    });
}

/// `x^T x` in plain loops, independent of ndarray and Bach.
fn gram(x: &ndarray::Array2<f64>) -> ndarray::Array2<f64> {
    let (n, d) = x.dim();
    let mut g = ndarray::Array2::<f64>::zeros((d, d));
    for r in 0..n {
        for i in 0..d {
            for j in 0..d {
                g[[i, j]] += x[[r, i]] * x[[r, j]];
            }
        }
    }
    g
}

fn table(seed: u64, n: usize, d: usize) -> ndarray::Array2<f64> {
    ndarray::Array2::from_shape_vec((n, d), uniform_vec(seed, n * d, -1.0, 1.0)).unwrap()
}

#[test]
fn independent_whole_ops_are_scheduled_on_different_accelerators_and_run_at_once() {
    let s = session(2);
    with_session(&s, || {
        let (x, y) = (table(21, 4000, 48), table(22, 3000, 48));
        // Two Gram matrices (whole-value ops: not cut into pieces), then their sum.
        let (gx, gy) = (bach::ml::gram(&Array2::from_array(x.clone()).into_dyn()).unwrap(), bach::ml::gram(&Array2::from_array(y.clone()).into_dyn()).unwrap());
        let sum = &gx + &gy;
        let plan = sum.plan().unwrap();
        let on = |v: &ArrayD<f64>| plan.step_of(v.lazy().id()).unwrap().device;
        assert_eq!(BTreeSet::from([on(&gx), on(&gy)]), BTreeSet::from([DeviceId(1), DeviceId(2)]), "two products, two accelerators:\n{plan}");
        assert!(plan.notes.iter().any(|n| n.contains("finishes first there")), "the plan says why:\n{plan}");
        assert!(plan.waves().iter().any(|w| w.len() == 2), "they start at once:\n{plan}");
        let explained = sum.explain().unwrap().0;
        eprintln!("{plan}\n{explained}");
        assert!(explained.contains("earliest finish"), "{explained}");
        let want = &gram(&x) + &gram(&y);
        assert_close("gx + gy", &sum.to_array().unwrap().into_dyn(), &want.into_dyn(), 1e-12);
        let ran: BTreeSet<DeviceId> = s.trace().last().unwrap().events.iter().filter(|e| e.kind == EventKind::Compute && e.op.as_ref() == "gram").map(|e| e.device).collect();
        assert_eq!(ran, BTreeSet::from([DeviceId(1), DeviceId(2)]));
        // The sum reads the other Gram matrix straight from its accelerator (emulated ones
        // copy between their memories), not through the host.
        let (made, read) = (on(&gy), on(&sum));
        assert_ne!(made, read, "{plan}");
        assert!(plan.transfers.iter().any(|t| t.id == gy.lazy().id() && t.from == made && t.to == read), "a peer copy:\n{plan}");
        assert!(!plan.transfers.iter().any(|t| t.id == gy.lazy().id() && t.to == CPU), "not home first:\n{plan}");
        let peer: Vec<(DeviceId, Option<DeviceId>)> =
            s.trace().last().unwrap().events.iter().filter(|e| e.kind == EventKind::Transfer && e.node == gy.lazy().id()).map(|e| (e.device, e.to)).collect();
        assert_eq!(peer, [(made, Some(read))], "one copy, device to device");

        // A chain stays where its values are: the copy between accelerators costs more than
        // waiting for the device.
        let gxx = bach::ml::gram(&bach::ml::gram(&Array2::from_array(x.clone()).into_dyn()).unwrap()).unwrap();
        let plan = gxx.plan().unwrap();
        let devices: BTreeSet<DeviceId> = plan.steps.iter().filter(|st| st.op == "gram").map(|st| st.device).collect();
        assert_eq!(devices.len(), 1, "a chain on one accelerator:\n{plan}");
        assert_close("gram(gram(x))", &gxx.to_array().unwrap().into_dyn(), &gram(&gram(&x)).into_dyn(), 1e-12);
    });
}

#[test]
fn one_accelerator_plans_are_not_rescheduled() {
    let s = session(1);
    with_session(&s, || {
        let (gx, gy) = (bach::ml::gram(&Array2::from_array(table(31, 500, 16)).into_dyn()).unwrap(), bach::ml::gram(&Array2::from_array(table(32, 500, 16)).into_dyn()).unwrap());
        let plan = (&gx + &gy).plan().unwrap();
        assert!(plan.stages.iter().all(|st| st.slot.is_none()), "{plan}");
        assert!(plan.waves().iter().all(|w| w.len() == 1), "{plan}");
    });
}

#[test]
fn four_h100s_run_four_independent_eigenproblems_in_about_a_quarter_of_one() {
    let s = session(1);
    with_session(&s, || {
        // Four symmetric eigenproblems of 2048 x 2048 (lazy inputs: only planned), summed.
        let d = 2048;
        let values: Vec<ArrayD<f64>> = (0..4)
            .map(|k| {
                let m = Array1::<f64>::linspace(k as f64, k as f64 + 1.0, d * d).into_shape_with_order((d, d)).unwrap().into_dyn();
                bach::ml::symmetric_eigen(&m).unwrap()
            })
            .collect();
        let total = &(&values[0] + &values[1]) + &(&values[2] + &values[3]);
        let w = bach::whatif_profile(&total, "h100:4").unwrap();
        let (one, four) = (w.current.predicted.seconds(), w.changed.predicted.seconds());
        let devices: BTreeSet<DeviceId> = w.changed.steps.iter().filter(|st| st.op == "symmetric_eigen").map(|st| st.device).collect();
        eprintln!("four eigenproblems of 2048 on the H100 profile: one GPU {one:.4} s, four {four:.4} s ({:.2}x)", four / one);
        assert_eq!(devices.len(), 4, "one eigenproblem per GPU:\n{}", w.changed);
        assert!(four <= 0.35 * one, "four H100s {four} s against one {one} s:\n{w}");
    });
}

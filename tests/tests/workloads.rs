//! Black-Scholes and Haversine written with bach from the formulas of workloads.md: the
//! reference values on the reference (constant) inputs, and agreement with an independent
//! eager implementation on random inputs. Plus the dependency-order bug of the original
//! runtime (a write reordered after a read), which constant inputs hide.

use bach::prelude::*;
use bach_runtime::{with_session, Session};
use bach_tests::*;
use ndarray::Array1 as Nd1;

const N: usize = (1 << 16) + 3;
const CALL_REF: f64 = 23.999997299155808;
const PUT_REF: f64 = 17.999997974366856;
const HAV_REF: f64 = 4839.959830633562;

/// Black-Scholes with bach, the formulas of workloads.md exactly.
fn black_scholes(price: &Array1<f64>, strike: &Array1<f64>, t: &Array1<f64>, rate: &Array1<f64>, vol: &Array1<f64>) -> (Array1<f64>, Array1<f64>) {
    let c05 = BS_C05;
    let c10 = BS_C10;
    let invsqrt2 = 1.0 / 2f64.sqrt();
    let rsig = &(vol * vol) * c05 + rate;
    let vol_sqrt = &t.sqrt() * vol;
    let d1 = (&(price / strike).log2() + &(&rsig * t)) / &vol_sqrt;
    let d2 = &d1 - &vol_sqrt;
    let big_d1 = c05 + c05 * (&d1 * invsqrt2).erf();
    let big_d2 = c05 + c05 * (&d2 * invsqrt2).erf();
    let e_rt = (&(-rate) * t).exp();
    let call = &(price * &big_d1) - &(&(&e_rt * strike) * &big_d2);
    let put = &(&(&e_rt * strike) * &(c10 - &big_d2)) - &(price * &(c10 - &big_d1));
    (call, put)
}

/// The same computation written as the original benchmark did, reusing a few variables
/// ("out=" buffers): every statement rebinds a name, and later statements read both old and
/// new bindings. A runtime that orders a write after a read gets this wrong.
fn black_scholes_reusing_names(price: &Array1<f64>, strike: &Array1<f64>, t: &Array1<f64>, rate: &Array1<f64>, vol: &Array1<f64>) -> (Array1<f64>, Array1<f64>) {
    let invsqrt2 = 1.0 / 2f64.sqrt();
    let mut tmp = vol * vol; // tmp = vol*vol
    tmp = &tmp * BS_C05; // tmp = vol*vol*c05
    let rsig = &tmp + rate;
    let mut vol_sqrt = t.sqrt();
    vol_sqrt = &vol_sqrt * vol;
    tmp = &rsig * t; // tmp now rsig*t (the old tmp is still read by rsig)
    let mut d1 = price / strike;
    d1 = d1.log2();
    d1 = &d1 + &tmp;
    d1 = &d1 / &vol_sqrt;
    let mut d2 = &d1 - &vol_sqrt;
    d1 = &d1 * invsqrt2;
    d1 = d1.erf();
    d1 = &d1 * BS_C05;
    d1 = BS_C05 + &d1; // D1
    d2 = &d2 * invsqrt2;
    d2 = d2.erf();
    d2 = &d2 * BS_C05;
    d2 = BS_C05 + &d2; // D2
    tmp = -rate;
    tmp = &tmp * t;
    tmp = tmp.exp(); // e_rt
    let mut call = price * &d1;
    let mut put = &tmp * strike;
    let ek = put.clone();
    put = &put * &(BS_C10 - &d2);
    tmp = &ek * &d2;
    call = &call - &tmp;
    tmp = BS_C10 - &d1;
    tmp = price * &tmp;
    put = &put - &tmp;
    (call, put)
}

/// Haversine with bach, the formulas of workloads.md exactly.
fn haversine(lat2: &Array1<f64>, lon2: &Array1<f64>) -> Array1<f64> {
    let lat1_cos = HAV_LAT1.cos(); // on the host
    let dlat = ((lat2 - HAV_LAT1) / 2.0).sin().powi(2);
    let dlon = ((lon2 - HAV_LON1) / 2.0).sin().powi(2);
    let a = &dlat + &(&(&lat2.cos() * lat1_cos) * &dlon);
    &(2.0 * a.sqrt().asin()) * HAV_MILES
}

/// Run `f` at the default piece size (global session), with small pieces, and in one piece.
fn each_piece_size(f: impl Fn(&str)) {
    f("global session");
    for bytes in [4096usize, usize::MAX / 2] {
        let s = Session::new();
        s.update_config(|c| c.cost.planner.cpu_piece_bytes = bytes);
        with_session(&s, || f(&format!("{bytes}-byte pieces")));
    }
}

#[track_caller]
fn all_equal(what: &str, got: &Array1<f64>, want: f64) {
    let v = got.to_array().unwrap();
    assert_eq!(v.shape(), &[N], "{what}");
    let bad: Vec<(usize, f64)> = v.iter().copied().enumerate().filter(|&(_, x)| !close(x, want, 1e-12, 0.0)).take(3).collect();
    assert!(bad.is_empty(), "{what}: elements differ from {want}: {bad:?} ...");
}

#[test]
fn black_scholes_reference_values() {
    each_piece_size(|ctx| {
        // Inputs as lazy allocations (as the benchmark creates them), and as host arrays.
        let lazy_fill = || Array::full(N, 4.0);
        let host = || Array::from_array(Nd1::from_elem(N, 4.0));
        for (how, make) in [("full", &lazy_fill as &dyn Fn() -> Array1<f64>), ("from_array", &host)] {
            let (price, strike, t, rate, vol) = (make(), make(), make(), make(), make());
            let (call, put) = black_scholes(&price, &strike, &t, &rate, &vol);
            bach::evaluate(&[&call, &put]).unwrap();
            all_equal(&format!("call, {how} inputs ({ctx})"), &call, CALL_REF);
            all_equal(&format!("put, {how} inputs ({ctx})"), &put, PUT_REF);
            let (call, put) = black_scholes_reusing_names(&price, &strike, &t, &rate, &vol);
            all_equal(&format!("call, names reused, {how} inputs ({ctx})"), &call, CALL_REF);
            all_equal(&format!("put, names reused, {how} inputs ({ctx})"), &put, PUT_REF);
        }
    });
}

#[test]
fn haversine_reference_value() {
    each_piece_size(|ctx| {
        let lat2 = Array::full(N, 0.0698132);
        let lon2 = Array::full(N, 0.0698132);
        all_equal(&format!("haversine, full inputs ({ctx})"), &haversine(&lat2, &lon2), HAV_REF);
        let lat2 = Array::from_array(Nd1::from_elem(N, 0.0698132));
        all_equal(&format!("haversine, host inputs ({ctx})"), &haversine(&lat2, &lat2), HAV_REF);
    });
}

struct BsInputs {
    price: Nd1<f64>,
    strike: Nd1<f64>,
    t: Nd1<f64>,
    rate: Nd1<f64>,
    vol: Nd1<f64>,
}

fn bs_inputs(seed: u64, n: usize) -> BsInputs {
    let mut rng = Lcg::new(seed);
    BsInputs {
        price: Nd1::from(rng.vec(n, 10.0, 50.0)),
        strike: Nd1::from(rng.vec(n, 10.0, 50.0)),
        t: Nd1::from(rng.vec(n, 1.0, 2.0)),
        rate: Nd1::from(rng.vec(n, 0.01, 0.05)),
        vol: Nd1::from(rng.vec(n, 0.1, 0.5)),
    }
}

#[track_caller]
fn agree(what: &str, got: &Array1<f64>, want: &Nd1<f64>) {
    assert_close(what, &got.to_array().unwrap(), &want.clone().into_dyn(), 1e-12);
}

#[test]
fn black_scholes_random_inputs() {
    each_piece_size(|ctx| {
        for (seed, n) in [(1u64, N), (2, 1), (3, 0), (4, 1000)] {
            let i = bs_inputs(seed, n);
            let (want_call, want_put) = black_scholes_eager(&i.price, &i.strike, &i.t, &i.rate, &i.vol);
            let l = |a: &Nd1<f64>| Array::from_array(a.clone());
            let (price, strike, t, rate, vol) = (l(&i.price), l(&i.strike), l(&i.t), l(&i.rate), l(&i.vol));
            let (call, put) = black_scholes(&price, &strike, &t, &rate, &vol);
            // Evaluated one after the other: the second reuses nothing stale.
            agree(&format!("call n={n} seed {seed} ({ctx})"), &call, &want_call);
            agree(&format!("put n={n} seed {seed} ({ctx})"), &put, &want_put);
            let (call, put) = black_scholes_reusing_names(&price, &strike, &t, &rate, &vol);
            bach::evaluate(&[&put, &call]).unwrap();
            agree(&format!("call, names reused, n={n} ({ctx})"), &call, &want_call);
            agree(&format!("put, names reused, n={n} ({ctx})"), &put, &want_put);
        }
        // Inputs drawn by bach's own lazy random allocations, as the notebook does.
        let price = Array::random_uniform(N, 10.0, 50.0, 11);
        let strike = Array::random_uniform(N, 10.0, 50.0, 12);
        let t = Array::random_uniform(N, 1.0, 2.0, 13);
        let rate = Array::random_uniform(N, 0.01, 0.05, 14);
        let vol = Array::random_uniform(N, 0.1, 0.5, 15);
        let (call, put) = black_scholes(&price, &strike, &t, &rate, &vol);
        bach::evaluate(&[&call, &put]).unwrap();
        let h = |a: &Array1<f64>| a.to_array1().unwrap();
        let (want_call, want_put) = black_scholes_eager(&h(&price), &h(&strike), &h(&t), &h(&rate), &h(&vol));
        agree(&format!("call, random_uniform inputs ({ctx})"), &call, &want_call);
        agree(&format!("put, random_uniform inputs ({ctx})"), &put, &want_put);
        assert!(call.to_array().unwrap().iter().all(|v| v.is_finite()), "finite call prices ({ctx})");
    });
}

#[test]
fn haversine_random_inputs() {
    use std::f64::consts::PI;
    each_piece_size(|ctx| {
        for (seed, n) in [(21u64, N), (22, 1), (23, 0), (24, 4097)] {
            let mut rng = Lcg::new(seed);
            let lat2 = Nd1::from(rng.vec(n, -PI / 2.0, PI / 2.0));
            let lon2 = Nd1::from(rng.vec(n, -PI, PI));
            let want = haversine_eager(&lat2, &lon2);
            let got = haversine(&Array::from_array(lat2.clone()), &Array::from_array(lon2.clone()));
            agree(&format!("haversine n={n} seed {seed} ({ctx})"), &got, &want);
            // Distances are within half the earth's circumference.
            let g = got.to_array().unwrap();
            assert!(g.iter().all(|&d| (0.0..=PI * HAV_MILES + 1e-9).contains(&d)), "range ({ctx})");
        }
        let lat2 = Array::random_uniform(N, -PI / 2.0, PI / 2.0, 31);
        let lon2 = Array::random_uniform(N, -PI, PI, 32);
        let got = haversine(&lat2, &lon2);
        agree(&format!("haversine, random_uniform inputs ({ctx})"), &got, &haversine_eager(&lat2.to_array1().unwrap(), &lon2.to_array1().unwrap()));
    });
}

// ---------------------------------------------------------------------------------------------
// Dependency order
// ---------------------------------------------------------------------------------------------

fn data(seed: u64) -> Nd1<f64> {
    Nd1::from(uniform_vec(seed, N, -1.0, 1.0))
}

#[test]
fn reassignment_does_not_change_earlier_reads() {
    each_piece_size(|ctx| {
        let v = data(40);
        // b read a; then a is "overwritten": b must still see the old a.
        for order in ["b after reassignment", "a2 first", "together b, a2", "together a2, b"] {
            let a = Array::from_array(v.clone());
            let b = &a * 2.0;
            let a2 = &a + 1.0;
            drop(a);
            match order {
                "b after reassignment" => {}
                "a2 first" => {
                    a2.eval().unwrap();
                }
                "together b, a2" => bach::evaluate(&[&b, &a2]).unwrap(),
                _ => bach::evaluate(&[&a2, &b]).unwrap(),
            }
            agree(&format!("b, {order} ({ctx})"), &b, &v.mapv(|x| x * 2.0));
            agree(&format!("a2, {order} ({ctx})"), &a2, &v.mapv(|x| x + 1.0));
        }
        // Shadowing, as a notebook writes it.
        let a = Array::from_array(v.clone());
        let b = a.sqrt().abs();
        #[allow(clippy::redundant_locals)]
        let a = &a + 1.0;
        let c = &b - &a; // reads the new a and the b of the old a
        bach::evaluate(&[&c, &b, &a]).unwrap();
        agree(&format!("shadowed b ({ctx})"), &b, &v.mapv(|x| x.sqrt().abs()));
        agree(&format!("shadowed a ({ctx})"), &a, &v.mapv(|x| x + 1.0));
        agree(&format!("c = b - a ({ctx})"), &c, &v.mapv(|x| x.sqrt().abs() - (x + 1.0)));
    });
}

#[test]
fn loop_of_reassignments_keeps_every_snapshot() {
    each_piece_size(|ctx| {
        let v = data(41);
        let mut acc = Array::from_array(v.clone());
        let mut snapshots = Vec::new();
        for _ in 0..12 {
            snapshots.push(&acc * 1.0); // a read of the current acc
            acc = &acc + 1.0; // then the "write"
        }
        // Evaluate everything at once, newest first, so that a scheduler that ran writes
        // early would be caught.
        let mut targets: Vec<&dyn bach::AsLazy> = vec![&acc];
        targets.extend(snapshots.iter().rev().map(|s| s as &dyn bach::AsLazy));
        bach::evaluate(&targets).unwrap();
        for (k, s) in snapshots.iter().enumerate() {
            let want = v.mapv(|x| (0..k).fold(x, |a, _| a + 1.0));
            agree(&format!("snapshot {k} ({ctx})"), s, &want);
        }
        agree(&format!("final acc ({ctx})"), &acc, &v.mapv(|x| (0..12).fold(x, |a, _| a + 1.0)));

        // Interleaved evaluation: evaluate some snapshots mid-loop, keep mutating.
        let mut acc = Array::from_array(v.clone());
        let mut seen = Vec::new();
        for k in 0..8 {
            let snap = &acc * 2.0;
            if k % 3 == 0 {
                snap.eval().unwrap();
            }
            seen.push(snap);
            acc = &(&acc * 0.5) + 1.0;
        }
        let mut want = v.clone();
        for (k, s) in seen.iter().enumerate() {
            agree(&format!("interleaved snapshot {k} ({ctx})"), s, &want.mapv(|x| x * 2.0));
            want = want.mapv(|x| x * 0.5 + 1.0);
        }
        agree(&format!("interleaved final ({ctx})"), &acc, &want);
    });
}

#[test]
fn a_value_read_by_a_reduction_and_rewritten() {
    // The crime-index pattern: a value is read by a reduction and rewritten by where_ in
    // the same notebook cell; the reduction sees the value before the rewrite.
    each_piece_size(|ctx| {
        let v = data(42);
        let ci = Array::from_array(v.clone());
        let before = ci.sum_lazy();
        let ci2 = where_(&ci.gt(0.02), 0.032, &ci);
        let ci3 = where_(&ci2.lt(0.01), 0.005, &ci2);
        let after = ci3.sum_lazy();
        bach::evaluate(&[&after, &before]).unwrap();
        let want_before = exact_sum(v.iter().copied());
        let w3: Vec<f64> = v.iter().map(|&x| if x > 0.02 { 0.032 } else { x }).map(|x| if x < 0.01 { 0.005 } else { x }).collect();
        assert!((before.to_scalar().unwrap() - want_before).abs() <= 1e-12 * abs_sum(v.iter().copied()), "before ({ctx})");
        assert!((after.to_scalar().unwrap() - exact_sum(w3.iter().copied())).abs() <= 1e-12 * abs_sum(w3.iter().copied()), "after ({ctx})");
    });
}

//! Property tests: running in pieces gives what running whole gives, for any size and any
//! piece size; and the row split type's split/merge and `piece_ranges` are exact.

use std::sync::Arc;

use bach::prelude::*;
use bach_runtime::split;
use bach_runtime::trace::EventKind;
use bach_runtime::{piece_ranges, with_session, Session, Value};
use bach_tests::*;
use ndarray::{ArrayD, Axis as NdAxis, IxDyn, Zip};
use proptest::prelude::*;

/// A session whose CPU pieces hold at most `bytes` of the widest value.
fn session_with_pieces(bytes: usize) -> Arc<Session> {
    let s = Session::new();
    // Every op through the plan and its pieces, small arrays too (not run at once).
    s.update_config(|c| {
        c.cost.planner.cpu_piece_bytes = bytes;
        c.eager_max_elements = 0;
    });
    s
}

/// Everything the chain computes, evaluated.
struct Outputs {
    z: ArrayD<f64>,
    w: ArrayD<f64>,
    centred: ArrayD<f64>,
    sum: f64,
    sum0: Option<ArrayD<f64>>,
    sum1: Option<ArrayD<f64>>,
    min: Option<f64>,
    max: Option<f64>,
    /// Compute events of the first op of the chain, and the pieces of its stage in the plan.
    first_op_events: usize,
    first_op_stage_pieces: usize,
}

/// The chain, in bach, in `session`.
fn run_chain(session: &Arc<Session>, x: &ArrayD<f64>, y: &ArrayD<f64>) -> Outputs {
    with_session(session, || {
        let (lx, ly) = (Array::from_array(x.clone()), Array::from_array(y.clone()));
        let a = &lx * 1.5;
        let z = ((&a + &ly).abs().sqrt() - &lx / 3.0).maximum(&ly);
        let w = where_(&z.gt(0.25), &z, (&lx * &ly).exp());
        let sum = w.sum_lazy();
        // A second stage that needs the merged reduction.
        let centred = &w - &sum;
        let two_d = x.ndim() == 2;
        let sum0 = two_d.then(|| w.sum_axis(Axis(0)));
        let sum1 = two_d.then(|| w.sum_axis(Axis(1)));
        let min = (!x.is_empty()).then(|| z.min_lazy().unwrap().into_dyn());
        let max = (!x.is_empty()).then(|| w.max_lazy().unwrap().into_dyn());

        let plan = bach_runtime::Session::plan(session, &[&z.lazy(), &w.lazy(), &centred.lazy(), &sum.lazy()]).unwrap();
        let stage = plan.step_of(a.lazy().id()).expect("a is planned").stage;
        let first_op_stage_pieces = plan.stages[stage].pieces;

        let mut targets: Vec<&dyn bach::AsLazy> = vec![&z, &w, &centred, &sum];
        for o in [&sum0, &sum1, &min, &max].into_iter().flatten() {
            targets.push(o);
        }
        bach::evaluate(&targets).unwrap();
        let trace = session.trace();
        let first_op_events = trace.last().unwrap().events.iter().filter(|e| e.node == a.lazy().id() && e.kind == EventKind::Compute).count();
        drop(trace);
        let ev = |v: &Array<f64>| v.to_array().unwrap();
        Outputs {
            z: ev(&z),
            w: ev(&w),
            centred: ev(&centred),
            sum: sum.to_scalar().unwrap(),
            sum0: sum0.as_ref().map(ev),
            sum1: sum1.as_ref().map(ev),
            min: min.map(|m| m.to_scalar().unwrap()),
            max: max.map(|m| m.to_scalar().unwrap()),
            first_op_events,
            first_op_stage_pieces,
        }
    })
}

/// The chain in plain ndarray.
fn eager_chain(x: &ArrayD<f64>, y: &ArrayD<f64>) -> (ArrayD<f64>, ArrayD<f64>) {
    let z = Zip::from(x).and(y).map_collect(|&a, &b| {
        let v = (a * 1.5 + b).abs().sqrt() - a / 3.0;
        if v.is_nan() || b.is_nan() {
            f64::NAN
        } else if v > b {
            v
        } else {
            b
        }
    });
    let w = Zip::from(&z).and(x).and(y).map_collect(|&z, &a, &b| if z > 0.25 { z } else { (a * b).exp() });
    (z, w)
}

fn check_sum(what: &str, got: f64, xs: impl Iterator<Item = f64> + Clone) -> Result<(), TestCaseError> {
    let want = exact_sum(xs.clone());
    let scale = abs_sum(xs);
    prop_assert!((got - want).abs() <= 1e-12 * scale.max(1e-300), "{}: got {}, want {}", what, got, want);
    Ok(())
}

fn check_exact(what: &str, got: &ArrayD<f64>, want: &ArrayD<f64>) -> Result<(), TestCaseError> {
    prop_assert_eq!(got.shape(), want.shape(), "{}: shape", what);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        prop_assert!(g.to_bits() == w.to_bits() || (g.is_nan() && w.is_nan()), "{}: element {}: {} vs {}", what, i, g, w);
    }
    Ok(())
}

/// Proptest settings: a fixed seed so that runs are reproducible (set PROPTEST_RNG_SEED to
/// explore others), and no regression files written into the source tree.
fn config(cases: u32) -> ProptestConfig {
    let seed = std::env::var("PROPTEST_RNG_SEED").ok().and_then(|s| s.parse().ok()).unwrap_or(0xBAC4_2020);
    ProptestConfig { cases, failure_persistence: None, rng_seed: proptest::test_runner::RngSeed::Fixed(seed), ..ProptestConfig::default() }
}

proptest! {
    #![proptest_config(config(128))]

    /// Any size, any piece size: pieces give the whole-array result (elementwise bit for bit,
    /// sums up to rounding), and both give plain ndarray's.
    #[test]
    fn piecewise_equals_whole(rows in 0usize..5000, cols in 0usize..4, piece_bytes in prop_oneof![8usize..64, 64usize..2048, 2048usize..100_000], seed in any::<u64>()) {
        let shape: Vec<usize> = if cols == 0 { vec![rows] } else { vec![rows, cols] };
        let n: usize = shape.iter().product();
        let x = nd(&shape, uniform_vec(seed, n, -2.0, 2.0));
        let y = nd(&shape, uniform_vec(seed ^ 0xABCD, n, -2.0, 2.0));

        let small = run_chain(&session_with_pieces(piece_bytes), &x, &y);
        let whole = run_chain(&session_with_pieces(usize::MAX / 2), &x, &y);
        let (z, w) = eager_chain(&x, &y);

        // The whole run is one piece; the small one as many as the piece size asks for.
        prop_assert_eq!(whole.first_op_stage_pieces, 1);
        prop_assert_eq!(whole.first_op_events, 1);
        let row_bytes = 8 * cols.max(1);
        let max_rows = (piece_bytes / row_bytes).max(1);
        prop_assert!(small.first_op_stage_pieces >= rows.div_ceil(max_rows).max(1),
            "{} pieces for {} rows of {} bytes in {}-byte pieces", small.first_op_stage_pieces, rows, row_bytes, piece_bytes);
        prop_assert_eq!(small.first_op_events, small.first_op_stage_pieces, "one compute event per piece");

        for (name, got_small, got_whole, want) in [("z", &small.z, &whole.z, &z), ("w", &small.w, &whole.w, &w)] {
            check_exact(&format!("{name} pieces vs whole"), got_small, got_whole)?;
            check_exact(&format!("{name} vs ndarray"), got_whole, want)?;
        }
        check_sum("sum (pieces)", small.sum, w.iter().copied())?;
        check_sum("sum (whole)", whole.sum, w.iter().copied())?;
        // w - sum(w): exact given the sum each run computed.
        check_exact("centred (pieces)", &small.centred, &w.mapv(|v| v - small.sum))?;
        check_exact("centred (whole)", &whole.centred, &w.mapv(|v| v - whole.sum))?;
        if cols > 0 {
            let (s0, s1) = (small.sum0.as_ref().unwrap(), small.sum1.as_ref().unwrap());
            let (h0, h1) = (whole.sum0.as_ref().unwrap(), whole.sum1.as_ref().unwrap());
            prop_assert_eq!(s0.shape(), &[cols]);
            prop_assert_eq!(h1.shape(), &[rows]);
            for j in 0..cols {
                let col = w.index_axis(NdAxis(1), j);
                check_sum(&format!("sum_axis0 col {j} (pieces)"), s0[[j]], col.iter().copied())?;
                check_sum(&format!("sum_axis0 col {j} (whole)"), h0[[j]], col.iter().copied())?;
            }
            // Row sums are computed within a row: the same in every piece layout.
            prop_assert_eq!(s1.shape(), &[rows]);
            check_exact("sum_axis1 pieces vs whole", s1, h1)?;
            for i in 0..rows {
                check_sum(&format!("sum_axis1 row {i}"), s1[[i]], w.index_axis(NdAxis(0), i).iter().copied())?;
            }
        }
        if n > 0 {
            let zmin = z.iter().copied().fold(f64::INFINITY, f64::min);
            let wmax = w.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            prop_assert_eq!(small.min, Some(zmin));
            prop_assert_eq!(whole.min, Some(zmin));
            prop_assert_eq!(small.max, Some(wmax));
            prop_assert_eq!(whole.max, Some(wmax));
        }
    }

    /// Products split along their inner axis (vector . matrix) or the left rows (matrix .
    /// vector) give the whole result for any piece size.
    #[test]
    fn products_piecewise(k in 0usize..3000, m in 1usize..5, piece_bytes in prop_oneof![8usize..64, 64usize..10_000], seed in any::<u64>()) {
        let a = nd(&[k], uniform_vec(seed, k, -1.0, 1.0));
        let b = nd(&[k, m], uniform_vec(seed + 1, k * m, -1.0, 1.0));
        let run = |bytes: usize| with_session(&session_with_pieces(bytes), || {
            let (la, lb) = (Array::from_array(a.clone()), Array::from_array(b.clone()));
            let vm = (&la * 2.0).dot(&(&lb - 0.5)).to_array().unwrap();
            let mv = (&lb - 0.5).dot(&Array::from_vec(vec![1.0; m])).to_array().unwrap();
            let vv = la.dot(&la).to_scalar().unwrap();
            (vm, mv, vv)
        });
        let (vm, mv, vv) = run(piece_bytes);
        let (wvm, wmv, wvv) = run(usize::MAX / 2);
        for j in 0..m {
            let terms: Vec<f64> = (0..k).map(|i| (a[[i]] * 2.0) * (b[[i, j]] - 0.5)).collect();
            check_sum(&format!("vecmat col {j} (pieces)"), vm[[j]], terms.iter().copied())?;
            check_sum(&format!("vecmat col {j} (whole)"), wvm[[j]], terms.iter().copied())?;
        }
        // matrix . vector: each row's product is computed within its piece, bit for bit.
        check_exact("matvec pieces vs whole", &mv, &wmv)?;
        for i in 0..k {
            let terms: Vec<f64> = (0..m).map(|j| b[[i, j]] - 0.5).collect();
            check_sum(&format!("matvec row {i}"), mv[[i]], terms.iter().copied())?;
        }
        check_sum("dot (pieces)", vv, a.iter().map(|v| v * v))?;
        check_sum("dot (whole)", wvv, a.iter().map(|v| v * v))?;
    }

    /// Splitting a value into arbitrary row ranges and merging the pieces gives it back.
    #[test]
    fn rows_split_merge_roundtrip(rows in 0usize..300, cols in 0usize..4, cuts in proptest::collection::vec(0usize..=300, 0..12), dtype in 0u8..3, seed in any::<u64>()) {
        let shape: Vec<usize> = if cols == 0 { vec![rows] } else { vec![rows, cols] };
        let n: usize = shape.iter().product();
        let data = uniform_vec(seed, n, -1.0, 1.0);
        let value = match dtype {
            0 => Value::from(nd(&shape, data)),
            1 => Value::from(to_f32(&nd(&shape, data))),
            _ => Value::from(nd(&shape, data).mapv(|v| v > 0.0)),
        };
        // Cut points in 0..=rows, sorted, duplicates allowed (empty pieces).
        let mut points: Vec<usize> = cuts.into_iter().map(|c| c % (rows + 1)).collect();
        points.push(0);
        points.push(rows);
        points.sort();
        let ranges: Vec<_> = points.windows(2).map(|w| w[0]..w[1]).collect();
        let r = split::rows();
        prop_assert_eq!(r.size(&value.meta()), Some(rows));
        let pieces: Vec<Value> = ranges
            .iter()
            .map(|range| r.split(value.view(), range.clone()).unwrap().to_value())
            .collect();
        for (p, range) in pieces.iter().zip(&ranges) {
            let mut want = shape.clone();
            want[0] = range.len();
            prop_assert_eq!(&p.meta().shape, &want);
        }
        let merged = r.merge(pieces).unwrap();
        prop_assert_eq!(merged.meta(), value.meta());
        match (&merged, &value) {
            (Value::F64(a), Value::F64(b)) => prop_assert!(a.iter().zip(b.iter()).all(|(x, y)| x.to_bits() == y.to_bits())),
            (Value::F32(a), Value::F32(b)) => prop_assert!(a.iter().zip(b.iter()).all(|(x, y)| x.to_bits() == y.to_bits())),
            (Value::Bool(a), Value::Bool(b)) => prop_assert_eq!(a, b),
            _ => prop_assert!(false, "dtype changed in the round trip"),
        }
        // Out-of-range pieces are errors, not panics.
        prop_assert!(r.split(value.view(), 0..rows + 1).is_err());
    }

    /// `piece_ranges` covers 0..len exactly once, in order, with pieces of the asked size.
    #[test]
    fn piece_ranges_cover_exactly_once(len in 0usize..100_000, piece_rows in 0usize..5000) {
        let ranges = piece_ranges(len, piece_rows);
        let step = piece_rows.max(1);
        if len == 0 {
            prop_assert_eq!(ranges, vec![0..0]);
            return Ok(());
        }
        prop_assert_eq!(ranges.len(), len.div_ceil(step));
        let mut next = 0;
        for (i, r) in ranges.iter().enumerate() {
            prop_assert_eq!(r.start, next, "piece {} starts where the last ended", i);
            prop_assert!(!r.is_empty() && r.len() <= step);
            if i + 1 < ranges.len() {
                prop_assert_eq!(r.len(), step, "only the last piece is short");
            }
            next = r.end;
        }
        prop_assert_eq!(next, len);
    }
}

#[test]
fn split_edge_values() {
    let r = split::rows();
    // Empty and one-row values, 1-d and 2-d.
    for shape in [vec![0], vec![1], vec![0, 3], vec![1, 3], vec![3, 0]] {
        let n: usize = shape.iter().product();
        let v = Value::from(nd(&shape, (0..n).map(|i| i as f64).collect()));
        let rows = shape[0];
        let pieces: Vec<Value> = piece_ranges(rows, 1).into_iter().map(|rg| r.split(v.view(), rg).unwrap().to_value()).collect();
        let back = r.merge(pieces).unwrap();
        assert_eq!(back.array::<f64>().unwrap(), v.array::<f64>().unwrap(), "{shape:?}");
    }
    // A 0-d value has no rows: not split by rows, an error when asked to.
    let s = Value::from(ArrayD::from_elem(IxDyn(&[]), 1.0f64));
    assert_eq!(r.size(&s.meta()), None);
    assert!(r.split(s.view(), 0..1).is_err());
    assert!(r.merge(vec![]).is_err());
    // Broadcast hands the whole value to every piece; unsplittable refuses several pieces.
    let v = Value::from(ArrayD::from_elem(IxDyn(&[5]), 2.0f64));
    let b = split::broadcast();
    assert_eq!(b.split(v.view(), 1..2).unwrap().meta().shape, vec![5]);
    assert!(!b.splittable());
    let u = split::unsplittable();
    assert!(u.merge(vec![v.clone()]).is_ok());
    assert!(u.merge(vec![v.clone(), v.clone()]).is_err());
    // Merging pieces of different dtypes is an error, not a panic.
    let w = Value::from(ArrayD::from_elem(IxDyn(&[5]), 2.0f32));
    assert!(r.merge(vec![v, w]).is_err());
}

#[test]
fn evaluation_at_piece_size_one_row() {
    // Every piece one row: the extreme of the property above, on a 2-d chain with a
    // broadcast row operand, a column operand and a 0-d scalar.
    let s = session_with_pieces(1);
    with_session(&s, || {
        let x = nd(&[257, 3], uniform_vec(5, 771, -1.0, 1.0));
        let row = nd(&[3], vec![1.0, 2.0, 3.0]);
        let col = nd(&[257, 1], uniform_vec(6, 257, 0.0, 1.0));
        let lx = Array::from_array(x.clone());
        let y = (&(&lx * &Array::from_array(row.clone())) + &Array::from_array(col.clone())) * 0.5;
        let plan = y.plan().unwrap();
        assert!(plan.total_pieces() >= 257, "{plan}");
        let got = y.to_array().unwrap();
        let want = (&(&x * &row) + &col) * 0.5;
        assert_exact("one-row pieces", &got, &want);
    });
}

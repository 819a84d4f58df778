//! Every op of the bach library against plain ndarray computing the same thing eagerly, in
//! f64 and f32, 1-D and 2-D, on seeded random inputs (with IEEE special values spliced in),
//! at sizes cut into many pieces and at the edge sizes 0 and 1. Each check runs twice: in the
//! process-wide session (default piece size) and in an isolated session with tiny pieces.

use bach::prelude::*;
use bach::Real;
use bach_runtime::{with_session, Session};
use bach_tests::*;
use ndarray::{ArrayD, IxDyn, Zip};

/// Element types under test, with their tolerance for math functions and reductions.
trait E: Real + TestFloat + ndarray_npy::WritableElement + ndarray_npy::ReadableElement {
    const TOL: f64;
    fn ref_erf(self) -> Self;
}
impl E for f64 {
    const TOL: f64 = 1e-12;
    fn ref_erf(self) -> Self {
        libm::erf(self)
    }
}
impl E for f32 {
    const TOL: f64 = 1e-5;
    fn ref_erf(self) -> Self {
        libm::erff(self)
    }
}

const N: usize = 100_003;
/// 2-D shapes: many pieces (not a multiple of any piece size), and edges.
const SHAPES_2D: [[usize; 2]; 6] = [[997, 101], [1, 1], [0, 5], [5, 0], [1, 7], [7, 1]];

/// Run `f` in the global session, in an isolated session whose pieces are tiny, and on every
/// accelerator present (the device conformance suite: the emulated accelerator always, CUDA
/// on a GPU host), with device memory small enough that the larger inputs page through it.
fn each_session(f: impl Fn(&str)) {
    f("global session");
    let s = Session::new();
    s.update_config(|c| c.cost.planner.cpu_piece_bytes = 3000);
    with_session(&s, || f("isolated session, 3000-byte pieces"));
    for (name, s) in accelerator_sessions(64 << 20) {
        s.update_config(|c| c.memory_cap = Some(2 << 20));
        with_session(&s, || f(&format!("{name}, 2 MiB memory cap")));
    }
}

fn conv<A: E>(a: &ArrayD<f64>) -> ArrayD<A> {
    a.mapv(A::of)
}

/// A seeded input of `shape` in [lo, hi), with special values when asked.
fn input<A: E>(seed: u64, shape: &[usize], lo: f64, hi: f64, specials: bool) -> ArrayD<A> {
    let n = shape.iter().product();
    conv(&nd(shape, mixed_vec(seed, n, lo, hi, specials)))
}

fn lazy<A: E>(a: &ArrayD<A>) -> Array<A> {
    Array::from_array(a.clone())
}

fn ev<A: bach_runtime::Element, S: bach::Data<Elem = A>, D: ndarray::Dimension>(a: &bach::ArrayBase<S, D>) -> ArrayD<A> {
    a.to_array().unwrap_or_else(|e| panic!("evaluation failed: {e}"))
}

/// numpy's broadcast shape (test-side, independent of bach's).
fn bshape(a: &[usize], b: &[usize]) -> Vec<usize> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|k| {
            let da = if k + a.len() >= n { a[k + a.len() - n] } else { 1 };
            let db = if k + b.len() >= n { b[k + b.len() - n] } else { 1 };
            if da == 1 {
                db
            } else {
                assert!(db == 1 || db == da, "test bug: {a:?} and {b:?} do not broadcast");
                da
            }
        })
        .collect()
}

fn ref_zip<T: Copy, U: Copy, R>(a: &ArrayD<T>, b: &ArrayD<U>, f: impl Fn(T, U) -> R) -> ArrayD<R> {
    let s = bshape(a.shape(), b.shape());
    let (a, b) = (a.broadcast(IxDyn(&s)).unwrap(), b.broadcast(IxDyn(&s)).unwrap());
    Zip::from(&a).and(&b).map_collect(|&x, &y| f(x, y))
}

// -------------------------------------------------------------------------------------------
// Unary math
// -------------------------------------------------------------------------------------------

type UnaryCase<A> = (&'static str, fn(&Array<A>) -> Array<A>, fn(A) -> A);

fn unary_cases<A: E>() -> Vec<UnaryCase<A>> {
    vec![
        ("sqrt", |x| x.sqrt(), |v| v.sqrt()),
        ("exp", |x| x.exp(), |v| v.exp()),
        ("ln", |x| x.ln(), |v| v.ln()),
        ("log2", |x| x.log2(), |v| v.log2()),
        ("log10", |x| x.log10(), |v| v.log10()),
        ("sin", |x| x.sin(), |v| v.sin()),
        ("cos", |x| x.cos(), |v| v.cos()),
        ("tan", |x| x.tan(), |v| v.tan()),
        ("asin", |x| x.asin(), |v| v.asin()),
        ("acos", |x| x.acos(), |v| v.acos()),
        ("atan", |x| x.atan(), |v| v.atan()),
        ("erf", |x| x.erf(), |v| v.ref_erf()),
        ("tanh", |x| x.tanh(), |v| v.tanh()),
        ("sinh", |x| x.sinh(), |v| v.sinh()),
        ("cosh", |x| x.cosh(), |v| v.cosh()),
        ("exp_m1", |x| x.exp_m1(), |v| v.exp_m1()),
        ("ln_1p", |x| x.ln_1p(), |v| v.ln_1p()),
        ("cbrt", |x| x.cbrt(), |v| v.cbrt()),
        ("exp2", |x| x.exp2(), |v| v.exp2()),
        ("powi(3)", |x| x.powi(3), |v| v.powi(3)),
        ("powi(-2)", |x| x.powi(-2), |v| v.powi(-2)),
        ("powi(0)", |x| x.powi(0), |v| v.powi(0)),
        ("mapv_into", |x| x.clone().mapv_into(|v| v * v - A::of(0.5)), |v| v * v - A::of(0.5)),
        ("mapv_lazy", |x| x.mapv_lazy(|v| v * v - A::of(0.5)), |v| v * v - A::of(0.5)),
    ]
}

/// Ops whose results must be bit-exact.
fn exact_unary_cases<A: E>() -> Vec<UnaryCase<A>> {
    vec![
        ("abs", |x| x.abs(), |v| v.abs()),
        ("neg", |x| x.neg(), |v| -v),
        ("-x (operator)", |x| -x, |v| -v),
        ("-x (owned operator)", |x| -(x.clone()), |v| -v),
        ("floor", |x| x.floor(), |v| v.floor()),
        ("ceil", |x| x.ceil(), |v| v.ceil()),
        ("round", |x| x.round(), |v| v.round()),
        ("trunc", |x| x.trunc(), |v| v.trunc()),
        ("recip", |x| x.recip(), |v| v.recip()),
        ("signum", |x| x.signum(), |v| v.signum()),
    ]
}

fn check_unary<A: E>() {
    each_session(|ctx| {
        let shapes: Vec<Vec<usize>> = [vec![N], vec![0], vec![1]].into_iter().chain(SHAPES_2D.iter().map(|s| s.to_vec())).collect();
        for (k, shape) in shapes.iter().enumerate() {
            // A wide domain (out-of-domain values give NaN on both sides) and a positive one.
            for (lo, hi, specials) in [(-4.0, 4.0, true), (1e-3, 50.0, false)] {
                let x: ArrayD<A> = input(k as u64 * 7 + 1, shape, lo, hi, specials);
                let lx = lazy(&x);
                for (name, f, r) in unary_cases::<A>() {
                    let got = ev(&f(&lx));
                    assert_close(&format!("{name} {shape:?} [{lo}, {hi}) ({ctx})"), &got, &x.mapv(r), A::TOL);
                }
                for (name, f, r) in exact_unary_cases::<A>() {
                    assert_exact(&format!("{name} {shape:?} ({ctx})"), &ev(&f(&lx)), &x.mapv(r));
                }
            }
        }
    });
}

#[test]
fn unary_math_f64() {
    check_unary::<f64>();
}
#[test]
fn unary_math_f32() {
    check_unary::<f32>();
}

#[test]
fn chained_unary_ops_f64() {
    // A chain of ops that the planner fuses into one stage, on a many-piece input.
    each_session(|ctx| {
        let x: ArrayD<f64> = input(99, &[N], 0.1, 3.0, false);
        let got = ev(&lazy(&x).sqrt().exp().ln().sin().abs().neg().atan());
        let want = x.mapv(|v| -(v.sqrt().exp().ln().sin().abs()));
        let want = want.mapv(f64::atan);
        assert_close(&format!("chain ({ctx})"), &got, &want, 1e-12);
    });
}

// -------------------------------------------------------------------------------------------
// Binary arithmetic, powf, minimum, maximum
// -------------------------------------------------------------------------------------------

#[derive(Clone, Copy, Debug)]
enum Bin {
    Add,
    Sub,
    Mul,
    Div,
    Powf,
    Minimum,
    Maximum,
}
const BINS: [Bin; 7] = [Bin::Add, Bin::Sub, Bin::Mul, Bin::Div, Bin::Powf, Bin::Minimum, Bin::Maximum];

impl Bin {
    fn bach<A: E, R: bach::Operand<A, ndarray::IxDyn, Out = ndarray::IxDyn>>(self, a: &Array<A>, b: R) -> Array<A> {
        match self {
            Bin::Add => a.try_add(b).unwrap(),
            Bin::Sub => a.try_sub(b).unwrap(),
            Bin::Mul => a.try_mul(b).unwrap(),
            Bin::Div => a.try_div(b).unwrap(),
            Bin::Powf => a.powf(b),
            Bin::Minimum => a.minimum(b),
            Bin::Maximum => a.maximum(b),
        }
    }
    fn eager<A: E>(self, x: A, y: A) -> A {
        match self {
            Bin::Add => x + y,
            Bin::Sub => x - y,
            Bin::Mul => x * y,
            Bin::Div => x / y,
            Bin::Powf => x.powf(y),
            // numpy's minimum/maximum: NaN if either is NaN.
            Bin::Minimum => {
                if x.is_nan() || y.is_nan() {
                    A::nan()
                } else if x < y {
                    x
                } else {
                    y
                }
            }
            Bin::Maximum => {
                if x.is_nan() || y.is_nan() {
                    A::nan()
                } else if x > y {
                    x
                } else {
                    y
                }
            }
        }
    }
    fn check<A: E>(self, what: &str, got: &ArrayD<A>, want: &ArrayD<A>) {
        match self {
            Bin::Add | Bin::Sub | Bin::Mul | Bin::Div => assert_exact(what, got, want),
            // Signed zeros may come from either side of min/max: compare by value.
            Bin::Minimum | Bin::Maximum => assert_close(what, got, want, 0.0),
            Bin::Powf => assert_close(what, got, want, A::TOL),
        }
    }
}

/// (lhs shape, rhs shape) pairs: same shapes, numpy broadcasting, and edges.
fn binary_shapes() -> Vec<(Vec<usize>, Vec<usize>)> {
    vec![
        (vec![N], vec![N]),
        (vec![N], vec![1]),
        (vec![1], vec![N]),
        (vec![997, 101], vec![997, 101]),
        (vec![997, 101], vec![101]),
        (vec![997, 101], vec![997, 1]),
        (vec![997, 101], vec![1, 101]),
        (vec![101], vec![997, 101]),
        (vec![5, 5], vec![5]),
        (vec![0], vec![0]),
        (vec![1], vec![1]),
        (vec![0, 5], vec![5]),
        (vec![1, 1], vec![1, 1]),
        (vec![997, 1], vec![1, 101]),
        (vec![1, 101], vec![997, 1]),
        (vec![101], vec![997, 1]),
        (vec![1, 1], vec![1, 7]),
    ]
}

fn check_binary<A: E>() {
    each_session(|ctx| {
        for (k, (sa, sb)) in binary_shapes().into_iter().enumerate() {
            let x: ArrayD<A> = input(100 + k as u64, &sa, -3.0, 3.0, true);
            let y: ArrayD<A> = input(200 + k as u64, &sb, -3.0, 3.0, true);
            let (lx, ly) = (lazy(&x), lazy(&y));
            for op in BINS {
                let what = format!("{op:?} {sa:?} with {sb:?} ({ctx})");
                let want = ref_zip(&x, &y, |a, b| op.eager(a, b));
                op.check(&what, &ev(&op.bach(&lx, &ly)), &want);
                op.check(&format!("{what}, owned operand"), &ev(&op.bach(&lx, ly.clone())), &want);
                // A scalar operand on the right.
                for s in [A::of(2.5), A::of(-0.0), A::nan(), A::infinity()] {
                    let want = x.mapv(|a| op.eager(a, s));
                    op.check(&format!("{op:?} {sa:?} with scalar {s:?} ({ctx})"), &ev(&op.bach(&lx, s)), &want);
                }
            }
        }
    });
}

#[test]
fn binary_ops_f64() {
    check_binary::<f64>();
}
#[test]
fn binary_ops_f32() {
    check_binary::<f32>();
}

/// `&a + &b`, `a + b`, `&a * 2.0`, `2.0 - &a`, ...: the operators give the try_ methods'
/// results, and a scalar on the left is the left operand.
macro_rules! operator_test {
    ($name:ident, $t:ty) => {
        #[test]
        fn $name() {
            each_session(|ctx| {
                for shape in [vec![N], vec![997, 101], vec![0], vec![1]] {
                    let x: ArrayD<$t> = input(7, &shape, -5.0, 5.0, true);
                    let y: ArrayD<$t> = input(8, &shape, -5.0, 5.0, true);
                    let (lx, ly) = (lazy(&x), lazy(&y));
                    let s: $t = 1.75;
                    let w = |f: fn($t, $t) -> $t| ref_zip(&x, &y, f);
                    let c = |what: &str, got: Array<$t>, want: ArrayD<$t>| assert_exact(&format!("{what} {shape:?} ({ctx})"), &ev(&got), &want);
                    c("&x + &y", &lx + &ly, w(|a, b| a + b));
                    c("&x - &y", &lx - &ly, w(|a, b| a - b));
                    c("&x * &y", &lx * &ly, w(|a, b| a * b));
                    c("&x / &y", &lx / &ly, w(|a, b| a / b));
                    c("x + y (owned)", lx.clone() + ly.clone(), w(|a, b| a + b));
                    c("x / &y (owned lhs)", lx.clone() / &ly, w(|a, b| a / b));
                    c("&x + s", &lx + s, x.mapv(|a| a + s));
                    c("&x - s", &lx - s, x.mapv(|a| a - s));
                    c("&x * s", &lx * s, x.mapv(|a| a * s));
                    c("&x / s", &lx / s, x.mapv(|a| a / s));
                    c("s + &x", s + &lx, x.mapv(|a| s + a));
                    c("s - &x", s - &lx, x.mapv(|a| s - a));
                    c("s * &x", s * &lx, x.mapv(|a| s * a));
                    c("s / &x", s / &lx, x.mapv(|a| s / a));
                    c("s - x (owned)", s - lx.clone(), x.mapv(|a| s - a));
                    c("s / x (owned)", s / lx.clone(), x.mapv(|a| s / a));
                    // A longer expression, as a notebook writes it.
                    c("(2 - x) * y / (x + 3) - 1", (2.0 - &lx) * &ly / (&lx + 3.0) - 1.0, ref_zip(&x, &y, |a, b| (2.0 - a) * b / (a + 3.0) - 1.0));
                }
            });
        }
    };
}
operator_test!(operators_f64, f64);
operator_test!(operators_f32, f32);

// -------------------------------------------------------------------------------------------
// Comparisons, masks, where_
// -------------------------------------------------------------------------------------------

/// Two inputs that are equal at about a third of the positions.
fn overlapping<A: E>(seed: u64, sa: &[usize], sb: &[usize]) -> (ArrayD<A>, ArrayD<A>) {
    let x: ArrayD<A> = input(seed, sa, -2.0, 2.0, true);
    let mut y: ArrayD<A> = input(seed + 1, sb, -2.0, 2.0, true);
    if sa == sb {
        let mut rng = Lcg::new(seed + 2);
        Zip::from(&mut y).and(&x).for_each(|b, &a| {
            if rng.unit() < 0.33 {
                *b = a;
            }
        });
    }
    (x, y)
}

fn check_comparisons<A: E>() {
    type Cmp<A> = (&'static str, fn(&Array<A>, &Array<A>) -> Array<bool>, fn(&Array<A>, A) -> Array<bool>, fn(A, A) -> bool);
    let cases: Vec<Cmp<A>> = vec![
        ("gt", |a, b| a.gt(b), |a, s| a.gt(s), |x, y| x > y),
        ("ge", |a, b| a.ge(b), |a, s| a.ge(s), |x, y| x >= y),
        ("lt", |a, b| a.lt(b), |a, s| a.lt(s), |x, y| x < y),
        ("le", |a, b| a.le(b), |a, s| a.le(s), |x, y| x <= y),
        ("equal", |a, b| a.equal(b), |a, s| a.equal(s), |x, y| x == y),
        ("not_equal", |a, b| a.not_equal(b), |a, s| a.not_equal(s), |x, y| x != y),
    ];
    each_session(|ctx| {
        for (k, (sa, sb)) in binary_shapes().into_iter().enumerate() {
            let (x, y) = overlapping::<A>(300 + k as u64, &sa, &sb);
            let (lx, ly) = (lazy(&x), lazy(&y));
            let pick = x.iter().copied().find(|v| !v.is_nan()).unwrap_or(A::of(0.5));
            for (name, f, fs, r) in &cases {
                let got = ev(&f(&lx, &ly));
                assert_eq!(got, ref_zip(&x, &y, r), "{name} {sa:?} with {sb:?} ({ctx})");
                // Against a scalar that occurs in the array (so `equal` finds it), and NaN.
                for s in [pick, A::nan()] {
                    assert_eq!(ev(&fs(&lx, s)), x.mapv(|v| r(v, s)), "{name} {sa:?} with scalar {s:?} ({ctx})");
                }
            }
        }
    });
}

#[test]
fn comparisons_f64() {
    check_comparisons::<f64>();
}
#[test]
fn comparisons_f32() {
    check_comparisons::<f32>();
}

#[test]
fn mask_logic() {
    each_session(|ctx| {
        for shape in [vec![N], vec![997, 101], vec![0], vec![1], vec![1, 1]] {
            let x: ArrayD<f64> = input(400, &shape, -1.0, 1.0, true);
            let y: ArrayD<f64> = input(401, &shape, -1.0, 1.0, true);
            let (lx, ly) = (lazy(&x), lazy(&y));
            let (m1, m2) = (lx.gt(0.0), ly.lt(0.25));
            let (r1, r2) = (x.mapv(|v| v > 0.0), y.mapv(|v| v < 0.25));
            let w = |f: fn(bool, bool) -> bool| Zip::from(&r1).and(&r2).map_collect(|&a, &b| f(a, b));
            assert_eq!(ev(&(&m1 & &m2)), w(|a, b| a & b), "and {shape:?} ({ctx})");
            assert_eq!(ev(&(&m1 | &m2)), w(|a, b| a | b), "or {shape:?} ({ctx})");
            assert_eq!(ev(&!&m1), r1.mapv(|a| !a), "not {shape:?} ({ctx})");
            assert_eq!(ev(&!(m1.clone())), r1.mapv(|a| !a), "not owned {shape:?} ({ctx})");
            assert_eq!(ev(&(m1.clone() & m2.clone())), w(|a, b| a & b), "and owned {shape:?} ({ctx})");
            assert_eq!(ev(&(&m1 & true)), r1, "and true {shape:?} ({ctx})");
            assert_eq!(ev(&(&m1 | false)), r1, "or false {shape:?} ({ctx})");
            assert_eq!(ev(&(&m1 & false)), r1.mapv(|_| false), "and false {shape:?} ({ctx})");
            // De Morgan, through a longer lazy chain.
            assert_eq!(ev(&!(&(!&m1) | &(!&m2))), w(|a, b| a & b), "de morgan {shape:?} ({ctx})");
        }
    });
}

fn check_where<A: E>() {
    each_session(|ctx| {
        for shape in [vec![N], vec![997, 101], vec![0], vec![1], vec![1, 1]] {
            let x: ArrayD<A> = input(500, &shape, -1.0, 1.0, true);
            let y: ArrayD<A> = input(501, &shape, -1.0, 1.0, true);
            let (lx, ly) = (lazy(&x), lazy(&y));
            let m = lx.gt(ly.clone());
            let rm = ref_zip(&x, &y, |a, b| a > b);
            let sel = |a: &ArrayD<A>, b: &ArrayD<A>| -> ArrayD<A> {
                let s = bshape(&bshape(rm.shape(), a.shape()), b.shape());
                let (m, a, b) = (rm.broadcast(IxDyn(&s)).unwrap(), a.broadcast(IxDyn(&s)).unwrap(), b.broadcast(IxDyn(&s)).unwrap());
                Zip::from(&m).and(&a).and(&b).map_collect(|&c, &p, &q| if c { p } else { q })
            };
            let s0 = |v: f64| ArrayD::from_elem(IxDyn(&[]), A::of(v));
            let c = |what: &str, got: Array<A>, want: ArrayD<A>| assert_exact(&format!("where {what} {shape:?} ({ctx})"), &ev(&got), &want);
            c("(m, x, y)", where_(&m, &lx, &ly), sel(&x, &y));
            c("(m, x, y) owned", where_(&m, lx.clone(), ly.clone()), sel(&x, &y));
            c("(m, 0, y)", where_(&m, A::of(0.0), &ly), sel(&s0(0.0), &y));
            c("(m, x, -1)", where_(&m, &lx, A::of(-1.0)), sel(&x, &s0(-1.0)));
            c("(m, 1, 2)", where_(&m, A::of(1.0), A::of(2.0)), sel(&s0(1.0), &s0(2.0)));
            c("(m, x, nan)", where_(&m, &lx, A::nan()), sel(&x, &ArrayD::from_elem(IxDyn(&[]), A::nan())));
            // Crime-index style chain: where of where.
            let ci = where_(&lx.lt(A::of(-0.5)), A::of(0.005), where_(&m, A::of(0.032), &lx));
            let want = sel(&s0(0.032), &x);
            let want = Zip::from(&x).and(&want).map_collect(|&v, &w| if v < A::of(-0.5) { A::of(0.005) } else { w });
            c("of where", ci, want);
            if shape.len() == 2 && shape[1] > 0 {
                // A row and a column broadcast against a 2-D mask.
                let row: ArrayD<A> = input(502, &shape[1..], -1.0, 1.0, false);
                let col: ArrayD<A> = input(503, &[shape[0], 1], -1.0, 1.0, false);
                c("(m, row, col)", where_(&m, lazy(&row), lazy(&col)), sel(&row, &col));
            }
            // A 0-d mask (a comparison of a reduction) selects whole arrays.
            let m0 = lx.sum_lazy().gt(A::zero());
            let picked = ev(&where_(&m0, &lx, &ly));
            let total = ev(&lx.sum_lazy())[IxDyn(&[])];
            assert_exact(&format!("where 0-d mask {shape:?} ({ctx})"), &picked, if total > A::zero() { &x } else { &y });
            // On masks themselves.
            let m2 = lx.lt(A::of(0.0));
            let rm2 = x.mapv(|v| v < A::of(0.0));
            let want = Zip::from(&rm).and(&rm2).map_collect(|&c, &b| if c { true } else { b });
            assert_eq!(ev(&where_(&m, true, &m2)), want, "where on bools {shape:?} ({ctx})");
        }
    });
}

#[test]
fn where_f64() {
    check_where::<f64>();
}
#[test]
fn where_f32() {
    check_where::<f32>();
}

#[test]
fn casts() {
    each_session(|ctx| {
        for shape in [vec![N], vec![997, 101], vec![0], vec![1]] {
            let x: ArrayD<f64> = input(600, &shape, -1e6, 1e6, true);
            let lx = lazy(&x);
            let f = lx.cast::<f32>();
            assert_exact(&format!("f64 -> f32 {shape:?} ({ctx})"), &ev(&f), &x.mapv(|v| v as f32));
            assert_exact(&format!("f64 -> f32 -> f64 {shape:?} ({ctx})"), &ev(&f.cast::<f64>()), &x.mapv(|v| v as f32 as f64));
            assert_exact(&format!("f64 -> f64 {shape:?} ({ctx})"), &ev(&lx.cast::<f64>()), &x);
            let y: ArrayD<f32> = input(601, &shape, -1e3, 1e3, true);
            assert_exact(&format!("f32 -> f64 {shape:?} ({ctx})"), &ev(&lazy(&y).cast::<f64>()), &y.mapv(|v| v as f64));
        }
    });
}

#[test]
fn integers() {
    each_session(|ctx| {
        for shape in [vec![N], vec![997, 101], vec![0], vec![1]] {
            let n: usize = shape.iter().product();
            let labels = ArrayD::from_shape_vec(IxDyn(&shape), (0..n).map(|i| ((i * 7919) % 1013) as i64 - 17).collect()).unwrap();
            let other = labels.mapv(|v| if v % 3 == 0 { v } else { v + 1 });
            let (l, o) = (Array::from_array(labels.clone()), Array::from_array(other.clone()));
            assert_eq!(ev(&l), labels, "i64 round trip {shape:?} ({ctx})");
            assert_exact(&format!("i64 -> f64 {shape:?} ({ctx})"), &ev(&l.cast::<f64>()), &labels.mapv(|v| v as f64));
            assert_exact(&format!("i64 -> f32 {shape:?} ({ctx})"), &ev(&l.cast::<f32>()), &labels.mapv(|v| v as f32));
            assert_eq!(ev(&l.equal(&o)), ref_zip(&labels, &other, |a, b| a == b), "i64 equal {shape:?} ({ctx})");
            assert_eq!(ev(&l.not_equal(&o)), ref_zip(&labels, &other, |a, b| a != b), "i64 not_equal {shape:?} ({ctx})");
            let m = l.equal(&o);
            let picked = where_(&m, &l, -1i64);
            assert_eq!(ev(&picked), ref_zip(&labels, &other, |a, b| if a == b { a } else { -1 }), "where on i64 {shape:?} ({ctx})");
            let filled = Array::<i64>::from_elem(shape.clone(), -3);
            assert_eq!(ev(&filled), ArrayD::from_elem(IxDyn(&shape), -3i64), "i64 fill {shape:?} ({ctx})");
        }
    });
}

// -------------------------------------------------------------------------------------------
// The ML library's own kernels
// -------------------------------------------------------------------------------------------

#[test]
fn gram_is_x_transposed_times_x() {
    each_session(|ctx| {
        for (k, shape) in [[997usize, 13], [300, 64], [1, 1], [0, 5], [5, 0]].iter().enumerate() {
            let x: ArrayD<f64> = input(700 + k as u64, shape, -3.0, 3.0, false);
            let x2 = x.clone().into_dimensionality::<ndarray::Ix2>().unwrap();
            let want = x2.t().dot(&x2).into_dyn();
            let got = ev(&bach::ml::gram(&lazy(&x)).unwrap());
            // Each entry is a sum of n products; its rounding is n ulps of the sum of their sizes.
            let scale = x2.t().mapv(f64::abs).dot(&x2.mapv(f64::abs));
            assert_eq!(got.shape(), want.shape(), "gram {shape:?} ({ctx})");
            for ((g, w), s) in got.iter().zip(&want).zip(&scale) {
                assert!((g - w).abs() <= 1e-14 * shape[0].max(1) as f64 * s, "gram {shape:?} ({ctx}): {g} vs {w}");
            }
        }
    });
}

#[test]
fn knn_vote_of_given_distances() {
    each_session(|ctx| {
        for (rows, cols, k) in [(997usize, 61usize, 5usize), (64, 200, 1), (33, 40, 32), (10, 7, 7)] {
            // Few distinct distances (ties), NaN and infinities among them; labels with ties.
            let raw = mixed_vec(800 + rows as u64, rows * cols, 0.0, 4.0, true);
            let d2 = ndarray::Array2::from_shape_vec((rows, cols), raw.iter().map(|v| if v.is_finite() { v.floor() } else { *v }).collect()).unwrap();
            let labels = ndarray::Array1::from_shape_fn(cols, |j| ((j * 37) % 5) as i64 - 2);
            let want = bach::ml::numerics::knn_vote(d2.view(), labels.view(), k).into_dyn();
            let got = ev(&bach::ml::knn_vote(&lazy(&d2.into_dyn()), &Array::from_array(labels.into_dyn()), k).unwrap());
            assert_eq!(got, want, "knn_vote {rows} x {cols}, k = {k} ({ctx})");
        }
    });
}

// -------------------------------------------------------------------------------------------
// Reductions
// -------------------------------------------------------------------------------------------

fn f64s<A: E>(a: &ArrayD<A>) -> impl Iterator<Item = f64> + '_ {
    a.iter().map(|v| v.to_f64_())
}

/// `got` is the sum of `xs` up to summation error.
#[track_caller]
fn assert_sum<A: E>(what: &str, got: A, xs: &[f64]) {
    let want = exact_sum(xs.iter().copied());
    let scale = abs_sum(xs.iter().copied());
    let err = (got.to_f64_() - want).abs();
    assert!(err <= A::TOL * scale.max(f64::MIN_POSITIVE), "{what}: got {got:?}, want {want} (error {err:e}, scale {scale:e})");
}

fn ref_mean(xs: &[f64]) -> f64 {
    exact_sum(xs.iter().copied()) / xs.len() as f64
}
fn ref_var(xs: &[f64], ddof: f64) -> f64 {
    let m = ref_mean(xs);
    exact_sum(xs.iter().map(|x| (x - m) * (x - m))) / (xs.len() as f64 - ddof)
}

fn columns(a: &ArrayD<f64>) -> Vec<Vec<f64>> {
    (0..a.shape()[1]).map(|j| a.index_axis(ndarray::Axis(1), j).iter().copied().collect()).collect()
}
fn rows(a: &ArrayD<f64>) -> Vec<Vec<f64>> {
    (0..a.shape()[0]).map(|i| a.index_axis(ndarray::Axis(0), i).iter().copied().collect()).collect()
}

#[track_caller]
fn assert_rel<A: E>(what: &str, got: A, want: f64) {
    assert!(close(got.to_f64_(), want, A::TOL, 0.0), "{what}: got {got:?}, want {want}");
}

fn check_whole_reductions<A: E>() {
    each_session(|ctx| {
        let shapes: Vec<Vec<usize>> = [vec![N], vec![1], vec![2]].into_iter().chain(SHAPES_2D.iter().map(|s| s.to_vec())).collect();
        for (k, shape) in shapes.iter().enumerate() {
            // Offset so that the mean is not zero and sums do not cancel to nothing.
            let x: ArrayD<A> = input(700 + k as u64, shape, -1.0, 3.0, false);
            let xs: Vec<f64> = f64s(&x).collect();
            let lx = lazy(&x);
            let what = |op: &str| format!("{op} {shape:?} ({ctx})");
            let sum = lx.sum_lazy();
            assert_eq!(sum.shape(), &[] as &[usize], "{}", what("sum shape"));
            assert_sum(&what("sum"), sum.to_scalar().unwrap(), &xs);
            if xs.is_empty() {
                assert_eq!(sum.to_scalar().unwrap(), A::zero(), "{}", what("sum of empty"));
                for (op, r) in [("min", lx.min_lazy()), ("max", lx.max_lazy()), ("mean", lx.mean_lazy()), ("var", lx.try_var(A::zero())), ("std", lx.try_std(A::zero()))] {
                    match r {
                        Err(BachError::EmptyReduction { .. }) => {}
                        Err(e) => panic!("{}: wrong error {e:?}", what(op)),
                        Ok(v) => panic!("{}: expected EmptyReduction, got a value {:?}", what(op), v.to_array()),
                    }
                }
                continue;
            }
            let min = xs.iter().copied().fold(f64::INFINITY, f64::min);
            let max = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            assert_eq!(lx.min_lazy().unwrap().to_scalar().unwrap().to_f64_(), min, "{}", what("min"));
            assert_eq!(lx.max_lazy().unwrap().to_scalar().unwrap().to_f64_(), max, "{}", what("max"));
            assert_rel(&what("mean"), lx.mean_lazy().unwrap().to_scalar().unwrap(), ref_mean(&xs));
            let var = ref_var(&xs, 0.0);
            let got_var = lx.var(A::zero());
            assert!(close(got_var.to_f64_(), var, A::TOL, 1e-300), "{}: got {got_var:?}, want {var}", what("var(0)"));
            let got_std = lx.std(A::zero());
            assert!(close(got_std.to_f64_(), var.sqrt(), A::TOL, 1e-300), "{}: got {got_std:?}, want {}", what("std(0)"), var.sqrt());
            if xs.len() > 1 {
                assert_rel(&what("var(1)"), lx.var(A::one()), ref_var(&xs, 1.0));
            } else {
                assert!(matches!(lx.try_var(A::one()), Err(BachError::EmptyReduction { .. })), "{}", what("var(1) of one element"));
            }
        }
    });
}

#[test]
fn whole_reductions_f64() {
    check_whole_reductions::<f64>();
}
#[test]
fn whole_reductions_f32() {
    check_whole_reductions::<f32>();
}

fn check_axis_reductions<A: E>() {
    each_session(|ctx| {
        for (k, shape) in SHAPES_2D.iter().enumerate() {
            let x: ArrayD<A> = input(800 + k as u64, shape, -1.0, 3.0, false);
            let x64 = x.mapv(|v| v.to_f64_());
            let lx = lazy(&x);
            let (cols, rws) = (columns(&x64), rows(&x64));
            for (axis, lanes) in [(0usize, &cols), (1, &rws)] {
                let what = |op: &str| format!("{op}(Axis({axis})) {shape:?} ({ctx})");
                let n_along = shape[axis];
                let s = ev(&lx.sum_axis(Axis(axis)));
                assert_eq!(s.shape(), &[lanes.len()], "{}", what("sum_axis shape"));
                for (j, lane) in lanes.iter().enumerate() {
                    assert_sum(&format!("{} lane {j}", what("sum_axis")), s[[j]], lane);
                }
                if n_along == 0 {
                    for (op, r) in [
                        ("min_axis", lx.try_min_axis(Axis(axis))),
                        ("max_axis", lx.try_max_axis(Axis(axis))),
                        ("mean_axis", lx.try_mean_axis(Axis(axis))),
                        ("var_axis", lx.try_var_axis(Axis(axis), A::zero())),
                        ("std_axis", lx.try_std_axis(Axis(axis), A::zero())),
                    ] {
                        assert!(matches!(r, Err(BachError::EmptyReduction { .. })), "{}: {:?}", what(op), r.map(|v| v.to_array()));
                    }
                    continue;
                }
                let mn = ev(&lx.min_axis(Axis(axis)));
                let mx = ev(&lx.max_axis(Axis(axis)));
                let me = ev(&lx.mean_axis(Axis(axis)).unwrap());
                let va = ev(&lx.var_axis(Axis(axis), A::zero()));
                let sd = ev(&lx.std_axis(Axis(axis), A::zero()));
                for (name, a) in [("min_axis", &mn), ("max_axis", &mx), ("mean_axis", &me), ("var_axis", &va), ("std_axis", &sd)] {
                    assert_eq!(a.shape(), &[lanes.len()], "{}", what(name));
                }
                for (j, lane) in lanes.iter().enumerate() {
                    let lw = |op: &str| format!("{} lane {j}", what(op));
                    assert_eq!(mn[[j]].to_f64_(), lane.iter().copied().fold(f64::INFINITY, f64::min), "{}", lw("min_axis"));
                    assert_eq!(mx[[j]].to_f64_(), lane.iter().copied().fold(f64::NEG_INFINITY, f64::max), "{}", lw("max_axis"));
                    assert_rel(&lw("mean_axis"), me[[j]], ref_mean(lane));
                    let v = ref_var(lane, 0.0);
                    assert!(close(va[[j]].to_f64_(), v, A::TOL, 1e-300), "{}: got {:?}, want {v}", lw("var_axis"), va[[j]]);
                    assert!(close(sd[[j]].to_f64_(), v.sqrt(), A::TOL, 1e-300), "{}: got {:?}, want {}", lw("std_axis"), sd[[j]], v.sqrt());
                }
                if n_along > 1 {
                    let v1 = ev(&lx.var_axis(Axis(axis), A::one()));
                    for (j, lane) in lanes.iter().enumerate() {
                        assert_rel(&format!("{} lane {j}", what("var_axis ddof 1")), v1[[j]], ref_var(lane, 1.0));
                    }
                }
            }
            // An axis the array does not have.
            assert!(lx.try_sum_axis(Axis(2)).is_err(), "sum_axis(Axis(2)) of 2-d ({ctx})");
        }
        // 1-d arrays: Axis(0) reduces everything, Axis(1) is an error.
        let x: ArrayD<A> = input(850, &[N], -1.0, 3.0, false);
        let xs: Vec<f64> = f64s(&x).collect();
        let lx = lazy(&x);
        let s = lx.sum_axis(Axis(0));
        assert_eq!(s.shape(), &[] as &[usize]);
        assert_sum(&format!("1-d sum_axis(0) ({ctx})"), s.to_scalar().unwrap(), &xs);
        assert_rel(&format!("1-d mean_axis(0) ({ctx})"), lx.mean_axis(Axis(0)).unwrap().to_scalar().unwrap(), ref_mean(&xs));
        assert_eq!(lx.max_axis(Axis(0)).to_scalar().unwrap().to_f64_(), xs.iter().copied().fold(f64::NEG_INFINITY, f64::max));
        assert!(lx.try_sum_axis(Axis(1)).is_err());
        assert!(lx.try_min_axis(Axis(1)).is_err());
    });
}

#[test]
fn axis_reductions_f64() {
    check_axis_reductions::<f64>();
}
#[test]
fn axis_reductions_f32() {
    check_axis_reductions::<f32>();
}

#[test]
fn reductions_of_a_lazy_chain() {
    // Reductions fused with the elementwise ops that feed them (one stage, many pieces).
    each_session(|ctx| {
        let x: ArrayD<f64> = input(900, &[997, 101], 0.0, 2.0, false);
        let lx = lazy(&x);
        let y = (&lx * 2.0 + 1.0).sqrt();
        let ry = x.mapv(|v| (v * 2.0 + 1.0).sqrt());
        let ys: Vec<f64> = ry.iter().copied().collect();
        assert_sum(&format!("sum of chain ({ctx})"), y.sum_lazy().to_scalar().unwrap(), &ys);
        let s0 = ev(&y.sum_axis(Axis(0)));
        for (j, c) in columns(&ry).iter().enumerate() {
            assert_sum(&format!("sum_axis0 of chain, col {j} ({ctx})"), s0[[j]], c);
        }
        // A value and a reduction of it used together: normalise by the mean.
        let centred = &y - &y.mean_lazy().unwrap();
        let m = ref_mean(&ys);
        assert_close_scaled(&format!("y - mean(y) ({ctx})"), &ev(&centred), &ry.mapv(|v| v - m), 1e-12, 1.0);
        let z = &y / &y.max_lazy().unwrap();
        let mx = ys.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        assert_exact(&format!("y / max(y) ({ctx})"), &ev(&z), &ry.mapv(|v| v / mx));
    });
}

#[test]
fn nan_propagates_through_reductions() {
    each_session(|ctx| {
        for at in [0usize, 1, 50_000, N - 1] {
            let mut v = uniform_vec(at as u64, N, -1.0, 1.0);
            v[at] = f64::NAN;
            let x = Array::from_vec(v);
            assert!(x.min_lazy().unwrap().to_scalar().unwrap().is_nan(), "min with NaN at {at} ({ctx})");
            assert!(x.max_lazy().unwrap().to_scalar().unwrap().is_nan(), "max with NaN at {at} ({ctx})");
            assert!(x.sum_lazy().to_scalar().unwrap().is_nan(), "sum with NaN at {at} ({ctx})");
            assert!(x.mean_lazy().unwrap().to_scalar().unwrap().is_nan(), "mean with NaN at {at} ({ctx})");
        }
        // Per column: only the lanes holding a NaN become NaN.
        let mut a = nd(&[997, 101], uniform_vec(1, 997 * 101, -1.0, 1.0));
        for (i, j) in [(0, 0), (996, 100), (500, 7)] {
            a[[i, j]] = f64::NAN;
        }
        let x = Array::from_array(a.clone());
        for (axis, nan_lanes) in [(0, vec![0, 100, 7]), (1, vec![0, 996, 500])] {
            for (name, r) in [("min_axis", x.try_min_axis(Axis(axis))), ("max_axis", x.try_max_axis(Axis(axis))), ("sum_axis", x.try_sum_axis(Axis(axis)))] {
                let got = ev(&r.unwrap());
                for (j, g) in got.iter().enumerate() {
                    assert_eq!(g.is_nan(), nan_lanes.contains(&j), "{name}(Axis({axis})) lane {j}: {g} ({ctx})");
                }
            }
        }
        // Infinities are values, not NaN.
        let x = Array::from_vec(vec![1.0, f64::INFINITY, -2.0, f64::NEG_INFINITY]);
        assert_eq!(x.max_lazy().unwrap().to_scalar().unwrap(), f64::INFINITY);
        assert_eq!(x.min_lazy().unwrap().to_scalar().unwrap(), f64::NEG_INFINITY);
        assert!(x.sum_lazy().to_scalar().unwrap().is_nan());
    });
}

#[test]
fn sum_is_pairwise_accurate() {
    // The crime-index check of workloads.md: a constant summed with pairwise summation is
    // exact where a naive sequential sum drifts.
    each_session(|ctx| {
        let n = 1 << 20;
        let x: Array<f64> = Array::full(vec![n], 0.005);
        let naive: f64 = (0..n).fold(0.0, |s, _| s + 0.005);
        let got = x.sum_lazy().to_scalar().unwrap();
        assert!((got - 0.005 * n as f64).abs() <= 1e-9, "pairwise sum of {n} x 0.005 = {got} ({ctx})");
        assert!((naive - 0.005 * n as f64).abs() > (got - 0.005 * n as f64).abs(), "naive {naive}, bach {got}");
    });
}

// -------------------------------------------------------------------------------------------
// Products and shape ops
// -------------------------------------------------------------------------------------------

/// Each element of `got` equals `want` within tolerance relative to |a|.|b| (the scale of
/// the dot product's rounding error).
#[track_caller]
fn assert_product<A: E>(what: &str, got: &ArrayD<A>, want: &ArrayD<f64>, scale: &ArrayD<f64>) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    for ((g, w), s) in got.iter().zip(want).zip(scale) {
        let err = (g.to_f64_() - w).abs();
        assert!(err <= A::TOL * s.max(f64::MIN_POSITIVE) * 4.0, "{what}: got {g:?}, want {w} (scale {s})");
    }
}

fn check_dot<A: E>() {
    each_session(|ctx| {
        let abs = |a: &ArrayD<A>| a.mapv(|v| v.to_f64_().abs());
        let f = |a: &ArrayD<A>| a.mapv(|v| v.to_f64_());
        let as1 = |a: ArrayD<f64>| a.into_dimensionality::<ndarray::Ix1>().unwrap();
        let as2 = |a: ArrayD<f64>| a.into_dimensionality::<ndarray::Ix2>().unwrap();
        // 1-d . 1-d
        for k in [N, 1, 0] {
            let (a, b): (ArrayD<A>, ArrayD<A>) = (input(1000, &[k], -1.0, 1.0, false), input(1001, &[k], -1.0, 1.0, false));
            let got = ev(&lazy(&a).dot(&lazy(&b)));
            let want = ndarray::arr0(as1(f(&a)).dot(&as1(f(&b)))).into_dyn();
            let scale = ndarray::arr0(as1(abs(&a)).dot(&as1(abs(&b)))).into_dyn();
            assert_product(&format!("dot [{k}].[{k}] ({ctx})"), &got, &want, &scale);
        }
        // 2-d . 2-d, 2-d . 1-d, 1-d . 2-d
        for (n, k, m) in [(503, 61, 29), (1, 1, 1), (0, 3, 4), (3, 0, 4), (4, 3, 0), (10_007, 7, 3)] {
            let a: ArrayD<A> = input(1100, &[n, k], -1.0, 1.0, false);
            let b: ArrayD<A> = input(1101, &[k, m], -1.0, 1.0, false);
            let v: ArrayD<A> = input(1102, &[k], -1.0, 1.0, false);
            let u: ArrayD<A> = input(1103, &[n], -1.0, 1.0, false);
            let (la, lb, lv, lu) = (lazy(&a), lazy(&b), lazy(&v), lazy(&u));
            let c = |what: String, got: Array<A>, want: ArrayD<f64>, scale: ArrayD<f64>| assert_product(&what, &ev(&got), &want, &scale);
            c(format!("matmul [{n},{k}].[{k},{m}] ({ctx})"), la.dot(&lb), as2(f(&a)).dot(&as2(f(&b))).into_dyn(), as2(abs(&a)).dot(&as2(abs(&b))).into_dyn());
            c(format!("matvec [{n},{k}].[{k}] ({ctx})"), la.dot(&lv), as2(f(&a)).dot(&as1(f(&v))).into_dyn(), as2(abs(&a)).dot(&as1(abs(&v))).into_dyn());
            c(format!("vecmat [{n}].[{n},{k}] ({ctx})"), lu.dot(&la), as1(f(&u)).dot(&as2(f(&a))).into_dyn(), as1(abs(&u)).dot(&as2(abs(&a))).into_dyn());
            // Inner dimensions that differ are an error at the call.
            assert!(la.try_dot(&la.t()).is_ok(), "[{n},{k}] . its transpose");
            match lb.try_dot(&la) {
                Ok(_) => assert_eq!(m, n, "[{k},{m}].[{n},{k}] accepted"),
                Err(e) => assert!(m != n && matches!(e, BachError::Shape { .. }), "[{k},{m}].[{n},{k}]: {e:?}"),
            }
        }
        // A product of lazy intermediates: (x*2).(y+1) with x, y computed in pieces.
        let x: ArrayD<A> = input(1200, &[20_011], -1.0, 1.0, false);
        let y: ArrayD<A> = input(1201, &[20_011, 3], -1.0, 1.0, false);
        let got = ev(&(&lazy(&x) * A::of(2.0)).dot(&(&lazy(&y) + A::of(1.0))));
        let xs = x.mapv(|v| (v * A::of(2.0)).to_f64_());
        let ys = y.mapv(|v| (v + A::of(1.0)).to_f64_());
        let want = as1(xs.clone()).dot(&as2(ys.clone())).into_dyn();
        let scale = as1(xs.mapv(f64::abs)).dot(&as2(ys.mapv(f64::abs))).into_dyn();
        assert_product(&format!("vecmat of lazy intermediates ({ctx})"), &got, &want, &scale);
    });
}

#[test]
fn dot_f64() {
    check_dot::<f64>();
}
#[test]
fn dot_f32() {
    check_dot::<f32>();
}

#[test]
fn shape_errors_of_products_are_at_the_call() {
    let a = Array::from_array(ndarray::Array2::<f64>::zeros((3, 4)));
    let b = Array::from_array(ndarray::Array2::<f64>::zeros((3, 4)));
    assert!(matches!(a.try_dot(&b), Err(BachError::Shape { .. })));
    let v = Array::from_vec(vec![1.0; 3]);
    assert!(matches!(a.try_dot(&v), Err(BachError::Shape { .. })));
    assert!(matches!(v.try_dot(&Array::from_vec(vec![1.0; 4])), Err(BachError::Shape { .. })));
    assert!(a.try_dot(&b.t()).is_ok());
}

#[test]
fn transpose_slice_insert_axis() {
    each_session(|ctx| {
        for shape in [vec![997, 101], vec![1, 1], vec![0, 5], vec![5, 0], vec![3, 1]] {
            let x: ArrayD<f64> = input(1300, &shape, -1.0, 1.0, true);
            let lx = lazy(&x);
            assert_exact(&format!("t() {shape:?} ({ctx})"), &ev(&lx.t()), &x.t().as_standard_layout().into_owned());
            assert_exact(&format!("t().t() {shape:?} ({ctx})"), &ev(&lx.t().t()), &x);
            // A transpose of a lazy piecewise result, then more piecewise work.
            let y = (&lx.t() * 2.0).reversed_axes();
            assert_exact(&format!("(t * 2).t {shape:?} ({ctx})"), &ev(&y), &x.mapv(|v| v * 2.0));
            let r = shape[0];
            for range in [0..r, 0..0, r / 3..r / 2 + 1, r.saturating_sub(1)..r] {
                if range.start > range.end || range.end > r {
                    continue;
                }
                let got = ev(&lx.slice_rows(range.clone()).unwrap());
                let want = x.slice_axis(ndarray::Axis(0), ndarray::Slice::from(range.clone())).to_owned();
                assert_exact(&format!("slice_rows({range:?}) {shape:?} ({ctx})"), &got, &want);
                // Of a lazy value, followed by more work.
                let got = ev(&(&lx + 1.0).slice_rows(range.clone()).unwrap().sqrt());
                assert_close(&format!("(x+1).slice_rows({range:?}).sqrt() {shape:?} ({ctx})"), &got, &want.mapv(|v| (v + 1.0).sqrt()), 1e-12);
            }
            assert!(lx.slice_rows(0..r + 1).is_err(), "slice past the end {shape:?}");
            #[allow(clippy::reversed_empty_ranges)]
            let backwards = lx.slice_rows(1..0);
            assert!(backwards.is_err(), "backwards range {shape:?}");
            for axis in 0..=2 {
                let got = ev(&lx.try_insert_axis(Axis(axis)).unwrap());
                assert_exact(&format!("insert_axis({axis}) {shape:?} ({ctx})"), &got, &x.clone().insert_axis(ndarray::Axis(axis)));
            }
            assert!(lx.try_insert_axis(Axis(3)).is_err(), "insert_axis(3) of 2-d");
        }
        for n in [N, 1, 0] {
            let x: ArrayD<f64> = input(1301, &[n], -1.0, 1.0, true);
            let lx = lazy(&x);
            assert_exact(&format!("t() of 1-d [{n}] ({ctx})"), &ev(&lx.t()), &x);
            for axis in 0..=1 {
                let got = ev(&(&lx * 3.0).try_insert_axis(Axis(axis)).unwrap());
                assert_exact(&format!("(x*3).insert_axis({axis}) [{n}] ({ctx})"), &got, &x.mapv(|v| v * 3.0).insert_axis(ndarray::Axis(axis)));
            }
            // A column made by insert_axis broadcast against a matrix (used by var_axis).
            if n > 0 && n < 1000 {
                let m: ArrayD<f64> = input(1302, &[n, 4], -1.0, 1.0, false);
                let got = ev(&(&lazy(&m) - &lx.try_insert_axis(Axis(1)).unwrap()));
                assert_exact(&format!("m - col [{n}] ({ctx})"), &got, &ref_zip(&m, &x.clone().insert_axis(ndarray::Axis(1)), |a, b| a - b));
            }
            let got = ev(&lx.slice_rows(n / 2..n).unwrap());
            assert_exact(&format!("slice_rows 1-d [{n}] ({ctx})"), &got, &x.slice_axis(ndarray::Axis(0), ndarray::Slice::from(n / 2..n)).to_owned());
        }
    });
}

// -------------------------------------------------------------------------------------------
// Allocations
// -------------------------------------------------------------------------------------------

fn check_allocations<A: E>() {
    each_session(|ctx| {
        for shape in [vec![N], vec![0], vec![1], vec![997, 101], vec![0, 3], vec![3, 0], vec![1, 1]] {
            let what = |op: &str| format!("{op} {shape:?} ({ctx})");
            let z: Array<A> = Array::zeros(shape.clone());
            let o: Array<A> = Array::ones(shape.clone());
            let f: Array<A> = Array::full(shape.clone(), A::of(-2.5));
            let e: Array<A> = Array::from_elem(shape.clone(), A::of(7.25));
            assert_eq!(z.shape(), &shape[..], "{}", what("zeros shape (lazy)"));
            assert_exact(&what("zeros"), &ev(&z), &ArrayD::zeros(shape.clone()));
            assert_exact(&what("ones"), &ev(&o), &ArrayD::ones(shape.clone()));
            assert_exact(&what("full"), &ev(&f), &ArrayD::from_elem(shape.clone(), A::of(-2.5)));
            assert_exact(&what("from_elem"), &ev(&e), &ArrayD::from_elem(shape.clone(), A::of(7.25)));
            // Used by a computation (allocated where, and in the pieces, its user runs).
            let x: ArrayD<A> = input(1400, &shape, -1.0, 1.0, false);
            assert_exact(&what("x + ones"), &ev(&(&lazy(&x) + &o)), &x.mapv(|v| v + A::one()));
            assert_exact(&what("full * x"), &ev(&(&f * &lazy(&x))), &x.mapv(|v| A::of(-2.5) * v));
        }
        let b: Array<bool> = Array::from_elem(vec![4, 3], true);
        assert_eq!(ev(&b), ArrayD::from_elem(IxDyn(&[4, 3]), true));
        let b: Array<bool> = Array::full(vec![N], false);
        assert_eq!(ev(&!&b), ArrayD::from_elem(IxDyn(&[N]), true));
        // A 0-d fill.
        let s: Array<A> = Array::full(Vec::<usize>::new(), A::of(3.0));
        assert_eq!(s.to_scalar().unwrap(), A::of(3.0));
    });
}

#[test]
fn allocations_f64() {
    check_allocations::<f64>();
}
#[test]
fn allocations_f32() {
    check_allocations::<f32>();
}

fn check_linspace_range<A: E>() {
    each_session(|ctx| {
        for (start, end, n) in [(0.0, 1.0, N), (-3.0, 7.0, 1), (2.0, 5.0, 0), (5.0, 5.0, 17), (10.0, -10.0, 1001), (0.0, 1.0, 2)] {
            let (s, e) = (A::of(start), A::of(end));
            let got = ev(&Array::linspace(s, e, n));
            let want = ndarray::Array1::linspace(s, e, n).into_dyn();
            let what = format!("linspace({start}, {end}, {n}) ({ctx})");
            assert_close_scaled(&what, &got, &want, A::TOL, (end - start).abs());
            if n > 1 {
                assert!(close(got[[0]], s, 0.0, 0.0) && close(got[[n - 1]], e, A::TOL, (end - start).abs()), "{what}: ends {:?} {:?}", got[[0]], got[[n - 1]]);
            }
        }
        for (start, end, step) in [(0.0, 10.0, 0.1), (0.0, 1000.0, 0.01), (1.0, 0.0, -0.25), (0.0, 0.0, 1.0), (-5.0, 5.0, 3.0), (0.5, 0.6, 1.0)] {
            let (s, e, st) = (A::of(start), A::of(end), A::of(step));
            let got = ev(&Array::arange(s, e, st).unwrap());
            let want = ndarray::Array1::range(s, e, st).into_dyn();
            assert_close_scaled(&format!("range({start}, {end}, {step}) ({ctx})"), &got, &want, A::TOL, (end - start).abs());
        }
        for (start, end, step) in [(0.0, 1.0, -0.1), (1.0, 0.0, 0.5), (0.0, 1.0, 0.0), (0.0, 1.0, f64::NAN)] {
            assert!(Array::arange(A::of(start), A::of(end), A::of(step)).is_err(), "range({start}, {end}, {step}) is an error");
        }
    });
}

#[test]
fn linspace_range_f64() {
    check_linspace_range::<f64>();
}
#[test]
fn linspace_range_f32() {
    check_linspace_range::<f32>();
}

/// numpy's legacy RandomState, from the description in workloads.md, on rand_mt directly
/// (independent of bach::random).
struct NumpyRs {
    mt: rand_mt::Mt,
    gauss: Option<f64>,
}
impl NumpyRs {
    fn new(seed: u32) -> Self {
        NumpyRs { mt: rand_mt::Mt::new(seed), gauss: None }
    }
    fn sample(&mut self) -> f64 {
        let a = (self.mt.next_u32() >> 5) as f64;
        let b = (self.mt.next_u32() >> 6) as f64;
        (a * 2f64.powi(26) + b) / 2f64.powi(53)
    }
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.sample()
    }
    fn gauss(&mut self) -> f64 {
        if let Some(g) = self.gauss.take() {
            return g;
        }
        loop {
            let x1 = 2.0 * self.sample() - 1.0;
            let x2 = 2.0 * self.sample() - 1.0;
            let r2 = x1 * x1 + x2 * x2;
            if r2 < 1.0 && r2 != 0.0 {
                let f = (-2.0 * r2.ln() / r2).sqrt();
                self.gauss = Some(f * x1);
                return f * x2;
            }
        }
    }
}

fn check_random<A: E>() {
    each_session(|ctx| {
        for (shape, seed) in [(vec![N], 42u32), (vec![30, 7], 0), (vec![1], 7), (vec![0], 1), (vec![997, 101], 12345)] {
            let len: usize = shape.iter().product();
            let mut rs = NumpyRs::new(seed);
            let want_u = nd(&shape, (0..len).map(|_| rs.uniform(10.0, 50.0)).collect()).mapv(A::of);
            let mut rs = NumpyRs::new(seed);
            let want_n = nd(&shape, (0..len).map(|_| 1.5 + 0.25 * rs.gauss()).collect()).mapv(A::of);
            let u: Array<A> = Array::random_uniform(shape.clone(), A::of(10.0), A::of(50.0), seed);
            let g: Array<A> = Array::random_normal(shape.clone(), A::of(1.5), A::of(0.25), seed);
            assert_close(&format!("random_uniform {shape:?} seed {seed} ({ctx})"), &ev(&u), &want_u, 1e-15);
            assert_close(&format!("random_normal {shape:?} seed {seed} ({ctx})"), &ev(&g), &want_n, 1e-15);
            // Through a piecewise user: the whole random stream is drawn once.
            assert_close(&format!("random_uniform * 2 {shape:?} ({ctx})"), &ev(&(&u * A::of(2.0))), &want_u.mapv(|v| v * A::of(2.0)), 0.0);
            if len > 1000 {
                let m = ref_mean(&want_u.iter().map(|v| v.to_f64_()).collect::<Vec<_>>());
                assert!((m - 30.0).abs() < 1.0, "uniform mean {m}");
                let gs: Vec<f64> = want_n.iter().map(|v| v.to_f64_()).collect();
                assert!((ref_mean(&gs) - 1.5).abs() < 0.02 && (ref_var(&gs, 0.0).sqrt() - 0.25).abs() < 0.02);
            }
        }
        // Different seeds differ; the same seed repeats.
        let a = ev(&Array::<A, _>::random_uniform(100, A::zero(), A::one(), 1));
        let b = ev(&Array::<A, _>::random_uniform(100, A::zero(), A::one(), 2));
        let c = ev(&Array::<A, _>::random_uniform(100, A::zero(), A::one(), 1));
        assert_ne!(a, b);
        assert_eq!(a, c);
    });
}

#[test]
fn random_f64() {
    check_random::<f64>();
}
#[test]
fn random_f32() {
    check_random::<f32>();
}

// -------------------------------------------------------------------------------------------
// .npy files
// -------------------------------------------------------------------------------------------

struct TempDir(std::path::PathBuf);
impl TempDir {
    fn new(name: &str) -> Self {
        let p = std::env::temp_dir().join(format!("bach-tests-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
}
impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn check_npy<A: E>(dir: &TempDir) {
    each_session(|ctx| {
        for shape in [vec![N], vec![997, 101], vec![0], vec![1], vec![0, 3]] {
            let x: ArrayD<A> = input(1500, &shape, -1.0, 1.0, true);
            let path = dir.0.join(format!("x-{}-{}.npy", shape.len(), shape[0]));
            // bach writes a lazy value; ndarray-npy (not bach) reads it back.
            let y = &lazy(&x) * A::of(2.0);
            y.write_npy(&path).unwrap();
            let back: ArrayD<A> = ndarray_npy::read_npy(&path).unwrap();
            assert_exact(&format!("write_npy {shape:?} ({ctx})"), &back, &x.mapv(|v| v * A::of(2.0)));
            // ndarray-npy writes; bach reads.
            ndarray_npy::write_npy(&path, &x).unwrap();
            let r = Array::<A>::read_npy(&path).unwrap();
            assert_eq!(r.shape(), &shape[..]);
            assert_exact(&format!("read_npy {shape:?} ({ctx})"), &ev(&r), &x);
            // Round trip through bach alone, then used lazily.
            r.write_npy(&path).unwrap();
            assert_exact(&format!("roundtrip {shape:?} ({ctx})"), &ev(&(&Array::<A>::read_npy(&path).unwrap() + A::one())), &x.mapv(|v| v + A::one()));
        }
    });
}

#[test]
fn npy_roundtrip() {
    let dir = TempDir::new("npy");
    check_npy::<f64>(&dir);
    check_npy::<f32>(&dir);
    // A wrong dtype or a missing file is an Io error at the call.
    let p = dir.0.join("f64.npy");
    Array::from_vec(vec![1.0f64, 2.0]).write_npy(&p).unwrap();
    assert!(matches!(Array::<f32>::read_npy(&p), Err(BachError::Io(_))));
    assert!(matches!(Array::<f64>::read_npy(dir.0.join("missing.npy")), Err(BachError::Io(_))));
    assert!(matches!(Array::from_vec(vec![1.0f64]).write_npy(dir.0.join("no/such/dir/x.npy")), Err(BachError::Io(_))));
}

#[test]
fn npy_fortran_order_big_endian_and_bool() {
    let dir = TempDir::new("npy-layouts");
    // A column-major array: ndarray-npy writes it with 'fortran_order': True.
    let x: ArrayD<f64> = input(1700, &[37, 5, 3], -1.0, 1.0, true);
    let f = x.t().as_standard_layout().into_owned().reversed_axes();
    assert!(!f.is_standard_layout());
    let p = dir.0.join("fortran.npy");
    ndarray_npy::write_npy(&p, &f).unwrap();
    assert!(String::from_utf8_lossy(&std::fs::read(&p).unwrap()[..128]).contains("'fortran_order': True"));
    assert_exact("read_npy fortran order", &ev(&Array::<f64>::read_npy(&p).unwrap()), &x);
    // Bool arrays both ways.
    let b = x.mapv(|v| v > 0.0);
    ndarray_npy::write_npy(&p, &b).unwrap();
    assert_eq!(ev(&Array::<bool>::read_npy(&p).unwrap()), b);
    Array::from_array(b.clone()).write_npy(&p).unwrap();
    assert_eq!(ndarray_npy::read_npy::<_, ArrayD<bool>>(&p).unwrap(), b);
    // i64 arrays (labels) both ways.
    let labels = x.mapv(|v| (v * 1e6) as i64);
    ndarray_npy::write_npy(&p, &labels).unwrap();
    assert_eq!(ev(&Array::<i64>::read_npy(&p).unwrap()), labels);
    Array::from_array(labels.clone()).write_npy(&p).unwrap();
    assert_eq!(ndarray_npy::read_npy::<_, ArrayD<i64>>(&p).unwrap(), labels);
    // Big-endian f32 (what numpy writes for dtype '>f4'), made by hand.
    let v = [1.5f32, -2.25, f32::INFINITY, 3e-38];
    let dict = "{'descr': '>f4', 'fortran_order': False, 'shape': (2, 2), }";
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(dict.len() as u16 + 1).to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    bytes.push(b'\n');
    v.iter().for_each(|x| bytes.extend_from_slice(&x.to_be_bytes()));
    std::fs::write(&p, &bytes).unwrap();
    assert_eq!(ev(&Array::<f32>::read_npy(&p).unwrap()).iter().copied().collect::<Vec<_>>(), v);
    // The same file cut short, and with a byte too many, are errors that say so.
    std::fs::write(&p, &bytes[..bytes.len() - 1]).unwrap();
    let e = Array::<f32>::read_npy(&p).unwrap_err().to_string();
    assert!(e.contains("needs 16 bytes of data, the file has 15"), "{e}");
    std::fs::write(&p, [&bytes[..], &[0]].concat()).unwrap();
    assert!(Array::<f32>::read_npy(&p).is_err());
    // A dtype Bach arrays do not hold is named.
    ndarray_npy::write_npy(&p, &ndarray::arr1(&[1i64, 2])).unwrap();
    let e = Array::<f64>::read_npy(&p).unwrap_err().to_string();
    assert!(e.contains("'<i8'"), "{e}");
}

#[test]
fn handles_share_one_session_value() {
    // Many handles to one lazy value, evaluated from several threads at once, agree.
    let x: ArrayD<f64> = input(1600, &[N], 0.0, 1.0, false);
    let y = (&lazy(&x) * 3.0).exp();
    let want = x.mapv(|v| (v * 3.0).exp());
    std::thread::scope(|s| {
        for _ in 0..4 {
            let y = y.clone();
            let want = &want;
            s.spawn(move || assert_close("threads", &ev(&y), want, 1e-12));
        }
    });
}

#[test]
fn array_api_basics() {
    let x = Array::from_shape_vec((2, 3), vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]).unwrap();
    assert_eq!(x.shape(), &[2, 3]);
    assert_eq!((x.ndim(), x.len(), x.is_empty()), (2, 6, false));
    assert!(Array::<f64, _>::from_shape_vec((2, 2), vec![1.0; 3]).is_err());
    let y = &x * 10.0;
    assert_eq!(y[[1, 2]], 60.0);
    assert_eq!(y.get((0, 1)), Some(&20.0));
    assert!(y.get((2, 0)).is_none());
    assert!(std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| y[[5, 5]])).is_err(), "indexing out of bounds panics");
    assert_eq!(y.to_array2().unwrap(), ndarray::arr2(&[[10.0, 20.0, 30.0], [40.0, 50.0, 60.0]]));
    assert!(y.to_array1().is_err());
    assert!(y.to_scalar().is_err());
    assert_eq!(format!("{}", y.sum()), format!("{}", ndarray::arr0(210.0)));
    assert_eq!(format!("{}", y), format!("{}", ndarray::arr2(&[[10.0, 20.0, 30.0], [40.0, 50.0, 60.0]])));
    let v = Array::from_vec(vec![3.0f32, 4.0]);
    assert_eq!(v[1], 4.0);
    assert_eq!(Array::<f64, _>::from(ndarray::arr1(&[1.0, 2.0])).to_array1().unwrap(), ndarray::arr1(&[1.0, 2.0]));
    // A 0-d value made 1-d.
    let s = x.sum_lazy().insert_axis(Axis(0));
    assert_eq!(s.to_array1().unwrap(), ndarray::arr1(&[21.0]));
    // 0-d arrays: elementwise ops, broadcasting against 1-d, reductions of one element.
    let z = Array::from_array(ndarray::arr0(2.5f64));
    assert_eq!((&z * 2.0).to_scalar().unwrap(), 5.0);
    assert_eq!((&z + &z).sqrt().to_scalar().unwrap(), 5f64.sqrt());
    assert_eq!((&z - &Array::from_vec(vec![1.0, 2.0])).to_array1().unwrap(), ndarray::arr1(&[1.5, 0.5]));
    for r in [z.sum_lazy(), z.min_lazy().unwrap(), z.max_lazy().unwrap(), z.mean_lazy().unwrap()] {
        assert_eq!(r.to_scalar().unwrap(), 2.5);
    }
    assert_eq!(z.var(0.0), 0.0);
    assert!(z.clone().into_dyn().try_sum_axis(Axis(0)).is_err());
}

#[test]
fn non_standard_layouts() {
    // Host arrays in Fortran order or with negative strides: every op sees the same logical
    // array as ndarray does, in pieces too.
    use ndarray::ShapeBuilder;
    each_session(|ctx| {
        let (r, c) = (997, 101);
        let v = uniform_vec(1700, r * c, -1.0, 1.0);
        let standard = ndarray::Array2::from_shape_vec((r, c), v.clone()).unwrap();
        let fortran = {
            let mut f = ndarray::Array2::<f64>::zeros((r, c).f());
            f.assign(&standard);
            f
        };
        let mut flipped_rows = standard.clone();
        flipped_rows.invert_axis(ndarray::Axis(0));
        let mut flipped_cols = standard.clone();
        flipped_cols.invert_axis(ndarray::Axis(1));
        let w = ndarray::Array1::from(uniform_vec(1701, c, -1.0, 1.0));
        for (name, a) in [("fortran", fortran), ("rows inverted", flipped_rows), ("columns inverted", flipped_cols)] {
            let want = a.as_standard_layout().into_owned().into_dyn();
            let what = |op: &str| format!("{op}, {name} ({ctx})");
            let x = Array::from_array(a.clone());
            assert_exact(&what("identity"), &ev(&(&x * 1.0)), &want);
            assert_exact(&what("x + row"), &ev(&(&x + &Array::from_array(w.clone()))), &(&want + &w.clone().into_dyn()));
            assert_exact(&what("where"), &ev(&where_(&x.gt(0.0), &x, 0.0)), &want.mapv(|v| if v > 0.0 { v } else { 0.0 }));
            assert_exact(&what("t"), &ev(&x.t()), &want.t().to_owned());
            assert_exact(&what("slice_rows"), &ev(&x.slice_rows(100..700).unwrap()), &want.slice_axis(ndarray::Axis(0), ndarray::Slice::from(100..700)).to_owned());
            let all: Vec<f64> = want.iter().copied().collect();
            assert_sum(&what("sum"), x.sum_lazy().to_scalar().unwrap(), &all);
            let wc = columns(&want);
            let s0 = ev(&x.sum_axis(Axis(0)));
            let m0 = ev(&x.min_axis(Axis(0)));
            for (j, col) in wc.iter().enumerate() {
                assert_sum(&what("sum_axis(0)"), s0[[j]], col);
                assert_eq!(m0[[j]], col.iter().copied().fold(f64::INFINITY, f64::min), "{}", what("min_axis(0)"));
            }
            let s1 = ev(&x.sum_axis(Axis(1)));
            for (i, row) in rows(&want).iter().enumerate() {
                assert_sum(&what("sum_axis(1)"), s1[[i]], row);
            }
            let got = ev(&x.dot(&Array::from_array(w.clone())));
            let want_mv = want.clone().into_dimensionality::<ndarray::Ix2>().unwrap().dot(&w).into_dyn();
            let scale = want.mapv(f64::abs).into_dimensionality::<ndarray::Ix2>().unwrap().dot(&w.mapv(f64::abs)).into_dyn();
            assert_product(&what("matvec"), &got, &want_mv, &scale);
            assert_eq!(x.max_lazy().unwrap().to_scalar().unwrap(), all.iter().copied().fold(f64::NEG_INFINITY, f64::max), "{}", what("max"));
        }
        // A 1-d array with a negative stride.
        let mut a = ndarray::Array1::from(uniform_vec(1702, N, -1.0, 1.0));
        a.invert_axis(ndarray::Axis(0));
        let want = a.as_standard_layout().into_owned().into_dyn();
        let x = Array::from_array(a);
        assert_exact(&format!("1-d reversed ({ctx})"), &ev(&(&x.abs() * 2.0)), &want.mapv(|v| v.abs() * 2.0));
        assert_sum(&format!("1-d reversed sum ({ctx})"), x.sum_lazy().to_scalar().unwrap(), &want.iter().copied().collect::<Vec<_>>());
    });
}

#[test]
fn dbscan_neighbourhoods_and_labels() {
    each_session(|ctx| {
        // Blobs of 2-d points around 7 centres, spread so that some points are noise; eps
        // away from every pair's distance (checked), so rounding cannot move a neighbour.
        for (k, n) in [997usize, 130, 64, 1].into_iter().enumerate() {
            let raw = mixed_vec(900 + k as u64, 2 * n, -1.0, 1.0, false);
            let x = ndarray::Array2::from_shape_fn((n, 2), |(i, c)| raw[2 * i + c] * 0.8 + ((i % 7) as f64) * if c == 0 { 3.0 } else { -2.0 });
            let eps = 0.35;
            let margin = x.rows().into_iter().flat_map(|a| x.rows().into_iter().map(move |b| ((&a - &b).mapv(|v| v * v).sum() - eps * eps).abs())).fold(f64::INFINITY, f64::min);
            assert!(margin > 1e-9, "test points too near the boundary: {margin:e}");
            let sq = bach::ml::numerics::row_sq_norms(x.view());
            let want_bits = bach::ml::numerics::radius_bits(x.view(), sq.view(), eps);
            let min_samples = if n > 500 { 16 } else { 3 };
            let want = bach::ml::numerics::dbscan_labels(want_bits.view(), min_samples).into_dyn();
            let lazy_x = lazy(&x.into_dyn());
            let got_bits = ev(&bach::ml::radius_neighbours(&lazy_x, eps).unwrap());
            assert_eq!(got_bits, want_bits.into_dyn(), "radius_neighbours of {n} points ({ctx})");
            let got = ev(&bach::ml::Dbscan::params(eps, min_samples).fit_predict(&lazy_x).unwrap());
            assert_eq!(got, want, "Dbscan of {n} points ({ctx})");
            if n > 100 {
                let noise = want.iter().filter(|&&l| l == -1).count();
                assert!(noise > 0 && noise < n / 4 && want.iter().any(|&l| l >= 6), "{ctx}: clusters and some noise expected, got {want}");
            }
        }
    });
}

#[test]
fn symmetric_eigen_of_gram_matrices() {
    each_session(|ctx| {
        for (k, (n, d)) in [(300usize, 24usize), (50, 5), (7, 1), (0, 3)].into_iter().enumerate() {
            let x: ArrayD<f64> = input(950 + k as u64, &[n, d], -2.0, 2.0, false);
            let x2 = x.clone().into_dimensionality::<ndarray::Ix2>().unwrap();
            let g = x2.t().dot(&x2);
            let (values, vectors) = bach::ml::numerics::symmetric_eigen(g.view());
            let got = ev(&bach::ml::symmetric_eigen(&lazy(&g.clone().into_dyn())).unwrap());
            assert_eq!(got.shape(), &[d + 1, d], "{ctx}");
            let top = values.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
            for (j, (&g_, &w)) in got.slice(ndarray::s![0, ..]).iter().zip(&values).enumerate() {
                assert!((g_ - w).abs() <= 1e-11 * top, "eigenvalue {j} of {d} x {d} ({ctx}): {g_} vs {w}");
            }
            if n < d {
                // Rank below d (the 0 x 3 input's Gram matrix is zero): a repeated eigenvalue,
                // whose vectors are any orthonormal basis of its eigenspace (the GPU's need not
                // be the CPU's). Check G v = lambda v and V^T V = I.
                let v = got.slice(ndarray::s![1.., ..]).t().to_owned().into_dimensionality::<ndarray::Ix2>().unwrap();
                let lambda = got.slice(ndarray::s![0, ..]).to_owned().into_dimensionality::<ndarray::Ix1>().unwrap();
                let residual = (&g.dot(&v) - &(&v * &lambda)).mapv(f64::abs).fold(0.0f64, |m, &x| m.max(x));
                let gram = (&v.t().dot(&v) - &ndarray::Array2::<f64>::eye(d)).mapv(f64::abs).fold(0.0f64, |m, &x| m.max(x));
                assert!(residual <= 1e-10 * top.max(1.0) && gram <= 1e-12, "{d} x {d} of rank {n} ({ctx}): |G V - V L| = {residual:e}, |V^T V - I| = {gram:e}");
                continue;
            }
            // Random Gram matrices of full rank have distinct eigenvalues: each vector is
            // determined up to sign, and both sides sign it the same way.
            for i in 0..d {
                for (c, (&g_, &w)) in got.slice(ndarray::s![1 + i, ..]).iter().zip(vectors.column(i)).enumerate() {
                    assert!((g_ - w).abs() <= 1e-8, "vector {i}, entry {c} of {d} x {d} ({ctx}): {g_} vs {w}");
                }
            }
        }
        // A NaN in the lower triangle: all NaN; one in the upper triangle is not read.
        let mut m = ndarray::Array2::<f64>::eye(3);
        m[[2, 0]] = f64::NAN;
        let got = ev(&bach::ml::symmetric_eigen(&lazy(&m.clone().into_dyn())).unwrap());
        assert!(got.iter().all(|v| v.is_nan()), "{ctx}: {got}");
        m[[2, 0]] = 0.0;
        m[[0, 2]] = f64::NAN;
        let got = ev(&bach::ml::symmetric_eigen(&lazy(&m.into_dyn())).unwrap());
        assert!(got.iter().all(|v| v.is_finite()) && got[[0, 0]] == 1.0, "{ctx}: {got}");
    });
}

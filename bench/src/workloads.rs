//! The paper's workloads, each as the natural eager ndarray program (`cpu`) and the same
//! program on bach's lazy arrays (`bach`). Formulas and constants: shared/workloads.md.

use std::collections::BTreeMap;

use bach::random::RandomState;
use ndarray::{ArcArray, Array1, IxDyn};

/// Named 1-D inputs or outputs, in a fixed order.
pub type Columns = BTreeMap<&'static str, Array1<f64>>;

/// Where a run's inputs come from (`--inputs`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Inputs {
    /// The paper's all-constant reference inputs, in host memory.
    Reference,
    /// Uniform random inputs in each column's range (numpy's RandomState), in host memory.
    Random(u32),
    /// Evenly spaced columns over each input's range, in the other direction every second
    /// column. bach makes them itself (`Array::linspace`), where they are first used: on an
    /// accelerator no input is copied in. The other modes get the same columns in memory.
    Lazy,
}

impl Inputs {
    pub fn describe(self) -> String {
        match self {
            Inputs::Reference => "reference".into(),
            Inputs::Random(seed) => format!("random (seed {seed})"),
            Inputs::Lazy => "lazy (linspace, made by bach where first used)".into(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    BlackScholes,
    Haversine,
}

impl Workload {
    pub fn parse(s: &str) -> Result<Self, String> {
        match s {
            "black-scholes" => Ok(Workload::BlackScholes),
            "haversine" => Ok(Workload::Haversine),
            _ => Err(format!("unknown workload `{s}` (known: black-scholes, haversine, crime-index, dbscan, pca-knn, tsvd)")),
        }
    }
    pub fn name(self) -> &'static str {
        match self {
            Workload::BlackScholes => "black-scholes",
            Workload::Haversine => "haversine",
        }
    }

    /// The input columns in host memory (for [`Inputs::Lazy`], the values bach makes).
    pub fn inputs(self, n: usize, inputs: Inputs) -> Columns {
        let mut rs = match inputs {
            Inputs::Random(seed) => Some(RandomState::new(seed)),
            _ => None,
        };
        self.spec()
            .iter()
            .enumerate()
            .map(|(i, &(name, reference, lo, hi))| {
                let col = match (inputs, rs.as_mut()) {
                    (Inputs::Lazy, _) => {
                        let (start, end) = lazy_range(i, lo, hi);
                        Array1::linspace(start, end, n)
                    }
                    (_, Some(rs)) => Array1::from_iter((0..n).map(|_| rs.uniform(lo, hi))),
                    (_, None) => Array1::from_elem(n, reference),
                };
                (name, col)
            })
            .collect()
    }

    /// [`Inputs::Lazy`]: the input columns as lazy `linspace` arrays of the current session,
    /// made where their first user runs.
    pub fn lazy_inputs(self, n: usize) -> BTreeMap<&'static str, bach::Array<f64>> {
        self.spec()
            .iter()
            .enumerate()
            .map(|(i, &(name, _, lo, hi))| {
                let (start, end) = lazy_range(i, lo, hi);
                (name, bach::Array::linspace(start, end, n).into_dyn())
            })
            .collect()
    }

    /// The names of the input columns.
    pub fn input_names(self) -> Vec<&'static str> {
        self.spec().iter().map(|s| s.0).collect()
    }

    /// (name, reference value, random low, random high) per input column.
    fn spec(self) -> &'static [(&'static str, f64, f64, f64)] {
        match self {
            Workload::BlackScholes => &[("price", 4.0, 10.0, 50.0), ("strike", 4.0, 10.0, 50.0), ("t", 4.0, 1.0, 2.0), ("rate", 4.0, 0.01, 0.05), ("vol", 4.0, 0.1, 0.5)],
            Workload::Haversine => {
                &[("lat2", 0.0698132, -std::f64::consts::FRAC_PI_2, std::f64::consts::FRAC_PI_2), ("lon2", 0.0698132, -std::f64::consts::PI, std::f64::consts::PI)]
            }
        }
    }

    /// The eager ndarray program.
    pub fn cpu(self, inp: &Columns) -> Columns {
        match self {
            Workload::BlackScholes => {
                let (price, strike, t, rate, vol) = (&inp["price"], &inp["strike"], &inp["t"], &inp["rate"], &inp["vol"]);
                let rsig = vol * vol * C05 + rate;
                let vol_sqrt = t.mapv(f64::sqrt) * vol;
                let d1 = ((price / strike).mapv(f64::log2) + &rsig * t) / &vol_sqrt;
                let d2 = &d1 - &vol_sqrt;
                let big_d1 = (&d1 * INVSQRT2).mapv(libm::erf) * C05 + C05;
                let big_d2 = (&d2 * INVSQRT2).mapv(libm::erf) * C05 + C05;
                let e_rt = (-rate * t).mapv(f64::exp);
                let call = price * &big_d1 - &e_rt * strike * &big_d2;
                let put = &e_rt * strike * (C10 - &big_d2) - price * (C10 - &big_d1);
                [("call", call), ("put", put)].into_iter().collect()
            }
            Workload::Haversine => {
                let (lat2, lon2) = (&inp["lat2"], &inp["lon2"]);
                let dlat = ((lat2 - LAT1) / 2.0).mapv(f64::sin).mapv(|x| x.powi(2));
                let dlon = ((lon2 - LON1) / 2.0).mapv(f64::sin).mapv(|x| x.powi(2));
                let a = dlat + lat2.mapv(f64::cos) * LAT1.cos() * dlon;
                let out = a.mapv(f64::sqrt).mapv(f64::asin) * 2.0 * MILES;
                [("distance", out)].into_iter().collect()
            }
        }
    }

    /// The same program on bach's lazy arrays (only the array type changed), not evaluated.
    pub fn bach_graph(self, inp: &BTreeMap<&'static str, bach::Array<f64>>) -> Vec<(&'static str, bach::Array<f64>)> {
        match self {
            Workload::BlackScholes => {
                let (price, strike, t, rate, vol) = (&inp["price"], &inp["strike"], &inp["t"], &inp["rate"], &inp["vol"]);
                let rsig = vol * vol * C05 + rate;
                let vol_sqrt = t.sqrt() * vol;
                let d1 = ((price / strike).log2() + &rsig * t) / &vol_sqrt;
                let d2 = &d1 - &vol_sqrt;
                let big_d1 = (&d1 * INVSQRT2).erf() * C05 + C05;
                let big_d2 = (&d2 * INVSQRT2).erf() * C05 + C05;
                let e_rt = (-rate * t).exp();
                let call = price * &big_d1 - &e_rt * strike * &big_d2;
                let put = &e_rt * strike * (C10 - &big_d2) - price * (C10 - &big_d1);
                vec![("call", call), ("put", put)]
            }
            Workload::Haversine => {
                let (lat2, lon2) = (&inp["lat2"], &inp["lon2"]);
                let dlat = ((lat2 - LAT1) / 2.0).sin().powi(2);
                let dlon = ((lon2 - LON1) / 2.0).sin().powi(2);
                let a = dlat + lat2.cos() * LAT1.cos() * dlon;
                let out = a.sqrt().asin() * 2.0 * MILES;
                vec![("distance", out)]
            }
        }
    }

    /// The same program on bach's lazy arrays, evaluated to host arrays.
    pub fn bach(self, inp: &BTreeMap<&'static str, bach::Array<f64>>) -> bach::Result<BTreeMap<&'static str, ArcArray<f64, IxDyn>>> {
        let outputs = self.bach_graph(inp);
        let handles: Vec<&dyn bach::AsLazy> = outputs.iter().map(|(_, a)| a as &dyn bach::AsLazy).collect();
        bach::evaluate(&handles)?;
        outputs.into_iter().map(|(name, a)| Ok((name, a.eval()?))).collect()
    }
}

/// Column `i` of [`Inputs::Lazy`] runs from `lo` to `hi`, or back when `i` is odd (so that
/// `price / strike` is not 1 everywhere).
fn lazy_range(i: usize, lo: f64, hi: f64) -> (f64, f64) {
    if i.is_multiple_of(2) {
        (lo, hi)
    } else {
        (hi, lo)
    }
}

// Black-Scholes constants as in the original (unusual values kept so numbers compare).
const C05: f64 = 3.0;
const C10: f64 = 1.5;
const INVSQRT2: f64 = std::f64::consts::FRAC_1_SQRT_2;
/// (c05, c10, invsqrt2), for the hand-written CUDA kernel.
pub const BLACK_SCHOLES_CONSTANTS: (f64, f64, f64) = (C05, C10, INVSQRT2);
// Haversine constants.
const LAT1: f64 = 0.70984286;
const LON1: f64 = 1.23892197;
const MILES: f64 = 3959.0;
/// (lat1, lon1, miles), for the hand-written CUDA kernel.
pub const HAVERSINE_CONSTANTS: (f64, f64, f64) = (LAT1, LON1, MILES);

//! The scaling sweep (the paper's Figure 3): each mode of a workload (plain ndarray, Bach,
//! hand-written CUDA, ...) timed over sizes 2^from..=2^to. A mode stops at the first size
//! that fails (out of memory, or another error) or that passes the time limit, and sizes
//! whose predicted time (twice the last) would pass it are not started. The result is a
//! table, JSON and a log-log chart with the size where the accelerator starts paging marked.
//!
//! ```
//! use bach::prelude::*;
//! use bach::sweep::{timed, Sweep};
//! let result = Sweep::new("sum of squares", 8..=10)
//!     .mode("cpu", |k| {
//!         let x = ndarray::Array1::<f64>::linspace(0.0, 1.0, 1 << k);
//!         timed(|| Ok((&x * &x).sum()))
//!     })
//!     .mode("bach", |k| {
//!         let x = Array::linspace(0.0, 1.0, 1 << k);
//!         timed(|| (&x * &x).sum_lazy().to_scalar())
//!     })
//!     .run();
//! assert_eq!(result.ran("bach").len(), 3);
//! assert!(result.svg().contains("<svg"));
//! ```

use std::fmt::{self, Write as _};
use std::ops::RangeInclusive;
use std::sync::Arc;
use std::time::Instant;

use bach_runtime::chart::{short_name, sweep_svg, SweepSeries};
use bach_runtime::device::panic_text;
use bach_runtime::{json, session, units, BachError, DeviceKind, Session};

/// Seconds `f` took; its error, if it failed. Time only the work: make inputs before.
pub fn timed<T>(f: impl FnOnce() -> bach_runtime::Result<T>) -> bach_runtime::Result<f64> {
    let t0 = Instant::now();
    let value = f()?;
    let secs = t0.elapsed().as_secs_f64();
    drop(value);
    Ok(secs)
}

/// What one mode did at one size.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Median seconds of the runs; `paged`: a Bach evaluation in it paged data through the
    /// accelerator (the watched session's plan said so).
    Ran { seconds: f64, paged: bool },
    /// The device ran out of memory: the mode stops here.
    OutOfMemory(String),
    /// Took longer than the time limit, or would have (predicted from the size before): the
    /// mode stops here.
    TimeLimit(String),
    /// Another error: the mode stops here.
    Failed(String),
}

impl Outcome {
    fn stop_reason(&self) -> Option<String> {
        match self {
            Outcome::Ran { .. } => None,
            Outcome::OutOfMemory(_) => Some("out of memory".into()),
            Outcome::TimeLimit(_) => Some("time limit".into()),
            Outcome::Failed(_) => Some("failed".into()),
        }
    }
    fn text(&self) -> String {
        match self {
            Outcome::Ran { seconds, paged } => format!("{}{}", bach_runtime::cost::seconds(*seconds), if *paged { " (paged)" } else { "" }),
            Outcome::OutOfMemory(why) => format!("stopped: out of memory ({why})"),
            Outcome::TimeLimit(why) => format!("stopped: {why}"),
            Outcome::Failed(why) => format!("stopped: failed ({why})"),
        }
    }
}

/// One mode at one size.
#[derive(Clone, Debug, PartialEq)]
pub struct Point {
    pub mode: String,
    pub log2: u32,
    pub outcome: Outcome,
}

type Timer<'a> = Box<dyn FnMut(u32) -> bach_runtime::Result<f64> + 'a>;

/// A sweep being set up: [`Sweep::mode`] for each line, then [`Sweep::run`].
pub struct Sweep<'a> {
    workload: String,
    sizes: RangeInclusive<u32>,
    x_desc: String,
    time_limit: f64,
    repeat: usize,
    modes: Vec<(String, Timer<'a>)>,
    watch: Arc<Session>,
    progress: bool,
}

impl<'a> Sweep<'a> {
    /// Sizes 2^k for k in `log2_sizes`. Defaults: 60 s time limit per point, one run per
    /// point, x axis "elements", watching the current session for paging.
    pub fn new(workload: &str, log2_sizes: RangeInclusive<u32>) -> Self {
        Sweep { workload: workload.into(), sizes: log2_sizes, x_desc: "elements".into(), time_limit: 60.0, repeat: 1, modes: vec![], watch: session::current(), progress: false }
    }
    /// A line: `time(k)` makes its inputs of size 2^k and returns the seconds the work took
    /// (see [`timed`]), or the error that stops the mode.
    pub fn mode(mut self, name: &str, time: impl FnMut(u32) -> bach_runtime::Result<f64> + 'a) -> Self {
        self.modes.push((name.into(), Box::new(time)));
        self
    }
    /// Stop a mode at the first size that takes longer than `seconds` (or would: twice the
    /// size before).
    pub fn time_limit(mut self, seconds: f64) -> Self {
        self.time_limit = seconds;
        self
    }
    /// Runs per point (the median is kept); a mode's first size gets one more, not counted.
    pub fn repeat(mut self, runs: usize) -> Self {
        self.repeat = runs.max(1);
        self
    }
    /// What the size counts (the x axis): "elements", "rows", ...
    pub fn x_desc(mut self, what: &str) -> Self {
        self.x_desc = what.into();
        self
    }
    /// The session whose evaluations tell when the accelerator paged (default: the current).
    pub fn watch(mut self, session: &Arc<Session>) -> Self {
        self.watch = session.clone();
        self
    }
    /// Print a line per point to stderr as it finishes (for long sweeps from the harness).
    pub fn progress(mut self, on: bool) -> Self {
        self.progress = on;
        self
    }

    /// Run every mode over the sizes, smallest first, the modes interleaved per size (so a
    /// machine's slow minute hits them alike).
    pub fn run(mut self) -> SweepResult {
        let mut points = vec![];
        let mut stopped = vec![false; self.modes.len()];
        let mut last = vec![None::<f64>; self.modes.len()];
        for k in self.sizes.clone() {
            for (m, (name, time)) in self.modes.iter_mut().enumerate() {
                if stopped[m] {
                    continue;
                }
                let outcome = match last[m] {
                    Some(s) if 2.0 * s > self.time_limit => {
                        Outcome::TimeLimit(format!("2^{k} would take about {} (twice 2^{}), past the {} limit", fmt_s(2.0 * s), k - 1, fmt_s(self.time_limit)))
                    }
                    _ => point(time.as_mut(), k, self.repeat, &self.watch, self.time_limit, last[m].is_none()),
                };
                if let Outcome::Ran { seconds, .. } = outcome {
                    last[m] = Some(seconds);
                } else {
                    stopped[m] = true;
                }
                if self.progress {
                    eprintln!("sweep {} {name} 2^{k}: {}", self.workload, outcome.text());
                }
                points.push(Point { mode: name.clone(), log2: k, outcome });
            }
        }
        let memory = accelerator_memory(&self.watch);
        SweepResult {
            workload: self.workload,
            x_desc: self.x_desc,
            time_limit: self.time_limit,
            modes: self.modes.into_iter().map(|(n, _)| n).collect(),
            points,
            accelerator_memory: memory,
        }
    }
}

fn fmt_s(s: f64) -> String {
    if s >= 1.0 && s.fract() == 0.0 {
        format!("{s} s")
    } else {
        bach_runtime::cost::seconds(s)
    }
}

/// One size of one mode: `repeat` runs (median), checked against the time limit after each;
/// `warm_up`: one more run first, not counted (a mode's first size pays for first touches).
fn point(time: &mut dyn FnMut(u32) -> bach_runtime::Result<f64>, k: u32, repeat: usize, watch: &Session, limit: f64, warm_up: bool) -> Outcome {
    let before = watch.trace().last().map(|e| e.eval);
    let mut runs = vec![];
    for i in 0..repeat + usize::from(warm_up) {
        // A panic in the mode's code stops the mode, not the sweep (or the notebook's cell).
        let run = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| time(k)));
        match run {
            Ok(Ok(s)) if warm_up && i == 0 => {
                if s > limit {
                    return Outcome::TimeLimit(format!("2^{k} took {}, past the {} limit", fmt_s(s), fmt_s(limit)));
                }
            }
            Ok(Ok(s)) => runs.push(s),
            Ok(Err(e @ BachError::DeviceOutOfMemory { .. })) => return Outcome::OutOfMemory(e.to_string()),
            Ok(Err(e)) => return Outcome::Failed(e.to_string()),
            Err(panic) => {
                let msg = panic_text(panic.as_ref()).to_string();
                let oom = msg.to_lowercase().contains("out of memory") || msg.contains("memory allocation");
                return if oom { Outcome::OutOfMemory(msg) } else { Outcome::Failed(format!("panicked: {msg}")) };
            }
        }
        if runs.last().is_some_and(|&s| s > limit) {
            return Outcome::TimeLimit(format!("2^{k} took {}, past the {} limit", fmt_s(*runs.last().expect("a run")), fmt_s(limit)));
        }
    }
    runs.sort_by(f64::total_cmp);
    let paged = watch.trace().evals().filter(|e| before.is_none_or(|b| e.eval > b)).any(|e| e.plans.iter().any(|p| p.stages.iter().any(|s| s.paged)));
    Outcome::Ran { seconds: runs[runs.len() / 2], paged }
}

/// The memory the watched session's accelerator plans with (its cap, if lower), if it has one.
fn accelerator_memory(s: &Session) -> Option<(String, u64)> {
    let cap = s.config().memory_cap;
    let d = s.devices().profiles().into_iter().find(|d| d.kind != DeviceKind::Cpu && !d.is_hypothetical())?;
    let m = d.memory_bytes?;
    Some((d.name, cap.map_or(m, |c| c.min(m))))
}

/// What a sweep measured: [`fmt::Display`] is the table (sizes down, modes across);
/// [`SweepResult::svg`] the chart, [`SweepResult::to_json`] the table as JSON.
#[derive(Clone, Debug, PartialEq)]
pub struct SweepResult {
    pub workload: String,
    pub x_desc: String,
    pub time_limit: f64,
    pub modes: Vec<String>,
    pub points: Vec<Point>,
    /// The accelerator of the watched session and the memory it plans with.
    pub accelerator_memory: Option<(String, u64)>,
}

impl SweepResult {
    /// (log2 size, seconds) of each size `mode` ran.
    pub fn ran(&self, mode: &str) -> Vec<(u32, f64)> {
        self.points
            .iter()
            .filter(|p| p.mode == mode)
            .filter_map(|p| match p.outcome {
                Outcome::Ran { seconds, .. } => Some((p.log2, seconds)),
                _ => None,
            })
            .collect()
    }

    /// Where `mode` stopped and why, if it did.
    pub fn stopped(&self, mode: &str) -> Option<&Point> {
        self.points.iter().find(|p| p.mode == mode && p.outcome.stop_reason().is_some())
    }

    /// The smallest size at which an evaluation paged through the accelerator.
    pub fn paging_from(&self) -> Option<u32> {
        self.points.iter().filter(|p| matches!(p.outcome, Outcome::Ran { paged: true, .. })).map(|p| p.log2).min()
    }

    /// Runtime against size, log-log, one line per mode; the paging size marked.
    pub fn svg(&self) -> String {
        let series: Vec<SweepSeries> = self
            .modes
            .iter()
            .map(|m| SweepSeries {
                mode: m.clone(),
                points: self
                    .points
                    .iter()
                    .filter(|p| &p.mode == m)
                    .filter_map(|p| match p.outcome {
                        Outcome::Ran { seconds, paged } => Some((
                            p.log2,
                            seconds,
                            format!("{m} at 2^{} {}: {}{}", p.log2, self.x_desc, fmt_s(seconds), if paged { ", paged through the accelerator" } else { "" }),
                        )),
                        _ => None,
                    })
                    .collect(),
                stopped: self.stopped(m).map(|p| (p.log2, p.outcome.stop_reason().expect("a stop"))),
            })
            .collect();
        let paging = self.paging_from().map(|k| {
            let memory = self.accelerator_memory.as_ref().map(|(d, b)| format!(" ({}: {})", short_name(d), units::bytes(*b as usize))).unwrap_or_default();
            (k, format!("paging from 2^{k}{memory}"))
        });
        sweep_svg(&format!("{}: time against size", self.workload), &self.x_desc, &series, paging)
    }

    /// The table as one JSON object: workload, x, time limit, accelerator, and one row per
    /// mode and size (`seconds` and `paged`, or `stopped` and `why`).
    pub fn to_json(&self) -> String {
        let mut rows = vec![];
        for p in &self.points {
            let mut row = format!("{{\"mode\":{},\"log2\":{},\"size\":{}", json::quote(&p.mode), p.log2, 1u64 << p.log2);
            match &p.outcome {
                Outcome::Ran { seconds, paged } => {
                    let _ = write!(row, ",\"seconds\":{},\"paged\":{paged}", number(*seconds));
                }
                other => {
                    let _ = write!(row, ",\"stopped\":{},\"why\":{}", json::quote(&other.stop_reason().expect("a stop")), json::quote(&other.text()));
                }
            }
            row.push('}');
            rows.push(row);
        }
        let accel = match &self.accelerator_memory {
            Some((d, b)) => format!("{{\"device\":{},\"memory_bytes\":{b}}}", json::quote(d)),
            None => "null".into(),
        };
        let paging = self.paging_from().map_or("null".into(), |k| k.to_string());
        format!(
            "{{\"workload\":{},\"x\":{},\"time_limit_seconds\":{},\"accelerator\":{accel},\"paging_from_log2\":{paging},\"points\":[\n{}\n]}}\n",
            json::quote(&self.workload),
            json::quote(&self.x_desc),
            number(self.time_limit),
            rows.join(",\n")
        )
    }

    /// How evcxr shows it when it ends a cell: the table as text, then the chart.
    pub fn evcxr_display(&self) {
        crate::notebook::display(&[("text/plain", self.to_string())]);
        crate::notebook::protocol::show_svg(self.svg(), "Bach scaling sweep");
    }
}

/// A JSON number (`null` for a value JSON cannot hold).
fn number(x: f64) -> String {
    json::number(x).unwrap_or_else(|| "null".into())
}

impl fmt::Display for SweepResult {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        writeln!(f, "{}: seconds per run at each size (time limit {} per point)", self.workload, fmt_s(self.time_limit))?;
        let mut header = format!("{:>8}", self.x_desc.chars().take(8).collect::<String>());
        for m in &self.modes {
            let _ = write!(header, "  {m:>18}");
        }
        writeln!(f, "{header}")?;
        let sizes: std::collections::BTreeSet<u32> = self.points.iter().map(|p| p.log2).collect();
        for k in sizes {
            let mut line = format!("{:>8}", format!("2^{k}"));
            for m in &self.modes {
                let cell = self.points.iter().find(|p| &p.mode == m && p.log2 == k).map_or(String::from("-"), |p| match &p.outcome {
                    Outcome::Ran { seconds, paged } => format!("{}{}", fmt_s(*seconds), if *paged { " paged" } else { "" }),
                    other => format!("stop: {}", other.stop_reason().expect("a stop")),
                });
                let _ = write!(line, "  {cell:>18}");
            }
            writeln!(f, "{line}")?;
        }
        for m in &self.modes {
            if let Some(p) = self.stopped(m) {
                writeln!(f, "{m} stopped at 2^{}: {}", p.log2, p.outcome.text())?;
            }
        }
        match (self.paging_from(), &self.accelerator_memory) {
            (Some(k), Some((d, b))) => writeln!(f, "paging from 2^{k}: larger inputs do not fit the {} that {} plans with", units::bytes(*b as usize), short_name(d))?,
            (Some(k), None) => writeln!(f, "paging from 2^{k}")?,
            _ => {}
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::Array;
    use bach_runtime::{DeviceChoice, Devices};

    #[test]
    fn a_mode_stops_at_the_time_limit_and_errors_and_the_rest_go_on() {
        let s = Session::with_devices(Devices::select(DeviceChoice::Cpu).unwrap());
        let result = Sweep::new("toy", 1..=6)
            .watch(&s)
            .time_limit(10.0)
            .mode("linear", |k| Ok(f64::from(1u32 << k) * 0.4)) // 0.8 .. 12.8 s, not slept
            .mode("oom", |k| if k < 3 { Ok(1e-3) } else { Err(BachError::DeviceOutOfMemory { device: "gpu".into(), detail: "asked 2 GiB".into() }) })
            .mode("panics", |_| -> bach_runtime::Result<f64> { panic!("index out of bounds") })
            .run();
        // 2^4 takes 6.4 s, so 2^5 (about 12.8 s) is not started.
        assert_eq!(result.ran("linear").iter().map(|p| p.0).collect::<Vec<_>>(), vec![1, 2, 3, 4]);
        let stop = result.stopped("linear").unwrap();
        assert!(stop.log2 == 5 && matches!(&stop.outcome, Outcome::TimeLimit(w) if w.contains("would take")), "{stop:?}");
        assert!(matches!(result.stopped("oom").unwrap().outcome, Outcome::OutOfMemory(_)));
        assert_eq!(result.stopped("oom").unwrap().log2, 3);
        assert!(matches!(&result.stopped("panics").unwrap().outcome, Outcome::Failed(w) if w.contains("index out of bounds")));
        let table = result.to_string();
        assert!(table.contains("stop: time limit") && table.contains("oom stopped at 2^3: stopped: out of memory"), "{table}");
        let json = result.to_json();
        let v: serde_json::Value = serde_json::from_str(&json).expect("valid JSON");
        assert_eq!(v["points"].as_array().unwrap().len(), 4 + 1 + 3 + 1);
        assert_eq!(v["points"][0]["seconds"], 0.8);
        assert_eq!(v["paging_from_log2"], serde_json::Value::Null);
    }

    #[test]
    fn a_paging_evaluation_is_found_in_the_watched_session_and_marked() {
        let s = Session::with_devices(Devices::select(DeviceChoice::Emulated(Some(1 << 20))).unwrap());
        // Greedy: every op that has an accelerator version runs there.
        s.update_config(|c| c.policy = bach_runtime::Policy::Greedy);
        let result = bach_runtime::with_session(&s, || {
            Sweep::new("exp", 14..=16)
                .mode("bach", |k| {
                    let x = Array::linspace(0.0, 1.0, 1 << k);
                    timed(|| (&x * 2.0).exp().sum_lazy().to_scalar())
                })
                .run()
        });
        assert_eq!(result.ran("bach").len(), 3);
        // 2^16 f64 is 512 KiB per array: inputs, temporaries and result pass the 1 MiB device.
        let k = result.paging_from().expect("the largest size pages");
        assert!(k >= 15, "2^14 (128 KiB per array) fits: {result}");
        let svg = result.svg();
        assert!(svg.contains(&format!("paging from 2^{k}")) && svg.contains("emulated accelerator: 1.0 MiB"), "{}", result.to_string());
    }
}

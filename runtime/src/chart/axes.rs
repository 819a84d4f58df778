//! The chart's axes: time in ms (with idle stretches between evaluations cut short) and lanes.

use super::*;

/// One stretch of real time shown at full scale.
#[derive(Clone, Debug)]
pub(super) struct Segment {
    /// Real ms since the chart's origin.
    pub(super) start: f64,
    pub(super) end: f64,
    /// Where it starts on the display axis.
    pub(super) at: f64,
}

/// Real time (ms since the chart's origin) to position, with long idle gaps cut short.
#[derive(Clone, Debug)]
pub(super) struct TimeAxis {
    pub(super) segments: Vec<Segment>,
    /// Display length.
    pub(super) total: f64,
}

impl TimeAxis {
    pub(super) fn linear(end: f64) -> Self {
        TimeAxis { segments: vec![Segment { start: 0.0, end, at: 0.0 }], total: end }
    }

    /// Busy intervals (sorted, disjoint) to an axis: gaps longer than a tenth of the busy time
    /// shrink to half that (and all of them together to at most a quarter of it).
    pub(super) fn with_gaps(busy: &[(f64, f64)]) -> Self {
        let busy_total: f64 = busy.iter().map(|(a, b)| b - a).sum::<f64>().max(1e-6);
        let cut = busy_total * 0.1;
        let cuts = busy.windows(2).filter(|w| w[1].0 - w[0].1 > cut).count().max(1);
        let shown = (cut * 0.5).min(busy_total * 0.25 / cuts as f64);
        let mut segments: Vec<Segment> = Vec::new();
        let mut at = 0.0;
        for &(s, e) in busy {
            if let Some(last) = segments.last_mut() {
                let gap = s - last.end;
                if gap <= cut {
                    at += gap + (e - s);
                    last.end = e;
                    continue;
                }
                at += shown;
            }
            segments.push(Segment { start: s, end: e, at });
            at += e - s;
        }
        if segments.is_empty() {
            return TimeAxis::linear(1e-3);
        }
        // The axis starts at the origin (0).
        let first = &mut segments[0];
        first.at = 0.0;
        let lead = first.start;
        first.start = 0.0;
        for s in segments.iter_mut().skip(1) {
            s.at += lead;
        }
        let last = segments.last().expect("non-empty");
        TimeAxis { total: last.at + (last.end - last.start), segments }
    }

    /// The real start and end of the axis.
    pub(super) fn real_range(&self) -> (f64, f64) {
        (self.segments[0].start, self.segments.last().expect("non-empty").end)
    }

    /// Idle gaps that were cut short: (real start, real end).
    pub(super) fn cuts(&self) -> Vec<(f64, f64)> {
        self.segments.windows(2).map(|w| (w[0].end, w[1].start)).collect()
    }

    /// Display position of a real time.
    pub(super) fn display(&self, t: f64) -> f64 {
        let i = self.segments.partition_point(|s| s.end < t);
        if i == self.segments.len() {
            let last = self.segments.last().expect("non-empty");
            return last.at + (last.end - last.start);
        }
        let s = &self.segments[i];
        if t >= s.start || i == 0 {
            return s.at + (t - s.start).max(0.0);
        }
        // Inside a cut gap: spread it linearly over its shortened width.
        let p = &self.segments[i - 1];
        let p_end = p.at + (p.end - p.start);
        let f = (t - p.end) / (s.start - p.end).max(1e-12);
        p_end + f * (s.at - p_end)
    }

    /// Position in pixels, unrounded, for pixel range `limit` (what [`Ranged::map`] rounds).
    pub(super) fn map_f(&self, t: f64, limit: (i32, i32)) -> f64 {
        limit.0 as f64 + (limit.1 - limit.0) as f64 * self.display(t) / self.total
    }
}

impl Ranged for TimeAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        self.map_f(*v, limit).round() as i32
    }

    fn key_points<Hint: KeyPointHint>(&self, hint: Hint) -> Vec<f64> {
        if matches!(hint.weight(), KeyPointWeight::Any) {
            return Vec::new();
        }
        let n = hint.max_num_points().max(2) as f64;
        let min_gap = self.total / n * 0.7;
        let mut out: Vec<f64> = Vec::new();
        for s in &self.segments {
            let share = ((s.end - s.start) / self.total * n).floor().max(1.0);
            let step = nice_step((s.end - s.start) / share);
            let mut k = (s.start / step).ceil();
            while k * step <= s.end + step * 1e-9 {
                let t = k * step;
                let d = self.display(t);
                if out.last().is_none_or(|&p| d - self.display(p) >= min_gap) {
                    out.push(t);
                }
                k += 1.0;
            }
        }
        out
    }

    fn range(&self) -> Range<f64> {
        let (a, b) = self.real_range();
        a..b
    }
}

/// A 1-2-5 step at least `raw`.
pub(super) fn nice_step(raw: f64) -> f64 {
    let raw = raw.max(1e-9);
    let mag = 10f64.powf(raw.log10().floor());
    [1.0, 2.0, 5.0, 10.0].iter().map(|m| m * mag).find(|&s| s >= raw * 0.999).unwrap_or(10.0 * mag)
}

/// Lanes stacked top to bottom: 0 is the top of the plot, `total` its bottom.
#[derive(Clone, Debug)]
pub(super) struct LaneAxis {
    pub(super) total: f64,
}

impl LaneAxis {
    /// `limit` is (bottom, top) in pixels, as plotters passes it for a y axis.
    pub(super) fn map_f(&self, v: f64, limit: (i32, i32)) -> f64 {
        limit.1 as f64 + (limit.0 - limit.1) as f64 * v / self.total
    }
}

impl Ranged for LaneAxis {
    type FormatOption = DefaultFormatting;
    type ValueType = f64;

    fn map(&self, v: &f64, limit: (i32, i32)) -> i32 {
        self.map_f(*v, limit).round() as i32
    }
    fn key_points<Hint: KeyPointHint>(&self, _hint: Hint) -> Vec<f64> {
        Vec::new()
    }
    fn range(&self) -> Range<f64> {
        0.0..self.total
    }
}

//! The trace in the Chrome trace event format (the JSON object form), which Perfetto
//! (ui.perfetto.dev) and chrome://tracing open: `:bach trace export FILE.json`.
//!
//! One process, "Bach session"; one thread (track) per lane of the timeline chart: each
//! device's compute (its parallel pieces on numbered tracks, since a track's slices must
//! nest), host→device and device→host copies, and an "evaluations" track with one slice per
//! evaluation. Each event is a complete event (`"ph": "X"`, microseconds since the session
//! started) named after its op (a copy: "copy <op>"), its category the kind of work, its
//! args the evaluation, cell, node, piece, bytes and device.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use super::model::{copy_lanes, lane_of, DeviceNames};
use crate::json::quote;
use crate::profile::DeviceProfile;
use crate::profile::CPU;
use crate::trace::{EvalTrace, Event, EventKind};

const PID: u32 = 1;
/// Tracks of one lane: `lane * TRACKS_PER_LANE + track`.
const TRACKS_PER_LANE: usize = 1000;
/// The evaluations' own track, first.
const EVAL_TID: usize = 0;

fn us(d: std::time::Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

fn category(k: EventKind) -> &'static str {
    match k {
        EventKind::Alloc => "alloc",
        EventKind::Transfer => "transfer",
        EventKind::Compute => "compute",
        EventKind::Merge => "merge",
    }
}

/// `evals` as a Chrome trace (JSON text).
pub fn chrome_trace(evals: &[&EvalTrace], devices: &[DeviceProfile]) -> String {
    let names = DeviceNames::new(devices);
    let mut ids: BTreeSet<_> = devices.iter().map(|d| d.id).collect();
    ids.insert(CPU);
    for e in evals.iter().flat_map(|e| e.events.iter()) {
        if e.kind != EventKind::Transfer {
            ids.insert(e.device);
        }
    }
    // Lanes as the chart has them: compute per device, then the copy lanes (lane 0 is the
    // evaluations' track).
    let mut compute = BTreeMap::new();
    let mut lane_names = vec!["evaluations".to_string()];
    for id in ids {
        compute.insert(id, lane_names.len());
        let n = names.name(id);
        lane_names.push(if id == CPU { n } else { format!("{n} compute") });
    }
    let mut copies = BTreeMap::new();
    for (key, label, _) in copy_lanes(devices, evals.iter().flat_map(|e| e.events.iter()), &names) {
        copies.insert(key, lane_names.len());
        lane_names.push(label);
    }

    let mut events: Vec<&Event> = evals.iter().flat_map(|e| e.events.iter()).collect();
    events.sort_by_key(|e| (e.start, e.end));
    // Greedy tracks per lane: an event goes on the first track free at its start.
    let mut track_ends: Vec<Vec<std::time::Duration>> = vec![Vec::new(); lane_names.len()];
    let mut out = String::from("{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    let _ = write!(out, "{{\"name\":\"process_name\",\"ph\":\"M\",\"pid\":{PID},\"args\":{{\"name\":\"Bach session\"}}}}");
    let mut body = String::new();
    for e in &events {
        let lane = lane_of(e, &compute, &copies);
        let ends = &mut track_ends[lane];
        let track = match ends.iter().position(|&end| end <= e.start) {
            Some(t) => t,
            None => {
                ends.push(e.start);
                ends.len() - 1
            }
        };
        ends[track] = e.end.max(e.start);
        let name = if e.kind == EventKind::Transfer { format!("copy {}", e.op) } else { e.op.to_string() };
        let mut args =
            format!("\"eval\":{},\"cell\":{},\"node\":{},\"piece\":{},\"bytes\":{},\"device\":{}", e.eval, e.cell, e.node, e.piece, e.bytes, quote(&names.name(e.device)));
        if let Some(to) = e.to {
            let _ = write!(args, ",\"to\":{}", quote(&names.name(to)));
        }
        let _ = write!(
            body,
            ",\n{{\"name\":{},\"cat\":\"{}\",\"ph\":\"X\",\"ts\":{:.3},\"dur\":{:.3},\"pid\":{PID},\"tid\":{},\"args\":{{{args}}}}}",
            quote(&name),
            category(e.kind),
            us(e.start),
            us(e.end.saturating_sub(e.start)),
            lane * TRACKS_PER_LANE + track
        );
    }
    for ev in evals {
        let why = ev.reason.as_deref().map(|r| format!(",\"reason\":{}", quote(r))).unwrap_or_default();
        let _ = write!(
            body,
            ",\n{{\"name\":{},\"cat\":\"evaluation\",\"ph\":\"X\",\"ts\":{:.3},\"dur\":{:.3},\"pid\":{PID},\"tid\":{EVAL_TID},\"args\":{{\"eval\":{},\"cell\":{},\"pieces\":{},\"events\":{}{why}}}}}",
            quote(&format!("eval {} (cell {})", ev.eval, ev.cell)),
            us(ev.start),
            us(ev.end.saturating_sub(ev.start)),
            ev.eval,
            ev.cell,
            ev.pieces,
            ev.events.len()
        );
    }
    // Track names and order: the evaluations first, then lane by lane.
    for (lane, name) in lane_names.iter().enumerate() {
        let tracks = track_ends[lane].len().max(1);
        for t in 0..tracks {
            let tid = lane * TRACKS_PER_LANE + t;
            let label = if t == 0 { name.clone() } else { format!("{name} #{}", t + 1) };
            let _ = write!(out, ",\n{{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":{PID},\"tid\":{tid},\"args\":{{\"name\":{}}}}}", quote(&label));
            let _ = write!(out, ",\n{{\"name\":\"thread_sort_index\",\"ph\":\"M\",\"pid\":{PID},\"tid\":{tid},\"args\":{{\"sort_index\":{tid}}}}}");
        }
    }
    out.push_str(&body);
    out.push_str("\n]}\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::profile::DeviceId;
    use std::time::Duration;

    fn event(kind: EventKind, device: usize, to: Option<usize>, start_us: u64, end_us: u64, piece: u32) -> Event {
        Event {
            eval: 1,
            op: "exp".into(),
            node: 3,
            cell: 2,
            device: DeviceId(device as u8),
            to: to.map(|t| DeviceId(t as u8)),
            piece,
            kind,
            start: Duration::from_micros(start_us),
            end: Duration::from_micros(end_us),
            bytes: 8192,
        }
    }

    #[test]
    fn a_trace_opens_as_chrome_trace_events_with_one_track_per_lane_and_nested_slices() {
        let eval = EvalTrace {
            eval: 1,
            cell: 2,
            start: Duration::from_micros(90),
            end: Duration::from_micros(400),
            pieces: 2,
            events: vec![
                // Two pieces at once on the CPU: two tracks.
                event(EventKind::Compute, 0, None, 100, 200, 0),
                event(EventKind::Compute, 0, None, 150, 250, 1),
                event(EventKind::Compute, 0, None, 260, 300, 2),
                event(EventKind::Transfer, 0, Some(1), 300, 320, 0),
                event(EventKind::Compute, 1, None, 320, 350, 0),
                event(EventKind::Transfer, 1, Some(0), 350, 390, 0),
            ],
            plans: vec![],
            stages: vec![],
            reason: Some("asked for".into()),
        };
        let json: serde_json::Value = serde_json::from_str(&chrome_trace(&[&eval], &[])).expect("valid JSON");
        let evs = json["traceEvents"].as_array().unwrap();
        let slices: Vec<&serde_json::Value> = evs.iter().filter(|e| e["ph"] == "X").collect();
        assert_eq!(slices.len(), 7, "six events and the evaluation");
        let track_names: BTreeMap<u64, String> =
            evs.iter().filter(|e| e["name"] == "thread_name").map(|e| (e["tid"].as_u64().unwrap(), e["args"]["name"].as_str().unwrap().to_string())).collect();
        let name_of = |s: &serde_json::Value| track_names[&s["tid"].as_u64().unwrap()].clone();
        let on = |cat: &str| slices.iter().filter(|s| s["cat"] == cat).map(|s| name_of(s)).collect::<Vec<_>>();
        assert_eq!(on("compute"), ["cpu", "cpu #2", "cpu", "device 1 compute"]);
        assert_eq!(on("transfer"), ["host→device", "device→host"]);
        assert_eq!(on("evaluation"), ["evaluations"]);
        let copy = slices.iter().find(|s| s["cat"] == "transfer").unwrap();
        assert_eq!((copy["name"].as_str(), copy["ts"].as_f64(), copy["dur"].as_f64()), (Some("copy exp"), Some(300.0), Some(20.0)));
        assert_eq!(copy["args"]["bytes"], 8192);
        // Slices on one track never overlap (Perfetto nests or cuts those).
        let mut by_tid: BTreeMap<u64, Vec<(f64, f64)>> = BTreeMap::new();
        for s in &slices {
            by_tid.entry(s["tid"].as_u64().unwrap()).or_default().push((s["ts"].as_f64().unwrap(), s["ts"].as_f64().unwrap() + s["dur"].as_f64().unwrap()));
        }
        for spans in by_tid.values_mut() {
            spans.sort_by(|a, b| a.0.total_cmp(&b.0));
            assert!(spans.windows(2).all(|w| w[0].1 <= w[1].0), "{spans:?}");
        }
    }
}

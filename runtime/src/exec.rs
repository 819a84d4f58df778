//! The executor: runs a [`Plan`] stage by stage. A stage with a split length is cut into
//! pieces that run in parallel (rayon); each piece goes through every op of the stage
//! before the next piece starts, so its intermediates stay in cache. Stage outputs are
//! merged with their split type. Every op, piece, transfer and merge is traced.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use rayon::prelude::*;

use crate::annotation::{OpCtx, OpKind};
use crate::device::{Device, DeviceId, CPU};
use crate::error::{BachError, Result};
use crate::plan::{GraphPart, Plan, Stage};
use crate::session::Session;
use crate::trace::{EvalTrace, Event, EventKind};
use crate::value::Value;

/// Run `plan` over `part`. `values[i]` holds node i's value if it has one; computed stage
/// outputs are written there (also when a later stage fails, so nothing computed is lost).
pub(crate) fn execute(session: &Session, eval: u64, plan: &Plan, part: &GraphPart, values: &mut [Option<Value>]) -> Result<()> {
    let epoch = session.epoch();
    let start = epoch.elapsed();
    let mut events = Vec::new();
    let mut copies: HashMap<(usize, DeviceId), Value> = HashMap::new();
    let mut result = Ok(());
    for (s, stage) in plan.stages.iter().enumerate() {
        if session.interrupted() {
            result = Err(BachError::Interrupted);
            break;
        }
        let r = transfer(session, eval, plan, part, values, &mut copies, Some(s), &mut events)
            .and_then(|_| run_stage(session, eval, plan, stage, part, values, &mut copies, &mut events));
        if let Err(e) = r {
            result = Err(e);
            break;
        }
    }
    if result.is_ok() {
        result = transfer(session, eval, plan, part, values, &mut copies, None, &mut events);
    }
    session.trace().push(EvalTrace {
        eval,
        cell: session.cell(),
        start,
        end: epoch.elapsed(),
        pieces: plan.total_pieces(),
        events,
        plan: plan.to_string(),
    });
    result
}

fn device_of(session: &Session, id: DeviceId) -> Result<&Arc<dyn Device>> {
    session
        .devices()
        .get(id)
        .ok_or_else(|| BachError::invalid("execute", format!("the plan uses device {} which this machine does not have", id.0)))
}

#[allow(clippy::too_many_arguments)]
fn transfer(
    session: &Session,
    eval: u64,
    plan: &Plan,
    part: &GraphPart,
    values: &mut [Option<Value>],
    copies: &mut HashMap<(usize, DeviceId), Value>,
    stage: Option<usize>,
    events: &mut Vec<Event>,
) -> Result<()> {
    let epoch = session.epoch();
    for t in plan.transfers.iter().filter(|t| t.stage == stage) {
        let t0 = epoch.elapsed();
        let source = if t.from == CPU { values[t.node].as_ref() } else { copies.get(&(t.node, t.from)) }
            .ok_or_else(|| BachError::invalid("transfer", format!("#{} has no value on device {}", t.id, t.from.0)))?
            .clone();
        let moved = if t.to == CPU { device_of(session, t.from)?.copy_out(&source)? } else { device_of(session, t.to)?.copy_in(&source)? };
        if t.to == CPU {
            values[t.node] = Some(moved);
        } else {
            copies.insert((t.node, t.to), moved);
        }
        let node = &part.nodes[t.node];
        events.push(Event { eval, op: node.op.name().into(), node: t.id, cell: node.cell, device: t.from, to: Some(t.to), piece: 0, kind: EventKind::Transfer, start: t0, end: epoch.elapsed(), bytes: t.bytes as u64 });
    }
    Ok(())
}

/// The pieces of a stage: row ranges of at most `piece_rows` (one empty piece for 0 rows).
#[allow(clippy::single_range_in_vec_init)]
pub fn piece_ranges(len: usize, piece_rows: usize) -> Vec<Range<usize>> {
    if len == 0 {
        return vec![0..0];
    }
    let step = piece_rows.max(1);
    (0..len).step_by(step).map(|s| s..(s + step).min(len)).collect()
}

#[allow(clippy::too_many_arguments, clippy::single_range_in_vec_init)]
fn run_stage(
    session: &Session,
    eval: u64,
    plan: &Plan,
    stage: &Stage,
    part: &GraphPart,
    values: &mut [Option<Value>],
    copies: &mut HashMap<(usize, DeviceId), Value>,
    events: &mut Vec<Event>,
) -> Result<()> {
    let device = device_of(session, stage.device)?;
    let nodes: Vec<usize> = stage.steps.iter().map(|&s| plan.steps[s].node).collect();
    // Position of each part node within the stage, and the last step that reads it.
    let mut pos: Vec<Option<usize>> = vec![None; part.nodes.len()];
    for (j, &i) in nodes.iter().enumerate() {
        pos[i] = Some(j);
    }
    let mut last_use: Vec<usize> = (0..nodes.len()).collect();
    for (j, &i) in nodes.iter().enumerate() {
        for &u in &part.nodes[i].inputs {
            if let Some(p) = pos[u] {
                last_use[p] = last_use[p].max(j);
            }
        }
    }
    for &o in &stage.outputs {
        last_use[pos[o].expect("outputs are stage nodes")] = usize::MAX;
    }
    let names: Vec<Arc<str>> = nodes.iter().map(|&i| Arc::from(part.nodes[i].op.name())).collect();
    let ranges = match stage.split_len {
        Some(len) => piece_ranges(len, stage.piece_rows),
        None => vec![0..part.nodes[nodes[0]].meta.rows()],
    };
    let split = stage.split_len.is_some();
    let whole = |u: usize| -> Result<&Value> {
        let v = if stage.device == CPU { values[u].as_ref() } else { copies.get(&(u, stage.device)) };
        v.ok_or_else(|| BachError::invalid("execute", format!("#{} was not computed before it was needed", part.nodes[u].id)))
    };
    let epoch = session.epoch();

    let run_piece = |(p, range): (usize, &Range<usize>)| -> Result<(Vec<Value>, Vec<Event>)> {
        if session.interrupted() {
            return Err(BachError::Interrupted);
        }
        let mut local: Vec<Option<Value>> = vec![None; nodes.len()];
        let mut piece_events = Vec::with_capacity(nodes.len());
        for (j, &i) in nodes.iter().enumerate() {
            let node = &part.nodes[i];
            let t0 = epoch.elapsed();
            let out = {
                let mut args = Vec::with_capacity(node.inputs.len());
                for (a, &u) in node.inputs.iter().enumerate() {
                    args.push(match pos[u] {
                        Some(q) => local[q].as_ref().expect("producers run first").view(),
                        None if split => node.arg_splits[a].split(whole(u)?.view(), range.clone())?,
                        None => whole(u)?.view(),
                    });
                }
                let ctx = OpCtx { meta: &node.meta, rows: range.clone(), piece: p };
                device.run(&node.op, &ctx, &args)?
            };
            let kind = if node.op.kind() == OpKind::Alloc { EventKind::Alloc } else { EventKind::Compute };
            piece_events.push(Event { eval, op: names[j].clone(), node: node.id, cell: node.cell, device: stage.device, to: None, piece: p as u32, kind, start: t0, end: epoch.elapsed(), bytes: out.bytes() as u64 });
            local[j] = Some(out);
            for &u in &node.inputs {
                if let Some(q) = pos[u] {
                    if last_use[q] == j {
                        local[q] = None;
                    }
                }
            }
            if last_use[j] == j {
                local[j] = None;
            }
        }
        let outs = stage.outputs.iter().map(|&o| local[pos[o].expect("stage node")].take().expect("outputs are kept")).collect();
        Ok((outs, piece_events))
    };

    let results: Vec<Result<(Vec<Value>, Vec<Event>)>> = if ranges.len() > 1 {
        ranges.par_iter().enumerate().map(run_piece).collect()
    } else {
        ranges.iter().enumerate().map(run_piece).collect()
    };
    let mut per_output: Vec<Vec<Value>> = vec![Vec::with_capacity(ranges.len()); stage.outputs.len()];
    for r in results {
        let (outs, evs) = r?;
        events.extend(evs);
        for (k, v) in outs.into_iter().enumerate() {
            per_output[k].push(v);
        }
    }
    for (k, pieces) in per_output.into_iter().enumerate() {
        let o = stage.outputs[k];
        let node = &part.nodes[o];
        let t0 = epoch.elapsed();
        let merged = node.op.result_split().merge(pieces)?;
        let t1 = epoch.elapsed();
        if ranges.len() > 1 {
            events.push(Event { eval, op: names[pos[o].expect("stage node")].clone(), node: node.id, cell: node.cell, device: stage.device, to: None, piece: 0, kind: EventKind::Merge, start: t0, end: t1, bytes: merged.bytes() as u64 });
        }
        // A value stays on the device that computed it; transfers move it from there.
        if stage.device == CPU {
            values[o] = Some(merged);
        } else {
            copies.insert((o, stage.device), merged);
        }
    }
    Ok(())
}


//! Pass 3, pieces: CPU stages are cut for the cache, accelerator stages for device memory
//! (paged when the stage does not fit its budget).

use std::collections::{HashMap, HashSet};

use super::{Budget, GraphPart, Stage, Step};
use crate::annotation::FUSE_MAX_OPS;
use crate::cost::CostModel;
use crate::profile::DeviceProfile;
use crate::units::bytes;

/// What one row of a stage's pieces holds, from the liveness of its values.
struct RowBytes {
    /// The widest single value's row (what a CPU piece keeps in cache).
    pub widest: usize,
    /// The peak of what is live at once per row on the device: the split inputs (held for the
    /// piece), and each op's output from its step to its last use in the stage (outputs to
    /// the end).
    pub peak: usize,
    /// Whole (unsplit) inputs, held for the whole stage.
    pub fixed: usize,
}

/// Liveness of stage `s`'s values, per row, on a device that fuses elementwise chains
/// (`fuses`) or not.
fn row_bytes(part: &GraphPart, steps: &[Step], stage: &Stage, s: usize, stage_of: &[Option<usize>], fuses: bool) -> RowBytes {
    let mut widest = 0usize;
    let mut fixed = 0usize;
    let mut inputs_row = 0usize;
    let mut seen_inputs = HashSet::new();
    let stage_nodes: Vec<usize> = stage.steps.iter().map(|&st| steps[st].node).collect();
    let mut last_use: HashMap<usize, usize> = HashMap::new();
    for (j, &i) in stage_nodes.iter().enumerate() {
        last_use.insert(i, if stage.outputs.contains(&i) { usize::MAX } else { j });
        widest = widest.max(part.nodes[i].meta.row_bytes());
        for (k, &u) in part.nodes[i].inputs.iter().enumerate() {
            if stage_of[u] == Some(s) {
                if let Some(l) = last_use.get_mut(&u) {
                    if *l != usize::MAX {
                        *l = (*l).max(j);
                    }
                }
                continue;
            }
            if !seen_inputs.insert(u) {
                continue;
            }
            if part.nodes[i].arg_splits[k].splittable() {
                widest = widest.max(part.nodes[u].meta.row_bytes());
                inputs_row += part.nodes[u].meta.row_bytes();
            } else {
                fixed += part.nodes[u].meta.bytes();
            }
        }
    }
    let mut freed = vec![0usize; stage_nodes.len() + 1];
    for i in &stage_nodes {
        if let Some(&l) = last_use.get(i).filter(|&&l| l != usize::MAX) {
            freed[l + 1] += part.nodes[*i].meta.row_bytes();
        }
    }
    let (mut live, mut peak_row) = (0usize, 0usize);
    for (j, &i) in stage_nodes.iter().enumerate() {
        live = live + part.nodes[i].meta.row_bytes() - freed[j];
        peak_row = peak_row.max(live);
    }
    if fuses {
        peak_row = fused_peak_row(part, &stage_nodes, &stage.outputs);
    }
    RowBytes { widest, peak: peak_row + inputs_row, fixed }
}

/// The peak per row of a stage's own values on a device that fuses elementwise chains (the
/// CUDA device, `cuda/fuse.rs`), which holds only the values it computes into memory: the
/// stage's outputs, the results of ops it launches alone and their arguments, and arguments
/// it computes first because their DAG grew past [`FUSE_MAX_OPS`] or has another shape (the
/// same rules as the device's `defer`). A fused expression keeps its arguments' buffers alive
/// until it is dropped, so a value held for a fused op lives as long as that op's expression
/// (to the piece's end for outputs).
fn fused_peak_row(part: &GraphPart, stage_nodes: &[usize], outputs: &[usize]) -> usize {
    let n = stage_nodes.len();
    let at: HashMap<usize, usize> = stage_nodes.iter().enumerate().map(|(j, &i)| (i, j)).collect();
    let (mut fused, mut ops, mut held) = (vec![false; n], vec![0usize; n], vec![false; n]);
    for (j, &i) in stage_nodes.iter().enumerate() {
        let node = &part.nodes[i];
        let dtypes: Vec<_> = node.inputs.iter().map(|&u| part.nodes[u].meta.dtype).collect();
        let in_stage = node.inputs.iter().filter_map(|u| at.get(u).copied());
        if node.op.fused_expr(&dtypes).is_some_and(|(_, e)| e.out == node.meta.dtype) {
            fused[j] = true;
            let mut count = 1;
            for q in in_stage {
                if !fused[q] {
                    continue;
                }
                if part.nodes[stage_nodes[q]].meta.shape != node.meta.shape || ops[q] + count > FUSE_MAX_OPS {
                    held[q] = true;
                } else {
                    count += ops[q];
                }
            }
            ops[j] = count;
        } else {
            held[j] = true;
            for q in in_stage {
                held[q] = true;
            }
        }
    }
    // How long each value's handle lives: outputs to the end; otherwise to its last reader,
    // or, read by a fused op, as long as that op's expression.
    let mut life: Vec<usize> = (0..n).collect();
    for j in (0..n).rev() {
        let i = stage_nodes[j];
        if outputs.contains(&i) {
            held[j] = true;
            life[j] = n;
        }
        let life_j = life[j];
        for &u in &part.nodes[i].inputs {
            if let Some(&q) = at.get(&u) {
                life[q] = life[q].max(if fused[j] { life_j } else { j });
            }
        }
    }
    // Bytes per row taken at each step (+) and given back after a value's life (-).
    let mut change = vec![0isize; n + 2];
    for j in (0..n).filter(|&j| held[j]) {
        let row = part.nodes[stage_nodes[j]].meta.row_bytes() as isize;
        change[j] += row;
        change[life[j] + 1] -= row;
    }
    let (mut now, mut peak) = (0isize, 0isize);
    for d in &change {
        now += d;
        peak = peak.max(now);
    }
    peak as usize
}

/// Set stage `s`'s piece rows and count, and whether it is paged.
#[allow(clippy::too_many_arguments)]
pub(super) fn size(
    part: &GraphPart,
    steps: &[Step],
    stage: &mut Stage,
    s: usize,
    stage_of: &[Option<usize>],
    devices: &[DeviceProfile],
    cost: &CostModel,
    budget: &Budget<'_>,
    notes: &mut Vec<String>,
) {
    let Some(len) = stage.split_len else {
        let first = &steps[stage.steps[0]];
        stage.piece_rows = first.meta.rows();
        return;
    };
    let dev = &devices[stage.device.0 as usize];
    let rb = row_bytes(part, steps, stage, s, stage_of, dev.fuses_elementwise);
    // Spread over several accelerators, each holds its share of the rows (and every whole
    // input) in its own memory, and gets at least one piece.
    let shards = stage.shards.len().max(1);
    let share = len.div_ceil(shards).max(1);
    let smallest = stage.shards.iter().filter_map(|d| devices.get(d.0 as usize)).filter_map(|d| budget.of(d)).min();
    stage.piece_rows = match smallest.or_else(|| budget.of(dev)) {
        None => (cost.planner.cpu_piece_bytes / rb.widest.max(1)).max(1),
        Some(b) => {
            let per_row: usize = rb.peak.max(1);
            let need = rb.fixed as u64 + (share as u64) * per_row as u64;
            if need <= b {
                // Fits: still cut into pieces of about `accelerator_piece_bytes`, so the
                // copies of one piece overlap the compute of another.
                share.min(cost.planner.accelerator_piece_bytes / per_row).max(1)
            } else {
                stage.paged = true;
                // Two pieces in flight: one computing while the next one is copied in.
                let rows = (b.saturating_sub(rb.fixed as u64) / (2 * per_row as u64)) as usize;
                notes.push(format!("stage on {} needs {}, over its {} budget: paged in pieces of {} rows", dev.name, bytes(need as usize), bytes(b as usize), rows.max(1)));
                rows.max(1)
            }
        }
    };
    stage.pieces = if len == 0 { 1 } else { len.div_ceil(stage.piece_rows) };
}

/// Rows of a CPU piece of `stage` (stage `s` of `plan`, moved to the CPU by the executor when
/// its accelerator ran out of memory): the planner's own rule for CPU stages.
pub(crate) fn cpu_piece_rows(part: &GraphPart, plan: &super::Plan, stage: &Stage, s: usize, cost: &CostModel) -> usize {
    let mut stage_of = vec![None; part.nodes.len()];
    for st in &plan.steps {
        stage_of[st.node] = Some(st.stage);
    }
    let rb = row_bytes(part, &plan.steps, stage, s, &stage_of, false);
    (cost.planner.cpu_piece_bytes / rb.widest.max(1)).clamp(1, stage.split_len.unwrap_or(1).max(1))
}

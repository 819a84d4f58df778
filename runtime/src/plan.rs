//! The planner: a pure function of (graph part, cost model, device profiles, policy) to a
//! [`Plan`]. It sees metas, split types and where values live, never their data, so a plan
//! can be printed and tested for devices this machine does not have.

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;

use crate::annotation::{Annotation, OpKind};
use crate::cost::{CostModel, Policy};
use crate::profile::{DeviceId, DeviceKind, DeviceProfile, CPU};
use crate::error::{BachError, Result};
use crate::split::SplitRef;
use crate::units::bytes;
use crate::value::Meta;

/// One node of the part of the graph an evaluation needs.
#[derive(Clone)]
pub struct PartNode {
    pub id: u64,
    pub op: Arc<Annotation>,
    /// Indices (into the part) of the arguments; empty for evaluated nodes.
    pub inputs: Vec<usize>,
    pub arg_splits: Vec<SplitRef>,
    pub meta: Meta,
    pub cell: u64,
    /// Where the value already is, for nodes evaluated earlier (the part's boundary).
    pub materialized: Option<DeviceId>,
    /// Asked for by the evaluation.
    pub target: bool,
    /// Asked to stay in the accelerator's memory (`eval_on_device`) rather than come back.
    pub keep_on_device: bool,
}

/// The nodes an evaluation needs, in topological order (arguments before users).
#[derive(Clone, Default)]
pub struct GraphPart {
    pub nodes: Vec<PartNode>,
}

impl GraphPart {
    /// Length of the dimension node `i` runs its pieces along, when it can run in pieces.
    pub fn split_len(&self, i: usize) -> Option<usize> {
        let n = &self.nodes[i];
        if n.materialized.is_some() || !n.op.splittable() {
            return None;
        }
        match n.op.kind() {
            OpKind::Source => None,
            OpKind::Alloc => {
                let r = n.op.result_split();
                if r.splittable() { r.size(&n.meta) } else { None }
            }
            OpKind::Compute => n
                .arg_splits
                .iter()
                .zip(&n.inputs)
                .find_map(|(s, &u)| if s.splittable() { s.size(&self.nodes[u].meta) } else { None }),
        }
    }
}

/// One op of the plan.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Index of the node in the graph part.
    pub node: usize,
    pub id: u64,
    pub op: String,
    pub meta: Meta,
    pub cell: u64,
    pub device: DeviceId,
    pub stage: usize,
    /// Why it was placed there.
    pub reason: String,
    /// Estimated seconds over the whole value.
    pub estimate_s: f64,
}

/// Ops that run together: with a split length, every piece goes through all of them before
/// the next piece starts; without, the single op runs once over whole values.
#[derive(Clone, Debug, PartialEq)]
pub struct Stage {
    pub device: DeviceId,
    pub split_len: Option<usize>,
    pub piece_rows: usize,
    pub pieces: usize,
    /// Indices into `Plan::steps`, in execution order.
    pub steps: Vec<usize>,
    /// Nodes (part indices) whose pieces are merged at the end of the stage.
    pub outputs: Vec<usize>,
    /// The stage's data does not fit the device's memory and is streamed through it.
    pub paged: bool,
    /// Outputs merged and kept whole in the (accelerator) device's memory, for later stages
    /// there or because they were asked to stay; the others come back to the host.
    pub kept_on_device: Vec<usize>,
}

/// A copy of a value between devices.
#[derive(Clone, Debug, PartialEq)]
pub struct Transfer {
    pub node: usize,
    pub id: u64,
    pub from: DeviceId,
    pub to: DeviceId,
    pub bytes: usize,
    /// The stage that needs it (`None`: the result going back to the host at the end).
    pub stage: Option<usize>,
    /// Copied piece by piece inside the stage (into an accelerator stage as its pieces start,
    /// or out of it as they finish), so copies overlap compute and a stage larger than the
    /// device's memory streams through it. Otherwise copied whole before the stage.
    pub streamed: bool,
}

/// Where a lazy allocation is created.
#[derive(Clone, Debug, PartialEq)]
pub struct Allocation {
    pub node: usize,
    pub id: u64,
    pub op: String,
    pub device: DeviceId,
    /// The node whose device decided it.
    pub first_user: Option<u64>,
}

/// Where and how an evaluation runs.
#[derive(Clone, Debug, PartialEq)]
pub struct Plan {
    pub steps: Vec<Step>,
    pub stages: Vec<Stage>,
    pub transfers: Vec<Transfer>,
    pub allocations: Vec<Allocation>,
    pub devices: Vec<DeviceProfile>,
    pub policy: Policy,
    pub notes: Vec<String>,
}

impl Plan {
    /// The step of node `id`, if the plan runs it.
    pub fn step_of(&self, id: u64) -> Option<&Step> {
        self.steps.iter().find(|s| s.id == id)
    }
    pub fn total_pieces(&self) -> usize {
        self.stages.iter().map(|s| s.pieces).sum()
    }
}

/// Plan the evaluation of `part`'s targets.
pub fn plan(part: &GraphPart, cost: &CostModel, devices: &[DeviceProfile], policy: Policy, memory_cap: Option<u64>) -> Result<Plan> {
    if devices.first().map(|d| d.kind) != Some(DeviceKind::Cpu) {
        return Err(BachError::invalid("plan", "the first device must be the CPU"));
    }
    let n = part.nodes.len();
    let accel = match policy {
        Policy::Greedy => devices.iter().find(|d| d.kind != DeviceKind::Cpu),
        Policy::CpuOnly => None,
    };
    let budget = |d: &DeviceProfile| -> Option<u64> {
        d.memory_bytes.map(|m| {
            let m = memory_cap.map_or(m, |c| c.min(m));
            (m as f64 * cost.accelerator_memory_fraction) as u64
        })
    };
    let mut notes = Vec::new();
    let mut consumers: Vec<Vec<usize>> = vec![vec![]; n];
    for (i, node) in part.nodes.iter().enumerate() {
        for &u in &node.inputs {
            consumers[u].push(i);
        }
    }

    // 1. Placement: computations first, then each allocation on its first user's device.
    let mut device: Vec<DeviceId> = vec![CPU; n];
    let mut reason: Vec<String> = vec![String::new(); n];
    for (i, node) in part.nodes.iter().enumerate() {
        if let Some(d) = node.materialized {
            device[i] = d;
            continue;
        }
        if node.op.kind() != OpKind::Compute {
            continue;
        }
        (device[i], reason[i]) = match (accel, node.op.accelerator(), node.op.cpu_only_reason()) {
            (_, _, Some(why)) => (CPU, why.to_string()),
            (None, _, _) if policy == Policy::CpuOnly => (CPU, "policy cpu".into()),
            (None, _, _) => (CPU, "no accelerator present".into()),
            (Some(_), None, _) => (CPU, "no accelerator version".into()),
            (Some(a), Some(_), _) => {
                let whole: usize = node.inputs.iter().map(|&u| part.nodes[u].meta.bytes()).sum::<usize>() + node.meta.bytes();
                match budget(a) {
                    Some(b) if !node.op.splittable() && whole as u64 > b => {
                        notes.push(format!("#{} {} needs {} whole, more than the {} budget of {}: runs on the CPU", node.id, node.op.name(), bytes(whole), bytes(b as usize), a.name));
                        (CPU, "does not fit accelerator memory".into())
                    }
                    _ => (a.id, "accelerator version (greedy)".into()),
                }
            }
        };
    }
    let mut allocations = Vec::new();
    for (i, node) in part.nodes.iter().enumerate() {
        if node.materialized.is_none() && node.op.kind() == OpKind::Alloc {
            let first = consumers[i].iter().copied().find(|&c| part.nodes[c].materialized.is_none());
            let on = first.map_or(CPU, |c| device[c]);
            (device[i], reason[i]) = match first {
                Some(_) if on != CPU && node.op.accelerator().is_none() => (CPU, "created on the host: no accelerator version".into()),
                Some(c) => (on, format!("allocated where its first user #{} runs", part.nodes[c].id)),
                None => (CPU, "allocation with no user: on the host".into()),
            };
            allocations.push(Allocation { node: i, id: node.id, op: node.op.name().to_string(), device: device[i], first_user: first.map(|c| part.nodes[c].id) });
        }
    }

    // 2. Stages: a node joins its producer's stage when pieces can flow between them
    //    unmerged (same device, same split length, matching split types).
    let split_len: Vec<Option<usize>> = (0..n).map(|i| part.split_len(i)).collect();
    let mut level = vec![0usize; n];
    let mut stage_of: Vec<Option<usize>> = vec![None; n];
    let mut stages: Vec<(usize, Stage)> = Vec::new();
    let mut open: HashMap<(usize, DeviceId, usize), usize> = HashMap::new();
    for (i, node) in part.nodes.iter().enumerate() {
        if node.materialized.is_some() {
            continue;
        }
        let mut lv = 0;
        for (k, &u) in node.inputs.iter().enumerate() {
            if part.nodes[u].materialized.is_some() {
                continue;
            }
            let joinable = split_len[i].is_some()
                && split_len[u] == split_len[i]
                && device[u] == device[i]
                && node.arg_splits[k].splittable()
                && part.nodes[u].op.result_split().key() == node.arg_splits[k].key();
            lv = lv.max(if joinable { level[u] } else { level[u] + 1 });
        }
        level[i] = lv;
        let new_stage = |stages: &mut Vec<(usize, Stage)>| {
            stages.push((lv, Stage { device: device[i], split_len: split_len[i], piece_rows: 0, pieces: 1, steps: vec![], outputs: vec![], paged: false, kept_on_device: vec![] }));
            stages.len() - 1
        };
        let s = match split_len[i] {
            Some(len) => *open.entry((lv, device[i], len)).or_insert_with(|| new_stage(&mut stages)),
            None => new_stage(&mut stages),
        };
        stage_of[i] = Some(s);
    }
    // Execution order: by level, then creation.
    let mut order: Vec<usize> = (0..stages.len()).collect();
    order.sort_by_key(|&s| stages[s].0);
    let mut renum = vec![0; stages.len()];
    for (new, &old) in order.iter().enumerate() {
        renum[old] = new;
    }
    let mut stages: Vec<Stage> = {
        let mut v: Vec<Option<Stage>> = stages.into_iter().map(|(_, s)| Some(s)).collect();
        order.iter().map(|&o| v[o].take().expect("each once")).collect()
    };

    let mut steps = Vec::new();
    for (i, node) in part.nodes.iter().enumerate() {
        let Some(s) = stage_of[i].map(|s| renum[s]) else { continue };
        let args: Vec<Meta> = node.inputs.iter().map(|&u| part.nodes[u].meta.clone()).collect();
        let dev = &devices[device[i].0 as usize];
        let estimate_s = node.op.estimate(&args, &node.meta, dev).unwrap_or_else(|| cost.default_estimate(&node.meta, dev));
        stages[s].steps.push(steps.len());
        steps.push(Step { node: i, id: node.id, op: node.op.name().to_string(), meta: node.meta.clone(), cell: node.cell, device: device[i], stage: s, reason: std::mem::take(&mut reason[i]), estimate_s });
        let needed_elsewhere = node.target || consumers[i].iter().any(|&c| stage_of[c].map(|x| renum[x]) != Some(s));
        if needed_elsewhere {
            stages[s].outputs.push(i);
        }
    }

    // 3. Pieces: CPU stages are cut for the cache, accelerator stages for device memory.
    for (s, stage) in stages.iter_mut().enumerate() {
        let Some(len) = stage.split_len else {
            let first = &steps[stage.steps[0]];
            stage.piece_rows = first.meta.rows();
            continue;
        };
        // Bytes per row a piece holds: for the cache (CPU), the widest value; for device
        // memory, the peak of what is live at once: the split inputs (held for the piece),
        // and each op's output from its step to its last use in the stage (outputs to the end).
        let mut row_bytes = Vec::new();
        let mut fixed = 0usize;
        let mut inputs_row = 0usize;
        let mut seen_inputs = std::collections::HashSet::new();
        let stage_nodes: Vec<usize> = stage.steps.iter().map(|&st| steps[st].node).collect();
        let mut last_use: HashMap<usize, usize> = HashMap::new();
        for (j, &i) in stage_nodes.iter().enumerate() {
            last_use.insert(i, if stage.outputs.contains(&i) { usize::MAX } else { j });
            row_bytes.push(part.nodes[i].meta.row_bytes());
            for (k, &u) in part.nodes[i].inputs.iter().enumerate() {
                if stage_of[u].map(|x| renum[x]) == Some(s) {
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
                    row_bytes.push(part.nodes[u].meta.row_bytes());
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
        let peak_row = peak_row + inputs_row;
        let dev = &devices[stage.device.0 as usize];
        stage.piece_rows = match budget(dev) {
            None => (cost.cpu_piece_bytes / row_bytes.iter().copied().max().unwrap_or(1).max(1)).max(1),
            Some(b) => {
                let per_row: usize = peak_row.max(1);
                let need = fixed as u64 + (len as u64) * per_row as u64;
                if need <= b {
                    // Fits: still cut into pieces of about `accelerator_piece_bytes`, so the
                    // copies of one piece overlap the compute of another.
                    len.min(cost.accelerator_piece_bytes / per_row).max(1)
                } else {
                    stage.paged = true;
                    // Two pieces in flight: one computing while the next one is copied in.
                    let rows = (b.saturating_sub(fixed as u64) / (2 * per_row as u64)) as usize;
                    notes.push(format!("stage on {} needs {}, over its {} budget: paged in pieces of {} rows", dev.name, bytes(need as usize), bytes(b as usize), rows.max(1)));
                    rows.max(1)
                }
            }
        };
        stage.pieces = if len == 0 { 1 } else { len.div_ceil(stage.piece_rows) };
    }

    // 4. Where each value is whole after its stage, and the transfers that get it where it
    //    is read. Split arguments of an accelerator stage stream in piece by piece; outputs
    //    needed on the host stream out; a non-paged accelerator stage keeps on the device the
    //    outputs later stages there read (rows, or single pieces: partials merge on the host).
    let stage_node: Vec<Option<usize>> = stage_of.iter().map(|s| s.map(|x| renum[x])).collect();
    let mut on_host: Vec<bool> = part.nodes.iter().map(|n| n.materialized == Some(CPU)).collect();
    let mut on_dev: Vec<Option<DeviceId>> = part.nodes.iter().map(|n| n.materialized.filter(|&d| d != CPU)).collect();
    let mut transfers: Vec<Transfer> = Vec::new();
    for (s, stage) in stages.iter_mut().enumerate() {
        let accel = stage.device != CPU;
        for &st in &stage.steps {
            let i = steps[st].node;
            for (k, &u) in part.nodes[i].inputs.iter().enumerate() {
                if stage_node[u] == Some(s) {
                    continue;
                }
                let split = stage.split_len.is_some() && part.nodes[i].arg_splits[k].splittable();
                if !accel {
                    if !on_host[u] && !transfers.iter().any(|t| t.node == u && t.to == CPU) {
                        let from = on_dev[u].unwrap_or(device[u]);
                        transfers.push(Transfer { node: u, id: part.nodes[u].id, from, to: CPU, bytes: part.nodes[u].meta.bytes(), stage: Some(s), streamed: false });
                    }
                } else if on_dev[u] != Some(stage.device) {
                    let streamed = split;
                    let exists = transfers.iter().any(|t| t.node == u && t.to == stage.device && (if streamed { t.stage == Some(s) } else { !t.streamed }));
                    if !exists {
                        transfers.push(Transfer { node: u, id: part.nodes[u].id, from: CPU, to: stage.device, bytes: part.nodes[u].meta.bytes(), stage: Some(s), streamed });
                    }
                }
            }
        }
        for &o in &stage.outputs {
            if !accel {
                on_host[o] = true;
                continue;
            }
            let mergeable_on_device = stage.pieces == 1 || part.nodes[o].op.result_split().key() == "rows";
            let later_here = consumers[o].iter().any(|&c| stage_node[c] != Some(s) && device[c] == stage.device);
            let keep = part.nodes[o].target && part.nodes[o].keep_on_device;
            let to_host_reader = consumers[o].iter().any(|&c| device[c] != stage.device) || (part.nodes[o].target && !keep);
            let device_whole = (later_here || keep) && !stage.paged && mergeable_on_device;
            if keep && !device_whole {
                notes.push(format!("#{} cannot stay on {}: {}; it comes back to the host", part.nodes[o].id, devices[stage.device.0 as usize].name, if stage.paged { "its stage is paged" } else { "its partial results merge on the host" }));
            }
            if device_whole {
                stage.kept_on_device.push(o);
                on_dev[o] = Some(stage.device);
            }
            if to_host_reader || !device_whole {
                on_host[o] = true;
                transfers.push(Transfer { node: o, id: part.nodes[o].id, from: stage.device, to: CPU, bytes: part.nodes[o].meta.bytes(), stage: Some(s), streamed: true });
            }
        }
        // An output kept whole on the device is computed in one piece (it fits): merging
        // pieces there would hold it twice.
        if let (false, Some(len)) = (stage.kept_on_device.is_empty(), stage.split_len) {
            stage.piece_rows = len.max(1);
            stage.pieces = 1;
        }
    }
    for (i, node) in part.nodes.iter().enumerate() {
        if node.target && !node.keep_on_device && !on_host[i] && !transfers.iter().any(|t| t.node == i && t.to == CPU) {
            transfers.push(Transfer { node: i, id: node.id, from: on_dev[i].unwrap_or(device[i]), to: CPU, bytes: node.meta.bytes(), stage: None, streamed: false });
        }
    }
    transfers.sort_by_key(|t| t.stage.unwrap_or(usize::MAX));

    Ok(Plan { steps, stages, transfers, allocations, devices: devices.to_vec(), policy, notes })
}

impl fmt::Display for Plan {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let dev = |d: DeviceId| self.devices.get(d.0 as usize).map_or_else(|| format!("device {}", d.0), |p| p.name.clone());
        writeln!(f, "plan: {} ops in {} stages, policy {}, devices: {}", self.steps.len(), self.stages.len(), self.policy, self.devices.iter().map(|d| d.name.as_str()).collect::<Vec<_>>().join(", "))?;
        for (s, stage) in self.stages.iter().enumerate() {
            match stage.split_len {
                Some(len) => writeln!(f, "stage {s} on {}: {len} rows in {} piece(s) of {} rows{}", dev(stage.device), stage.pieces, stage.piece_rows, if stage.paged { " (paged)" } else { "" })?,
                None => writeln!(f, "stage {s} on {}: whole values", dev(stage.device))?,
            }
            for &i in &stage.steps {
                let st = &self.steps[i];
                writeln!(f, "  #{:<5} {:<14} {:<18} cell {:<3} {}", st.id, st.op, st.meta.to_string(), st.cell, st.reason)?;
            }
            if !stage.outputs.is_empty() && stage.pieces > 1 {
                let ids: Vec<String> = stage.outputs.iter().map(|&o| format!("#{}", self.steps.iter().find(|s| s.node == o).map_or(0, |s| s.id))).collect();
                writeln!(f, "  merge {}", ids.join(", "))?;
            }
            if !stage.kept_on_device.is_empty() {
                let ids: Vec<String> = stage.kept_on_device.iter().map(|&o| format!("#{}", self.steps.iter().find(|s| s.node == o).map_or(0, |s| s.id))).collect();
                writeln!(f, "  kept on {}: {}", dev(stage.device), ids.join(", "))?;
            }
        }
        if self.transfers.is_empty() {
            writeln!(f, "transfers: none")?;
        }
        for t in &self.transfers {
            let when = match (t.stage, t.streamed) {
                (None, _) => "at the end".to_string(),
                (Some(s), true) => format!("piece by piece in stage {s}"),
                (Some(s), false) => format!("before stage {s}"),
            };
            writeln!(f, "transfer #{} {} -> {}: {}, {when}", t.id, dev(t.from), dev(t.to), bytes(t.bytes))?;
        }
        for a in &self.allocations {
            writeln!(f, "allocation #{} {} on {}{}", a.id, a.op, dev(a.device), a.first_user.map(|u| format!(" (first user #{u})")).unwrap_or_default())?;
        }
        for n in &self.notes {
            writeln!(f, "note: {n}")?;
        }
        Ok(())
    }
}

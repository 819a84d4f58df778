//! Pass 2, stages: a node joins its producer's stage when pieces can flow between them
//! unmerged (same device, same split length, matching split types); stages run by level,
//! then in creation order. Each op becomes a step with its estimate.

use std::collections::HashMap;

use super::placement::{At, Placement};
use super::{GraphPart, Stage, Step};
use crate::profile::{DeviceId, CPU};

pub(super) struct Grouped {
    pub steps: Vec<Step>,
    pub stages: Vec<Stage>,
    /// The stage (execution order) of each node the plan runs.
    pub stage_of: Vec<Option<usize>>,
}

pub(super) fn group(part: &GraphPart, consumers: &[Vec<usize>], placed: &Placement) -> Grouped {
    let n = part.nodes.len();
    let device = &placed.device;
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
            stages.push((
                lv,
                Stage {
                    device: device[i],
                    shards: vec![],
                    split_len: split_len[i],
                    piece_rows: 0,
                    pieces: 1,
                    steps: vec![],
                    outputs: vec![],
                    paged: false,
                    kept_on_device: vec![],
                    streamed_elements: 0,
                    slot: None,
                },
            ));
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
    let stage_of: Vec<Option<usize>> = stage_of.iter().map(|s| s.map(|x| renum[x])).collect();

    let mut steps = Vec::new();
    for (i, node) in part.nodes.iter().enumerate() {
        let Some(s) = stage_of[i] else { continue };
        let p = &placed.problem;
        let (cpu_s, accelerator_s) = (p.nodes[i].cpu_s, p.nodes[i].accelerator_s);
        let other = if device[i] == CPU { p.accelerator } else { Some(CPU) };
        let margin_s = other.filter(|_| p.nodes[i].at == At::Free).map(|_| p.margin(i, device));
        stages[s].steps.push(steps.len());
        steps.push(Step {
            node: i,
            id: node.id,
            op: node.op.name().to_string(),
            family: node.op.family(),
            meta: node.meta.clone(),
            cell: node.cell,
            device: device[i],
            stage: s,
            reason: placed.reason[i].clone(),
            estimate_s: if device[i] == CPU { cpu_s } else { accelerator_s },
            cpu_s,
            accelerator_s,
            copies_s: p.copies_into(i, device[i], device).0,
            margin_s,
            inputs: node.inputs.iter().map(|&u| part.nodes[u].id).collect(),
        });
        let needed_elsewhere = node.target || consumers[i].iter().any(|&c| stage_of[c] != Some(s));
        if needed_elsewhere {
            stages[s].outputs.push(i);
        }
    }
    Grouped { steps, stages, stage_of }
}

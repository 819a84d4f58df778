//! Pass 4, transfers: where each value is whole after its stage, and the copies that get it
//! where it is read. Split arguments of an accelerator stage stream in piece by piece (unless
//! a later stage on that device reads them too: then they are copied whole once); outputs
//! needed on the host stream out; a non-paged accelerator stage keeps on the device the
//! outputs later stages there read (rows, or single pieces: partials merge on the host).

use super::{GraphPart, Stage, Step, Transfer};
use crate::cost::MemoryKind;
use crate::profile::{DeviceId, DeviceProfile, CPU};

/// A copy of node `u`'s whole value (its bytes) from one device to another.
fn copy(part: &GraphPart, u: usize, from: DeviceId, to: DeviceId, stage: Option<usize>, streamed: bool, memory: MemoryKind) -> Transfer {
    Transfer { node: u, id: part.nodes[u].id, from, to, bytes: part.nodes[u].meta.bytes(), stage, streamed, memory }
}

#[allow(clippy::too_many_arguments)]
pub(super) fn insert(
    part: &GraphPart,
    consumers: &[Vec<usize>],
    device: &[DeviceId],
    steps: &[Step],
    stages: &mut [Stage],
    stage_of: &[Option<usize>],
    devices: &[DeviceProfile],
    notes: &mut Vec<String>,
) -> Vec<Transfer> {
    let stage_node = stage_of;
    let mut on_host: Vec<bool> = part.nodes.iter().map(|n| n.materialized == Some(CPU)).collect();
    let mut on_dev: Vec<Option<DeviceId>> = part.nodes.iter().map(|n| n.materialized.filter(|&d| d != CPU)).collect();
    let mut transfers: Vec<Transfer> = Vec::new();
    let stages_shards: Vec<usize> = stages.iter().map(|st| st.shards.len()).collect();
    // Per stage that is not paged: its device and the values from outside it that it reads
    // (a paged stage streams what it reads: it is not made to hold a value whole).
    let stages_after: Vec<(usize, DeviceId, Vec<usize>)> = stages
        .iter()
        .enumerate()
        .filter(|(_, stage)| !stage.paged)
        .map(|(s, stage)| (s, stage.device, stage.steps.iter().flat_map(|&st| part.nodes[steps[st].node].inputs.iter().copied()).filter(|&u| stage_node[u] != Some(s)).collect()))
        .collect();
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
                        transfers.push(copy(part, u, from, CPU, Some(s), false, MemoryKind::Pageable));
                    }
                } else if stage.shards.len() > 1 {
                    // Spread over several accelerators: split host values stream to each
                    // piece's device; anything else is had whole on every one of them.
                    let streamed = split && (on_host[u] || on_dev[u].is_none());
                    if streamed {
                        if !transfers.iter().any(|t| t.node == u && t.stage == Some(s) && t.streamed) {
                            transfers.push(copy(part, u, CPU, stage.device, Some(s), true, part.nodes[u].host_memory));
                        }
                    } else {
                        let from = if on_host[u] { CPU } else { on_dev[u].unwrap_or(device[u]) };
                        for &d in &stage.shards {
                            if d != from && !transfers.iter().any(|t| t.node == u && t.to == d && !t.streamed) {
                                transfers.push(copy(part, u, from, d, Some(s), false, part.nodes[u].host_memory));
                            }
                        }
                    }
                } else if let Some(from) = on_dev[u].filter(|&a| !on_host[u] && super::peer_link(devices, a, stage.device)) {
                    // Held on another accelerator that copies straight into this one: whole.
                    if !transfers.iter().any(|t| t.node == u && t.to == stage.device && !t.streamed) {
                        transfers.push(copy(part, u, from, stage.device, Some(s), false, MemoryKind::Pageable));
                    }
                } else if on_dev[u] != Some(stage.device) {
                    // A value a later stage here reads too is copied whole once (and stays), not
                    // streamed now and copied again then; unless this stage is paged (it does
                    // not fit whole).
                    let read_later_here = stages_after.iter().any(|&(s2, d, ref reads)| s2 > s && d == stage.device && reads.contains(&u));
                    let streamed = split && (stage.paged || !read_later_here);
                    let exists = transfers.iter().any(|t| t.node == u && t.to == stage.device && (if streamed { t.stage == Some(s) } else { !t.streamed }));
                    if !exists {
                        transfers.push(copy(part, u, CPU, stage.device, Some(s), streamed, part.nodes[u].host_memory));
                    }
                    if !streamed {
                        on_dev[u] = Some(stage.device);
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
            // Read next on an accelerator this one copies straight into: kept here, for that copy.
            let peer = |c: usize| stage_node[c].is_some_and(|t| stages_shards[t] < 2) && super::peer_link(devices, stage.device, device[c]);
            let later_on_peer = consumers[o].iter().any(|&c| stage_node[c] != Some(s) && peer(c));
            let keep = part.nodes[o].target && part.nodes[o].keep_on_device;
            let to_host_reader = consumers[o].iter().any(|&c| device[c] != stage.device && !peer(c)) || (part.nodes[o].target && !keep);
            let device_whole = (later_here || later_on_peer || keep) && !stage.paged && mergeable_on_device && stage.shards.len() < 2;
            if keep && !device_whole {
                notes.push(format!(
                    "#{} cannot stay on {}: {}; it comes back to the host",
                    part.nodes[o].id,
                    devices[stage.device.0 as usize].name,
                    if stage.paged { "its stage is paged" } else { "its partial results merge on the host" }
                ));
            }
            if device_whole {
                stage.kept_on_device.push(o);
                on_dev[o] = Some(stage.device);
            }
            if to_host_reader || !device_whole {
                on_host[o] = true;
                // Results by rows are written in place (the executor's `RowsOut`), into memory
                // the accelerator may keep page-locked; others land in fresh memory.
                let node = &part.nodes[o];
                let in_place = node.merges_by_rows(stage.split_len) && !device_whole;
                transfers.push(copy(part, o, stage.device, CPU, Some(s), true, if in_place { node.lands_in } else { MemoryKind::Pageable }));
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
            transfers.push(copy(part, i, on_dev[i].unwrap_or(device[i]), CPU, None, false, MemoryKind::Pageable));
        }
    }
    transfers.sort_by_key(|t| t.stage.unwrap_or(usize::MAX));

    transfers
}

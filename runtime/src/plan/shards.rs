//! Pass 2b, shards: a stage on an accelerator that runs in pieces is spread over every
//! accelerator of its kind, data-parallel: each takes a block of its pieces (rows), copies its
//! share in and its results out on its own link, and reductions' partial results merge on the
//! host as they do from one device. Placement chose the CPU or "the accelerator" as for one
//! (`optimal`'s cut stays exact); spreading only divides what that choice costs.
//!
//! Owner computes: a stage whose results a later accelerator stage reads, or that were asked
//! to stay on a device, keeps them where they were made, whole on its one device, and is not
//! spread (spreading would send them home and back).

use super::{GraphPart, Stage};
use crate::profile::{DeviceId, DeviceProfile, CPU};

pub(super) fn spread(
    part: &GraphPart,
    consumers: &[Vec<usize>],
    device: &[DeviceId],
    stages: &mut [Stage],
    stage_of: &[Option<usize>],
    devices: &[DeviceProfile],
    notes: &mut Vec<String>,
) {
    for (s, stage) in stages.iter_mut().enumerate() {
        let Some(len) = stage.split_len else { continue };
        if stage.device == CPU {
            continue;
        }
        let Some(lead) = devices.get(stage.device.0 as usize) else { continue };
        let group: Vec<DeviceId> = std::iter::once(lead.id).chain(devices.iter().filter(|d| d.kind == lead.kind && d.id != lead.id).map(|d| d.id)).collect();
        if group.len() < 2 || len < 2 {
            continue;
        }
        let stays = stage.outputs.iter().find(|&&o| {
            let node = &part.nodes[o];
            (node.target && node.keep_on_device) || consumers[o].iter().any(|&c| stage_of[c].is_some_and(|t| t != s) && device[c] != CPU)
        });
        let nodes = stage_nodes(part, stage_of, s);
        if let Some(&i) = nodes.iter().find(|&&i| part.nodes[i].forced.is_some_and(|f| f.device.is_some())) {
            notes.push(format!("stage {s} stays on {}: #{} was asked to run there", lead.name, part.nodes[i].id));
            continue;
        }
        if let Some(&o) = stays {
            notes.push(format!("stage {s} stays on {}: #{} is read there next (owner computes)", lead.name, part.nodes[o].id));
            continue;
        }
        // A stage that reads a value held whole on an accelerator runs where it is.
        let held = nodes
            .into_iter()
            .flat_map(|i| part.nodes[i].inputs.iter().copied())
            .find(|&u| stage_of[u] != Some(s) && (part.nodes[u].materialized.is_some_and(|d| d != CPU) || (part.nodes[u].materialized.is_none() && device[u] != CPU)));
        if let Some(u) = held {
            notes.push(format!("stage {s} stays on {}: it reads #{}, held there (owner computes)", lead.name, part.nodes[u].id));
            continue;
        }
        stage.shards = group.into_iter().take(len).collect();
    }
}

/// The part nodes of stage `s`.
fn stage_nodes(part: &GraphPart, stage_of: &[Option<usize>], s: usize) -> Vec<usize> {
    (0..part.nodes.len()).filter(|&i| stage_of[i] == Some(s)).collect()
}

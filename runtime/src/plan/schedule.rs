//! Pass 2c, schedule: which of several accelerators of one kind runs each stage that is not
//! spread over them (a whole-value op such as a matrix product or an SVD, or a stage that
//! stays where its values are), by a list scheduler in the manner of HEFT (Topcuoglu et al.,
//! 2002): stages in order of their upward rank (their own seconds plus the longest chain of
//! copies and stages after them), each on the accelerator where it would finish first, given
//! when each device is free and when its arguments can be there (a copy between two
//! accelerators is staged through the host, as the executor makes it).
//!
//! Placement chose the CPU or "the accelerator" per op (`optimal`'s exact cut for two sides);
//! this pass only divides the accelerator's stages among its peers, so a plan on one
//! accelerator is unchanged. It is the non-insertion variant (a stage goes after the last one
//! on its device, never into an earlier gap) and has HEFT's bound: none proven; it is a
//! heuristic for a problem (scheduling with communication on k processors) that is NP-hard.
//! Its schedule is the model's; the executor runs consecutive independent stages on distinct
//! accelerators at once ([`super::Plan::waves`]), and the plan's prediction counts that.

use super::placement::Placement;
use super::{GraphPart, Slot, Stage, Step};
use crate::profile::{DeviceId, DeviceProfile, CPU};

/// Assign the accelerator stages that are not spread among the accelerators of their kind.
/// Returns the seconds of the copies between accelerators it adds (staged through the host:
/// placement priced values only between the CPU and the accelerator).
#[allow(clippy::too_many_arguments)]
pub(super) fn assign(
    part: &GraphPart,
    placed: &mut Placement,
    steps: &mut [Step],
    stages: &mut [Stage],
    stage_of: &[Option<usize>],
    devices: &[DeviceProfile],
    notes: &mut Vec<String>,
) -> f64 {
    let n_stages = stages.len();
    let kind_of = |d: DeviceId| devices.get(d.0 as usize).map(|p| p.kind);
    let peers = |d: DeviceId| -> Vec<DeviceId> { devices.iter().filter(|p| p.id != CPU && Some(p.kind) == kind_of(d)).map(|p| p.id).collect() };
    let movable: Vec<bool> = (0..n_stages)
        .map(|s| {
            let stage = &stages[s];
            stage.device != CPU
                && stage.shards.len() < 2
                && peers(stage.device).len() >= 2
                && !stage.steps.iter().any(|&st| part.nodes[steps[st].node].forced.is_some_and(|f| f.device.is_some()))
        })
        .collect();
    if !movable.iter().any(|&m| m) {
        return 0.0;
    }
    let problem = &placed.problem;
    // Seconds of stage s on one of its devices (a spread stage: its share).
    let width = |s: usize| stages[s].shards.len().max(1) as f64;
    let own_s: Vec<f64> = (0..n_stages)
        .map(|s| {
            let on_cpu = stages[s].device == CPU;
            stages[s].steps.iter().map(|&st| if on_cpu { steps[st].cpu_s } else { steps[st].accelerator_s }).filter(|t| t.is_finite()).sum::<f64>() / width(s)
        })
        .collect();
    // The values each stage reads from outside it, once each.
    let reads: Vec<Vec<usize>> = (0..n_stages)
        .map(|s| {
            let mut r: Vec<usize> = stages[s].steps.iter().flat_map(|&st| part.nodes[steps[st].node].inputs.iter().copied()).filter(|&u| stage_of[u] != Some(s)).collect();
            r.sort_unstable();
            r.dedup();
            r
        })
        .collect();
    // Seconds to have value u, now on `from`, on `to`.
    let copy_s = |u: usize, from: DeviceId, to: DeviceId| -> f64 {
        let n = &problem.nodes[u];
        match (from == to, from == CPU, to == CPU) {
            (true, _, _) => 0.0,
            (_, true, _) => n.to_accelerator_s,
            (_, _, true) => n.to_host_s,
            _ if super::peer_link(devices, from, to) => n.to_accelerator_s,
            _ => n.to_host_s + n.to_accelerator_s,
        }
    };
    // Upward ranks, last stage first (stages are in a topological order).
    let mut rank = vec![0.0f64; n_stages];
    for s in (0..n_stages).rev() {
        let after = (s + 1..n_stages)
            .filter(|&t| reads[t].iter().any(|&u| stage_of[u] == Some(s)))
            .map(|t| reads[t].iter().filter(|&&u| stage_of[u] == Some(s)).map(|&u| (problem.nodes[u].to_host_s + problem.nodes[u].to_accelerator_s) / 2.0).sum::<f64>() + rank[t])
            .fold(0.0, f64::max);
        rank[s] = own_s[s] + after;
    }
    let mut order: Vec<usize> = (0..n_stages).collect();
    order.sort_by(|&a, &b| rank[b].total_cmp(&rank[a]).then(a.cmp(&b)));
    // Where each value is once made: its device, or the host for a spread stage's (its
    // pieces come home) and for values made earlier on the host.
    let mut at: Vec<DeviceId> = part.nodes.iter().map(|n| n.materialized.unwrap_or(CPU)).collect();
    let mut finish = vec![0.0f64; n_stages];
    let mut free_at = vec![0.0f64; devices.len()];
    let mut moved = Vec::new();
    for &s in &order {
        let ready = |d: DeviceId| reads[s].iter().map(|&u| stage_of[u].map_or(0.0, |p| finish[p]) + copy_s(u, at[u], d)).fold(0.0, f64::max);
        let (device, start) = if movable[s] {
            let lead = stages[s].device;
            let mut best: Option<(DeviceId, f64)> = None;
            for d in std::iter::once(lead).chain(peers(lead).into_iter().filter(|&d| d != lead)) {
                let start = ready(d).max(free_at[d.0 as usize]);
                if best.is_none_or(|(_, b)| start + own_s[s] < b + own_s[s] - 1e-12) {
                    best = Some((d, start));
                }
            }
            best.expect("the lead is a candidate")
        } else {
            let on = stages[s].devices();
            let start = on.iter().map(|d| free_at[d.0 as usize]).fold(ready(stages[s].device), f64::max);
            (stages[s].device, start)
        };
        finish[s] = start + own_s[s];
        for d in if movable[s] { vec![device] } else { stages[s].devices() } {
            free_at[d.0 as usize] = finish[s];
        }
        if movable[s] {
            let lead = stages[s].device;
            stages[s].slot = Some(Slot { start_s: start, finish_s: finish[s], alone_on: lead });
            if device != lead {
                moved.push((s, lead, device));
                stages[s].device = device;
                for &st in &stages[s].steps {
                    steps[st].device = device;
                    placed.device[steps[st].node] = device;
                }
            }
        }
        let home = if stages[s].shards.len() > 1 { CPU } else { stages[s].device };
        for st in &stages[s].steps {
            at[steps[*st].node] = home;
        }
    }
    // A stage of lazy allocations alone goes where the first user of its results went.
    for s in 0..n_stages {
        if !movable[s] || !stages[s].steps.iter().all(|&st| part.nodes[steps[st].node].op.kind() == crate::annotation::OpKind::Alloc) {
            continue;
        }
        let users: Vec<DeviceId> = placed
            .allocations
            .iter()
            .filter(|a| stage_of[a.node] == Some(s))
            .filter_map(|a| a.first_user.and_then(|id| part.nodes.iter().position(|n| n.id == id)))
            .map(|c| placed.device[c])
            .collect();
        if let Some(&to) = users.first().filter(|&&d| d != CPU && d != stages[s].device && users.iter().all(|&u| u == d)) {
            stages[s].device = to;
            for &st in &stages[s].steps {
                steps[st].device = to;
                placed.device[steps[st].node] = to;
                at[steps[st].node] = to;
            }
        }
    }
    for a in placed.allocations.iter_mut() {
        a.device = placed.device[a.node];
    }
    for (s, from, to) in &moved {
        let name = |d: &DeviceId| devices.get(d.0 as usize).map_or_else(|| format!("device {}", d.0), |p| format!("{} [{}]", p.name, d.0));
        notes.push(format!(
            "stage {s} on {}: it finishes first there ({} to {} by the schedule; {} is busy)",
            name(to),
            crate::cost::seconds(stages[*s].slot.map_or(0.0, |x| x.start_s)),
            crate::cost::seconds(finish[*s]),
            name(from)
        ));
    }
    // Copies between two accelerators the schedule made, which placement did not price.
    let mut extra = 0.0;
    let mut priced: Vec<(usize, DeviceId)> = Vec::new();
    for s in 0..n_stages {
        for &u in &reads[s] {
            let (from, to) = (at[u], stages[s].device);
            if from != CPU && to != CPU && from != to && stages[s].shards.len() < 2 && !priced.contains(&(u, to)) {
                priced.push((u, to));
                let n = &problem.nodes[u];
                let home_too = n.needed_on_host || n.readers.iter().any(|&r| placed.device[r] == CPU);
                let staged = !super::peer_link(devices, from, to);
                extra += n.to_accelerator_s + if !staged || home_too || priced.iter().any(|&(v, t)| v == u && t != to) { 0.0 } else { n.to_host_s };
            }
        }
    }
    extra
}

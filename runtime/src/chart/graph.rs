//! The placement graph: a plan's ops as boxes coloured by the device they run on, arguments
//! above their users (layered top to bottom, ordered within a layer to keep edges short),
//! values already computed as grey inputs, each transfer as a diamond under the value it moves
//! with its direction and bytes, ops of paged stages with dashed borders. Every box and mark
//! has hover text (op, id, cell, shape, device, stage, reason, estimates). Past
//! [`MAX_NODES`] nodes, the graph of stages is drawn instead (one box per stage).
//!
//! Written as SVG directly: a graph has no axes for plotters to draw, and every mark needs a
//! `<title>`, which plotters cannot emit.

use super::bars::notice;
use super::*;
use crate::plan::Plan;

/// Ops and inputs drawn one box each; beyond, one box per stage.
pub(super) const MAX_NODES: usize = 200;

const BOX_H: f64 = 40.0;
const LAYER_H: f64 = 78.0;
const GAP: f64 = 12.0;
const TOP: f64 = 70.0;
/// Characters of the subtitle that fit across the chart (14 px type).
const SUBTITLE_CHARS: usize = 125;

struct Node {
    label: String,
    sub: String,
    hover: String,
    color: Rgb,
    dashed: bool,
    /// Indices of the nodes it reads.
    inputs: Vec<usize>,
    layer: usize,
    /// Transfers of its value: (label, hover).
    transfers: Vec<(String, String)>,
}

pub(super) fn render(plan: &Plan) -> String {
    if plan.steps.is_empty() {
        return notice("Placement", "nothing to run (all values were computed)");
    }
    let collapsed = plan.steps.len() + plan.inputs.len() > MAX_NODES;
    let nodes = if collapsed { stage_nodes(plan) } else { op_nodes(plan) };
    draw(plan, nodes, collapsed)
}

fn device_color(plan: &Plan, d: DeviceId) -> Rgb {
    match plan.devices.get(d.0 as usize).map(|p| p.kind) {
        Some(DeviceKind::Cpu) | None => (0x4e, 0x79, 0xa7),
        Some(DeviceKind::Cuda) => (0x59, 0xa1, 0x4f),
        Some(DeviceKind::Emulated) => (0xb0, 0x7a, 0xa1),
    }
}

fn device_name(plan: &Plan, d: DeviceId) -> String {
    plan.devices.get(d.0 as usize).map_or_else(|| format!("device {}", d.0), |p| p.name.clone())
}

fn transfer_text(plan: &Plan, t: &crate::plan::Transfer) -> (String, String) {
    let to_host = t.to == CPU;
    let arrow = if to_host { "→ host" } else { "→ device" };
    let when = match (t.stage, t.streamed) {
        (None, _) => "at the end".to_string(),
        (Some(s), true) => format!("piece by piece in stage {s}"),
        (Some(s), false) => format!("before stage {s}"),
    };
    (
        format!("{arrow} {}", fmt_bytes(t.bytes as u64)),
        format!("transfer of #{}: {} → {}\n{}, {when}", t.id, device_name(plan, t.from), device_name(plan, t.to), fmt_bytes(t.bytes as u64)),
    )
}

fn op_nodes(plan: &Plan) -> Vec<Node> {
    let mut nodes = Vec::new();
    let mut at: HashMap<u64, usize> = HashMap::new();
    for i in &plan.inputs {
        at.insert(i.id, nodes.len());
        nodes.push(Node {
            label: i.op.clone(),
            sub: format!("#{} · {}", i.id, i.meta),
            hover: format!("input #{} {} (cell {})\n{} · computed earlier, on {}", i.id, i.op, i.cell, i.meta, device_name(plan, i.device)),
            color: (0xa0, 0xa0, 0xa0),
            dashed: false,
            inputs: vec![],
            layer: 0,
            transfers: vec![],
        });
    }
    for st in &plan.steps {
        let inputs: Vec<usize> = st.inputs.iter().filter_map(|id| at.get(id).copied()).collect();
        let layer = inputs.iter().map(|&i| nodes[i].layer + 1).max().unwrap_or(0);
        let stage = &plan.stages[st.stage];
        let est = |s: f64| if s.is_finite() { crate::cost::seconds(s) } else { "cannot run there".into() };
        let hover = format!(
            "#{} {} (cell {})\n{} · on {} · stage {}{}\n{}\nestimate {} (cpu {}, accelerator {}; copies in {})",
            st.id,
            st.op,
            st.cell,
            st.meta,
            device_name(plan, st.device),
            st.stage,
            if stage.paged { " (paged: streamed through the device's memory)" } else { "" },
            st.reason,
            est(st.estimate_s),
            est(st.cpu_s),
            est(st.accelerator_s),
            crate::cost::seconds(st.copies_s)
        );
        at.insert(st.id, nodes.len());
        nodes.push(Node {
            label: st.op.clone(),
            sub: format!("#{} · {}", st.id, st.meta),
            hover,
            color: device_color(plan, st.device),
            dashed: stage.paged,
            inputs,
            layer,
            transfers: vec![],
        });
    }
    for t in &plan.transfers {
        if let Some(&i) = at.get(&t.id) {
            nodes[i].transfers.push(transfer_text(plan, t));
        }
    }
    nodes
}

/// One box per stage: its ops counted, edges where a stage reads another's value.
fn stage_nodes(plan: &Plan) -> Vec<Node> {
    let stage_of: HashMap<u64, usize> = plan.steps.iter().map(|s| (s.id, s.stage)).collect();
    let mut nodes: Vec<Node> = Vec::new();
    for (s, stage) in plan.stages.iter().enumerate() {
        let mut inputs: BTreeSet<usize> = BTreeSet::new();
        for &st in &stage.steps {
            for id in &plan.steps[st].inputs {
                if let Some(&u) = stage_of.get(id).filter(|&&u| u != s) {
                    inputs.insert(u);
                }
            }
        }
        let inputs: Vec<usize> = inputs.into_iter().filter(|&u| u < s).collect();
        let layer = inputs.iter().map(|&i| nodes[i].layer + 1).max().unwrap_or(0);
        let ops: BTreeSet<&str> = stage.steps.iter().map(|&st| plan.steps[st].op.as_str()).collect();
        let hover = format!(
            "stage {s}: {} ops on {}{}\n{}",
            stage.steps.len(),
            device_name(plan, stage.device),
            if stage.paged { " (paged)" } else { "" },
            ops.into_iter().take(12).collect::<Vec<_>>().join(", ")
        );
        let mut transfers = Vec::new();
        for t in plan.transfers.iter().filter(|t| t.stage == Some(s)) {
            transfers.push(transfer_text(plan, t));
        }
        nodes.push(Node {
            label: format!("stage {s}"),
            sub: format!("{} ops", stage.steps.len()),
            hover,
            color: device_color(plan, stage.device),
            dashed: stage.paged,
            inputs,
            layer,
            transfers,
        });
    }
    nodes
}

fn draw(plan: &Plan, nodes: Vec<Node>, collapsed: bool) -> String {
    let layers = nodes.iter().map(|n| n.layer).max().unwrap_or(0) + 1;
    let mut rows: Vec<Vec<usize>> = vec![vec![]; layers];
    for (i, n) in nodes.iter().enumerate() {
        rows[n.layer].push(i);
    }
    let widest = rows.iter().map(Vec::len).max().unwrap_or(1).max(1);
    let avail = WIDTH as f64 - 2.0 * SIDE as f64;
    let box_w = ((avail - GAP * (widest as f64 - 1.0)) / widest as f64).clamp(24.0, 170.0);
    // Order within a layer: by the mean position of the inputs (a barycentre pass).
    let mut x = vec![0.0f64; nodes.len()];
    for row in rows.iter_mut() {
        let key = |i: &usize| -> f64 {
            let ins = &nodes[*i].inputs;
            if ins.is_empty() {
                *i as f64 * 1e-9
            } else {
                ins.iter().map(|&u| x[u]).sum::<f64>() / ins.len() as f64
            }
        };
        row.sort_by(|a, b| key(a).total_cmp(&key(b)).then(a.cmp(b)));
        let width = row.len() as f64 * box_w + (row.len().saturating_sub(1)) as f64 * GAP;
        let start = SIDE as f64 + (avail - width) / 2.0;
        for (k, &i) in row.iter().enumerate() {
            x[i] = start + k as f64 * (box_w + GAP) + box_w / 2.0;
        }
    }
    let y = |layer: usize| TOP + layer as f64 * LAYER_H;
    let legend_y = TOP + layers as f64 * LAYER_H + 8.0;
    let height = legend_y + 46.0;

    let on: BTreeMap<String, usize> = plan.steps.iter().fold(BTreeMap::new(), |mut m, s| {
        *m.entry(short_name(&device_name(plan, s.device)).to_string()).or_default() += 1;
        m
    });
    let moved: usize = plan.transfers.iter().map(|t| t.bytes).sum();
    let title = format!(
        "Placement: {} ops ({}), {} transfer{} ({}), predicted {}",
        plan.steps.len(),
        on.iter().map(|(d, n)| format!("{n} on {d}")).collect::<Vec<_>>().join(", "),
        plan.transfers.len(),
        if plan.transfers.len() == 1 { "" } else { "s" },
        fmt_bytes(moved as u64),
        crate::cost::seconds(plan.predicted.seconds()),
    );
    let mut out = String::new();
    let _ = writeln!(
        out,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height:.0}\" viewBox=\"0 0 {WIDTH} {height:.0}\" style=\"max-width:100%;height:auto\" font-family=\"{FONT}\">"
    );
    let _ = writeln!(out, "<rect width=\"{WIDTH}\" height=\"{height:.0}\" fill=\"#fff\"/>");
    let _ = writeln!(out, "<text x=\"{}\" y=\"26\" text-anchor=\"middle\" font-size=\"17\" font-weight=\"bold\">{}</text>", WIDTH / 2, esc(&truncate(&title, 105)));
    let sub = if collapsed {
        format!("{} stages shown, one box each: the plan has over {MAX_NODES} ops and inputs · hover a box for its ops", plan.stages.len())
    } else {
        String::new()
    };
    let sub = match &plan.predicted_for {
        _ if !sub.is_empty() => sub,
        Some(m) => {
            // A calibrated profile names its machine at length: cut the name, not the hint.
            let rest = format!("policy {} · figures measured on : a prediction · hover a box for its estimates and reason", plan.policy);
            let room = SUBTITLE_CHARS.saturating_sub(rest.chars().count()).max(16);
            format!("policy {} · figures measured on {}: a prediction · hover a box for its estimates and reason", plan.policy, truncate(m, room))
        }
        None => format!("policy {} · arguments above their users · hover a box for its estimates and reason", plan.policy),
    };
    let _ = writeln!(out, "<text x=\"{}\" y=\"48\" text-anchor=\"middle\" font-size=\"14\" fill=\"#555\">{}</text>", WIDTH / 2, esc(&truncate(&sub, SUBTITLE_CHARS)));
    // Edges under the boxes.
    out.push_str("<g fill=\"none\" stroke=\"#9a9a9a\" stroke-width=\"1.2\">\n");
    for (i, n) in nodes.iter().enumerate() {
        for &u in &n.inputs {
            let (x0, y0, x1, y1) = (x[u], y(nodes[u].layer) + BOX_H, x[i], y(n.layer));
            let mid = (y0 + y1) / 2.0;
            let _ = writeln!(out, "<path d=\"M{x0:.1},{y0:.1} C{x0:.1},{mid:.1} {x1:.1},{mid:.1} {x1:.1},{y1:.1}\"/>");
        }
    }
    out.push_str("</g>\n");
    let chars = ((box_w - 8.0) / 7.6).max(3.0) as usize;
    for (i, n) in nodes.iter().enumerate() {
        let (cx, top) = (x[i], y(n.layer));
        let x0 = cx - box_w / 2.0;
        let dash = if n.dashed { " stroke-dasharray=\"5 3\" stroke-width=\"2\"" } else { " stroke-width=\"1\"" };
        let _ = writeln!(
            out,
            "<g><title>{}</title><rect x=\"{x0:.1}\" y=\"{top:.1}\" width=\"{box_w:.1}\" height=\"{BOX_H}\" rx=\"5\" fill=\"{}\" fill-opacity=\"0.9\" stroke=\"#333\"{dash}/><text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"14\" font-weight=\"bold\" fill=\"#fff\">{}</text><text x=\"{cx:.1}\" y=\"{:.1}\" text-anchor=\"middle\" font-size=\"14\" fill=\"#fff\">{}</text></g>",
            esc(&n.hover),
            hex(n.color),
            top + 17.0,
            esc(&truncate(&n.label, chars)),
            top + 33.0,
            esc(&truncate(&n.sub, chars + 2))
        );
        for (k, (label, hover)) in n.transfers.iter().enumerate() {
            let (dx, dy) = (x0 + 8.0 + k as f64 * 16.0, top + BOX_H + 11.0);
            let _ = writeln!(
                out,
                "<g><title>{}</title><path d=\"M{dx:.1},{:.1} L{:.1},{dy:.1} L{dx:.1},{:.1} L{:.1},{dy:.1} Z\" fill=\"#e15759\" stroke=\"#7a1f1f\"/>{}</g>",
                esc(hover),
                dy - 7.0,
                dx + 7.0,
                dy + 7.0,
                dx - 7.0,
                if k == 0 {
                    format!("<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"14\" fill=\"#7a1f1f\">{}</text>", dx + 10.0, dy + 4.0, esc(&truncate(label, 22)))
                } else {
                    String::new()
                }
            );
        }
    }
    // Legend.
    let mut lx = SIDE as f64;
    let mut entries: Vec<(String, Rgb, bool)> = plan
        .devices
        .iter()
        .filter(|d| plan.steps.iter().any(|s| s.device == d.id))
        .map(|d| (format!("runs on {}", short_name(&d.name)), device_color(plan, d.id), false))
        .collect();
    if !plan.inputs.is_empty() && !collapsed {
        entries.push(("computed earlier".into(), (0xa0, 0xa0, 0xa0), false));
    }
    if plan.stages.iter().any(|s| s.paged) {
        entries.push(("paged stage (dashed)".into(), (0xff, 0xff, 0xff), true));
    }
    for (text, color, dashed) in &entries {
        let dash = if *dashed { " stroke-dasharray=\"5 3\" stroke-width=\"2\"" } else { "" };
        let _ = writeln!(out, "<rect x=\"{lx:.1}\" y=\"{:.1}\" width=\"18\" height=\"14\" rx=\"3\" fill=\"{}\" stroke=\"#333\"{dash}/>", legend_y + 8.0, hex(*color));
        let _ = writeln!(out, "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"14\">{}</text>", lx + 24.0, legend_y + 20.0, esc(text));
        lx += 24.0 + text_px(text, 13) * 1.1 + 22.0;
    }
    if !plan.transfers.is_empty() {
        let (dx, dy) = (lx + 8.0, legend_y + 15.0);
        let _ = writeln!(
            out,
            "<path d=\"M{dx:.1},{:.1} L{:.1},{dy:.1} L{dx:.1},{:.1} L{:.1},{dy:.1} Z\" fill=\"#e15759\" stroke=\"#7a1f1f\"/>",
            dy - 7.0,
            dx + 7.0,
            dy + 7.0,
            dx - 7.0
        );
        let _ = writeln!(out, "<text x=\"{:.1}\" y=\"{:.1}\" font-size=\"14\">a transfer of the value above it (direction, bytes)</text>", dx + 14.0, legend_y + 20.0);
    }
    out.push_str("</svg>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::{PlanInput, Reason, Stage, Step, Transfer};
    use crate::value::{DType, Meta};

    fn step(i: usize, id: u64, op: &str, device: u8, stage: usize, inputs: Vec<u64>) -> Step {
        Step {
            node: i,
            id,
            op: op.into(),
            family: crate::cost::Family::Elementwise,
            meta: Meta::new(DType::F64, vec![1 << 20]),
            cell: 3,
            device: DeviceId(device),
            stage,
            reason: Reason::NoAcceleratorPresent,
            estimate_s: 1e-3,
            cpu_s: 1e-3,
            accelerator_s: 1e-4,
            copies_s: 0.0,
            margin_s: None,
            inputs,
        }
    }

    /// 5 inputs and a chain of 30 ops on the GPU in one paged stage, results copied back, plus
    /// a CPU op after: like Black-Scholes with a reduction on the CPU.
    pub(in crate::chart) fn sample() -> Plan {
        let inputs: Vec<PlanInput> = (1..=5).map(|id| PlanInput { id, op: "source".into(), meta: Meta::new(DType::F64, vec![1 << 20]), cell: 1, device: CPU }).collect();
        let mut steps = Vec::new();
        let mut prev = 1;
        for k in 0..30u64 {
            let id = 10 + k;
            let other = 1 + (k % 5);
            steps.push(step(k as usize, id, if k % 3 == 0 { "mul" } else { "exp" }, 1, 0, vec![prev, other]));
            prev = id;
        }
        steps.push(step(30, 100, "sum", 0, 1, vec![prev]));
        let stages = vec![
            Stage {
                device: DeviceId(1),
                shards: vec![],
                split_len: Some(1 << 20),
                piece_rows: 1 << 18,
                pieces: 4,
                steps: (0..30).collect(),
                outputs: vec![29],
                paged: true,
                kept_on_device: vec![],
                slot: None,
                streamed_elements: 0,
            },
            Stage {
                device: CPU,
                shards: vec![],
                split_len: Some(1 << 20),
                piece_rows: 8192,
                pieces: 128,
                steps: vec![30],
                outputs: vec![30],
                paged: false,
                kept_on_device: vec![],
                slot: None,
                streamed_elements: 0,
            },
        ];
        let transfers = (1..=5)
            .map(|id| Transfer { node: 0, id, from: CPU, to: DeviceId(1), bytes: 8 << 20, stage: Some(0), streamed: true, memory: crate::cost::MemoryKind::Pageable })
            .chain([Transfer { node: 29, id: 39, from: DeviceId(1), to: CPU, bytes: 8 << 20, stage: Some(0), streamed: true, memory: crate::cost::MemoryKind::Pageable }])
            .collect();
        Plan {
            steps,
            inputs,
            stages,
            transfers,
            allocations: vec![],
            devices: vec![DeviceProfile::cpu(), DeviceProfile::hypothetical_gpu("H100", 80 << 30)],
            policy: crate::plan::Policy::Optimal,
            notes: vec![],
            predicted: Default::default(),
            predicted_for: None,
        }
    }

    #[test]
    fn every_op_and_input_is_a_box_with_hover_and_every_argument_an_edge() {
        let p = sample();
        let svg = render(&p);
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let boxes = doc.descendants().filter(|n| n.has_tag_name("g") && n.children().any(|c| c.has_tag_name("rect")) && n.children().any(|c| c.has_tag_name("title"))).count();
        assert_eq!(boxes, 36, "5 inputs + 31 ops");
        let edges = doc.descendants().filter(|n| n.has_tag_name("path") && n.attribute("d").is_some_and(|d| d.contains('C'))).count();
        assert_eq!(edges, p.steps.iter().map(|s| s.inputs.len()).sum::<usize>());
        // Inputs above their users: every edge goes down.
        for n in doc.descendants().filter(|n| n.has_tag_name("path") && n.attribute("d").is_some_and(|d| d.contains('C'))) {
            let d = n.attribute("d").unwrap();
            let nums: Vec<f64> = d.split(|c: char| !(c.is_ascii_digit() || c == '.')).filter(|s| !s.is_empty()).map(|s| s.parse().unwrap()).collect();
            assert!(nums[1] < *nums.last().unwrap(), "{d}");
        }
        let transfers = doc.descendants().filter(|n| n.has_tag_name("title") && n.text().is_some_and(|t| t.starts_with("transfer of #"))).count();
        assert_eq!(transfers, 6);
        assert!(svg.contains("→ device 8.0 MiB") || svg.contains("→ device 8 MiB"), "bytes on the marks");
        assert!(svg.contains("stroke-dasharray=\"5 3\""), "the paged stage is dashed");
        assert!(svg.contains("30 on H100") && svg.contains("1 on cpu"), "{}", &svg[..500]);
    }

    /// A plan made with a calibrated profile names the machine at length: the subtitle cuts
    /// the name and keeps the hint, within the chart's width.
    #[test]
    fn a_long_machine_name_is_cut_to_fit() {
        let mut p = sample();
        p.predicted_for = Some(format!("vm: cpu (2 threads), emulated accelerator (host memory, CPU kernels; not a GPU), 4.0 GiB{}", " and more".repeat(10)));
        let svg = render(&p);
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let sub = doc.descendants().filter(|n| n.has_tag_name("text")).nth(1).and_then(|n| n.text()).unwrap().to_string();
        assert!(sub.chars().count() <= SUBTITLE_CHARS && sub.ends_with("hover a box for its estimates and reason") && sub.contains("figures measured on vm: cpu"), "{sub}");
        assert!(text_px(&sub, 14) < WIDTH as f64, "{sub}");
    }

    #[test]
    fn an_empty_plan_and_a_huge_one_still_draw() {
        let mut p = sample();
        p.steps.clear();
        assert!(render(&p).contains("nothing to run"));
        let mut p = sample();
        let last = p.steps.last().unwrap().clone();
        for k in 0..300u64 {
            let mut s = last.clone();
            s.id = 1000 + k;
            s.inputs = vec![100];
            p.steps.push(s);
            p.stages[1].steps.push(p.steps.len() - 1);
        }
        let svg = render(&p);
        roxmltree::Document::parse(&svg).unwrap();
        assert!(svg.contains("2 stages shown"), "{}", &svg[..400]);
    }
}

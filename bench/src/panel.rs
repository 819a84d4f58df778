//! `bach-bench panel`: what moving a control of the placement panel (`:bach panel`) costs on
//! this machine: the h2d bandwidth set (alternately its value and 1/100 of it), then the
//! re-plan and the redraw the panel sends (explain table, predicted timeline and placement
//! graph as SVG), for Black-Scholes' graph over host inputs of 2^N elements (the tour's size:
//! 2^20). Without an accelerator the plans are for the CPU and a hypothetical H100, as the
//! panel's are. The browser's round trip adds the comm messages (tests/browser/lab_check.py).

use std::time::Instant;

use bach_runtime::cost::{CopyField, Param};

use crate::workloads::{Inputs, Workload};

pub fn main(args: &[String]) -> Result<(), String> {
    let (mut log2, mut repeat) = (20u32, 50usize);
    let mut it = args.iter();
    while let Some(flag) = it.next() {
        let mut value = || it.next().ok_or(format!("{flag} needs a value"));
        match flag.as_str() {
            "--log2" => log2 = value()?.parse().map_err(|e| format!("--log2: {e}"))?,
            "--repeat" => repeat = value()?.parse().map_err(|e| format!("--repeat: {e}"))?,
            other => return Err(format!("panel: unknown flag {other} (--log2 N, --repeat R)")),
        }
    }
    let n = 1usize << log2;
    let w = Workload::BlackScholes;
    let inputs: std::collections::BTreeMap<&'static str, bach::Array<f64>> =
        w.inputs(n, Inputs::Random(1)).into_iter().map(|(k, v)| (k, bach::Array::from_array(v).into_dyn())).collect();
    let outputs = w.bach_graph(&inputs);
    let call = &outputs[0].1.lazy();
    let s = bach_runtime::session::global();
    // The panel's h2d slider: the accelerator's pageable copy-in bandwidth.
    let h2d = Param::copy(bach_runtime::Direction::H2d, bach_runtime::MemoryKind::Pageable, bach_runtime::DeviceKind::Cuda, CopyField::Bandwidth);
    let bandwidth = s.config().cost.get(h2d);
    let mut times = Vec::with_capacity(repeat);
    let mut on_accel = std::collections::BTreeSet::new();
    for i in 0..repeat.max(1) {
        let t0 = Instant::now();
        let value = if i % 2 == 0 { bandwidth / 100.0 } else { bandwidth };
        let mut cost = s.config().cost;
        cost.put(h2d, value)?;
        s.update_config(|c| c.cost = cost);
        let (plan, table, chart, graph) = bach::notebook::panel_redraw(call).map_err(|e| e.to_string())?;
        times.push(t0.elapsed().as_secs_f64());
        on_accel.insert(plan.steps.iter().filter(|st| st.device != bach_runtime::CPU).count());
        if table.is_empty() || !chart.contains("<svg") || !graph.contains("<svg") {
            return Err("the redraw drew nothing".into());
        }
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    let p90 = times[(times.len() * 9 / 10).min(times.len() - 1)];
    println!(
        "{{\"bench\":\"panel\",\"workload\":\"black-scholes\",\"log2\":{log2},\"runs\":{},\"median_s\":{median},\"p90_s\":{p90},\"max_s\":{},\"ops_on_accelerator\":{:?}}}",
        times.len(),
        times[times.len() - 1],
        on_accel
    );
    eprintln!(
        "panel: a control moved to the chart redrawn: median {:.1} ms, p90 {:.1} ms over {} moves (ops on the accelerator: {:?})",
        median * 1e3,
        p90 * 1e3,
        times.len(),
        on_accel
    );
    Ok(())
}

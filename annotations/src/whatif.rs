//! What-if: plan a pending value under a changed cost model, or another machine's profile,
//! beside the plan the session would make now, without running anything.
//!
//! A changed parameter is planned for this session's devices, plus a hypothetical 80 GB
//! H100 when it has no accelerator (so that a what-if about GPU figures can say something on
//! a machine without one). Another machine's profile is planned for that machine: the CPU
//! and a hypothetical GPU in place of any accelerator that is not one (the emulated
//! accelerator), since the profile's figures are for a GPU. Their predicted timelines are
//! drawn on one time scale.

use std::fmt;

use bach_runtime::trace::EvalTrace;
use bach_runtime::{CostModel, DeviceKind, DeviceProfile, Lazy, Plan};

use crate::array::Array;

/// A plan under the session's model and one under a changed model, for one value.
#[derive(Clone, Debug)]
pub struct WhatIf {
    /// What changed ("elementwise.cuda.per_element = 2e-11", "the H100 profile").
    pub change: String,
    pub current: Plan,
    pub changed: Plan,
    current_model: CostModel,
    changed_model: CostModel,
    cell: u64,
}

/// A what-if for `a` with parameters set (`("transfer.h2d.bandwidth", "5GB/s")`, paths as in
/// `:bach cost set`): `:bach whatif <path> = <value> ... <expr>`.
pub fn whatif<A: bach_runtime::Element, D: ndarray::Dimension>(a: &Array<A, D>, settings: &[(&str, &str)]) -> bach_runtime::Result<WhatIf> {
    whatif_settings(&a.lazy(), settings)
}

/// A what-if for `a` under a profile: `h100` (the one measured on an H100 host), `default`
/// (this machine's uncalibrated defaults) or a profile file (`bach-bench calibrate --out`,
/// `bach-bench cost`): `:bach whatif profile <h100|default|FILE> <expr>`.
///
/// `h100:4` (a profile, a colon, a count): the plan on one GPU of that profile against the
/// plan on that many, each with its own memory and link, split stages spread over them.
pub fn whatif_profile<A: bach_runtime::Element, D: ndarray::Dimension>(a: &Array<A, D>, profile: &str) -> bach_runtime::Result<WhatIf> {
    if let Some((name, count)) = profile.trim().rsplit_once(':').and_then(|(p, n)| n.parse::<usize>().ok().map(|n| (p, n))) {
        return whatif_count(&a.lazy(), name, count);
    }
    let model = load_profile(profile, &a.lazy().session().devices().profiles())?;
    // The machine the profile describes: this one for `default`.
    let gpu = match profile.trim() {
        "h100" => Some("NVIDIA H100 80GB HBM3".to_string()),
        "default" => None,
        _ => Some(model.measured_on.as_ref().map_or_else(|| "the profile's GPU".to_string(), |m| format!("GPU of {m}"))),
    };
    whatif_with(&a.lazy(), model, format!("profile {profile}"), gpu)
}

/// A profile by name or path: `h100`, `default` (the uncalibrated defaults for `devices`),
/// or a file.
pub(crate) fn load_profile(name: &str, devices: &[DeviceProfile]) -> bach_runtime::Result<CostModel> {
    Ok(match name.trim() {
        "h100" => CostModel::h100(),
        "default" => CostModel::for_devices(devices),
        path => CostModel::load(std::path::Path::new(path)).map_err(|e| {
            bach_runtime::BachError::invalid("cost profile", format!("{e} (known profiles: h100, default, or a file written by `bach-bench calibrate --out FILE`)"))
        })?,
    })
}

/// One GPU of `profile` against `count` of them: both plans for that machine's GPU.
fn whatif_count(lazy: &Lazy, profile: &str, count: usize) -> bach_runtime::Result<WhatIf> {
    if count == 0 || count > bach_runtime::devices::MAX_ACCELERATORS {
        return Err(bach_runtime::BachError::invalid("whatif", format!("{count} GPUs: between 1 and {}", bach_runtime::devices::MAX_ACCELERATORS)));
    }
    let s = lazy.session();
    let model = load_profile(profile, &s.devices().profiles())?;
    let gpu = match profile.trim() {
        "h100" | "default" => "NVIDIA H100 80GB HBM3".to_string(),
        _ => model.measured_on.clone().map_or_else(|| "the profile's GPU".to_string(), |m| format!("GPU of {m}")),
    };
    let cpu = s.devices().profiles()[0].clone();
    let gpus = |n: usize| -> Vec<DeviceProfile> {
        std::iter::once(cpu.clone())
            .chain((1..=n).map(|k| {
                let mut d = DeviceProfile::hypothetical_gpu(&if n == 1 { gpu.clone() } else { format!("{gpu} #{k}") }, 80 << 30);
                d.id = bach_runtime::DeviceId(k as u8);
                d
            }))
            .collect()
    };
    let current = s.plan_with(&[lazy], &model, &gpus(1))?;
    let changed = s.plan_with(&[lazy], &model, &gpus(count))?;
    let change = format!("{count} x {gpu} instead of one (profile {profile})");
    Ok(WhatIf { change, current, changed, current_model: model.clone(), changed_model: model, cell: s.cell() })
}

fn whatif_settings(lazy: &Lazy, settings: &[(&str, &str)]) -> bach_runtime::Result<WhatIf> {
    let mut model = lazy.session().config().cost;
    for (path, value) in settings {
        model.set(path, value).map_err(|e| bach_runtime::BachError::invalid("whatif", e))?;
    }
    let change = settings.iter().map(|(p, v)| format!("{p} = {v}")).collect::<Vec<_>>().join(", ");
    whatif_with(lazy, model, change, None)
}

/// The two plans; `other_gpu`: the changed side is another machine's, with this GPU where
/// the session has no CUDA device.
fn whatif_with(lazy: &Lazy, changed_model: CostModel, change: String, other_gpu: Option<String>) -> bach_runtime::Result<WhatIf> {
    let s = lazy.session();
    let mut devices = s.devices().profiles();
    if !devices.iter().any(|d| d.kind != DeviceKind::Cpu) {
        devices.push(DeviceProfile::hypothetical_gpu("NVIDIA H100 80GB HBM3", 80 << 30));
    }
    let changed_devices = match other_gpu {
        Some(name) if !devices.iter().any(|d| d.kind == DeviceKind::Cuda && !d.is_hypothetical()) => {
            vec![devices[0].clone(), DeviceProfile::hypothetical_gpu(&name, 80 << 30)]
        }
        _ => devices.clone(),
    };
    let current_model = s.config().cost;
    let current = s.plan_with(&[lazy], &current_model, &devices)?;
    let changed = s.plan_with(&[lazy], &changed_model, &changed_devices)?;
    Ok(WhatIf { change, current, changed, current_model, changed_model, cell: s.cell() })
}

impl WhatIf {
    /// The two predicted timelines (current, changed), on one time scale.
    pub fn traces(&self) -> (EvalTrace, EvalTrace) {
        let mut a = EvalTrace::predicted(&self.current, &self.current_model, self.cell);
        let mut b = EvalTrace::predicted(&self.changed, &self.changed_model, self.cell);
        let end = a.end.max(b.end);
        a.end = end;
        b.end = end;
        (a, b)
    }

    /// The predicted timelines as two SVG charts, titled as predictions.
    pub fn charts(&self) -> (String, String) {
        let (a, b) = self.traces();
        let title = |label: &str, plan: &Plan| {
            let for_ = plan.predicted_for.as_ref().map(|m| format!(" for {m}")).unwrap_or_default();
            format!("Predicted{for_}, {label}: {}", bach_runtime::cost::seconds(plan.predicted.seconds()))
        };
        (
            bach_runtime::chart::labelled_timeline_svg(&a, &self.current.devices, &title("current model", &self.current)),
            bach_runtime::chart::labelled_timeline_svg(&b, &self.changed.devices, &title(&format!("what if {}", self.change), &self.changed)),
        )
    }
}

impl fmt::Display for WhatIf {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use bach_runtime::cost::seconds;
        let dev = |p: &Plan, d: bach_runtime::DeviceId| p.devices.get(d.0 as usize).map_or_else(|| format!("device {}", d.0), |x| x.name.clone());
        let summary = |p: &Plan| {
            let on_accel = p.steps.iter().filter(|s| s.device != bach_runtime::CPU).count();
            let moved: usize = p.transfers.iter().map(|t| t.bytes).sum();
            format!(
                "{} (compute {}, copies {}); {} of {} ops on the accelerator, {} transfers ({})",
                seconds(p.predicted.seconds()),
                seconds(p.predicted.compute_s),
                seconds(p.predicted.copies_s),
                on_accel,
                p.steps.len(),
                p.transfers.len(),
                bach_runtime::units::bytes(moved)
            )
        };
        writeln!(f, "what if {} (a prediction: nothing ran)", self.change)?;
        let hypothetical = self.current.devices.iter().any(|d| d.is_hypothetical());
        if hypothetical {
            writeln!(
                f,
                "devices: {} (no accelerator here: both plans are for a hypothetical one)",
                self.current.devices.iter().map(|d| d.name.as_str()).collect::<Vec<_>>().join(", ")
            )?;
        }
        writeln!(f, "  now:     {}", summary(&self.current))?;
        writeln!(f, "  what-if: {}", summary(&self.changed))?;
        if let Some(m) = &self.changed.predicted_for {
            writeln!(f, "  (the what-if's figures were measured on {m})")?;
        }
        let moved: Vec<String> = self
            .current
            .steps
            .iter()
            .filter_map(|s| {
                let other = self.changed.step_of(s.id)?;
                (other.device != s.device).then(|| format!("#{} {} {} -> {}", s.id, s.op, dev(&self.current, s.device), dev(&self.changed, other.device)))
            })
            .collect();
        if moved.is_empty() {
            writeln!(f, "  every op stays where it is")?;
        } else {
            writeln!(f, "  {} op(s) move:", moved.len())?;
            for m in moved.iter().take(12) {
                writeln!(f, "    {m}")?;
            }
            if moved.len() > 12 {
                writeln!(f, "    ... and {} more", moved.len() - 12)?;
            }
        }
        let (a, b) = (self.current.predicted.seconds(), self.changed.predicted.seconds());
        if a > 0.0 && b > 0.0 {
            writeln!(f, "  predicted {:.2}x {}", if b <= a { a / b } else { b / a }, if b <= a { "faster" } else { "slower" })?;
        }
        Ok(())
    }
}

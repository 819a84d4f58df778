//! Explain: per op of a plan, where it runs, what each device would cost it, the copies its
//! arguments need there, the margin, and the reason in words; then the plan's predicted total.

use std::fmt::Write;

use super::Plan;
use crate::cost::seconds;
use crate::profile::CPU;

impl Plan {
    /// The explanation a person reads (`:bach explain`, `value.explain()`).
    pub fn explain(&self) -> String {
        let mut out = String::new();
        let w = &mut out;
        let t = &self.predicted;
        let _ = writeln!(w, "policy {}: predicted {} (compute {}, copies {}, summed)", self.policy, seconds(t.seconds()), seconds(t.compute_s), seconds(t.copies_s));
        if let Some(m) = &self.predicted_for {
            let _ = writeln!(w, "the cost model was measured on {m}: these are predictions for that machine");
        }
        let _ = writeln!(w, "{:<7} {:<14} {:<11} {:>10} {:>11} {:>10} {:>11}  why", "op", "", "runs on", "cpu", "accelerator", "copies", "margin");
        for (s, stage) in self.stages.iter().enumerate() {
            for &i in &stage.steps {
                let st = &self.steps[i];
                let on = match stage.shards.len() {
                    _ if st.device == CPU => "cpu".to_string(),
                    0 | 1 if self.devices.len() > 2 => format!("device {}", st.device.0),
                    0 | 1 => "accelerator".to_string(),
                    _ => format!("devices {}-{}", stage.shards[0].0, stage.shards[stage.shards.len() - 1].0),
                };
                let margin = match st.margin_s {
                    Some(m) if m >= 0.0 => format!("+{}", seconds(m)),
                    Some(m) => format!("-{}", seconds(-m)),
                    None => "fixed".into(),
                };
                let mut why = st.reason.to_string();
                if stage.paged {
                    let _ = write!(why, "; paged in {} pieces", stage.pieces);
                } else if stage.pieces > 1 {
                    let _ = write!(why, "; in {} pieces", stage.pieces);
                }
                if stage.shards.len() > 1 {
                    let _ = write!(why, "; its pieces spread over {} accelerators, {} at once", stage.shards.len(), self.stage_width(s));
                }
                if let Some(slot) = stage.slot.filter(|_| st.device != CPU) {
                    let peers: Vec<u8> =
                        self.devices.iter().filter(|d| d.id != CPU && Some(d.kind) == self.devices.get(st.device.0 as usize).map(|p| p.kind)).map(|d| d.id.0).collect();
                    let _ = write!(
                        why,
                        "; device {}: earliest finish of devices {} (list schedule: {} to {}{})",
                        st.device.0,
                        peers.iter().map(u8::to_string).collect::<Vec<_>>().join(", "),
                        seconds(slot.start_s),
                        seconds(slot.finish_s),
                        if slot.alone_on != st.device { format!(", device {} busy", slot.alone_on.0) } else { String::new() }
                    );
                }
                if let Some(m) = st.margin_s.filter(|m| *m < 0.0) {
                    let _ = write!(why, " (moving it would save {})", seconds(-m));
                }
                let _ = writeln!(
                    w,
                    "#{:<6} {:<14} {:<11} {:>10} {:>11} {:>10} {:>11}  {why}",
                    st.id,
                    st.op,
                    on,
                    seconds(st.cpu_s),
                    seconds(st.accelerator_s),
                    seconds(st.copies_s),
                    margin
                );
            }
        }
        let copies: usize = self.transfers.iter().map(|t| t.bytes).sum();
        let _ = writeln!(
            w,
            "{} transfers, {} in all; devices: {}",
            self.transfers.len(),
            crate::units::bytes(copies),
            self.devices.iter().map(|d| if self.devices.len() > 2 && d.id != CPU { format!("[{}] {}", d.id.0, d.name) } else { d.name.clone() }).collect::<Vec<_>>().join(", ")
        );
        let _ = writeln!(w, "margin: what moving the op alone to the other device would add to the total (copies included)");
        out
    }
}

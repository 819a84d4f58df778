//! A cost model as a profile file: JSON, one object holding where the figures come from and
//! every parameter by its settable path (the paths of `:bach cost set`, declared in `param.rs`):
//!
//! ```json
//! { "format": "bach cost profile 1",
//!   "source": "calibrated on host1, 2026-11-24 (12.3 s)",
//!   "measured_on": "host1: cpu (2 threads)",
//!   "parameters": { "elementwise.cpu.per_call": 2.1e-6, "transfer.h2d.pageable.cuda.bandwidth": 1.7e10, ... } }
//! ```
//!
//! Written and read here, without serde: notebooks load profiles, and every crate in a
//! notebook's graph costs kernel start-up. A file names only the parameters it sets; the rest
//! keep this machine's defaults, so a profile from an older version still loads.
//!
//! Calibrated profiles live in the user's cache directory, one per host and set of devices
//! ([`saved_profile_path`]); a session loads its own at start.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use super::{CostModel, Param};
use crate::json;
use crate::knobs::ProfileDir;
use crate::profile::DeviceProfile;

const FORMAT: &str = "bach cost profile 1";

impl CostModel {
    /// The model as a profile file's text.
    pub fn to_json(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "{{\n  \"format\": {},\n  \"source\": {},", json::quote(FORMAT), json::quote(&self.source));
        match &self.measured_on {
            Some(m) => {
                let _ = writeln!(out, "  \"measured_on\": {},", json::quote(m));
            }
            None => out.push_str("  \"measured_on\": null,\n"),
        }
        out.push_str("  \"parameters\": {\n");
        let params = self.parameters();
        for (i, (path, v)) in params.iter().enumerate() {
            let sep = if i + 1 < params.len() { "," } else { "" };
            let _ = writeln!(out, "    {}: {}{sep}", json::quote(&path.to_string()), number(*v));
        }
        out.push_str("  }\n}\n");
        out
    }

    /// A model from a profile file's text: this machine's defaults (`threads` CPU threads)
    /// with every parameter the file names set.
    pub fn from_json(text: &str, threads: usize) -> Result<CostModel, String> {
        let top = json::parse(text)?;
        let json::Value::Object(fields) = top else { return Err("a cost profile is a JSON object".into()) };
        let get = |k: &str| fields.iter().find(|(key, _)| key == k).map(|(_, v)| v);
        match get("format") {
            Some(json::Value::String(f)) if f == FORMAT => {}
            Some(json::Value::String(f)) => return Err(format!("unknown profile format `{f}` (this version reads `{FORMAT}`)")),
            _ => return Err(format!("not a cost profile: no \"format\": \"{FORMAT}\"")),
        }
        let mut model = CostModel::for_cpu_threads(threads);
        if let Some(json::Value::String(s)) = get("source") {
            model.source = s.clone();
        }
        model.measured_on = match get("measured_on") {
            Some(json::Value::String(s)) => Some(s.clone()),
            _ => None,
        };
        let Some(json::Value::Object(params)) = get("parameters") else { return Err("a cost profile needs a \"parameters\" object".into()) };
        for (path, v) in params {
            let json::Value::Number(n) = v else { return Err(format!("parameter `{path}` is not a number")) };
            let first_line = |e: String| format!("parameter `{path}`: {}", e.lines().next().unwrap_or_default());
            let param: Param = path.parse().map_err(first_line)?;
            model.put(param, *n).map_err(first_line)?;
        }
        Ok(model)
    }

    /// Write the model to `path` as a profile file (creating its directory).
    pub fn save(&self, path: &Path) -> Result<(), String> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        }
        // Written whole, then renamed: a kernel starting meanwhile never reads half a file.
        let tmp = path.with_extension(format!("json.{}", std::process::id()));
        std::fs::write(&tmp, self.to_json()).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
        std::fs::rename(&tmp, path).map_err(|e| format!("cannot write {}: {e}", path.display()))
    }

    /// Read a profile file (this machine's defaults for what it does not name).
    pub fn load(path: &Path) -> Result<CostModel, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read cost profile {}: {e}", path.display()))?;
        CostModel::from_json(&text, rayon::current_num_threads()).map_err(|e| format!("{}: {e}", path.display()))
    }
}

/// Where calibrated profiles are kept: `$BACH_PROFILE_DIR`, else `$XDG_CACHE_HOME/bach/profiles`,
/// else `~/.cache/bach/profiles`. `BACH_PROFILE_DIR=none` turns saving and loading off
/// ([`crate::knobs::Knobs::profile_dir`], read at each call).
pub fn profile_dir() -> Option<PathBuf> {
    match crate::knobs::Knobs::from_env().profile_dir {
        ProfileDir::Off => None,
        ProfileDir::At(d) => Some(d),
        ProfileDir::Default => {
            let cache =
                std::env::var_os("XDG_CACHE_HOME").filter(|d| !d.is_empty()).map(PathBuf::from).or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))?;
            Some(cache.join("bach").join("profiles"))
        }
    }
}

/// This host's name (for profile keys and labels).
pub fn host_name() -> String {
    let from_file = |p: &str| std::fs::read_to_string(p).ok().map(|s| s.trim().to_string()).filter(|s| !s.is_empty());
    from_file("/proc/sys/kernel/hostname").or_else(|| from_file("/etc/hostname")).or_else(|| std::env::var("HOSTNAME").ok()).unwrap_or_else(|| "localhost".into())
}

/// The key of a profile: the host and its devices ("myhost--cpu-2-threads--nvidia-h100-80gb-hbm3").
pub fn profile_key(devices: &[DeviceProfile]) -> String {
    let slug = |s: &str| {
        let mut out = String::new();
        for c in s.chars() {
            if c.is_ascii_alphanumeric() {
                out.push(c.to_ascii_lowercase());
            } else if !out.ends_with('-') {
                out.push('-');
            }
        }
        out.trim_matches('-').to_string()
    };
    let mut parts = vec![slug(&host_name())];
    parts.extend(devices.iter().filter(|d| !d.is_hypothetical()).map(|d| slug(&d.name)));
    parts.join("--")
}

/// Where the calibrated profile of this host with `devices` is saved (`None`: saving is off).
pub fn saved_profile_path(devices: &[DeviceProfile]) -> Option<PathBuf> {
    profile_dir().map(|d| d.join(format!("{}.json", profile_key(devices))))
}

/// A JSON number; an infinite cost is written as the largest one.
fn number(v: f64) -> String {
    json::number(v).unwrap_or_else(|| "1e308".into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cost::{Direction, MemoryKind};
    use crate::profile::DeviceKind;

    #[test]
    fn a_profile_file_gives_back_the_model_it_was_written_from() {
        let mut c = CostModel::h100();
        c.set("math.cpu.per_element", "3.25e-10").unwrap();
        c.set("transfer.d2h.pageable.cuda.bandwidth", "12.5GB/s").unwrap();
        c.set("planner.cpu_piece_bytes", "128KiB").unwrap();
        c.source = "calibrated on \"lab\" box\nline two".into();
        let back = CostModel::from_json(&c.to_json(), 16).unwrap();
        assert_eq!(back, c);
        let d = CostModel::for_cpu_threads(2);
        assert_eq!(CostModel::from_json(&d.to_json(), 2).unwrap(), d);
    }

    #[test]
    fn a_profile_naming_some_parameters_keeps_the_defaults_for_the_rest() {
        let text = r#"{"format": "bach cost profile 1", "source": "by hand", "measured_on": "lab",
                       "parameters": {"elementwise.cpu.per_element": 5e-10, "transfer.h2d.emulated.bandwidth": 1e9}}"#;
        let c = CostModel::from_json(text, 2).unwrap();
        let d = CostModel::for_cpu_threads(2);
        assert_eq!(c.op_rate(super::super::Family::Elementwise, DeviceKind::Cpu).per_element, 5e-10);
        assert_eq!(c.op_rate(super::super::Family::Math, DeviceKind::Cpu), d.op_rate(super::super::Family::Math, DeviceKind::Cpu));
        assert_eq!(c.copy_rate(DeviceKind::Emulated, Direction::H2d, MemoryKind::Pageable).bandwidth, 1e9);
        assert_eq!((c.source.as_str(), c.measured_on.as_deref()), ("by hand", Some("lab")));
    }

    #[test]
    fn bad_profiles_say_what_is_wrong() {
        assert!(CostModel::from_json("[1]", 2).unwrap_err().contains("JSON object"));
        assert!(CostModel::from_json(r#"{"source": "x"}"#, 2).unwrap_err().contains("not a cost profile"));
        assert!(CostModel::from_json(r#"{"format": "bach cost profile 9"}"#, 2).unwrap_err().contains("unknown profile format"));
        let e = CostModel::from_json(r#"{"format": "bach cost profile 1", "parameters": {"sorting.cpu.per_call": 1}}"#, 2).unwrap_err();
        assert!(e.contains("sorting.cpu.per_call") && e.contains("unknown op family"), "{e}");
        assert!(CostModel::from_json(r#"{"format": "bach cost profile 1", "parameters": {"elementwise.cpu.per_call": "fast"}}"#, 2).unwrap_err().contains("not a number"));
        assert!(CostModel::from_json("{\"format\": \"bach cost profile 1\",\n \"parameters\": {,}}", 2).unwrap_err().contains("line 2"));
        assert!(CostModel::load(Path::new("/nonexistent/p.json")).unwrap_err().contains("cannot read cost profile"));
    }

    #[test]
    fn profile_keys_name_host_and_devices_in_file_name_characters() {
        let k = profile_key(&[DeviceProfile::cpu(), DeviceProfile::hypothetical_gpu("H100", 1 << 30)]);
        assert!(k.contains("--cpu-") && !k.contains("h100"), "{k}");
        assert!(k.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'), "{k}");
    }
}

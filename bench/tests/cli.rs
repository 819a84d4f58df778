//! The built `bach-bench` binary: accelerator flags, and the GPU paths failing with a reason
//! (never a panic) on a machine without a GPU.

use std::process::{Command, Output};

fn bench(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_bach-bench")).args(args).env_remove("BACH_DEVICE").output().expect("bach-bench runs")
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

/// Whether this machine has a usable GPU (then the no-GPU checks do not apply).
fn gpu_here() -> bool {
    let o = bench(&["bandwidth", "--sizes", "1MiB", "--repeat", "1", "--launches", "10"]);
    o.status.success()
}

fn assert_fails_with_reason(args: &[&str], want: &str) {
    let o = bench(args);
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: stdout {out}\nstderr {err}");
    assert!(err.contains(want), "{args:?}: stderr {err}");
    assert!(!err.contains("panicked"), "{args:?} panicked: {err}");
}

#[test]
fn gpu_paths_without_a_gpu_exit_non_zero_with_the_reason() {
    if gpu_here() {
        eprintln!("a GPU is present: the no-GPU checks do not apply");
        return;
    }
    assert_fails_with_reason(&["run", "black-scholes", "--log2", "10", "--mode", "gpu"], "no GPU: ");
    assert_fails_with_reason(&["run", "haversine", "--log2", "10", "--mode", "gpu"], "no GPU: ");
    assert_fails_with_reason(&["bandwidth"], "no GPU: ");
    assert_fails_with_reason(&["run", "black-scholes", "--log2", "10", "--mode", "bach", "--device", "cuda"], "--device cuda: ");
    assert_fails_with_reason(&["compare", "haversine", "--log2", "10", "--device", "cuda"], "--device cuda: ");
}

#[test]
fn bad_device_flags_are_usage_errors() {
    for args in [&["run", "haversine", "--device", "tpu"][..], &["run", "haversine", "--memory", "lots"], &["bandwidth", "--log2", "3"]] {
        let o = bench(args);
        let (_, err) = text(&o);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("usage:"), "{args:?}: {err}");
    }
}

#[test]
fn emulated_device_with_a_memory_cap_pages_and_reports_it() {
    let o = bench(&["run", "black-scholes", "--log2", "16", "--mode", "bach", "--device", "emulated", "--memory", "1MiB", "--repeat", "1", "--json"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let rec: serde_json::Value = serde_json::from_str(out.lines().next().expect("one line")).expect("json");
    assert_eq!(rec["mode"], "bach");
    assert_eq!(rec["memory_cap_bytes"], 1 << 20);
    let device = rec["device"].as_str().unwrap();
    assert!(device.contains("emulated accelerator") && device.contains("1.0 MiB"), "{device}");
    let plan = &rec["plan"];
    for key in ["stages", "pieces", "paged", "transfers", "copies", "h2d_bytes", "d2h_bytes"] {
        assert!(!plan[key].is_null(), "plan lacks {key}: {plan}");
    }
    assert!(!rec["ran_on"].as_array().unwrap().is_empty());
    // Once ops have accelerator kernels, the 2.5 MiB of inputs stream through 1 MiB in pieces.
    if plan["transfers"].as_u64().unwrap() > 0 {
        assert_eq!(plan["paged"], true, "{plan}");
        assert!(plan["h2d_bytes"].as_u64().unwrap() >= (5 * 8) << 16, "{plan}");
    }
}

#[test]
fn compare_on_the_cpu_prints_modes_and_ratio() {
    let o = bench(&["compare", "haversine", "--log2", "12", "--device", "cpu", "--repeat", "1"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 3, "{out}");
    let bach: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(bach["mode"], "bach");
    assert!(bach["max_rel_diff_vs_cpu"].as_f64().unwrap() <= 1e-9);
    assert_eq!(bach["plan"]["transfers"], 0);
    assert!(lines[2].starts_with("ratio cpu/bach = "), "{out}");
}

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
    // `greedy`: every op with a kernel on the accelerator, so the inputs stream through it.
    let o = bench(&["run", "black-scholes", "--log2", "16", "--mode", "bach", "--device", "emulated", "--memory", "1MiB", "--repeat", "1", "--json", "--policy", "greedy"]);
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
    // The 2.5 MiB of inputs stream through 1 MiB in pieces.
    assert!(plan["transfers"].as_u64().unwrap() > 0, "{plan}");
    assert_eq!(plan["paged"], true, "{plan}");
    assert!(plan["h2d_bytes"].as_u64().unwrap() >= (5 * 8) << 16, "{plan}");
}

fn plan_json(args: &[&str]) -> serde_json::Value {
    let o = bench(args);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{args:?}: {err}");
    assert_eq!(out.lines().count(), 1, "one JSON line: {out}");
    serde_json::from_str(&out).expect("json")
}

/// `plan` prints the plan without running it, for any size (inputs are placeholders): per op
/// the device, estimates and reason; transfers; stages; the predicted total. With the H100
/// profile on a machine without that GPU it says the figures are a prediction for it.
#[test]
fn plan_prints_the_structured_plan_as_json_without_running() {
    let big = plan_json(&["plan", "black-scholes", "--log2", "31", "--profile", "h100", "--device", "cpu"]);
    assert_eq!(big["policy"], "optimal");
    assert_eq!(big["n"], 1u64 << 31);
    assert!(big["prediction_for"].as_str().unwrap().contains("H100"), "{big}");
    assert!(big["devices"][1].as_str().unwrap().contains("hypothetical"), "{big}");
    let ops = big["ops"].as_array().unwrap();
    assert_eq!(ops.len(), 32, "Black-Scholes' 32 ops");
    assert!(ops.iter().all(|o| o["device"] == "accelerator" && o["reason"].as_str().unwrap().starts_with("optimal")), "{big}");
    assert!(
        big["stages"].as_array().unwrap().iter().any(|s| s["paged"] == true),
        "80 GiB of inputs and 32 GiB of outputs (the fused kernels hold nothing else) page through 80 GiB: {big}"
    );
    let predicted = big["predicted_seconds"].as_f64().unwrap();
    let parts = big["predicted_compute_seconds"].as_f64().unwrap() + big["predicted_copies_seconds"].as_f64().unwrap();
    assert!(predicted > 0.0 && (predicted - parts).abs() < 1e-9 * predicted, "{big}");
    // Small: the copies are not worth it; every policy is priced the same way.
    let small = |policy: &str| plan_json(&["plan", "black-scholes", "--log2", "10", "--profile", "h100", "--device", "cpu", "--policy", policy]);
    let (optimal, greedy, threshold) = (small("optimal"), small("greedy"), small("threshold"));
    assert!(optimal["ops"].as_array().unwrap().iter().all(|o| o["device"] == "cpu"), "{optimal}");
    assert!(greedy["ops"].as_array().unwrap().iter().all(|o| o["device"] == "accelerator"), "{greedy}");
    assert_eq!(optimal["transfers"].as_array().unwrap().len(), 0);
    let s = |v: &serde_json::Value| v["predicted_seconds"].as_f64().unwrap();
    assert!(s(&optimal) <= s(&greedy) && s(&optimal) <= s(&threshold), "{} {} {}", s(&optimal), s(&greedy), s(&threshold));
}

/// `cost` prints the model as JSON; a file of it, edited, is read back by `--profile FILE`
/// and changes the plan.
#[test]
fn a_cost_model_file_round_trips_and_moves_the_plan() {
    let o = bench(&["cost", "--profile", "h100"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let mut model: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(model["format"], "bach cost profile 1", "{out}");
    let params = model["parameters"].as_object_mut().unwrap();
    assert_eq!(params["elementwise.cuda.per_call"], serde_json::json!(3.4e-6), "{out}");
    for (path, v) in params.iter_mut() {
        if path.contains(".cuda.per_element") {
            *v = serde_json::json!(1e-6);
        }
    }
    let path = std::env::temp_dir().join(format!("bach-cost-{}.json", std::process::id()));
    std::fs::write(&path, model.to_string()).unwrap();
    let plan = plan_json(&["plan", "haversine", "--log2", "24", "--device", "cpu", "--profile", path.to_str().unwrap()]);
    assert!(plan["ops"].as_array().unwrap().iter().all(|o| o["device"] == "cpu"), "a GPU made slow keeps everything on the CPU: {plan}");
    std::fs::write(&path, "{\"not\": 1}").unwrap();
    let o = bench(&["plan", "haversine", "--profile", path.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o).1.contains("not a cost profile"), "{}", text(&o).1);
    let _ = std::fs::remove_file(path);
}

#[test]
fn compare_on_the_cpu_prints_modes_and_ratio() {
    let chart = std::env::temp_dir().join(format!("bach-bench-timeline-{}.svg", std::process::id()));
    let o = bench(&["compare", "haversine", "--log2", "12", "--device", "cpu", "--repeat", "1", "--timeline", chart.to_str().unwrap()]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines.len(), 4, "{out}");
    let bach: serde_json::Value = serde_json::from_str(lines[1]).unwrap();
    assert_eq!(bach["mode"], "bach");
    assert!(bach["max_rel_diff_vs_cpu"].as_f64().unwrap() <= 1e-9);
    assert_eq!(bach["plan"]["transfers"], 0);
    // Where bach's last evaluation went: in the JSON, and in words.
    let shares = bach["breakdown"].as_array().expect("a breakdown");
    assert!(shares.iter().any(|s| s["key"] == "compute:cpu" && s["events"].as_u64().unwrap() > 0), "{bach}");
    let wall = bach["last_evaluation_seconds"].as_f64().unwrap();
    let total: f64 = shares.iter().map(|s| s["seconds"].as_f64().unwrap()).sum();
    assert!((total - wall).abs() < 1e-6, "{total} vs {wall}");
    assert!(lines[2].starts_with("bach's last evaluation, ") && lines[2].contains("compute:cpu"), "{out}");
    assert!(lines[3].starts_with("ratio cpu/bach = "), "{out}");
    // --timeline: bach's last run as a chart, its ops named.
    let svg = std::fs::read_to_string(&chart).expect("--timeline writes the chart");
    assert!(svg.starts_with("<svg") && svg.contains("asin"), "{}", &svg[..svg.len().min(300)]);
    let _ = std::fs::remove_file(chart);
}

/// `small-arrays` runs each small-array program with ndarray and ported to Bach, and fails
/// when their final states differ by a bit (Lorenz, the guide's `rk_step`) or beyond 1e-9
/// (the oscillators): Bach's at-once paths (an operand computed in its own buffer, a product
/// written into a spent value) give ndarray's numbers.
#[test]
fn small_arrays_ported_give_ndarrays_numbers() {
    let o = bench(&["small-arrays", "--steps", "300", "--repeat", "1"]);
    let (out, err) = text(&o);
    assert!(o.status.success(), "stdout {out}\nstderr {err}");
    for what in ["Lorenz", "rk_step", "50 damped oscillators", "500 damped oscillators"] {
        assert!(out.contains(what), "{what}: {out}");
    }
}

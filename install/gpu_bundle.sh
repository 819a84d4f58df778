#!/usr/bin/env bash
# The GPU bundle: release binaries that run Bach's CUDA tests and benchmarks on a GPU host with
# no Rust toolchain. Builds here (no GPU or CUDA needed: cudarc loads CUDA at run time), strips
# the binaries and writes target/gpu-bundle/ (about 30 MB):
#
#   bin/bach-bench              the workload harness
#   tests/<name>                the CUDA-relevant test binaries of bach-tests
#   run.sh                      what to run on the GPU host (one log, results beside it)
#   targets.py                  the GPU targets of #12 and #16, tabulated from the results
#
# Then: copy target/gpu-bundle/ to the GPU host and run `bash run.sh` there (see README, "On a GPU").
set -euo pipefail
cd "$(dirname "$0")/.."
out=target/gpu-bundle
# The test binaries that exercise an accelerator: the device conformance suite, every op
# against ndarray, memories and transfers, NVRTC kernels, results landing in page-locked memory.
tests=(conformance ops_equivalence devices nvrtc results_memory)

command -v strip >/dev/null || { echo "gpu_bundle: needs strip (binutils)" >&2; exit 1; }
echo "gpu_bundle: building release binaries"
cargo build --release -p bach-bench
# The test binaries' paths come from cargo's JSON messages (their names carry a hash).
executables=$(cargo test --release -p bach-tests --no-run --message-format=json 2>/dev/null |
    python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["target"]["kind"] == ["test"]:
        print(m["target"]["name"], m["executable"])
')
rm -rf "$out"
mkdir -p "$out/bin" "$out/tests"
cp target/release/bach-bench "$out/bin/"
for t in "${tests[@]}"; do
    exe=$(awk -v t="$t" '$1 == t { print $2 }' <<<"$executables")
    [ -n "$exe" ] && [ -x "$exe" ] || { echo "gpu_bundle: no test binary for $t (cargo test --no-run -p bach-tests)" >&2; exit 1; }
    cp "$exe" "$out/tests/$t"
done
strip "$out/bin/"* "$out/tests/"*
cp install/gpu_run.sh "$out/run.sh"
cp install/gpu_targets.py "$out/targets.py"
chmod +x "$out/run.sh"
git rev-parse --short HEAD >"$out/COMMIT" 2>/dev/null || echo unknown >"$out/COMMIT"
echo "gpu_bundle: wrote $out ($(du -sh "$out" | cut -f1)) from commit $(cat "$out/COMMIT"):"
ls -l "$out/bin" "$out/tests"
echo "gpu_bundle: copy it to a GPU host and run: bash run.sh [RESULTS_DIR]"

#!/usr/bin/env bash
# run.sh of the GPU bundle (install/gpu_bundle.sh writes it as target/gpu-bundle/run.sh): on a
# GPU host with the NVIDIA driver and NVRTC/cuBLAS (a CUDA 13 toolkit, or pip's
# nvidia-cuda-nvrtc and nvidia-cublas wheels), no Rust toolchain. Runs the CUDA tests with
# BACH_REQUIRE_CUDA=1 (a missing GPU fails them), then the benchmarks, into one log:
#
#   bash run.sh [RESULTS_DIR]       # default: results-<date>/ beside run.sh
#
# PARTS=tests,bench,large,ml,calibrate,multi (the default: all; `profile`, not in the default, runs
# Black-Scholes 2^22 at 8 MiB under Nsight Systems where `nsys` is installed) runs some of it, e.g. one part per
# call where a command may run 10 minutes at most. Measured on the H100 and H200 hosts (stop
# 32): tests,bench,large,calibrate together 112-134 s (tests about 17 s, bench about 75 s,
# large about 20 s, calibrate with its 12 residual runs about 15 s); ml about 40 s (stop 29).
# Parts run into the same RESULTS_DIR add up: the targets table reads every benchmark's
# output there.
#
# RESULTS_DIR/gpu-bundle.log has everything; benchmarks' JSON lines, timeline charts (SVG) and
# the calibrated CUDA cost profile lie beside it. BACH_CUDA_LIB=DIR names the directory with
# libnvrtc.so.13 and libcublas.so.13 when it is not found. BENCH=0 runs the tests only.
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
parts="${PARTS:-tests,bench,large,ml,calibrate,multi}"
[ "${BENCH:-1}" = 0 ] && parts=tests
for p in ${parts//,/ }; do
    case "$p" in
    tests | bench | large | ml | calibrate | multi | profile) ;;
    *)
        echo "run.sh: PARTS=$parts: unknown part $p (known: tests, bench, large, ml, calibrate, multi, profile)" >&2
        exit 2
        ;;
    esac
done
part() { [[ ",$parts," == *",$1,"* ]]; }
results="${1:-$here/results-$(date +%Y%m%d-%H%M%S)}"
mkdir -p "$results"
results="$(cd "$results" && pwd)"
log="$results/gpu-bundle.log"
exec > >(tee -a "$log") 2>&1

echo "bach GPU bundle, commit $(cat "$here/COMMIT" 2>/dev/null || echo unknown), $(date -u '+%Y-%m-%d %H:%M:%S UTC') on $(hostname)"
echo "results: $results"
echo "parts: $parts"

# The driver's own libcuda must be the one loaded: never a toolkit's compat/libcuda.so.1, which
# with a newer driver makes every call fail with CUDA_ERROR_SYSTEM_DRIVER_MISMATCH.
if ! ldconfig -p 2>/dev/null | grep -q 'libcuda\.so\.1 '; then
    echo "run.sh: no NVIDIA driver library (libcuda.so.1) on this host: this bundle needs a GPU host" >&2
    exit 1
fi
if command -v nvidia-smi >/dev/null; then
    nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
fi
case "${LD_LIBRARY_PATH:-}" in
*compat*)
    echo "run.sh: LD_LIBRARY_PATH has a compat/ directory ($LD_LIBRARY_PATH): removing it (its libcuda does not match the driver)"
    LD_LIBRARY_PATH="$(tr ':' '\n' <<<"$LD_LIBRARY_PATH" | grep -v compat | paste -sd: -)"
    ;;
esac

# NVRTC and cuBLAS: BACH_CUDA_LIB, a CUDA toolkit's targets/x86_64-linux/lib, or pip's
# nvidia/cu13/lib (and the per-library wheels' lib directories).
lib_dirs=()
add_dir() {
    local d="$1"
    [ -d "$d" ] || return 0
    case "$d" in */compat | */compat/*) return 0 ;; esac
    for have in "${lib_dirs[@]}"; do [ "$have" = "$d" ] && return 0; done
    lib_dirs+=("$d")
}
[ -n "${BACH_CUDA_LIB:-}" ] && add_dir "$BACH_CUDA_LIB"
for root in "${CUDA_HOME:-}" "${CUDA_PATH:-}" /usr/local/cuda /usr/local/cuda-13* /opt/cuda; do
    [ -n "$root" ] && add_dir "$root/targets/x86_64-linux/lib"
done
for py in python3 python; do
    command -v "$py" >/dev/null || continue
    site=$("$py" -c 'import site, sys; print("\n".join(site.getsitepackages() + [site.getusersitepackages()]))' 2>/dev/null) || continue
    while read -r s; do
        add_dir "$s/nvidia/cu13/lib"
        for d in "$s"/nvidia/*/lib; do add_dir "$d"; done
    done <<<"$site"
done
found() { for d in "${lib_dirs[@]}"; do ls "$d"/"$1"* >/dev/null 2>&1 && { echo "$d"; return 0; }; done; return 1; }
nvrtc_dir=$(found libnvrtc.so.13) || { echo "run.sh: no libnvrtc.so.13 (install the CUDA 13 toolkit or 'pip install nvidia-cuda-nvrtc==13.0.*', or set BACH_CUDA_LIB)" >&2; exit 1; }
cublas_dir=$(found libcublas.so.13) || { echo "run.sh: no libcublas.so.13 (install the CUDA 13 toolkit or 'pip install nvidia-cublas', or set BACH_CUDA_LIB)" >&2; exit 1; }
export LD_LIBRARY_PATH="$nvrtc_dir:$cublas_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
echo "NVRTC from $nvrtc_dir; cuBLAS from $cublas_dir"
export BACH_REQUIRE_CUDA=1 BACH_REQUIRE_NVRTC=1 RUST_BACKTRACE=1
# Profiles calibrated here go to the results, not the user's cache.
export BACH_PROFILE_DIR="$results/profiles"

failed=()
step() {
    local name="$1"
    shift
    echo
    echo "==== $name: $* ===="
    local t0=$SECONDS
    if "$@"; then
        echo "==== $name: passed in $((SECONDS - t0)) s ===="
    else
        echo "==== $name: FAILED (exit $?) after $((SECONDS - t0)) s ===="
        failed+=("$name")
    fi
}


t="$here/tests"
if part tests; then
    step "conformance (device conformance suite on CUDA)" "$t/conformance"
    step "ops_equivalence (every op on CUDA against ndarray)" "$t/ops_equivalence"
    step "nvrtc (kernels compiled and run on the GPU)" "$t/nvrtc" --include-ignored
    step "devices (memories and transfers, BACH_DEVICE=cuda)" env BACH_DEVICE=cuda "$t/devices"
    step "results_memory (results reuse memory, kept page-locked on the GPU)" env BACH_DEVICE=cuda "$t/results_memory"
fi

if [ "$parts" != tests ]; then
    b="$here/bin/bach-bench"
    # Each benchmark's output also goes to RESULTS_DIR/<name>.out, for targets.py.
    to_file() {
        local out="$1"
        shift
        "$@" 2>&1 | tee "$out"
        return "${PIPESTATUS[0]}"
    }
    bench() {
        local name="$1"
        shift
        step "$name" to_file "$results/$name.out" "$b" "$@" --device cuda --timeline "$results/timeline-$name.svg"
    }
    # The hand-written program, then bach, on the same inputs, into one output (targets.py
    # reads gpu/bach and checks their checksums agree). No cpu mode: single-threaded, it took
    # most of the bench part (17.5 s a run at Black-Scholes 2^27, 33 s at Haversine 2^28).
    gpu_then_bach() {
        local name="$1"
        shift
        "$b" run "$@" --mode gpu --device cuda --json &&
            "$b" run "$@" --mode bach --device cuda --json --timeline "$results/timeline-$name.svg"
    }
    pair() {
        local name="$1"
        shift
        step "$name" to_file "$results/$name.out" gpu_then_bach "$name" "$@"
    }
fi
if part bench; then
    step "bandwidth (copy engines, launches)" to_file "$results/bandwidth.out" env BACH_HUGE_PAGES=1 "$b" bandwidth
    pair black-scholes-27 black-scholes --log2 27 --inputs reference --repeat 5
    # Copies in through staging buffers only (BACH_CUDA_REGISTER=0: the inputs are not
    # page-locked in place), bach only, beside the default above.
    step "black-scholes-27-staging" to_file "$results/black-scholes-27-staging.out" env BACH_CUDA_REGISTER=0 "$b" run black-scholes --log2 27 --inputs reference --mode bach --device cuda --repeat 3 --json
    # Results landing in fresh memory advised onto transparent huge pages (opt-in).
    step "black-scholes-27-huge-pages" to_file "$results/black-scholes-27-huge-pages.out" env BACH_HUGE_PAGES=1 "$b" run black-scholes --log2 27 --inputs reference --mode bach --device cuda --repeat 3 --json
    pair black-scholes-22-8MiB black-scholes --log2 22 --memory 8MiB --inputs reference --repeat 5
    # Beside it, bach only: without read-ahead staging (each 307 KiB piece filled alone), and
    # with the 32 MiB inputs page-locked in place (the threshold lowered from 64 MiB).
    step "black-scholes-22-8MiB-no-readahead" to_file "$results/black-scholes-22-8MiB-no-readahead.out" env BACH_CUDA_READAHEAD=0 "$b" run black-scholes --log2 22 --memory 8MiB --inputs reference --mode bach --device cuda --repeat 5 --json
    step "black-scholes-22-8MiB-register16" to_file "$results/black-scholes-22-8MiB-register16.out" env BACH_CUDA_REGISTER_MIN=16MiB "$b" run black-scholes --log2 22 --memory 8MiB --inputs reference --mode bach --device cuda --repeat 5 --json
    # Results landing in fresh memory without faulting it in ahead (BACH_PREFAULT=0).
    step "black-scholes-27-no-prefault" to_file "$results/black-scholes-27-no-prefault.out" env BACH_PREFAULT=0 "$b" run black-scholes --log2 27 --inputs reference --mode bach --device cuda --repeat 5 --json
    step "black-scholes-26-lazy-no-prefault" to_file "$results/black-scholes-26-lazy-no-prefault.out" env BACH_PREFAULT=0 "$b" run black-scholes --log2 26 --inputs lazy --mode bach --device cuda --repeat 3 --json
    # The charts of the first GPU report at 2^26: inputs from the host, and made on the GPU
    # (linspace where first used: no input copy, so the floor is the outputs' copy out).
    pair black-scholes-26 black-scholes --log2 26 --inputs reference --repeat 3
    pair black-scholes-26-lazy black-scholes --log2 26 --inputs lazy --repeat 3
    # Beside it, bach only: results copied out through staging buffers, their memory not kept
    # page-locked between evaluations (BACH_CUDA_LAND=0).
    step "black-scholes-26-lazy-no-landing" to_file "$results/black-scholes-26-lazy-no-landing.out" env BACH_CUDA_LAND=0 "$b" run black-scholes --log2 26 --inputs lazy --mode bach --device cuda --repeat 3 --json
    pair haversine-24 haversine --log2 24 --inputs reference --repeat 5
    # A small evaluation on the GPU, where fixed costs show: scalar constants as kernel
    # parameters (the default), and each copied in as its own 8-byte copy (BACH_CUDA_CONST=0).
    step "black-scholes-16-gpu" to_file "$results/black-scholes-16-gpu.out" "$b" run black-scholes --log2 16 --mode bach --device cuda --policy greedy --repeat 20 --json
    step "black-scholes-16-gpu-no-const" to_file "$results/black-scholes-16-gpu-no-const.out" env BACH_CUDA_CONST=0 "$b" run black-scholes --log2 16 --mode bach --device cuda --policy greedy --repeat 20 --json
fi
if part large; then
    pair haversine-27 haversine --log2 27 --inputs reference --repeat 3
    pair haversine-28-2GiB haversine --log2 28 --memory 2GiB --inputs reference --repeat 3
fi
if part ml; then
    # The ML workloads (#12), bach beside the eager CPU code, at the sizes of the GPU targets
    # (scikit-learn on the H100 host: DBSCAN 2^14 x 256 in 0.643 s, TruncatedSVD (arpack)
    # 2^18 x 512 in 6.57 s): X^T X, the products, the eigen solver (cuSOLVER) and DBSCAN's
    # neighbourhoods (cuBLAS and a kernel, Launch::Cross) on the GPU; DBSCAN's labelling on
    # the host.
    # `compare` on a CUDA session also runs the hand-written gpu mode (bench/src/mlgpu.rs);
    # each mode's outputs are checked against the cpu mode's.
    bench tsvd-18 compare tsvd --log2 18 --repeat 3
    bench dbscan-14 compare dbscan --log2 14 --repeat 3
    bench pca-knn-13 compare pca-knn --log2 13 --repeat 3
    bench crime-index-22 compare crime-index --log2 22 --repeat 3
    # Random inputs, unlike the reference ones above.
    bench dbscan-12-seed5 compare dbscan --log2 12 --seed 5 --repeat 1
    bench pca-knn-6-seed9 compare pca-knn --log2 6 --seed 9 --repeat 1
    bench tsvd-14-seed3 compare tsvd --log2 14 --seed 3 --repeat 1
    bench crime-index-16-seed2 compare crime-index --log2 16 --seed 2 --repeat 1
fi
if part calibrate; then
    # The cost model measured on this host, then its predictions beside the measured times.
    step "calibrate (CUDA cost profile)" "$b" calibrate --device cuda --out "$results/profile-cuda.json"
    # Each size as placed (optimal: the CPU where it wins), then on the GPU (greedy), so that
    # the CUDA stages' predictions are checked at every size too (#13: within 2x).
    for w in black-scholes haversine; do
        for k in 16 20 24; do
            step "residuals $w 2^$k" to_file "$results/residuals-$w-$k.out" "$b" run "$w" --log2 "$k" --mode bach --device cuda --repeat 5 --json --timeline "$results/timeline-residuals-$w-$k.svg"
            step "residuals $w 2^$k on the GPU" to_file "$results/residuals-$w-$k-gpu.out" "$b" run "$w" --log2 "$k" --mode bach --device cuda --policy greedy --repeat 5 --json --timeline "$results/timeline-residuals-$w-$k-gpu.svg"
        done
    done
fi

if part multi; then
    # Several accelerators (#49) on a one-GPU host: GPU 0 as two logical devices
    # (cuda:0,cuda:0), each a device of its own on the GPU's one context, streams and pool.
    # Black-Scholes 2^27 and Haversine 2^27 on one device, then spread over the two (the same
    # pieces: results equal, checksums printed); the target is at most 1.1x one device's time.
    # Then device-to-device copy bandwidth on the GPU (the `d2d` record).
    for w in black-scholes haversine; do
        step "multi $w 2^27 on cuda" to_file "$results/multi-$w-27-one.out" "$b" run "$w" --log2 27 --inputs reference --mode bach --device cuda --repeat 3 --json --timeline "$results/timeline-multi-$w-27-one.svg"
        step "multi $w 2^27 on cuda:0,cuda:0" to_file "$results/multi-$w-27-two.out" "$b" run "$w" --log2 27 --inputs reference --mode bach --device cuda:0,cuda:0 --repeat 3 --json --timeline "$results/timeline-multi-$w-27-two.svg"
    done
    step "multi bandwidth 512MiB (d2d)" to_file "$results/multi-bandwidth.out" "$b" bandwidth --sizes 512MiB --repeat 5
fi

if part profile; then
    # Where the host's time goes per piece (CUDA API calls, by count and time): the 107
    # pieces of Black-Scholes 2^22 at 8 MiB, bach only, under Nsight Systems.
    nsys=$(command -v nsys || ls /usr/local/cuda/bin/nsys /opt/nvidia/nsight-systems/*/bin/nsys 2>/dev/null | head -1)
    if [ -n "$nsys" ]; then
        step "profile black-scholes-22-8MiB (nsys)" "$nsys" profile --trace=cuda,osrt --sample=none --force-overwrite=true -o "$results/bs22-8MiB" "$b" run black-scholes --log2 22 --memory 8MiB --inputs reference --mode bach --device cuda --repeat 3 --json
        step "profile report" to_file "$results/nsys-black-scholes-22-8MiB.txt" "$nsys" stats --report cuda_api_sum,cuda_gpu_kern_sum,cuda_gpu_mem_time_sum,osrt_sum --format column "$results/bs22-8MiB.nsys-rep"
        rm -f "$results/bs22-8MiB.nsys-rep" "$results/bs22-8MiB.sqlite"
    else
        echo "run.sh: no nsys (Nsight Systems) on this host: part profile skipped"
    fi
fi

if [ "$parts" != tests ]; then
    echo
    if command -v python3 >/dev/null; then
        python3 "$here/targets.py" "$results" || echo "run.sh: targets.py failed (the benchmarks' output is in $results/*.out)"
    else
        echo "run.sh: no python3 here: the targets are not tabulated (read $results/*.out against README's GPU targets)"
    fi
fi

echo
if [ ${#failed[@]} -eq 0 ]; then
    echo "run.sh: all passed. Log: $log"
else
    echo "run.sh: ${#failed[@]} failed: ${failed[*]}. Log: $log"
    exit 1
fi

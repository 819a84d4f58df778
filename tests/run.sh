#!/usr/bin/env bash
# Every test of the project: formatting and clippy, Rust unit, property and end-to-end tests (release build), the
# benches in test mode, doc examples, then the independent numpy/scipy checks of the
# workloads, the Jupyter protocol tests and the real kernel driven by jupyter_client and
# nbclient (installed into a temporary prefix). Sets up .venv when missing.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ ! -x .venv/bin/python ] || ! .venv/bin/python -c "import numpy, scipy, pytest, jupyter_client, nbclient, jupyter_kernel_test, ipywidgets" 2>/dev/null; then
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check -r tests/python/requirements.txt
fi

# Calibrated cost profiles go to a directory of this run's own, so that a profile saved by
# `:bach calibrate` in one test (or earlier on this machine) never changes another's plans.
BACH_PROFILE_DIR="$(mktemp -d)"
export BACH_PROFILE_DIR
trap 'rm -rf "$BACH_PROFILE_DIR"' EXIT

# Style first: formatting (rustfmt.toml) and clippy with warnings as errors.
cargo fmt --all --check
cargo clippy --workspace --all-targets --release -- -D warnings
cargo test --workspace --release --all-targets
cargo test --workspace --release --doc
# The binaries the Python tests run, as the test build above built them (one feature set:
# `-p bach-bench -p bach-kernel` would resolve the bench's graph without the tests' features
# and rebuild the runtime).
cargo build --release --workspace --all-targets
.venv/bin/python -m pytest -q tests/python

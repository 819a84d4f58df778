#!/usr/bin/env bash
# Build and install the "Rust (Bach)" kernel, then execute a notebook headless through it.
#   bash install/run_notebook.sh [notebooks/black_scholes.ipynb]
# Leaves the executed notebook (outputs and charts) next to it as *.executed.ipynb.
# Needs Rust >= 1.95 and Python 3; the Jupyter tools go into .venv/ when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
notebook="${1:-notebooks/black_scholes.ipynb}"

cargo build --release -p bach-kernel
if [ ! -x .venv/bin/jupyter-execute ]; then
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check -r tests/python/requirements.txt
fi
# Into the virtual environment's prefix: its Jupyter finds the kernelspec there.
target/release/bach-kernel install --prefix .venv
out="${notebook%.ipynb}.executed.ipynb"
cp "$notebook" "$out"
.venv/bin/jupyter-execute --inplace --kernel_name=bach --timeout=600 "$out"
echo "executed: $out"

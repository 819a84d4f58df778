#!/usr/bin/env bash
# Build and install the "Rust (Bach)" kernel, then execute notebooks headless through it.
#   bash install/run_notebook.sh                                  # notebooks/black_scholes.ipynb
#   bash install/run_notebook.sh notebooks/haversine.ipynb notebooks/tsvd.ipynb
#   bash install/run_notebook.sh all                              # every notebook in notebooks/
#   bash install/run_notebook.sh --save all                       # store the outputs in place
# Without --save each executed copy (outputs and charts) lands next to its notebook as
# *.executed.ipynb; with --save the notebook itself gets the outputs (how the committed ones
# were made). BACH_NOTEBOOK_LOG2=N runs every notebook at size 2^N instead of its default.
# Needs Rust >= 1.95 and Python 3; the Jupyter tools go into .venv/ when missing.
set -euo pipefail
cd "$(dirname "$0")/.."
save=0
notebooks=()
for arg in "$@"; do
    case "$arg" in
        --save) save=1 ;;
        all) notebooks+=(notebooks/tour.ipynb notebooks/black_scholes.ipynb notebooks/haversine.ipynb notebooks/crime_index.ipynb notebooks/dbscan.ipynb notebooks/pca_knn.ipynb notebooks/tsvd.ipynb) ;;
        -*) echo "run_notebook.sh: unknown flag $arg (known: --save)" >&2; exit 2 ;;
        *) notebooks+=("$arg") ;;
    esac
done
[ ${#notebooks[@]} -gt 0 ] || notebooks=(notebooks/black_scholes.ipynb)
for nb in "${notebooks[@]}"; do
    [ -f "$nb" ] || { echo "run_notebook.sh: no notebook $nb" >&2; exit 2; }
done

cargo build --release -p bach-kernel
if [ ! -x .venv/bin/jupyter-execute ]; then
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check -r tests/python/requirements.txt
fi
# Into the virtual environment's prefix: its Jupyter finds the kernelspec there.
target/release/bach-kernel install --prefix .venv
for nb in "${notebooks[@]}"; do
    if [ "$save" = 1 ]; then
        out="$nb"
    else
        out="${nb%.ipynb}.executed.ipynb"
        cp "$nb" "$out"
    fi
    start=$(date +%s)
    # The notebook's own kernel (tour.ipynb asks for the emulated accelerator).
    .venv/bin/jupyter-execute --inplace --timeout=600 "$out"
    echo "executed: $out in $(( $(date +%s) - start )) s"
done

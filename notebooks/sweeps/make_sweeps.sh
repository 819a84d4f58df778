#!/usr/bin/env bash
# The sweep charts the notebooks show: each workload over the sizes this machine allows,
# modes cpu (eager ndarray) and bach (and gpu where CUDA is), 30 s per point at most.
#   bash notebooks/sweeps/make_sweeps.sh
# Black-Scholes once more on an emulated accelerator capped at 64 MiB, placed greedily, to
# show where paging starts (emulated/).
set -euo pipefail
cd "$(dirname "$0")/../.."
cargo build --release -p bach-bench
bench=target/release/bach-bench
out=notebooks/sweeps
$bench sweep black-scholes --from 10 --to 24 --limit 30 --out $out
$bench sweep haversine --from 10 --to 24 --limit 30 --out $out
$bench sweep crime-index --from 10 --to 22 --limit 30 --out $out
$bench sweep dbscan --from 8 --to 14 --limit 30 --out $out
$bench sweep pca-knn --from 4 --to 14 --limit 30 --out $out
$bench sweep tsvd --from 8 --to 16 --limit 30 --out $out
$bench sweep black-scholes --from 14 --to 24 --limit 30 --device emulated --memory 64MiB --policy greedy --out $out/emulated

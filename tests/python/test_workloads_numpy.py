"""Black-Scholes and Haversine from bach-bench, checked against an independent numpy/scipy
implementation of the formulas in shared/workloads.md."""

import os
import pathlib
import subprocess

import numpy as np
import pytest
from scipy.special import erf

ROOT = pathlib.Path(__file__).resolve().parents[2]
BENCH = ROOT / "target" / "release" / "bach-bench"


def run_bench(tmp_path, workload, inputs, log2=14, seed=7):
    out = tmp_path / workload
    cmd = [str(BENCH), "run", workload, "--log2", str(log2), "--mode", "bach",
           "--inputs", inputs, "--seed", str(seed), "--repeat", "1", "--dump", str(out)]
    subprocess.run(cmd, check=True, capture_output=True, text=True)
    return {p.stem: np.load(p) for p in out.glob("*.npy")}


def black_scholes(price, strike, t, rate, vol):
    c05, c10, invsqrt2 = 3.0, 1.5, 1.0 / np.sqrt(2.0)
    rsig = vol * vol * c05 + rate
    vol_sqrt = np.sqrt(t) * vol
    d1 = (np.log2(price / strike) + rsig * t) / vol_sqrt
    d2 = d1 - vol_sqrt
    D1 = c05 + c05 * erf(d1 * invsqrt2)
    D2 = c05 + c05 * erf(d2 * invsqrt2)
    e_rt = np.exp(-rate * t)
    call = price * D1 - e_rt * strike * D2
    put = e_rt * strike * (c10 - D2) - price * (c10 - D1)
    return call, put


def haversine(lat2, lon2):
    lat1, lon1, miles = 0.70984286, 1.23892197, 3959.0
    dlat = np.sin((lat2 - lat1) / 2) ** 2
    dlon = np.sin((lon2 - lon1) / 2) ** 2
    a = dlat + np.cos(lat2) * np.cos(lat1) * dlon
    return 2 * np.arcsin(np.sqrt(a)) * miles


@pytest.fixture(scope="module", autouse=True)
def built():
    if not BENCH.exists():
        pytest.fail(f"{BENCH} is missing: build with `cargo build --release -p bach-bench`")


@pytest.mark.parametrize("seed", [7, 11])
def test_black_scholes_random_matches_numpy(tmp_path, seed):
    d = run_bench(tmp_path, "black-scholes", "random", seed=seed)
    call, put = black_scholes(d["price"], d["strike"], d["t"], d["rate"], d["vol"])
    assert d["call"].shape == (2 ** 14,)
    np.testing.assert_allclose(d["call"], call, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(d["put"], put, rtol=1e-12, atol=1e-12)
    # Inputs follow the documented ranges (so the test is not vacuous).
    assert 10 <= d["price"].min() and d["price"].max() < 50


def test_black_scholes_reference_values(tmp_path):
    d = run_bench(tmp_path, "black-scholes", "reference")
    np.testing.assert_allclose(d["call"], 23.999997299155808, rtol=1e-14)
    np.testing.assert_allclose(d["put"], 17.999997974366856, rtol=1e-14)


def test_haversine_random_matches_numpy(tmp_path):
    d = run_bench(tmp_path, "haversine", "random", seed=3)
    np.testing.assert_allclose(d["distance"], haversine(d["lat2"], d["lon2"]), rtol=1e-12)


def test_haversine_reference_values(tmp_path):
    d = run_bench(tmp_path, "haversine", "reference")
    np.testing.assert_allclose(d["distance"], 4839.959830633562, rtol=1e-13)


def test_bench_rejects_bad_arguments():
    r = subprocess.run([str(BENCH), "run", "nosuch", "--log2", "4"], capture_output=True, text=True)
    assert r.returncode == 2 and "unknown workload" in r.stderr
    # The hand-written GPU baseline needs a GPU: without one, a clear reason and exit 1.
    r = subprocess.run([str(BENCH), "run", "haversine", "--mode", "gpu"], capture_output=True, text=True)
    if r.returncode != 0:
        assert r.returncode == 1 and "no GPU" in r.stderr, r.stderr
        assert "panicked" not in r.stderr

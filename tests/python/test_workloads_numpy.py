"""Black-Scholes and Haversine from bach-bench, checked against an independent numpy/scipy
implementation of the formulas in shared/workloads.md."""

import json
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


@pytest.mark.parametrize("device", ["cpu", "emulated"])
def test_black_scholes_on_inputs_bach_makes_matches_numpy(tmp_path, device):
    # `--inputs lazy`: bach makes its inputs (linspace, where first used); the dump holds the
    # columns the other modes get in memory, numpy's linspace.
    out = tmp_path / "lazy"
    cmd = [str(BENCH), "run", "black-scholes", "--log2", "14", "--mode", "bach", "--inputs", "lazy",
           "--repeat", "1", "--device", device, "--memory", "64KiB", "--policy", "greedy", "--json", "--dump", str(out)]
    r = subprocess.run(cmd, check=True, capture_output=True, text=True)
    rec = json.loads(r.stdout.splitlines()[0])
    assert rec["inputs"].startswith("lazy (linspace"), rec
    shares = {s["key"]: s for s in rec["breakdown"]}
    assert abs(sum(s["seconds"] for s in rec["breakdown"]) - rec["last_evaluation_seconds"]) < 1e-6, rec
    if device == "emulated":
        # Made on the accelerator where first used (paged through its 64 KiB): what comes
        # in is a few scalars, not the 5 x 128 KiB of inputs; the outputs go out.
        assert any("emulated" in d for d in rec["ran_on"]), rec
        assert rec["plan"]["paged"] and rec["plan"]["h2d_bytes"] < 1024, rec["plan"]
        assert shares["d2h"]["bytes"] == 2 * 2 ** 14 * 8, shares
    else:
        assert set(shares) <= {"compute:cpu", "alloc", "overhead"}, shares
    d = {p.stem: np.load(p) for p in out.glob("*.npy")}
    n = 2 ** 14
    np.testing.assert_array_equal(d["price"], np.linspace(10.0, 50.0, n))
    np.testing.assert_array_equal(d["strike"], np.linspace(50.0, 10.0, n))
    call, put = black_scholes(d["price"], d["strike"], d["t"], d["rate"], d["vol"])
    np.testing.assert_allclose(d["call"], call, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(d["put"], put, rtol=1e-12, atol=1e-12)


def test_gpu_bundle_targets_read_the_benchmarks_output(tmp_path):
    # install/gpu_targets.py (the bundle's targets.py) on real bach-bench output from here,
    # plus the lines only a GPU host prints (copy rates, gpu/bach ratios), written by hand.
    def bench(name, *args):
        r = subprocess.run([str(BENCH), *args], check=True, capture_output=True, text=True)
        (tmp_path / f"{name}.out").write_text(r.stdout)
        return r.stdout

    bench("black-scholes-27", "compare", "black-scholes", "--log2", "12", "--repeat", "1")
    with open(tmp_path / "black-scholes-27.out", "a") as f:
        f.write("ratio gpu/bach = 1.25\n")
    (tmp_path / "haversine-24.out").write_text("ratio cpu/bach = 3.00\nratio gpu/bach = 0.42\n")
    rate = '{"test":"%s","device":"x","memory":"pinned","bytes":%d,"seconds":1,"gb_per_s":%s,"runs":1}\n'
    (tmp_path / "bandwidth.out").write_text(rate % ("h2d", 1 << 20, "10.0") + rate % ("h2d", 1 << 30, "50.0") + rate % ("d2h", 1 << 30, "40.0"))
    # 2^13: larger than the arrays that run at once without a plan (4096 elements).
    lazy = bench("black-scholes-26-lazy", "compare", "black-scholes", "--log2", "13", "--repeat", "1", "--inputs", "lazy")
    assert '"breakdown"' in lazy and '"last_evaluation_seconds"' in lazy
    bench("dbscan-14", "compare", "dbscan", "--log2", "8", "--repeat", "1", "--device", "cpu")
    # run.sh's `pair`: a `run --mode gpu` record then a `run --mode bach` one, no ratio line.
    rec = '{"workload":"haversine","mode":"%s","seconds":%s,"checksum":%s}\n'
    (tmp_path / "haversine-28-2GiB.out").write_text(rec % ("gpu", "0.2", "123.5") + "some log line\n" + rec % ("bach", "0.25", "123.5"))
    (tmp_path / "black-scholes-22-8MiB.out").write_text(rec % ("gpu", "0.02", "10.0") + rec % ("bach", "0.01", "10.5"))
    r = subprocess.run(["python3", str(ROOT / "install" / "gpu_targets.py"), str(tmp_path)], check=True, capture_output=True, text=True)
    rows = {line.split("  ")[0]: line for line in r.stdout.splitlines()}
    verdict = lambda prefix: next(v for k, v in rows.items() if k.startswith(prefix)).split()[-1]
    assert verdict("Black-Scholes 2^27: gpu/bach") == "met", r.stdout
    assert verdict("Haversine 2^24: gpu/bach") == "MISSED", r.stdout
    # A 2^12 run is far under 1.5x the floor of moving 2^27 inputs in at 50 GB/s (0.107 s).
    assert "floor 107 ms" in rows[next(k for k in rows if "copy-engine floor" in k)], r.stdout
    assert verdict("Black-Scholes 2^27: bach / copy-engine floor") == "met", r.stdout
    # No device-to-host copies on the CPU: not measured, as are the benchmarks that did not run.
    assert rows[next(k for k in rows if "inputs made on the GPU" in k)].endswith("not measured"), r.stdout
    hav28 = rows[next(k for k in rows if k.startswith("Haversine 2^28"))]
    assert " 0.80 " in hav28 and hav28.endswith("MISSED"), r.stdout
    # Fast but wrong is missed: the two runs' checksums differ.
    bs22 = rows[next(k for k in rows if k.startswith("Black-Scholes 2^22"))]
    assert "2.00; results differ" in bs22 and bs22.endswith("MISSED"), r.stdout
    assert rows[next(k for k in rows if k.startswith("TruncatedSvd"))].endswith("not measured"), r.stdout
    assert verdict("DBSCAN 2^14") in ("met", "MISSED"), r.stdout
    assert "not measured" in r.stdout.splitlines()[-1]


def test_gpu_bundle_run_says_what_is_wrong(tmp_path):
    # install/gpu_run.sh (the bundle's run.sh): a wrong part is refused before anything runs;
    # on a host without the NVIDIA driver it stops with the reason.
    run_sh = ROOT / "install" / "gpu_run.sh"
    r = subprocess.run(["bash", str(run_sh), str(tmp_path / "a")], env={**os.environ, "PARTS": "bench,nosuch"}, capture_output=True, text=True)
    assert r.returncode == 2 and "unknown part nosuch" in r.stderr, r.stderr
    has_driver = "libcuda.so.1 " in subprocess.run(["ldconfig", "-p"], capture_output=True, text=True).stdout
    if not has_driver:
        r = subprocess.run(["bash", str(run_sh), str(tmp_path / "b")], env={**os.environ, "PARTS": "ml"}, capture_output=True, text=True)
        assert r.returncode == 1, r.stdout + r.stderr
        log = (tmp_path / "b" / "gpu-bundle.log").read_text()
        assert "parts: ml" in log and "this bundle needs a GPU host" in log, log


def test_bench_rejects_bad_arguments():
    r = subprocess.run([str(BENCH), "run", "nosuch", "--log2", "4"], capture_output=True, text=True)
    assert r.returncode == 2 and "unknown workload" in r.stderr
    # The hand-written GPU baseline needs a GPU: without one, a clear reason and exit 1.
    r = subprocess.run([str(BENCH), "run", "haversine", "--mode", "gpu"], capture_output=True, text=True)
    if r.returncode != 0:
        assert r.returncode == 1 and "no GPU" in r.stderr, r.stderr
        assert "panicked" not in r.stderr


# ---------------------------------------------------------------------------------------------
# The ML / CSV workloads (docs/workloads.md sections 3-6), checked against scikit-learn and
# pandas on inputs the Rust tests have not seen.
# ---------------------------------------------------------------------------------------------

def run_ml(tmp_path, workload, log2, seed=None):
    out = tmp_path / workload
    cmd = [str(BENCH), "run", workload, "--log2", str(log2), "--mode", "bach", "--repeat", "1",
           "--dump", str(out), "--device", "cpu"]
    if seed is not None:
        cmd += ["--seed", str(seed)]
    r = subprocess.run(cmd, check=True, capture_output=True, text=True)
    record = json.loads(r.stdout.splitlines()[0])
    return {p.stem: np.load(p) for p in out.glob("*.npy")}, record, out


def canonical(a):
    """Each column's largest-magnitude entry positive."""
    a = np.array(a, dtype=np.float64)
    idx = np.argmax(np.abs(a), axis=0)
    signs = np.sign(a[idx, np.arange(a.shape[1])])
    signs[signs == 0] = 1
    return a * signs


def test_crime_index_random_matches_pandas(tmp_path):
    pd = pytest.importorskip("pandas")
    d, rec, out = run_ml(tmp_path, "crime-index", 16, seed=5)
    cols = {name: pd.read_csv(out / f"{name}.csv", header=None)[0]
            for name in ("total_population", "adult_population", "num_robberies")}
    np.testing.assert_array_equal(cols["total_population"].to_numpy(), d["total_population"])
    big = cols["total_population"].mask(cols["total_population"] > 500000, 0.0)
    dp = cols["adult_population"] * 2 + big - cols["num_robberies"] * 2000.0
    ci = dp / 100000
    ci = ci.mask(ci > 0.02, 0.032)
    ci = ci.mask(ci < 0.01, 0.005)
    want = float(np.sum(ci.to_numpy()))  # numpy's pairwise sum
    assert rec["figures"]["result"] == pytest.approx(want, rel=1e-12)
    assert float(d["result"]) == pytest.approx(want, rel=1e-12)
    # Not vacuous: every branch of the masks is taken.
    assert (ci == 0.032).any() and (ci == 0.005).any() and ((ci > 0.01) & (ci < 0.02)).any()


def test_crime_index_reference_is_exact(tmp_path):
    d, rec, _ = run_ml(tmp_path, "crime-index", 14)
    assert rec["figures"]["result"] == 0.005 * 2 ** 14


def test_dbscan_matches_scikit_learn(tmp_path):
    pytest.importorskip("sklearn")
    from sklearn.cluster import DBSCAN
    from sklearn.datasets import make_blobs
    from sklearn.preprocessing import StandardScaler
    n, seed = 2 ** 9, 3
    d, rec, _ = run_ml(tmp_path, "dbscan", 9, seed=seed)
    X, _ = make_blobs(n_samples=n, n_features=256, centers=32, cluster_std=1.0, center_box=(-2, 2), random_state=seed)
    np.testing.assert_array_equal(d["X"], X)  # make_blobs bit for bit
    min_samples = max(2, int(np.ceil(n / 32 * 0.05)))
    labels = DBSCAN(eps=16.0, min_samples=min_samples).fit(StandardScaler().fit_transform(X)).labels_
    np.testing.assert_array_equal(d["labels"], labels)
    assert d["labels"].dtype == np.int64
    assert rec["figures"]["clusters"] == labels.max() + 1


def test_dbscan_reference(tmp_path):
    _, rec, _ = run_ml(tmp_path, "dbscan", 10)
    assert rec["figures"] == {"clusters": 32.0, "noise": 0.0}


def test_pca_knn_matches_scikit_learn(tmp_path):
    pytest.importorskip("sklearn")
    from sklearn.decomposition import PCA
    from sklearn.neighbors import KNeighborsClassifier
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler
    for seed in (None, 9):
        d, rec, _ = run_ml(tmp_path / str(seed), "pca-knn", 3, seed=seed)
        assert d["X_train"].shape == (124, 13) and d["X_test"].shape == (54 * 8, 13)
        pipe = make_pipeline(StandardScaler(), PCA(n_components=2), KNeighborsClassifier(n_neighbors=5))
        pipe.fit(d["X_train"], d["y_train"])
        np.testing.assert_array_equal(d["predicted"], pipe.predict(d["X_test"]))
        ratio = pipe.named_steps["pca"].explained_variance_ratio_
        got = [rec["figures"]["explained_variance_ratio_0"], rec["figures"]["explained_variance_ratio_1"]]
        np.testing.assert_allclose(got, ratio, rtol=1e-10)
        if seed is None:
            assert rec["figures"]["accuracy"] == pytest.approx(53 / 54)
            # The miss is test row 40 (every copy of it).
            assert set(np.nonzero(d["predicted"] != d["y_test"])[0] % 54) == {40}


def test_tsvd_matches_scikit_learn(tmp_path):
    pytest.importorskip("sklearn")
    from sklearn.datasets import make_blobs
    from sklearn.decomposition import TruncatedSVD
    n, seed = 2 ** 10, 4
    d, rec, _ = run_ml(tmp_path, "tsvd", 10, seed=seed)
    X, _ = make_blobs(n_samples=n, n_features=512, centers=1, random_state=seed)
    np.testing.assert_array_equal(d["X"], X)
    svd = TruncatedSVD(n_components=2, algorithm="arpack", tol=0.0, random_state=0)
    want = svd.fit_transform(X)
    got = d["transformed"]
    assert got.shape == (n, 2)
    g, w = canonical(got), canonical(want)
    for j in range(2):
        np.testing.assert_allclose(g[:, j], w[:, j], rtol=0, atol=1e-8 * np.abs(w[:, j]).max())
    np.testing.assert_allclose([rec["figures"]["sigma_0"], rec["figures"]["sigma_1"]], svd.singular_values_, rtol=1e-10)


def test_tsvd_reference_singular_values(tmp_path):
    _, rec, _ = run_ml(tmp_path, "tsvd", 10)
    np.testing.assert_allclose([rec["figures"]["sigma_0"], rec["figures"]["sigma_1"]], [4224.08350, 54.09615], rtol=1e-6)


def test_ml_gpu_mode_without_a_gpu_says_why():
    # The hand-written gpu mode (bench/src/mlgpu.rs) needs a GPU; this machine has none.
    r = subprocess.run([str(BENCH), "run", "dbscan", "--log2", "4", "--mode", "gpu"], capture_output=True, text=True)
    assert r.returncode != 0 and "no GPU" in r.stderr, r.stderr

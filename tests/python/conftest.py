"""Shared by the kernel tests: the release `bach-kernel` installed once per test session into
a temporary prefix, with JUPYTER_PATH pointing there."""

import os
import pathlib
import subprocess
import time

import jupyter_client
import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
KERNEL_BIN = ROOT / "target" / "release" / "bach-kernel"


def standbys_of(prefix):
    """Processes running `bach-kernel standby` from the kernel installed under `prefix`."""
    exe = f"{prefix}/share/jupyter/kernels/bach/bach-kernel"
    found = []
    for d in pathlib.Path("/proc").iterdir():
        try:
            argv = (d / "cmdline").read_bytes().split(b"\0")
        except OSError:
            continue
        if len(argv) > 1 and argv[0].decode(errors="replace") == exe and argv[1] == b"standby":
            found.append(d.name)
    return found


@pytest.fixture(scope="session")
def jupyter_path(tmp_path_factory):
    # By hand: BACH_TEST_JUPYTER_PATH=<prefix>/share/jupyter reuses a kernel installed there
    # (`bach-kernel install --prefix <prefix>`) instead of installing one (minutes).
    reuse = os.environ.get("BACH_TEST_JUPYTER_PATH")
    if reuse:
        os.environ["JUPYTER_PATH"] = reuse
        os.environ["BACH_KERNEL_STANDBY"] = "0"
        yield pathlib.Path(reuse)
        return
    if not KERNEL_BIN.exists():
        pytest.fail(f"{KERNEL_BIN} is missing: build with `cargo build --release -p bach-kernel`")
    prefix = tmp_path_factory.mktemp("prefix")
    subprocess.run([str(KERNEL_BIN), "install", "--prefix", str(prefix)], check=True, timeout=1800)
    path = prefix / "share" / "jupyter"
    assert (path / "kernels" / "bach" / "kernel.json").exists()
    assert (path / "kernels" / "bach-emulated" / "kernel.json").exists()
    old = os.environ.get("JUPYTER_PATH")
    os.environ["JUPYTER_PATH"] = str(path)
    # Kernels start cold in the tests (each test's environment differs, PYTEST_CURRENT_TEST,
    # so a standby would rarely be reused and would only compete for the cores); the standby
    # test turns it on for its own kernels.
    os.environ["BACH_KERNEL_STANDBY"] = "0"
    yield path
    # Uninstalling stops the standbys the standby tests left waiting (0.66 GB each).
    subprocess.run([str(KERNEL_BIN), "uninstall", "--prefix", str(prefix)], check=True, timeout=60)
    # A standby still starting exits once its start is over (up to a minute on a busy machine).
    for _ in range(240):
        left = standbys_of(prefix)
        if not left:
            break
        time.sleep(0.25)
    assert not left, f"uninstall left standby kernels waiting: {left}"
    if old is None:
        os.environ.pop("JUPYTER_PATH", None)
    else:
        os.environ["JUPYTER_PATH"] = old


@pytest.fixture(scope="module")
def kernel(jupyter_path):
    """A "bach" kernel for one test module: (manager, client)."""
    km, kc = jupyter_client.manager.start_new_kernel(kernel_name="bach", startup_timeout=300)
    yield km, kc
    kc.stop_channels()
    km.shutdown_kernel(now=True)

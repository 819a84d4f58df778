"""Protocol tests of the kernel's Jupyter messaging layer (kernel/src/server.rs and friends).

They run target/release/protocol_test_kernel: the real protocol layer serving a test double
engine (kernel/src/test_engine.rs) whose "language" is one command per line:
`print x`, `eprint x`, `display x`, `value x`, `error x`, `sleep secs`, `panic`, `crash`,
`spam n`, `count`. Build it first:

    cargo build --release -p bach-kernel --bin protocol_test_kernel
    .venv/bin/python -m pytest -q tests/python/test_protocol.py

PROTOCOL_TEST_KERNEL overrides the binary's path.
"""

from __future__ import annotations

import json
import os
import queue
import re
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from datetime import datetime
from pathlib import Path

import pytest
import zmq
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.session import Session

REPO = Path(__file__).resolve().parents[2]
BINARY = Path(os.environ.get("PROTOCOL_TEST_KERNEL", REPO / "target" / "release" / "protocol_test_kernel"))
KERNEL_NAME = "bach-protocol-test"
TIMEOUT = 10


def cargo_version() -> str:
    text = (REPO / "Cargo.toml").read_text()
    return re.search(r'^\[workspace\.package\][^\[]*?^version\s*=\s*"([^"]+)"', text, re.M | re.S).group(1)


# ------------------------------------------------------------------------------------------------
# Fixtures


@pytest.fixture(scope="session")
def binary() -> Path:
    if not BINARY.is_file():
        pytest.fail(
            f"protocol test kernel not found at {BINARY}; build it with "
            "`cargo build --release -p bach-kernel --bin protocol_test_kernel`",
            pytrace=False,
        )
    return BINARY


@pytest.fixture()
def kernel_dirs(tmp_path, binary, monkeypatch):
    """A kernelspec for the test kernel, and a private Jupyter runtime dir."""
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    spec_dir = tmp_path / "kernels" / KERNEL_NAME
    spec_dir.mkdir(parents=True)
    (spec_dir / "kernel.json").write_text(
        json.dumps(
            {
                "argv": [str(binary), "{connection_file}"],
                "display_name": "bach protocol test",
                "language": "rust",
                "interrupt_mode": "message",
            }
        )
    )
    return tmp_path / "kernels"


class Kernel:
    """A running test kernel, its manager, a blocking client and its stderr log."""

    def __init__(self, km: KernelManager, kc, log_path: Path, log_file):
        self.km = km
        self.kc = kc
        self.log_path = log_path
        self.log_file = log_file  # kept open: a restart starts the new process with it too

    @property
    def pid(self) -> int:
        return self.km.provisioner.process.pid

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def send(self, msg_type: str, content: dict | None = None, channel: str = "shell") -> str:
        msg = self.kc.session.msg(msg_type, content or {})
        getattr(self.kc, f"{channel}_channel").send(msg)
        return msg["header"]["msg_id"]

    def reply(self, msg_id: str, channel: str = "shell", timeout: float = TIMEOUT) -> dict:
        deadline = time.monotonic() + timeout
        get = getattr(self.kc, f"get_{channel}_msg")
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no {channel} reply to {msg_id}")
            try:
                msg = get(timeout=remaining)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg

    def iopub_until_idle(self, msg_id: str, timeout: float = TIMEOUT) -> list[dict]:
        """The iopub messages whose parent is `msg_id`, up to and including its idle status."""
        msgs: list[dict] = []
        deadline = time.monotonic() + timeout
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no idle status for {msg_id}; got {[m['msg_type'] for m in msgs]}")
            try:
                msg = self.kc.get_iopub_msg(timeout=remaining)
            except queue.Empty:
                continue
            if msg["parent_header"].get("msg_id") != msg_id:
                continue
            msgs.append(msg)
            if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
                return msgs

    def execute(self, code: str, timeout: float = TIMEOUT, **kw) -> tuple[dict, list[dict]]:
        msg_id = self.kc.execute(code, **kw)
        iopub = self.iopub_until_idle(msg_id, timeout)
        return self.reply(msg_id, timeout=timeout), iopub

    def request(self, msg_type: str, content: dict | None = None, channel: str = "shell") -> tuple[dict, list[dict]]:
        msg_id = self.send(msg_type, content, channel)
        reply = self.reply(msg_id, channel)
        return reply, self.iopub_until_idle(msg_id)

    def is_alive(self) -> bool:
        return self.km.provisioner.process.poll() is None


def start_kernel(kernel_dirs: Path, tmp_path: Path, name: str = "kernel") -> Kernel:
    km = KernelManager(kernel_name=KERNEL_NAME, kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernel_dirs)]))
    km.shutdown_wait_time = 5.0
    log_path = tmp_path / f"{name}.stderr"
    log_file = open(log_path, "w")
    km.start_kernel(stderr=log_file)
    kc = km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=30)
    except RuntimeError:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
        log_file.close()
        raise AssertionError(f"kernel did not become ready; its stderr:\n{log_path.read_text()}")
    # Drain what wait_for_ready left on iopub.
    while True:
        try:
            kc.get_iopub_msg(timeout=0.2)
        except queue.Empty:
            break
    return Kernel(km, kc, log_path, log_file)


@pytest.fixture()
def kernel(kernel_dirs, tmp_path):
    k = start_kernel(kernel_dirs, tmp_path)
    yield k
    k.kc.stop_channels()
    if k.km.has_kernel:
        k.km.shutdown_kernel(now=True)
    k.log_file.close()


def types(msgs: list[dict]) -> list[str]:
    return [m["msg_type"] for m in msgs]


def states(msgs: list[dict]) -> list[str]:
    return [m["content"]["execution_state"] for m in msgs if m["msg_type"] == "status"]


def outputs(msgs: list[dict]) -> list[str]:
    """iopub message types without the status messages."""
    return [t for t in types(msgs) if t != "status"]


def assert_busy_idle(msgs: list[dict]) -> None:
    assert msgs[0]["msg_type"] == "status" and msgs[0]["content"]["execution_state"] == "busy", types(msgs)
    assert msgs[-1]["msg_type"] == "status" and msgs[-1]["content"]["execution_state"] == "idle", types(msgs)
    assert states(msgs) == ["busy", "idle"]


def wait_for_exit(pid: int, timeout: float) -> bool:
    """Whether process `pid` exits (or is a zombie nobody reaped) within `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{pid}/stat") as f:
                state = f.read().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


# ------------------------------------------------------------------------------------------------
# kernel_info and message headers


def test_kernel_info(kernel):
    reply, iopub = kernel.request("kernel_info_request")
    assert reply["msg_type"] == "kernel_info_reply"
    c = reply["content"]
    assert c["status"] == "ok"
    assert c["protocol_version"] == "5.3"
    assert c["implementation"] == "bach-kernel"
    assert c["implementation_version"] == cargo_version()
    assert c["language_info"] == {
        "name": "rust",
        "version": "1.0.0-test",
        "mimetype": "text/rust",
        "file_extension": ".rs",
        "pygments_lexer": "rust",
        "codemirror_mode": "rust",
    }
    assert "test engine" in c["banner"]
    assert isinstance(c["help_links"], list) and all({"text", "url"} <= set(h) for h in c["help_links"])
    assert_busy_idle(iopub)


def test_kernel_info_on_control(kernel):
    reply, iopub = kernel.request("kernel_info_request", channel="control")
    assert reply["content"]["implementation"] == "bach-kernel"
    assert_busy_idle(iopub)


def test_reply_headers_follow_the_spec(kernel):
    msg_id = kernel.send("kernel_info_request")
    reply = kernel.reply(msg_id)
    h = reply["header"]
    assert h["version"] == "5.3"
    assert h["msg_type"] == "kernel_info_reply"
    assert uuid.UUID(h["msg_id"]).version == 4
    assert h["session"] and h["session"] != kernel.kc.session.session
    assert "username" in h
    date = h["date"]
    if isinstance(date, str):
        date = datetime.fromisoformat(date.replace("Z", "+00:00"))
    assert date.tzinfo is not None
    assert reply["parent_header"]["msg_id"] == msg_id
    assert reply["parent_header"]["session"] == kernel.kc.session.session


def test_heartbeat_echoes(kernel):
    ctx = zmq.Context.instance()
    sock = ctx.socket(zmq.REQ)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(f"tcp://{kernel.km.ip}:{kernel.km.hb_port}")
    try:
        for payload in (b"ping", b"\x00binary\xff"):
            sock.send(payload)
            assert sock.poll(5000), "no heartbeat echo"
            assert sock.recv() == payload
    finally:
        sock.close()


# ------------------------------------------------------------------------------------------------
# execute_request


def test_execute_streams_display_and_result(kernel):
    reply, iopub = kernel.execute("print hello\neprint oops\ndisplay pic\nvalue 42")
    assert reply["content"]["status"] == "ok"
    assert reply["content"]["execution_count"] == 1
    assert reply["content"]["user_expressions"] == {}
    assert reply["content"]["payload"] == []
    assert_busy_idle(iopub)
    assert outputs(iopub) == ["execute_input", "stream", "stream", "display_data", "execute_result"]
    by_type = {}
    for m in iopub:
        by_type.setdefault(m["msg_type"], []).append(m["content"])
    assert by_type["execute_input"] == [{"code": "print hello\neprint oops\ndisplay pic\nvalue 42", "execution_count": 1}]
    assert by_type["stream"] == [{"name": "stdout", "text": "hello\n"}, {"name": "stderr", "text": "oops\n"}]
    display = by_type["display_data"][0]
    assert display["data"] == {"text/plain": "pic", "text/html": "<b>pic</b>"}
    assert display["metadata"] == {}
    assert by_type["execute_result"] == [{"execution_count": 1, "data": {"text/plain": "42"}, "metadata": {}}]


def test_execute_error(kernel):
    reply, iopub = kernel.execute("print before\nerror boom")
    c = reply["content"]
    assert c["status"] == "error"
    assert (c["ename"], c["evalue"]) == ("TestError", "boom")
    assert c["traceback"] and all(isinstance(line, str) for line in c["traceback"])
    assert c["execution_count"] == 1
    assert_busy_idle(iopub)
    assert outputs(iopub) == ["execute_input", "stream", "error"]
    err = [m for m in iopub if m["msg_type"] == "error"][0]["content"]
    assert (err["ename"], err["evalue"]) == ("TestError", "boom")
    assert err["traceback"] == c["traceback"]


def test_panic_in_cell_is_an_error(kernel):
    reply, iopub = kernel.execute("panic")
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "Panic"
    stderr = [m["content"]["text"] for m in iopub if m["msg_type"] == "stream"]
    assert "panicked" in "".join(stderr)


def test_engine_crash_does_not_kill_the_kernel(kernel):
    reply, iopub = kernel.execute("crash")
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "KernelPanic"
    assert "error" in outputs(iopub)
    reply, iopub = kernel.execute("print still here")
    assert reply["content"]["status"] == "ok"
    assert [m["content"]["text"] for m in iopub if m["msg_type"] == "stream"] == ["still here\n"]


def test_many_small_writes_arrive_complete_and_in_order(kernel):
    reply, iopub = kernel.execute("spam 3000\nprint end", timeout=30)
    assert reply["content"]["status"] == "ok"
    text = "".join(m["content"]["text"] for m in iopub if m["msg_type"] == "stream")
    assert text == "".join(f"line {i}\n" for i in range(3000)) + "end\n"


def test_execution_count_silent_and_store_history(kernel):
    reply, iopub = kernel.execute("count")
    assert reply["content"]["execution_count"] == 1
    assert [m["content"]["text"] for m in iopub if m["msg_type"] == "stream"] == ["1\n"]

    reply, iopub = kernel.execute("count")
    assert reply["content"]["execution_count"] == 2

    # store_history=False: runs and shows output, but the count does not move.
    reply, iopub = kernel.execute("count", store_history=False)
    assert reply["content"]["status"] == "ok"
    assert reply["content"]["execution_count"] == 2
    assert outputs(iopub) == ["execute_input", "stream"]

    # silent: no execute_input, no outputs (not even errors), count unchanged.
    reply, iopub = kernel.execute("print secret\ndisplay x\nvalue 1", silent=True)
    assert reply["content"]["status"] == "ok"
    assert outputs(iopub) == []
    assert_busy_idle(iopub)
    reply, iopub = kernel.execute("error hidden", silent=True)
    assert reply["content"]["status"] == "error"
    assert outputs(iopub) == []

    reply, iopub = kernel.execute("value x")
    assert reply["content"]["execution_count"] == 3
    result = [m for m in iopub if m["msg_type"] == "execute_result"][0]["content"]
    assert result["execution_count"] == 3


def test_user_expressions_are_answered(kernel):
    reply, _ = kernel.execute("print x", user_expressions={"a": "1 + 1"})
    assert reply["content"]["status"] == "ok"
    assert reply["content"]["user_expressions"]["a"]["status"] == "error"


def test_stop_on_error_aborts_queued_requests(kernel):
    kc = kernel.kc
    failing = kc.execute("sleep 0.5\nerror boom")
    queued = [kc.execute("print never 1"), kc.execute("print never 2")]
    assert kernel.reply(failing)["content"]["status"] == "error"
    for msg_id in queued:
        reply = kernel.reply(msg_id)
        assert reply["content"]["status"] == "aborted", reply["content"]
        iopub = kernel.iopub_until_idle(msg_id)
        assert_busy_idle(iopub)
        assert outputs(iopub) == []
    # Requests sent after the failure run normally.
    reply, iopub = kernel.execute("print after")
    assert reply["content"]["status"] == "ok"
    assert [m["content"]["text"] for m in iopub if m["msg_type"] == "stream"] == ["after\n"]


def test_no_abort_without_stop_on_error(kernel):
    kc = kernel.kc
    failing = kc.execute("sleep 0.5\nerror boom", stop_on_error=False)
    queued = kc.execute("print runs")
    assert kernel.reply(failing)["content"]["status"] == "error"
    assert kernel.reply(queued)["content"]["status"] == "ok"


# ------------------------------------------------------------------------------------------------
# complete, inspect, is_complete, history, comm_info


def test_complete(kernel):
    reply, iopub = kernel.request("complete_request", {"code": "value 1\npri", "cursor_pos": 11})
    c = reply["content"]
    assert c["status"] == "ok"
    assert c["matches"] == ["print"]
    assert (c["cursor_start"], c["cursor_end"]) == (8, 11)
    assert c["metadata"] == {}
    assert_busy_idle(iopub)
    # Cursor positions are in characters (é is two bytes in UTF-8).
    c = kernel.request("complete_request", {"code": "value é\ner", "cursor_pos": 10})[0]["content"]
    assert c["matches"] == ["error"]
    assert (c["cursor_start"], c["cursor_end"]) == (8, 10)


def test_inspect(kernel):
    reply, iopub = kernel.request("inspect_request", {"code": "print x", "cursor_pos": 2, "detail_level": 0})
    c = reply["content"]
    assert c["status"] == "ok" and c["found"] is True
    assert "print <text>" in c["data"]["text/plain"]
    assert_busy_idle(iopub)
    c = kernel.request("inspect_request", {"code": "value x", "cursor_pos": 2, "detail_level": 0})[0]["content"]
    assert c["status"] == "ok" and c["found"] is False
    assert c["data"] == {}


@pytest.mark.parametrize(
    "code,status,indent",
    [
        ("let x = 1;", "complete", None),
        ("1 + 1", "complete", None),
        (":dep serde = \"1\"", "complete", None),
        ("fn f() {", "incomplete", "    "),
        ("let x = {", "incomplete", "    "),
        ("fn f() {\n    if x {", "incomplete", "        "),
        ('let s = "abc', "incomplete", ""),
        ("let x = )", "invalid", None),
        ("fn 1x", "invalid", None),
    ],
)
def test_is_complete(kernel, code, status, indent):
    reply, iopub = kernel.request("is_complete_request", {"code": code})
    assert reply["content"]["status"] == status
    if indent is not None:
        assert reply["content"]["indent"] == indent
    assert_busy_idle(iopub)


def test_history(kernel):
    for code in ["print a", "print b", "value c", "print a"]:
        kernel.execute(code)
    kernel.execute("print not stored", store_history=False)
    kernel.execute("print silent", silent=True)

    reply, iopub = kernel.request("history_request", {"hist_access_type": "tail", "n": 2, "output": False, "raw": True})
    assert reply["content"]["status"] == "ok"
    assert reply["content"]["history"] == [[1, 3, "value c"], [1, 4, "print a"]]
    assert_busy_idle(iopub)

    tail = kernel.request("history_request", {"hist_access_type": "tail", "n": 100, "output": False, "raw": True})[0]
    assert [e[2] for e in tail["content"]["history"]] == ["print a", "print b", "value c", "print a"]

    rng = kernel.request(
        "history_request",
        {"hist_access_type": "range", "session": 0, "start": 2, "stop": 4, "output": False, "raw": True},
    )[0]
    assert rng["content"]["history"] == [[1, 2, "print b"], [1, 3, "value c"]]

    search = kernel.request(
        "history_request", {"hist_access_type": "search", "pattern": "print*", "output": False, "raw": True}
    )[0]
    assert search["content"]["history"] == [[1, 1, "print a"], [1, 2, "print b"], [1, 4, "print a"]]
    unique = kernel.request(
        "history_request",
        {"hist_access_type": "search", "pattern": "print*", "unique": True, "output": False, "raw": True},
    )[0]
    assert unique["content"]["history"] == [[1, 2, "print b"], [1, 4, "print a"]]
    last = kernel.request(
        "history_request", {"hist_access_type": "search", "pattern": "*a*", "n": 1, "output": False, "raw": True}
    )[0]
    assert last["content"]["history"] == [[1, 4, "print a"]]


def test_comm_info(kernel):
    reply, iopub = kernel.request("comm_info_request", {})
    assert reply["content"] == {"status": "ok", "comms": {}}
    assert_busy_idle(iopub)


def test_comm_open_is_closed(kernel):
    msg_id = kernel.send("comm_open", {"comm_id": "c1", "target_name": "nothing", "data": {}})
    iopub = kernel.iopub_until_idle(msg_id)
    closes = [m for m in iopub if m["msg_type"] == "comm_close"]
    assert closes and closes[0]["content"]["comm_id"] == "c1"


# ------------------------------------------------------------------------------------------------
# interrupt


def start_sleep(kernel: Kernel) -> str:
    """Starts `sleep 30` and returns once it is running (its first output has arrived)."""
    msg_id = kernel.kc.execute("print started\nsleep 30")
    deadline = time.monotonic() + TIMEOUT
    while time.monotonic() < deadline:
        msg = kernel.kc.get_iopub_msg(timeout=TIMEOUT)
        if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "stream":
            return msg_id
    raise AssertionError("sleep cell did not start")


def test_interrupt_request_stops_a_running_cell(kernel):
    msg_id = start_sleep(kernel)
    t0 = time.monotonic()
    interrupt = kernel.send("interrupt_request", {}, channel="control")
    ireply = kernel.reply(interrupt, channel="control", timeout=5)
    assert ireply["msg_type"] == "interrupt_reply"
    assert ireply["content"]["status"] == "ok"
    reply = kernel.reply(msg_id, timeout=5)
    assert time.monotonic() - t0 < 5
    assert reply["content"]["status"] == "error"
    assert reply["content"]["ename"] == "Interrupted"
    iopub = kernel.iopub_until_idle(msg_id)
    assert "error" in outputs(iopub)
    # The kernel keeps working.
    reply, iopub = kernel.execute("print alive")
    assert reply["content"]["status"] == "ok"


def test_interrupt_through_the_kernel_manager(kernel):
    msg_id = start_sleep(kernel)
    kernel.km.interrupt_kernel()  # interrupt_mode "message": interrupt_request on control
    reply = kernel.reply(msg_id, timeout=5)
    assert reply["content"]["ename"] == "Interrupted"


def test_sigint_interrupts_instead_of_killing(kernel):
    msg_id = start_sleep(kernel)
    os.kill(kernel.pid, signal.SIGINT)
    reply = kernel.reply(msg_id, timeout=5)
    assert reply["content"]["ename"] == "Interrupted"
    assert kernel.is_alive()
    assert kernel.execute("print alive")[0]["content"]["status"] == "ok"


def test_control_is_served_while_a_cell_runs(kernel):
    msg_id = start_sleep(kernel)
    t0 = time.monotonic()
    reply, _ = kernel.request("kernel_info_request", channel="control")
    assert reply["content"]["status"] == "ok"
    assert time.monotonic() - t0 < 2
    kernel.request("interrupt_request", {}, channel="control")
    assert kernel.reply(msg_id)["content"]["status"] == "error"


# ------------------------------------------------------------------------------------------------
# Bad messages


def raw_dealer(kernel: Kernel, port: int) -> zmq.Socket:
    sock = zmq.Context.instance().socket(zmq.DEALER)
    sock.setsockopt(zmq.LINGER, 0)
    sock.connect(f"tcp://{kernel.km.ip}:{port}")
    return sock


def test_bad_signature_is_dropped_and_the_kernel_keeps_answering(kernel):
    good = Session(key=kernel.km.session.key, signature_scheme="hmac-sha256")
    wrong = Session(key=b"not-the-key", signature_scheme="hmac-sha256")
    sock = raw_dealer(kernel, kernel.km.shell_port)
    try:
        # Signed with the wrong key.
        sock.send_multipart(wrong.serialize(wrong.msg("kernel_info_request", {})))
        # Signed correctly, then tampered with.
        frames = good.serialize(good.msg("execute_request", {"code": "print tampered", "silent": False}))
        frames[-1] = json.dumps({"code": "print evil", "silent": False}).encode()
        sock.send_multipart(frames)
        # Not signed at all.
        frames = good.serialize(good.msg("kernel_info_request", {}))
        frames[1] = b""
        sock.send_multipart(frames)
        # Garbage: no delimiter; too few frames; a signed frame that is not JSON.
        sock.send_multipart([b"hello", b"world"])
        sock.send_multipart([b"<IDS|MSG>", b"", b"{}"])
        sig = good.sign([b"not json", b"{}", b"{}", b"{}"])
        sock.send_multipart([b"<IDS|MSG>", sig, b"not json", b"{}", b"{}", b"{}"])
        assert not sock.poll(1000), "the kernel answered a message it should have dropped"

        # The same socket still gets answers to a correct message.
        msg = good.msg("kernel_info_request", {})
        sock.send_multipart(good.serialize(msg))
        assert sock.poll(5000), "no reply to a correctly signed message"
        reply = good.deserialize(good.feed_identities(sock.recv_multipart())[1])
        assert reply["msg_type"] == "kernel_info_reply"
        assert reply["parent_header"]["msg_id"] == msg["header"]["msg_id"]
    finally:
        sock.close()
    assert kernel.kc.kernel_info(reply=True, timeout=5)["content"]["status"] == "ok"
    log = kernel.log()
    assert "signature" in log, log
    # Nothing that was dropped ran.
    history = kernel.request("history_request", {"hist_access_type": "tail", "n": 100, "output": False, "raw": True})
    assert history[0]["content"]["history"] == []


def fuzz_frames(rng, good, key):
    """One malformed message for the shell or control socket: garbage frames, a truncated
    multipart, a wrong signature, a huge header, invalid UTF-8 or JSON, or JSON of the wrong
    shape (those last ones signed correctly, so the kernel must parse them)."""
    import hashlib
    import hmac as hmac_mod

    def signed(parts):
        sig = hmac_mod.new(key, digestmod=hashlib.sha256)
        for p in parts:
            sig.update(p)
        return [b"<IDS|MSG>", sig.hexdigest().encode(), *parts]

    kind = rng.randrange(8)
    msg = good.msg(rng.choice(["kernel_info_request", "execute_request", "complete_request", "history_request", "comm_open"]), {})
    frames = good.serialize(msg)
    if kind == 0:  # random frames
        return [rng.randbytes(rng.randrange(0, 64)) for _ in range(rng.randrange(1, 7))]
    if kind == 1:  # truncated multipart
        return frames[: rng.randrange(0, len(frames))] or [b""]
    if kind == 2:  # wrong signature
        frames[1] = rng.randbytes(32).hex().encode()
        return frames
    if kind == 3:  # a huge header, signed
        header = json.dumps({**msg["header"], "pad": "x" * rng.randrange(100_000, 2_000_000)}, default=str).encode()
        return signed([header, b"{}", b"{}", b"{}"])
    if kind == 4:  # invalid UTF-8, signed
        return signed([b"\xff\xfe" + rng.randbytes(16), b"{}", b"{}", b"{}"])
    if kind == 5:  # invalid JSON, signed
        return signed([b'{"msg_type": ', b"{}", b"[", b"{}"])
    if kind == 6:  # JSON of the wrong shape, signed
        bad = rng.choice([b"[]", b"42", b'"s"', b"null", b'{"msg_id": 1}', b'{"msg_type": ["x"]}'])
        return signed([bad, bad, bad, bad])
    # a real header with content of the wrong types, signed
    header = json.dumps(msg["header"], default=str).encode()
    content = rng.choice([b'{"code": 5}', b'{"code": null, "silent": "yes"}', b'{"cursor_pos": -3, "code": "x"}', b"[]"])
    return signed([header, b"{}", b"{}", content])


def test_the_wire_survives_fuzzing(kernel):
    """Malformed messages through the real sockets never crash the kernel, and it still answers
    (BACH_FUZZ_MESSAGES sets how many; 100,000 by hand)."""
    import random

    rng = random.Random(37)
    count = int(os.environ.get("BACH_FUZZ_MESSAGES", "10000"))
    good = Session(key=kernel.km.session.key, signature_scheme="hmac-sha256")
    socks = [raw_dealer(kernel, kernel.km.shell_port), raw_dealer(kernel, kernel.km.control_port)]
    try:
        for i in range(count):
            socks[i % 2].send_multipart(fuzz_frames(rng, good, kernel.km.session.key))
            if i % 5000 == 4999:
                assert kernel.is_alive(), f"the kernel died after {i + 1} malformed messages:\n{kernel.log()[-3000:]}"
                # Drain whatever the kernel answered (error replies to well-formed ones).
                for s in socks:
                    while s.poll(0):
                        s.recv_multipart()
    finally:
        for s in socks:
            s.close()
    assert kernel.is_alive(), kernel.log()[-3000:]
    assert kernel.kc.kernel_info(reply=True, timeout=30)["content"]["status"] == "ok"
    reply, _ = kernel.execute("print still here", timeout=300)
    assert reply["content"]["status"] == "ok"
    assert "signature" in kernel.log()


def test_reply_signatures_are_checked_by_the_client(kernel):
    # jupyter_client verifies every message it receives; a reply that arrives proves the kernel
    # signs with the right key. Check the raw signature too.
    session = Session(key=kernel.km.session.key, signature_scheme="hmac-sha256")
    sock = raw_dealer(kernel, kernel.km.shell_port)
    try:
        sock.send_multipart(session.serialize(session.msg("kernel_info_request", {})))
        assert sock.poll(5000)
        frames = sock.recv_multipart()
        i = frames.index(b"<IDS|MSG>")
        assert frames[i + 1] == session.sign(frames[i + 2 : i + 6])
    finally:
        sock.close()


def test_unknown_message_type_gets_an_error_reply(kernel):
    for channel in ("shell", "control"):
        reply, iopub = kernel.request("frobnicate_request", {"x": 1}, channel=channel)
        assert reply["msg_type"] == "frobnicate_reply"
        assert reply["content"]["status"] == "error"
        assert reply["content"]["ename"] == "UnknownMessageType"
        assert_busy_idle(iopub)
    # Not a request: no reply, and the kernel carries on.
    kernel.send("frobnicate_notice", {})
    assert kernel.kc.kernel_info(reply=True, timeout=5)["content"]["status"] == "ok"
    assert "frobnicate" in kernel.log()


# ------------------------------------------------------------------------------------------------
# Shutdown and lifetime


def test_shutdown_on_control(kernel):
    pid = kernel.pid
    reply, iopub = kernel.request("shutdown_request", {"restart": False}, channel="control")
    assert reply["msg_type"] == "shutdown_reply"
    assert reply["content"] == {"status": "ok", "restart": False}
    assert_busy_idle(iopub)
    assert wait_for_exit(pid, 5), "kernel still running 5 s after shutdown_request"
    assert kernel.km.provisioner.process.wait(timeout=5) == 0


def test_shutdown_on_shell(kernel):
    pid = kernel.pid
    msg_id = kernel.send("shutdown_request", {"restart": False})
    assert kernel.reply(msg_id)["content"]["status"] == "ok"
    assert wait_for_exit(pid, 5)
    assert kernel.km.provisioner.process.wait(timeout=5) == 0


def test_shutdown_while_a_cell_runs(kernel):
    pid = kernel.pid
    start_sleep(kernel)
    t0 = time.monotonic()
    reply, _ = kernel.request("shutdown_request", {"restart": False}, channel="control")
    assert reply["content"]["status"] == "ok"
    assert wait_for_exit(pid, 5)
    assert time.monotonic() - t0 < 5


def test_restart_is_fast(kernel):
    """shutdown_request with restart=true is answered and the process exits: Jupyter starts the
    new process itself (it would SIGTERM a kernel that stays, after shutdown_wait_time / 2)."""
    old_pid = kernel.pid
    kernel.kc.stop_channels()
    t0 = time.monotonic()
    kernel.km.restart_kernel(now=False)
    assert time.monotonic() - t0 < 2.0
    assert wait_for_exit(old_pid, 1)
    kc = kernel.km.client()
    kc.start_channels()
    try:
        kc.wait_for_ready(timeout=30)
        assert kc.execute_interactive("count", timeout=10)["content"]["execution_count"] == 1
    finally:
        kc.stop_channels()


def test_restart_flag_is_echoed(kernel):
    pid = kernel.pid
    reply, _ = kernel.request("shutdown_request", {"restart": True}, channel="control")
    assert reply["content"] == {"status": "ok", "restart": True}
    assert wait_for_exit(pid, 5)


PARENT = textwrap.dedent(
    """
    import subprocess, sys, time
    from jupyter_client.connect import write_connection_file
    fname, _ = write_connection_file(sys.argv[2], ip="127.0.0.1")
    child = subprocess.Popen([sys.argv[1], fname], stderr=open(sys.argv[3], "w"))
    print(child.pid, flush=True)
    time.sleep(600)
    """
)


def test_kernel_exits_when_its_parent_dies(binary, tmp_path):
    conn = tmp_path / "orphan.json"
    parent = subprocess.Popen(
        [sys.executable, "-c", PARENT, str(binary), str(conn), str(tmp_path / "orphan.stderr")],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        kernel_pid = int(parent.stdout.readline())
        # Make sure it is up and serving before its parent goes.
        info = json.loads(conn.read_text())
        sock = zmq.Context.instance().socket(zmq.REQ)
        sock.setsockopt(zmq.LINGER, 0)
        sock.connect(f"tcp://127.0.0.1:{info['hb_port']}")
        sock.send(b"ping")
        assert sock.poll(10000), "orphan test kernel never answered its heartbeat"
        sock.recv()
        sock.close()
        assert not wait_for_exit(kernel_pid, 0.5), "kernel exited while its parent was alive"
    finally:
        parent.kill()
        parent.wait()
    t0 = time.monotonic()
    exited = wait_for_exit(kernel_pid, 5)
    if not exited:
        os.kill(kernel_pid, signal.SIGKILL)
    assert exited, "kernel still running 5 s after its parent died"
    assert time.monotonic() - t0 < 5
    assert "parent process" in (tmp_path / "orphan.stderr").read_text()

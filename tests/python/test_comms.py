"""Jupyter comms through the real kernel (issue #36): a cell opens a comm and answers the front
end's messages; the front end opens one for a target a cell registered; comm_info lists them;
a message sent while a cell runs is handled when it ends, not lost; without a target the
front end's open is closed."""

import time

import pytest

from test_kernel import of_type, run, text

TIMEOUT = 300


@pytest.fixture(scope="module")
def session(kernel):
    return kernel


def send(kc, msg_type, content):
    """Send a shell message with no reply (comm_open, comm_msg, comm_close); its msg_id."""
    msg = kc.session.msg(msg_type, content)
    kc.shell_channel.send(msg)
    return msg["header"]["msg_id"]


def until_idle(kc, msg_id, timeout=TIMEOUT):
    """The iopub messages whose parent is `msg_id`, up to its idle status."""
    out, deadline = [], time.time() + timeout
    while time.time() < deadline:
        m = kc.get_iopub_msg(timeout=timeout)
        if m["parent_header"].get("msg_id") != msg_id:
            continue
        if m["msg_type"] == "status" and m["content"]["execution_state"] == "idle":
            return out
        out.append(m)
    raise AssertionError(f"no idle for {msg_id}")


def result(msgs):
    return of_type(msgs, "execute_result")[0]["content"]["data"]["text/plain"]


OPEN = """let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::<String>::new()));
let comm = bach::comm::Comm::open("bach.test", r#"{"hello": 1}"#)?;
let echo = comm.clone();
let s2 = seen.clone();
comm.on_msg(move |d| { s2.lock().unwrap().push(d.to_string()); echo.send(&format!("{{\\"echo\\": {d}}}")).unwrap(); });
comm.id().to_string()"""


def test_a_cell_opens_a_comm_and_answers_the_front_end(session):
    _, kc = session
    r, msgs = run(kc, OPEN)
    assert r["status"] == "ok", (r, text(msgs))
    (opened,) = of_type(msgs, "comm_open")
    comm_id = opened["content"]["comm_id"]
    assert opened["content"]["target_name"] == "bach.test" and opened["content"]["data"] == {"hello": 1}
    assert result(msgs).strip('"') == comm_id
    # The comm_open reached the front end before the cell's result.
    assert msgs.index(opened) < msgs.index(of_type(msgs, "execute_result")[0])
    info = kc.comm_info(reply=True)["content"]
    assert info["comms"].get(comm_id) == {"target_name": "bach.test"}, info
    assert kc.comm_info(target_name="other", reply=True)["content"]["comms"] == {}

    mid = send(kc, "comm_msg", {"comm_id": comm_id, "data": {"x": 2}})
    answers = of_type(until_idle(kc, mid), "comm_msg")
    assert [a["content"] for a in answers] == [{"comm_id": comm_id, "data": {"echo": {"x": 2}}}], answers
    r, msgs = run(kc, "seen.lock().unwrap().clone()")
    assert r["status"] == "ok" and '{\\"x\\":2}' in result(msgs), result(msgs)

    mid = send(kc, "comm_close", {"comm_id": comm_id, "data": {}})
    until_idle(kc, mid)
    r, msgs = run(kc, "(comm.is_open(), comm.send(\"{}\").is_err())")
    assert r["status"] == "ok" and result(msgs) == "(false, true)", result(msgs)
    assert comm_id not in kc.comm_info(reply=True)["content"]["comms"]


def test_the_front_end_opens_a_comm_for_a_registered_target(session):
    _, kc = session
    r, msgs = run(kc, 'bach::comm::register_target("echo", |comm, data| { comm.send(data).unwrap(); })?;')
    assert r["status"] == "ok", (r, text(msgs))
    mid = send(kc, "comm_open", {"comm_id": "front-1", "target_name": "echo", "data": {"a": [1, 2]}})
    answers = until_idle(kc, mid)
    assert [(m["msg_type"], m["content"]) for m in answers if m["msg_type"].startswith("comm")] == [("comm_msg", {"comm_id": "front-1", "data": {"a": [1, 2]}})]
    assert kc.comm_info(target_name="echo", reply=True)["content"]["comms"] == {"front-1": {"target_name": "echo"}}
    # A target nobody registered: closed at once, as the spec says.
    mid = send(kc, "comm_open", {"comm_id": "front-2", "target_name": "nobody", "data": {}})
    closes = of_type(until_idle(kc, mid), "comm_close")
    assert [c["content"]["comm_id"] for c in closes] == ["front-2"]


def test_a_message_sent_while_a_cell_runs_is_handled_when_it_ends(session):
    _, kc = session
    r, msgs = run(kc, OPEN.replace("let seen", "let seen2").replace("seen.clone()", "seen2.clone()"))
    assert r["status"] == "ok", (r, text(msgs))
    comm_id = of_type(msgs, "comm_open")[0]["content"]["comm_id"]
    cell = kc.execute("std::thread::sleep(std::time::Duration::from_secs(3));\nseen2.lock().unwrap().len()")
    time.sleep(1.0)
    mid = send(kc, "comm_msg", {"comm_id": comm_id, "data": {"during": True}})
    cell_msgs = until_idle(kc, cell)
    assert result(cell_msgs) == "0", "the cell ran before the message was handled"
    answers = of_type(until_idle(kc, mid), "comm_msg")
    assert [a["content"]["data"] for a in answers] == [{"echo": {"during": True}}]
    r, msgs = run(kc, "seen2.lock().unwrap().len()")
    assert result(msgs) == "1"


def test_bad_json_and_a_panicking_callback_leave_the_comm_working(session):
    _, kc = session
    code = """let boom = bach::comm::Comm::open("bach.boom", "not json")?;
let b2 = boom.clone();
boom.on_msg(move |d| { if d.contains("panic") { panic!("asked to"); } b2.send(d).unwrap(); });
boom.id().to_string()"""
    r, msgs = run(kc, code)
    assert r["status"] == "ok", (r, text(msgs))
    (opened,) = of_type(msgs, "comm_open")
    assert opened["content"]["data"] == {}, "data that is not JSON goes out as {}"
    comm_id = opened["content"]["comm_id"]
    mid = send(kc, "comm_msg", {"comm_id": comm_id, "data": {"panic": 1}})
    assert of_type(until_idle(kc, mid), "comm_msg") == []
    mid = send(kc, "comm_msg", {"comm_id": comm_id, "data": {"ok": 1}})
    assert [m["content"]["data"] for m in of_type(until_idle(kc, mid), "comm_msg")] == [{"ok": 1}]
    r, msgs = run(kc, "1 + 1")
    assert r["status"] == "ok" and result(msgs) == "2"

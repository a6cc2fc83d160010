"""Connection pairing, the Remote facade, DshClient flows (approvals) and the CLI ``run``."""

from __future__ import annotations

import argparse
import threading
from pathlib import Path

import pytest

from dsh_notebook.cli_run import run_main
from dsh_notebook.client.connection import Connection
from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.client.remote import Remote
from dsh_notebook.client.transport import InProcessTransport
from dsh_notebook.cmdline.argparser import build_parser
from dsh_notebook.errors import HostError
from dsh_notebook.host.contract import DESCRIPTORS
from dsh_notebook.host.host import Host
from dsh_notebook.wire.events import ApprovalDecided
from tests.host.support import Models, ToolModel


def test_rpc_ids_pair_responses_across_threads(host: Host) -> None:
    conn = Connection(InProcessTransport(host))
    results: dict[int, object] = {}

    def worker(i: int) -> None:
        results[i] = conn.call("session/list", {}, timeout=20)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    assert len(results) == 24
    ids = [ex.rpc_id for ex in conn.exchanges]
    assert len(set(ids)) == 24
    assert all(ex.response and ex.response["rpcId"] == ex.rpc_id for ex in conn.exchanges)
    conn.close()
    with pytest.raises(HostError) as err:
        conn.call("session/list", {})
    assert err.value.code == "CLOSED"


def test_blocking_call_inside_a_stream_callback_is_refused(host: Host) -> None:
    conn = Connection(InProcessTransport(host))
    seen: list[str] = []
    done = threading.Event()

    def on_item(_frame: object) -> None:
        try:
            conn.call("session/list", {})
        except HostError as exc:
            seen.append(exc.code)
        done.set()

    sub = conn.open_stream("session/control", {}, on_item)
    assert done.wait(10) and seen == ["DEADLOCK"]
    sub.close()
    assert sub.ended.wait(10) and sub.error is None
    conn.close()


def test_remote_is_built_from_the_descriptors(host: Host) -> None:
    remote = Remote(Connection(InProcessTransport(host)))
    for d in DESCRIPTORS.values():
        method = getattr(getattr(remote, d.namespace), d.name)
        assert method.descriptor is d
    env = remote.session.prompt.envelope(request={"session_id": "s_123", "request_id": "req_42", "content": "hi"})
    assert env == {"type": "client-request", "rpcId": "?", "method": "session/prompt", "payload": {"args": {
        "request": {"sessionId": "s_123", "requestId": "req_42", "mode": "queue", "content": "hi"}}}}
    created = remote.session.create(model="script:readme")
    assert remote.session.create.last is not None and remote.session.create.last.response is not None
    assert remote.session.info(session_id=created.session_id).status == "idle"
    with pytest.raises(HostError):
        remote.session.follow()  # a stream is opened, not called
    remote.connection.close()


@pytest.mark.integration
def test_approvals_in_ask_mode_wait_for_session_approve(client: DshClient, models: Models, tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    models.fakes["tools"] = ToolModel([("bash", {"command": "echo approved-run"}), ("write", {"file_path": "x.txt", "content": "no"})])
    created = client.create_session(model="fake:tools", cwd=str(tmp_path / "ws"))
    assert created.approve == "ask"  # not the demo workspace
    sid = created.session_id
    handle = client.follow(sid)
    rid = client.prompt("go", sid).request_id
    handle.wait(lambda m: "t1" in m.approvals, timeout=20)
    assert [p.call_id for p in client.info(sid).pending_approvals] == ["t1"]
    with handle.cond:
        last = handle.model.tools["t1"]["phases"][-1]
        assert (last["phase"], last["status"], handle.model.tools["t1"]["waiting"]) == ("approval", "waiting", True)
    client.approve(sid, "t1", "allow")
    handle.wait(lambda m: "t2" in m.approvals, timeout=20)
    client.approve(sid, "t2", "deny")
    outcome = handle.wait_turn_end(rid, timeout=20)
    assert outcome.completed and "approved-run" in outcome.final_answer
    assert not (tmp_path / "ws" / "x.txt").exists()
    types = [e.type for e in handle.model.events]
    assert types.count("approval/asked") == 2 and types.count("approval/decided") == 2
    decided = [(e.call_id, e.decision, e.by) for e in handle.model.events if isinstance(e, ApprovalDecided)]
    assert decided == [("t1", "allow", "host:client"), ("t2", "deny", "host:client")]  # who answered
    with pytest.raises(HostError) as err:
        client.approve(sid, "t1", "allow")
    assert err.value.code == "UNKNOWN_APPROVAL"
    handle.close()


def run_args(*flags: str, prompt: str = "summarize the README") -> argparse.Namespace:
    """``run``'s arguments as the CLI parses them (the command registry's parser: every flag of a
    run has its default, as a real command line has)."""
    return build_parser().parse_args(["run", "--approve", "auto", *flags, *prompt.split()])


def test_cli_run_prints_the_answer_and_the_session_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_main(run_args("--quiet")) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[-1].startswith("session: s_") and " log: " in out[-1] and out[-1].endswith(".jsonl")
    assert "README" in "\n".join(out[:-1])
    sid = out[-1].split()[1]
    assert run_main(run_args("--session", sid, prompt="summarize it again")) == 0
    captured = capsys.readouterr()
    assert captured.out.strip().splitlines()[-1].split()[1] == sid
    # progress on stderr: the notebook's turn view on a stream sink (tool line, result, the text)
    assert "  → read README.md" in captured.err and "    ✓ " in captured.err
    assert captured.out.strip().splitlines()[0] in captured.err


def test_cli_run_fails_with_the_reason(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    # a real provider without a key: refused before any turn, with the variable to set
    with pytest.raises(Exception) as err:
        run_main(run_args("--model", "deepseek:deepseek-chat", "--quiet"))
    assert getattr(err.value, "code", "") == "NO_API_KEY"

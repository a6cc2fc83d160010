"""Secrets in approval events: ``approval/asked.reason`` and ``approval/decided.rule`` / ``.grant``
quoted the command or the rule they came from, key and all (``curl -H "Authorization: Bearer
sk-proj-…"`` asked, allowed "for this session": the grant held the key). Attacks through a host
(real bash, the model faked at its boundary) and through a real ``run`` on a terminal (a pty):
the log file, every follow item a widget receives (events and tool-runtime frames), a follower's
snapshot while the call waits, ``session/info`` and the terminal's lines hold no key — while
the commands run with it, and a grant given for the session still lets its exact command run
unasked in the process that was answered.
"""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
from pathlib import Path

import pytest

from dsh_notebook.client.dsh_client import DshClient
from dsh_notebook.models.base import ModelRequest, StreamChunk
from dsh_notebook.notebook.cell.approvals import StdinApprovals
from dsh_notebook.session import load_log
from dsh_notebook.testing.models import FunctionModel, call_chunks, text_chunks
from dsh_notebook.tools.rules import ApprovalPolicy
from dsh_notebook.wire.base import dump
from dsh_notebook.wire.messages import ToolMessage, UserMessage
from tests.host.support import Models, make_host
from tests.support.fake_openai import FakeOpenAIServer, text_reply, tool_call_reply
from tests.support.log_checks import assert_valid_log

KEY = "sk-proj-Ar9sLk2Qx7Vb4Nm8Tz1Wc6Yh"  # key-shaped: masked wherever it is shown
CURL = f"curl -sS -H 'Authorization: Bearer {KEY}' http://127.0.0.1:9/x"  # asked by a rule holding the key
TEE = f"printf '%s' 'Bearer {KEY}' | tee token.txt"  # asked by the mode; allowed for the session
RULES = [{"tool": "bash", "pattern": f"curl -sS -H 'Authorization: Bearer {KEY}' *", "action": "ask"}]


def tee_then_curl(request: ModelRequest) -> list[StreamChunk]:
    """Each turn: the two calls (ids ``tee1``, ``curl1`` … by turn), then a text once they have results."""
    turn = sum(1 for m in request.messages if isinstance(m, UserMessage) and m.source.kind == "user")
    if isinstance(request.messages[-1], ToolMessage):
        return text_chunks("done", pieces=1, usage=False)
    return call_chunks((f"tee{turn}", "bash", json.dumps({"command": TEE})),
                       (f"curl{turn}", "bash", json.dumps({"command": CURL})))


@pytest.fixture
def rules(tmp_path: Path) -> Path:
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(RULES), encoding="utf-8")
    return path


@pytest.mark.integration  # real bash
def test_no_key_from_an_asked_command_a_session_grant_or_a_rule_is_logged_shown_or_sent(
    tmp_path: Path, rules: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    models = Models()
    models.fakes["m"] = FunctionModel(tee_then_curl, provider="tools")
    host = make_host(tmp_path / "home", models=models)
    client = DshClient(host)
    sent: list[str] = []  # every follow item, as the widget receives it
    shown: list[str] = []  # what the cell's stdin prompt asked, and what a client was sent meanwhile
    try:
        sid = client.create_session(model="fake:m", approve="ask", cwd=str(ws), rules=str(rules)).session_id
        handle = client.follow(sid, on_frame=lambda item, _m: sent.append(json.dumps(item)))
        handle.wait_snapshot()

        def typed(prompt: str) -> str:  # the person at the stdin prompt: "a" (for the session) for tee
            shown.append(prompt)
            late = client.follow(sid)  # a client that comes while the call waits: its snapshot
            late.wait_snapshot()
            late.close()
            shown.append(json.dumps(late.model.state()))
            shown.append(json.dumps(dump(client.info(sid))))
            return "a" if "tee token.txt" in prompt else "n"

        def idle() -> None:
            approvals[-1].ask(typed, lambda call_id, decision, scope="call", **_: client.approve(sid, call_id, decision,
                                                                                              scope))

        approvals: list[StdinApprovals] = []
        for turn, prompt in enumerate(("first", "again"), start=1):
            approvals.append(StdinApprovals(handle.model, handle.cond))  # a %dsh cell's approver (one a run)
            (ws / "token.txt").unlink(missing_ok=True)
            receipt = client.prompt(prompt, sid)
            assert handle.wait_turn_end(receipt.request_id, timeout=60, idle=idle).turn == turn
            assert (ws / "token.txt").read_text() == f"Bearer {KEY}"  # it ran as the model wrote it
        listed = dump(client.info(sid))["grants"]
        assert listed == [{"tool": "bash", "pattern": "printf '%s' 'Bearer ***' | tee token.txt"}]  # masked
        path = Path(client.info(sid).log_path)
        handle.close()
    finally:
        client.close()
        host.shutdown()

    prompts = [p for p in shown if p.startswith("dsh: allow")]
    rule_says = "rules.json#1 bash \"curl -sS -H 'Authorization: Bearer ***' *\" says ask"
    assert [p.count(f"({rule_says})") for p in prompts] == [0, 1, 1]  # the rule's text, masked, on the prompt
    text = path.read_text(encoding="utf-8")
    for where, what in [("log file", text), ("follow items", "\n".join(sent)), ("prompts, snapshots, info", "\n".join(shown))]:
        assert KEY not in what, f"the key leaked into the {where}"
    events = assert_valid_log(path)
    asked = [(e.call_id, e.reason) for e in events if e.type == "approval/asked"]
    assert asked == [("tee1", None), ("curl1", rule_says), ("curl2", rule_says)]  # tee2: not asked, granted
    (granted,) = [e for e in events if e.type == "approval/decided" and e.grant is not None]
    assert granted.grant is not None and granted.grant.pattern == "printf '%s' 'Bearer ***' | tee token.txt"
    assert granted.rule == "session bash \"printf '%s' 'Bearer ***' | tee token.txt\""
    assert [(e.call_id, e.by) for e in events if e.type == "approval/decided" and e.call_id.startswith("tee")] == [
        ("tee1", "host:client"), ("tee2", "session")]
    # read back from the log (a resumed session), the masked grant allows nothing: not the command,
    # and not a command that spells the mask
    policy = ApprovalPolicy(load_log(path).events)
    for command in (TEE, "printf '%s' 'Bearer ***' | tee token.txt"):
        assert policy.evaluate("x", "bash", json.dumps({"command": command})) is None


@pytest.mark.integration  # a CLI subprocess
def test_the_terminal_asks_with_the_rule_masked_and_the_log_holds_no_key(tmp_path: Path, rules: Path) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = {**os.environ, "DSH_HOME": str(tmp_path / "home"), "PYTHONPATH": str(Path(__file__).resolve().parents[2]),
           "DSH_API_KEY": FakeOpenAIServer.api_key or ""}
    master, slave = pty.openpty()  # the terminal: stdin, where the prompt is answered
    try:
        with FakeOpenAIServer() as server:
            server.enqueue(tool_call_reply([("c1", "bash", json.dumps({"command": CURL}))]), text_reply("done"))
            os.write(master, b"n\n")
            done = subprocess.run([sys.executable, "-m", "dsh_notebook", "run", "--model", "fake-model", "--base-url",
                                   server.base_url, "--approve", "ask", "--rules", str(rules), "--cwd", str(ws), "go"],
                                  env=env, stdin=slave, capture_output=True, text=True, timeout=120,
                                  start_new_session=True, check=False)
    finally:
        os.close(slave)
        os.close(master)
    assert done.returncode == 0, done.stderr
    masked = "curl -sS -H 'Authorization: Bearer ***' http://127.0.0.1:9/x"
    assert f"dsh: allow bash {masked}? (rules.json#1 bash \"curl -sS -H 'Authorization: Bearer ***' *\" says ask) [y/N]" \
        in done.stderr  # the terminal line: the call and the rule's text, both masked
    log = Path(done.stdout.strip().splitlines()[-1].split()[3])
    assert KEY not in done.stderr and KEY not in done.stdout
    assert KEY not in log.read_text(encoding="utf-8")
    (asked,) = [e for e in assert_valid_log(log) if e.type == "approval/asked"]
    assert asked.reason == "rules.json#1 bash \"curl -sS -H 'Authorization: Bearer ***' *\" says ask"

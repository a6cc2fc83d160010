"""Permission modes from the command line (issue 36 items 4–6), real processes on the embedded
scripted model and the demo workspace: ``run --mode`` (``dont-ask`` for CI), bypass refused unless
armed, ``--approve`` mapped onto the modes, a resumed session keeping its mode, the dry run
``policy check --mode`` and ``show --stats`` counting decisions by mode."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from dsh_notebook.demo import copy_demo_workspace
from tests.realuse.cli import run_cli, session_of

TOUR = "show every kind of call"


def _events(log: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in log.read_text().splitlines()[1:]]


def _decided(log: Path) -> dict[str, dict[str, Any]]:
    """call name (and command) → its approval/decided, in the order the calls ran."""
    events = _events(log)
    names = {e["callId"]: e["name"] + (f" {json.loads(e['arguments']).get('command')}" if e["name"] == "bash" else "")
             for e in events if e["type"] == "tool/call"}
    return {names[e["callId"]]: e for e in events if e["type"] == "approval/decided"}


def test_dont_ask_from_run_denies_what_would_ask_and_runs_the_reads(tmp_path: Path) -> None:
    ws = copy_demo_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    done = run_cli("run", "--model", "script:modes", "--mode", "dont-ask", "--cwd", str(ws), TOUR, home=home)
    assert done.returncode == 0, done.stderr  # the turn completed: nothing waited for a person
    _sid, log = session_of(done.stdout)
    decided = _decided(log)
    assert {k: (v["decision"], v["decider"], v["mode"]) for k, v in decided.items()} == {
        "read": ("allow", "mode", "dont-ask"),
        "bash ls": ("deny", "mode", "dont-ask"),  # default would ask for any bash: dont-ask denies it
        "write": ("deny", "mode", "dont-ask"),
        "bash touch made-by-bash.txt": ("deny", "mode", "dont-ask"),
    }
    assert not any(e["type"] == "approval/asked" for e in _events(log))
    assert not (ws / "MODES.md").exists() and not (ws / "made-by-bash.txt").exists()
    first = _events(log)[0]
    assert (first["type"], first["mode"], first["by"]) == ("mode/changed", "dont-ask", "cli")
    assert "refused without asking" in done.stdout and "mode is dont-ask" in done.stdout


def test_bypass_is_refused_unless_armed_and_then_runs_everything(tmp_path: Path) -> None:
    ws = copy_demo_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    refused = run_cli("run", "--model", "script:modes", "--mode", "bypass", "--cwd", str(ws), TOUR, home=home,
                      extra_env={"DSH_ALLOW_BYPASS": ""})
    assert refused.returncode == 2 and "[BYPASS_NOT_ARMED]" in refused.stderr and "DSH_ALLOW_BYPASS=1" in refused.stderr
    assert not (home / "sessions").exists() or not list((home / "sessions").glob("*.jsonl"))  # nothing was made
    assert not (ws / "MODES.md").exists()
    armed = run_cli("run", "--model", "script:modes", "--mode", "bypass", "--cwd", str(ws), TOUR, home=home,
                    extra_env={"DSH_ALLOW_BYPASS": "1"})
    assert armed.returncode == 0, armed.stderr
    decided = _decided(session_of(armed.stdout)[1])
    assert {(v["decision"], v["decider"], v["mode"]) for v in decided.values()} == {("allow", "mode", "bypass")}
    assert (ws / "MODES.md").is_file() and (ws / "made-by-bash.txt").is_file()
    # a deny rule still holds in bypass
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"tool": "bash", "pattern": "touch *", "action": "deny"}]))
    (ws / "made-by-bash.txt").unlink()
    ruled = run_cli("run", "--model", "script:modes", "--mode", "bypass", "--rules", str(rules), "--cwd", str(ws), TOUR,
                    home=home, extra_env={"DSH_ALLOW_BYPASS": "1"})
    touch = _decided(session_of(ruled.stdout)[1])["bash touch made-by-bash.txt"]
    assert (touch["decision"], touch["decider"], touch["mode"]) == ("deny", "rule", "bypass")
    assert not (ws / "made-by-bash.txt").exists()


def test_approve_maps_onto_the_modes_and_a_resumed_session_keeps_its_mode(tmp_path: Path) -> None:
    ws = copy_demo_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    legacy = run_cli("run", "--model", "script:modes", "--approve", "deny", "--cwd", str(ws), TOUR, home=home)
    assert legacy.returncode == 0, legacy.stderr
    assert {v["mode"] for v in _decided(session_of(legacy.stdout)[1]).values()} == {"dont-ask"}  # deny = dont-ask
    auto = run_cli("run", "--model", "script:modes", "--approve", "auto", "--cwd", str(ws), TOUR, home=home)
    decided = _decided(session_of(auto.stdout)[1])
    assert {(v["decision"], v["mode"]) for v in decided.values()} == {("allow", "auto")}  # the old behaviour, named
    planned = run_cli("run", "--model", "script:modes", "--mode", "plan", "--cwd", str(ws), TOUR, home=home)
    sid, log = session_of(planned.stdout)
    again = run_cli("run", "--session", sid, "--model", "script:modes", TOUR, home=home)
    assert again.returncode == 0, again.stderr
    second = [e for e in _events(log) if e["type"] == "approval/decided"][4:]
    assert len(second) == 4 and {e["mode"] for e in second} == {"plan"}  # the new process kept the mode
    switched = run_cli("run", "--session", sid, "--mode", "accept-edits", "--model", "script:modes", TOUR, home=home)
    assert switched.returncode == 0, switched.stderr
    changes = [(e["previous"], e["mode"], e["by"]) for e in _events(log) if e["type"] == "mode/changed"]
    assert changes == [("default", "plan", "cli"), ("plan", "accept-edits", "cli")]


def test_policy_check_mode_is_a_dry_run_of_a_mode_over_a_saved_session(tmp_path: Path) -> None:
    ws = copy_demo_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    done = run_cli("run", "--model", "script:modes", "--mode", "dont-ask", "--cwd", str(ws), TOUR, home=home)
    sid, log = session_of(done.stdout)
    lines = {m: run_cli("policy", "check", sid, "--mode", m, home=home) for m in ("plan", "accept-edits", "default", "bypass")}
    assert all(p.returncode == 0 for p in lines.values()), {m: p.stderr for m, p in lines.items()}
    verdicts = {m: [line.split()[2] for line in p.stdout.splitlines()] for m, p in lines.items()}
    assert verdicts == {  # read, bash ls, write MODES.md, bash touch
        "plan": ["allow", "allow", "deny", "deny"],
        "accept-edits": ["allow", "allow", "allow", "ask"],
        "default": ["allow", "ask", "ask", "ask"],
        "bypass": ["allow", "allow", "allow", "allow"],
    }
    assert lines["plan"].stdout.splitlines()[2].split() == ["c3", "write", "deny", "mode:plan"]
    rules = tmp_path / "rules.json"
    rules.write_text(json.dumps([{"tool": "bash", "pattern": "touch *", "action": "allow"}]))
    ruled = run_cli("policy", "check", str(log), "--mode", "accept-edits", "--rules", str(rules), home=home)
    assert ruled.stdout.splitlines()[3] == 'c4 bash allow rules.json#1 bash "touch *"'
    assert run_cli("policy", "check", sid, "--mode", "plan", "--rules", str(rules), home=home).stdout.splitlines()[3] \
        == "c4 bash deny mode:plan"  # a plan runs reads only, whatever a rule allows
    bad = run_cli("policy", "check", sid, "--mode", "yolo", home=home)
    assert bad.returncode == 2 and "[BAD_ARGS]" in bad.stderr


def test_show_stats_counts_decisions_by_mode(tmp_path: Path) -> None:
    ws = copy_demo_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    done = run_cli("run", "--model", "script:modes", "--mode", "plan", "--cwd", str(ws), TOUR, home=home)
    sid, _log = session_of(done.stdout)
    run_cli("run", "--session", sid, "--mode", "dont-ask", "--model", "script:modes", TOUR, home=home)
    stats = json.loads(run_cli("show", "--stats", "--json", sid, home=home).stdout)
    by_mode = {d["mode"]: d for d in stats["decisions"]}
    assert set(by_mode) == {"plan", "dont-ask"}
    assert {k: by_mode["plan"][k] for k in ("decisions", "allow", "deny", "asked", "byMode")} == {
        "decisions": 4, "allow": 2, "deny": 2, "asked": 0, "byMode": 4}
    assert {k: by_mode["dont-ask"][k] for k in ("decisions", "allow", "deny")} == {"decisions": 4, "allow": 1, "deny": 3}
    assert [t["mode"] for t in stats["tools"]] == ["plan"] * 4 + ["dont-ask"] * 4
    text = run_cli("show", "--stats", sid, home=home).stdout
    table = text[text.index("decisions by mode"):].splitlines()
    assert table[1].split()[:4] == ["MODE", "DECISIONS", "ALLOW", "DENY"]
    assert table[2].split()[:4] == ["plan", "4", "2", "2"] and table[3].split()[:4] == ["dont-ask", "4", "1", "3"]
    assert "deny by mode (plan)" in text


def test_a_mode_change_is_durable_at_once_and_a_saved_session_reports_its_mode(tmp_path: Path, isolated_dsh_home: Path,
                                                                               monkeypatch: Any) -> None:
    from dsh_notebook.client.dsh_client import DshClient
    from dsh_notebook.config import settings_from_env
    from dsh_notebook.errors import DshError
    from dsh_notebook.launcher import new_host

    monkeypatch.delenv("DSH_ALLOW_BYPASS", raising=False)
    host = new_host(settings_from_env(), name="dsh-test-modes")
    client = DshClient(host)
    try:
        created = client.create_session(cwd=str(tmp_path), model="script:modes")
        assert (created.mode, created.approve) == ("default", "ask")
        done = client.set_mode(created.session_id, "plan")
        assert (done.previous, done.mode) == ("default", "plan") and done.changed_seq == 0
        log = isolated_dsh_home / "sessions" / f"{created.session_id}.jsonl"
        assert '"type":"mode/changed"' in log.read_text()  # on disk while idle: a crash keeps it
        assert client.set_mode(created.session_id, "plan").changed_seq is None  # already: nothing logged
        try:
            client.set_mode(created.session_id, "bypass")
            raise AssertionError("bypass was not refused")
        except DshError as exc:
            assert exc.code == "BYPASS_NOT_ARMED"
        assert client.info(created.session_id).mode == "plan"
    finally:
        client.close()
        host.shutdown()
    host = new_host(settings_from_env(), name="dsh-test-modes-2")
    client = DshClient(host)
    try:
        saved = client.info(created.session_id)  # not live: read from the log
        assert (saved.live, saved.mode, saved.approve) == (False, "plan", "ask")
        assert client.resume(created.session_id).mode == "plan"
    finally:
        client.close()
        host.shutdown()


def test_plan_mode_tells_the_model_and_offers_exit_plan_mode_only_while_planning(tmp_path: Path, isolated_dsh_home: Path) -> None:
    from dsh_notebook.client.dsh_client import DshClient
    from dsh_notebook.config import settings_from_env
    from dsh_notebook.launcher import new_host
    from dsh_notebook.wire.events import ApprovalAsked, RequestHeader, SystemMessageEvent

    ws = copy_demo_workspace(tmp_path / "ws")
    host = new_host(settings_from_env(), name="dsh-test-plan")
    client = DshClient(host)
    try:
        sid = client.create_session(cwd=str(ws), model="script:plan", mode="plan").session_id
        handle = client.follow(sid)
        handle.wait_snapshot()
        rid = client.prompt("make a plan to document src/math.ts", sid).request_id

        def waiting(name: str) -> str:
            found = handle.wait(lambda m: next((a["callId"] for a in m.waiting_approvals() if a["name"] == name), None),
                                timeout=60)
            return str(found)

        client.approve(sid, waiting("exit_plan_mode"), "allow", mode="default")  # continue in default: edits ask now
        for name in ("edit", "write", "bash"):  # default asks for any bash, ls too
            client.approve(sid, waiting(name), "deny")
        outcome = handle.wait_turn_end(rid, timeout=60)
        events = list(handle.model.events)
        handle.close()
    finally:
        client.close()
        host.shutdown()
    assert outcome.completed and "in default mode" in (outcome.final_answer or "")
    headers = [e for e in events if isinstance(e, RequestHeader)]
    offered = [sorted(t.name for t in h.tools) for h in headers]
    assert "exit_plan_mode" in offered[0] and "exit_plan_mode" not in offered[-1] and len(headers) >= 2
    prompts = ["".join(b.text for b in e.message.content) for e in events if isinstance(e, SystemMessageEvent)]
    assert "PLAN MODE" in prompts[0] and "PLAN MODE" not in prompts[-1]
    assert [(a.name, a.mode) for a in events if isinstance(a, ApprovalAsked)] == [
        ("exit_plan_mode", "plan"), ("edit", "default"), ("write", "default"), ("bash", "default")]
    assert not (ws / "NOTES.md").exists()


def test_a_plan_is_answered_on_the_terminal_feedback_then_accept_edits(tmp_path: Path) -> None:
    """``run --mode plan`` at a terminal: the plan line by line, feedback typed, then ``a``."""
    import os
    import pty
    import subprocess
    import sys

    from tests.realuse.cli import REPO

    ws = copy_demo_workspace(tmp_path / "ws")
    home = tmp_path / "home"
    master, slave = pty.openpty()
    try:
        os.write(master, b"say how to run the tests\na\n")  # the answers wait in the terminal's line buffer
        done = subprocess.run(
            [sys.executable, "-m", "dsh_notebook", "run", "--mode", "plan", "--model", "script:plan", "--cwd", str(ws),
             "make a plan to document src/math.ts"], capture_output=True, text=True, stdin=slave, timeout=120,
            env={**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO)}, start_new_session=True, check=False)
    finally:
        os.close(slave)
        os.close(master)
    assert done.returncode == 0, done.stderr
    assert "dsh: the agent's plan:\n## Plan" in done.stderr and "a: approve, continue in accept-edits" in done.stderr
    assert "4. As you asked: say how to run the tests" in done.stderr  # the revised plan, asked again
    assert "in accept-edits mode" in done.stdout and (ws / "NOTES.md").is_file()
    _sid, log = session_of(done.stdout)
    plans = [(e["decision"], e.get("feedback"), e.get("nextMode")) for e in _events(log)
             if e["type"] == "approval/decided" and e["name"] == "exit_plan_mode"]
    assert plans == [("deny", "say how to run the tests", None), ("allow", None, "accept-edits")]

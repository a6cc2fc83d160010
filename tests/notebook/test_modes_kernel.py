"""Permission modes in real kernels (issue 36 item 4, issue 37 item 7): the scripted model's
``modes`` tour — a read, a read-only command, an edit, a command that writes, python, a cell
insert — under every mode, run by nbclient (no stdin: what asks is denied, and says so); bypass
refused in a kernel that is not armed; ``%dsh mode``; and the plan flow answered on the kernel's
stdin (feedback, then approve into accept-edits) through jupyter_client."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from dsh_notebook.demo import copy_demo_workspace
from tests.fixtures.cells import cell_text
from tests.support.kernel_messages import shell_reply

pytestmark = pytest.mark.kernel
TOUR = "--model script:modes show every kind of call"
CALLS = ("read", "bash ls", "write", "bash touch made-by-bash.txt", "python", "notebook_insert")


def run_notebook(cells: list[str], cwd: Path) -> Any:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    NotebookClient(nb, timeout=180, kernel_name="python3", allow_errors=True,
                   resources={"metadata": {"path": str(cwd)}}).execute()
    return nb


def decisions(home: Path, text: str) -> tuple[str, dict[str, tuple[str, str, str]], list[dict[str, Any]]]:
    """The session a cell's output names, and per call (in CALLS' terms) its (decision, decider, mode)."""
    sid = re.findall(r"s_[0-9a-f]{12}", text)[0]
    events = [json.loads(line) for line in (home / "sessions" / f"{sid}.jsonl").read_text().splitlines()[1:]]
    names = {e["callId"]: e["name"] + (f" {json.loads(e['arguments'])['command']}" if e["name"] == "bash" else "")
             for e in events if e["type"] == "tool/call"}
    return sid, {names[e["callId"]]: (e["decision"], e["decider"], e["mode"]) for e in events
                 if e["type"] == "approval/decided"}, events


ASK = ("deny", "user")  # asked on stdin, which nbclient does not have: denied, by the host for the person
EXPECTED: dict[str, dict[str, tuple[str, str]]] = {
    "default": {"read": ("allow", "mode"), "bash ls": ASK, "write": ASK, "bash touch made-by-bash.txt": ASK,
                "python": ASK, "notebook_insert": ASK},
    "accept-edits": {"read": ("allow", "mode"), "bash ls": ("allow", "mode"), "write": ("allow", "mode"),
                     "bash touch made-by-bash.txt": ASK, "python": ASK, "notebook_insert": ASK},
    "plan": {"read": ("allow", "mode"), "bash ls": ("allow", "mode"), **dict.fromkeys(CALLS[2:], ("deny", "mode"))},
    "dont-ask": {"read": ("allow", "mode"), **dict.fromkeys(CALLS[1:], ("deny", "mode"))},
    "bypass": dict.fromkeys(CALLS, ("allow", "mode")),
    # the legacy --approve auto: everything runs, but a cell insert asks a person (issue 37 item 7)
    "auto": {**dict.fromkeys(CALLS[:5], ("allow", "mode")), "notebook_insert": ASK},
}


def test_each_mode_runs_asks_and_refuses_what_it_should_in_a_kernel(kernel_env: dict[str, str], tmp_path: Path,
                                                                    isolated_dsh_home: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DSH_ALLOW_BYPASS", "1")  # this kernel is armed
    spaces = {m: copy_demo_workspace(tmp_path / f"ws-{m}") for m in EXPECTED}
    flag = {m: f"--approve {m}" if m == "auto" else f"--mode {m}" for m in EXPECTED}
    cells = ["%load_ext dsh_notebook", *(f"%dsh --new {flag[m]} --cwd {spaces[m]} {TOUR}" for m in EXPECTED),
             "%dsh mode", "%dsh mode plan", "%dsh mode"]
    nb = run_notebook(cells, tmp_path)
    for k, mode in enumerate(EXPECTED, 1):
        text = cell_text(nb.cells[k])
        _sid, got, events = decisions(isolated_dsh_home, text)
        assert {c: (d, by) for c, (d, by, _m) in got.items()} == EXPECTED[mode], (mode, text)
        assert {m for _d, _b, m in got.values()} == {mode}, mode
        asked = {e["name"] for e in events if e["type"] == "approval/asked"}
        assert ("notebook_insert" in asked) is (mode not in ("bypass", "plan", "dont-ask")), mode
        assert (spaces[mode] / "MODES.md").exists() is (mode in ("accept-edits", "bypass", "auto")), mode
        assert (spaces[mode] / "made-by-bash.txt").exists() is (mode in ("bypass", "auto")), mode
        if ASK in EXPECTED[mode].values():
            assert "no stdin to ask on; denied" in text, mode
    bypass = nb.cells[list(EXPECTED).index("bypass") + 1]
    html = [o["data"]["text/html"] for o in bypass.outputs if "text/html" in o.get("data", {})]
    assert any("dsh-mode-bypass" in h and "#b3261e" in h for h in html)  # red in the cell
    assert "mode bypass" in cell_text(bypass) and "⚠" in cell_text(bypass)
    assert not any("dsh-mode-bypass" in json.dumps(nb.cells[k].outputs) for k in (1, 2, 3, 4, 6))
    # the current session is auto's (the last one made): %dsh mode says so, then changes it
    last = len(EXPECTED) + 1
    assert "is in mode auto" in cell_text(nb.cells[last])
    assert "is now in mode plan (was auto)" in cell_text(nb.cells[last + 1])
    assert "is in mode plan" in cell_text(nb.cells[last + 2])
    sid, _got, events = decisions(isolated_dsh_home, cell_text(nb.cells[len(EXPECTED)]))
    changes = [(e["previous"], e["mode"], e["by"]) for e in events if e["type"] == "mode/changed"]
    assert changes[-1] == ("auto", "plan", "notebook")


def test_a_kernel_that_is_not_armed_refuses_bypass_and_abbreviated_flags(kernel_env: dict[str, str], tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("DSH_ALLOW_BYPASS", raising=False)
    ws = copy_demo_workspace(tmp_path / "ws")
    nb = run_notebook(["%load_ext dsh_notebook", f"%dsh --new --mode bypass --cwd {ws} {TOUR}",
                       f"%dsh --new --mod plan --cwd {ws} {TOUR}", "%dsh mode bypass", "%dsh mode", "%dsh sessions"],
                      tmp_path)
    refused = json.dumps(nb.cells[1].outputs)
    assert "BYPASS_NOT_ARMED" in refused and "DSH_ALLOW_BYPASS=1" in refused
    assert "BAD_FLAG" in json.dumps(nb.cells[2].outputs) and "unknown flag --mod" in json.dumps(nb.cells[2].outputs)
    assert "BYPASS_NOT_ARMED" in json.dumps(nb.cells[3].outputs)  # no session yet: still refused
    assert "no session yet" in cell_text(nb.cells[4])
    assert "s_" not in cell_text(nb.cells[5])  # nothing was created, nothing ran
    assert not (ws / "MODES.md").exists()


def test_plan_feedback_then_approval_on_the_kernels_stdin(kernel: tuple[Any, Any], tmp_path: Path,
                                                         isolated_dsh_home: Path) -> None:
    km, kc = kernel
    ws = copy_demo_workspace(tmp_path / "ws")
    first_line = (ws / "src" / "math.ts").read_text().splitlines()[0]
    content = {"code": f"%dsh --new --mode plan --model script:plan --cwd {ws} make a plan to document src/math.ts",
               "silent": False, "store_history": True, "user_expressions": {}, "allow_stdin": True, "stop_on_error": True}
    msg = kc.session.msg("execute_request", content)
    kc.shell_channel.send(msg)
    asked = kc.get_stdin_msg(timeout=90)["content"]["prompt"]
    assert "the agent's plan" in asked and "Add a header comment" in asked and "a: approve, continue in accept-edits" in asked
    kc.input("also mention the tests in NOTES.md")  # keep planning, with feedback
    again = kc.get_stdin_msg(timeout=90)["content"]["prompt"]
    assert "As you asked: also mention the tests in NOTES.md" in again  # the revised plan carries it
    kc.input("a")  # approve; continue in accept-edits
    reply = shell_reply(kc, msg["header"]["msg_id"], timeout=120)
    assert reply["content"]["status"] == "ok"
    head = (ws / "src" / "math.ts").read_text().splitlines()
    assert head[0] == "// math helpers (edited after the plan)" and head[1] == first_line  # no ask: accept-edits
    assert (ws / "NOTES.md").is_file()
    [log] = (isolated_dsh_home / "sessions").glob("*.jsonl")
    events = [json.loads(line) for line in log.read_text().splitlines()[1:]]
    plans = [e for e in events if e["type"] == "approval/decided" and e["name"] == "exit_plan_mode"]
    assert [(e["decision"], e.get("feedback"), e.get("nextMode")) for e in plans] == [
        ("deny", "also mention the tests in NOTES.md", None), ("allow", None, "accept-edits")]
    changes = [(e.get("previous"), e["mode"], e["by"]) for e in events if e["type"] == "mode/changed"]
    assert changes == [("default", "plan", "notebook"), ("plan", "accept-edits", "plan")]
    after = [e for e in events if e["type"] == "approval/decided" and e["name"] in ("edit", "write", "bash")]
    assert [(e["name"], e["decision"], e["decider"], e["mode"]) for e in after] == [
        ("edit", "allow", "mode", "accept-edits"), ("write", "allow", "mode", "accept-edits"),
        ("bash", "allow", "mode", "accept-edits")]  # `ls`: read-only, it runs in accept-edits
    assert not any(e["type"] == "approval/asked" and e["name"] != "exit_plan_mode" for e in events)

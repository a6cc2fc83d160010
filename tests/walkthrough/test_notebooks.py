"""The walkthrough notebooks (01–04 and 06–08 on the Python kernel, 05 on the agent kernel) execute headless on a real kernel (nbclient) without errors,
are committed without outputs, and show what they teach (checked on their real outputs)."""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest

from dsh_notebook.kernel.walkthrough import execute_notebook, notebooks_in
from dsh_notebook.providers import key_variables

pytestmark = [pytest.mark.kernel, pytest.mark.e2e]  # tier: the walkthroughs executed as a reader runs them

NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
NAMES = [
    "01-tool-feedback-loop.ipynb",
    "02-from-prompt-to-tools.ipynb",
    "03-streaming-and-pairing.ipynb",
    "04-inspect-a-session.ipynb",
    "05-agent-kernel.ipynb",
    "06-debugger.ipynb",
    "07-checkpoints.ipynb",
    "08-external-agents.ipynb",
]
_KEY_VARS = ("DSH_API_KEY", "DSH_MODEL", "DSH_BASE_URL", *key_variables())


@pytest.fixture(scope="module")
def executed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Each notebook executed once (fresh kernel, cwd = notebooks/, an isolated DSH_HOME)."""
    out = tmp_path_factory.mktemp("executed")
    results: dict[str, Any] = {}
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("DSH_HOME", str(tmp_path_factory.mktemp("dsh_home")))
        mp.setenv("JUPYTER_PATH", os.environ.get("JUPYTER_PATH", ""))  # 05 may add a temporary kernelspec
        # the kernels (and 08's Jupyter server) import this checkout's package, not whichever one the
        # environment's editable install points at
        mp.setenv("PYTHONPATH", os.pathsep.join(p for p in (str(NOTEBOOKS.parent), os.environ.get("PYTHONPATH")) if p))
        for name in _KEY_VARS:
            mp.delenv(name, raising=False)
        for name in NAMES:
            try:
                results[name] = nbformat.read(execute_notebook(NOTEBOOKS / name, out, timeout=240), as_version=4)
            except Exception as exc:  # reported by the test of that notebook
                results[name] = exc
    yield results


def run(executed: dict[str, Any], name: str) -> Any:
    nb = executed[name]
    if isinstance(nb, Exception):
        pytest.fail(f"{name} failed to execute: {type(nb).__name__}: {str(nb)[-3000:]}")
    return nb


def text_of(nb: Any) -> str:
    """Every text output of every cell (stdout, text/plain, text/markdown, text/html)."""
    parts: list[str] = []
    for cell in nb.cells:
        for output in cell.get("outputs", ()):
            if output.get("output_type") == "stream":
                parts.append(output.get("text", ""))
            data = output.get("data") or {}
            for mime in ("text/plain", "text/markdown", "text/html"):
                if mime in data:
                    parts.append(data[mime] if isinstance(data[mime], str) else "".join(data[mime]))
    return "\n".join(parts)


def test_the_walkthrough_executor_finds_the_notebooks() -> None:
    assert [p.name for p in notebooks_in(NOTEBOOKS)] == NAMES


@pytest.mark.parametrize("name", NAMES)
def test_committed_without_outputs(name: str) -> None:
    nb = nbformat.read(NOTEBOOKS / name, as_version=4)
    nbformat.validate(nb)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert code and all(not c.outputs and c.execution_count is None for c in code)


@pytest.mark.parametrize("name", NAMES)
def test_executes_without_errors(executed: dict[str, Any], name: str) -> None:
    nb = run(executed, name)
    errors = [o for c in nb.cells for o in c.get("outputs", ()) if o.get("output_type") == "error"]
    assert errors == []
    stderr = [o["text"] for c in nb.cells for o in c.get("outputs", ()) if o.get("name") == "stderr"]
    assert not any("Traceback" in t for t in stderr)
    assert all(c.execution_count is not None for c in nb.cells if c.cell_type == "code")


def test_01_shows_the_six_stages_on_a_real_run(executed: dict[str, Any]) -> None:
    out = text_of(run(executed, NAMES[0]))
    assert "completed · session s_" in out  # the %dsh TurnResult
    assert "call id c1 · tool read" in out
    assert "cites the tool/call: True" in out
    for phase in ("prepare  start", "policy   allow", "execute  done", "result   done"):
        assert phase in out  # stage 03's live frames
    assert "added by the result: [" in out
    assert "the derived history at that moment has the same seqs: True" in out
    assert '"tool_call_id": "c1"' in out and "demo-math" in out
    assert "deepseek:deepseek-chat" not in out or "--base-url" in out  # the real-model section is not executed


def test_02_follows_the_prompt_to_the_tools_and_back(executed: dict[str, Any]) -> None:
    out = text_of(run(executed, NAMES[1]))
    assert "2 of 6 tests failed" in out and "[exit code: 1]" in out  # the real failing run
    assert "all 6 tests passed" in out and "[exit code: 0]" in out  # the real passing run
    assert "the tests pass now" in out  # the final answer
    assert "Receipt(accepted=True" in out and '"rpcId": "rpc_' in out
    assert "verdict: ok" in out and "dispatched to: sessionController.prompt" in out
    assert "UNKNOWN_METHOD" in out and "BAD_ENVELOPE" in out
    assert "agent.followup → next-turn" in out and '"resolver": "live"' in out
    assert "mode 0o600" in out and "pending 0" in out
    assert '"state": "delivered"' in out
    assert "True duplicate · queued: False" in out
    assert "('steering', 'req_steer')" in out and "('queued', 'req_queue')" in out
    assert "req_steer            entered as user/message" in out and "· turn 1 step" in out
    assert "req_queue            entered as user/message" in out and "· turn 2 step 1" in out


def test_03_streaming_errors_interruptions_and_repair(executed: dict[str, Any]) -> None:
    out = text_of(run(executed, NAMES[2]))
    assert "['block-end', 'block-end', 'block-end', 'usage', 'finish']" in out
    assert "joined parts == the text: True" in out
    assert "error=DENIED" in out
    for code in ("OUTSIDE_WORKSPACE", "NO_MATCH", "UNKNOWN_TOOL", "INVALID_JSON"):
        assert f"error={code}" in out
    assert "progress text in the log: False" in out
    assert "error=CANCELLED" in out and "error=ABORTED_BEFORE_DISPATCH" in out and "reason=aborted cause=user" in out
    assert "error=TOOL_OUTCOME_UNKNOWN" in out and "error=TOOL_NOT_STARTED" in out and "reason=interrupted" in out
    assert "s_crashed00001 resumed from its log" in out
    assert "tool: toolCallId=c2 (error) Error: no result" in out  # the synthetic result, side by side
    for kind in ("synthetic-result", "dropped-orphan", "dropped-duplicate", "renamed-duplicate-call", "stripped-leading-orphan"):
        assert f"'kind': '{kind}'" in out
    assert "strict → UNPAIRED_TOOL_CALLS" in out
    assert "the log still holds the orphan c9: True" in out


def test_04_inspects_diffs_and_resumes(executed: dict[str, Any]) -> None:
    out = text_of(run(executed, NAMES[3]))
    assert "exit code: 0" in out and "read-only: True" in out
    assert "c1: assistant/message" in out and "ProvenanceError BAD_PROVENANCE" in out
    # after checkpoint/taken (#3); #12 between the call (#11) and its result is the call's approval/decided
    assert "adds 10 assistant/message, 13 tool/result; drops nothing" in out
    assert "resumed from its log" in out and "reason=resume" in out
    assert "The tests already pass" in out


def test_05_runs_on_the_agent_kernel(executed: dict[str, Any]) -> None:
    nb = run(executed, NAMES[4])
    assert nb.metadata.kernelspec.name == "dsh"
    out = text_of(nb)
    assert "<strong>read</strong> <code>README.md</code>" in out and "demo-math" in out  # a prose cell is a prompt
    assert "from cell [3]" in out and "sent from: cell_id=None execution_count=3" in out
    assert "'the value of x is 42; what can you tell me about it?'" in out  # {x} reached the model
    for tool in ("notebook_read", "inspect_var", "python", "notebook_insert"):
        assert f"--- {tool} " in out
    assert "[namespace] added checked (list[5])" in out
    assert "'namespace': {'added': [{'name': 'checked', 'type': 'list', 'length': 5}]" in out
    assert "'attributes': {'size': 'int'}" in out and "user code ran" not in out
    assert re.search(r"s_\w+ \*\s+read README.md and summarise\s+3\s", out)  # %dsh sessions: the current one, 3 turns
    assert "already live" in out


def test_06_debugs_a_live_run_forks_replays_and_compares(executed: dict[str, Any]) -> None:
    out = text_of(run(executed, NAMES[5]))
    for stage in ("01", "02 · bash c2 · editable: arguments", "03 · bash c2 · editable: arguments",
                  "04 · bash c2 · editable: result", "05", "06 · editable: request"):
        assert f"paused at {stage}" in out  # stepped through the six stages of one call
    assert "2 of 6 tests failed" not in out.split("paused at 04")[0]  # nothing ran before 03
    assert "FAIL subtract(7, 4)" in out  # stage 04 showed the real output
    assert "refused: HostError BAD_EDIT" in out  # a bad edit is checked, not applied
    assert "the model will see the edit: True" in out
    assert "The tests already pass (all 6 tests passed (edited in the debugger))" in out  # the edit changed the answer
    assert re.search(r"debug/edit #\d+: stage 04 · target result · call c2 · by notebook", out)
    assert re.search(r"tool/result #\d+ cites \(\d+, \d+\): the call and the edit", out)
    assert "same first events: True" in out and "then: ['session/forked']" in out
    assert "the replay stopped: " in out and "REPLAY_DIVERGED" in out and "(turn 2 step 2)" in out
    assert "turn 2 step 2: the requests differ at message 9" in out  # compare: where the edit was
    assert '-{"content": [{"text": "all 6 tests passed (edited in the debugger)' in out
    assert "2 of 6 tests failed" in out.split("first divergence:")[-1]  # the fork's real output, in the diff
    assert "no stdin to answer the debugger" not in out  # pauses answered from Python stay answered


def test_07_checkpoints_and_rewind(executed: dict[str, Any]) -> None:
    out = text_of(run(executed, "07-checkpoints.ipynb"))
    assert "checkpoint/taken     snapshot " in out and "checkpoint/changes   +3 ~1 -2" in out
    assert "rename from test/run.mjs" in out and "+// edited by the agent" in out
    assert "modes: ['0o600', '0o700']" in out
    assert "CONFLICT NOTES.md" in out and "NOTES.md kept: my own notes, written by hand" in out
    assert "workspace now: ['NOTES.md', 'README.md', 'package.json', 'src/math.ts', 'test/run.mjs']" in out
    assert "checkpoint/restored to turn 1" in out and "conflicts: ['NOTES.md']" in out
    assert "checked is now: [3.5, 4.25, 5.0]" in out and "variables put back: checked" in out
    assert "checked is back: mine: before the agent's turn" in out
    assert "+3 ~1 -2 files (1 renamed)" in out


def test_a_print_flushed_in_pieces_is_one_output_in_the_executed_copy(tmp_path: Path) -> None:
    """The kernel flushes stdout on a timer, so under load one print() can reach the client as two
    stream messages; the executed copy holds them as one output, as JupyterLab shows them (a flush
    between the pieces forces the split here)."""
    from nbformat.v4 import new_code_cell, new_notebook

    code = ("import sys\nsys.stdout.write('workspace now:'); sys.stdout.flush()\n"
            "sys.stdout.write(' [1, 2]\\n'); sys.stderr.write('apart\\n')\nprint('then', 3)")
    src = tmp_path / "src" / "split.ipynb"
    src.parent.mkdir()
    nbformat.write(new_notebook(cells=[new_code_cell(code)], metadata={
        "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}), src)
    nb = nbformat.read(execute_notebook(src, tmp_path / "out", timeout=120), as_version=4)
    streams = [(o["name"], o["text"]) for o in nb.cells[0].outputs if o["output_type"] == "stream"]
    assert streams == [("stdout", "workspace now: [1, 2]\nthen 3\n"), ("stderr", "apart\n")]


def test_08_an_external_agent_drives_the_notebook_over_mcp(executed: dict[str, Any]) -> None:
    nb = run(executed, "08-external-agents.ipynb")
    out = text_of(nb)
    assert "no token → 403" in out
    assert "analysis.ipynb · kernel python3" in out  # list_notebooks
    assert "── execute_code\nmean 3.875" in out  # ran in the driven notebook's live kernel
    assert "[UNKNOWN_CELL]" in out  # by id only
    assert re.search(r"'mean = sum\(data\) / len\(data\)'\s+← insert_cell by scripted-agent \(call x\w+, session s_\w+\)", out)
    for kind in ("external/call      execute_code by scripted-agent", "checkpoint/taken", "tool/call          the in-kernel agent calls glob"):
        assert kind in out
    widgets = [o for c in nb.cells for o in c.get("outputs", ()) if "application/vnd.jupyter.widget-view+json" in (o.get("data") or {})]
    assert widgets  # the loop widget of the driven notebook's session
    assert "server stopped" in out

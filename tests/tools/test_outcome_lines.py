"""The cell's tool line leads with the outcome — on real tool results, from the real tools run
on a copy of the demo workspace (its test runner fails 2 of 6 tests until src/math.ts is fixed)."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from dsh_notebook.client.summary import Outcome, summarize_result, tool_outcome
from dsh_notebook.notebook.cell.segments import ToolSeg
from dsh_notebook.tools import ToolRuntime
from tests.tools.helpers import call

DEMO = Path(__file__).resolve().parents[2] / "dsh_notebook" / "demo" / "workspace"
MakeRuntime = Callable[..., ToolRuntime]


@pytest.fixture
def demo(ws: Path) -> Path:
    shutil.copytree(DEMO, ws, dirs_exist_ok=True)
    return ws


async def outcome_of(make_runtime: MakeRuntime, name: str, **args: object) -> Outcome:
    out = await make_runtime().run(call(name, dict(args)))
    return tool_outcome(name, out.text, is_error=out.is_error, code=out.code, meta=out.meta)


def cell_line(outcome: Outcome) -> str:
    """The tool line of a %dsh cell, built the way render.tool_segment builds it."""
    seg = ToolSeg("c1", "bash", done=True)
    seg.result, seg.failed = outcome.text, not outcome.ok
    return seg.state_line()


@pytest.mark.integration
@pytest.mark.skipif(shutil.which("node") is None, reason="the demo's tests need node")
async def test_a_failing_test_run_is_a_cross_with_the_exit_code_and_the_verdict(make_runtime: MakeRuntime, demo: Path) -> None:
    failing = await outcome_of(make_runtime, "bash", command="node test/run.mjs")
    assert not failing.ok
    assert cell_line(failing) == "✗ exit 1 · 2 of 6 tests failed (9 lines)"
    (demo / "src" / "math.ts").write_text((demo / "src" / "math.ts").read_text().replace("a - b + 1", "a - b"))
    passing = await outcome_of(make_runtime, "bash", command="node test/run.mjs")
    assert passing.ok and cell_line(passing) == "✓ exit 0 · all 6 tests passed (7 lines)"


@pytest.mark.integration
async def test_a_silent_command_and_a_failing_one(make_runtime: MakeRuntime, demo: Path) -> None:
    quiet = await outcome_of(make_runtime, "bash", command="true")
    assert str(quiet) == "✓ exit 0 · (no output)"
    missing = await outcome_of(make_runtime, "bash", command="ls no-such-file")
    assert not missing.ok and missing.text.startswith("exit 2 · ls: cannot access")


async def test_file_tools_say_what_they_did(make_runtime: MakeRuntime, demo: Path) -> None:
    read = await outcome_of(make_runtime, "read", file_path="src/math.ts")
    assert read.ok and read.text.startswith("src/math.ts: ") and read.text.endswith(" lines")
    part = await outcome_of(make_runtime, "read", file_path="src/math.ts", offset=2, limit=3)
    assert part.text.startswith("src/math.ts: showing lines 2-4 of ")
    grep = await outcome_of(make_runtime, "grep", pattern="export function", path="src")
    assert grep.ok and grep.text.startswith("4 matching lines · src/math.ts:")
    glob = await outcome_of(make_runtime, "glob", pattern="src/*.ts")
    assert glob.ok and glob.text == "1 file · src/math.ts"
    edit = await outcome_of(make_runtime, "edit", file_path="src/math.ts", old_string="a - b + 1", new_string="a - b")
    assert str(edit) == "✓ Edited src/math.ts: replaced 1 occurrence (first at line 8)."
    write = await outcome_of(make_runtime, "write", file_path="notes.txt", content="one\ntwo\n")
    assert str(write) == "✓ Created notes.txt (8 bytes, 2 lines)."


async def test_errors_lead_with_their_code(make_runtime: MakeRuntime, demo: Path) -> None:
    missing = await outcome_of(make_runtime, "read", file_path="nope.ts")
    assert not missing.ok and missing.text.startswith("FILE_NOT_FOUND: ") and "\n" not in missing.text
    bad = await outcome_of(make_runtime, "edit", file_path="src/math.ts", old_string="not there", new_string="x")
    assert not bad.ok and bad.text.split(":")[0].isupper()


def test_message_summaries_keep_the_first_line_and_truncate() -> None:
    assert summarize_result("hello\nworld") == "hello (+1 lines)"
    assert summarize_result("   ") == "(empty)"
    out = summarize_result("x" * 300 + "\nsecond", width=50)
    assert out.startswith("x" * 49 + "…") and out.endswith("(+1 lines)")
    assert summarize_result("FAIL a\n2 of 6 tests failed\n[exit code: 1]") == "exit 1 · 2 of 6 tests failed (2 lines)"

"""The embedded scripted model end to end on a real copy of the demo workspace (seeds 000, 001)."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from dsh_notebook.agent.agent import Agent
from dsh_notebook.demo import WORKSPACE, copy_demo_workspace
from dsh_notebook.errors import UserError
from dsh_notebook.models.routing import resolve_adapter
from dsh_notebook.models.scripted import ScriptedModel, pick_scenario
from dsh_notebook.session.session import Session
from dsh_notebook.tools.registry import ToolRegistry, builtin_tools
from dsh_notebook.wire.events import AssistantMessageEvent, ToolCall, ToolResult, TurnEnd
from dsh_notebook.wire.messages import AssistantMessage, ToolCallBlock, tool_text, user_text

NODE = shutil.which("node")


async def run_demo(workspace: Path, prompt: str, **kw) -> Session:
    session = Session("s_demo", cwd=str(workspace))
    agent = Agent(session, adapter_for=lambda m: ScriptedModel(m.partition(":")[2], pace=0),
                  model="script:auto", tools=ToolRegistry(builtin_tools()), **kw)
    agent.followup(prompt)
    await agent.wait_idle()
    return session


def answers(session: Session) -> list[AssistantMessage]:
    return [e.message for e in session.events if isinstance(e, AssistantMessageEvent)]


def test_copy_demo_workspace_is_fresh_and_complete(tmp_path: Path) -> None:
    a, b = copy_demo_workspace(), copy_demo_workspace(tmp_path / "ws")
    assert a != b and b == (tmp_path / "ws").resolve()
    for rel in ("README.md", "src/math.ts", "test/run.mjs", "package.json"):
        assert (a / rel).read_text() == (WORKSPACE / rel).read_text()
    assert json.loads((a / "package.json").read_text())["scripts"]["test"] == "node test/run.mjs"
    with pytest.raises(UserError):
        copy_demo_workspace(tmp_path / "ws")


async def test_readme_scenario_reads_with_c1_and_summarises_the_real_file() -> None:
    ws = copy_demo_workspace()
    (ws / "README.md").write_text("# Custom Title\n\nThis text was changed by the test.\n\n## Usage\n\nRun it.\n")
    session = await run_demo(ws, "read README.md and summarise")
    first, last = answers(session)
    (call,) = first.tool_calls
    assert (call.id, call.name, json.loads(call.arguments)) == ("c1", "read", {"file_path": "README.md"})
    tool_call = next(e for e in session.events if isinstance(e, ToolCall))
    result = next(e for e in session.events if isinstance(e, ToolResult))
    assert result.source_event_seqs == (tool_call.seq,)
    assert "Custom Title" in last.text and "This text was changed by the test." in last.text
    assert "Usage" in last.text
    assert next(e for e in session.events if isinstance(e, TurnEnd)).reason.kind == "completed"


def node_tests(ws: Path) -> subprocess.CompletedProcess[str]:
    assert NODE is not None
    return subprocess.run([NODE, "test/run.mjs"], cwd=ws, capture_output=True, text=True)


@pytest.mark.skipif(NODE is None, reason="node is not installed")
def test_fix_tests_scenario_really_fixes_the_demo() -> None:
    ws = copy_demo_workspace()
    before = node_tests(ws)
    assert before.returncode == 1 and "src/math.ts:8 expected 3 received 4" in before.stdout
    session = asyncio.run(run_demo(ws, "run the tests; if they fail fix src/math.ts; tell me the result"))
    names = [c.name for m in answers(session) for c in m.tool_calls]
    assert names == ["bash", "read", "edit", "bash"]
    results = [e for e in session.events if isinstance(e, ToolResult)]
    assert "[exit code: 1]" in results[0].message.text and "[exit code: 0]" in results[-1].message.text
    after = node_tests(ws)
    assert after.returncode == 0 and "all 6 tests passed" in after.stdout
    assert "return a - b;" in (ws / "src/math.ts").read_text()
    final = answers(session)[-1].text
    assert "pass" in final and "all 6 tests passed" in final


async def test_fix_tests_reports_a_denied_bash_honestly() -> None:
    ws = copy_demo_workspace()
    session = await run_demo(ws, "run the tests and fix them", policy_mode="deny")
    result = next(e for e in session.events if isinstance(e, ToolResult))
    assert result.error is not None and result.error.code == "DENIED"
    final = answers(session)[-1].text
    assert final.startswith("I couldn't run the tests") and "denied" in final
    assert "return a - b + 1;" in (ws / "src/math.ts").read_text()  # nothing was changed


async def test_help_scenario_is_honest_about_being_offline() -> None:
    session = await run_demo(copy_demo_workspace(), "what is the capital of France?")
    (reply,) = answers(session)
    assert "offline demo model" in reply.text and "DEEPSEEK_API_KEY" in reply.text
    assert "--base-url" in reply.text and reply.tool_calls == ()


def test_auto_picks_by_keywords_in_english_and_chinese() -> None:
    assert pick_scenario("run the tests; if they fail fix src/math.ts") == "fix-tests"
    assert pick_scenario("运行测试并修复") == "fix-tests"
    assert pick_scenario("read README.md and summarise") == "readme"
    assert pick_scenario("请总结一下 README") == "readme"
    assert pick_scenario("hello") == "help"


def test_decides_from_the_history_it_is_given() -> None:
    model = ScriptedModel("fix-tests", pace=0)
    bash = ToolCallBlock(id="c1", name="bash", arguments='{"command": "node test/run.mjs"}')
    history = [
        user_text("run the tests"),
        AssistantMessage(content=(bash,)),
        tool_text("c1", "ok\nall 3 tests passed\n[exit code: 0]"),
    ]
    reply, _ = model.decide(history)
    assert reply.tool is None and "already pass" in reply.text and "all 3 tests passed" in reply.text
    missing = [*history[:2], tool_text("c1", "bash: node: command not found\n[exit code: 127]")]
    reply, _ = model.decide(missing)
    assert "node" in reply.text and "not installed" in reply.text
    # call ids stay unique within a session
    reply, call_id = model.decide([*history, user_text("run the tests again")])
    assert reply.tool == "bash" and call_id == "c2"


def test_routing_builds_the_scripted_model() -> None:
    from dsh_notebook.config import Settings

    adapter = resolve_adapter(Settings(), "script:readme")
    assert isinstance(adapter, ScriptedModel) and adapter.scenario == "readme"
    with pytest.raises(UserError) as e:
        ScriptedModel("nonsense")
    assert e.value.code == "UNKNOWN_SCENARIO"

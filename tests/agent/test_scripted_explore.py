"""Issue 23 item 6: the offline teaching model answers improvised questions about the demo
workspace from real tool results, and reports honest, estimated token usage with a nominal
context window (so the header's tokens, "$0 — offline" and context fill mean something)."""

from __future__ import annotations

import json

import pytest

from dsh_notebook.analysis.stats import session_stats
from dsh_notebook.demo import copy_demo_workspace
from dsh_notebook.models.scripted import ScriptedModel, estimate_usage, pick_scenario
from dsh_notebook.models.scripted_scenarios import help_reply
from dsh_notebook.session.catalog import SCRIPT_CONTEXT_WINDOW, context_window, default_catalog
from dsh_notebook.wire.events import AssistantMessageEvent
from dsh_notebook.wire.messages import user_text

from .test_scripted import answers, run_demo


@pytest.mark.parametrize(("prompt", "tool", "args"), [
    ("which files are there?", "glob", {"pattern": "**/*"}),
    ("what does src/math.ts do?", "read", {"file_path": "src/math.ts"}),
    ("open package.json", "read", {"file_path": "package.json"}),
    ("where is divide used?", "grep", {"pattern": "divide"}),
])
async def test_questions_about_the_workspace_are_answered_from_real_results(prompt: str, tool: str, args: dict[str, str]) -> None:
    assert pick_scenario(prompt) == "explore"
    ws = copy_demo_workspace()
    (ws / "src" / "math.ts").write_text((ws / "src" / "math.ts").read_text() + "\nexport function divide2(a: number): number {\n  return a / 2;\n}\n")
    session = await run_demo(ws, prompt)
    first, last = answers(session)
    (call,) = first.tool_calls
    assert (call.name, json.loads(call.arguments)) == (tool, args)
    text = last.text
    if tool == "glob":
        assert "src/" in text and "math.ts" in text and "run.mjs" in text
    elif args.get("file_path") == "src/math.ts":
        assert "exports 5 functions" in text and "`divide2(a: number)`" in text  # what the file holds now
    elif tool == "read":
        assert "`test` → `node test/run.mjs`" in text
    else:
        assert "divide" in text and "src/math.ts:" in text


def test_other_prompts_still_get_the_help_naming_the_questions_and_the_local_model() -> None:
    assert pick_scenario("what's the weather like?") == "help"
    text = help_reply("what's the weather like?")[0]
    assert "which files are there?" in text and "local:smollm2" in text


def test_usage_is_an_honest_estimate_marked_estimated() -> None:
    model = ScriptedModel("readme", pace=0)
    messages = [user_text("read README.md and summarise")]
    reply, _ = model.decide(messages)
    usage = estimate_usage(messages, reply)
    assert usage.estimated is True
    # about four characters a token, the tool call included in what the model writes
    assert usage.input_tokens == (len("read README.md and summarise") + 4) // 4 + 1
    assert usage.output_tokens == (len(reply.text) + len("read") + len(json.dumps({"file_path": "README.md"}))) // 4 + 1


async def test_a_scripted_run_has_tokens_zero_cost_and_a_context_fill() -> None:
    session = await run_demo(copy_demo_workspace(), "read README.md and summarise")
    assert all(e.usage is not None and e.usage.estimated for e in session.events if isinstance(e, AssistantMessageEvent))
    assert context_window("script", "auto") == SCRIPT_CONTEXT_WINDOW == default_catalog().context_window("script", "readme")
    stats = session_stats(session.events)
    assert stats.totals.input_tokens > 0 and stats.totals.cost_usd == 0.0
    assert all(r.context_window == SCRIPT_CONTEXT_WINDOW and r.context_used for r in stats.requests)

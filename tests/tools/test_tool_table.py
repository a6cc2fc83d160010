"""The tool table's conformance test (issue 40 item 2): every built-in tool, ``exit_plan_mode``, the
notebook's tools (bound on IPython's real shell) and a real MCP server's tools pass the same checks —
a valid JSON Schema the strict loopback server accepts, a unique name in the wire's pattern, a
declared effect (from which ``read_only`` follows), a rule subject that names the right thing, a
coded error for bad arguments (never an exception), a result for every call, and effects that
agree with the read-only flag (a read-only tool leaves the workspace as it was).

**A new tool needs its test row here** (:data:`ROWS`: a valid call, its rule subject, arguments its
model refuses, whether the call changes the workspace); :func:`test_every_tool_has_a_test_row`
fails until it has one.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from jsonschema import Draft202012Validator

from dsh_notebook.context import HarnessContext
from dsh_notebook.models.openai_compat import OpenAICompatAdapter
from dsh_notebook.notebook.context.cells import CellLog
from dsh_notebook.notebook.context.mainthread import MainThreadRunner
from dsh_notebook.notebook.context.notebook_tools import make_notebook_tools
from dsh_notebook.notebook.context.python_tool import make_python_tool
from dsh_notebook.session import Session
from dsh_notebook.tools import AutoApprover, ToolRegistry, ToolRuntime
from dsh_notebook.tools.base import Tool, ToolSpec
from dsh_notebook.tools.kernel_tools import KERNEL_TOOLS
from dsh_notebook.tools.mcp.manager import McpManager
from dsh_notebook.tools.modes import SessionMode, bash_is_read_only
from dsh_notebook.tools.outcome import ToolOutcome
from dsh_notebook.tools.plan import EXIT_PLAN_MODE
from dsh_notebook.tools.policy_check import check_calls, check_mode_calls
from dsh_notebook.tools.registry import builtin_tools, is_read_only, known_tools, reads_phrase
from dsh_notebook.tools.rules import Rule, RuleSet, call_subject
from dsh_notebook.wire.events import ToolCall
from dsh_notebook.wire.messages import ToolCallBlock, user_text
from tests.mcptools.support import sdk_stdio, write_config
from tests.models.streams import collect, request
from tests.support.fake_openai import FakeOpenAIServer, text_reply

WIRE_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")  # the name pattern OpenAI-compatible servers enforce


@dataclass(frozen=True)
class Row:
    """A tool's test row: a valid call, its rule subject (``None``: the raw arguments), arguments
    its model refuses, and whether the sample call changes the workspace."""

    sample: dict[str, Any]
    subject: str | None
    bad: dict[str, Any]
    changes: bool = False


ROWS: dict[str, Row] = {
    "read": Row({"file_path": "notes.txt"}, "notes.txt", {"file_path": 7}),
    "write": Row({"file_path": "new.txt", "content": "new\n"}, "new.txt", {"file_path": "new.txt"}, changes=True),
    "edit": Row({"file_path": "notes.txt", "old_string": "alpha", "new_string": "beta"}, "notes.txt",
                {"file_path": "notes.txt", "old_string": "alpha"}, changes=True),
    "bash": Row({"command": "ls -la"}, "ls -la", {"command": ["ls"]}),
    "grep": Row({"pattern": "alpha", "path": "src"}, "src", {"pattern": 1}),
    "glob": Row({"pattern": "**/*.txt"}, "**/*.txt", {}),
    "exit_plan_mode": Row({"plan": "1. read notes.txt\n2. edit it"}, None, {"plan": ""}),
    "notebook_read": Row({"last": 2}, None, {"last": "many"}),
    "inspect_var": Row({"name": "answer"}, None, {}),
    "notebook_insert": Row({"code": "print(answer)", "markdown": "the answer"}, None, {"markdown": "no code"}),
    "python": Row({"code": "answer + 1"}, "answer + 1", {"code": 3}),
}
# a real MCP server's tools (tests/mcptools/sdk_server.py, prefixed by the server's name): a trusted
# read-only hint is a read, anything else executes
MCP_ROWS: dict[str, Row] = {
    "sdk__peek": Row({"key": "greeting"}, None, {"key": 5}),
    "sdk__echo": Row({"text": "hi"}, None, {}),
}


def kernel_bound() -> list[Tool]:
    """The notebook's tools bound to IPython's real shell (``python`` in its namespace)."""
    from IPython.testing.globalipapp import get_ipython

    shell = get_ipython()
    shell.user_ns["answer"] = 41
    return [*make_notebook_tools(shell, CellLog(shell), None), make_python_tool(lambda: shell.user_ns)]


def every_tool() -> list[Tool]:
    return [*builtin_tools(), EXIT_PLAN_MODE, *kernel_bound()]


def tool_params() -> list[Any]:
    return [pytest.param(t, id=t.name) for t in every_tool()]


# --- the declarations --------------------------------------------------------------------------


def test_every_tool_has_a_test_row() -> None:
    names = [t.name for t in every_tool()]
    assert len(set(names)) == len(names), f"two tools share a name: {names}"
    assert set(names) == set(ROWS), (f"tools without a test row in ROWS: {sorted(set(names) - set(ROWS))}; "
                                     f"test rows without a tool: {sorted(set(ROWS) - set(names))}")
    assert set(known_tools()) | {EXIT_PLAN_MODE.name} == set(names), "known_tools() is every tool but exit_plan_mode"
    ToolRegistry(every_tool())  # the registry's own name rules


@pytest.mark.parametrize("tool", tool_params())
def test_every_tool_declares_its_schema_name_effect_and_subject(tool: Tool) -> None:
    assert WIRE_NAME.match(tool.name), f"{tool.name!r} does not match {WIRE_NAME.pattern}"
    schema = tool.schema()
    Draft202012Validator.check_schema(schema.parameters)
    assert schema.parameters.get("type") == "object" and schema.description.strip()
    row = ROWS[tool.name]
    assert Draft202012Validator(schema.parameters).is_valid(row.sample), "the sample call fits the schema"
    assert tool.effect is not None, "a declared effect (read, edit, bash, execute, notebook, plan)"
    assert tool.read_only == (tool.effect == "read")
    assert tool.subject is not None, "a declared rule subject (argument(...) or whole_arguments)"
    raw = json.dumps(row.sample)
    expected = row.subject if row.subject is not None else raw
    assert tool.rule_subject(raw) == expected
    if tool.name in known_tools():  # a saved log's call is judged by the same declaration
        assert call_subject(tool.name, raw) == expected
    rules = RuleSet([Rule(tool=tool.name, pattern=expected, action="deny")])
    assert rules.match(tool.name, call_subject(tool.name, raw, tool)) is not None, "a rule on the subject matches"
    assert tool.rule_subject("{not json") == "{not json"


def test_the_notebook_tools_are_bound_to_their_declarations() -> None:
    bound = {t.name: t for t in kernel_bound()}
    for spec in KERNEL_TOOLS:
        tool = bound[spec.name]
        fields = ("name", "description", "args_model", "effect", "subject", "approval", "concurrency_safe", "timeout_s")
        assert [getattr(tool, f) for f in fields] == [getattr(spec, f) for f in fields], spec.name


def test_what_reads_is_the_tools_flag_not_a_list() -> None:
    tools = every_tool()
    reads = [t.name for t in tools if t.read_only]
    assert {"read", "grep", "glob", "notebook_read", "inspect_var"} <= set(reads)
    assert reads_phrase() == ", ".join(reads) + " and read-only bash"  # plan mode's prompt and refusals
    assert all(is_read_only(t.name) == t.read_only for t in tools if t.name in known_tools())
    assert not is_read_only("sdk__peek") and not is_read_only("nope"), "a tool not known here may change anything"


def test_policy_check_judges_a_notebook_sessions_calls_by_the_tools_declarations(tmp_path: Path) -> None:
    calls = [ToolCall(seq=n, time=n, turn=1, step=1, call_id=f"c{n}", name=name, arguments=json.dumps(args))
             for n, (name, args) in enumerate([("python", {"code": "import os; os.remove('x')"}),
                                               ("notebook_read", {"last": 2}), ("inspect_var", {"name": "df"}),
                                               ("notebook_insert", {"code": "df.plot()"}), ("sdk__echo", {"text": "hi"})],
                                              1)]
    rules = RuleSet([Rule(tool="python", pattern="*os.remove*", action="deny")], "rules.json")
    assert [v.line() for v in check_calls(calls, rules)] == [
        'c1 python deny rules.json#1 python "*os.remove*"',  # the code is python's subject
        "c2 notebook_read allow default", "c3 inspect_var allow default",  # their own approval: allow
        "c4 notebook_insert ask default", "c5 sdk__echo ask default",
    ]
    planned = [(v.name, v.action) for v in check_mode_calls(calls, None, "plan", str(tmp_path))]
    assert planned == [("python", "deny"), ("notebook_read", "allow"), ("inspect_var", "allow"),
                       ("notebook_insert", "deny"), ("sdk__echo", "deny")]


async def test_every_schema_is_accepted_by_the_strict_server() -> None:
    tools = tuple(t.schema() for t in every_tool())
    with FakeOpenAIServer() as server:
        adapter = OpenAICompatAdapter("openai", server.base_url, server.api_key or "", timeout=10)
        try:
            server.enqueue(text_reply("ok"))
            await collect(adapter, request([user_text("hi")], tools=tools))
        finally:
            await adapter.aclose()
    (sent,) = server.requests
    assert sent.status == 200, sent.error
    assert sorted(t["function"]["name"] for t in sent.body["tools"]) == sorted(t.name for t in tools)


# --- calls through the runtime -------------------------------------------------------------------


def snapshot(root: Path) -> dict[str, tuple[str, int]]:
    """Every path under ``root`` with its content digest and mode (what a call could change)."""
    out: dict[str, tuple[str, int]] = {}
    for path in sorted(root.rglob("*")):
        st = path.lstat()
        digest = hashlib.sha256(path.read_bytes()).hexdigest() if path.is_file() and not path.is_symlink() else ""
        out[path.relative_to(root).as_posix()] = (digest, st.st_mode)
    return out


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "notes.txt").write_text("alpha\nbravo\n")
    (root / "src" / "a.txt").write_text("alpha in src\n")
    return root


def runtime(tools: list[Any], workspace: Path, *, mode: str = "auto") -> ToolRuntime:
    session = Session("s_table", cwd=str(workspace))
    return ToolRuntime(ToolRegistry(tools), workspace=workspace, session=session, approver=AutoApprover(),
                       modes=SessionMode(session, mode), main_thread=MainThreadRunner())  # type: ignore[arg-type]


async def run(rt: ToolRuntime, name: str, arguments: str, call_id: str = "c1") -> ToolOutcome:
    """One call through prepare and dispatch, as the scheduler runs it (a raise fails the test)."""
    call = ToolCallBlock(id=call_id, name=name, arguments=arguments)
    return await rt.dispatch(await rt.prepare(call))


async def conforms(tool: Tool, row: Row, workspace: Path) -> None:
    """The run-time half of the conformance: bad arguments, a result, effects."""
    rt = runtime([tool], workspace, mode="plan" if tool.effect == "plan" else "auto")
    for arguments, code in (("{not json", "INVALID_JSON"), ("[1, 2]", "INVALID_ARGS"),
                            (json.dumps(row.bad), "INVALID_ARGS")):
        outcome = await run(rt, tool.name, arguments)
        assert outcome.is_error and outcome.code == code, (arguments, outcome.text)
        assert outcome.message.tool_call_id == "c1" and outcome.text.startswith("Error: ")
    before = snapshot(workspace)
    outcome = await run(rt, tool.name, json.dumps(row.sample), "c2")
    assert outcome.message.tool_call_id == "c2" and outcome.text.strip(), "a result, always"
    assert not outcome.is_error, outcome.text
    changed = snapshot(workspace) != before
    assert changed == row.changes, f"{tool.name} {'changed' if changed else 'left'} the workspace"
    if tool.read_only:
        assert not changed, "a read-only tool left the workspace changed"
    if tool.effect == "bash":  # read-only per line: the sample is a read-only line, and it read only
        assert bash_is_read_only(row.sample["command"]) and not changed


@pytest.mark.integration  # bash starts a process
@pytest.mark.parametrize("tool", tool_params())
async def test_every_tool_answers_bad_arguments_with_a_code_and_every_call_with_a_result(
        tool: Tool, workspace: Path) -> None:
    await conforms(tool, ROWS[tool.name], workspace)


def test_a_spec_is_not_runnable_until_bound() -> None:
    spec = KERNEL_TOOLS[0]
    assert isinstance(spec, ToolSpec) and not isinstance(spec, Tool) and not hasattr(spec, "execute")


# --- a real MCP server's tools -------------------------------------------------------------------


@pytest.fixture
async def mcp_tools(tmp_path: Path) -> AsyncIterator[list[Tool]]:
    from dsh_notebook.config import Settings

    home = tmp_path / "home"
    write_config(home, {"sdk": {**sdk_stdio(), "trustReadOnly": True}})
    context = HarnessContext()
    manager = McpManager(Settings(home=home), context)
    try:
        await manager.start_all()
        tools = [t for t in context.scope().tools() if t.name in MCP_ROWS]
        yield tools
    finally:
        await manager.aclose()


@pytest.mark.integration  # an MCP server process
async def test_a_real_mcp_servers_tools_conform(mcp_tools: list[Tool], workspace: Path) -> None:
    assert sorted(t.name for t in mcp_tools) == sorted(MCP_ROWS)
    by_name = {t.name: t for t in mcp_tools}
    assert by_name["sdk__peek"].read_only and by_name["sdk__peek"].effect == "read"  # a trusted readOnlyHint
    assert not by_name["sdk__echo"].read_only and by_name["sdk__echo"].effect == "execute"
    for tool in mcp_tools:
        row = MCP_ROWS[tool.name]
        assert WIRE_NAME.match(tool.name) and tool.effect is not None
        Draft202012Validator.check_schema(tool.schema().parameters)
        raw = json.dumps(row.sample)
        assert tool.rule_subject(raw) == raw and call_subject(tool.name, raw, tool) == raw
        await conforms(tool, row, workspace)

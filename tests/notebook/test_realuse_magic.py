"""Issue 13 in the notebook: ``%dsh`` with turn budgets, ``a`` (allow for the session) at the
stdin prompt, a policy callable, ``%dsh compact`` / ``%dsh policy``, and a model name with a
colon — an ``InteractiveShell`` against the loopback OpenAI-compatible server."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import dsh_notebook
from dsh_notebook.notebook.magic.magics import DshMagicError
from dsh_notebook.wire.events import ApprovalDecided, ContextCompacted, ToolResult
from tests.support.fake_openai import FakeOpenAIServer, text_reply, tool_call_reply
from tests.support.log_checks import assert_valid_log

from .conftest import answer_stdin, fake_flags, magics_of, settled_log


def _bash(cid: str, command: str) -> Any:
    return tool_call_reply([(cid, "bash", json.dumps({"command": command}))])


def test_max_steps_on_the_magic_ends_the_turn_with_reason_budget(shell: Any, fake_server: FakeOpenAIServer,
                                                                  tmp_path: Path) -> None:
    # a new pattern each step: the same call answered the same way a third time would end it ``stuck``
    fake_server.enqueue(*[tool_call_reply([(f"c{k}", "glob", f'{{"pattern": "*{k}"}}')]) for k in range(10)])
    result = shell.run_cell(f"%dsh --cwd {tmp_path} {fake_flags(fake_server)} --max-steps 3 look around").result
    assert result.reason.kind == "budget" and result.reason.cause == "max-steps" and result.reason.limit == 3
    assert len(fake_server.requests) == 3 and len(result.tool_calls) == 3
    fake_server.enqueue(text_reply("done now"))
    again = shell.run_cell("%dsh --max-steps 0 go on").result  # 0: no limit, the same session
    assert again.ok and again.text == "done now" and again.session_id == result.session_id
    info = magics_of(shell).link.info(result.session_id)
    assert info.max_steps is None
    assert shell.run_cell("%dsh config").result.items["turn budget"].startswith("no step limit · no time limit")
    assert_valid_log(settled_log(shell, result.session_id))


@pytest.mark.integration
def test_a_allows_the_command_prefix_for_the_rest_of_the_session(shell: Any, fake_server: FakeOpenAIServer,
                                                                 tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_server.enqueue(_bash("c1", "echo one"), _bash("c2", "echo two three"), _bash("c3", "touch nope"),
                        text_reply("finished"))
    asked = answer_stdin(monkeypatch, "a", "n")
    result = shell.run_cell(f"%dsh --cwd {tmp_path} {fake_flags(fake_server, 'ask')} echo things").result
    assert result.ok and result.text == "finished"
    assert len(asked) == 2 and 'a: bash "echo *" for this session' in asked[0] and "touch nope" in asked[1]
    decided = {e.call_id: e for e in result.events if isinstance(e, ApprovalDecided)}
    assert decided["c1"].grant is not None and decided["c1"].grant.pattern == "echo *"
    assert decided["c1"].by == "host:notebook" and decided["c1"].rule == 'session bash "echo *"'
    assert (decided["c2"].decision, decided["c2"].by, decided["c2"].rule) == ("allow", "session", 'session bash "echo *"')
    assert decided["c3"].decision == "deny" and decided["c3"].grant is None
    assert not (tmp_path / "nope").exists()
    results = {e.message.tool_call_id: e.message.text for e in result.events if isinstance(e, ToolResult)}
    assert "two three" in results["c2"]
    assert shell.run_cell("%dsh policy").result.items["granted for the session"] == 'bash "echo *"'


@pytest.mark.integration
def test_a_policy_callable_registered_from_the_notebook_decides_and_is_logged(shell: Any, fake_server: FakeOpenAIServer,
                                                                             tmp_path: Path) -> None:
    def no_touching(call: Any) -> str | None:
        return "deny" if call.tool == "bash" and call.subject.startswith("touch") else None

    dsh_notebook.policy(no_touching)
    try:
        fake_server.enqueue(_bash("c1", "touch denied"), _bash("c2", "echo fine"), text_reply("ok"))
        result = shell.run_cell(f"%dsh --cwd {tmp_path} {fake_flags(fake_server, 'auto')} try").result
        listed = shell.run_cell("%dsh policy").result.items["policy callables"]
    finally:
        assert dsh_notebook.unpolicy(no_touching)
    decided = {e.call_id: e for e in result.events if isinstance(e, ApprovalDecided)}
    assert (decided["c1"].decision, decided["c1"].by) == ("deny", "policy")
    assert decided["c1"].rule is not None and decided["c1"].rule.endswith("no_touching")
    # no opinion: the session's mode (auto, the legacy --approve auto) decided, and the log says so
    assert (decided["c2"].decision, decided["c2"].by, decided["c2"].decider, decided["c2"].mode) == (
        "allow", "mode", "mode", "auto")
    assert (decided["c1"].decider, decided["c1"].mode) == ("rule", "auto")
    assert not (tmp_path / "denied").exists() and "no_touching" in listed


def test_percent_dsh_compact_summarises_the_older_turns(shell: Any, fake_server: FakeOpenAIServer, tmp_path: Path,
                                                         capsys: pytest.CaptureFixture[str]) -> None:
    fake_server.enqueue(text_reply("first answer"), text_reply("second answer"),
                        text_reply("The user asked two questions."), text_reply("third answer"))
    first = shell.run_cell(f"%dsh --cwd {tmp_path} {fake_flags(fake_server)} question one").result
    shell.run_cell("%dsh question two")
    assert shell.run_cell("%dsh compact").error_in_exec is None
    assert "compacted" in capsys.readouterr().out
    third = shell.run_cell("%dsh question three").result
    assert third.ok and third.text == "third answer"
    contents = [m.get("content") for m in fake_server.requests[-1].messages]
    assert not any(c == "question one" for c in contents)  # turn 1 is summarised
    assert "question two" in contents and any("The user asked two questions." in (c or "") for c in contents)
    events = assert_valid_log(settled_log(shell, first.session_id))
    assert [e.trigger for e in events if isinstance(e, ContextCompacted)] == ["manual"]


def test_a_model_name_with_a_colon_reaches_the_server_intact(shell: Any, tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeOpenAIServer(models=("qwen2.5:7b",)) as server:
        assert server.api_key is not None
        monkeypatch.setenv("DSH_API_KEY", server.api_key)
        server.enqueue(text_reply("hello from qwen"))
        result = shell.run_cell(f"%dsh --new --cwd {tmp_path} --base-url {server.base_url} --model qwen2.5:7b hi").result
        assert result.ok and result.text == "hello from qwen"
        assert [r.body["model"] for r in server.requests] == ["qwen2.5:7b"]
    bad = shell.run_cell("%dsh --max-steps lots hi").error_in_exec
    assert isinstance(bad, DshMagicError) and bad.error.code == "BAD_CONFIG"

"""Context compaction (issue 13 item 2) end to end: the CLI in a subprocess against a loopback
server that refuses requests longer than a limit with ``context_length_exceeded``."""

from __future__ import annotations

import json
from pathlib import Path

from dsh_notebook.agent.compaction import PLUGIN, SUMMARY_SYSTEM
from dsh_notebook.wire.events import ContextCompacted, TurnEnd, UserMessageEvent
from tests.realuse.cli import run_cli, session_of
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply, tool_call_reply
from tests.support.log_checks import assert_valid_log
from tests.support.openai_validator import validate_chat_request

LIMIT = 12000
NOTES = "\n".join(f"note {i}: the quick brown fox jumps over the lazy dog" for i in range(140))  # ~7.5k chars
PASTED = "pasted log line — disk usage nominal\n" * 100  # ~3.7k chars


def _size(request: object) -> int:
    return len(json.dumps(request.messages, ensure_ascii=False))  # type: ignore[attr-defined]


def test_a_context_length_error_compacts_the_older_turns_and_the_retried_request_completes(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text(NOTES)
    home = tmp_path / "home"
    with FakeOpenAIServer(max_request_chars=LIMIT) as server:
        server.enqueue(
            tool_call_reply([("call_1", "read", json.dumps({"file_path": "notes.txt"}))]),
            text_reply("The notes repeat one sentence 140 times."),
        )
        first = run_cli("run", "--model", "fake-model", "--base-url", server.base_url, "--cwd", str(tmp_path),
                        "read notes.txt", home=home)
        assert first.returncode == 0, first.stderr
        sid, log = session_of(first.stdout)
        server.enqueue(text_reply("Summary: the user had notes.txt read; it repeats one sentence."),
                       text_reply("The pasted log says disk usage is nominal."))
        second = run_cli("run", "--session", sid, f"what does this log say?\n{PASTED}", home=home)
        requests = list(server.requests)
    assert second.returncode == 0, second.stderr
    assert second.stdout.startswith("The pasted log says disk usage is nominal.")
    assert "context compacted (context-length)" in second.stderr
    refused, summary, retried = requests[2:]
    assert refused.status == 400 and "maximum context length" in (refused.error or "")
    assert _size(refused) > LIMIT
    # the summarisation request: the session's model, no tools, the old turn as a transcript
    assert summary.status == 200 and "tools" not in summary.body
    assert summary.messages[0] == {"role": "system", "content": SUMMARY_SYSTEM}
    assert "called read call_1" in summary.messages[1]["content"] and "note 0:" in summary.messages[1]["content"]
    # the retried request: valid, shorter, the summary instead of the old turn, the new prompt kept
    assert retried.status == 200 and _size(retried) < LIMIT < _size(refused)
    validate_chat_request(retried.messages)
    contents = [m.get("content") or "" for m in retried.messages]
    assert not any("note 139:" in c for c in contents)
    assert any("Summary: the user had notes.txt read" in c for c in contents)
    assert any(PASTED.strip() in c for c in contents[-2:])  # the new prompt (then a context snapshot)
    events = assert_valid_log(log)
    [compacted] = [e for e in events if isinstance(e, ContextCompacted)]
    assert compacted.trigger == "context-length" and compacted.tokens_after < compacted.tokens_before
    summary_event = events[compacted.summary_seq]
    assert isinstance(summary_event, UserMessageEvent) and summary_event.message.source.plugin == PLUGIN
    assert summary_event.surface_op is not None
    assert summary_event.surface_op.start_seq == compacted.start_seq and summary_event.surface_op.end_seq == compacted.end_seq
    replaced = set(summary_event.source_event_seqs or ())
    assert len(replaced) == compacted.replaced and all(s < compacted.summary_seq for s in replaced)
    assert [e.reason.kind for e in events if isinstance(e, TurnEnd)] == ["completed", "completed"]
    shown = run_cli("show", str(log), home=home)
    assert shown.returncode == 0 and "context/compacted" in shown.stdout and "context-length" in shown.stdout


def test_a_compacted_session_resumes_and_its_next_request_carries_the_summary(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text(NOTES)
    home = tmp_path / "home"
    with FakeOpenAIServer(max_request_chars=LIMIT) as server:
        server.enqueue(tool_call_reply([("call_1", "read", json.dumps({"file_path": "notes.txt"}))]),
                       text_reply("Read it."), text_reply("Summary: notes.txt was read."), text_reply("Nominal."))
        first = run_cli("run", "--model", "fake-model", "--base-url", server.base_url, "--cwd", str(tmp_path),
                        "read notes.txt", home=home)
        sid, log = session_of(first.stdout)
        second = run_cli("run", "--session", sid, f"summarise\n{PASTED}", home=home)
        assert second.returncode == 0, second.stderr
        server.enqueue(text_reply("You asked about notes.txt and a log."))
        third = run_cli("run", "--session", sid, "what did I ask so far?", home=home)
        last = server.requests[-1]
    assert third.returncode == 0, third.stderr
    assert last.status == 200
    validate_chat_request(last.messages)
    contents = [m.get("content") or "" for m in last.messages]
    assert any("Summary: notes.txt was read." in c for c in contents)
    assert not any("note 139:" in c for c in contents)  # the replaced turn stays replaced
    assert "what did I ask so far?" in contents[-2:]
    messages = json.loads(run_cli("show", "--messages", str(log), home=home).stdout)
    validate_chat_request(messages)
    assert_valid_log(log)


def test_above_the_threshold_of_the_window_the_next_request_is_compacted_before_it_is_sent(tmp_path: Path) -> None:
    """DSH_CONTEXT_WINDOW sets the window: the estimate of turn 2's request passes 0.8 of it, so
    turn 1 is summarised first (trigger threshold) — and nothing is refused by the server."""
    (tmp_path / "notes.txt").write_text(NOTES)
    home = tmp_path / "home"
    env = {"DSH_CONTEXT_WINDOW": "3000"}
    with FakeOpenAIServer() as server:
        server.enqueue(tool_call_reply([("call_1", "read", json.dumps({"file_path": "notes.txt"}))]),
                       text_reply("Read it."), text_reply("Summary: notes.txt was read."), text_reply("Fine."))
        first = run_cli("run", "--model", "fake-model", "--base-url", server.base_url, "--cwd", str(tmp_path),
                        "read notes.txt", home=home, extra_env=env)
        assert first.returncode == 0, first.stderr
        sid, log = session_of(first.stdout)
        second = run_cli("run", "--session", sid, "and now?", home=home, extra_env=env)
        requests = list(server.requests)
    assert second.returncode == 0, second.stderr
    assert len(requests) == 4 and all(r.status == 200 for r in requests)
    assert requests[2].messages[0]["content"] == SUMMARY_SYSTEM  # the summary came before turn 2's request
    contents = [m.get("content") or "" for m in requests[3].messages]
    assert any("Summary: notes.txt was read." in c for c in contents) and not any("note 139:" in c for c in contents)
    [compacted] = [e for e in assert_valid_log(log) if isinstance(e, ContextCompacted)]
    assert compacted.trigger == "threshold" and compacted.context_window == 3000
    assert compacted.tokens_before > 0.8 * 3000 > compacted.tokens_after


def test_the_compact_command_summarises_a_saved_session_once(tmp_path: Path) -> None:
    home = tmp_path / "home"
    with FakeOpenAIServer() as server:
        server.enqueue(text_reply("one"), text_reply("two"), text_reply("Summary: the user said one thing."))
        first = run_cli("run", "--model", "fake-model", "--base-url", server.base_url, "--cwd", str(tmp_path),
                        "first question", home=home)
        sid, log = session_of(first.stdout)
        assert run_cli("run", "--session", sid, "second question", home=home).returncode == 0
        done = run_cli("compact", sid, home=home)
        again = run_cli("compact", sid, home=home)
        requests = list(server.requests)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("compacted ") and f"session: {sid} " in done.stdout
    assert again.returncode == 0 and again.stdout.startswith("nothing to compact")
    assert len(requests) == 3 and requests[2].messages[0]["content"] == SUMMARY_SYSTEM
    events = assert_valid_log(log)
    [compacted] = [e for e in events if isinstance(e, ContextCompacted)]
    assert compacted.trigger == "manual" and compacted.turn is None
    messages = json.loads(run_cli("show", "--messages", str(log), home=home).stdout)
    contents = [m["content"] for m in messages]
    assert "first question" not in contents and "second question" in contents  # the last turn is kept
    assert any("Summary: the user said one thing." in c for c in contents)


def test_compact_keeps_the_last_turn_whole_so_a_one_turn_session_has_nothing_to_compact(tmp_path: Path) -> None:
    """``compact`` summarises every turn but the last, as the README says: a session of one turn
    (here one with a tool call, so there is an exchange inside it to cut at) is left as it is, and
    no summary is asked of the model."""
    home = tmp_path / "home"
    (tmp_path / "notes.txt").write_text("notes\n")
    with FakeOpenAIServer() as server:
        server.enqueue(tool_call_reply([("c1", "read", '{"file_path": "notes.txt"}')]), text_reply("read it"),
                       text_reply("Summary: never asked for."))
        first = run_cli("run", "--model", "fake-model", "--base-url", server.base_url, "--cwd", str(tmp_path),
                        "--approve", "auto", "read notes.txt", home=home)
        sid, log = session_of(first.stdout)
        done = run_cli("compact", sid, home=home)
        requests = list(server.requests)
    assert done.returncode == 0 and done.stdout.startswith("nothing to compact"), done.stdout + done.stderr
    assert len(requests) == 2  # no summarisation request
    assert not [e for e in assert_valid_log(log) if isinstance(e, ContextCompacted)]

"""The debugger, fork and compare of the notebook used the way a careless (or hostile) learner
would, in a real kernel (jupyter_client, stdin answered like a front end, the kernel's interrupt):
each ends in one coded line — no traceback — with the kernel alive, the session log valid and
complete, no model request the learner did not mean, and no process left behind."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.session.persistence import load_log
from tests.support.fake_openai import FakeOpenAIServer, text_reply, tool_call_reply
from tests.support.kernel_messages import iopub_until_idle, shell_reply

from .conftest import fake_flags

pytestmark = pytest.mark.kernel


def _cell(kc: Any, code: str) -> tuple[dict[str, Any], str, list[str]]:
    """Run ``code``; its reply, what the learner saw (text) and the error output's traceback lines."""
    msg_id = kc.execute(code, allow_stdin=False)
    reply = shell_reply(kc, msg_id)
    shown, traceback = [], []
    for m in iopub_until_idle(kc, msg_id):
        content = m["content"]
        if m["msg_type"] == "stream":
            shown.append(content["text"])
        elif m["msg_type"] in ("execute_result", "display_data"):
            shown.append(str(content["data"].get("text/plain", "")))
        elif m["msg_type"] == "error":
            traceback += content["traceback"]
    return reply, "".join(shown) + "\n".join(traceback), traceback


def _one_coded_line(kc: Any, code: str, error_code: str) -> str:
    reply, shown, traceback = _cell(kc, code)
    assert reply["content"]["status"] == "error", shown
    assert len(traceback) == 1 and f"dsh [{error_code}]" in traceback[0], traceback  # one line, no dump
    return traceback[0]


def _alive(kc: Any) -> None:
    reply, shown, _ = _cell(kc, "print(6 * 7)")
    assert reply["content"]["status"] == "ok" and "42" in shown


def _children(km: Any) -> str:
    """The processes the kernel started that still run (tool commands, their shells)."""
    pid = km.provisioner.process.pid
    return subprocess.run(["ps", "--ppid", str(pid), "-o", "pid=,args="], capture_output=True, text=True).stdout.strip()


def _session_log(home: Path, kc: Any) -> Any:
    _, shown, _ = _cell(kc, "print(get_ipython().magics_manager.registry['DshMagics'].current_session)")
    return load_log(home / "sessions" / f"{shown.strip()}.jsonl")


def test_subcommand_lines_naming_sessions_are_never_sent_as_prompts(
        kernel: tuple[Any, Any], fake_server: FakeOpenAIServer) -> None:
    km, kc = kernel
    fake_server.enqueue(text_reply("first"))
    reply, _, _ = _cell(kc, f"r = %dsh {fake_flags(fake_server)} hello\nsid = r.session_id")
    assert reply["content"]["status"] == "ok"
    sent = len(fake_server.requests)
    # before: each of these went to the model as a prompt ("compare s_…", "fork s_… s_… --at 2")
    for line, needs in [("%dsh compare {sid}", "usage: %dsh compare A B"),
                        ("%dsh compare s_0123456789ab", "got only s_0123456789ab"),
                        ("%dsh compare {sid} {sid} {sid}", "takes 2 session ids, not 3"),
                        ("%dsh fork {sid} {sid} --at 2", "takes one session id, not 2"),
                        ("%dsh fork the first turn --at 2", "usage: %dsh fork [ID] --at SEQ"),
                        ("%dsh show {sid} {sid}", "takes one session id"),
                        ("%dsh stop {sid}", "%dsh --session ID stop"),
                        (f"%dsh {fake_flags(fake_server)} --new --break , hello", "names no stage"),
                        (f"%dsh {fake_flags(fake_server)} --new --break 03 --break-tools , hi", "names no tool"),
                        ("%dsh --stats how did it go?", "--stats goes with show")]:
        assert needs in _one_coded_line(kc, line, "BAD_FLAG"), line
    assert len(fake_server.requests) == sent  # nothing reached the model
    assert _cell(kc, "%dsh sessions")[1].count("s_") == 1  # and no --new session was made for a bad flag
    # a nonexistent id, the same id twice, --at past the end: coded, and the right thing for a valid pair
    assert "no session 's_0123456789ab'" in _one_coded_line(kc, "%dsh compare {sid} s_0123456789ab", "LOG_NOT_FOUND")
    assert "is not a seq of" in _one_coded_line(kc, "%dsh fork {sid} --at 99999", "BAD_FORK_POINT")
    reply, shown, _ = _cell(kc, "%dsh compare {sid} {sid}")
    assert reply["content"]["status"] == "ok" and "no divergence" in shown
    # a sentence that happens to start with the word is still a prompt
    fake_server.enqueue(text_reply("compared"))
    reply, shown, _ = _cell(kc, "r = %dsh compare both of the approaches\nprint(r.text)")
    assert reply["content"]["status"] == "ok" and "compared" in shown and len(fake_server.requests) == sent + 1
    _alive(kc)


def test_interrupt_at_the_debug_prompt_cancels_and_keeps_the_log_whole(
        kernel: tuple[Any, Any], fake_server: FakeOpenAIServer, isolated_dsh_home: Path) -> None:
    km, kc = kernel
    fake_server.enqueue(tool_call_reply([("c1", "bash", '{"command": "echo paused-output"}')]))
    msg_id = kc.execute(f"%dsh {fake_flags(fake_server)} --break 03 go", allow_stdin=True)
    prompts = []
    for answer in ("", "x", "e", "{not json", "e", "[1, 2]", "e", ""):  # junk at the prompt and in the editor
        request = kc.get_stdin_msg(timeout=60)
        prompts.append(request["content"]["prompt"])
        kc.input(answer)
    assert kc.get_stdin_msg(timeout=60)["content"]["prompt"].startswith("debug [c/s/r/p/e/q]")
    km.interrupt_kernel()  # Ctrl-C while the cell waits on the debugger's stdin prompt
    reply = shell_reply(kc, msg_id)
    messages = iopub_until_idle(kc, msg_id)
    shown = json.dumps([m["content"] for m in messages])
    [error] = [m["content"] for m in messages if m["msg_type"] == "error"]
    assert reply["content"]["status"] == "error" and len(error["traceback"]) == 1
    assert "dsh [INTERRUPTED]" in error["traceback"][0] and "ready for the next prompt" in error["traceback"][0]
    assert prompts.count("new arguments (JSON, on one line; empty keeps it)> ") == 3
    assert "[BAD_EDIT] arguments are not JSON" in shown and "must be a JSON object" in shown
    assert "c continue" in shown  # "" and "x" showed the help line
    log = _session_log(isolated_dsh_home, kc)  # valid (load_log), every call answered, the turn ended
    calls = [e for e in log.events if e.type == "tool/call"]
    results = [e for e in log.events if e.type == "tool/result"]
    assert [c.call_id for c in calls] == [r.message.tool_call_id for r in results] == ["c1"]
    assert not [e for e in log.events if e.type == "debug/edit"]  # no junk edit was applied
    assert log.events[-1].type == "turn/end" and log.events[-1].reason.kind == "aborted"
    assert len(fake_server.requests) == 1 and _children(km) == ""
    fake_server.enqueue(text_reply("after the interrupt"))  # the breakpoints went with the prompt
    reply, shown, _ = _cell(kc, "r = %dsh still there?\nprint(r.text)")
    assert reply["content"]["status"] == "ok" and "after the interrupt" in shown and "paused" not in shown


def test_interrupt_before_the_prompt_is_sent_is_one_line(
        kernel: tuple[Any, Any], fake_server: FakeOpenAIServer) -> None:
    km, kc = kernel
    slow = ("import time\nclass Slow:\n    def __str__(self):\n        print('formatting', flush=True)\n"
            "        time.sleep(60)\n        return 'slow'\nslow = Slow()")
    assert _cell(kc, slow)[0]["content"]["status"] == "ok"
    msg_id = kc.execute(f"%dsh {fake_flags(fake_server)} --break 04 summarise {{slow}}")
    deadline, seen = time.monotonic() + 60, ""
    while time.monotonic() < deadline:  # the interrupt lands while the line is being prepared
        msg = kc.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") == msg_id:
            seen += str(msg["content"].get("text", ""))  # a line may come in parts
            if "formatting" in seen:
                break
    km.interrupt_kernel()
    reply = shell_reply(kc, msg_id)
    errors = [m["content"] for m in iopub_until_idle(kc, msg_id) if m["msg_type"] == "error"]
    # before: a KeyboardInterrupt traceback through the magic's internals
    assert reply["content"]["status"] == "error" and len(errors) == 1 and len(errors[0]["traceback"]) == 1
    assert "dsh [INTERRUPTED]" in errors[0]["traceback"][0] and "no prompt was sent" in errors[0]["traceback"][0]
    assert fake_server.requests == []
    _alive(kc)


def test_widgets_of_a_wrong_target_say_what_is_wrong(kernel: tuple[Any, Any], tmp_path: Path) -> None:
    km, kc = kernel
    not_a_log = tmp_path / "notes.jsonl"
    not_a_log.write_text("hello\n")
    assert _cell(kc, "from dsh_notebook.notebook.widgets import LoopWidget, SessionInspector")[0]["content"]["status"] == "ok"
    # before: a widget that rendered blank in text ("the widget renders in JupyterLab …") for each
    for expr, code in [(f"SessionInspector({str(tmp_path / 'gone.jsonl')!r})", "LOG_NOT_FOUND"),
                       (f"SessionInspector({str(not_a_log)!r})", "LOG_HEADER"),
                       (f"SessionInspector({str(tmp_path)!r})", "LOG_NOT_FOUND"),
                       ("SessionInspector('s_0123456789ab')", "UNKNOWN_SESSION"),
                       ("LoopWidget('s_0123456789ab')", "UNKNOWN_SESSION"),
                       ("LoopWidget(model='nope:x')", "UNKNOWN_PROVIDER"),
                       ("LoopWidget(approve='maybe')", "BAD_FLAG"),
                       (f"LoopWidget(cwd={str(tmp_path / 'nowhere')!r})", "BAD_FLAG")]:
        reply, shown, _ = _cell(kc, f"w = {expr}\nprint(w.error)\nw")
        assert reply["content"]["status"] == "ok", shown
        assert shown.count(f"{code}: ") == 2, (expr, shown)  # the error box's text, and the widget's repr
    assert "not int 7" in _one_coded_line(kc, "SessionInspector(7)", "BAD_ARGUMENT")
    _alive(kc)


def test_show_takes_a_log_path_as_the_cli_does(kernel: tuple[Any, Any], fake_server: FakeOpenAIServer,
                                               isolated_dsh_home: Path, tmp_path: Path) -> None:
    km, kc = kernel
    fake_server.enqueue(text_reply("saved"))
    assert _cell(kc, f"r = %dsh {fake_flags(fake_server)} hello")[0]["content"]["status"] == "ok"
    _, sid, _ = _cell(kc, "print(r.session_id)")
    path = isolated_dsh_home / "sessions" / f"{sid.strip()}.jsonl"
    # before: UNKNOWN_SESSION "no session '/…/s_….jsonl'" — only an id was understood
    reply, shown, _ = _cell(kc, f"%dsh show --stats {path}")
    assert reply["content"]["status"] == "ok" and f"session {sid.strip()}" in shown and "requests" in shown
    reply, shown, _ = _cell(kc, f"%dsh show --no-widget {path}")
    assert reply["content"]["status"] == "ok" and "turn/end" in shown and "turn 1 completed" in shown
    reply, shown, _ = _cell(kc, f"%dsh show --inspect {path}")
    assert reply["content"]["status"] == "ok" and "<SessionInspector of " in shown and str(path) in shown
    junk = tmp_path / "junk.jsonl"
    junk.write_text("not a log\n")
    assert "line 1 is not a JSON header" in _one_coded_line(kc, f"%dsh show --stats {junk}", "LOG_HEADER")
    assert "no session log at" in _one_coded_line(kc, f"%dsh show {tmp_path / 'gone.jsonl'}", "LOG_NOT_FOUND")
    _alive(kc)


def test_fork_and_compare_find_sessions_under_the_magics_home(kernel: tuple[Any, Any], fake_server: FakeOpenAIServer,
                                                              isolated_dsh_home: Path, tmp_path: Path) -> None:
    km, kc = kernel
    other = tmp_path / "other-home"
    assert _cell(kc, f"%config DshMagics.home = {str(other)!r}")[0]["content"]["status"] == "ok"
    fake_server.enqueue(text_reply("at home"))
    assert _cell(kc, f"r = %dsh {fake_flags(fake_server)} hello\nsid = r.session_id\nend = r.events[-1].seq")[0][
        "content"]["status"] == "ok"
    # before: LOG_NOT_FOUND, looked for the id under DSH_HOME instead of the host's DshMagics.home
    reply, shown, _ = _cell(kc, "%dsh fork {sid} --at {end}")  # the whole first turn (its model included)
    assert reply["content"]["status"] == "ok" and f"log: {other / 'sessions'}" in shown, shown
    reply, shown, _ = _cell(kc, "%dsh compare {sid} {sid}")
    assert reply["content"]["status"] == "ok" and "no divergence" in shown
    fake_server.enqueue(text_reply("on the fork"))
    reply, shown, _ = _cell(kc, "r = %dsh go on\nprint(r.text)")  # the fork is current, and the host finds it
    assert reply["content"]["status"] == "ok" and "on the fork" in shown
    assert not (isolated_dsh_home / "sessions").exists() or not list((isolated_dsh_home / "sessions").iterdir())


def test_the_background_handles_debugger_calls_fail_as_one_coded_line(
        kernel: tuple[Any, Any], fake_server: FakeOpenAIServer, isolated_dsh_home: Path) -> None:
    km, kc = kernel
    fake_server.enqueue(tool_call_reply([("c1", "bash", '{"command": "echo bg"}')]), text_reply("done"))
    assert _cell(kc, f"h = %dsh {fake_flags(fake_server)} --bg --no-widget --break 03 go")[0]["content"]["status"] == "ok"
    _, shown, _ = _cell(kc, "print(h.wait_paused(60)['stage'])")
    assert shown.strip() == "03"
    # before: each a HostError traceback through dsh_client.py, remote.py and concurrent/futures
    assert "editable target is 'arguments'" in _one_coded_line(kc, "h.edit('result', 'x')", "BAD_EDIT")
    assert "'arguments', 'result' or 'request'" in _one_coded_line(kc, "h.edit('bogus', 'x')", "BAD_ARGS")
    assert "not JSON" in _one_coded_line(kc, "h.edit('arguments', '{bad')", "BAD_EDIT")
    reply, shown, _ = _cell(kc, "h.continue_()\nprint(h.wait(60).summary())")
    assert reply["content"]["status"] == "ok" and shown.startswith("completed")
    assert "not paused" in _one_coded_line(kc, "h.step()", "NOT_PAUSED")
    assert "without pausing again" in _one_coded_line(kc, "h.wait_paused(5)", "NOT_PAUSED")
    _, caught, _ = _cell(kc, "from dsh_notebook.errors import HostError\ntry:\n    h.step()\n"
                             "except HostError as e:\n    print('caught', e.code)")
    assert "caught NOT_PAUSED" in caught  # still the HostError a program catches
    log = _session_log(isolated_dsh_home, kc)
    assert not [e for e in log.events if e.type == "debug/edit"] and log.events[-1].type == "turn/end"
    assert [m["content"] for m in fake_server.requests[1].messages if m.get("role") == "tool"] == ["bg\n[exit code: 0]"]


def test_an_approval_after_an_edit_asks_about_the_edited_command(
        kernel: tuple[Any, Any], fake_server: FakeOpenAIServer) -> None:
    km, kc = kernel
    fake_server.enqueue(tool_call_reply([("c1", "bash", '{"command": "echo harmless"}')]), text_reply("fin"))
    msg_id = kc.execute(f"%dsh {fake_flags(fake_server, approve='ask')} --break 03 go", allow_stdin=True)
    prompts = []
    for answer in ("e", '{"command": "echo edited-at-03"}', "c", "y"):
        request = kc.get_stdin_msg(timeout=60)
        prompts.append(request["content"]["prompt"])
        kc.input(answer)
    assert shell_reply(kc, msg_id)["content"]["status"] == "ok"
    shown = json.dumps([m["content"] for m in iopub_until_idle(kc, msg_id)], ensure_ascii=False)
    # before: "dsh: allow bash echo harmless?" — the learner approved one command and another ran
    assert prompts[3].startswith("dsh: allow bash echo edited-at-03?"), prompts
    assert "→ bash echo edited-at-03" in shown and "✓ exit 0" in shown  # the cell shows the call as it ran
    [tool] = [m for m in fake_server.requests[1].messages if m.get("role") == "tool"]
    assert tool["content"] == "edited-at-03\n[exit code: 0]"


def test_interrupting_await_of_a_paused_background_run(kernel: tuple[Any, Any], fake_server: FakeOpenAIServer) -> None:
    km, kc = kernel
    fake_server.enqueue(tool_call_reply([("c1", "bash", '{"command": "echo awaited"}')]), text_reply("done"))
    assert _cell(kc, f"h = %dsh {fake_flags(fake_server)} --bg --no-widget --break 03 go")[0]["content"]["status"] == "ok"
    msg_id = kc.execute("r = await h")
    deadline, seen = time.monotonic() + 60, ""
    while time.monotonic() < deadline:  # the awaiting cell says the run is held and nothing answers it
        msg = kc.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") == msg_id:
            seen += str(msg["content"].get("text", ""))  # a line may come in parts
            if "nothing answers it" in seen:
                break
    km.interrupt_kernel()  # before: the Interrupt never landed (an idle loop), the kernel hung on the await
    reply = shell_reply(kc, msg_id, timeout=30)
    errors = [m["content"] for m in iopub_until_idle(kc, msg_id) if m["msg_type"] == "error"]
    assert reply["content"]["status"] == "error" and len(errors[0]["traceback"]) == 1
    assert "dsh [INTERRUPTED]" in errors[0]["traceback"][0] and "paused at stage 03" in errors[0]["traceback"][0]
    reply, shown, _ = _cell(kc, "h.continue_()\nr = await h\nprint(r.summary())")
    assert reply["content"]["status"] == "ok" and shown.strip().startswith("completed")


@pytest.mark.parametrize("stage", ["01", "02", "04", "05", "06"])
def test_interrupt_while_paused_at_any_stage_leaves_a_whole_log(
        stage: str, kernel: tuple[Any, Any], fake_server: FakeOpenAIServer, isolated_dsh_home: Path) -> None:
    from dsh_notebook.session.lenient import inspect_log

    km, kc = kernel
    if stage in ("01", "02", "04"):  # 05 and 06 hold the first request: no reply is asked for
        fake_server.enqueue(tool_call_reply([("c1", "bash", '{"command": "echo stage"}')]))
    msg_id = kc.execute(f"%dsh {fake_flags(fake_server)} --break {stage} go", allow_stdin=True)
    request = kc.get_stdin_msg(timeout=60)
    assert request["content"]["prompt"].startswith("debug [c/s/r/p/e/q]")
    km.interrupt_kernel()
    reply = shell_reply(kc, msg_id)
    shown = json.dumps([m["content"] for m in iopub_until_idle(kc, msg_id)], ensure_ascii=False)
    assert reply["content"]["status"] == "error" and "dsh [INTERRUPTED]" in shown and "Traceback" not in shown
    assert f"paused at stage {stage}" in shown
    _, sid, _ = _cell(kc, "print(get_ipython().magics_manager.registry['DshMagics'].current_session)")
    seen = inspect_log(isolated_dsh_home / "sessions" / f"{sid.strip()}.jsonl")
    assert seen.strict and seen.closers == [] and seen.warnings == [] and seen.repairs == []  # nothing to mend
    assert seen.events[-1].type == "turn/end" and seen.events[-1].reason.kind == "aborted"
    assert _children(km) == "" and len(fake_server.requests) == (1 if stage in ("01", "02", "04") else 0)
    fake_server.enqueue(text_reply("next"))
    reply, shown, _ = _cell(kc, "r = %dsh and now?\nprint(r.reason.kind, r.text)")
    assert reply["content"]["status"] == "ok" and "completed next" in shown


def test_editing_the_request_at_06_with_junk_changes_nothing(kernel: tuple[Any, Any], fake_server: FakeOpenAIServer,
                                                            isolated_dsh_home: Path) -> None:
    km, kc = kernel
    fake_server.enqueue(text_reply("answered"))
    assert _cell(kc, "big = 'long ' * 600")[0]["content"]["status"] == "ok"
    msg_id = kc.execute(f"%dsh {fake_flags(fake_server)} --break 06 hi {{big}}", allow_stdin=True)
    for answer in ("e", "{", "e", '{"a": 1}', "e", "[]", "e", "", "c"):
        assert kc.get_stdin_msg(timeout=60)["msg_type"] == "input_request"
        kc.input(answer)
    assert shell_reply(kc, msg_id)["content"]["status"] == "ok"
    shown = json.dumps([m["content"] for m in iopub_until_idle(kc, msg_id)], ensure_ascii=False)
    assert "not JSON" in shown and shown.count("[BAD_EDIT] request messages must be a non-empty list") == 2
    assert "current request (shortened: p prints it whole, to copy)" in shown  # the cut copy is not the value
    log = _session_log(isolated_dsh_home, kc)
    assert not [e for e in log.events if e.type == "debug/edit"]
    [sent] = fake_server.requests
    assert "hi long long" in json.dumps(sent.messages)  # the request went as frozen

"""End to end: the debugger's Edit in the loop widget for the ``arguments`` (03) and ``request``
(06) targets, in real JupyterLab and headless Chromium, on a live session of the embedded scripted
model (seed 000: ``readme`` reads README.md with call ``c1``) with the real tools on a copy of the
demo workspace. (The ``result`` target at 04 is in test_debugger_e2e.py.)

What a person sees is asserted: the breakpoint set from the keyboard, the editor's text as JSON,
its label and font size, focus into the editor and back to Edit, refusals announced (role=alert,
coded BAD_JSON / BAD_EDIT) and readable (contrast ≥ 4.5:1 in JupyterLab Light and Dark), nothing
logged for a refused edit; then what the run did with the edit, read from the log on disk.
Screenshots ``debugger-edit-*.png`` in tests/browser/artifacts/.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import Lab, loop_widget, set_theme, shot, wait_until
from .test_debugger_e2e import contrast, log_events

pytestmark = [pytest.mark.browser, pytest.mark.slow]

README_PROMPT = "Read README.md and summarize this project."
MARKER = "MARKER-06 (added in the debugger before the request was sent)"
FOCUSED = "(e) => e === document.activeElement"


def break_at_by_keyboard(page: Any, loop: Any, no: int, key: str) -> None:
    """Tab from the stage card to its pause toggle (past its link) and press it with ``key``."""
    loop.locator(f'.dsh-stage[data-stage="{no}"]').focus()
    page.keyboard.press("Tab")
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.classList.contains('dsh-break') && document.activeElement.dataset.stage") == str(no)
    page.keyboard.press(key)
    toggle = loop.locator(f'.dsh-break[data-stage="{no}"]')
    wait_until(lambda: toggle.get_attribute("aria-pressed") == "true", timeout=5, what=f"toggle 0{no} pressed")
    assert f"Breakpoints: 0{no}" in (loop.locator(".dsh-debug-summary").text_content() or "")


def session_id(page: Any) -> str:
    sid = str(page.evaluate("() => document.querySelector('.dsh-loop .dsh-sub').textContent.split(' ')[0]"))
    assert sid.startswith("s_")
    return sid


def open_editor_by_keyboard(page: Any, loop: Any) -> Any:
    edit = loop.locator(".dsh-debug-edit")
    edit.focus()
    page.keyboard.press("Enter")
    area = loop.locator(".dsh-debug-json")
    area.wait_for(state="visible", timeout=5000)
    assert area.evaluate(FOCUSED), "focus moves into the editor when it opens"
    assert edit.get_attribute("aria-expanded") == "true"
    return area


def editor_seen(page: Any, loop: Any) -> dict[str, Any]:
    """The editor's accessible name (its <label>), font size, and text contrast."""
    area = loop.locator(".dsh-debug-json")
    name = area.evaluate("(e) => [...e.labels].map((l) => l.textContent).join(' ')")
    c = contrast(page, ".dsh-loop .dsh-debug-json")
    return {"name": name, **c}


def assert_refusal(page: Any, loop: Any, starts: str, theme_shot: str | None = None,
                   focused: str | None = None) -> str:
    """The refusal as a person meets it; ``focused``: where focus stays (checked before the theme
    switch of ``theme_shot``, a step of the test that JupyterLab may move focus on, then put back)."""
    err = loop.locator(".dsh-debug-error")
    err.wait_for(state="visible", timeout=10_000)
    text = err.text_content() or ""
    assert text.startswith(starts), text
    assert err.get_attribute("role") == "alert"  # announced when it appears
    assert loop.locator(".dsh-debug-json").get_attribute("aria-invalid") == "true"
    assert err.get_attribute("id") in (loop.locator(".dsh-debug-json").get_attribute("aria-describedby") or "").split()
    c = contrast(page, ".dsh-loop .dsh-debug-error")
    assert c["ratio"] >= 4.5 and c["fontSize"] >= 12, ("light", c)
    if focused:
        assert loop.locator(focused).evaluate(FOCUSED), f"focus stays on {focused} after the refusal"
    if theme_shot:
        shot(page, f"{theme_shot}-light", ".dsh-loop")
        set_theme(page, "JupyterLab Dark")
        for sel in (".dsh-debug-error", ".dsh-debug-json", ".dsh-debug-editor-label"):
            c = contrast(page, f".dsh-loop {sel}")
            assert c["ratio"] >= 4.5, (sel, "dark", c)
        shot(page, f"{theme_shot}-dark", ".dsh-loop")
        set_theme(page, "JupyterLab Light")
        if focused:
            loop.locator(focused).focus()
    return text


def test_edit_the_arguments_at_03_and_the_tool_reads_the_other_file(lab: Lab, page: Any) -> None:
    loop = loop_widget(lab, page, "debugger-args.ipynb", "script:readme")
    break_at_by_keyboard(page, loop, 3, "Enter")
    loop.locator(".dsh-prompt-input").fill(README_PROMPT)
    loop.locator(".dsh-send").click()
    loop.locator(".dsh-debug-bar").wait_for(state="visible", timeout=90_000)
    label = loop.locator(".dsh-debug-label")
    assert label.text_content() == "paused at 03 · c1 (read)"
    sid = session_id(page)

    area = open_editor_by_keyboard(page, loop)
    assert json.loads(area.input_value()) == {"file_path": "README.md"}  # the call's arguments, as JSON
    seen = editor_seen(page, loop)
    assert seen["name"] == "Edit the call's arguments (a JSON object) at stage 03", seen
    assert seen["fontSize"] >= 12 and seen["ratio"] >= 4.5, seen
    assert "Ctrl+Enter applies" in (loop.locator(".dsh-debug-hint").text_content() or "")

    # invalid JSON, then valid JSON that is not an object: each refused with a code, nothing sent
    area.fill('{"file_path": "src/math.ts"')
    page.keyboard.press("Control+Enter")
    # the person goes on typing where they were
    assert_refusal(page, loop, "Not sent — BAD_JSON: not valid JSON", theme_shot="debugger-edit-args-invalid",
                   focused=".dsh-debug-json")
    ring = area.evaluate("(e) => parseFloat(getComputedStyle(e).outlineWidth)")
    assert ring >= 2, f"the focus ring stays visible on an invalid editor ({ring}px)"
    area.fill('["src/math.ts"]')
    page.keyboard.press("Control+Enter")
    assert_refusal(page, loop, "Not sent — BAD_EDIT: the arguments must be a JSON object")
    assert [e for e in log_events(lab, sid) if e["type"] == "debug/edit"] == []  # the pause flushed the log

    # Escape discards: the editor closes, focus is back on Edit, nothing sent
    page.keyboard.press("Escape")
    assert loop.locator(".dsh-debug-editor").is_hidden()
    assert loop.locator(".dsh-debug-edit").evaluate(FOCUSED)
    assert loop.locator(".dsh-debug-edit").get_attribute("aria-expanded") == "false"

    # the real edit: another file of the demo workspace, applied with Ctrl+Enter
    area = open_editor_by_keyboard(page, loop)
    assert json.loads(area.input_value()) == {"file_path": "README.md"}  # reopened fresh
    area.fill('{\n  "file_path": "src/math.ts"\n}')
    shot(page, "debugger-edit-args-light", ".dsh-loop")
    set_theme(page, "JupyterLab Dark")
    seen = editor_seen(page, loop)
    assert seen["fontSize"] >= 12 and seen["ratio"] >= 4.5, ("dark", seen)
    shot(page, "debugger-edit-args-dark", ".dsh-loop")
    set_theme(page, "JupyterLab Light")
    area.focus()
    page.keyboard.press("Control+Enter")
    status = loop.locator(".dsh-debug-status")
    wait_until(lambda: "debug/edit #" in (status.text_content() or ""), timeout=10, what="edit applied")
    assert loop.locator(".dsh-debug-editor").is_hidden()
    assert loop.locator(".dsh-debug-edit").evaluate(FOCUSED), "focus returns to Edit when the editor closes"
    edits = wait_until(lambda: [e for e in log_events(lab, sid) if e["type"] == "debug/edit"], timeout=10,
                       what="the debug/edit on disk while still paused")
    assert label.text_content() == "paused at 03 · c1 (read)"  # still paused: the edit alone runs nothing

    # Continue (keyboard): the tool runs with the edited arguments
    loop.locator(".dsh-debug-continue").focus()
    page.keyboard.press("Enter")
    answer = loop.locator(".dsh-prompt-answer")
    wait_until(lambda: (answer.text_content() or "").startswith("answer (turn 1 completed)"), timeout=60, what="the answer")
    assert loop.locator(".dsh-debug-bar").is_hidden()
    events = wait_until(lambda: (ev := log_events(lab, sid)) and ev[-1]["type"] == "turn/end" and ev, timeout=10,
                        what="the turn's end on disk")
    [edit] = [e for e in events if e["type"] == "debug/edit"]
    assert edit == edits[0]
    assert (edit["target"], edit["stage"], edit["callId"], edit["by"]) == ("arguments", "03", "c1", "widget")
    assert json.loads(edit["before"]) == {"file_path": "README.md"} and json.loads(edit["after"]) == {"file_path": "src/math.ts"}
    call = next(e for e in events if e["type"] == "tool/call")
    assert edit["sourceEventSeqs"] == [call["seq"]]
    result = next(e for e in events if e["type"] == "tool/result")
    text = result["message"]["content"][0]["text"]
    header = json.loads((Path(lab.home) / "sessions" / f"{sid}.jsonl").read_text().splitlines()[0])
    math_ts = (Path(header["cwd"]) / "src" / "math.ts").read_text()
    assert all(line in text for line in math_ts.splitlines() if line.strip()), text  # that file's content
    assert "# demo-math" not in text and edit["seq"] in result["sourceEventSeqs"]
    # the model sees the call as it ran: a replacement assistant message citing the edit
    [shadow] = [e for e in events if e["type"] == "assistant/message" and e.get("surfaceOp")]
    assert edit["seq"] in shadow["sourceEventSeqs"]
    assert "Arithmetic helpers" in (answer.text_content() or "")  # the summary is of what the tool read

    # replay: one call (not a ghost of the replacement message), its 02 and 03 show the edit
    loop.locator('.dsh-stage[data-stage="3"]').click()
    scrub = loop.locator(".dsh-scrub-label")
    wait_until(lambda: (scrub.text_content() or "").startswith("call 1/1: read · c1"), timeout=10, what="one call")
    explain = loop.locator(".dsh-explain-text")
    wait_until(lambda: loop.locator(".dsh-stage[data-state=current]").get_attribute("data-stage") == "3", timeout=10, what="at 03")
    text3 = explain.text_content() or ""
    assert 'read({"file_path": "src/math.ts"})' in text3 and f"debug/edit #{edit['seq']}" in text3, text3
    assert 'the model asked for {"file_path": "README.md"}' in text3, text3
    shot(page, "debugger-edit-args-replay-03", ".dsh-loop")
    loop.locator('.dsh-stage[data-stage="2"]').click()
    wait_until(lambda: loop.locator(".dsh-stage[data-state=current]").get_attribute("data-stage") == "2", timeout=10, what="at 02")
    text2 = explain.text_content() or ""
    assert f"debug/edit #{edit['seq']}" in text2 and "src/math.ts" in text2, text2
    assert page.page_errors == []


def test_edit_the_request_at_06_reaches_the_model_and_a_broken_pairing_is_refused(lab: Lab, page: Any) -> None:
    loop = loop_widget(lab, page, "debugger-request.ipynb", "script:readme")
    break_at_by_keyboard(page, loop, 6, "Space")
    loop.locator(".dsh-prompt-input").fill(README_PROMPT)
    loop.locator(".dsh-send").click()
    label = loop.locator(".dsh-debug-label")
    loop.locator(".dsh-debug-bar").wait_for(state="visible", timeout=90_000)
    sid = session_id(page)
    frozen = [e for e in log_events(lab, sid) if e["type"] == "request/frozen"]
    assert label.text_content() == f"paused at 06 · request/frozen #{frozen[0]['seq']}"
    # the first request (no tool result yet): go on to the one that carries c1's result
    loop.locator(".dsh-debug-continue").focus()
    page.keyboard.press("Enter")
    frozen = wait_until(lambda: len(f := [e for e in log_events(lab, sid) if e["type"] == "request/frozen"]) == 2 and f,
                        timeout=60, what="the second request frozen")
    wait_until(lambda: label.text_content() == f"paused at 06 · request/frozen #{frozen[1]['seq']}", timeout=30,
               what="paused at the second 06")
    assert loop.locator(".dsh-debug-continue").evaluate(FOCUSED), "Continue keeps focus from one pause to the next"

    area = open_editor_by_keyboard(page, loop)
    messages = json.loads(area.input_value())
    assert isinstance(messages, list) and [m["role"] for m in messages] == ["system", "user", "user", "assistant", "tool"]
    assert messages[-1]["toolCallId"] == "c1" and "# demo-math" in messages[-1]["content"][0]["text"]
    seen = editor_seen(page, loop)
    assert seen["name"] == "Edit the frozen request's messages (a JSON array of messages) at stage 06", seen
    assert seen["fontSize"] >= 12 and seen["ratio"] >= 4.5, seen

    # dropping the tool result breaks the call/result pairing: the host refuses, nothing applied
    area.fill(json.dumps(messages[:-1], indent=2))
    loop.locator(".dsh-debug-apply").focus()
    page.keyboard.press("Enter")
    text = assert_refusal(page, loop, "Not applied — the host refused the edit: BAD_EDIT:",
                          theme_shot="debugger-edit-request-unpaired", focused=".dsh-debug-apply")
    assert "do not pair tool calls and results — call 'c1' at message 3: no tool message answered this call" in text, text
    assert loop.locator(".dsh-debug-editor").is_visible()  # the text stays to be fixed
    assert [e for e in log_events(lab, sid) if e["type"] == "debug/edit"] == []

    # the real edit: a marker appended to the tool message, applied with Tab to Apply and Enter
    edited = json.loads(json.dumps(messages))
    edited[-1]["content"][0]["text"] += f"\n{MARKER}"
    area.fill(json.dumps(edited, indent=2))
    # Continue with the edit typed but not applied: a warning, the run stays paused
    held = label.text_content()
    loop.locator(".dsh-debug-continue").click()
    status = loop.locator(".dsh-debug-status")
    wait_until(lambda: "The edit in the editor is not applied" in (status.text_content() or ""), timeout=5, what="the warning")
    c = contrast(page, ".dsh-loop .dsh-debug-status")
    assert c["ratio"] >= 4.5 and c["fontSize"] >= 12, c
    # the warning is all a first Continue does with an unapplied edit: it sends nothing to the host
    # (js/src/ui/debug-bar.ts), so the run is still paused here, with nothing to wait for
    assert label.text_content() == held and loop.locator(".dsh-debug-editor").is_visible()
    shot(page, "debugger-edit-request-light", ".dsh-loop")
    set_theme(page, "JupyterLab Dark")
    for sel in (".dsh-debug-status", ".dsh-debug-json", ".dsh-debug-hint"):
        c = contrast(page, f".dsh-loop {sel}")
        assert c["ratio"] >= 4.5 and c["fontSize"] >= 12, (sel, "dark", c)
    shot(page, "debugger-edit-request-dark", ".dsh-loop")
    set_theme(page, "JupyterLab Light")
    area.focus()
    page.keyboard.press("Tab")  # the hint and the error are text: the next stop is Apply
    assert loop.locator(".dsh-debug-apply").evaluate(FOCUSED)
    page.keyboard.press("Enter")
    wait_until(lambda: "debug/edit #" in (status.text_content() or ""), timeout=10, what="edit applied")
    assert loop.locator(".dsh-debug-edit").evaluate(FOCUSED)
    loop.locator(".dsh-debug-continue").click()
    answer = loop.locator(".dsh-prompt-answer")
    wait_until(lambda: (answer.text_content() or "").startswith("answer (turn 1 completed)"), timeout=60, what="the answer")
    events = wait_until(lambda: (ev := log_events(lab, sid)) and ev[-1]["type"] == "turn/end" and ev, timeout=10,
                        what="the turn's end on disk")
    [edit] = [e for e in events if e["type"] == "debug/edit"]
    assert (edit["target"], edit["stage"], edit["by"]) == ("request", "06", "widget")
    assert edit["sourceEventSeqs"] == [frozen[1]["seq"]]
    assert edit["after"][-1]["content"][0]["text"].endswith(MARKER) and MARKER not in json.dumps(edit["before"])
    assert len(edit["after"]) == len(edit["before"]) == 5
    # the answer came from the edited request: it cites the edit
    reply = next(e for e in events if e["type"] == "assistant/message" and e["seq"] > edit["seq"])
    assert edit["seq"] in reply["sourceEventSeqs"]
    # replay at 06: the request's explanation says it was edited
    loop.locator('.dsh-stage[data-stage="6"]').click()
    wait_until(lambda: loop.locator(".dsh-stage[data-state=current]").get_attribute("data-stage") == "6", timeout=10, what="at 06")
    text6 = loop.locator(".dsh-explain-text").text_content() or ""
    assert f"request/frozen #{frozen[1]['seq']}" in text6 and f"edited while paused (debug/edit #{edit['seq']})" in text6, text6
    shot(page, "debugger-edit-request-done", ".dsh-loop")
    assert page.page_errors == []

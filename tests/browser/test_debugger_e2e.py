"""End to end: the agent debugger in the loop widget, in real JupyterLab and headless Chromium, on
a live session of the embedded scripted model (fix-tests) with the real tools on the demo workspace.

Pause at stage 04 with the card's toggle (keyboard), send the prompt, see the paused bar at 04,
edit the tool result — invalid JSON first (an error, nothing sent), then valid — step to 05,
continue, and find the edited text in the answer and the ``debug/edit`` event in the session log.
Screenshots ``debugger-*.png`` (light and dark) in tests/browser/artifacts/.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from .conftest import Lab, loop_widget, open_notebook, run_all_cells, set_theme, shot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FIX_PROMPT = "run the tests; if they fail, fix src/math.ts; tell me the result"
MARKER = "MARKER-7f all 6 tests passed\n[exit code: 0]"

# WCAG contrast of an element's text against the nearest opaque background (colors resolved by
# painting them on a canvas, so color-mix() and any color syntax work).
CONTRAST_JS = """(el) => {
  const ctx = document.createElement('canvas').getContext('2d', { willReadFrequently: true });
  const rgba = (c) => { ctx.clearRect(0, 0, 1, 1); ctx.fillStyle = '#000'; ctx.fillStyle = c; ctx.fillRect(0, 0, 1, 1); return ctx.getImageData(0, 0, 1, 1).data; };
  let bg = el, b;
  while (bg) { const c = getComputedStyle(bg).backgroundColor; b = rgba(c); if (c !== 'rgba(0, 0, 0, 0)' && b[3] === 255) break; bg = bg.parentElement; }
  const f = rgba(getComputedStyle(el).color);
  const lum = (p) => { const [r, g, bl] = [p[0], p[1], p[2]].map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; }); return 0.2126 * r + 0.7152 * g + 0.0722 * bl; };
  const [l1, l2] = [lum(f), lum(b)].sort((x, y) => y - x);
  return { ratio: (l1 + 0.05) / (l2 + 0.05), fontSize: parseFloat(getComputedStyle(el).fontSize) };
}"""


def log_events(lab: Lab, session_id: str) -> list[dict[str, Any]]:
    path = Path(lab.home) / "sessions" / f"{session_id}.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()][1:]


def contrast(page: Any, selector: str) -> dict[str, float]:
    return dict(page.locator(selector).first.evaluate(CONTRAST_JS))


def test_pause_at_04_edit_the_result_step_and_continue(lab: Lab, page: Any) -> None:
    loop = loop_widget(lab, page, "debugger.ipynb", "script:fix-tests")
    stage = lambda: loop.locator(".dsh-stage[data-state=current]").get_attribute("data-stage")  # noqa: E731
    # the pause toggle of card 04 by keyboard: Tab reaches it, Space presses it, focus stays
    toggles = loop.locator(".dsh-break")
    assert toggles.count() == 6
    loop.locator('.dsh-stage[data-stage="4"]').focus()
    page.keyboard.press("Tab")  # from the card to its link, then to its toggle
    page.keyboard.press("Tab")
    assert page.evaluate("() => document.activeElement.dataset.stage") == "4"
    page.keyboard.press("Space")
    t4 = loop.locator('.dsh-break[data-stage="4"]')
    wait_until(lambda: t4.get_attribute("aria-pressed") == "true", timeout=5, what="toggle 04 pressed")
    assert page.evaluate("() => document.activeElement.classList.contains('dsh-break') && document.activeElement.dataset.stage") == "4"
    assert loop.locator('.dsh-break[aria-pressed="true"]').count() == 1
    assert "Breakpoints: 04" in (loop.locator(".dsh-debug-summary").text_content() or "")

    loop.locator(".dsh-prompt-input").fill(FIX_PROMPT)
    loop.locator(".dsh-send").click()
    bar = loop.locator(".dsh-debug-bar")
    bar.wait_for(state="visible", timeout=90_000)
    label = loop.locator(".dsh-debug-label")
    assert label.text_content() == "paused at 04 · c1 (bash)"
    wait_until(lambda: stage() == "4", timeout=10, what="the diagram at the paused stage 04")
    assert "dsh-stage-paused" in (loop.locator('.dsh-stage[data-stage="4"]').get_attribute("class") or "")
    sid = page.evaluate("() => document.querySelector('.dsh-loop .dsh-sub').textContent.split(' ')[0]")
    assert sid.startswith("s_")
    for sel in (".dsh-debug-label", ".dsh-debug-continue"):
        c = contrast(page, f".dsh-loop {sel}")
        assert c["ratio"] >= 4.5 and c["fontSize"] >= 12, (sel, c)
    shot(page, "debugger-paused-04", ".dsh-loop")

    # Edit: prefilled with the real result (a JSON string); invalid JSON is refused here
    loop.locator(".dsh-debug-edit").click()
    area = loop.locator(".dsh-debug-json")
    assert area.evaluate("(e) => e === document.activeElement")
    original = json.loads(area.input_value())
    assert "[exit code: 1]" in original and "tests failed" in original
    area.fill("all 6 tests passed, not quoted")
    loop.locator(".dsh-debug-apply").click()
    err = loop.locator(".dsh-debug-error")
    err.wait_for(state="visible", timeout=5000)
    assert (err.text_content() or "").startswith("Not sent — BAD_JSON: not valid JSON")
    assert area.get_attribute("aria-invalid") == "true"
    assert contrast(page, ".dsh-loop .dsh-debug-error")["ratio"] >= 4.5
    shot(page, "debugger-edit-invalid-light", ".dsh-loop")
    set_theme(page, "JupyterLab Dark")
    for sel in (".dsh-debug-label", ".dsh-debug-error", ".dsh-debug-json"):
        c = contrast(page, f".dsh-loop {sel}")
        assert c["ratio"] >= 4.5, (sel, "dark", c)
    shot(page, "debugger-edit-invalid-dark", ".dsh-loop")
    set_theme(page, "JupyterLab Light")

    area.fill(json.dumps(MARKER))
    loop.locator(".dsh-debug-apply").click()
    status = loop.locator(".dsh-debug-status")
    wait_until(lambda: "debug/edit #" in (status.text_content() or ""), timeout=10, what="edit applied")
    assert loop.locator(".dsh-debug-editor").is_hidden()

    # Step: to stage 05, whatever it is (no breakpoint there)
    loop.locator(".dsh-debug-step").click()
    wait_until(lambda: label.text_content() == "paused at 05", timeout=30, what="paused at 05")
    wait_until(lambda: stage() == "5", timeout=10, what="the diagram at 05")
    assert loop.locator(".dsh-debug-edit").is_disabled()  # nothing is editable at 05
    set_theme(page, "JupyterLab Dark")
    shot(page, "debugger-paused-05-dark", ".dsh-loop")
    set_theme(page, "JupyterLab Light")

    # Continue: no more breakpoints this turn; the model answers from the edited result
    loop.locator(".dsh-debug-continue").click()
    answer = loop.locator(".dsh-prompt-answer")
    wait_until(lambda: (answer.text_content() or "").startswith("answer (turn 1 completed)"), timeout=60, what="the answer")
    assert "The tests already pass (MARKER-7f all 6 tests passed)" in (answer.text_content() or "")
    assert bar.is_hidden()
    events = wait_until(lambda: (ev := log_events(lab, sid)) and ev[-1]["type"] == "turn/end" and ev, timeout=10,
                        what="the turn's end on disk")
    # one debug/edit: the valid one (the invalid JSON never left the browser)
    [edit] = [e for e in events if e["type"] == "debug/edit"]
    assert edit["target"] == "result" and edit["after"] == MARKER and edit["callId"] == "c1"
    assert edit["stage"] == "04" and "[exit code: 1]" in edit["before"]
    result = next(e for e in events if e["type"] == "tool/result" and e["message"]["toolCallId"] == "c1")
    assert result["message"]["content"][0]["text"] == MARKER and edit["seq"] in result["sourceEventSeqs"]
    frozen = [e for e in events if e["type"] == "request/frozen"]
    assert len(frozen) == 2 and result["seq"] in frozen[-1]["messageSeqs"]  # the next request carries it
    shot(page, "debugger-done", ".dsh-loop")
    assert page.page_errors == []


VISIBLE_IN_SCROLLER_JS = """(row) => {
  const sc = row.closest('.dsh-cmp-scroll');
  const head = sc.querySelector('thead').getBoundingClientRect();
  const r = row.getBoundingClientRect(), s = sc.getBoundingClientRect();
  return { scrollTop: sc.scrollTop, scrollable: sc.scrollHeight > sc.clientHeight,
           inView: r.top >= head.bottom - 1 && r.bottom <= s.bottom + 1,
           firstBg: getComputedStyle(row.querySelector('td')).backgroundColor,
           sameBg: getComputedStyle(sc.querySelector('tr.dsh-cmp-same td')).backgroundColor };
}"""


def test_compare_widget_highlights_the_first_divergence(lab: Lab, page: Any) -> None:
    readme = "%dsh read README.md and summarise"
    name = lab.write_notebook(
        "compare.ipynb", "%load_ext dsh_notebook",
        "r = %dsh --new --no-widget read README.md and summarise\norigin = r.session_id",
        f"{readme}\n", f"{readme}\n", f"{readme}\n",
        "from dsh_notebook.session.persistence import load_log\nfrom dsh_notebook.config import settings_from_env\n"
        "events = load_log(settings_from_env().sessions_dir / f'{origin}.jsonl').events\n"
        "end = [e.seq for e in events if e.type == 'turn/end'][2]",
        "%dsh fork {origin} --at {end}",
        "%dsh what is in src/math.ts?",
        "fork = get_ipython().magics_manager.registry['DshMagics'].current_session\n%dsh compare {origin} {fork}")
    open_notebook(page, lab, name)
    run_all_cells(page)
    cmp = page.locator(".dsh-compare").first
    cmp.wait_for(timeout=120_000)
    first = cmp.locator("tr.dsh-cmp-first")
    assert first.count() == 1 and first.get_attribute("aria-current") == "true"
    assert (first.get_attribute("data-turn"), first.get_attribute("data-step")) == ("4", "1")
    assert cmp.locator("tr.dsh-cmp-same").count() == 6  # turns 1–3 agree, step by step
    assert "what is in src/math.ts?" in (first.text_content() or "")
    status = cmp.locator(".dsh-cmp-status").text_content() or ""
    assert status.startswith("first divergence: A seq ") and "turn 4 step 1: the requests differ at message" in status
    # scrolled into view inside the table's viewport, and highlighted unlike the agreeing rows
    seen = wait_until(lambda: (v := first.evaluate(VISIBLE_IN_SCROLLER_JS)) and v["scrollTop"] > 0 and v, timeout=10,
                      what="the first divergence scrolled into view")
    assert seen["scrollable"] and seen["inView"], seen
    assert seen["firstBg"] != seen["sameBg"], seen
    diff = cmp.locator(".dsh-cmp-diffrow .dsh-cmp-diff")
    assert diff.is_visible()
    assert cmp.locator(".dsh-cmp-diffrow .dsh-cmp-del").count() >= 1 and cmp.locator(".dsh-cmp-diffrow .dsh-cmp-add").count() >= 1
    for sel in (".dsh-cmp-flag", ".dsh-cmp-del", ".dsh-cmp-add"):
        c = contrast(page, f".dsh-compare {sel}")
        assert c["ratio"] >= 4.5 and c["fontSize"] >= 10, (sel, c)
    shot(page, "compare-widget-light", ".dsh-compare")
    set_theme(page, "JupyterLab Dark")
    for sel in (".dsh-cmp-flag", ".dsh-cmp-del", ".dsh-cmp-add"):
        c = contrast(page, f".dsh-compare {sel}")
        assert c["ratio"] >= 4.5, (sel, "dark", c)
    shot(page, "compare-widget-dark", ".dsh-compare")
    set_theme(page, "JupyterLab Light")
    assert page.page_errors == []

"""Permission modes in real JupyterLab, headless Chromium (issue 36): the plan → ``exit_plan_mode``
→ continue in accept-edits flow answered in the loop widget (feedback first, then approval), the
mode selector in the header reached and changed with the keyboard, and bypass in red in the
widget header and in the cell.

Run: ``.venv/bin/pytest tests/browser/test_modes_e2e.py -v`` (screenshots in tests/browser/artifacts/).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from dsh_notebook.demo import copy_demo_workspace

from .conftest import Lab, open_notebook, run_all_cells, shot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SELECT = ".dsh-loop .dsh-mode-select"


def _events(lab: Lab) -> list[dict[str, Any]]:
    [log] = sorted((lab.home / "sessions").glob("*.jsonl"), key=lambda p: p.stat().st_mtime)[-1:]
    return [json.loads(line) for line in log.read_text().splitlines()[1:]]


def _mode_changes(lab: Lab) -> list[tuple[str | None, str, str]]:
    return [(e.get("previous"), e["mode"], e["by"]) for e in _events(lab) if e["type"] == "mode/changed"]


def test_plan_then_feedback_then_approve_in_accept_edits_in_the_widget(lab: Lab, page: Any, tmp_path: Path) -> None:
    ws = copy_demo_workspace(tmp_path / "ws")
    first_line = (ws / "src" / "math.ts").read_text().splitlines()[0]
    name = lab.write_notebook("modes_plan.ipynb", "%load_ext dsh_notebook",
                              f"%dsh --bg --new --mode plan --model script:plan --cwd {ws} make a plan to document src/math.ts")
    open_notebook(page, lab, name)
    run_all_cells(page)
    plan = page.locator(".dsh-loop .dsh-approval-plan")
    plan.first.wait_for(timeout=90_000)
    assert page.locator(SELECT).first.input_value() == "plan"  # the header shows the session's mode
    text = plan.first.locator(".dsh-plan-text").text_content() or ""
    assert "Add a header comment" in text and first_line.strip() in text
    assert plan.first.locator(".dsh-allow-session").count() == 0  # never "for this session"
    shot(page, "modes-plan-approval", ".dsh-loop")

    # keep planning, with feedback: the agent presents a revised plan that carries it
    first_id = plan.first.get_attribute("data-call-id")
    plan.first.locator(".dsh-plan-feedback").fill("also say in NOTES.md how to run the tests")
    plan.first.locator(".dsh-plan-keep").click()
    revised = page.locator(f'.dsh-loop .dsh-approval-plan:not([data-call-id="{first_id}"])')
    revised.first.wait_for(timeout=60_000)
    assert "As you asked: also say in NOTES.md how to run the tests" in (revised.first.text_content() or "")
    assert page.locator(SELECT).first.input_value() == "plan"

    # approve, continue in accept-edits: the edit and the write run without asking
    revised.first.locator(".dsh-plan-accept-edits").click()
    wait_until(lambda: (ws / "NOTES.md").is_file() and page.locator(".dsh-loop .dsh-sub").first.text_content().endswith("idle"),
               timeout=90, what="the approved plan carried out")
    wait_until(lambda: page.locator(SELECT).first.input_value() == "accept-edits", timeout=10, what="the selector follows")
    assert page.locator(".dsh-loop .dsh-approval-banner .dsh-approval-item").count() == 0  # nothing else was asked
    assert (ws / "src" / "math.ts").read_text().splitlines()[:2] == ["// math helpers (edited after the plan)", first_line]
    events = _events(lab)
    assert _mode_changes(lab) == [("default", "plan", "notebook"), ("plan", "accept-edits", "plan")]
    plans = [(e["decision"], e["decider"], e.get("feedback"), e.get("nextMode")) for e in events
             if e["type"] == "approval/decided" and e["name"] == "exit_plan_mode"]
    assert plans == [("deny", "user", "also say in NOTES.md how to run the tests", None),
                     ("allow", "user", None, "accept-edits")]
    work = [(e["name"], e["decision"], e["decider"], e["mode"]) for e in events
            if e["type"] == "approval/decided" and e["name"] in ("edit", "write")]
    assert work == [("edit", "allow", "mode", "accept-edits"), ("write", "allow", "mode", "accept-edits")]

    # the responsibilities view names what decided the call shown, and in which mode
    page.locator('.dsh-loop .dsh-tab[data-view="roles"]').first.click()
    decided = page.locator(".dsh-loop .dsh-decision-line").first
    wait_until(lambda: "by mode · mode accept-edits" in (decided.text_content() or ""), timeout=10,
               what="the last call's decision in the responsibilities view")
    shot(page, "modes-plan-done-roles", ".dsh-loop")
    assert not page.page_errors, page.page_errors


def test_the_mode_selector_is_labelled_and_changed_with_the_keyboard(lab: Lab, page: Any, tmp_path: Path) -> None:
    ws = copy_demo_workspace(tmp_path / "ws")
    name = lab.write_notebook("modes_keys.ipynb", "%load_ext dsh_notebook",
                              f"%dsh --bg --new --mode accept-edits --model script:readme --cwd {ws} summarise the README")
    open_notebook(page, lab, name)
    run_all_cells(page)
    select = page.get_by_role("combobox", name="permission mode").first  # its accessible name
    select.wait_for(timeout=60_000)
    wait_until(lambda: select.input_value() == "accept-edits", timeout=30, what="the session's mode shown")
    wait_until(lambda: (page.locator(".dsh-loop .dsh-sub").first.text_content() or "").endswith("idle"), timeout=60,
               what="the turn's end")
    page.locator(".dsh-loop .dsh-title").first.click()  # focus into the widget, then only the keyboard
    for _ in range(25):
        if page.evaluate("() => document.activeElement && document.activeElement.matches('.dsh-loop .dsh-mode-select')"):
            break
        page.keyboard.press("Tab")
    else:
        raise AssertionError("Tab never reached the mode selector")
    page.keyboard.press("ArrowDown")  # accept-edits → plan
    wait_until(lambda: _mode_changes(lab)[-1:] == [("accept-edits", "plan", "widget")], timeout=15,
               what="session/mode from the selector")
    wait_until(lambda: select.input_value() == "plan", timeout=5, what="the selector shows the logged mode")
    assert page.evaluate("() => document.activeElement.matches('.dsh-loop .dsh-mode-select')")  # focus stays
    page.keyboard.press("ArrowUp")
    page.keyboard.press("ArrowUp")  # → default
    wait_until(lambda: _mode_changes(lab)[-1][1] == "default", timeout=15, what="back to default")
    # bypass is refused in this kernel (not armed): an error, and the selector shows the real mode again
    page.keyboard.press("End")  # → the last offered option, bypass
    error = page.locator(".dsh-loop .dsh-error").first
    wait_until(lambda: "BYPASS_NOT_ARMED" in (error.text_content() or ""), timeout=15, what="the refusal shown")
    wait_until(lambda: select.input_value() == "default", timeout=5, what="the selector back on the real mode")
    assert _mode_changes(lab)[-1][1] == "default"
    shot(page, "modes-selector-refused-bypass", ".dsh-loop .dsh-header")
    assert not page.page_errors, page.page_errors


def test_bypass_is_red_in_the_widget_header_and_in_the_cell(lab: Lab, page: Any, tmp_path: Path) -> None:
    ws = copy_demo_workspace(tmp_path / "ws")
    name = lab.write_notebook("modes_bypass.ipynb", "%load_ext dsh_notebook",
                              "import os; os.environ['DSH_ALLOW_BYPASS'] = '1'  # arm this kernel",
                              f"%dsh --new --mode bypass --model script:readme --cwd {ws} summarise the README",
                              "%dsh show")
    open_notebook(page, lab, name)
    run_all_cells(page)
    mode = page.locator(".dsh-loop .dsh-mode").first
    mode.wait_for(timeout=90_000)
    wait_until(lambda: mode.get_attribute("data-mode") == "bypass", timeout=30, what="the header's mode")
    red = "rgb(179, 38, 30)"
    assert mode.evaluate("e => getComputedStyle(e).backgroundColor") == red
    banner = page.locator(".jp-OutputArea .dsh-mode-bypass").first
    banner.wait_for(timeout=30_000)
    assert banner.evaluate("e => getComputedStyle(e).backgroundColor") == red
    assert "mode bypass" in (banner.text_content() or "")
    shot(page, "modes-bypass-red", ".dsh-loop .dsh-header")
    assert not page.page_errors, page.page_errors

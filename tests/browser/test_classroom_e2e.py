"""End to end, classroom-ready widgets (issue 11 items 1, 2, 5-drawing, 6, 7): in real JupyterLab
and headless Chromium, on the replayed LoopWidget and the SessionInspector of a real run of the
embedded model (``script:fix-tests``: the tests fail, the model reads, edits, reruns), and on a
live LoopWidget with its prompt box.

Measured from the page: every visible text's computed font size and contrast against its real
background (tests/browser/a11y_audit.py) in JupyterLab Light and Dark, in several states of each
widget; keys pressed inside either widget leave the notebook's cells and active cell as they
were; arrows, Space and Enter; the focus ring against the current-stage highlight; 1000 px and
1400 px viewports. Screenshots: tests/browser/artifacts/classroom-*.png.

Run: ``PYTHONPATH=$PWD .venv/bin/python -m pytest -q -m browser tests/browser/test_classroom_e2e.py``
"""

from __future__ import annotations

from typing import Any

import pytest

from .a11y_audit import audit, violations
from .classroom_page import (
    INSP,
    LOOP,
    audit_states,
    go_stage,
    nb,
    nb_state,
    press_notebook_keys,
    stage_now,
    theme,
    view,
)
from .conftest import settle, shot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]
__all__ = ["nb"]  # the module-scoped page fixture


@pytest.mark.parametrize("name", ["JupyterLab Light", "JupyterLab Dark"])
def test_every_text_is_big_enough_and_contrasted(nb: Any, name: str) -> None:
    theme(nb, name)
    try:
        tag = "light" if "Light" in name else "dark"
        bad, fig = audit_states(nb, tag)
        go_stage(nb, 4)
        view(nb, "payloads")
        shot(nb, f"classroom-{tag}-loop-stage4-payloads", LOOP)
        shot(nb, f"classroom-{tag}-inspector", INSP)
        print(f"{name}: {fig}")
        assert not bad, "\n".join(bad[:40])
        assert fig["min_size"] >= 11 and fig["min_code_size"] >= 12, fig
    finally:
        theme(nb, "JupyterLab Light")
    assert not nb.page_errors, nb.page_errors


def test_payloads_follow_the_stage(nb: Any) -> None:
    go_stage(nb, 1)
    view(nb, "payloads")
    loop = nb.locator(LOOP).first
    result = loop.locator('.dsh-card[data-type="tool/result"]').first
    assert "not yet — comes at stage 04" in (result.text_content() or "")
    assert result.locator(".dsh-card-json").count() == 0
    msg = loop.locator('.dsh-card[data-type="assistant/message"]').first
    assert msg.get_attribute("aria-current") == "true"
    # every level is open but the stream's timing record: the tool-call block shows
    assert msg.locator('.dsh-j-toggle[aria-expanded="false"]:not([aria-label^="stream"])').count() == 0
    assert msg.locator(".dsh-j-str", has_text='"tool-call"').first.is_visible()
    sizes = set(msg.locator(".dsh-j-key").evaluate_all("els => els.map(e => getComputedStyle(e).fontSize)"))
    assert len(sizes) == 1 and float(next(iter(sizes))[:-2]) >= 12, sizes  # one size at every depth
    go_stage(nb, 4)
    result = loop.locator('.dsh-card[data-type="tool/result"]').first
    assert result.get_attribute("aria-current") == "true"
    plain = result.locator(".dsh-plain-text")
    assert plain.evaluate("e => getComputedStyle(e).whiteSpace") == "pre-wrap"
    assert "test" in (plain.text_content() or "")
    shot(nb, "classroom-loop-stage4-plain-output", LOOP)


def test_keys_pressed_inside_stay_inside(nb: Any) -> None:
    # a stage card of the replay widget (the click makes its cell the active one: that is the
    # state the keys must leave as it is)
    go_stage(nb, 2)
    nb.locator(f'{LOOP} .dsh-stage[data-stage="2"]').first.focus()
    before = nb_state(nb)
    press_notebook_keys(nb)
    assert nb_state(nb) == before, "a key inside the loop widget reached the notebook"
    assert nb.evaluate(f"() => document.querySelector('{LOOP}').contains(document.activeElement)")
    # a row of the inspector
    nb.locator(f"{INSP} .dsh-row").nth(3).click()
    nb.locator(f"{INSP} .dsh-row").nth(3).focus()
    before = nb_state(nb)
    press_notebook_keys(nb)
    assert nb_state(nb) == before, "a key inside the inspector reached the notebook"
    assert nb.evaluate(f"() => document.querySelector('{INSP}').contains(document.activeElement)")
    # typing in the prompt box types: the letters land in the textarea, not in the notebook
    box = nb.locator(".dsh-loop[data-kind=live] .dsh-prompt-input").first
    box.click()
    before = nb_state(nb)
    nb.keyboard.type("bad dd")
    nb.keyboard.press("ArrowUp")
    assert box.input_value() == "bad dd"
    assert nb_state(nb) == before
    box.fill("")
    # the search box of the inspector too
    search = nb.locator(f"{INSP} .dsh-f-text").first
    search.click()
    before = nb_state(nb)
    nb.keyboard.type("ab")
    typed, after = search.input_value(), nb_state(nb)
    search.fill("")
    assert typed == "ab" and after == before
    assert not nb.page_errors, nb.page_errors


def test_arrows_space_enter_and_a_distinct_focus_ring(nb: Any) -> None:
    go_stage(nb, 1)
    loop = nb.locator(LOOP).first
    assert loop.locator('.dsh-stage[tabindex="0"]').count() == 1  # one stop in the tab order
    loop.locator('.dsh-stage[data-stage="1"]').focus()
    # up / down rove the focus; left / right (and PageUp / PageDown, a presenter's remote) change
    # the stage (issue 23); Enter activates the focused stage
    nb.keyboard.press("ArrowDown")
    nb.keyboard.press("ArrowDown")
    focused = "() => document.activeElement && document.activeElement.dataset.stage"
    assert nb.evaluate(focused) == "3" and stage_now(nb) == "1"  # up / down move focus, not the stage
    nb.keyboard.press("Enter")
    wait_until(lambda: stage_now(nb) == "3", timeout=5, what="Enter activated stage 03")
    assert nb.evaluate(focused) == "3"  # focus kept across the re-render
    nb.keyboard.press("ArrowRight")
    wait_until(lambda: stage_now(nb) == "4", timeout=5, what="ArrowRight: the next stage, 04")
    nb.keyboard.press("ArrowLeft")
    wait_until(lambda: stage_now(nb) == "3", timeout=5, what="ArrowLeft: the previous stage, 03")
    nb.keyboard.press("ArrowDown")
    nb.keyboard.press("Enter")
    wait_until(lambda: stage_now(nb) == "4", timeout=5, what="Enter activated stage 04")
    assert nb.evaluate(focused) == "4"
    nb.keyboard.press("ArrowUp")  # focus on 03, the current stage is 04: compare their styles
    style = """e => { const s = getComputedStyle(e); return {outline: s.outlineStyle + ' ' + s.outlineWidth + ' ' + s.outlineColor,
                      shadow: s.boxShadow, border: s.borderColor}; }"""
    ring = loop.locator('.dsh-stage[data-stage="3"]').evaluate(style)
    cur = loop.locator('.dsh-stage[data-stage="4"]').evaluate(style)
    assert ring["outline"].startswith("solid 3px"), ring
    assert cur["outline"].startswith("none"), cur
    assert ring["outline"] != cur["outline"] and cur["shadow"] != "none" and ring["shadow"] != cur["shadow"]
    shot(nb, "classroom-focus-ring-vs-current", f"{LOOP} .dsh-diagram-frame")
    # the view tabs: arrows rove, Enter selects; aria-selected says which
    loop.locator('.dsh-tab[data-view="history"]').click()
    loop.locator('.dsh-tab[data-view="history"]').focus()
    nb.keyboard.press("ArrowRight")
    nb.keyboard.press("Enter")
    wait_until(lambda: loop.locator('.dsh-tab[aria-selected="true"]').get_attribute("data-view") == "payloads",
               timeout=5, what="Enter selected the payloads tab")
    assert loop.locator('.dsh-tab[aria-selected="false"]').count() == 2
    panel = loop.locator('[role="tabpanel"]')
    assert panel.get_attribute("id") == loop.locator('.dsh-tab[aria-selected="true"]').get_attribute("aria-controls")
    # inspector rows: focusable options; ArrowDown moves the selection, Tab leaves the list
    insp = nb.locator(INSP).first
    insp.locator(".dsh-row").nth(2).click()
    insp.locator('.dsh-tab[data-detail="event"]').click()
    insp.locator(".dsh-row").nth(2).click()
    nb.keyboard.press("ArrowDown")
    nb.keyboard.press("ArrowDown")
    sel = insp.locator('.dsh-row[aria-selected="true"]')
    assert sel.count() == 1 and sel.get_attribute("data-seq") == "4"
    assert nb.evaluate("() => document.activeElement.getAttribute('role')") == "option"
    assert "Event #4" in (insp.locator('.dsh-detail [role=tab][aria-selected="true"]').text_content() or "")
    row_ring = sel.evaluate("e => getComputedStyle(e).outlineStyle")
    assert row_ring == "solid"


def test_narrow_1000_scrolls_with_a_cue_and_wide_1400_tabs_on_one_line(nb: Any) -> None:
    try:
        nb.set_viewport_size({"width": 1000, "height": 1400})
        settle(nb.locator(LOOP))
        go_stage(nb, 1)
        frame = nb.locator(f"{LOOP} .dsh-diagram-frame").first
        port = frame.locator(".dsh-diagram-scroll")
        over = port.evaluate("e => e.scrollWidth > e.clientWidth + 1")
        stage6 = frame.locator('.dsh-stage[data-stage="6"]')

        def inside(loc: Any) -> bool:
            return bool(loc.evaluate("""e => { const p = e.closest('.dsh-diagram-scroll').getBoundingClientRect();
                                         const r = e.getBoundingClientRect(); return r.left >= p.left - 1 && r.right <= p.right + 1; }"""))

        if over:
            more = frame.locator(".dsh-more-right")
            assert more.is_visible() and (more.text_content() or "") == "more →"
            assert not inside(stage6)
            shot(nb, "classroom-1000px-cue", f"{LOOP} .dsh-diagram-frame")
            more.click()
            wait_until(lambda: inside(stage6), timeout=5, what="stage 06 scrolled into view")
            assert frame.locator(".dsh-more-left").is_visible()
        else:  # everything fits: nothing is clipped
            assert inside(stage6)
        bad = violations(audit(nb, LOOP))
        assert not bad, bad
        shot(nb, "classroom-1000px", LOOP)
        nb.set_viewport_size({"width": 1400, "height": 1400})
        settle(nb.locator(LOOP))
        settle(nb.locator(INSP))
        insp = nb.locator(INSP).first
        insp.locator(".dsh-row").nth(9).click()
        tabs = insp.locator(".dsh-detail [role=tab]")
        tops = set(tabs.evaluate_all("els => els.map(e => Math.round(e.getBoundingClientRect().top))"))
        assert len(tops) == 1, tops  # one line
        strip = insp.locator(".dsh-detail [role=tablist]")
        assert strip.evaluate("e => e.scrollWidth <= e.clientWidth"), "the tabs are clipped"
        loop_tabs = nb.locator(f"{LOOP} [role=tablist]").evaluate("e => e.scrollWidth <= e.clientWidth")
        assert loop_tabs
        shot(nb, "classroom-1400px-inspector", INSP)
    finally:
        nb.set_viewport_size({"width": 1280, "height": 1500})

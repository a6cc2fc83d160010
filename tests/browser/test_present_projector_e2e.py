"""A presenter at a 1024×768 projector (issue 37 items 1, 2): notebook 01 as shipped in real
JupyterLab + Chromium, at 1024×768 (the file browser open and closed) and at a 150 % zoom
emulated as 683×512 at 1.5 device pixels per CSS px, in JupyterLab Light and Dark.

- Stepping 01 → 06 with the clicker's PageDown keeps the current stage card and the narration's
  title inside the notebook's visible box, above the sticky playback bar, which stays on screen;
  the three views are collapsed until asked for.
- After each of the widget's own controls (Present, A+ and A− at their ends, Views, a speed, hold,
  play, the predict toggles, Reveal, a class-vote mark, Continue ▶) the focused element is inside
  the widget and PageDown (Space after A− and Continue) moves the lesson on; the notebook's
  scrollTop moves only by what the widget itself scrolled to show the stage (data-brought), never
  by the key's default scroll.
- JupyterLab's View → Presentation Mode turns presenter mode on and off.

Screenshots: tests/browser/artifacts/projector-*.png.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from .conftest import click_when_still, shot, wait_until
from .projector import file_browser, key, screen, seen, set_theme, settled
from .test_present_e2e import LOOP, nb01, stage

pytestmark = [pytest.mark.browser, pytest.mark.slow]
__all__ = ["nb01"]  # the module-scoped page fixture

SCREENS = {
    # name: width, height, device pixels per CSS px, theme, file browser open
    "1024-light-files": (1024, 768, 1.0, "JupyterLab Light", True),
    "1024-dark": (1024, 768, 1.0, "JupyterLab Dark", False),
    "683zoom-light": (683, 512, 1.5, "JupyterLab Light", False),
    "683zoom-dark": (683, 512, 1.5, "JupyterLab Dark", False),
}


@pytest.fixture
def room(nb01: Any) -> Iterator[Callable[[str], Any]]:
    """Set the page to one of SCREENS; the widget's locator. Restored afterwards."""
    cdp = nb01.context.new_cdp_session(nb01)

    def use(name: str) -> Any:
        width, height, scale, theme, files = SCREENS[name]
        screen(nb01, cdp, width, height, scale)
        set_theme(nb01, theme)
        file_browser(nb01, files)
        return nb01.locator(LOOP).first

    yield use
    cdp.send("Emulation.clearDeviceMetricsOverride")
    nb01.set_viewport_size({"width": 1024, "height": 768})
    set_theme(nb01, "JupyterLab Light")
    file_browser(nb01, True)


LAB_IN_PRESENTATION = "() => document.querySelector('.jp-LabShell').classList.contains('jp-mod-presentationMode')"
TOGGLE_LAB_PRESENTATION = "() => { window.jupyterapp.commands.execute('application:toggle-presentation-mode'); }"


def present_from_off(loop: Any) -> None:
    """Presenter mode switched on by a click on "Present" (off first; JupyterLab's own
    presentation mode, which the widget follows, off too)."""
    page = loop.page
    settled(loop)  # drawn and still: the first test of the page runs while the widget's state is still arriving
    if page.evaluate(LAB_IN_PRESENTATION):
        page.evaluate(TOGGLE_LAB_PRESENTATION)
        wait_until(lambda: not page.evaluate(LAB_IN_PRESENTATION), timeout=30, what="JupyterLab out of presentation mode")
    if loop.get_attribute("data-present") == "true":
        _toggle(loop, "false")
    _toggle(loop, "true")


# What the page did around a click on Present: the pointer events (their target, and whether it
# was still in the document), every change of data-present, the button's removal from the DOM and
# JupyterLab's presentation class, and the scrolls. Shown when a click does not take.
CLICK_TRACE_JS = """(root) => {
  const t0 = performance.now();
  const log = []; window.__dshClickTrace = log;
  const at = () => (performance.now() - t0).toFixed(0).padStart(5);
  if (window.__dshClickTraceOff) window.__dshClickTraceOff();
  const btn = root.querySelector('.dsh-present-btn');
  const rec = (e) => {
    const t = e.target, r = btn.getBoundingClientRect();
    if (e.type === 'scroll') { log.push(`${at()} scroll ${t.className || t.nodeName} top=${Math.round(t.scrollTop || 0)}`); return; }
    log.push(`${at()} ${e.type} on ${t === btn ? 'Present' : (t && (t.className || t.nodeName))} at ${e.clientX},${e.clientY} (button ${Math.round(r.left)},${Math.round(r.top)} ${Math.round(r.width)}x${Math.round(r.height)}) connected=${t && t.isConnected} present=${root.dataset.present}`);
  };
  const evs = ['pointerdown', 'mousedown', 'pointerup', 'mouseup', 'click', 'scroll'];
  for (const ev of evs) document.addEventListener(ev, rec, true);
  const mo = new MutationObserver((ms) => { for (const m of ms) {
    if (m.type === 'attributes') log.push(`${at()} data-present ${m.oldValue} -> ${root.dataset.present}`);
    else for (const n of m.removedNodes) if (n === btn || (n.contains && n.contains(btn))) log.push(`${at()} the Present button left the DOM`);
  } });
  mo.observe(root, { attributes: true, attributeFilter: ['data-present'], attributeOldValue: true, subtree: true, childList: true });
  const shell = document.querySelector('.jp-LabShell');
  const lab = new MutationObserver(() => log.push(`${at()} lab presentation=${shell.classList.contains('jp-mod-presentationMode')}`));
  if (shell) lab.observe(shell, { attributes: true, attributeFilter: ['class'] });
  window.__dshClickTraceOff = () => { for (const ev of evs) document.removeEventListener(ev, rec, true); mo.disconnect(); lab.disconnect(); };
}"""


def _toggle(loop: Any, want: str) -> None:
    """Click Present (once it keeps still: conftest.click_when_still) and see the widget say ``want``;
    if it does not, the trace of what the page did around the click is in the failure."""
    loop.evaluate(CLICK_TRACE_JS)
    click_when_still(loop.locator(".dsh-present-btn"))
    try:
        wait_until(lambda: loop.get_attribute("data-present") == want, timeout=15, what=f"presenter mode {want}")
    except AssertionError as exc:
        shot(loop.page, "projector-present-click-lost", ".dsh-loop")
        trace = "\n".join(loop.page.evaluate("() => window.__dshClickTrace"))
        raise AssertionError(f"{exc}; what the page did around the click:\n{trace}") from None


@pytest.mark.parametrize("name", list(SCREENS))
def test_stepping_keeps_the_narration_and_the_current_stage_on_screen(room: Any, name: str) -> None:
    loop = room(name)
    page = loop.page
    present_from_off(loop)
    first = settled(loop)
    assert first["focusInside"], first  # the click on Present left the focus in the widget
    assert loop.locator(".dsh-tabs").is_hidden() and loop.locator(".dsh-view").is_hidden()  # views on demand
    page.keyboard.press("Home")
    wait_until(lambda: stage(loop) == "1", timeout=10, what="stage 01")
    rows = []
    for want in "123456":
        if want != "1":
            page.keyboard.press("PageDown")
            wait_until(lambda w=want: stage(loop) == w, timeout=10, what=f"PageDown → stage {want}")
        v = settled(loop)
        rows.append(v)
        card, title, bar, view = v["card"], v["title"], v["bar"], v["view"]
        print(f"{name} stage {want}: view {view['top']:.0f}–{view['bottom']:.0f}, card {card['top']:.0f}–{card['bottom']:.0f}, "
              f"narration title {title['top']:.0f}–{title['bottom']:.0f}, bar {bar['top']:.0f}–{bar['bottom']:.0f}, focus {v['focused']}")
        assert v["cardIn"], (name, want, v)  # the current stage on screen, above the sticky bar
        assert v["titleIn"], (name, want, v)  # the narration on screen
        assert v["barIn"], (name, want, v)  # back / play / next reachable without scrolling
        assert v["focusInside"], (name, want, v)
        if want in "14":
            shot(page, f"projector-{name}-stage{want}")
    print(f"{name}: widget {rows[0]['widget']:.0f} px tall, {rows[0]['width']:.0f} px wide ({rows[0]['pane']}) "
          f"in a {rows[0]['viewport']} px notebook viewport; the widget scrolled the notebook {rows[-1]['brought'] - first['brought']} px")


def test_after_each_control_the_focus_stays_inside_and_pagedown_steps(room: Any) -> None:
    loop = room("1024-dark")
    page = loop.page
    present_from_off(loop)
    if loop.locator(".dsh-predict-toggle").is_checked():
        loop.locator(".dsh-predict-toggle").uncheck()
    report: list[str] = []

    def then_pagedown(what: str, name: str = "PageDown") -> None:
        v = settled(loop)
        assert v["focusInside"], f"after {what}: the focus is on {v['focused']}"
        before, after = key(page, loop, name)
        # the notebook moved only as far as the widget scrolled it to show the stage
        assert after["scrollTop"] - before["scrollTop"] == pytest.approx(after["brought"] - before["brought"], abs=1), (what, before, after)
        report.append(f"{what}: focus {v['focused']} → {name}: stage {before['stage']} → {after['stage']}"
                      f"{' asks ' + after['asking'] if after['asking'] else ''}{' revealed' if after['revealed'] else ''}")

    def home() -> None:
        loop.locator('.dsh-stage[aria-current="step"]').focus()
        page.keyboard.press("Home")
        wait_until(lambda: stage(loop) == "1", timeout=10, what="stage 01")

    home()
    present_from_off(loop)  # off, then on: the click under test
    then_pagedown("Present")
    for cls, end in ((".dsh-present-bigger", "A+"), (".dsh-present-smaller", "A−")):
        home()
        button = loop.locator(cls)
        while button.is_enabled():
            button.click()
        then_pagedown(f"{end} at its end", "Space" if end == "A−" else "PageDown")  # a clicker's Space too
    for what, sel in (("Views (open)", ".dsh-views-toggle"), ("Views (close)", ".dsh-views-toggle"), ("speed 2×", '.dsh-speed[data-speed="2"]'),
                      ("speed 1×", '.dsh-speed[data-speed="1"]')):
        home()
        loop.locator(sel).click()
        then_pagedown(what)
    home()
    loop.locator(".dsh-steponly").uncheck()  # hold off
    then_pagedown("hold (unchecked)")
    home()
    loop.locator(".dsh-steponly").check()  # hold on: play says so, and a press releases it
    play = loop.locator(".dsh-play")
    # its play symbol an inline SVG (js/src/ui/icons.ts), the words beside it
    wait_until(lambda: play.inner_text().strip() == "play (hold on)" and play.locator("svg").count() == 1, timeout=10,
               what="play says the hold is on")
    assert play.is_enabled() and "hold is on" in (play.get_attribute("aria-label") or "")
    then_pagedown("hold (checked)")
    home()
    play.click()
    wait_until(lambda: loop.get_attribute("data-step-only") == "false" and loop.locator(".dsh-pause").count() == 1, timeout=10, what="the hold released, playing")
    then_pagedown("play (the hold released)")
    loop.locator(".dsh-pause").click()
    loop.locator(".dsh-steponly").check()
    # predict, class vote: the clicker reveals, a mark, Continue, Reveal
    home()
    loop.locator(".dsh-predict-toggle").check()
    wait_until(lambda: seen(loop)["asking"] == "arguments", timeout=10, what="the arguments question")
    loop.locator(".dsh-predict-vote").check()
    wait_until(lambda: loop.locator('.dsh-predict-ask[data-vote="true"]').count() == 1, timeout=10, what="the class-vote question")
    then_pagedown("predict and class vote (checked)")  # PageDown reveals the question
    loop.locator(".dsh-predict-next").click()
    then_pagedown("Continue ▶", "Space")
    key(page, loop, "PageDown")  # on to the sources question
    assert seen(loop)["asking"] == "sources"
    loop.locator(".dsh-predict-submit").click()
    wait_until(lambda: seen(loop)["revealed"], timeout=10, what="the sources revealed")
    then_pagedown("Reveal")
    assert seen(loop)["asking"] == "messages"
    key(page, loop, "PageDown")  # the clicker reveals the messages
    loop.locator('.dsh-predict-judge[data-right="true"]').click()
    wait_until(lambda: loop.locator('.dsh-predict-reveal[data-match="true"]').count() == 1, timeout=10, what="the vote marked right")
    then_pagedown("the class got it ✓")
    loop.locator(".dsh-predict-toggle").uncheck()
    print("\n".join(report))
    shot(page, "projector-controls-end")


def test_follows_jupyterlab_presentation_mode(room: Any) -> None:
    loop = room("1024-light-files")
    page = loop.page
    if loop.get_attribute("data-present") == "true":
        click_when_still(loop.locator(".dsh-present-btn"))
    wait_until(lambda: loop.get_attribute("data-present") == "false", timeout=30, what="presenter mode off")
    toggle = "() => { window.jupyterapp.commands.execute('application:toggle-presentation-mode'); }"
    shell = "() => document.querySelector('.jp-LabShell').classList.contains('jp-mod-presentationMode')"
    page.evaluate(toggle)
    wait_until(lambda: page.evaluate(shell), timeout=10, what="JupyterLab in presentation mode")
    wait_until(lambda: loop.get_attribute("data-present") == "true", timeout=10, what="the widget presents with JupyterLab")
    assert loop.locator(".dsh-present-btn").get_attribute("aria-pressed") == "true"
    shot(page, "projector-lab-presentation-mode")
    page.evaluate(toggle)
    wait_until(lambda: not page.evaluate(shell), timeout=10, what="JupyterLab out of presentation mode")
    wait_until(lambda: loop.get_attribute("data-present") == "false", timeout=10, what="the widget back to its own setting")

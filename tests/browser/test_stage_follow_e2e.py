"""End to end, real JupyterLab + headless Chromium (issue 11 items 3, 4, 5, 9): the message
history follows the stage, approvals come from the run's real state (a banner in the header),
pacing (speed, step-only, a live run that catches up when it ends) and predict-then-reveal.

Five tool calls in one session on the embedded scripted model (``script:auto``): ``readme`` (1 call: read) then
``fix-tests`` (4 calls: bash, read, edit, bash). Screenshots in tests/browser/artifacts/.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .conftest import (
    Lab,
    click_until,
    is_done,
    open_notebook,
    run_all_cells,
    set_theme,
    settle,
    shot,
    wait_until,
)

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FIX_PROMPT = "run the tests; if they fail, fix src/math.ts; tell me the result"
CELLS = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"

HISTORY_JS = """(root) => {
  const box = root.querySelector('.dsh-history');
  const cur = box && box.querySelector('[aria-current="true"]');
  if (!box || !cur) return null;
  const b = box.getBoundingClientRect(), r = cur.getBoundingClientRect();
  return {box: [b.top, b.bottom], item: [r.top, r.bottom], seq: cur.dataset.seq,
          scrollTop: box.scrollTop, scrollHeight: box.scrollHeight, clientHeight: box.clientHeight,
          fresh: [...box.querySelectorAll('.dsh-msg-new')].map(e => e.dataset.seq),
          inreq: [...box.querySelectorAll('.dsh-msg-inreq')].map(e => e.dataset.seq),
          change: (root.querySelector('.dsh-history-change') || {}).textContent || '',
          stage: (root.querySelector('.dsh-stage[data-state=current]') || {dataset: {}}).dataset.stage};
}"""

# samples the widget's playback state every 30 ms (the page's own clock, for counts only)
STEPS_JS = """() => {
  window.__steps = [];
  window.__stepTimer = setInterval(() => {
    const root = document.querySelector('.dsh-loop');
    if (!root) return;
    const cur = root.querySelector('.dsh-stage[data-state=current]');
    window.__steps.push({t: Date.now(), index: Number(root.dataset.stepIndex), ms: Number(root.dataset.stepMs),
      stage: cur ? cur.dataset.stage : null, call: (root.querySelector('.dsh-scrub-label') || {}).textContent || '',
      header: (root.querySelector('.dsh-sub') || {}).textContent || '',
      banner: !!root.querySelector('.dsh-head .dsh-approval-banner:not([hidden])')});
  }, 30);
}"""


# the lowest text contrast among the elements matching a selector inside root: the element's colour
# over the first opaque background up its ancestors (translucent ones blended in), opacity included;
# an element whose content is a symbol (an inline SVG in currentColor, js/src/ui/icons.ts) counts
# as text, named by its aria-label
CONTRAST_JS = """([root, sel]) => {
  const cv = document.createElement('canvas').getContext('2d');
  const rgba = (c) => { cv.clearRect(0, 0, 1, 1); cv.fillStyle = '#000'; cv.fillStyle = c; cv.fillRect(0, 0, 1, 1);
                        const d = cv.getImageData(0, 0, 1, 1).data; return [d[0], d[1], d[2], d[3] / 255]; };
  const lum = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
                               return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const over = (top, bottom) => [0, 1, 2].map((i) => top[i] * top[3] + bottom[i] * (1 - top[3]));
  let worst = null;
  for (const el of root.querySelectorAll(sel)) {
    const text = el.textContent.trim() || (el.querySelector('svg') ? el.getAttribute('aria-label') || 'svg' : '');
    if (!el.offsetParent || !text) continue;
    const layers = []; let opacity = 1;
    for (let e = el; e; e = e.parentElement) {
      const cs = getComputedStyle(e); opacity *= Number(cs.opacity);
      const bg = rgba(cs.backgroundColor); if (bg[3] > 0) layers.push(bg); if (bg[3] >= 1) break;
    }
    let bg = [255, 255, 255];
    for (const l of layers.reverse()) bg = over(l, bg);
    const fg0 = rgba(getComputedStyle(el).color);
    const fg = over([fg0[0], fg0[1], fg0[2], fg0[3] * opacity], bg);
    const [a, b] = [lum(fg), lum(bg)].sort((x, y) => y - x);
    const ratio = (a + 0.05) / (b + 0.05);
    if (!worst || ratio < worst.ratio) worst = {ratio, text: text.slice(0, 40), cls: String(el.className)};
  }
  return worst;
}"""


def min_contrast(loop: Any, selector: str) -> dict[str, Any]:
    worst = loop.evaluate(f"(root) => ({CONTRAST_JS})([root, {json.dumps(selector)}])")
    assert worst is not None, f"no visible {selector}"
    return dict(worst)


def current_stage(loop: Any) -> str | None:
    return loop.locator(".dsh-stage[data-state=current]").first.get_attribute("data-stage")


def select_stage(loop: Any, stage: int) -> None:
    """Click a stage card until it is current and selected (replay mode; a render may replace
    the card being clicked)."""
    click_until(loop.locator(f'.dsh-stage[data-stage="{stage}"]'),
                lambda: current_stage(loop) == str(stage) and (loop.locator(".dsh-badge").first.text_content() or "") != "live",
                f"stage {stage} selected")


def history_state(loop: Any) -> dict[str, Any]:
    return dict(wait_until(lambda: loop.evaluate(HISTORY_JS), timeout=10, what="a current history item"))


def assert_in_view(h: dict[str, Any]) -> None:
    (btop, bbot), (itop, ibot) = h["box"], h["item"]
    assert btop - 1 <= itop < bbot, h  # its head is inside the visible part of the scroll box
    if ibot - itop <= bbot - btop:
        assert ibot <= bbot + 1, h  # and all of it when it fits


def five_call_notebook(lab: Lab, name: str) -> str:
    return lab.write_notebook(
        name, "%load_ext dsh_notebook",
        "%dsh --new --approve auto read README.md and summarise",
        f"%dsh --approve auto {FIX_PROMPT}",
        "%dsh show")


def test_history_follows_the_stage_pacing_and_predict(lab: Lab, page: Any) -> None:
    open_notebook(page, lab, five_call_notebook(lab, "follow5.ipynb"))
    run_all_cells(page)
    page.wait_for_selector(".dsh-loop .dsh-stage", timeout=120_000)
    wait_until(lambda: is_done(page.locator(f"{CELLS} .jp-InputPrompt").nth(3).text_content().strip()),
               timeout=120, what="%dsh show ran")
    loop = page.locator(".dsh-loop").first
    # the finished session: the live diagram shows the last step at once (no backlog walk)
    wait_until(lambda: (loop.locator(".dsh-scrub-label").text_content() or "").startswith("call 5/5"), timeout=20,
               what="call 5/5")
    assert current_stage(loop) == "6"

    # --- the history follows the stage, at call 5/5 -----------------------------------------
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        set_theme(page, theme)
        seen: dict[int, dict[str, Any]] = {}
        for stage in (1, 4, 5, 6):
            select_stage(loop, stage)
            settle(loop)  # the history has scrolled to the stage's item and is at rest
            h = history_state(loop)
            assert h["stage"] == str(stage)
            assert_in_view(h)
            assert h["scrollHeight"] > h["clientHeight"] and h["scrollTop"] > 0, h  # scrolled, not at the top
            cur = loop.locator('.dsh-history [aria-current="true"]')
            assert cur.count() == 1
            if stage == 1:
                assert "assistant" in (cur.locator(".dsh-msg-role").text_content() or "")
                assert h["fresh"] == [h["seq"]]
            else:
                assert "tool" in (cur.locator(".dsh-msg-role").text_content() or "")
                # one meaning per mark (issue 23): the tool message is new at 04 only; 06 marks
                # what the request carries that the previous one did not
                assert (h["seq"] in h["fresh"]) == (stage == 4), h
            seen[stage] = h
            tag = "light" if theme.endswith("Light") else "dark"
            if stage in (4, 6):
                shot(page, f"follow-history-call5-stage{stage}-{tag}", ".dsh-loop")
        # 04 → 05 → 06 say what changed: 05 the derived history, 06 the frozen request's seqs
        assert seen[4]["change"].startswith("new: the tool message")
        assert seen[5]["change"].startswith("derive_messages:")
        assert seen[6]["change"].startswith("request #") and "messageSeqs" in seen[6]["change"]
        assert seen[5]["fresh"] == [] and seen[6]["fresh"] == [], seen
        assert len(seen[6]["inreq"]) == 2 and seen[6]["inreq"][-1] == seen[6]["seq"], seen[6]  # assistant + tool
        for sel in (".dsh-badge-inreq", ".dsh-history-change", ".dsh-speed", ".dsh-toggle"):
            c = min_contrast(loop, sel)
            assert c["ratio"] >= 4.5, (theme, sel, c)
        # the current item is highlighted differently from the others (outline), in both themes
        outline = loop.locator('.dsh-history [aria-current="true"]').evaluate("e => getComputedStyle(e).outlineStyle")
        assert outline == "solid"
        # the scroll holds across re-renders: a tab click re-renders the same stage
        before = history_state(loop)["scrollTop"]
        loop.locator('.dsh-tab[data-view="history"]').first.click()
        settle(loop)  # the re-render (on the next animation frame) is drawn
        assert history_state(loop)["scrollTop"] == before
    set_theme(page, "JupyterLab Light")
    assert page.evaluate("() => window.scrollY") == 0  # the page itself did not scroll

    # --- pacing: 4× steps faster than 0.5×; step-only never auto-advances ---------------------
    page.evaluate(STEPS_JS)

    def play(speed: str) -> float:
        """Play from the start at ``speed`` until the stage moves on (an event, not a time window);
        the step duration the widget paced itself by."""
        loop.locator(f'.dsh-speed[data-speed="{speed}"]').first.click()
        wait_until(lambda: loop.locator(f'.dsh-speed[data-speed="{speed}"]').first.get_attribute("aria-pressed") == "true",
                   timeout=5, what=f"{speed}x pressed")
        loop.locator(".dsh-scrubber").first.fill("0")
        wait_until(lambda: loop.get_attribute("data-step-index") == "0", timeout=10, what="scrubbed to the start")
        loop.locator(".dsh-play").first.click()
        wait_until(lambda: int(loop.get_attribute("data-step-index") or 0) > 0, timeout=60, what=f"a step at {speed}x")
        ms = float(loop.get_attribute("data-step-ms") or 0)  # the delay of the step it paced at this speed
        page.evaluate("() => document.querySelector('.dsh-loop .dsh-pause')?.click()")  # unless it ended
        return ms

    fast_ms = play("4")
    slow_ms = play("0.5")
    print(f"pacing: a step at 4x {fast_ms} ms, at 0.5x {slow_ms} ms")
    assert 0 < fast_ms < slow_ms, (fast_ms, slow_ms)  # paced by the speed, whatever the machine's load
    assert loop.get_attribute("data-speed") == "0.5"
    loop.locator('.dsh-speed[data-speed="1"]').first.click()

    loop.locator(".dsh-steponly").first.check()
    # play under hold says so, and a press would release the hold (issue 37 item 5)
    play = loop.locator(".dsh-play").first  # its play symbol an inline SVG, the words beside it
    wait_until(lambda: play.inner_text().strip() == "play (hold on)" and play.locator("svg").count() == 1, timeout=5,
               what="play says the hold is on")
    index = int(loop.get_attribute("data-step-index") or -1)
    # nothing moves on its own: a check that something does not happen needs the time in which it
    # would; that is the widget's own pace, measured above (a step at 0.5x, twice: longer than a
    # step at 1x), not a guess — the one timed window of the browser tests
    page.wait_for_timeout(2 * slow_ms)
    assert int(loop.get_attribute("data-step-index") or -1) == index  # nothing moved on its own
    loop.locator(".dsh-forward").first.click()
    wait_until(lambda: int(loop.get_attribute("data-step-index") or -1) == index + 1, timeout=5, what="stepped")
    loop.locator(".dsh-back").first.click()
    wait_until(lambda: int(loop.get_attribute("data-step-index") or -1) == index, timeout=5, what="stepped back")
    loop.locator(".dsh-steponly").first.uncheck()
    page.evaluate("() => clearInterval(window.__stepTimer)")

    # --- predict, then reveal -----------------------------------------------------------------
    loop.locator(".dsh-predict-toggle").first.check()
    loop.locator(".dsh-scrubber").first.fill("1")  # call 2: bash
    wait_until(lambda: (loop.locator(".dsh-scrub-label").text_content() or "").startswith("call 2/5"), timeout=5,
               what="call 2")
    loop.locator(".dsh-back").first.click()  # the end of call 1 ...
    wait_until(lambda: current_stage(loop) == "6", timeout=5, what="call 1 stage 6")
    loop.locator(".dsh-forward").first.click()  # ... and forward: asked before call 2's stage 01
    ask = loop.locator('.dsh-predict-ask[data-kind="arguments"]')
    ask.wait_for(timeout=5000)
    assert current_stage(loop) == "6"  # not revealed yet
    shot(page, "predict-ask-arguments", ".dsh-loop")
    ask.locator(".dsh-predict-input").fill('{"command": "node test/run.mjs"}')
    ask.locator(".dsh-predict-submit").click()
    rev = loop.locator('.dsh-predict-reveal[data-kind="arguments"]')
    rev.wait_for(timeout=5000)
    assert rev.get_attribute("data-match") == "true"
    assert "node test/run.mjs" in (rev.locator(".dsh-predict-real").text_content() or "")
    assert current_stage(loop) == "1" and "call 2/5" in (loop.locator(".dsh-scrub-label").text_content() or "")
    shot(page, "predict-reveal-arguments", ".dsh-loop")
    # continue: the replay plays on and asks again before 04 (the seqs tool/result will cite)
    rev.locator(".dsh-predict-next").click()
    ask = loop.locator('.dsh-predict-ask[data-kind="sources"]')
    ask.wait_for(timeout=20_000)
    assert current_stage(loop) == "3"
    ask.locator(".dsh-predict-choice", has_text="tool/call").first.locator("input").check()
    ask.locator(".dsh-predict-submit").click()
    rev = loop.locator('.dsh-predict-reveal[data-kind="sources"]')
    rev.wait_for(timeout=5000)
    assert rev.get_attribute("data-match") == "true" and current_stage(loop) == "4"
    # and before 05 derives them (issue 37: 05 shows the answer), which messages the next request
    # will carry: a wrong guess is marked so
    rev.locator(".dsh-predict-next").click()
    ask = loop.locator('.dsh-predict-ask[data-kind="messages"]')
    ask.wait_for(timeout=20_000)
    assert current_stage(loop) == "4"
    ask.locator(".dsh-predict-option").first.check()
    ask.locator(".dsh-predict-submit").click()
    rev = loop.locator('.dsh-predict-reveal[data-kind="messages"]')
    rev.wait_for(timeout=5000)
    assert rev.get_attribute("data-match") == "false" and current_stage(loop) == "5"
    assert rev.locator(".dsh-predict-bad").count() >= 1 and rev.locator(".dsh-predict-ok").count() >= 1
    assert rev.locator(".dsh-mismatch").first.evaluate("e => getComputedStyle(e).color") != \
        rev.locator(".dsh-match").first.evaluate("e => getComputedStyle(e).color")
    shot(page, "predict-reveal-messages-light", ".dsh-loop")
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        set_theme(page, theme)
        for sel in (".dsh-predict-title", ".dsh-predict-table td", ".dsh-predict-table th", ".dsh-match", ".dsh-mismatch", ".dsh-predict-next"):
            c = min_contrast(loop, sel)
            assert c["ratio"] >= 4.5, (theme, sel, c)
    shot(page, "predict-reveal-messages-dark", ".dsh-loop")
    set_theme(page, "JupyterLab Light")
    assert not page.page_errors, page.page_errors


def test_approval_banner_follows_the_run_not_the_stage(lab: Lab, page: Any) -> None:
    name = lab.write_notebook("banner.ipynb", "%load_ext dsh_notebook",
                              f"%dsh --bg --approve ask --model script:fix-tests {FIX_PROMPT}")
    open_notebook(page, lab, name)
    run_all_cells(page)
    loop = page.locator(".dsh-loop").first
    banner = loop.locator(".dsh-head .dsh-approval-banner")
    item = banner.locator('.dsh-approval-item[data-call-id="c1"]')
    item.wait_for(timeout=90_000)
    # a different stage selected (replay mode): the banner stays, with the full command
    select_stage(loop, 1)
    assert (loop.locator(".dsh-badge").first.text_content() or "") in ("paused", "replaying")
    assert banner.is_visible() and "$ node test/run.mjs" in (item.locator(".dsh-approval-command").text_content() or "")
    assert loop.locator(".dsh-explain .dsh-allow").count() == 0  # not in the stage explanation
    assert "bash · c1" in (item.locator(".dsh-approval-title").text_content() or "")
    shot(page, "banner-bash-stage1-light", ".dsh-loop")
    item.locator(".dsh-allow").click()
    # the edit asks: its diff, old → new lines
    item = banner.locator('.dsh-approval-item[data-call-id="c3"]')
    item.wait_for(timeout=60_000)
    dels = item.locator(".dsh-adiff-del").all_inner_texts()
    adds = item.locator(".dsh-adiff-add").all_inner_texts()
    assert dels and adds and all(t.startswith("- ") for t in dels) and all(t.startswith("+ ") for t in adds), (dels, adds)
    assert "src/math.ts" in (item.locator(".dsh-approval-path").text_content() or "")
    shot(page, "banner-edit-diff-light", ".dsh-loop")
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        set_theme(page, theme)
        for sel in (".dsh-approval-title", ".dsh-approval-path", ".dsh-adiff-line", ".dsh-approval-buttons .dsh-btn"):
            c = min_contrast(loop, sel)
            assert c["ratio"] >= 4.5, (theme, sel, c)
    shot(page, "banner-edit-diff-dark", ".dsh-loop")
    colors = item.locator(".dsh-adiff-del").first.evaluate(
        "e => [getComputedStyle(e).color, getComputedStyle(e).backgroundColor, getComputedStyle(e).fontSize]")
    assert colors[0] != colors[1] and float(colors[2].rstrip("px")) >= 12
    set_theme(page, "JupyterLab Light")
    item.locator(".dsh-allow").click()
    # back to live for the end of the run: the last bash is allowed for the session
    click_until(loop.locator(".dsh-live"), lambda: (loop.locator(".dsh-badge").first.text_content() or "") == "live",
                "back to live")
    page.evaluate(STEPS_JS)
    item = banner.locator('.dsh-approval-item[data-call-id="c4"]')
    item.wait_for(timeout=60_000)
    item.locator(".dsh-allow-session").click()
    wait_until(lambda: (loop.locator(".dsh-sub").text_content() or "").endswith("idle")
               and banner.is_hidden(), timeout=60, what="the run ended, no approval waiting")
    # the sampler has taken the frames the checks below read: seven after the first idle one
    page.wait_for_function("""() => { const s = window.__steps;
      const i = s.findIndex((x) => x.header.endsWith('idle') && !x.banner); return i >= 0 && s.length >= i + 7; }""",
                           timeout=10_000)
    samples = page.evaluate("() => window.__steps")
    page.evaluate("() => clearInterval(window.__stepTimer)")
    idle = next(i for i, s in enumerate(samples) if s["header"].endswith("idle") and not s["banner"])
    # the diagram caught up when the run ended: call 4/4 at stage 06 within a few frames
    assert any(s["stage"] == "6" and s["call"].startswith("call 4/4") for s in samples[idle:idle + 6]), samples[idle:idle + 6]
    assert all(s["stage"] == "6" for s in samples[idle + 6:]), samples[idle + 6:]
    shot(page, "banner-run-done", ".dsh-loop")
    assert not page.page_errors, page.page_errors

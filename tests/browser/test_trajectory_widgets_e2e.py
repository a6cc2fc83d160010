"""End to end in real JupyterLab and headless Chromium: the trajectory in the widgets (issue 12).

1. A live ``%dsh`` run (the real kernel, Host and scripted model, a 4,096-token window): the loop
   widget's header shows the session's running totals — the same tokens, cost and duration as
   ``python -m dsh_notebook show --stats ID --json`` — and the last request's context fill.
2. A saved log with known times (tests/fixtures/timed_session.py): the inspector's waterfall
   draws each turn's requests (waiting → first token → streaming) and tool calls (with the
   approval wait) with widths proportional to their durations; zoom (buttons and keys) changes
   the scale; clicking a bar selects its event in the list and the detail; the durations column
   shows the same figures. The loop widget of that log says "cost n/a" (a model without a price).

Both in "JupyterLab Light" and "JupyterLab Dark": text at least 11px and readable (contrast).
Run: ``PYTHONPATH=$PWD .venv/bin/python -m pytest -q -m browser tests/browser/test_trajectory_widgets_e2e.py``.
"""

from __future__ import annotations

import json
import re
from typing import Any

import pytest

from .conftest import Lab, inspector_view, is_done, open_notebook, set_theme, shot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELL = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Notebook .jp-Cell"
THEMES = ("JupyterLab Light", "JupyterLab Dark")

# font size and contrast ratio (WCAG) of the text of every element matching `sel`, against the
# first opaque background up the tree
READABLE_JS = """(sel) => {
  const rgb = (c) => (c.match(/[\\d.]+/g) || []).map(Number);
  const lum = ([r, g, b]) => { const f = (v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : ((v + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  const bgOf = (el) => { for (let e = el; e; e = e.parentElement) { const c = rgb(getComputedStyle(e).backgroundColor);
    if (c.length === 3 || (c.length === 4 && c[3] > 0.5)) return c.slice(0, 3); } return [255, 255, 255]; };
  return [...document.querySelectorAll(sel)].filter((el) => el.textContent.trim() && el.offsetParent !== null).map((el) => {
    const s = getComputedStyle(el); const a = lum(rgb(s.color).slice(0, 3)), b = lum(bgOf(el));
    return { text: el.textContent.trim().slice(0, 40), px: parseFloat(s.fontSize), contrast: (Math.max(a, b) + 0.05) / (Math.min(a, b) + 0.05) };
  });
}"""


def cell(page: Any, index: int) -> Any:
    return page.locator(CELL).nth(index)


def prompt_of(page: Any, index: int) -> str:
    return (cell(page, index).locator(".jp-InputPrompt").text_content() or "").strip()


def run_cells(page: Any, index: int, where: str) -> None:
    """Run the cells above ``index`` (``"above"``) or from it to the end (``"below"``)."""
    page.evaluate(f"""() => {{
        const nb = window.jupyterapp.shell.currentWidget.content;
        nb.activeCellIndex = {index};
        window.jupyterapp.commands.execute('notebook:run-all-{where}');
    }}""")


def assert_readable(page: Any, sel: str, min_contrast: float = 4.5) -> int:
    rows = page.evaluate(READABLE_JS, sel)
    assert rows, f"no visible text in {sel}"
    small = [r for r in rows if r["px"] < 11]
    faint = [r for r in rows if r["contrast"] < min_contrast]
    assert not small, f"text under 11px in {sel}: {small[:3]}"
    assert not faint, f"text with contrast under {min_contrast} in {sel}: {faint[:3]}"
    return len(rows)


def test_loop_header_totals_match_show_stats(lab: Lab, page: Any) -> None:
    name = lab.write_notebook(
        "trajectory-header.ipynb", "%load_ext dsh_notebook",
        "r = %dsh --context-window 4096 run the tests; if they fail fix src/math.ts",
        "from dsh_notebook.notebook.widgets import LoopWidget\nLoopWidget(r.session_id)",
        "r2 = %dsh now read README.md\nassert r2.session_id == r.session_id",
        "import subprocess, sys\n"
        "out = subprocess.run([sys.executable, '-m', 'dsh_notebook', 'show', '--stats', r.session_id, '--json'],"
        " capture_output=True, text=True)\nprint('DSHSTATS' + out.stdout.replace(chr(10), ' ') + out.stderr)")
    open_notebook(page, lab, name)
    # the header follows the session live: the widget shows turn 1, then a second turn runs while it
    # is on screen. Cells 0–2 first, and the next ones only once the widget has its follow stream:
    # the browser's comm messages wait while a cell runs (DESIGN §2), so with run-all the follow
    # could open only after turn 2 — a race, not what a person who runs the cells sees.
    run_cells(page, 3, "above")
    tot = page.locator(".dsh-loop .dsh-totals").first
    tot.wait_for(timeout=60_000)
    wait_until(lambda: int(tot.get_attribute("data-requests") or 0) > 0, timeout=60, what="turn 1 in the header")
    seen = {tot.get_attribute("data-requests")}
    run_cells(page, 3, "below")
    wait_until(lambda: seen.add(tot.get_attribute("data-requests")) or is_done(prompt_of(page, 4)), timeout=120,
               every=0.1, what="all cells finished")
    text = cell(page, 4).locator(".jp-OutputArea").inner_text()
    totals = json.loads(text.split("DSHSTATS", 1)[1])["totals"]
    requests = json.loads(text.split("DSHSTATS", 1)[1])["requests"]
    assert totals["requests"] >= 2 and totals["outputTokens"] > 0 and totals["costUsd"] == 0.0
    assert totals["turns"] == 2
    wait_until(lambda: tot.get_attribute("data-requests") == str(totals["requests"]), timeout=30, what="header totals")
    assert int(tot.get_attribute("data-input-tokens") or -1) == totals["inputTokens"]
    assert int(tot.get_attribute("data-output-tokens") or -1) == totals["outputTokens"]
    assert float(tot.get_attribute("data-cost-usd") or "nan") == totals["costUsd"]
    assert int(tot.get_attribute("data-duration-ms") or -1) == totals["durationMs"]
    # it showed a smaller count first (turn 1's), then grew to the session's total
    counts = sorted(int(c) for c in seen if c is not None)
    assert len(counts) >= 2 and counts[0] < totals["requests"], seen
    shown = tot.inner_text()
    assert f"{totals['inputTokens']:,} in / {totals['outputTokens']:,} out tokens" in shown, shown
    assert "$0 — offline" in shown and "≈ " in shown, shown  # the teaching model: free, tokens estimated
    assert re.search(r"\d+(\.\d+)? (ms|s)", shown), shown
    # the context fill: the last request's prompt over the 4,096-token window, as a bar and a percentage
    last = requests[-1]
    assert last["contextWindow"] == 4096 and totals["contextUsed"] == last["contextUsed"]
    assert float(tot.get_attribute("data-context-used") or "nan") == pytest.approx(totals["contextUsed"])
    pct = totals["contextUsed"] * 100
    assert f"{pct:.1f}% of 4k" in shown or f"{pct:.0f}% of 4k" in shown, shown
    bar = tot.locator(".dsh-ctx-bar")
    fill_w = tot.locator(".dsh-ctx-fill").evaluate("e => e.getBoundingClientRect().width")
    bar_w = bar.evaluate("e => e.clientWidth")
    assert fill_w == pytest.approx(bar_w * min(1.0, totals["contextUsed"]), abs=1.5)
    assert bar.get_attribute("aria-valuenow") == f"{pct:.1f}"
    for theme in THEMES:
        set_theme(page, theme)
        assert_readable(page, ".dsh-loop .dsh-totals > span:not(.dsh-ctx), .dsh-loop .dsh-ctx-text")
        shot(page, f"trajectory-header-{'dark' if 'Dark' in theme else 'light'}", ".dsh-loop .dsh-header")
    set_theme(page, "JupyterLab Light")
    assert not page.page_errors, page.page_errors


def bar(wf: Any, kind: str, nth: int = 0) -> Any:
    return wf.locator(f'.dsh-wf-seg[data-kind="{kind}"]').nth(nth)


def width(loc: Any) -> float:
    return float(loc.evaluate("e => e.getBoundingClientRect().width"))


def test_inspector_waterfall_and_durations(lab: Lab, page: Any) -> None:
    insp, wf = inspector_view(lab, page, "trajectory-waterfall.ipynb", (
        "from pathlib import Path\nfrom tests.fixtures.timed_session import timed_session\n"
        "from dsh_notebook.notebook.widgets import LoopWidget, SessionInspector\n"
        "_ = timed_session(Path('s_timedlog0001.jsonl'))\nSessionInspector('s_timedlog0001.jsonl')",
        "LoopWidget(path='s_timedlog0001.jsonl')"), "waterfall")
    assert insp.locator(".dsh-f-waterfall").get_attribute("aria-pressed") == "true"
    assert "turn 4" in (wf.locator(".dsh-wf-turn").text_content() or "")  # the last turn first
    # keyboard: [ goes to the previous turn (turn 2: a failed attempt, a retry, an approval)
    wf.focus()
    page.keyboard.press("[")
    page.keyboard.press("[")
    wait_until(lambda: "turn 2" in (wf.locator(".dsh-wf-turn").text_content() or ""), timeout=5, what="turn 2")
    # widths proportional to the recorded durations: waiting 120 ms, first token 180 ms, streaming
    # 200 ms (the retry's step-1 request), the approval wait 1,500 ms
    kinds = {k: [float(x) for x in wf.locator(f'.dsh-wf-seg[data-kind="{k}"]').evaluate_all("es => es.map(e => e.dataset.ms)")]
             for k in ("waiting", "first-token", "streaming", "approval", "run")}
    assert kinds["first-token"] == [180.0] and kinds["approval"] == [1500.0], kinds
    assert 120.0 in kinds["waiting"] and 200.0 in kinds["streaming"], kinds
    scale = float(wf.locator(".dsh-wf-canvas").get_attribute("data-scale") or "nan")
    for kind in ("first-token", "approval"):
        assert width(bar(wf, kind)) == pytest.approx(float(bar(wf, kind).get_attribute("data-ms") or 0) * scale, rel=0.02, abs=0.6)
    assert width(bar(wf, "approval")) / width(bar(wf, "first-token")) == pytest.approx(1500 / 180, rel=0.03)
    shot(page, "waterfall-fit-light", ".dsh-inspector")
    # zoom: + doubles the scale and the bars; the − key halves it back; Fit resets
    before = width(bar(wf, "approval"))
    wf.locator(".dsh-wf-in").click()
    assert float(wf.locator(".dsh-wf-canvas").get_attribute("data-scale") or 0) == pytest.approx(scale * 2)
    assert width(bar(wf, "approval")) == pytest.approx(before * 2, rel=0.02)
    assert "2×" in (wf.locator(".dsh-wf-scale").text_content() or "")
    shot(page, "waterfall-zoom2-light", ".dsh-inspector .dsh-waterfall")
    wf.focus()
    page.keyboard.press("-")
    assert float(wf.locator(".dsh-wf-canvas").get_attribute("data-scale") or 0) == pytest.approx(scale)
    # a bar is a button: clicking (or Enter on) it selects the event it was measured from
    ap = bar(wf, "approval")
    seq = ap.get_attribute("data-seq")
    ap.click()
    sel = insp.locator(".dsh-row-sel")
    wait_until(lambda: sel.count() == 1 and sel.get_attribute("data-seq") == seq, timeout=5, what="row selected")
    assert "approval/asked" in (sel.locator(".dsh-row-type").text_content() or "")
    assert sel.locator(".dsh-row-dur").text_content() == "1.50 s"
    assert f"Event #{seq}" in (insp.locator(".dsh-detail .dsh-tab-on").text_content() or "")
    assert "dsh-wf-sel" in (bar(wf, "approval").get_attribute("class") or "")
    stream = wf.locator('.dsh-wf-seg[data-kind="streaming"][data-ms="200"]').first  # the retry's answer
    sseq = stream.get_attribute("data-seq")
    stream.focus()
    page.keyboard.press("Enter")
    wait_until(lambda: sel.get_attribute("data-seq") == sseq, timeout=5, what="streaming bar selected")
    assert (sel.locator(".dsh-row-type").text_content() or "") == "assistant/message"
    # the loop widget of the same log: a model without a price → "cost n/a"
    tot = page.locator(".dsh-loop .dsh-totals").first
    assert tot.get_attribute("data-cost-usd") == "null" and "cost n/a" in tot.inner_text()
    for theme in THEMES:
        set_theme(page, theme)
        tag = "dark" if "Dark" in theme else "light"
        assert_readable(page, ".dsh-inspector .dsh-wf-label, .dsh-inspector .dsh-wf-tick, .dsh-inspector .dsh-wf-turn, "
                              ".dsh-inspector .dsh-wf-key, .dsh-inspector .dsh-row-dur")
        assert_readable(page, ".dsh-loop .dsh-totals > span")
        shot(page, f"waterfall-{tag}", ".dsh-inspector")
        shot(page, f"trajectory-replay-header-{tag}", ".dsh-loop .dsh-header")
    set_theme(page, "JupyterLab Light")
    assert not page.page_errors, page.page_errors

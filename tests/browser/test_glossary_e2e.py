"""The words, in real JupyterLab (light and dark themes): the Glossary popover of both widgets
(readable, ≥ 4.5:1, keys kept inside), the cell's tool line leading with the outcome, and one
event count in the cell's summary line, both widgets' headers and ``%dsh sessions``.

The run is real: the scripted model's fix-the-tests task on a copy of the demo workspace (its
first ``node test/run.mjs`` fails 2 of 6 tests, the last one passes).
"""

from __future__ import annotations

import re
from typing import Any

import pytest

from .conftest import Lab, is_done, open_notebook, run_all_cells, set_theme, shot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

CELL = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-Cell"
TASK = "run the tests; if they fail fix src/math.ts; tell me the result"

# the contrast of an element's text against the first opaque background behind it (opacity included)
CONTRAST_JS = """(el) => {
  const rgba = (s) => { const m = s.match(/[\\d.]+/g).map(Number); return [m[0], m[1], m[2], m.length > 3 ? m[3] : 1]; };
  const lum = ([r, g, b]) => { const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4; };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b); };
  let bg = null, opacity = 1;
  for (let n = el; n; n = n.parentElement) {
    const cs = getComputedStyle(n);
    opacity *= Number(cs.opacity);
    const c = rgba(cs.backgroundColor);
    if (!bg && c[3] > 0.5) bg = c;
  }
  bg = bg || [255, 255, 255, 1];
  const fg = rgba(getComputedStyle(el).color);
  const a = fg[3] * opacity;
  const mixed = [0, 1, 2].map((i) => fg[i] * a + bg[i] * (1 - a));
  const [l1, l2] = [lum(mixed), lum(bg)].sort((x, y) => y - x);
  return { ratio: (l1 + 0.05) / (l2 + 0.05), size: parseFloat(getComputedStyle(el).fontSize) };
}"""


def cells(page: Any) -> int:
    return int(page.evaluate("() => window.jupyterapp.shell.currentWidget.content.widgets.length"))


def check_glossary(page: Any, widget: Any, theme: str) -> None:
    before = cells(page)
    widget.locator(".dsh-glossary-btn").click()
    panel = widget.locator(".dsh-glossary")
    assert panel.is_visible() and widget.locator(".dsh-glossary-btn").get_attribute("aria-expanded") == "true"
    assert panel.locator("dt").count() > 30
    for sel in ("dt", "dd", "h4", ".dsh-glossary-title"):
        for el in panel.locator(sel).all()[:12]:
            seen = el.evaluate(CONTRAST_JS)
            assert seen["size"] >= 11 and seen["ratio"] >= 4.5, (theme, sel, el.inner_text()[:40], seen)
    search = panel.locator(".dsh-glossary-search")
    search.click()
    # notebook shortcuts typed inside the popover stay there: no cell inserted or deleted
    for key in ("b", "a", "d", "d", "ArrowDown"):
        page.keyboard.press(key)
    assert cells(page) == before
    search.fill("end-seed")
    terms = panel.locator("dt").all_text_contents()
    assert "end-seed" in terms and len(terms) < 6, terms
    shot(page, f"glossary-{theme}-{widget.get_attribute('class').split()[-1]}", f".{widget.get_attribute('class').split()[-1]}")
    page.keyboard.press("Escape")
    assert not panel.is_visible() and cells(page) == before


def test_glossary_outcome_lines_and_one_event_count(lab: Lab, page: Any) -> None:
    name = lab.write_notebook(
        "words.ipynb",
        "%load_ext dsh_notebook",
        f"%dsh --new --approve auto {TASK}",
        "%dsh show",
        "%dsh show --inspect",
        "%dsh sessions",
    )
    open_notebook(page, lab, name)
    run_all_cells(page)
    wait_until(lambda: is_done((page.locator(CELL).nth(4).locator(".jp-InputPrompt").text_content() or "").strip()),
               timeout=120, what="all cells finished")
    page.wait_for_selector(".dsh-inspector .dsh-row", timeout=60_000)

    # the tool lines lead with the outcome: ✗ for the failing run, ✓ for the passing one
    run_cell = page.locator(CELL).nth(1)
    lines = [t.strip() for t in run_cell.locator(".jp-OutputArea .dsh-answer").first.locator("li").all_text_contents()]
    details = run_cell.locator(".dsh-turn-result + details li").all_text_contents()
    assert details[0].startswith("bash ✗ exit 1 · 2 of 6 tests failed") and details[-1].startswith("bash ✓ exit 0"), details
    bash = [ln for ln in lines if ln.startswith("bash")]
    assert "✗ exit 1 · 2 of 6 tests failed" in bash[0] and "✓ exit 0 · all 6 tests passed" in bash[-1], lines

    # one count everywhere: the cell's summary, both headers, %dsh sessions
    out = run_cell.locator(".jp-OutputArea").inner_text()
    n = re.search(r"· (\d+) events in the session", out)
    assert n, out
    count = n.group(1)
    loop, insp = page.locator(".dsh-loop").first, page.locator(".dsh-inspector").first
    assert f" {count} events " in loop.locator(".dsh-sub").inner_text() + " "
    assert f" {count} events " in insp.locator(".dsh-sub").inner_text() + " "
    table = page.locator(CELL).nth(4).locator(".jp-OutputArea").inner_text()
    assert re.search(rf"\b{count}\b", table) and "events" in table, table

    check_glossary(page, loop, "light")
    check_glossary(page, insp, "light")
    set_theme(page, "JupyterLab Dark")
    check_glossary(page, loop, "dark")
    check_glossary(page, insp, "dark")
    set_theme(page, "JupyterLab Light")
    assert page.page_errors == [], page.page_errors

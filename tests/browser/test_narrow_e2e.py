"""End to end, real JupyterLab + headless Chromium: the widgets in narrow panes (a class on a
projector at 1024×768 with the file browser open, a notebook split beside a terminal — widgets of
500–900 px). What a person sees at 520 px and 900 px, in JupyterLab Light and Dark, for a live
LoopWidget waiting for an approval (``script:fix-tests``), the SessionInspector of a finished run
(waterfall open, a detail tab other than the first selected) and the compare widget:

- nothing of the widget sticks out of it horizontally (the root does not scroll sideways; every
  element is inside the root unless an explicit scroll area holds it);
- the tab rows are on one row (or scroll) and the selected tab is inside the visible part;
- no stage value, header line or total is split inside a word (each word's ``Range`` has one line
  box), the values break only where ``<wbr>`` allows (``overflow-wrap``/``word-break`` normal);
- the header totals are fully visible, each figure on one line, the group on one row;
- no text under 11 px (12 px for code) and every text at ≥ 4.5:1 (tests/browser/a11y_audit.py).

The width is set on the widget's container (the output area's child), so the pane is narrow
whatever the viewport. Screenshots: tests/browser/artifacts/narrow-*.png.
"""

from __future__ import annotations

from typing import Any

import pytest

from .a11y_audit import audit, violations
from .conftest import Lab, open_notebook, run_all_cells, set_theme, settle, shot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow]

PROMPT = "run the tests; if they fail, fix src/math.ts; tell me the result"
CELL = '[data-narrow-cell="{}"] .dsh-root'
LOOP, INSP, CMP = 5, 4, 3  # the cells that show them

# Everything a person would call "sticking out": the root's own sideways scroll, and any element
# whose box leaves the root's box without an ancestor (inside the root) that clips or scrolls it.
OVERFLOW_JS = r"""(root) => {
  const rr = root.getBoundingClientRect();
  const held = (el) => { for (let e = el.parentElement; e && e !== root; e = e.parentElement)
    if (getComputedStyle(e).overflowX !== 'visible') return true; return false; };
  const out = [];
  for (const el of root.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (!r.width || !r.height || el.closest('[hidden]')) continue;
    if ((r.right > rr.right + 0.5 || r.left < rr.left - 0.5) && !held(el))
      out.push(`${el.tagName}.${String(el.className).slice(0, 40)} ${Math.round(r.left - rr.left)}..${Math.round(r.right - rr.left)} of ${Math.round(rr.width)}`);
  }
  return {scrollWidth: root.scrollWidth, clientWidth: root.clientWidth, out};
}"""

# Words split across lines: for each text node under the elements matching `sel`, each word
# (a run of non-space characters; <wbr> separates text nodes, so "derive_" and "messages" are two)
# must sit in one line box.
SPLIT_JS = r"""([root, sel]) => {
  const split = [];
  for (const el of root.querySelectorAll(sel)) {
    if (el.closest('[hidden]') || !el.getClientRects().length) continue;
    const walk = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let n = walk.nextNode(); n; n = walk.nextNode()) {
      for (const m of n.textContent.matchAll(/\S+/g)) {
        const r = document.createRange();
        r.setStart(n, m.index); r.setEnd(n, m.index + m[0].length);
        const tops = new Set([...r.getClientRects()].filter(x => x.width > 0).map(x => Math.round(x.top)));
        if (tops.size > 1) split.push(`${el.className}: ${JSON.stringify(m[0])} on ${tops.size} lines (${JSON.stringify(el.textContent)})`);
      }
    }
  }
  return split;
}"""

STAGE_VALUES_JS = r"""(root) => [...root.querySelectorAll('.dsh-stage-value')].map(v => { const cs = getComputedStyle(v);
  return {text: v.textContent, title: v.title, wrap: cs.overflowWrap, brk: cs.wordBreak, fits: v.scrollWidth <= v.clientWidth + 1}; })"""

# each tab row: the tabs' tops, whether it scrolls, and the selected tab inside its visible part
TABS_JS = r"""(root) => [...root.querySelectorAll('[role=tablist]')].filter(t => t.getClientRects().length).map(t => {
  const tabs = [...t.querySelectorAll('[role=tab]')], sel = t.querySelector('[role=tab][aria-selected="true"]');
  const tr = t.getBoundingClientRect(), sr = sel.getBoundingClientRect();
  return {tops: [...new Set(tabs.map(x => Math.round(x.getBoundingClientRect().top)))],
          fits: t.scrollWidth <= t.clientWidth + 1, scrolls: ['auto', 'scroll'].includes(getComputedStyle(t).overflowX),
          selectedInView: sr.left >= tr.left - 1 && sr.right <= tr.right + 1, selected: sel.textContent}; })"""

TOTALS_JS = r"""(root) => { const rr = root.getBoundingClientRect(), tot = root.querySelector('.dsh-totals');
  const title = root.querySelector('.dsh-title').getBoundingClientRect();
  const items = [...tot.children].map(e => { const r = e.getBoundingClientRect();
    return {text: e.textContent, top: Math.round(r.top), lines: e.getClientRects().length, inside: r.left >= rr.left && r.right <= rr.right,
            fits: e.scrollWidth <= e.clientWidth + 1}; });
  return {items, belowTitle: tot.getBoundingClientRect().top >= title.top - 1}; }"""


def widget(page: Any, cell: int, width: int | None) -> Any:
    """The widget of a cell, brought into the DOM (the notebook detaches cells out of view) and
    scrolled to, its container set to ``width`` px (None: as wide as the notebook makes it)."""
    page.evaluate("""(k) => { const nb = window.jupyterapp.shell.currentWidget.content;
      nb.widgets.forEach((w, i) => { w.node.dataset.narrowCell = String(i); }); nb.scrollToItem(k, 'start'); }""", cell)
    root = page.locator(CELL.format(cell)).first
    root.wait_for(timeout=20_000)
    root.evaluate("(r, w) => { r.parentElement.style.width = r.parentElement.style.maxWidth = w ? w + 'px' : ''; }", width)
    if width:
        wait_until(lambda: root.evaluate("(r, w) => Math.abs(r.getBoundingClientRect().width - w) < 1", width),
                   timeout=5, what=f"the widget at {width}px")
    settle(root)  # the pane class (ResizeObserver) and the waterfall's fit applied, drawn, at rest
    root.scroll_into_view_if_needed()
    return root


def check(page: Any, cell: int, where: str) -> None:
    """What a person sees in one widget at one width and theme (assertions listed in the module)."""
    root = page.locator(CELL.format(cell)).first
    o = root.evaluate(OVERFLOW_JS)
    assert o["scrollWidth"] <= o["clientWidth"] and not o["out"], (where, o)
    for t in root.evaluate(TABS_JS):
        assert len(t["tops"]) == 1 and (t["fits"] or t["scrolls"]) and t["selectedInView"], (where, t)
    split = root.evaluate(f"(r) => ({SPLIT_JS})([r, '.dsh-stage-value, .dsh-sub, .dsh-totals > *, .dsh-title, .dsh-tab'])")
    assert not split, (where, split)
    bad = violations(audit(page, CELL.format(cell)))
    assert not bad, (where, bad)


def test_widgets_at_520_and_900_px_in_both_themes(lab: Lab, page: Any) -> None:
    name = lab.write_notebook(
        "narrow.ipynb", "%load_ext dsh_notebook",
        f"r1 = %dsh --new --model script:fix-tests --approve auto {PROMPT}",
        f"r2 = %dsh --new --model script:fix-tests --approve deny {PROMPT}",
        "%dsh compare {r1.session_id} {r2.session_id}",
        "from dsh_notebook.notebook.widgets import SessionInspector\nSessionInspector(r1.session_id)",
        f"%dsh --new --bg --approve ask --model script:fix-tests {PROMPT}")
    open_notebook(page, lab, name)
    page.evaluate("() => window.jupyterapp.shell.collapseLeft()")
    run_all_cells(page)
    page.wait_for_selector(".dsh-loop .dsh-approval-item", timeout=120_000)  # the live run waits for c1
    # the inspector: a tool/result selected, its "Messages" tab, the waterfall open
    insp = widget(page, INSP, 900)
    insp.locator(".dsh-row").first.wait_for(timeout=30_000)
    insp.locator('.dsh-row[data-seq="11"]').click()
    insp.locator('.dsh-tab[data-detail="messages"]').click()
    insp.locator(".dsh-f-waterfall").click()
    seen: dict[str, dict[str, Any]] = {}
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        set_theme(page, theme)
        tag = "light" if theme.endswith("Light") else "dark"
        for width in (520, 900):
            loop = widget(page, LOOP, width)
            where = f"loop {width}px {tag}"
            assert loop.get_attribute("data-pane") == ("narrow" if width < 640 else "medium"), where
            check(page, LOOP, where)
            values = loop.evaluate(STAGE_VALUES_JS)
            assert [v["text"] for v in values][4:] == ["derive_messages", "adapter.stream"], values  # 05 and 06: not run yet
            for v in values:  # breaks only at <wbr>, the whole value readable, in the title too
                assert (v["wrap"], v["brk"]) == ("normal", "normal") and v["fits"] and v["title"] == v["text"], (where, v)
            tot = loop.evaluate(TOTALS_JS)
            assert len({i["top"] for i in tot["items"]}) == 1 and tot["belowTitle"], (where, tot)  # one row, a unit
            assert all(i["inside"] and i["lines"] == 1 and i["fits"] for i in tot["items"]), (where, tot)
            banner = loop.locator(".dsh-approval-banner")
            assert banner.is_visible() and "$ node test/run.mjs" in (banner.locator(".dsh-approval-command").text_content() or "")
            seen[where] = {"header_h": loop.locator(".dsh-header").evaluate("e => e.getBoundingClientRect().height")}
            shot(page, f"narrow-{width}-{tag}-loop", CELL.format(LOOP))
            frame = loop.locator(".dsh-diagram-frame")
            frame.locator(".dsh-diagram-scroll").evaluate("e => { e.scrollLeft = e.scrollWidth; }")
            settle(frame)  # the scroller at its end, its "more" cues redrawn
            shot(page, f"narrow-{width}-{tag}-stages-05-06", f"{CELL.format(LOOP)} .dsh-diagram-frame")

            insp = widget(page, INSP, width)
            where = f"inspector {width}px {tag}"
            check(page, INSP, where)
            # list above details when not wide: the detail pane as wide as the list
            lw, dw = insp.evaluate("r => [r.querySelector('.dsh-vlist').offsetWidth, r.querySelector('.dsh-detail').offsetWidth]")
            assert abs(lw - dw) <= 1, (where, lw, dw)
            assert insp.locator('.dsh-detail [role=tab][aria-selected="true"]').get_attribute("data-detail") == "messages"
            shot(page, f"narrow-{width}-{tag}-inspector", CELL.format(INSP))

            widget(page, CMP, width)
            check(page, CMP, f"compare {width}px {tag}")
            shot(page, f"narrow-{width}-{tag}-compare", CELL.format(CMP))
    set_theme(page, "JupyterLab Light")
    # a pane so narrow the detail tabs cannot all show: one row that scrolls, by keyboard too,
    # the selected tab scrolled into view
    insp = widget(page, INSP, 360)
    strip = insp.locator(".dsh-detail [role=tablist]")
    # a request with a two-digit seq: its three tabs (the Request diff tab only on requests)
    insp.locator(".dsh-f-text").fill("type:request/frozen seq:10..")
    wait_until(lambda: insp.locator(".dsh-row").count() == insp.locator(".dsh-row.dsh-t-request-frozen").count() > 0,
               timeout=10, what="only requests listed")
    insp.locator(".dsh-row.dsh-t-request-frozen").first.click()
    insp.locator('.dsh-tab[data-detail="diff"]').wait_for(timeout=5_000)
    insp.locator(".dsh-f-text").fill("")
    insp.locator('.dsh-tab[data-detail="event"]').click()
    row = strip.evaluate(f"(t) => ({TABS_JS})(t.parentElement)[0]")
    assert not row["fits"] and row["scrolls"] and len(row["tops"]) == 1 and row["selectedInView"], row
    assert strip.get_attribute("data-clipped") == "end"  # the cut edge fades: there is more to the right
    insp.locator('.dsh-tab[data-detail="event"]').focus()
    page.keyboard.press("ArrowRight")
    page.keyboard.press("ArrowRight")
    assert page.evaluate("() => document.activeElement.dataset.detail") == "diff"
    page.keyboard.press("Enter")
    wait_until(lambda: insp.locator('.dsh-detail [role=tab][aria-selected="true"]').get_attribute("data-detail") == "diff",
               timeout=5, what="the Request diff tab selected by keyboard")
    row = strip.evaluate(f"(t) => ({TABS_JS})(t.parentElement)[0]")
    assert row["selectedInView"] and strip.evaluate("t => t.scrollLeft") > 0, row
    assert "start" in (strip.get_attribute("data-clipped") or "")
    assert page.evaluate("() => document.activeElement.dataset.detail") == "diff"  # focus kept across the render
    shot(page, "narrow-360-inspector-tabs", f"{CELL.format(INSP)} .dsh-detail")
    # the projector: 1024×768 with the file browser open — the notebook, not the test, sets the width
    page.set_viewport_size({"width": 1024, "height": 768})
    page.evaluate("() => window.jupyterapp.commands.execute('filebrowser:activate')")
    page.wait_for_selector(".jp-FileBrowser", state="visible", timeout=10_000)
    for cell, what in ((LOOP, "loop"), (INSP, "inspector")):
        root = widget(page, cell, None)
        width = root.evaluate("r => r.getBoundingClientRect().width")
        assert 450 < width < 800 and root.get_attribute("data-pane") in ("narrow", "medium"), (what, width)
        check(page, cell, f"{what} in a 1024×768 window ({width:.0f}px)")
        shot(page, f"narrow-1024x768-{what}")  # the window, as the projector shows it
        seen[f"{what} 1024x768"] = {"header_h": root.locator(".dsh-header").evaluate("e => e.getBoundingClientRect().height"), "width": width}
    print("header heights / widths:", {k: {n: round(x) for n, x in v.items()} for k, v in seen.items()})
    assert not page.page_errors, page.page_errors

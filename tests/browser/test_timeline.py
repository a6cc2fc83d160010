"""End to end in real JupyterLab and headless Chromium: the session timeline, the ``show --stats``
tables in the inspector and compare's "open in inspector" (issue 24, item 3).

A saved four-turn log with known times (tests/fixtures/timed_session.py) and a copy of it whose
third prompt differs:
1. The inspector's Timeline: one group per turn ("turn N", wall time, tokens, cost — the figures
   of ``show --stats``' turns table), a bar per request and tool call; + / − / 0 zoom and reset,
   the arrows move between bars, Enter selects the event in the list and detail.
2. The Stats view: the three tables hold the cells ``python -m dsh_notebook show --stats`` prints.
3. Text at least 12 px with contrast at least 4.5:1 in JupyterLab Light and Dark.
4. ``%dsh compare A B``: the first divergence's "open #N in inspector" button of side B shows an
   inspector of B under the table, with event N selected and in view.
Screenshots: tests/browser/artifacts/timeline-*.png (and /work/shots/timeline/ when it exists).
Run: ``PYTHONPATH=$PWD .venv/bin/python -m pytest -q -m browser tests/browser/test_timeline.py``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from .conftest import REPO, Lab, inspector_view, set_theme, shot, wait_until
from .test_trajectory_widgets_e2e import READABLE_JS, THEMES

pytestmark = [pytest.mark.browser, pytest.mark.slow]
SHOTS = Path("/work/shots/timeline")
SETUP = (
    "from pathlib import Path\nfrom tests.fixtures.timed_session import timed_session\n"
    "from dsh_notebook.notebook.widgets import SessionInspector\n"
    "_ = timed_session(Path('s_timedlineaaa.jsonl'))\n"
    "Path('s_timedlinebbb.jsonl').write_text(Path('s_timedlineaaa.jsonl').read_text()"
    ".replace('\"text\":\"turn 3\"', '\"text\":\"turn three\"').replace('s_timedlineaaa', 's_timedlinebbb'))\n"
    "SessionInspector('s_timedlineaaa.jsonl')"
)


def snap(page: Any, name: str, selector: str) -> None:
    path = shot(page, name, selector)
    if SHOTS.is_dir():
        shutil.copy(path, SHOTS / path.name)


def readable(page: Any, sel: str) -> None:
    items = page.evaluate(READABLE_JS, sel)
    assert items, sel
    bad = [i for i in items if i["px"] < 12 or i["contrast"] < 4.5]
    assert not bad, bad


def cli_stats(lab: Lab, log: str) -> list[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    out = subprocess.run([sys.executable, "-m", "dsh_notebook", "show", "--stats", str(lab.root / log)], check=True,
                         capture_output=True, text=True, env=env).stdout
    return out.splitlines()


def test_session_timeline_stats_and_compare_link(lab: Lab, page: Any) -> None:
    insp, tl = inspector_view(lab, page, "timeline.ipynb", (
        "%load_ext dsh_notebook", SETUP, "%dsh compare s_timedlineaaa.jsonl s_timedlinebbb.jsonl"), "timeline")
    # one group per turn with the turns table's duration, tokens and cost
    lines = cli_stats(lab, "s_timedlineaaa.jsonl")
    turns = lines[lines.index("turns") + 2:lines.index("turns") + 6]
    groups = tl.locator(".dsh-tl-group")
    assert groups.count() == 4
    for i, row in enumerate(turns):
        cells = row.split()  # TURN REASON STEPS REQUESTS TOOLS DURATION(2 words) IN OUT COST CONTEXT
        meta = groups.nth(i).locator(".dsh-tl-turnmeta").text_content() or ""
        assert groups.nth(i).locator(".dsh-tl-name").text_content() == f"turn {cells[0]}"
        assert f"{cells[7]} in / {cells[8]} out" in meta, (meta, row)
        assert (cells[9] if cells[9] != "n/a" else "cost n/a") in meta, (meta, row)
    snap(page, "timeline-fit-light", ".dsh-inspector .dsh-timeline")
    # keyboard: + zooms in twice, − out once, 0 resets
    tl.focus()
    zoom = lambda: float(tl.get_attribute("data-zoom") or "nan")  # noqa: E731
    page.keyboard.press("+")
    page.keyboard.press("+")
    wait_until(lambda: zoom() == pytest.approx(4), timeout=5, what="4x")
    page.keyboard.press("-")
    wait_until(lambda: zoom() == pytest.approx(2), timeout=5, what="2x")
    snap(page, "timeline-zoom2-light", ".dsh-inspector .dsh-timeline")
    page.keyboard.press("0")
    wait_until(lambda: zoom() == pytest.approx(1), timeout=5, what="reset")
    # arrows move between bars, Enter selects the event in the inspector
    for _ in range(3):
        page.keyboard.press("ArrowRight")
    active = tl.locator(".dsh-tl-active")
    seq = active.get_attribute("data-seq")
    page.keyboard.press("Enter")
    sel = insp.locator(".dsh-row-sel")
    wait_until(lambda: sel.count() == 1 and sel.get_attribute("data-seq") == seq, timeout=5, what="row selected")
    assert f"Event #{seq}" in (insp.locator(".dsh-detail .dsh-tab-on").text_content() or "")
    req = tl.locator('.dsh-tl-barrow[data-kind="request"]').first
    assert " in / " in (req.locator(".dsh-tl-metrics").text_content() or "")
    # the Stats view: the CLI's cells
    insp.locator(".dsh-f-stats").click()
    stats = insp.locator(".dsh-stats")
    stats.wait_for(state="visible", timeout=5_000)
    for title in ("requests", "tools", "turns"):
        rows = stats.locator(f'table[data-table="{title}"] tbody tr')
        start = lines.index(title)
        assert rows.count() > 0
        for i in range(rows.count()):
            cells = [c.strip() for c in rows.nth(i).locator("td").all_text_contents()]
            line, at = lines[start + 2 + i], 0
            for c in cells:
                at = line.index(c, at) + len(c)
    assert stats.locator(".dsh-stats-total").text_content() == next(x for x in lines if x.startswith("total: "))
    # readable in both themes
    for theme in THEMES:
        set_theme(page, theme)
        tag = "dark" if "Dark" in theme else "light"
        readable(page, ".dsh-inspector .dsh-tl-name, .dsh-inspector .dsh-tl-metrics, .dsh-inspector .dsh-tl-tick, "
                       ".dsh-inspector .dsh-tl-scale, .dsh-inspector .dsh-tl-total, .dsh-inspector .dsh-stats-table td, "
                       ".dsh-inspector .dsh-stats-table th")
        snap(page, f"timeline-{tag}", ".dsh-inspector .dsh-timeline")
        snap(page, f"timeline-stats-{tag}", ".dsh-inspector .dsh-stats")
    set_theme(page, "JupyterLab Light")
    # compare: the first divergence opens an inspector of B at that event
    cmp = page.locator(".dsh-compare").first
    first = cmp.locator('tr[data-state="first"]')
    first.wait_for(timeout=60_000)
    link = first.locator(".dsh-cmp-open-b")
    target = link.get_attribute("data-seq")
    assert link.text_content() == f"open #{target} in inspector"
    snap(page, "timeline-compare-link", ".dsh-compare")
    link.click()
    opened = page.locator(".dsh-inspector").nth(1)
    opened.wait_for(timeout=60_000)
    wait_until(lambda: opened.get_attribute("data-opened-at") == target, timeout=30, what="inspector opened at the seq")
    osel = opened.locator(".dsh-row-sel")
    wait_until(lambda: osel.count() == 1 and osel.get_attribute("data-seq") == target, timeout=10, what="event selected")
    assert "s_timedlinebbb" in (opened.locator(".dsh-header").text_content() or "")
    assert f"Event #{target}" in (opened.locator(".dsh-detail .dsh-tab-on").text_content() or "")
    def in_view() -> bool:  # the list draws its rows again as the inspector's pages arrive: wait for its settled state
        box, view = osel.bounding_box(), opened.locator(".dsh-list, .dsh-vlist").first.bounding_box()
        return bool(box and view and view["y"] <= box["y"] <= view["y"] + view["height"])

    wait_until(in_view, timeout=10, what="the selected event in view")
    snap(page, "timeline-compare-opened", ".dsh-inspector >> nth=1")
    # a second press on side A opens A's inspector too
    first.locator(".dsh-cmp-open-a").click()
    wait_until(lambda: page.locator(".dsh-inspector").count() == 3, timeout=60, what="A's inspector")
    assert not page.page_errors, page.page_errors

"""A saved 100,000-event session in the inspector, in real JupyterLab (issue 24 item 5): rows on
screen, the whole log arriving (sent in validated snapshot parts), the last event reachable by the
End key and by search, scrolling showing the rows of that place, a far event's detail loading,
and only a screenful of rows in the DOM. Speed is measured in tests/benchmarks/bench_scale.py."""

from __future__ import annotations

import re
from typing import Any

import pytest

from tests.benchmarks._widget_logs import write_log

from .conftest import Lab, first_rows, open_notebook, run_all_cells, shot, wait_until

pytestmark = [pytest.mark.browser, pytest.mark.slow, pytest.mark.scale]

N = 100_000
ROW = 26  # px, the inspector's row height (js/src/inspector.ts)


def visible_seqs(insp: Any) -> list[int]:
    """The seqs of the rows inside the list's visible box (not the rendered margin)."""
    seqs: list[int] = insp.evaluate("""(el) => {
      const list = el.querySelector('.dsh-vlist');
      const box = list.getBoundingClientRect();
      return [...list.querySelectorAll('.dsh-row')].filter((r) => {
        const b = r.getBoundingClientRect();
        return b.bottom > box.top + 1 && b.top < box.bottom - 1;
      }).map((r) => Number(r.dataset.seq));
    }""")
    return seqs


def test_a_100k_event_session_in_the_inspector(lab: Lab, page: Any) -> None:
    # a log of its own: the lab (and its root) is shared by every test of this worker
    write_log(lab.root / "scale_inspector.jsonl", N, chained=True)
    name = lab.write_notebook("scale.ipynb", "from dsh_notebook.notebook.widgets import SessionInspector\n"
                              "SessionInspector('scale_inspector.jsonl')")
    open_notebook(page, lab, name)
    run_all_cells(page)
    insp = page.locator(".dsh-inspector").first
    first_rows(insp)
    assert visible_seqs(insp)[:3] == [0, 1, 2]

    # the rest arrives part by part; the count and header end at the whole log
    count = insp.locator(".dsh-f-count")
    wait_until(lambda: (count.text_content() or "") == f"{N:,} of {N:,} events", timeout=240, what="every event listed")
    assert f"{N:,} events · idle" in (insp.locator(".dsh-sub").text_content() or "")
    assert insp.locator(".dsh-error").is_hidden()
    rendered = insp.locator(".dsh-row").count()
    assert 0 < rendered < 80, rendered  # a screenful plus a margin, not 100k nodes

    # the last event by keyboard: End selects and shows it
    insp.locator(".dsh-vlist").focus()
    page.keyboard.press("End")
    wait_until(lambda: insp.locator(".dsh-row-sel").count() == 1 and insp.locator(".dsh-row-sel").get_attribute("data-seq") == str(N - 1),
               what="the last row selected")
    assert N - 1 in visible_seqs(insp)
    tab = insp.locator('.dsh-tab[data-detail="event"]')
    assert (tab.text_content() or "") == f"Event #{N - 1}"
    shot(page, "inspector-100k-end", ".dsh-inspector")

    # scrolling to the middle shows the rows of that place
    mid = insp.locator(".dsh-vlist").evaluate(f"(el) => {{ el.scrollTop = {N // 2 * ROW}; return el.scrollTop; }}")
    wait_until(lambda: (v := visible_seqs(insp)) and abs(v[0] - mid // ROW) <= 1, what="rows of the middle drawn")
    seqs = visible_seqs(insp)
    assert seqs == list(range(seqs[0], seqs[0] + len(seqs))) and len(seqs) >= 10, seqs

    # a far event's detail: jump to it, its JSON loads with its own seq and type
    insp.locator(".dsh-f-seq").fill("77777")
    insp.locator(".dsh-f-seq").press("Enter")
    wait_until(lambda: (tab.text_content() or "") == "Event #77777", what="the detail of #77777")
    card = insp.locator(".dsh-detail .dsh-card-json")
    text = card.text_content() or ""
    assert "77777" in text and re.search(r"(turn|step)/|request/|tool/|assistant/|user/", text), text[:200]
    assert insp.locator(".dsh-row-sel").get_attribute("data-seq") == "77777"

    # the last event by search: a field query lists exactly it
    insp.locator(".dsh-f-text").fill(f"seq:{N - 1}")
    wait_until(lambda: (count.text_content() or "") == f"1 of {N:,} events", what="the search lists one row")
    row = insp.locator(f'.dsh-row[data-seq="{N - 1}"]')
    assert "dsh-row-snip" not in (row.locator(".dsh-row-sum").get_attribute("class") or "")
    insp.locator(".dsh-f-text").fill("")
    wait_until(lambda: (count.text_content() or "") == f"{N:,} of {N:,} events", what="the whole list again")

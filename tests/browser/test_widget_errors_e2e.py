"""End to end: widgets built with a wrong argument show the coded error in their red box at once,
in real JupyterLab and headless Chromium, readable in both themes — an unknown session id (the
follow's error, as before), a provider that does not exist and an approval mode that does not
exist (before: no error until the learner sent a first prompt from the box). Screenshots
``widget-error-*.png`` in tests/browser/artifacts/."""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import Lab, open_notebook, run_all_cells, set_theme, shot, wait_until
from .test_debugger_e2e import contrast

pytestmark = [pytest.mark.browser]

EXPECTED = ("UNKNOWN_SESSION: no session 's_0123456789ab'", "UNKNOWN_PROVIDER: unknown provider 'nope'",
            "BAD_FLAG: approve='maybe'", "UNKNOWN_SESSION: no session 's_feedfacecafe'")


def test_a_wrong_argument_is_a_readable_coded_line_in_the_widget(lab: Lab, page: Any) -> None:
    name = lab.write_notebook(
        "widget-errors.ipynb",
        "from dsh_notebook.notebook.widgets import LoopWidget, SessionInspector\nLoopWidget('s_0123456789ab')",
        "LoopWidget(model='nope:x')",
        "LoopWidget(approve='maybe')",
        "SessionInspector('s_feedfacecafe')",
    )
    open_notebook(page, lab, name)
    run_all_cells(page)
    boxes = page.locator(".dsh-error:not([hidden])")
    wait_until(lambda: boxes.count() == 4, timeout=90, what="four error boxes")
    texts = [boxes.nth(i).text_content() or "" for i in range(4)]
    for want, got in zip(EXPECTED, texts, strict=True):
        assert got.startswith(want), (want, got)
    for theme in ("JupyterLab Light", "JupyterLab Dark"):
        set_theme(page, theme)
        for i in range(4):
            seen = dict(boxes.nth(i).evaluate("(el) => ({w: el.getBoundingClientRect().width, "
                                              "h: el.getBoundingClientRect().height})"))
            assert seen["w"] > 200 and seen["h"] >= 16, seen  # shown, not collapsed
        measured = contrast(page, ".dsh-error:not([hidden])")
        assert measured["fontSize"] >= 12 and measured["ratio"] >= 4.5, (theme, measured)
        boxes.nth(1).scroll_into_view_if_needed()
        shot(page, f"widget-error-{'light' if theme.endswith('Light') else 'dark'}", ".jp-Notebook")

"""The moves and measures of a presenter at a projector (issue 37), shared by the presenter tests:
set the screen (1024×768, or a 150 % zoom emulated as 683×512 at 1.5 device pixels per CSS px)
and the theme, open or close JupyterLab's file browser, and read from the page where the
notebook's scroller is, what of the widget it shows, and where the focus is.
"""

from __future__ import annotations

from typing import Any

from .conftest import wait_until

SCROLLER = ".jp-NotebookPanel:not(.lm-mod-hidden) .jp-WindowedPanel-outer"

# What a class sees of the widget: the notebook scroller's visible box (inside the window), the
# current stage card, the narration's title line and text, and the playback bar (sticky at the
# bottom of that box): each box's top/bottom, whether it lies inside the visible box (the card and
# the narration above the bar), the scroller's scrollTop and what the widget scrolled itself.
VIEW_JS = """(root) => {
  const sc = document.querySelector(SCROLLER);
  const s = sc.getBoundingClientRect();
  const view = {top: Math.max(0, s.top), bottom: Math.min(window.innerHeight, s.bottom)};
  const box = (el) => { if (!el) return null; const r = el.getBoundingClientRect(); return {top: r.top, bottom: r.bottom, left: r.left, right: r.right, h: r.height}; };
  const bar = box(root.querySelector('.dsh-controls'));
  const card = box(root.querySelector('.dsh-stage[aria-current="step"]'));
  const title = box(root.querySelector('.dsh-explain-title'));
  const low = view.bottom - (bar ? bar.h : 0);
  const inside = (b, below) => !!b && b.top >= view.top - 1 && b.bottom <= below + 1;
  const a = document.activeElement;
  return {view, bar, card, title, scrollTop: sc.scrollTop, viewport: sc.clientHeight,
    widget: root.getBoundingClientRect().height, width: root.getBoundingClientRect().width, pane: root.dataset.pane,
    cardIn: inside(card, low), titleIn: inside(title, low), barIn: inside(bar, view.bottom),
    stage: root.querySelector('.dsh-stage[aria-current="step"]')?.dataset.stage ?? null,
    brought: Number(root.dataset.brought || 0), stepIndex: root.dataset.stepIndex, asking: root.dataset.asking || '',
    revealed: !!root.querySelector('.dsh-predict-reveal'),
    focusInside: !!a && a !== document.body && root.contains(a),
    focused: a ? `${a.tagName.toLowerCase()}.${String(a.className).split(' ').slice(0, 2).join('.')}` : null};
}""".replace("SCROLLER", repr(SCROLLER))


def screen(page: Any, cdp: Any, width: int, height: int, scale: float) -> None:
    """The window's size in CSS px and its device pixel ratio (1.5: a 150 % zoom)."""
    page.set_viewport_size({"width": width, "height": height})
    cdp.send("Emulation.setDeviceMetricsOverride", {"width": width, "height": height, "deviceScaleFactor": scale, "mobile": False})
    wait_until(lambda: page.evaluate("() => [innerWidth, devicePixelRatio]") == [width, scale], timeout=10, what="the screen size")


def set_theme(page: Any, theme: str) -> None:
    page.evaluate(f"() => window.jupyterapp.commands.execute('apputils:change-theme', {{theme: '{theme}'}})")
    light = "true" if theme.endswith("Light") else "false"
    page.wait_for_function(f"() => document.body.dataset.jpThemeLight === '{light}'", timeout=15_000)


def file_browser(page: Any, open_: bool) -> None:
    """JupyterLab's left area (the file browser) open or closed."""
    collapsed = "() => window.jupyterapp.shell.leftCollapsed"
    if page.evaluate(collapsed) == (not open_):
        return
    page.evaluate("() => window.jupyterapp.commands.execute('application:toggle-left-area')")
    wait_until(lambda: page.evaluate(collapsed) == (not open_), timeout=10, what="the file browser toggled")


def seen(loop: Any) -> dict[str, Any]:
    return dict(loop.evaluate(VIEW_JS))


def settled(loop: Any) -> dict[str, Any]:
    """What the class sees once the widget is drawn and still: two reads in a row agree."""
    last: dict[str, Any] = {}

    def same() -> bool:
        nonlocal last
        now = seen(loop)
        ok = now == last
        last = now
        return ok

    wait_until(same, timeout=15, every=0.15, what="the widget settled")
    return last


def key(page: Any, loop: Any, name: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """Press a key; the view before and once the lesson moved (stage, step, question or reveal)."""
    before = settled(loop)
    page.keyboard.press(name)
    moved = ("stepIndex", "stage", "asking", "revealed")
    wait_until(lambda: any(seen(loop)[k] != before[k] for k in moved), timeout=10, what=f"{name} moved the lesson")
    return before, settled(loop)

"""Share a run without a kernel: one self-contained HTML page replaying a saved session.

``python -m dsh_notebook export-html ID_OR_PATH -o FILE.html`` writes a page with the widget
bundle (``static/standalone.js`` and ``static/widget.css``) inlined and the session's log
embedded as JSON; in the page, ``js/src/static.ts`` answers the widgets' envelopes itself
(``session/follow`` with a snapshot of the embedded events, ``session/info`` from the header,
anything else ``READ_ONLY``), so the loop widget and the inspector replay with no kernel and no
network (the page's Content-Security-Policy allows no request at all).

:func:`page_snippet` is the same replay as an HTML fragment: the ``text/html`` fallback of the
widgets' outputs, which ``jupyter nbconvert --to html`` shows when no widget state was saved.
"""

from __future__ import annotations

import contextlib
import html
import itertools
import json
import os
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from pydantic import JsonValue

from ..errors import UserError
from ..wire.base import dump, tag
from ..wire.log import SessionHeader

STATIC = Path(__file__).resolve().parent.parent / "static"
Kind = Literal["loop", "inspector"]
Theme = Literal["light", "dark"]
_ids = itertools.count(1)

# JupyterLab's variables the widget CSS reads, for a page with no JupyterLab around it
_THEMES: dict[Theme, str] = {
    "light": "",
    "dark": ("--jp-layout-color0:#111111;--jp-layout-color1:#1e1e1e;--jp-layout-color2:#2b2b2b;"
             "--jp-ui-font-color0:#f2f2f2;--jp-ui-font-color1:#dddddd;--jp-ui-font-color2:#b5b5b5;"
             "--jp-border-color1:#5a5a5a;--jp-border-color2:#3c3c3c;--jp-brand-color1:#64b5f6;"
             "--jp-success-color1:#81c784;--jp-warn-color1:#ffb74d;--jp-error-color1:#ef9a9a;"),
}
_PAGE_CSS = ("body{margin:0;padding:16px 20px;font-family:system-ui,sans-serif;background:var(--jp-layout-color0,#fff);"
             "color:var(--jp-ui-font-color0,#1f2328)}.dsh-export-intro{margin:0 0 12px;font-size:14px}"
             ".dsh-export-intro code{font-size:13px}.dsh-export{margin-bottom:18px}")
FALLBACK_MAX_EVENTS = 5_000
"""A widget output embeds its replay only up to this many events (a notebook stays small;
``export-html`` has no limit)."""
CSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:"


@dataclass(frozen=True)
class Embedded:
    """A session as an exported page embeds it: what ``js/src/static.ts`` reads."""

    session_id: str
    header: SessionHeader
    events_json: str  # the log's event lines as one JSON array, byte for byte
    info: dict[str, JsonValue]
    count: int  # how many events (the last seq + 1)

    def models_used(self) -> set[tuple[str, str]]:
        """The ``(provider, model)`` of every request the session froze."""
        events = json.loads(self.events_json)
        return {(str(e.get("provider", "")), str(e.get("model", ""))) for e in events
                if isinstance(e, dict) and tag(e) == "request/frozen"}

    def to_json(self) -> str:
        from ..models.price_table import pricing_table  # the same table the live widgets get

        return (f'{{"sessionId":{json.dumps(self.session_id)},"header":{json.dumps(dump(self.header))},'
                f'"info":{json.dumps(self.info)},"pricing":{json.dumps(pricing_table(self.models_used()))},'
                f'"events":{self.events_json}}}')


def embedded(header: SessionHeader, lines: Sequence[str], info: dict[str, JsonValue]) -> Embedded:
    return Embedded(header.id, header, "[" + ",".join(line.strip() for line in lines) + "]", info, len(lines))


def embedded_events(header: SessionHeader, events: Sequence[Any], model: str | None = None) -> Embedded:
    """From typed events in memory (a live session of this kernel)."""
    lines = [json.dumps(dump(e), ensure_ascii=False, separators=(",", ":")) for e in events]
    info: dict[str, JsonValue] = {"sessionId": header.id, "cwd": header.cwd, "model": model, "status": "idle",
                                  "live": False, "lastSeq": len(lines) - 1}
    return embedded(header, lines, info)


def load(target: str) -> Embedded:
    """A session id (under ``$DSH_HOME/sessions``) or a log path → what the page embeds."""
    from ..session.inspect import resolve_target
    from ..session.saved import read_saved

    saved = read_saved(resolve_target(target))
    return embedded(saved.header, saved.lines, dump(saved.info("script:auto")))


def _bundle() -> tuple[str, str]:
    js, css = STATIC / "standalone.js", STATIC / "widget.css"
    if not js.is_file() or not css.is_file():
        raise UserError(f"the widget bundle is missing ({js}); build it with `make widget` "
                        "(or `cd js && npm run build`)", code="BUNDLE_MISSING")
    return js.read_text(encoding="utf-8"), css.read_text(encoding="utf-8")


def _script_safe(text: str) -> str:
    """Text that cannot end the <script> or <style> element holding it."""
    return text.replace("</", "<\\/").replace("<!--", "<\\!--")


def page_snippet(data: Embedded, kinds: Sequence[Kind] = ("loop", "inspector"), *, theme: Theme = "light") -> str:
    """The replay as an HTML fragment: its own copy of the bundle, the session, a mount point per kind."""
    js, css = _bundle()
    sid = f"dsh-session-{os.getpid()}-{next(_ids)}"
    payload = data.to_json().replace("<", "\\u003c")  # no "</script>" inside; still the same JSON
    mounts = "".join(f'<div class="dsh-export" data-dsh-session="{sid}" data-kind="{k}"></div>' for k in kinds)
    style = f"<style>{_script_safe(css)}</style>"
    palette = _THEMES[theme]
    wrap = f'<div class="dsh-export-page dsh-theme-{theme}" style="{palette}">' if palette else "<div class=\"dsh-export-page\">"
    return (f"{style}{wrap}{mounts}</div>"
            f'<script type="application/vnd.dsh-session+json" id="{sid}">{payload}</script>'
            f"<script>{_script_safe(js)}</script>")


def export_page(data: Embedded, *, theme: Theme = "light") -> str:
    """A whole HTML document: no request leaves it (Content-Security-Policy ``default-src 'none'``)."""
    title = f"dsh session {data.session_id}"
    cwd = html.escape(data.header.cwd or "-")
    intro = (f'<p class="dsh-export-intro"><b>{html.escape(title)}</b> · workspace <code>{cwd}</code> · '
             f"{data.count:,} events · exported with <code>python -m dsh_notebook export-html</code>: a replay, "
             "no kernel (play, or click a stage).</p>")
    return ("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
            '<meta name="viewport" content="width=device-width, initial-scale=1">'
            f"<title>{html.escape(title)}</title><style>:root{{{_THEMES[theme]}}}{_PAGE_CSS}</style></head>"
            f"<body>{intro}{page_snippet(data, theme=theme)}</body></html>\n")


def _umask() -> int:
    """The process's umask, read without changing it (Linux), else set and put back at once."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def write_page(target: str, output: str | os.PathLike[str], *, theme: Theme = "light") -> Path:
    """Export ``target`` to ``output``; coded errors for a missing session or an unwritable file."""
    page = export_page(load(target), theme=theme)
    out = Path(output).expanduser()
    if out.is_dir():
        raise UserError(f"cannot write {out}: it is a directory; name the .html file", code="OUTPUT_NOT_WRITABLE")
    tmp: str | None = None
    try:  # written whole; a page to share (a web folder serves it): 0666 less the umask, as any
        # new file — not mkstemp's 0600 (the session's own files stay 0600)
        fd, tmp = tempfile.mkstemp(prefix=f".{out.name}.", suffix=".tmp", dir=out.parent)
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(page)
        os.replace(tmp, out)
        tmp = None
    except OSError as exc:
        raise UserError(f"cannot write {out}: {exc.strerror or exc}", code="OUTPUT_NOT_WRITABLE") from None
    finally:
        if tmp is not None:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
    return out


def export_main(args: Any) -> int:
    """``python -m dsh_notebook export-html ID_OR_PATH -o FILE.html [--theme light|dark]``."""
    out = write_page(args.target, args.output, theme=args.theme)
    print(f"wrote {out} ({out.stat().st_size // 1024} KB): open it in a browser, no kernel or network needed")
    return 0

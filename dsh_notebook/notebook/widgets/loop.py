"""The widgets: the six-stage tool feedback loop of seed 000 (:class:`LoopWidget`) and the
:class:`SessionInspector`, anywidget front ends bundled from ``js/`` into ``dsh_notebook/static``.

Both speak the seed's path: the browser's Client → Remote → Connection sends ``client-request``
envelopes (with rpcIds) and stream ``open``/``cancel`` through anywidget custom messages; here a
:class:`~.comm_transport.WidgetBridge` hands them to the Host's connection handler (Gateway →
Controller) and sends replies and follow items back, coalesced. A saved log given by path is
served read-only by the Host's :class:`~dsh_notebook.host.saved.ReadOnlyController`, through the
same Descriptors and Gateway (``session/info``, ``session/follow``; anything else ``READ_ONLY``).

    LoopWidget("s_0123456789ab")          # follow a live (or saved) session of this kernel's Host
    LoopWidget()                          # the prompt box creates a session on first send
    LoopWidget(path="~/.dsh/sessions/s_….jsonl")   # replay a saved log
    SessionInspector("s_0123456789ab")    # or SessionInspector("/path/to/log.jsonl")
"""

from __future__ import annotations

import importlib
import os
import re
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any

import anywidget
import traitlets
from pydantic import JsonValue

from ...errors import DshError, HostError
from ...models.price_table import pricing_table
from .checks import check_create_args, check_session, target_text
from .comm_transport import Connect, HostConnection, WidgetBridge

if TYPE_CHECKING:
    from ...session.saved import SavedLog

STATIC = Path(__file__).resolve().parents[2] / "static"
_SESSION_ID = re.compile(r"^s_[0-9a-zA-Z_-]+$")

_MISSING_BUNDLE = """
export default { render({ el }) {
  const d = document.createElement("div");
  d.style.cssText = "color:#d32f2f;border:1px solid #d32f2f;border-radius:6px;padding:8px";
  d.textContent = "dsh widget: the front-end bundle dsh_notebook/static/widget.js is missing. "
    + "Build it with `make widget` (or `cd js && npm install && npm run build`).";
  el.append(d);
  return () => d.remove();
} };
"""


def _esm() -> Path | str:
    path = STATIC / "widget.js"
    return path if path.exists() else _MISSING_BUNDLE


def _css() -> Path | str:
    path = STATIC / "widget.css"
    return path if path.exists() else ""


def _looks_like_path(value: str) -> bool:
    return (value.endswith(".jsonl") or os.sep in value or value.startswith("~") or value in ("", ".")
            or (not _SESSION_ID.match(value) and Path(value).exists()))


def _prebuild(saved: SavedLog, index_first: bool) -> None:
    # after the host's modules have loaded (another thread imports them now: the first rows wait
    # on that, and this work would only slow it), on this thread, not the kernel's
    importlib.import_module("dsh_notebook.host.host")
    from ...host.pages import prebuild

    prebuild(saved, index_first=index_first)


def _running_host() -> Any:
    from ...host.host import Host

    return Host.current()


class _SessionWidget(anywidget.AnyWidget):  # type: ignore[misc]
    """Common part: the bundle, the synced traits and the comm bridge."""

    _esm = _esm()
    _css = _css()
    kind = traitlets.Unicode("loop").tag(sync=True)
    session_id = traitlets.Unicode("").tag(sync=True)
    readonly = traitlets.Bool(False).tag(sync=True)
    error = traitlets.Unicode("").tag(sync=True)
    create_args = traitlets.Dict().tag(sync=True)
    present = traitlets.Bool(False).tag(sync=True)
    """Presenter mode: text ≥ 18 px, the stages as a grid, each stage held until "next" (the
    header's "Present" toggle, ``%dsh show --present``, ``LoopWidget(..., present=True)``)."""
    pricing = traitlets.Dict().tag(sync=True)
    """The price table the browser folds tokens into cost and context fill with (models/price_table.py)."""
    window = traitlets.Int(2000).tag(sync=True)
    """The most events the browser holds (0: all): a longer session's rest is read in pages
    (``session/page``), so a 100,000-event session opens as fast as a short one — the inspector's
    rows, the loop widget's parts around the call shown (the history at any seq, a frozen
    request's messages and the totals from the kernel too)."""

    def __repr__(self) -> str:
        """Cheap and readable where no widget can render (text output, headless runs)."""
        path = getattr(self, "log_path", None)
        target = str(path) if path is not None else self.session_id or "a new session"
        if self.error and not self.error.startswith("note:"):  # the error box's line, not a blank widget
            return f"<{type(self).__name__} of {target}: {self.error}>"
        return (f"<{type(self).__name__} of {target}: the widget renders in JupyterLab, Notebook 7 "
                "or VS Code; `%dsh show --no-widget` prints the events as text>")

    def __init__(self, session_id: str | None = None, *, path: str | os.PathLike[str] | None = None,
                 host: Any = None, interval: float = 0.05, window: int | None = None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        if window is not None:
            if isinstance(window, bool) or not isinstance(window, int) or window < 0:
                raise HostError(f"window must be a whole number of events (0: all), not {window!r}", code="BAD_ARGS")
            self.window = window
        self.pricing = pricing_table()
        self._host = host
        self.log_path: Path | None = None
        self._saved_count = -1  # events of the saved log (path), when read
        if path is None and session_id and _looks_like_path(str(session_id)):
            path, session_id = session_id, None
        connect: Connect
        if path is not None:
            connect = self._saved_log(Path(path).expanduser())
            self.readonly = True
        else:
            self.session_id = session_id or ""
            connect = self._host_connect
            if self.session_id:
                self.error = check_session(self._host or _running_host(), self.session_id)
        self.bridge = WidgetBridge(self._send_batch, connect, interval=interval, send_buffers=self._send_buffered)
        self.on_msg(self._on_custom)

    def _repr_mimebundle_(self, **kwargs: Any) -> Any:
        """The widget view, plus a ``text/html`` fallback: the same replay as an exported page
        (observe/export_html.py), shown where no widget manager renders the view — ``jupyter
        nbconvert --to html`` of a notebook saved without widget state, GitHub's viewer."""
        bundle = super()._repr_mimebundle_(**kwargs)
        if bundle is None:
            return None
        data, meta = bundle
        fallback = self.static_html()
        return ({**data, "text/html": fallback} if fallback else data), meta

    def static_html(self) -> str | None:
        """This widget's replay as an HTML fragment with no kernel behind it (``None`` when there
        is nothing to replay yet or the bundle is not built)."""
        from ...observe.export_html import FALLBACK_MAX_EVENTS, embedded_events, load, page_snippet
        from ...wire.log import SessionHeader

        try:
            if self.log_path is not None:
                if self._saved_count > FALLBACK_MAX_EVENTS:
                    return None  # too big to copy into every output (and not read twice to learn it)
                data = load(str(self.log_path))
            elif self.session_id:
                from ...launcher import process_host

                host = self._host or process_host()
                sid = self.session_id

                def live_events() -> tuple[SessionHeader, list[Any], str | None] | int | None:
                    """On the host loop (the agent appends there): the live session's events, or only
                    their number when there are too many to copy; ``None`` when it is not live."""
                    live = host.registry.live.get(sid)
                    if live is None:
                        return None
                    s = live.session
                    if len(s.events) > FALLBACK_MAX_EVENTS:
                        return len(s.events)
                    return SessionHeader(id=s.id, cwd=s.cwd, created_at=s.created_at), list(s.events), live.model

                snapshot = host.call(live_events, timeout=5.0)
                if isinstance(snapshot, int):
                    return None  # too big to copy into every output: `export-html` shares it
                if snapshot is not None:
                    data = embedded_events(*snapshot)
                elif host.registry.store.path_for(self.session_id).is_file():
                    data = load(str(host.registry.store.path_for(self.session_id)))
                else:
                    return None
            else:
                return None
            if data.count > FALLBACK_MAX_EVENTS:
                return None  # too big to copy into every output: `export-html` shares it
            return page_snippet(data, ("inspector",) if self.kind == "inspector" else ("loop",))
        except (DshError, OSError, ValueError):
            return None  # the widget view still renders; only the fallback is missing

    # -- sources ----------------------------------------------------------------------------
    def _saved_log(self, path: Path) -> Connect:
        from ...session.saved import read_saved_fast

        if self._host is None and "dsh_notebook.host.host" not in sys.modules:
            # the host's modules (agent, tools: ~1 s) load while the browser loads and renders the
            # view, not after the view asks for the log (only the import: no host is started here)
            threading.Thread(target=importlib.import_module, args=("dsh_notebook.host.host",), daemon=True,
                             name="dsh-host-import").start()
        self.log_path = path
        saved: SavedLog | DshError
        try:
            saved = read_saved_fast(path)  # validated part by part as the follow sends it
            self._saved_count = len(saved.lines)
            if self.window and len(saved.lines) > self.window:
                # the browser will read this log in pages: index it while the browser loads the view
                threading.Thread(target=_prebuild, args=(saved, self.kind == "loop"), daemon=True,
                                 name="dsh-pages-prebuild").start()
            self.session_id = saved.session_id
            if saved.warnings:
                self.error = f"note: {'; '.join(saved.warnings)}"
        except DshError as exc:
            saved = exc
            self.session_id = path.stem
            self.error = f"{exc.code}: {exc.message}"
        except Exception as exc:  # never a blank widget: say what happened
            saved = HostError(f"cannot read {path}: {exc}", code="LOG_CORRUPT")
            self.session_id = path.stem
            self.error = f"LOG_CORRUPT: cannot read {path}: {exc}"

        def connect(send: Any) -> HostConnection:
            if self._host is None:
                from ...launcher import process_host

                self._host = process_host()
            conn: HostConnection = self._host.connect_saved(send, saved, caller="widget-replay")
            return conn

        return connect

    def _host_connect(self, send: Any) -> HostConnection:
        if self._host is None:
            from ...launcher import process_host

            self._host = process_host()
        conn: HostConnection = self._host.connect(send, caller="widget")
        return conn

    # -- comm -------------------------------------------------------------------------------
    def _send_batch(self, message: dict[str, JsonValue]) -> None:
        self.send(message)

    def _send_buffered(self, message: dict[str, JsonValue], buffers: list[bytes]) -> None:
        self.send(message, buffers)

    def _on_custom(self, _widget: Any, content: Any, _buffers: Any) -> None:
        self.bridge.handle(content)

    def close(self) -> None:
        bridge = getattr(self, "bridge", None)
        if bridge is not None:
            bridge.close()
        super().close()

    @property
    def messages_sent(self) -> int:
        """Custom messages this widget sent to the front end (batches)."""
        return self.bridge.batcher.messages_sent


class LoopWidget(_SessionWidget):
    """The six stages of seed 000 for a real session: diagram, three views, playback, prompt box.

    ``session_id``: follow that session of this kernel's Host (live, or saved and replayed).
    ``None``: the prompt box creates a session (``model``/``mode``/``approve``/``cwd``/``base_url``
    are passed to ``session/create``; the header's mode selector also picks its mode). ``path``:
    replay a saved log read-only.
    """

    def __init__(self, session_id: str | None = None, *, path: str | os.PathLike[str] | None = None,
                 model: str | None = None, approve: str | None = None, cwd: str | None = None,
                 base_url: str | None = None, host: Any = None, interval: float = 0.05, present: bool = False,
                 mode: str | None = None, window: int | None = None) -> None:
        create = {k: v for k, v in {"model": model, "approve": approve, "cwd": cwd, "baseUrl": base_url,
                                    "mode": mode}.items() if v}
        super().__init__(session_id, path=path, host=host, interval=interval, kind="loop", create_args=create,
                         present=bool(present), window=window)
        if not self.session_id and not self.readonly:
            self.error = check_create_args(model, approve, cwd, base_url, mode)


class SessionInspector(_SessionWidget):
    """The whole event log: virtualised timeline, filters, search, jump, provenance, derived
    messages at any seq, request diff. ``session_id_or_path``: an id of this kernel's Host
    (live or saved) or the path of a log file."""

    #: the event to select and scroll into view once it has arrived (-1: none); compare's link sets it
    selected_seq = traitlets.Int(-1).tag(sync=True)

    def __init__(self, session_id_or_path: str | os.PathLike[str], *, host: Any = None,
                 interval: float = 0.05, present: bool = False, selected_seq: int = -1, window: int | None = None) -> None:
        value = target_text(session_id_or_path, "SessionInspector")
        path = value if _looks_like_path(value) else None
        super().__init__(None if path else value, path=path, host=host, interval=interval, kind="inspector",
                         present=bool(present), window=window)
        self.selected_seq = int(selected_seq)


__all__ = ["LoopWidget", "SessionInspector"]

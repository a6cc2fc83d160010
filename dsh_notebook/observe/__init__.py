"""Observers of live sessions that feed tools outside the log: the cross-session search index
(:mod:`.search`, :mod:`.indexer`) and the OpenTelemetry trace export (:mod:`.otel`).

Both are built from the events, off the host loop, and never the only copy of anything.
:func:`attach` subscribes them to a live session (the launcher hands it to every host it builds,
which attaches it to every session it runs: :mod:`dsh_notebook.launcher`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path

from ..errors import DshError
from ..session.session import Session

log = logging.getLogger(__name__)
_warned: list[str] = []


def attach(session: Session, *, home: str | Path, log_path: str | Path) -> Callable[[], None]:
    """Subscribe the search indexer (and, when configured, the OTLP exporter) to ``session``.
    Returns the function that detaches them."""
    from .indexer import index_writer

    writer = index_writer()
    undo = [session.subscribe(writer.observer(home, log_path))]
    try:
        from .otel import live_exporter

        exporter = live_exporter()
        if exporter is not None:
            undo.append(session.subscribe(exporter.observer(session.id)))
    except DshError as exc:  # e.g. the otel extra is not installed: say so once
        if not _warned:
            _warned.append(exc.code)
            log.warning("OpenTelemetry export is off: %s", exc)
    except Exception:  # telemetry never stops a session
        log.exception("OpenTelemetry export could not start")

    def detach() -> None:
        for u in undo:
            u()
        writer.touch(home, log_path)

    return detach

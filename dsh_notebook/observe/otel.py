"""OpenTelemetry traces of sessions, built from the events (issue 12 item 5).

With ``OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`` or ``OTEL_EXPORTER_OTLP_ENDPOINT`` set (and the
``otel`` extra installed: ``pip install dsh-notebook[otel]``), every live turn is exported over
OTLP/HTTP by the official SDK when it ends; ``python -m dsh_notebook export-otel ID_OR_PATH``
sends a saved session the same way. One trace per turn::

    invoke_agent dsh            gen_ai.operation.name=invoke_agent   (the turn)
    └── step N                  dsh.step
        ├── chat MODEL          gen_ai.operation.name=chat, gen_ai.request.model, gen_ai.usage.*
        └── execute_tool NAME   gen_ai.operation.name=execute_tool, gen_ai.tool.name, gen_ai.tool.call.id

Every span carries ``gen_ai.conversation.id`` (the session id) and ``gen_ai.provider.name``;
its start and end are the log's times (:mod:`dsh_notebook.analysis.stats`). Message content —
prompts, answers, tool arguments and results — is added only when
``OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true`` (redacted); keys never. The spans are
built off the host loop: the session observer only collects a turn's events and hands them to a
worker thread; the SDK's batch processor exports in its own thread.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import queue
import threading
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from ..errors import UserError
from ..wire.events import AnyEvent, ExternalCall, ExternalResult, TurnEnd, TurnStart
from .otel_spans import build_turn_spans

log = logging.getLogger(__name__)
ENDPOINT_ENVS = ("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT", "OTEL_EXPORTER_OTLP_ENDPOINT")
CAPTURE_ENV = "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT"


def configured(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    if (env.get("OTEL_SDK_DISABLED") or "").strip().lower() == "true":
        return False
    return any((env.get(name) or "").strip() for name in ENDPOINT_ENVS)


def describe(environ: Mapping[str, str] | None = None) -> str:
    """What ``%dsh config`` shows for the trace export."""
    env = os.environ if environ is None else environ
    if not configured(env):
        return "off (set OTEL_EXPORTER_OTLP_ENDPOINT)"
    where = next(env[n] for n in ENDPOINT_ENVS if (env.get(n) or "").strip())
    return where + (" (with message content)" if capture_content(env) else "")


def capture_content(environ: Mapping[str, str] | None = None) -> bool:
    env = os.environ if environ is None else environ
    return (env.get(CAPTURE_ENV) or "").strip().lower() in ("true", "1", "yes")


def _sdk() -> Any:
    try:
        from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
        from opentelemetry.sdk.resources import Resource
        from opentelemetry.sdk.trace import TracerProvider
    except ImportError:
        raise UserError("OpenTelemetry export needs the otel extra: pip install 'dsh-notebook[otel]'",
                        code="MISSING_DEPENDENCY") from None
    return OTLPSpanExporter, Resource, TracerProvider


def _provider(processor: Any) -> Any:
    _, resource_cls, provider_cls = _sdk()
    attrs = {} if os.environ.get("OTEL_SERVICE_NAME") else {"service.name": "dsh_notebook"}
    provider = provider_cls(resource=resource_cls.create(attrs), shutdown_on_exit=False)
    provider.add_span_processor(processor)
    return provider


class LiveExporter:
    """Exports each live turn when it ends. One per process (:func:`live_exporter`)."""

    def __init__(self) -> None:
        exporter_cls, _, _ = _sdk()
        from opentelemetry.sdk.trace.export import BatchSpanProcessor

        self.provider = _provider(BatchSpanProcessor(exporter_cls()))
        self.tracer = self.provider.get_tracer("dsh_notebook")
        self.capture = capture_content()
        self._queue: queue.Queue[tuple[str, list[AnyEvent]] | None] = queue.Queue()
        self._thread = threading.Thread(target=self._run, name="dsh-otel", daemon=True)
        self._thread.start()

    def observer(self, session_id: str) -> Callable[[AnyEvent], None]:
        turn: list[AnyEvent] = []

        reads: dict[str, AnyEvent] = {}  # external calls outside turns, until their result

        def on_event(event: AnyEvent) -> None:
            if isinstance(event, ExternalCall) and event.turn is None:
                reads[event.call_id] = event
                return
            if isinstance(event, ExternalResult) and event.turn is None:
                call = reads.pop(event.call_id, None)
                if call is not None:  # an external read: its span at once
                    self._queue.put((session_id, [call, event]))
                return
            if isinstance(event, TurnStart):
                turn.clear()
            turn.append(event)
            if isinstance(event, TurnEnd):
                self._queue.put((session_id, list(turn)))
                turn.clear()

        return on_event

    def _run(self) -> None:
        while True:
            item = self._queue.get()
            try:
                if item is None:
                    return
                build_turn_spans(self.tracer, item[0], item[1], capture=self.capture)
            except Exception:
                log.exception("building the spans of a turn failed")
            finally:
                self._queue.task_done()

    def flush(self, timeout_s: float = 10.0) -> bool:
        """Build what is queued and export it now."""
        self._queue.join()
        return bool(self.provider.force_flush(int(timeout_s * 1000)))

    def shutdown(self) -> None:
        self.flush()
        self.provider.shutdown()


_live: LiveExporter | None = None
_live_lock = threading.Lock()


def live_exporter() -> LiveExporter | None:
    """The process's exporter when an OTLP endpoint is configured (else ``None``)."""
    global _live
    if not configured():
        return None
    with _live_lock:
        if _live is None:
            _live = LiveExporter()
            atexit.register(_live.shutdown)
        return _live


def _collector() -> Any:
    """A span processor that keeps the finished spans (to export them in one checked call)."""
    from opentelemetry.sdk.trace import SpanProcessor

    class Collect(SpanProcessor):
        def __init__(self) -> None:
            self.spans: list[Any] = []

        def on_end(self, span: Any) -> None:
            self.spans.append(span)

    return Collect()


def export_session(session_id: str, events: Sequence[AnyEvent], *, endpoint: str | None = None) -> int:
    """Send a saved session's turns to the OTLP endpoint; returns the number of spans sent."""
    exporter_cls, _, _ = _sdk()
    from opentelemetry.sdk.trace.export import SpanExportResult

    if endpoint is None and not configured():
        raise UserError("no OTLP endpoint: set OTEL_EXPORTER_OTLP_ENDPOINT (or pass --endpoint)", code="BAD_CONFIG")
    collect = _collector()
    provider = _provider(collect)
    tracer = provider.get_tracer("dsh_notebook")
    turn: list[AnyEvent] = []
    for event in events:
        if isinstance(event, TurnStart) and turn:
            build_turn_spans(tracer, session_id, turn, capture=capture_content())
            turn = []
        turn.append(event)
    if turn:
        build_turn_spans(tracer, session_id, turn, capture=capture_content())
    if not collect.spans:
        return 0
    exporter = exporter_cls(endpoint=endpoint) if endpoint else exporter_cls()
    try:
        result = exporter.export(collect.spans)
    finally:
        exporter.shutdown()
    if result is not SpanExportResult.SUCCESS:
        where = endpoint or next(os.environ[n] for n in ENDPOINT_ENVS if os.environ.get(n))
        raise UserError(f"the OTLP endpoint {where} did not accept the spans", code="OTLP_EXPORT_FAILED")
    return len(collect.spans)


def export_main(args: Any) -> int:
    """``python -m dsh_notebook export-otel ID_OR_PATH [--endpoint URL]``."""
    from ..session.inspect import inspect_log, resolve_target

    report = inspect_log(resolve_target(args.target))
    session_id = report.header.id or resolve_target(args.target).stem
    n = export_session(session_id, report.events, endpoint=args.endpoint)
    print(json.dumps({"sessionId": session_id, "spans": n}))
    return 0

"""A real OTLP/HTTP trace receiver on loopback: ``POST /v1/traces`` with a protobuf
``ExportTraceServiceRequest`` (decoded with ``opentelemetry-proto``), spans kept for assertions."""

from __future__ import annotations

import gzip
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)


def _value(v: Any) -> Any:
    kind = v.WhichOneof("value")
    return getattr(v, kind) if kind else None


@dataclass
class ReceivedSpan:
    name: str
    span_id: bytes
    parent_id: bytes
    trace_id: bytes
    start_ns: int
    end_ns: int
    attributes: dict[str, Any]
    events: list[tuple[str, int]]
    status_code: int
    resource: dict[str, Any] = field(default_factory=dict)


class OTLPReceiver:
    def __init__(self) -> None:
        self.spans: list[ReceivedSpan] = []
        self.posts = 0
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 (http.server's name)
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                if self.headers.get("content-encoding") == "gzip":
                    body = gzip.decompress(body)
                if self.path != "/v1/traces":
                    self.send_response(404)
                    self.end_headers()
                    return
                receiver._store(ExportTraceServiceRequest.FromString(body))
                out = ExportTraceServiceResponse().SerializeToString()
                self.send_response(200)
                self.send_header("content-type", "application/x-protobuf")
                self.send_header("content-length", str(len(out)))
                self.end_headers()
                self.wfile.write(out)

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def _store(self, req: ExportTraceServiceRequest) -> None:
        with self._lock:
            self.posts += 1
            for rs in req.resource_spans:
                resource = {a.key: _value(a.value) for a in rs.resource.attributes}
                for ss in rs.scope_spans:
                    for s in ss.spans:
                        self.spans.append(ReceivedSpan(
                            s.name, s.span_id, s.parent_span_id, s.trace_id, s.start_time_unix_nano,
                            s.end_time_unix_nano, {a.key: _value(a.value) for a in s.attributes},
                            [(e.name, e.time_unix_nano) for e in s.events], s.status.code, resource))

    def __enter__(self) -> OTLPReceiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

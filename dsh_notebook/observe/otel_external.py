"""The spans of external agents' calls (issue 41): GenAI ``execute_tool`` spans naming the client.

An external call (``external/call`` … ``external/result``) is an ``execute_tool {tool}`` span:
``gen_ai.tool.name``, ``gen_ai.tool.call.id``, ``gen_ai.tool.type`` ``extension``, and the agent
that called it — ``gen_ai.agent.name`` the MCP client's name (``claude-code``),
``dsh.external.client.version``, ``dsh.external.mcp_session_id``. A call of an external turn is a
child of that turn's ``invoke_agent`` span; a read is a span of its own. Arguments and results
(masked) only with content capture, as for the agent's own tools.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..errors import redact
from ..wire.events import AnyEvent, ExternalCall, ExternalResult

if TYPE_CHECKING:
    from opentelemetry.util.types import AttributeValue

_NS = 1_000_000


def external_spans(tracer: Any, base: Mapping[str, Any], events: Sequence[AnyEvent], turn_ctx: Mapping[int, Any],
                   *, capture: bool = False) -> int:
    """Start and end a span per external call in ``events``; ``turn_ctx``: the contexts of the turn
    spans (by turn) a call of an external turn belongs to. Returns how many."""
    results = {e.call_id: e for e in events if isinstance(e, ExternalResult)}
    last_ms = max((e.time for e in events), default=0)
    n = 0
    for call in (e for e in events if isinstance(e, ExternalCall)):
        result = results.get(call.call_id)
        attrs: dict[str, AttributeValue] = {**base, "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": call.tool,
                                 "gen_ai.tool.call.id": call.call_id, "gen_ai.tool.type": "extension",
                                 "gen_ai.agent.name": call.client.name, "dsh.seq": call.seq, "dsh.external": True}
        if call.client.version:
            attrs["dsh.external.client.version"] = call.client.version
        if call.mcp_session_id:
            attrs["dsh.external.mcp_session_id"] = call.mcp_session_id
        if call.notebook:
            attrs["dsh.external.notebook"] = call.notebook
        if capture:
            attrs["gen_ai.tool.call.arguments"] = redact(call.arguments)
            if result is not None:
                attrs["gen_ai.tool.call.result"] = redact("\n".join(p.text or "" for p in result.content if p.text))
        ctx = turn_ctx.get(call.turn) if call.turn is not None else None
        span = tracer.start_span(f"execute_tool {call.tool}", context=ctx, start_time=call.time * _NS, attributes=attrs)
        if result is not None and result.error is not None:
            from opentelemetry.trace import Status, StatusCode

            span.set_attribute("error.type", result.error.code)
            span.set_status(Status(StatusCode.ERROR, result.error.code))
        span.end(end_time=(result.time if result is not None else last_ms) * _NS)
        n += 1
    return n

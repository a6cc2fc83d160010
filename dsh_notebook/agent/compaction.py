"""Context management (issue 13 item 2): estimate a request's size, and **compact** — replace the
older surface nodes of a session by one model-written summary.

**Estimate.** :func:`estimate_tokens` is deliberately cheap and provider-neutral: one token per
4 characters of every text, reasoning and tool-call block (name + raw arguments) and of the tool
schemas' JSON, plus 4 tokens of overhead per message and 3 for the reply's priming. It is an
estimate (real tokenisers differ by ±30 % on code and non-English text), which is why the
threshold (``DSH_COMPACT_THRESHOLD``, default 0.8 of the window) leaves room, and why a
provider's context-length error (``CONTEXT_OVERFLOW``) compacts too.

**When.** Before each step's request, when ``estimate > threshold × window`` (the window from
:func:`dsh_notebook.session.catalog.context_window`; unknown → never proactively); when the
provider answers ``CONTEXT_OVERFLOW`` (then the request is retried once, compacted); on demand
(``%dsh compact``, ``python -m dsh_notebook compact ID``, endpoint ``session/compact``).

**What.** The range is contiguous surface nodes from the first non-system node up to the
current turn (older turns); if the current turn is all there is, up to the last safe cut inside
it. A cut is *safe* when no assistant tool-call message in the range lacks a result in the range
(pairing is never split). The system prompt nodes are never part of a range.

**How it is logged** (two facts, in this order):

1. ``user/message`` with ``surfaceOp: {op: "replace", startSeq, endSeq}``, ``sourceEventSeqs``
   = every replaced node, and the summary as its message (``source: {kind: "plugin", plugin:
   "dsh/compaction", form: "summary"}``) — the surface change itself, so ``derive_messages``,
   resume and replay need nothing new;
2. ``context/compacted`` — ``{turn, summarySeq, startSeq, endSeq, replaced, trigger, tokensBefore,
   tokensAfter, contextWindow?, provider, model, usage?}`` with ``sourceEventSeqs: [summarySeq]``:
   why it happened and what it saved (what ``show``, the cell and the widgets display).

The summary is a real model request (the session's own model, no tools) with
:data:`SUMMARY_SYSTEM` and a plain-text transcript of the range (long tool outputs clipped).
"""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import ModelError, SessionError
from ..models.base import BlockEnd, ModelAdapter, ModelRequest, TextDelta, UsageChunk
from ..session.history import MessageHistory, message_chars
from ..session.session import Session
from ..wire.events import (
    AssistantMessageEvent,
    ContextCompacted,
    ReplaceOp,
    SystemMessageEvent,
    ToolResult,
    ToolSchema,
    Usage,
    UserMessageEvent,
)
from ..wire.messages import (
    AnyMessage,
    AssistantMessage,
    MessageSource,
    SystemMessage,
    TextBlock,
    ToolMessage,
    UserMessage,
)

Trigger = Literal["threshold", "context-length", "manual"]
PLUGIN = "dsh/compaction"
SUMMARY_HEADER = "Summary of the earlier conversation (compacted; the original messages are in the session log):"
SUMMARY_SYSTEM = (
    "You compact the history of a coding agent's conversation so the agent can continue the task "
    "without it. Write a concise summary in the conversation's language: the user's goals and "
    "requests, decisions made, files read or changed (with paths), commands run and their results, "
    "errors met, and what remains to do. Keep exact names, paths, numbers and identifiers. Do not "
    "invent anything and do not address the user; output only the summary."
)
CLIP = 2000  # characters kept of one message in the transcript
OVERFLOW_ADVICE = (
    "To go on: compact the session (%dsh compact, or python -m dsh_notebook compact ID), give the "
    "model's real window if it is larger (--context-window N), leave more room for the prompt with a "
    "smaller --max-tokens N, or ask for less at once (a narrower read, fewer or smaller files)"
)


def overflow_error(exc: ModelError) -> ModelError:
    """``CONTEXT_OVERFLOW`` that says what to change (:data:`OVERFLOW_ADVICE`), once."""
    if exc.code != "CONTEXT_OVERFLOW" or OVERFLOW_ADVICE in exc.message:
        return exc
    return ModelError(f"{exc.message.rstrip('. ')}. {OVERFLOW_ADVICE}.", code=exc.code, retryable=False,
                      status=exc.status, retry_after_ms=exc.retry_after_ms)


def estimate_tokens(messages: Sequence[AnyMessage], tools: Sequence[ToolSchema] = (),
                    pending: Sequence[AnyMessage] = ()) -> int:
    """A cheap token estimate of a request (see the module docstring): chars/4 + 4 per message,
    of ``messages`` then ``pending``. A Session's history counts only its new messages (its
    running totals, :meth:`MessageHistory.chars`): a step's estimate does not grow with the log."""
    chars = messages.chars() if isinstance(messages, MessageHistory) else sum(message_chars(m) for m in messages)
    chars += sum(message_chars(m) for m in pending)
    chars += sum(schema_chars(t) for t in tools)
    return math.ceil(chars / 4) + 4 * (len(messages) + len(pending)) + 3


_SCHEMA_CHARS: dict[int, tuple[ToolSchema, int]] = {}  # id → (the schema, kept alive; its JSON length)


def schema_chars(tool: ToolSchema) -> int:
    """The JSON length of a tool's definition, measured once per schema object (a registry keeps
    its schemas: a step's estimate no longer serialises every tool again)."""
    hit = _SCHEMA_CHARS.get(id(tool))
    if hit is not None and hit[0] is tool:
        return hit[1]
    n = len(json.dumps(tool.model_dump(mode="json"), ensure_ascii=False))
    if len(_SCHEMA_CHARS) >= 4096:  # schemas rebuilt over and over (scope tools): start afresh
        _SCHEMA_CHARS.clear()
    _SCHEMA_CHARS[id(tool)] = (tool, n)
    return n


@dataclass(frozen=True)
class CompactionPlan:
    """Which surface nodes to replace: ``seqs`` (in surface order) and their messages."""

    seqs: tuple[int, ...]
    messages: tuple[AnyMessage, ...]

    @property
    def start_seq(self) -> int:
        return self.seqs[0]

    @property
    def end_seq(self) -> int:
        return self.seqs[-1]


def _safe_cuts(session: Session, nodes: Sequence[int], start: int) -> list[int]:
    """Node indexes ``k > start`` such that replacing ``nodes[start:k]`` splits no tool-call pair
    and holds no system node (``len(nodes)`` when the whole rest may go)."""
    events = session.events
    open_calls: set[str] = set()
    cuts: list[int] = []
    for k in range(start, len(nodes)):
        event = events[nodes[k]]
        if k > start and not open_calls and not isinstance(event, ToolResult):
            cuts.append(k)
        if isinstance(event, SystemMessageEvent):
            return cuts  # a system node ends every range
        if isinstance(event, AssistantMessageEvent):
            open_calls |= {c.id for c in event.message.tool_calls}
        elif isinstance(event, ToolResult):
            open_calls.discard(event.message.tool_call_id)
    if not open_calls and len(nodes) > start:
        cuts.append(len(nodes))
    return cuts


def plan_compaction(session: Session, keep_turn: int | None, *, running: bool = False,
                    whole_turn: bool = False) -> CompactionPlan | None:
    """The nodes to summarise: everything before ``keep_turn``'s first node (all of it when that
    turn has no node yet); when that leaves nothing, up to the last safe cut inside the turn —
    unless ``whole_turn`` (``%dsh compact``: every turn but the last, which stays whole; a session
    of one turn has nothing to compact). ``running``: ``keep_turn`` is the turn being run, so a
    lone earlier summary before it is not "nothing to gain" — a long turn compacts again inside
    itself (keeping its last exchange)."""
    events = session.events
    nodes = session.surface
    start = next((i for i, s in enumerate(nodes) if not isinstance(events[s], SystemMessageEvent)), None)
    if start is None:
        return None
    cuts = _safe_cuts(session, nodes, start)
    first = None if keep_turn is None else next(
        (i for i in range(start, len(nodes))
         if _turn_of(events[nodes[i]]) == keep_turn and not _is_summary(events[nodes[i]])), None)
    inside = [k for k in cuts if k < len(nodes)]  # keep at least the last exchange
    if first is None:
        cut = len(nodes) if len(nodes) in cuts else (cuts[-1] if cuts else None)
    elif first > start and first in cuts and not (running and all(_is_summary(events[s]) for s in nodes[start:first])):
        cut = first
    elif whole_turn:
        cut = first if first > start and first in cuts else None
    else:  # the kept turn is all there is (or only an earlier summary precedes it): cut inside it
        cut = inside[-1] if inside else None
    if cut is None:
        return None
    seqs = tuple(nodes[start:cut])
    messages = tuple(m for s in seqs if (m := _message_of(events[s])) is not None)
    if not messages or (len(seqs) == 1 and _is_summary(events[seqs[0]])):
        return None  # nothing to gain: a lone summary stays as it is
    return CompactionPlan(seqs, messages)


def _turn_of(event: Any) -> int | None:
    return getattr(event, "turn", None)


def _message_of(event: Any) -> AnyMessage | None:
    message = getattr(event, "message", None)
    if isinstance(message, AssistantMessage | SystemMessage) and not message.content:
        return None
    return message if isinstance(message, UserMessage | AssistantMessage | ToolMessage | SystemMessage) else None


def _is_summary(event: Any) -> bool:
    return isinstance(event, UserMessageEvent) and event.message.source.plugin == PLUGIN


def _clip(text: str, clip: int = CLIP) -> str:
    return text if len(text) <= clip else f"{text[:clip]}… [{len(text) - clip} more characters]"


def transcript(messages: Sequence[AnyMessage], *, clip: int = CLIP, max_chars: int | None = None) -> str:
    """The range as plain text for the summariser: each message clipped to ``clip`` characters;
    beyond ``max_chars`` the middle is left out (the head keeps the goal, the tail the state)."""
    out: list[str] = []
    for m in messages:
        text = "".join(b.text for b in m.content if isinstance(b, TextBlock))
        if isinstance(m, UserMessage):
            label = "user" if m.source.kind == "user" else f"context ({m.source.plugin or 'plugin'})"
            out.append(f"[{label}]\n{_clip(text, clip)}")
        elif isinstance(m, AssistantMessage):
            calls = [f"called {c.name} {c.id} {_clip(c.arguments, clip)}" for c in m.tool_calls]
            out.append("[assistant]\n" + "\n".join(x for x in (_clip(text, clip), *calls) if x))
        elif isinstance(m, ToolMessage):
            out.append(f"[tool result {m.tool_call_id}{' ERROR' if m.is_error else ''}]\n{_clip(text, clip)}")
    whole = "\n\n".join(out)
    if max_chars is None or len(whole) <= max_chars:
        return whole
    head, tail = max_chars // 3, max_chars - max_chars // 3
    return f"{whole[:head]}\n\n… [{len(whole) - head - tail} characters of the conversation left out] …\n\n{whole[-tail:]}"


def summary_request(messages: Sequence[AnyMessage], *, provider: str, model: str, session_id: str | None,
                    turn: int, config: dict[str, Any] | None = None, clip: int = CLIP,
                    max_chars: int | None = None) -> ModelRequest:
    """The summarisation request: :data:`SUMMARY_SYSTEM` and the transcript; no tools."""
    ask = UserMessage(
        content=(TextBlock(text="Summarise this conversation:\n\n"
                           + transcript(messages, clip=clip, max_chars=max_chars)),),
        source=MessageSource(kind="plugin", plugin=PLUGIN, form="request"),
    )
    system = SystemMessage(content=(TextBlock(text=SUMMARY_SYSTEM),))
    return ModelRequest(provider=provider, model=model, messages=(system, ask), tools=(),
                        config=dict(config or {}), session_id=session_id, turn=turn)


async def summarise(adapter: ModelAdapter, request: ModelRequest) -> tuple[str, Usage | None]:
    """Run the summarisation request; its text (``EMPTY_SUMMARY`` if there is none) and usage."""
    parts: list[str] = []
    ended: list[str] = []
    usage: Usage | None = None
    async for chunk in adapter.stream(request):
        if isinstance(chunk, TextDelta):
            parts.append(chunk.text)
        elif isinstance(chunk, BlockEnd) and isinstance(chunk.block, TextBlock):
            ended.append(chunk.block.text)
        elif isinstance(chunk, UsageChunk):
            usage = chunk.usage
    text = ("".join(ended) or "".join(parts)).strip()
    if not text:
        raise ModelError("the model returned an empty summary; nothing was compacted", code="EMPTY_SUMMARY")
    return text, usage


def commit_compaction(session: Session, plan: CompactionPlan, summary: str, *, turn: int | None, trigger: Trigger,
                      tokens_before: int, tokens_after: int, window: int | None, provider: str, model: str,
                      usage: Usage | None) -> ContextCompacted:
    """Append the replacing summary ``user/message`` and the ``context/compacted`` record."""
    surface = session.surface
    if plan.start_seq not in surface or plan.end_seq not in surface:
        raise SessionError("the surface changed while the summary was written; not compacted",
                           code="COMPACTION_STALE")
    message = UserMessage(
        content=(TextBlock(text=f"{SUMMARY_HEADER}\n\n{summary}"),),
        source=MessageSource(kind="plugin", plugin=PLUGIN, form="summary"),
    )
    event = session.append(UserMessageEvent(
        turn=turn, message=message, surface_op=ReplaceOp(start_seq=plan.start_seq, end_seq=plan.end_seq),
        source_event_seqs=plan.seqs,
    ))
    return session.append(ContextCompacted(
        turn=turn, summary_seq=event.seq, start_seq=plan.start_seq, end_seq=plan.end_seq,
        replaced=len(plan.seqs), trigger=trigger, tokens_before=tokens_before, tokens_after=tokens_after,
        context_window=window, provider=provider, model=model, usage=usage, source_event_seqs=(event.seq,),
    ))


__all__ = [
    "OVERFLOW_ADVICE", "PLUGIN", "SUMMARY_SYSTEM", "CompactionPlan", "Trigger", "commit_compaction", "estimate_tokens",
    "overflow_error", "plan_compaction", "summarise", "summary_request", "transcript",
]  # fmt: skip

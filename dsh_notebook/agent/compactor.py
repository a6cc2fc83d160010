"""The agent's side of context management: *when* to compact, with which model (see
:mod:`.compaction` for the estimate, the range and the logged facts).

:class:`Compactor` belongs to one Agent. Before a step's first attempt, :meth:`maybe_compact`
estimates the request (the derived history plus the messages the step enters, plus the tool
schemas) against the window of the step's model and compacts above ``threshold``; the Agent calls
:meth:`compact` itself when the provider answers ``CONTEXT_OVERFLOW`` (and retries the request
once) and on demand. Proactive compaction is skipped when it would save less than a tenth of the
window (a single huge message cannot be helped by summarising the turns around it). The
summarisation request's transcript is capped at about half the window (middle left out); if the
provider still refuses it as too long, it is sent once more a third as long.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..errors import ModelError
from ..session.catalog import context_window
from ..session.session import Session
from ..wire.events import ContextCompacted, ToolSchema
from ..wire.messages import AnyMessage, MessageSource, TextBlock, UserMessage
from .compaction import (
    CLIP,
    PLUGIN,
    SUMMARY_HEADER,
    Trigger,
    commit_compaction,
    estimate_tokens,
    plan_compaction,
    summarise,
    summary_request,
)
from .request import ModelRoute

MIN_SAVING = 0.1  # of the window: proactive compaction below this is not worth a request


class Compactor:
    """Decides and performs the compactions of one session."""

    def __init__(self, session: Session, *, threshold: float = 0.8) -> None:
        self.session = session
        self.threshold = threshold
        self.window_tokens: int | None = None  # the resolved window (agent.fit), else the catalog's
        self.last: ContextCompacted | None = None

    def window(self, prepared: ModelRoute) -> int | None:
        """The context window of the step's model (``None``: unknown, no proactive compaction)."""
        if self.window_tokens is not None:
            return self.window_tokens
        return context_window(prepared.provider, prepared.model)

    def estimate(self, pending: Sequence[AnyMessage] = (), tools: Sequence[ToolSchema] = ()) -> int:
        """The estimated tokens of the next request: the history, ``pending`` messages, tools."""
        return estimate_tokens(self.session.derive_messages(), tools, pending)

    async def maybe_compact(self, prepared: ModelRoute, *, turn: int, pending: Sequence[AnyMessage] = (),
                            tools: Sequence[ToolSchema] = ()) -> ContextCompacted | None:
        """Compact when the estimate passes ``threshold × window``; a failing summary is skipped
        (the request then goes as it is, and the provider's answer decides)."""
        window = self.window(prepared)
        if window is None:
            return None
        before = self.estimate(pending, tools)
        if before <= self.threshold * window:
            return None
        plan = plan_compaction(self.session, turn, running=True)
        if plan is None or estimate_tokens(plan.messages) < MIN_SAVING * window:
            return None
        try:
            return await self.compact(prepared, turn=turn, trigger="threshold", tools=tools, pending=pending)
        except ModelError:
            return None

    async def compact(self, prepared: ModelRoute, *, turn: int | None, trigger: Trigger,
                      tools: Sequence[ToolSchema] = (), pending: Sequence[AnyMessage] = (),
                      keep_turn: int | None = None) -> ContextCompacted | None:
        """Summarise the older nodes with the step's model and replace them; ``None`` when there
        is nothing to compact. Raises the summarisation request's ``ModelError``."""
        keep = turn if keep_turn is None else keep_turn
        plan = plan_compaction(self.session, keep, running=turn is not None, whole_turn=trigger == "manual")
        if plan is None:
            return None
        history = self.session.derive_messages()
        before = estimate_tokens(history, tools, pending)
        window = self.window(prepared)
        cap = window * 2 if window else None  # chars: about half the window for the transcript
        request = summary_request(plan.messages, provider=prepared.provider, model=prepared.model,
                                  session_id=self.session.id, turn=turn or 0, config=dict(prepared.config),
                                  max_chars=cap)
        try:
            summary, usage = await summarise(prepared.adapter, request)
        except ModelError as exc:
            if exc.code != "CONTEXT_OVERFLOW":
                raise
            size = sum(len(b.text) for b in request.messages[-1].content if isinstance(b, TextBlock))
            shorter = summary_request(plan.messages, provider=prepared.provider, model=prepared.model,
                                      session_id=self.session.id, turn=turn or 0, config=dict(prepared.config),
                                      clip=CLIP // 4, max_chars=size // 3)  # too long itself: a third
            summary, usage = await summarise(prepared.adapter, shorter)
        replaced = set(plan.seqs)
        kept = [m for m, seq in zip(history, history.seqs, strict=True) if seq not in replaced]
        stand_in = UserMessage(content=(TextBlock(text=f"{SUMMARY_HEADER}\n\n{summary}"),),
                               source=MessageSource(kind="plugin", plugin=PLUGIN, form="summary"))
        after = estimate_tokens([stand_in, *kept, *pending], tools)
        self.last = commit_compaction(
            self.session, plan, summary, turn=turn, trigger=trigger, tokens_before=before, tokens_after=after,
            window=window, provider=prepared.provider, model=prepared.model, usage=usage,
        )
        return self.last

"""Request formation, part 2 (seed 001 objects 29 and 31; seed 000 stages 05–06).

``prepare_request`` routes a ``provider:model`` id to an adapter (a :class:`ModelRoute`).
``RequestBuilder.build_request`` then, per attempt: appends the entered user messages (first
attempt only), logs ``request/header`` when the config or tools changed (``initial`` on a new
session, ``resume`` on the first request of a resumed one, ``change`` after), derives the
messages from the session, repairs pairing at the API boundary (``PairingRepairer``), freezes a
:class:`~dsh_notebook.models.base.ModelRequest`, logs ``request/frozen`` and flushes.

``request/frozen.messageSeqs`` are the surface seqs the request's messages came from. To keep the
cost of a request independent of the history's size, when the history merely *extends* the
previous request's, only the new seqs are logged and ``baseRequestSeq`` points at that previous
``request/frozen``; :func:`resolve_message_seqs` expands the chain back into the full list.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from ..config import parse_model_id
from ..errors import DshError
from ..models.base import DefaultOptions, ModelAdapter, ModelRequest
from ..session.catalog import env_context_window
from ..session.history import MessageHistory
from ..session.repair import PairingRepairer, RepairResult
from ..session.requests import resolve_message_seqs
from ..session.session import Session
from ..wire.events import RequestFrozen, RequestHeader, ToolSchema, UserMessageEvent
from ..wire.messages import UserMessage


@dataclass(frozen=True)
class ModelRoute:
    """The route of one attempt: provider, model, the adapter that speaks to it, and config."""

    provider: str
    model: str
    adapter: ModelAdapter
    config: Mapping[str, Any] = field(default_factory=dict)

    @property
    def model_id(self) -> str:
        return f"{self.provider}:{self.model}"

    def header_config(self) -> dict[str, JsonValue]:
        return {"provider": self.provider, "model": self.model, **self.config}


def prepare_request(
    model_id: str,
    *,
    adapter_for: Callable[[str], ModelAdapter],
    config: Mapping[str, Any] | None = None,
) -> ModelRoute:
    """Route ``provider:model`` to its adapter (errors such as ``NO_API_KEY`` come from it). The
    adapter's default options (a local model's card sampling) go first; ``config`` overrides them."""
    provider, model = parse_model_id(model_id)
    adapter = adapter_for(model_id)
    defaults = adapter.default_options() if isinstance(adapter, DefaultOptions) else {}
    return ModelRoute(provider, model, adapter, {**defaults, **(config or {})})


class RequestBuilder:
    """Freezes the requests of one agent instance, remembering what it logged before."""

    def __init__(self, session: Session, *, flush: Callable[[], None] | None = None) -> None:
        self.session = session
        self.flush = flush
        self.repairer = PairingRepairer()
        self._header: tuple[dict[str, JsonValue], tuple[ToolSchema, ...], str | None] | None = None
        self._resumed = any(isinstance(e, RequestHeader) for e in reversed(session.events))
        self._prev: tuple[MessageHistory, int, int] | None = None  # (history, its length, frozen seq)
        self.last_request: ModelRequest | None = None  # the last request built by this builder
        self.last_frozen: RequestFrozen | None = None  # ... and its ``request/frozen`` event
        self.context_window: int | None = None  # the caller's override (else DSH_CONTEXT_WINDOW)
        history = session.derive_messages()
        if len(history):  # resume: the one O(history) pass happens here, before any step
            self.repairer.repair(history)
            self._prev = self._logged_base(history)

    def _logged_base(self, history: MessageHistory) -> tuple[MessageHistory, int, int] | None:
        """The last logged request, if the restored history still starts with its messages."""
        last = next((e for e in reversed(self.session.events) if isinstance(e, RequestFrozen)), None)
        if last is None:
            return None
        seqs = resolve_message_seqs(self.session.events, last.seq)
        if history.seqs_between(0, len(seqs)) != seqs:
            return None  # replaced since (e.g. compaction): the next request logs its full list
        return history, len(seqs), last.seq

    def append_entered(
        self, messages: Sequence[UserMessage], *, turn: int, on_commit: Callable[[UserMessageEvent], None] | None = None
    ) -> list[UserMessageEvent]:
        """Commit the messages a step entered with (the claimed input and a context snapshot)."""
        out = []
        for message in messages:
            event = self.session.append(UserMessageEvent(turn=turn, message=message))
            if on_commit is not None:
                on_commit(event)
            out.append(event)
        return out

    def _log_header(self, prepared: ModelRoute, tools: tuple[ToolSchema, ...]) -> None:
        config = prepared.header_config()
        # where the requests go is part of the header: a resumed session must not silently
        # switch endpoints (and send its history and a key somewhere else)
        endpoint = prepared.adapter.base_url
        if self._header is not None:
            old_config, old_tools, old_endpoint = self._header
            if old_config == config and old_endpoint == endpoint and (old_tools is tools or old_tools == tools):
                return
            reason = "change"
        else:
            reason = "resume" if self._resumed else "initial"
        self.session.append(
            RequestHeader(reason=reason, config=config, tools=tools, endpoint=endpoint)
        )
        self._header = (config, tools, endpoint)

    def context_window_override(self) -> int | None:
        """The window override to record on ``request/frozen`` (``None``: the model's own)."""
        if self.context_window is not None:
            return self.context_window
        try:
            return env_context_window()
        except DshError:
            return None  # a bad DSH_CONTEXT_WINDOW is reported where the window is used

    def build_request(
        self,
        prepared: ModelRoute,
        *,
        tools: tuple[ToolSchema, ...],
        turn: int,
        step: int,
        attempt: int = 1,
        entered: Sequence[UserMessage] = (),
        on_entered: Callable[[UserMessageEvent], None] | None = None,
    ) -> ModelRequest:
        """Append (first attempt), log header, derive, repair, freeze, log frozen, flush."""
        derived = self.derive(prepared, tools=tools, turn=turn, attempt=attempt, entered=entered,
                              on_entered=on_entered)
        return self.freeze(prepared, derived, tools=tools, turn=turn, step=step, attempt=attempt)

    def derive(
        self,
        prepared: ModelRoute,
        *,
        tools: tuple[ToolSchema, ...],
        turn: int,
        attempt: int = 1,
        entered: Sequence[UserMessage] = (),
        on_entered: Callable[[UserMessageEvent], None] | None = None,
    ) -> DerivedRequest:
        """Stage 05: append what the step entered with (first attempt), log the header, derive
        the history and repair it at the API boundary."""
        if attempt == 1 and entered:
            self.append_entered(entered, turn=turn, on_commit=on_entered)
        self._log_header(prepared, tools)
        history = self.session.derive_messages()
        return DerivedRequest(history, self.repairer.repair(history))

    def freeze(
        self,
        prepared: ModelRoute,
        derived: DerivedRequest,
        *,
        tools: tuple[ToolSchema, ...],
        turn: int,
        step: int,
        attempt: int = 1,
        max_tokens: int | None = None,
        window: Any = None,
    ) -> ModelRequest:
        """Stage 06: log ``request/frozen`` for ``derived`` (flush when the builder flushes).
        ``max_tokens``: the request's output limit (into its ``config``); ``window``: the
        resolved :class:`~.fit.Window` recorded with the request."""
        history, repaired = derived.history, derived.repaired
        base: int | None = None
        seqs: list[int] | None = None
        if self._prev is not None:
            prev, n, prev_seq = self._prev
            if history.extends(prev) and len(history) >= n:
                seqs, base = history.seqs_between(n, len(history)), prev_seq
        if seqs is None:
            seqs = history.seqs
        frozen = self.session.append(
            RequestFrozen(
                turn=turn,
                step=step,
                attempt=attempt,
                provider=prepared.provider,
                model=prepared.model,
                message_seqs=tuple(seqs),
                repairs=tuple(r.note() for r in repaired.changes),
                context_window=window.tokens if window is not None and window.tokens else self.context_window_override(),
                window_source=window.source if window is not None else None,
                max_tokens=max_tokens,
                base_request_seq=base,
            )
        )
        self._prev = (history, len(history), frozen.seq)
        request = ModelRequest(
            provider=prepared.provider,
            model=prepared.model,
            messages=repaired.messages,
            tools=tools,
            config=dict(prepared.config) if max_tokens is None else {**prepared.config, "max_tokens": max_tokens},
            session_id=self.session.id,
            turn=turn,
            step=step,
            attempt=attempt,
        )
        self.last_request, self.last_frozen = request, frozen
        if self.flush is not None:
            self.flush()  # durable before the provider sees anything
        return request


@dataclass(frozen=True)
class DerivedRequest:
    """Stage 05's output: the derived history and its repaired form (what the request carries)."""

    history: MessageHistory
    repaired: RepairResult


__all__ = ["DerivedRequest", "ModelRoute", "RequestBuilder", "prepare_request"]

"""The agent's settings in one value (issue 25 item 2): :class:`AgentConfig`.

One mutable dataclass instead of a long keyword list. ``agent.config`` is read once at each
turn's start (a snapshot for the turn), so a budget or limit changed on a live agent
(``host.options.apply_options``) takes effect at the next turn.

- ``model`` — ``provider:model``; ``max_retries`` extra attempts per request, delay
  ``retry_base_ms·2^(n-1)`` (or the provider's ``retry_after_ms``) capped at ``retry_cap_ms``;
- ``request_options`` — sent with every request (temperature, top_p, seed, stop,
  reasoning_effort, any provider extra); ``max_tokens`` — the output limit of a request (``None``:
  derived from the window, see :func:`dsh_notebook.agent.fit.output_limit`);
- ``max_parallel`` — concurrency-safe tool calls run at once;
- ``max_steps`` / ``max_time`` — the turn budgets (``None``: unbounded);
- ``context_window`` — a window given by flag (else the server's, else the catalog's);
  ``compact_threshold`` — the share of the window above which a step compacts first;
- ``tools`` — ``None``: every tool; ``()``: none (a plain chat turn); else only these names;
- ``max_repeats`` — the no-progress guard: the same call answered the same way (result, denial or
  error) this many times in a row is told it will not help, once more ends the turn ``stuck`` (``0``: off).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from pydantic import JsonValue


@dataclass
class AgentConfig:
    """What an Agent does with its session (mutable: changes apply from the next turn)."""

    model: str
    max_retries: int = 3
    retry_base_ms: int = 500
    retry_cap_ms: int = 30_000
    request_options: dict[str, JsonValue] = field(default_factory=dict)
    max_parallel: int = 10
    max_steps: int | None = None
    max_time: float | None = None
    context_window: int | None = None
    compact_threshold: float = 0.8
    max_tokens: int | None = None
    tools: tuple[str, ...] | None = None
    max_repeats: int = 2

    def snapshot(self) -> AgentConfig:
        """A copy for one turn (what a turn reads does not change under it)."""
        return dataclasses.replace(self, request_options=dict(self.request_options))


__all__ = ["AgentConfig"]

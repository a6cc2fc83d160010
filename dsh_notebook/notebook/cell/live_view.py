"""The turn view the live clients draw (a cell, ``jupyter console``, IPython, ``run``): the
notebook's :class:`~.render.TurnView` with two changes a person waiting at it needs.

- The cell's "waiting for the model · N s" note appears once the attempt has waited
  :data:`~dsh_notebook.host.waiting.GRACE_S` — within the first second, not after the first
  ``wait_every`` seconds — and ticks every ``wait_every`` seconds. (Text clients show the same
  line through :class:`~dsh_notebook.host.waiting.WaitingTicker`, written in place.)
- A failed attempt is said once: its ``assistant/attempt`` note names the error; the
  ``llm/retry`` that follows it says only when the next attempt goes (it used to repeat the error).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...client.model import ClientSessionModel
from ...host.waiting import waiting_seconds
from ...wire.events import AssistantAttempt, LlmRetry
from .render import TurnView
from .segments import NoteSeg, Segment

_LOOK_BACK = 16  # events between a failed attempt and its retry (a stream's own events at most)


@dataclass
class LiveTurnView(TurnView):
    def waited(self, model: ClientSessionModel) -> int | None:
        since = self.waiting_since(model)
        if since is None or self.wait_every is None or model.attempt is None:
            return None
        seconds = waiting_seconds(model.attempt, since, self.clock())
        return None if seconds is None else seconds // self.wait_every * self.wait_every

    def segments(self, model: ClientSessionModel) -> list[Segment]:
        out = super().segments(model)
        for k, seg in enumerate(out):
            if isinstance(seg, NoteSeg) and seg.key.startswith("n") and seg.key[1:].isdigit():
                retry = model.event(int(seg.key[1:]))
                if isinstance(retry, LlmRetry) and _failed_attempt(model, retry) is not None:
                    out[k] = NoteSeg(seg.key, f"retry {retry.attempt} in {retry.delay_ms} ms")
        return out


def _failed_attempt(model: ClientSessionModel, retry: LlmRetry) -> AssistantAttempt | None:
    """The ``assistant/attempt`` whose failure ``retry`` retries (its note already names the error)."""
    for seq in range(retry.seq - 1, max(-1, retry.seq - 1 - _LOOK_BACK), -1):
        event = model.event(seq)
        if (isinstance(event, AssistantAttempt) and event.error is not None and event.attempt == retry.attempt
                and (event.turn, event.step) == (retry.turn, retry.step)):
            return event
    return None


__all__ = ["LiveTurnView"]

"""``%dsh compare A B`` as a widget: two sessions side by side, aligned by turn and step.

:func:`comparison_data` lays out every step of both sessions (the last request attempt of each
turn and step, :func:`~dsh_notebook.session.request_index.step_summaries`, linear in the logs) in one table: per side the request
seq, how many messages it carried, the last of them (what was new) and the model's answer. The
first divergence (:func:`~dsh_notebook.analysis.compare.compare_events`) marks its row and
carries the message diff of the two requests there; the front end (``js/src/compare.ts``)
highlights that row and scrolls it into view. :class:`CompareWidget` keeps the text and HTML
forms of :class:`~.compare_view.ComparisonView` in its mime bundle (nbconvert, a front end
without widgets) and ``first_divergent_seqs``.

Each side of the first divergence has an "open in inspector" button: the front end sends
``{"kind": "open-inspector", "side": "a"|"b", "seq": N}`` and the widget shows a
:class:`~.widgets.SessionInspector` of that session, with that event selected, in the output area
under the table (one per side: a second press selects the event in the one already open).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import anywidget
import traitlets

from ...analysis.align import TurnAlignment, align_turns
from ...analysis.compare import Divergence, StepPair, compare_events
from ...session.request_index import StepSummary, step_summaries
from ...wire.comm import OpenInspector, read_comm
from ...wire.events import AnyEvent, AssistantMessageEvent
from ...wire.messages import AnyMessage, AssistantMessage, ToolMessage
from .compare_view import ComparisonView
from .loop import _css, _esm

__all__ = ["CompareWidget", "comparison_data"]


def _short(text: str, n: int = 160) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"


def _summary(message: AnyMessage | None) -> str:
    """One line: the role and the text (or the tool calls) of a message."""
    if message is None:
        return ""
    if isinstance(message, AssistantMessage):
        calls = ", ".join(f"{c.name} {c.id}" for c in message.tool_calls)
        text = message.text
        return _short(f"{text}{' → ' if text and calls else ''}{'calls ' + calls if calls else ''}")
    if isinstance(message, ToolMessage):
        return _short(f"tool {message.tool_call_id}{' (error)' if message.is_error else ''}: {message.text}")
    text = "".join(getattr(b, "text", "") for b in message.content)
    return _short(f"{message.role}: {text}")


def _side(step: StepSummary | None, events: Sequence[AnyEvent]) -> dict[str, Any] | None:
    if step is None:
        return None
    ref = step.ref
    answer = events[ref.response_seq] if ref.response_seq is not None else None
    return {
        "seq": ref.seq,
        "turn": ref.turn,  # in this log's own numbers (a fork's may differ from the row's)
        "model": ref.model_id,
        "messages": step.messages,
        "last": _summary(step.last),
        "responseSeq": ref.response_seq,
        "response": _summary(answer.message) if isinstance(answer, AssistantMessageEvent) else "(no answer)",
    }


def _aligned(steps: dict[tuple[int, int], StepSummary], align: TurnAlignment) -> dict[tuple[int, int], StepSummary]:
    """The steps of one log keyed as the comparison numbers its turns (a fork's as its origin's)."""
    out: dict[tuple[int, int], StepSummary] = {}
    for (turn, step), summary in steps.items():
        if align.keeps(turn, summary.ref.seq):
            out[(align.turn(turn), step)] = summary
    return out


def comparison_data(a_id: str, a: Sequence[AnyEvent], b_id: str, b: Sequence[AnyEvent],
                    compared: tuple[Sequence[StepPair], Divergence | None] | None = None) -> dict[str, Any]:
    """What the compare widget draws (JSON): both sessions, every aligned step, the divergence
    (``compared``: what :func:`compare_events` gave for ``a`` and ``b``, when the caller has it)."""
    pairs, divergence = compared if compared is not None else compare_events(a, b)
    sa, sb = (_aligned(step_summaries(log), al) for log, al in zip((a, b), align_turns(a, b), strict=True))
    first = (divergence.turn, divergence.step) if divergence is not None else None
    rows = []
    for key in sorted(set(sa) | set(sb)):
        state = "same" if first is None or key < first else "first" if key == first else "after"
        rows.append({"turn": key[0], "step": key[1], "state": state,
                     "a": _side(sa.get(key), a), "b": _side(sb.get(key), b)})
    return {
        "a": {"sessionId": a_id, "events": len(a)},
        "b": {"sessionId": b_id, "events": len(b)},
        "rows": rows,
        "agreeing": sum(1 for p in pairs if p.same),
        "divergence": divergence.to_dict() if divergence is not None else None,
    }


class CompareWidget(anywidget.AnyWidget):  # type: ignore[misc]
    """Two sessions side by side (the same bundle as the loop widget, ``kind="compare"``)."""

    _esm = _esm()
    _css = _css()
    kind = traitlets.Unicode("compare").tag(sync=True)
    data = traitlets.Dict().tag(sync=True)

    def __init__(self, a_id: str, a: Sequence[AnyEvent], b_id: str, b: Sequence[AnyEvent],
                 paths: tuple[str, str] | None = None) -> None:
        """``paths``: the two logs (an inspector opens them); without, the session ids."""
        pairs, divergence = compare_events(a, b)
        self.view = ComparisonView(a_id, b_id, pairs, divergence)
        super().__init__(data=comparison_data(a_id, a, b_id, b, (pairs, divergence)))
        self._targets = {"a": paths[0] if paths else a_id, "b": paths[1] if paths else b_id}
        self._lengths = {"a": len(a), "b": len(b)}
        self.inspectors: dict[str, Any] = {}
        self._out: Any = None
        self.on_msg(self._on_custom)

    @property
    def output(self) -> Any:
        """The Output widget the inspectors are shown in (below the table)."""
        if self._out is None:
            import ipywidgets

            self._out = ipywidgets.Output()
        return self._out

    def _on_custom(self, _widget: Any, content: object, _buffers: Any) -> None:
        message = read_comm(content)
        if isinstance(message, OpenInspector):
            self.open_inspector(message.side, message.seq)

    def open_inspector(self, side: str, seq: Any) -> Any:
        """Show (or focus) the inspector of ``side`` ("a"/"b") at event ``seq``; ``None`` for a
        bad side or seq (nothing is opened)."""
        if side not in self._targets or not isinstance(seq, int) or isinstance(seq, bool) or not 0 <= seq < self._lengths[side]:
            return None
        shown = self.inspectors.get(side)
        if shown is not None and getattr(shown, "comm", None) is not None:
            shown.selected_seq = -1  # a change even when the same seq is asked again
            shown.selected_seq = seq
            return shown
        from IPython.display import display

        from .loop import SessionInspector

        shown = SessionInspector(self._targets[side], selected_seq=seq)
        self.inspectors[side] = shown
        with self.output:
            display(shown)
        return shown

    @property
    def first_divergent_seqs(self) -> tuple[int | None, int | None] | None:
        return self.view.first_divergent_seqs

    def __repr__(self) -> str:
        return repr(self.view)

    def _repr_mimebundle_(self, **kwargs: Any) -> tuple[dict[str, Any], dict[str, Any]]:
        """The widget view, and the text and HTML forms for whatever cannot show widgets."""
        import ipywidgets

        box = ipywidgets.VBox([self, self.output])  # the table, and under it the inspectors it opens
        shown = box._repr_mimebundle_(**kwargs)
        data, meta = (dict(shown[0]), dict(shown[1])) if isinstance(shown, tuple) else (dict(shown or {}), {})
        data["text/plain"] = repr(self.view)
        data["text/html"] = self.view._repr_html_()
        return data, meta

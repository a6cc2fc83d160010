"""The widget comm's custom messages: anywidget's ``model.send`` ⇄ the kernel widget's ``send``.

Every view of a session widget talks to the host through its widget's comm (seed 001 L2–L3):

- from a view: :class:`CommEnvelope` (``{"kind":"envelope","cid","envelope"}``: one
  ``client-request``, stream ``open`` or ``cancel`` for the host), :class:`CommBye` (the view is
  gone: its host connection closes), and the comparison table's :class:`OpenInspector`;
- to a view: :class:`CommBatch` — the host's replies and stream items for one view, at most one
  message per interval. Each item is a server envelope's JSON text, or (a large batch) the index
  of the message's binary buffer that holds that text.

``CommEnvelope.envelope`` stays JSON data here: the host connection parses it as a
:data:`~dsh_notebook.wire.envelopes.ClientMessage` and answers a bad one with a coded error (a
comm message that is not one of these is ignored, as a stray custom message always was).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, JsonValue, TypeAdapter, ValidationError

from .base import Frozen
from .envelopes import WireId


class CommEnvelope(Frozen):
    """One envelope of the view ``cid`` for the host."""

    kind: Literal["envelope"] = "envelope"
    cid: WireId
    envelope: dict[str, JsonValue]


class CommBye(Frozen):
    """The view ``cid`` is gone (its host connection is closed)."""

    kind: Literal["bye"] = "bye"
    cid: WireId


class OpenInspector(Frozen):
    """The comparison table asks for the inspector of side ``a`` or ``b`` at event ``seq``."""

    kind: Literal["open-inspector"] = "open-inspector"
    side: Literal["a", "b"]
    seq: int = Field(ge=0)


class CommBatch(Frozen):
    """The host's envelopes for the view ``cid``: each its JSON text, or the index of the binary
    buffer holding it; an envelope not yet encoded travels as JSON data."""

    kind: Literal["batch"] = "batch"
    cid: WireId
    items: tuple[str | int | dict[str, JsonValue], ...]


CommFromView = Annotated[CommEnvelope | CommBye | OpenInspector, Field(discriminator="kind")]
"""A custom message a view sends to the kernel."""

CommToView = CommBatch
"""A custom message the kernel sends to a view (one kind today)."""

CommFromViewAdapter: TypeAdapter[CommFromView] = TypeAdapter(CommFromView)


def read_comm(content: object) -> CommEnvelope | CommBye | OpenInspector | None:
    """A view's custom message, typed; ``None`` for anything else (ignored, never an error: a
    stray custom message has no envelope to answer)."""
    try:
        return CommFromViewAdapter.validate_python(content)
    except ValidationError:
        return None


__all__ = ["CommBatch", "CommBye", "CommEnvelope", "CommFromView", "CommToView", "OpenInspector", "read_comm"]

"""The agent debugger's ``paused`` item: one shape per stage, the ``payload`` typed.

::

    {"type":"paused","stage":"01","payload":<the assistant/message event>}
    {"type":"paused","stage":"02"|"03","callId","seq","name","payload":{"callId","name","arguments","seq"}}
    {"type":"paused","stage":"04","payload":{"callId","name","seq","result","isError","code"}}
    {"type":"paused","stage":"05","payload":{"messageSeqs","messages"}}
    {"type":"paused","stage":"06","payload":{"seq","provider","model","messages","tools"}}

:data:`AnyPausedItem` is discriminated on ``stage``; every variant is a :class:`PausedItem`
(``isinstance`` works on the base). :func:`paused_item` builds the variant of a stage.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any, ClassVar, Literal, cast

from pydantic import Field

from .base import Frozen, Nullable
from .codes import ErrorCode
from .events import AssistantMessageEvent, DebugStage, EditTarget
from .messages import AnyMessage


class CallPayload(Nullable):
    """Stages 02–03: the call about to run (``arguments`` the raw JSON text an edit replaces)."""

    __nullable__: ClassVar[tuple[str, ...]] = ("seq",)
    call_id: str
    name: str
    arguments: str
    seq: int | None


class ResultPayload(Nullable):
    """Stage 04: the tool's outcome before its ``tool/result`` is committed."""

    __nullable__: ClassVar[tuple[str, ...]] = ("seq", "code")
    call_id: str
    name: str
    seq: int | None
    result: str
    is_error: bool
    code: str | None

    if TYPE_CHECKING:
        def __init__(self, *, call_id: str, name: str, seq: int | None, result: str, is_error: bool,
                     code: ErrorCode | None) -> None: ...


class HistoryPayload(Frozen):
    """Stage 05: the next step's messages as derived, and the surface seqs they came from."""

    message_seqs: tuple[int, ...]
    messages: tuple[AnyMessage, ...]


class RequestPayload(Frozen):
    """Stage 06: the frozen request before it goes to the adapter (tools by name)."""

    seq: int
    provider: str
    model: str
    messages: tuple[AnyMessage, ...]
    tools: tuple[str, ...]


PausePayload = AssistantMessageEvent | CallPayload | ResultPayload | HistoryPayload | RequestPayload
"""What a pause point is about (the payload of its stage)."""


class PausedItem(Frozen):
    """The run stopped at a stage (a breakpoint or a step) and waits for ``session/debug``.

    The base of the per-stage variants (:data:`AnyPausedItem`); ``editable`` names the ``edit``
    target that applies here, if any."""

    type: Literal["paused"] = "paused"
    stage: DebugStage
    call_id: str | None = None
    seq: int | None = None
    name: str | None = None
    editable: EditTarget | None = None


class PausedMessage(PausedItem):
    """Stage 01: the assistant message settled."""

    stage: Literal["01"]
    payload: AssistantMessageEvent


class PausedCall(PausedItem):
    """Stage 02 (``tool/call`` logged) or 03 (before the tool runs)."""

    stage: Literal["02", "03"]
    payload: CallPayload


class PausedResult(PausedItem):
    """Stage 04: before ``tool/result`` is committed."""

    stage: Literal["04"]
    payload: ResultPayload


class PausedHistory(PausedItem):
    """Stage 05: the next step's messages derived."""

    stage: Literal["05"]
    payload: HistoryPayload


class PausedRequest(PausedItem):
    """Stage 06: before the frozen request goes to ``adapter.stream()``."""

    stage: Literal["06"]
    payload: RequestPayload


PausedVariant = PausedMessage | PausedCall | PausedResult | PausedHistory | PausedRequest

AnyPausedItem = Annotated[PausedVariant, Field(discriminator="stage")]
"""A ``paused`` item, its payload's shape chosen by ``stage``."""

_BY_STAGE: dict[str, Any] = {
    "01": PausedMessage, "02": PausedCall, "03": PausedCall, "04": PausedResult, "05": PausedHistory,
    "06": PausedRequest,
}


def paused_item(
    stage: DebugStage, payload: PausePayload, *, call_id: str | None = None, seq: int | None = None,
    name: str | None = None, editable: EditTarget | None = None,
) -> PausedVariant:
    """The ``paused`` item of ``stage`` (a ValidationError if the payload is not that stage's)."""
    return cast(PausedVariant, _BY_STAGE[stage](stage=stage, call_id=call_id, seq=seq, name=name, editable=editable,
                            payload=payload))


__all__ = [
    "AnyPausedItem", "CallPayload", "HistoryPayload", "PausePayload", "PausedCall", "PausedHistory",
    "PausedItem", "PausedMessage", "PausedRequest", "PausedResult", "PausedVariant", "RequestPayload", "ResultPayload",
    "paused_item",
]

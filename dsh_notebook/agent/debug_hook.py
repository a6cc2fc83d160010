"""The agent debugger on the driver's hook points: stages 05 (derived), 06 (frozen), 01 (settled).

Stages 02–04 belong to the tool batch (:mod:`dsh_notebook.tools.scheduler`, ``pause_points``).
An edit of the request at 06 changes what is sent, and the answer cites the edit; an edit of a
call's arguments (02/03) replaces the assistant message in the surface by a copy with the edited
arguments, citing what it shadows and the edits (:func:`arguments_edited`).
"""

from __future__ import annotations

import asyncio
import dataclasses

from ..models.base import ModelRequest
from ..redaction import redact_json_text
from ..session.session import Session
from ..tools.scheduler import ArgumentsEdited, ToolBatch
from ..wire.events import AssistantMessageEvent, ReplaceOp
from ..wire.messages import ToolCallBlock
from ..wire.pause import HistoryPayload, RequestPayload
from .request import DerivedRequest
from .steps import TurnHook, TurnRun


class DebuggerHook(TurnHook):
    """Pauses the run where the person set breakpoints (only while the debugger is active).

    It also follows the turn's tool calls for "run to stage N of call cK" (:mod:`.runto`): the
    turn's start and end, and each settled message, even while nothing is being debugged."""

    def turn_started(self, run: TurnRun) -> None:
        run.agent.debugger.turn_started()

    def turn_ending(self, run: TurnRun) -> None:
        run.agent.debugger.turn_ending()

    async def derived(self, run: TurnRun, derived: DerivedRequest) -> None:
        agent = run.agent
        dbg, tools = agent.debugger, agent.batch_tools
        if dbg.active:  # the pause point decides (a breakpoint, a step, or the run-to target)
            history = derived.history
            await dbg.pause_point("05", tools=tools, payload=HistoryPayload(
                message_seqs=tuple(history.seqs), messages=tuple(history)))

    async def frozen(self, run: TurnRun, request: ModelRequest) -> tuple[ModelRequest, tuple[int, ...]]:
        agent = run.agent
        dbg, tools, frozen = agent.debugger, agent.batch_tools, agent.requests.last_frozen
        if not dbg.active or frozen is None:
            return request, ()
        pause = await dbg.pause_point(
            "06", tools=tools, seq=frozen.seq, value=list(request.messages), cite=(frozen.seq,),
            payload=RequestPayload(seq=frozen.seq, provider=request.provider, model=request.model,
                                   messages=tuple(request.messages), tools=tuple(t.name for t in request.tools)),
        )
        if pause is None or not pause.edits:
            return request, ()
        return dataclasses.replace(request, messages=tuple(pause.value)), tuple(pause.edits)

    async def settled(self, run: TurnRun, event: AssistantMessageEvent) -> None:
        """Stage 01. A cancel while paused here still answers every call of the message."""
        agent = run.agent
        agent.debugger.message_settled(event)
        if not agent.debugger.active:
            return
        try:
            await agent.debugger.pause_point("01", tools=agent.batch_tools, seq=event.seq, payload=event)
        except asyncio.CancelledError:
            if event.message.tool_calls:
                await ToolBatch(agent.session, event.message.tool_calls, turn=run.turn, step=run.step,
                                runtime=agent.tool_runtime()).abort()
            raise


def arguments_edited(session: Session, event: AssistantMessageEvent) -> ArgumentsEdited:
    """The model sees an edited call: the assistant message is replaced in the surface by a
    copy with the edited arguments (masked, as every logged call is), citing what it shadows and
    the edits."""
    node: list[AssistantMessageEvent] = [event]  # the surface node that shows this message now

    def replace_call(call_id: str, arguments: str, edits: tuple[int, ...]) -> None:
        current = node[0]
        message = current.message
        shown = redact_json_text(arguments)
        blocks = tuple(b.model_copy(update={"arguments": shown})
                       if isinstance(b, ToolCallBlock) and b.id == call_id else b for b in message.content)
        node[0] = session.append(AssistantMessageEvent(
            turn=event.turn, step=event.step, message=message.model_copy(update={"content": blocks}),
            surface_op=ReplaceOp(start_seq=current.seq, end_seq=current.seq),
            source_event_seqs=(current.seq, *edits)))

    return replace_call


__all__ = ["DebuggerHook", "arguments_edited"]

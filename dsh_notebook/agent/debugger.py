"""The agent debugger: pause a live run at any of the six stages, step, edit, go on.

A :class:`Debugger` belongs to one Agent. The loop calls :meth:`Debugger.pause_point` at each
stage of seed 000 (``01`` assistant message settled · ``02`` ``tool/call`` logged · ``03``
before the tool runs · ``04`` before ``tool/result`` is committed · ``05`` the next step's
messages derived · ``06`` before the frozen request goes to ``adapter.stream()``). When the stage
has a breakpoint (optionally only for given tool names) or the person asked to ``step``, the
pause point emits a ``paused`` item and waits; nothing of this run advances, every other session
on the host goes on (it is an ``await`` on the host loop), and a cancel still works (the wait is
cancelled with the turn, every call is answered as usual).

While paused, :meth:`edit` changes what the stage is about — the call's arguments (02–03), the
tool result's text (04) or the request's messages (06). Each edit is validated first and logged
as a ``debug/edit`` event (``before``, ``after``, ``by``) citing what was paused on; the loop
then uses the edited value, and what it changes cites the edit. :meth:`resume` goes on to the
next breakpoint (``continue``) or to the next stage whatever it is (``step``).

A breakpoint may carry a condition (``when``, :mod:`.breakwhen`): then it pauses only for calls
the condition holds for (``name==bash and command~"rm "``). :meth:`run_to` sets a one-shot
breakpoint on one stage of one call (:mod:`.runto`: ``05`` of ``c3``) and goes on.

With any breakpoint set the tools of a batch run one at a time, so "paused" means paused.

A pause and an edit are durability points too: the log is flushed (off the loop) when the run
pauses and after each edit, so ``show`` or a reader of the file sees the ``debug/edit`` while the
run still waits — not only after it resumes.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypedDict, cast

from pydantic import JsonValue, TypeAdapter, ValidationError

from ..errors import HostError
from ..redaction import redact_data, redact_json_text
from ..session.repair import repair_pairing
from ..session.session import Session
from ..wire.events import AssistantMessageEvent, DebugEdit, DebugStage, EditTarget
from ..wire.follow import ResumedItem
from ..wire.messages import AnyMessage
from ..wire.pause import PausedItem, PausePayload, paused_item
from ..wire.stages import EDITABLE, STAGE_KEYS, edit_places
from .breakwhen import BreakWhenError, Call, Node, calls_of, holds, parse_when
from .runto import RunTo, RunToTarget, check_target

__all__ = ["Debugger", "DebuggerView", "Pause"]
_MESSAGES: TypeAdapter[list[AnyMessage]] = TypeAdapter(list[AnyMessage])


def _bad(message: str) -> HostError:
    return HostError(message, code="BAD_EDIT")


class DebuggerView(TypedDict):
    """``Debugger.describe()``: the breakpoints, the run-to target and the pause, as JSON data."""

    stages: list[DebugStage]
    tools: list[str] | None
    when: str | None
    run_to: dict[str, str] | None
    run_to_missed: str | None
    paused: dict[str, JsonValue] | None


@dataclass
class Pause:
    """Where the run waits: the stage, what it is about, and the value an edit would change."""

    stage: DebugStage
    call_id: str | None
    seq: int | None
    name: str | None
    payload: PausePayload
    value: Any = None  # arguments: raw JSON str · result: str · request: list of messages
    cite: tuple[int, ...] = ()
    edits: list[int] = field(default_factory=list)
    resumed: asyncio.Event = field(default_factory=asyncio.Event)
    how: Literal["continue", "step", "cancel"] = "continue"

    @property
    def target(self) -> EditTarget | None:
        return EDITABLE.get(self.stage)

    def item(self) -> PausedItem:
        return paused_item(self.stage, self.payload, call_id=self.call_id, seq=self.seq, name=self.name,
                           editable=self.target)


class Debugger:
    """Breakpoints and the one pause of one agent's run (host-loop thread only)."""

    def __init__(self, session: Session, emit: Callable[[Any], None] | None = None,
                 durable: Callable[[], Awaitable[None]] | None = None) -> None:
        self.session = session
        self.emit = emit
        self.durable = durable  # flushes the log off the loop, a failure logged (Agent.flush_quietly)
        self._flushes: set[asyncio.Task[None]] = set()
        self.stages: frozenset[DebugStage] = frozenset()
        self.tools: frozenset[str] | None = None
        self.when: str | None = None  # the condition's text; _when the parsed form
        self._when: Node | None = None
        self._arguments: dict[str, str] = {}  # call id → arguments seen at 02/03 (for 04's condition)
        self.stepping = False
        self.paused: Pause | None = None
        self.runto = RunTo()  # the one-shot "run to stage N of call cK" and the turn's calls
        self._lock = asyncio.Lock()  # one pause at a time, in the order the loop reaches them

    # -- breakpoints ----------------------------------------------------------------------------
    @property
    def active(self) -> bool:
        """True when a pause point may pause (some breakpoint set, or stepping)."""
        return bool(self.stages) or self.stepping or self.runto.target is not None

    def set_breakpoints(self, stages: Sequence[str], tools: Sequence[str] | None = None,
                        when: str | None = None) -> None:
        """Replace the breakpoints (``[]`` clears them); ``tools``: only calls of these tools;
        ``when``: only calls this condition holds for (``BAD_BREAK_WHEN`` if it cannot be read)."""
        if isinstance(stages, str) or not all(isinstance(s, str) for s in stages):
            raise HostError("stages must be a list like [\"03\", \"06\"]", code="BAD_ARGS")
        unknown = [s for s in stages if s not in STAGE_KEYS]
        if unknown:
            raise HostError(f"unknown stage(s) {unknown}: the stages are {list(STAGE_KEYS)}", code="BAD_ARGS")
        if tools is not None and (isinstance(tools, str) or not all(isinstance(t, str) and t for t in tools)):
            raise HostError("tools must be a list of tool names", code="BAD_ARGS")
        if when is not None and not stages:
            raise BreakWhenError("a condition needs breakpoints: stages like [\"03\"] with when")
        parsed = parse_when(when) if when is not None else None
        self.stages = frozenset(cast(Sequence[DebugStage], stages))
        self.tools = frozenset(tools) if tools else None
        self.when, self._when = (when, parsed) if parsed is not None else (None, None)

    def wants(self, stage: DebugStage, tools: Sequence[str] = (), calls: Sequence[Call] | None = None) -> bool:
        """Would a pause point at ``stage`` concerning ``tools`` (``calls``: with their arguments) pause?"""
        if self.stepping:
            return True
        if stage not in self.stages:
            return False
        if self.tools is not None and not any(t in self.tools for t in tools):
            return False
        if self._when is None:
            return True
        when = self._when
        return any(holds(when, c) for c in (calls if calls is not None else [Call(t) for t in tools]))

    def describe(self) -> DebuggerView:
        paused = self.paused
        return {
            "stages": sorted(self.stages),
            "tools": sorted(self.tools) if self.tools is not None else None,
            "when": self.when,
            "run_to": _target(self.runto.target),
            "run_to_missed": self.runto.missed,
            "paused": paused.item().model_dump(mode="json", exclude_none=True) if paused else None,
        }

    # -- the loop's side ------------------------------------------------------------------------
    async def pause_point(
        self,
        stage: DebugStage,
        *,
        payload: PausePayload,
        tools: Sequence[str] = (),
        call_id: str | None = None,
        seq: int | None = None,
        name: str | None = None,
        value: Any = None,
        cite: tuple[int, ...] = (),
    ) -> Pause | None:
        """Pause here if a breakpoint or a step says so; returns the finished pause (its
        ``value`` edited, its ``edits`` the ``debug/edit`` seqs) or ``None`` if it went on."""
        if stage in ("02", "03") and call_id is not None and isinstance(value, str):
            self._arguments[call_id] = value
        calls = calls_of(stage, payload, name, value, tuple(tools), self._arguments) if self._when is not None else None
        if stage == "04" and call_id is not None:
            self._arguments.pop(call_id, None)  # the call is done: its arguments are not needed again
        if stage == "01" and isinstance(payload, AssistantMessageEvent):
            self.message_settled(payload)
        ids = self.runto.track.concerned(stage, call_id)
        self.runto.track.at(stage, ids)
        if not self.runto.hit(stage, ids) and not self.wants(stage, tools, calls):
            return None
        async with self._lock:
            pause = Pause(stage, call_id, seq, name, payload, value, cite)
            self.paused, self.stepping = pause, False
            self._emit(pause.item())
            try:
                await self._flush()  # what led here is on disk while the person looks
                await pause.resumed.wait()
            except asyncio.CancelledError:
                pause.how = "cancel"
                raise
            finally:
                if self.paused is pause:
                    self.paused = None
                self._emit(ResumedItem(stage=stage, how=pause.how))
            return pause

    # -- the turn's calls, for run-to -------------------------------------------------------------
    def turn_started(self) -> None:
        self.runto.track.began()

    def turn_ending(self) -> None:
        self.runto.turn_ended()

    def message_settled(self, event: AssistantMessageEvent) -> None:
        """Stage 01 reached for the message's calls (seen even while nothing is being debugged)."""
        self.runto.track.message(tuple(c.id for c in event.message.tool_calls))

    # -- the person's side ----------------------------------------------------------------------
    def run_to(self, stage: str | None, call: str | None) -> RunToTarget:
        """Pause once at ``stage`` of ``call`` (``cK`` or a call id) and, if paused, continue.
        ``BAD_RUN_TO`` for a bad target, ``RUN_TO_PASSED`` if this turn is already past it."""
        target = self.runto.set(*check_target(stage, call))
        if self.paused is not None:
            self.resume("continue")
        return target

    def resume(self, how: Literal["continue", "step"]) -> Pause:
        pause = self._require_paused()
        pause.how = how
        self.stepping = how == "step"
        pause.resumed.set()
        self.paused = None  # released now: a second continue, or an edit, is NOT_PAUSED, and the
        return pause  # answer to this one says the run goes on (not "paused" at the stage it left)

    def edit(self, target: str, value: Any, *, call_id: str | None = None, by: str = "client") -> DebugEdit:
        """Validate and log one edit of the paused stage's value; the loop uses it on resume."""
        pause = self._require_paused()
        if pause.target is None:
            raise _bad(f"nothing is editable at stage {pause.stage}; edits apply at {edit_places()}")
        if target != pause.target:
            raise _bad(f"at stage {pause.stage} the editable target is {pause.target!r}, not {target!r}")
        if call_id is not None and call_id != pause.call_id:
            raise _bad(f"paused on call {pause.call_id!r}, not {call_id!r}")
        after = _normalise(pause.target, value)
        event = self.session.append(
            DebugEdit(stage=pause.stage, target=pause.target, call_id=pause.call_id,
                      before=_shown(pause.value), after=_shown(after), by=by,
                      source_event_seqs=pause.cite or None)  # logged masked; the loop uses `after` as typed
        )
        pause.value = after
        pause.edits.append(event.seq)
        self._flush_soon()  # on disk now, not only after resume
        return event

    def _flush_soon(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:  # not on the host loop (a direct call): the loop's next flush has it
            return
        task = loop.create_task(self._flush())
        self._flushes.add(task)
        task.add_done_callback(self._flushes.discard)

    async def _flush(self) -> None:
        if self.durable is not None:
            await self.durable()

    def _require_paused(self) -> Pause:
        if self.paused is None:
            raise HostError("the run is not paused", code="NOT_PAUSED")
        return self.paused

    def _emit(self, item: Any) -> None:
        if self.emit is not None:
            self.emit(item)


def _target(target: RunToTarget | None) -> dict[str, str] | None:
    return {"stage": target.stage, "call": target.call} if target is not None else None


def _shown(value: Any) -> Any:
    """A value as a ``debug/edit`` logs it: secrets masked (arguments inside their JSON)."""
    wired = _wire(value)
    return redact_json_text(wired) if isinstance(wired, str) and wired.lstrip().startswith("{") else redact_data(wired)


def _wire(value: Any) -> Any:
    if isinstance(value, list):
        return [m.model_dump(mode="json", exclude_none=True) if hasattr(m, "model_dump") else m for m in value]
    return value


def _normalise(target: EditTarget, value: Any) -> Any:
    """The edited value in the form the loop uses, or ``BAD_EDIT`` saying what is wrong."""
    if target == "arguments":
        if isinstance(value, dict):
            return json.dumps(value, ensure_ascii=False)
        if not isinstance(value, str):
            raise _bad("arguments must be a JSON object (or its JSON text)")
        try:
            parsed = json.loads(value)
        except ValueError as exc:
            raise _bad(f"arguments are not JSON: {exc}") from None
        if not isinstance(parsed, dict):
            raise _bad("arguments must be a JSON object")
        return value
    if target == "result":
        if not isinstance(value, str):
            raise _bad("a tool result is text: send a string")
        return value
    if not isinstance(value, list) or not value:
        raise _bad("request messages must be a non-empty list of messages")
    try:
        messages = _MESSAGES.validate_python(value)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise _bad(f"request messages are not valid messages: {where}: {first.get('msg')}") from None
    repaired = repair_pairing(messages)
    if repaired.changed:  # say which call and what is wrong with it, as the person can fix it
        what = "; ".join(f"call {c.call_id!r} at message {c.index}: {c.detail or c.kind}" for c in repaired.changes[:3])
        more = f" (and {len(repaired.changes) - 3} more)" if len(repaired.changes) > 3 else ""
        raise _bad(f"the edited messages do not pair tool calls and results — {what}{more}; nothing was applied")
    return messages

"""Run to stage N of call cK: a one-shot breakpoint on one stage of one tool call.

A target is a stage (``01``..``06``) and a call reference: ``cK`` is the K-th tool call of the
running turn (1-based, in the order the model made them — the "call K/N" of the loop widget), or
an exact call id (``call_abc``, as ``paused at 03 · bash call_abc`` shows it). A call id wins
when one is spelled like ``cK`` (the scripted model names its calls so: the two agree).

Which call a stage concerns: 01 the calls of the settled assistant message; 02–04 the call
itself; 05 and 06 the calls whose results the next step's history and request carry (the calls
of the previous assistant message). The run pauses exactly at the target's pause point, once.

A target that can no longer happen is said, never waited for: asked for a stage the call has
already reached (``RUN_TO_PASSED``), passed without a pause point (the run was not being
debugged while it ran), or the turn ended first — then :attr:`RunTo.missed` says so.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import cast

from ..errors import HostError
from ..wire.events import DebugStage
from ..wire.stages import STAGE_KEYS

__all__ = ["CallTrack", "RunTo", "RunToTarget", "parse_run_to"]

_INDEX = re.compile(r"c(\d+)", re.IGNORECASE)
_REF = re.compile(r"[A-Za-z0-9_.:\-]{1,200}")
_FILLER = {"stage", "of", "call", "to", "at", "run"}


def _bad(message: str) -> HostError:
    return HostError(message, code="BAD_RUN_TO")


def check_target(stage: str | None, call: str | None) -> tuple[DebugStage, str]:
    """The stage and call reference of a target (``BAD_RUN_TO`` saying what is wrong)."""
    if stage not in STAGE_KEYS:
        raise _bad(f"run to needs a stage 01..06, not {stage!r} (e.g. stage \"05\", call \"c3\")")
    if not isinstance(call, str) or not _REF.fullmatch(call):
        raise _bad(f"run to needs a call: cK (the K-th call of the turn) or a call id, not {call!r}")
    return cast(DebugStage, stage), call


def parse_run_to(text: str) -> tuple[DebugStage, str]:
    """``"05 c3"`` / ``"stage 5 of c3"`` / ``"c3 05"`` → ``("05", "c3")`` (``BAD_RUN_TO`` else)."""
    words = [w for w in re.split(r"[\s,]+", text.strip()) if w and w.lower() not in _FILLER]
    stages = [w for w in words if w.isdigit()]
    calls = [w for w in words if not w.isdigit()]
    if len(stages) != 1 or len(calls) != 1:
        raise _bad(f"{text!r}: write a stage and a call, like 05 c3 or stage 5 of c3")
    stage = stages[0].zfill(2)
    if stage not in STAGE_KEYS:
        raise _bad(f"{text!r}: {stages[0]} is not a stage; the stages are 01..06")
    return check_target(stage, calls[0])


@dataclass(frozen=True)
class RunToTarget:
    stage: DebugStage
    call: str  # the reference as given: "c3" or a call id

    def __str__(self) -> str:
        return f"stage {self.stage} of {self.call}"


@dataclass
class CallTrack:
    """The running turn's tool calls in model order and the furthest stage each has reached."""

    calls: list[str] = field(default_factory=list)
    reached: dict[str, int] = field(default_factory=dict)
    last: tuple[str, ...] = ()  # the latest assistant message's calls (what 05/06 concern)
    running: bool = False
    short: dict[str, None] = field(default_factory=dict)  # the calls short of 06 (a message's work is theirs only)

    def began(self) -> None:
        self.calls, self.reached, self.last, self.running, self.short = [], {}, (), True, {}

    def message(self, ids: tuple[str, ...]) -> None:
        """Stage 01 of a message's calls: every earlier call went back to the model (06 passed)."""
        if ids and all(i in self.reached for i in ids):
            return  # seen (the hook saw it before its pause point)
        for c in self.short:
            if c not in ids:
                self.reached[c] = 6
        self.short = {}
        for i in ids:
            if i not in self.reached:
                self.calls.append(i)
                self.reached[i] = 1
            if self.reached[i] < 6:
                self.short[i] = None
        self.last = ids

    def at(self, stage: DebugStage, ids: tuple[str, ...]) -> None:
        for i in ids:
            if i not in self.reached:
                self.calls.append(i)
            self.reached[i] = max(self.reached.get(i, 0), int(stage))
            if self.reached[i] < 6:
                self.short[i] = None
            else:
                self.short.pop(i, None)

    def concerned(self, stage: DebugStage, call_id: str | None) -> tuple[str, ...]:
        if stage in ("05", "06"):
            return self.last
        if stage == "01":
            return self.last
        return (call_id,) if call_id is not None else ()

    def resolve(self, ref: str) -> str | None:
        """The call id a reference means in this turn (None: not made yet)."""
        if ref in self.reached:
            return ref
        m = _INDEX.fullmatch(ref)
        if m is not None and 1 <= int(m.group(1)) <= len(self.calls):
            return self.calls[int(m.group(1)) - 1]
        return None


@dataclass
class RunTo:
    """The one pending target, and why the last one can no longer happen (``missed``)."""

    track: CallTrack = field(default_factory=CallTrack)
    target: RunToTarget | None = None
    missed: str | None = None

    def set(self, stage: DebugStage, call: str) -> RunToTarget:
        """A new target (replaces the pending one); ``RUN_TO_PASSED`` if this turn is past it."""
        target = RunToTarget(stage, call)
        if self.track.running:
            resolved = self.track.resolve(call)
            if resolved is not None and self.track.reached[resolved] >= int(stage):
                shown = call if resolved == call else f"{call} ({resolved})"
                raise HostError(f"stage {stage} of {shown} has already happened in this turn (it is at "
                                f"{self.track.reached[resolved]:02d}); run to a later stage or call",
                                code="RUN_TO_PASSED")
        self.target, self.missed = target, None
        return target

    def clear(self) -> None:
        self.target = None

    def hit(self, stage: DebugStage, ids: tuple[str, ...]) -> bool:
        """Is this pause point the target (then it is used up)? A target passed unseen is missed."""
        target = self.target
        if target is None:
            return False
        resolved = self.track.resolve(target.call)
        if resolved is None:
            return False
        if stage == target.stage and resolved in ids:
            self.target = None
            return True
        if self.track.reached.get(resolved, 0) > int(target.stage):
            self._miss(f"{target} passed while the run was not being debugged (it is at "
                       f"{self.track.reached[resolved]:02d})")
        return False

    def turn_ended(self) -> None:
        self.track.running = False
        if self.target is not None:
            made = len(self.track.calls)
            self._miss(f"the turn ended before {self.target} ({made} tool call{'' if made == 1 else 's'} made)")

    def _miss(self, why: str) -> None:
        self.target, self.missed = None, why

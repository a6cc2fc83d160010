"""The agent debugger in a blocking cell: ``%dsh --break 03,06 PROMPT`` pauses like pdb.

While the cell waits, each pause of the run (the follow model's ``paused``) is shown — the stage,
what it is about, a short form of the payload — and a prompt on the kernel's stdin takes:

``c`` continue to the next breakpoint · ``s`` step to the next stage · ``r`` run to a stage of a
call (``05 c3`` or ``stage 5 of c3``: pause exactly there, once; ``cK`` is the K-th tool call of the
turn, or a call id) · ``p`` print the payload · ``e`` edit the stage's value (the call's arguments
at 02–03, the tool result at 04, the request's messages at 06; validated by the host, logged as
``debug/edit``) · ``q`` cancel the turn.

A front end without stdin (nbclient, papermill) cannot answer: the pause is continued and a note
says so, so a notebook never hangs on a breakpoint.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from typing import Any

from ...client.dsh_client import DshClient
from ...client.model import ClientSessionModel
from ...errors import HostError
from ...wire.fold_state import PauseState
from ...wire.stages import STAGES, edit_places

__all__ = ["STAGE_NAMES", "DebugConsole"]

STAGE_NAMES: dict[str, str] = {s.key: s.title.lower() for s in STAGES}  # "03" → "tool executes"
HELP = "debug: c continue · s step · r run to a stage of a call (05 c3) · p print the payload · e edit · q cancel the turn"
NO_STDIN = "no stdin to answer the debugger on; continued (use --bg and the handle's .step()/.edit())"


def describe_pause(p: PauseState) -> str:
    """One line: where the run waits, and on what."""
    what = f" · {p['name']} {p['callId']}" if p.get("callId") else ""
    seq = f" · seq {p['seq']}" if p.get("seq") is not None else ""
    edit = f" · e edits the {p['editable']}" if p.get("editable") else ""
    return f"|| paused at stage {p['stage']} ({STAGE_NAMES.get(p['stage'], '?')}){what}{seq}{edit}"


def brief(payload: Any, width: int = 300) -> str:
    text = json.dumps(payload, ensure_ascii=False)
    return text if len(text) <= width else text[: width - 1] + "…"


def _short(target: str, value: Any) -> str:
    """An edited value as the transcript shows it: a call's arguments as its tool line does."""
    if target == "arguments":
        from .segments import format_arguments

        text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
        return format_arguments(text, width=120)
    if target == "result" and isinstance(value, str):
        one = " ".join(value.split())
        return one if len(one) <= 120 else one[:119] + "…"
    return f"{len(value)} messages" if isinstance(value, list) else brief(value, 120)


class DebugConsole:
    """Answers the pauses of one followed session on stdin (the cell's main thread)."""

    def __init__(self, client: DshClient, session_id: str, model: ClientSessionModel,
                 lock: threading.Condition | threading.Lock) -> None:
        self.client, self.session_id, self.model, self._lock = client, session_id, model, lock
        self._seen: int | None = None
        self._run_to: str | None = None  # the run-to this console asked for (said at the turn's end if missed)

    def _pending(self) -> PauseState | None:
        with self._lock:
            p = self.model.paused
            if p is None or id(p) == self._seen:
                return None
            self._seen = id(p)
            return p

    def handled(self, pause: PauseState) -> None:
        """This pause is answered elsewhere (the ``--bg`` handle's Python API): not on stdin."""
        with self._lock:
            self._seen = id(pause)

    def serve(self, ask: Callable[[str], str], say: Callable[[str], None], *,
              before: Callable[[PauseState], None] = lambda _p: None) -> bool:
        """Handle a new pause, if there is one; returns whether one was handled. ``before(pause)``
        runs first (the cell shows what led here, and continues below what is said)."""
        pause = self._pending()
        if pause is None:
            return False
        before(pause)
        say(describe_pause(pause))
        say("  " + brief(pause.get("payload")))
        while True:
            try:
                reply = ask("debug [c/s/r/p/e/q]> ").strip().lower()
            except KeyboardInterrupt:
                raise
            except Exception:
                say(NO_STDIN)
                self._call("continue")
                return True
            if reply in ("c", "continue"):
                self._call("continue")
                return True
            if reply in ("s", "step"):
                self._call("step")
                return True
            if reply in ("r", "run", "run to") and self._run_to_asked(ask, say):
                return True
            if reply in ("q", "quit"):
                self.client.cancel(self.session_id)
                return True
            if reply in ("p", "print"):
                say(json.dumps(pause.get("payload"), ensure_ascii=False, indent=2))
            elif reply in ("e", "edit"):
                self._edit(pause, ask, say)
            elif reply in ("r", "run", "run to"):
                pass  # not set: said why, ask again
            else:
                say(HELP)

    def _edit(self, pause: PauseState, ask: Callable[[str], str], say: Callable[[str], None]) -> None:
        target = pause.get("editable")
        if not target:
            say(f"nothing is editable at stage {pause['stage']}: edits apply at {edit_places()}")
            return
        payload = pause.get("payload") or {}
        current = {"arguments": payload.get("arguments"), "result": payload.get("result"),
                   "request": payload.get("messages")}.get(target)  # type: ignore[union-attr]
        shown = brief(current, 2000)
        cut = " (shortened: p prints it whole, to copy)" if shown.endswith("…") else ""
        say(f"current {target}{cut}: {shown}")
        hint = "plain text, or a JSON string" if target == "result" else "JSON, on one line"
        raw = ask(f"new {target} ({hint}; empty keeps it)> ")
        if not raw.strip():
            return
        value: Any = raw
        if target == "request" or (target == "result" and raw.lstrip().startswith('"')):
            try:
                value = json.loads(raw)
            except ValueError as exc:
                say(f"not JSON: {exc}; nothing changed")
                return
        try:
            state = self.client.debug(self.session_id, "edit", target=target, call_id=pause.get("callId"),
                                      value=value)
        except HostError as exc:
            say(f"[{exc.code}] {exc.message}; nothing changed")
            return
        say(f"edited: {_short(target, current)} → {_short(target, value)} (debug/edit #{state.edit_seq}); "
            "c or s goes on with it")

    def _run_to_asked(self, ask: Callable[[str], str], say: Callable[[str], None]) -> bool:
        """``r``: ask where to, set the one-shot target (the run goes on); False if not set."""
        from ...agent.runto import parse_run_to

        raw = ask("run to (stage, call), e.g. 05 c3 or stage 5 of c3; empty cancels> ").strip()
        if not raw:
            return False
        try:
            stage, call = parse_run_to(raw)
            self.client.debug(self.session_id, "run-to", stage=stage, call=call)
        except HostError as exc:
            say(f"[{exc.code}] {exc.message}")
            return False
        self._run_to = f"stage {stage} of {call}"
        say(f"running to {self._run_to} (other breakpoints still pause on the way)")
        return True

    def asked(self, text: str) -> None:
        """A run-to set by a flag (``--run-to``): said at the turn's end like one asked here."""
        from ...agent.runto import parse_run_to

        stage, call = parse_run_to(text)
        self._run_to = f"stage {stage} of {call}"

    def finish(self, say: Callable[[str], None]) -> None:
        """The turn ended: say if the run-to this console asked for could not happen."""
        if self._run_to is None:
            return
        asked, self._run_to = self._run_to, None
        try:
            state = self.client.debug(self.session_id, "state")
        except HostError:
            return
        if state.run_to_missed:
            say(f"run to {asked}: not reached — {state.run_to_missed}")

    def _call(self, action: str) -> None:
        try:
            self.client.debug(self.session_id, action)
        except HostError as exc:
            if exc.code != "NOT_PAUSED":  # it went on meanwhile (cancelled, another client)
                raise

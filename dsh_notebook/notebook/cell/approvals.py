"""Approvals asked on the kernel's stdin while a cell blocks (``--approve ask``).

The host parks an *ask* until some client calls ``session/approve`` (DESIGN §2). While a ``%dsh``
cell waits, the browser's widget cannot answer (comm messages wait for the cell), so the wait
itself asks: when its follow's model says a call waits for a decision, it calls
``input()`` **on the main thread** — the kernel turns that into an ``input_request`` on the stdin
channel (JupyterLab, classic notebook; a plain prompt in terminal IPython) — and answers with
``session/approve``. A front end without stdin (nbclient, papermill) gets a *deny* and a note.
"""

from __future__ import annotations

import threading
from collections.abc import Callable

from ...client.model import ClientSessionModel
from ...tools.plan import EXIT_PLAN_MODE, PLAN_CHOICES, parse_plan_answer, plan_text
from ...tools.registry import known_tools
from ...tools.rules import ask_reason, grant_for
from ...tools.visible import approval_text, visible
from .render import edited_arguments

Asker = Callable[[str], str]
NO_STDIN = ("no stdin to ask on; denied (use --bg and the widget, allow it with --rules, or choose a mode: "
            "accept-edits runs workspace edits, dont-ask denies without asking)")
# a person decides each one (issue 37): the tools whose effect is a cell insert or leaving plan mode
NEVER_GRANTED = frozenset(t.name for t in (*known_tools().values(), EXIT_PLAN_MODE) if t.effect in ("notebook", "plan"))


def parse_answer(reply: str) -> tuple[str, str]:
    """``(decision, scope)`` of a typed answer: y / yes, a / always (session scope), else deny."""
    word = reply.strip().lower()
    if word in ("a", "always", "all"):
        return "allow", "session"
    return ("allow" if word in ("y", "yes") else "deny"), "call"


def allow_always_label(name: str, arguments: str) -> str | None:
    """What ``a`` would allow: ``bash "git status *"``, ``bash this exact command``, or the whole
    tool; ``None`` when no grant could match (an unresolved bash line) or the tool is never granted
    (``notebook_insert``, ``exit_plan_mode``): then ``a`` is not offered."""
    if name in NEVER_GRANTED:
        return None
    grant = grant_for(name, arguments)
    if grant is None:
        return None
    if grant.pattern == "*":
        return f"every {name} call"
    if name == "bash" and not grant.pattern.endswith(" *"):
        return "this exact bash command"
    return f'{name} "{visible(grant.pattern)}"'


def prompt_text(name: str, arguments: str, reason: str | None = None) -> str:
    """The stdin question: the whole call (:func:`~dsh_notebook.tools.visible.approval_text`) and
    why it is asked; for ``exit_plan_mode`` the plan line by line and the three answers."""
    if name == "exit_plan_mode":
        return f"dsh: the agent's plan:\n{plan_text(arguments)}\n{PLAN_CHOICES}\n> "
    label = allow_always_label(name, arguments)
    choices = f"[y/N/a: {label} for this session]" if label else "[y/N]"
    return f"dsh: allow {visible(name)} {approval_text(name, arguments)}?{ask_reason(name, arguments, reason)} {choices} "


class StdinApprovals:
    """The approvals of one run, read from its follow's model; asked on the main thread.

    Every approval the session waits for counts — not only this run's: while the cell blocks,
    nothing else could answer it. Each is asked once."""

    def __init__(self, model: ClientSessionModel, lock: threading.Condition | threading.Lock) -> None:
        self.model, self._lock = model, lock
        self._asked: set[str] = set()

    @property
    def waiting(self) -> dict[str, str]:
        """callId -> tool name of every call waiting for a decision now."""
        with self._lock:
            return {a["callId"]: a["name"] for a in self.model.waiting_approvals()}

    def _todo(self) -> list[tuple[str, str, str, str | None]]:
        with self._lock:
            todo = []
            for a in self.model.waiting_approvals():
                if a["callId"] in self._asked:
                    continue
                tool = self.model.tools.get(a["callId"])
                arguments = (tool["arguments"] if tool else None) or ""
                if tool is not None:  # edited at a breakpoint: ask about what will run
                    arguments = edited_arguments(self.model, a["callId"], tool["callSeq"], None) or arguments
                todo.append((a["callId"], a["name"], arguments, a.get("reason")))
            self._asked.update(t[0] for t in todo)
        return todo

    def ask(self, ask: Asker, answer: Callable[..., None], *,
            before: Callable[[], None] = lambda: None, no_stdin: Callable[[str], None] = lambda _t: None,
            after: Callable[[str], None] = lambda _c: None) -> int:
        """Ask every new approval with ``ask(prompt)``; ``answer(call_id, decision, scope)`` each:
        ``y``/``yes`` allow, ``a``/``always`` allow for the rest of the session (scope
        ``session``: this tool — for bash a read-only name or the exact command), anything else denies.
        ``exit_plan_mode``: ``a`` / ``d`` approve (``mode=`` accept-edits / default), anything else
        keeps planning (``feedback=`` the text typed).

        ``KeyboardInterrupt`` propagates (the wait then cancels the turn); any other failure of
        ``ask`` (no stdin in this front end) denies. ``after(call_id)`` follows each answer typed
        on stdin (the cell's view then continues below it). Returns how many were asked.
        """
        todo = self._todo()
        for call_id, name, arguments, reason in todo:
            before()
            try:
                reply = ask(prompt_text(name, arguments, reason))
            except KeyboardInterrupt:
                raise
            except Exception:
                reply = "n"
                no_stdin(f"{name}: {NO_STDIN}")
            else:
                after(call_id)
            if name == "exit_plan_mode":
                decision, mode, feedback = parse_plan_answer(reply)
                answer(call_id, decision, "call", **({"mode": mode} if mode else {"feedback": feedback} if feedback else {}))
                continue
            decision, scope = parse_answer(reply)
            if scope == "session" and allow_always_label(name, arguments) is None:
                scope = "call"  # `a` was not offered: it allows this call only
            answer(call_id, decision, scope)
        return len(todo)

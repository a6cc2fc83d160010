"""``python -m dsh_notebook run PROMPT``: one turn, headless, through the same host path.

Create (or resume with ``--session``) a session, open ``session/follow``, submit the prompt
(``session/prompt`` → ``{"accepted": true}``), follow to the end of the turn that ran it, then
print the final answer and ``session: <id> log: <path>`` on stdout. Progress (streamed text,
tool phases: the notebook's :class:`~dsh_notebook.notebook.cell.render.TurnView` on a stream sink, read
from the follow's client model) goes to stderr unless ``--quiet``. At a terminal (stdout and stderr
both TTYs) the streamed answer is not printed a second time on stdout; piped or redirected, stdout
always carries it. ``--json`` prints one object instead (``sessionId``, ``logPath``, ``turn``,
``completed``, ``reason``, ``answer``) and no progress. Exit codes: 0 the turn
completed; 1 it ended otherwise (the reason is printed on stderr, e.g. ``budget: max-steps 5
reached``); 130 interrupted, 143 on SIGTERM (129 SIGHUP): the run is cancelled first, so the turn
ends ``aborted`` with every call answered and the log flushed. ``--approve ask`` (the default
outside a demo workspace copy) asks on the terminal (:mod:`.cli_tty`); everything printed has its
terminal control sequences neutralised. Everything goes through :class:`DshClient` over an
in-process transport: the CLI is just another client of the Host.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import uuid
from collections.abc import Callable
from typing import Any, TextIO, cast

from .cli_tty import PrintableStream, TtyApprovals, printable, terminate_as_interrupt
from .client.dsh_client import DshClient
from .client.follow import TurnOutcome
from .cmdline.options import BreakPlan, break_plan, session_options
from .config import settings_from_env
from .errors import UserError
from .host.waiting import WaitingTicker
from .launcher import new_host
from .notebook.cell.live_view import LiveTurnView
from .notebook.cell.render import TurnView
from .notebook.cell.sinks import TerminalSink


def run_main(args: argparse.Namespace) -> int:
    with terminate_as_interrupt() as signals:
        try:
            return _run(args, signals)
        except KeyboardInterrupt:
            if not signals:
                raise
            print(f"terminated ({signal.Signals(signals[0]).name})", file=sys.stderr)
            return 128 + signals[0]


def _run(args: argparse.Namespace, signals: list[int]) -> int:
    settings = settings_from_env().with_overrides(model=args.model, base_url=args.base_url)
    # every flag checked as %dsh checks it, a coded error naming the flag, before a session (and a
    # demo copy) is made: budgets, rules, the mode (BYPASS_NOT_ARMED), request options, the debugger's
    options: dict[str, Any] = session_options(args)
    plan = break_plan(args)
    prompt = " ".join(args.prompt)
    if not prompt.strip():  # refused before a session (and a demo copy) is made for nothing
        raise UserError("the prompt is empty: give some text", code="EMPTY_CONTENT")
    cwd = args.cwd
    if getattr(args, "demo", False):
        if args.cwd or args.session:
            raise UserError("--demo starts a new session on a fresh copy of the demo workspace: "
                            f"drop {'--cwd' if args.cwd else '--session'}", code="BAD_FLAG")
        from .demo import copy_demo_workspace

        cwd = str(copy_demo_workspace())
    host = new_host(settings, name="dsh-host-cli")
    client = DshClient(host, caller="cli")
    quiet = getattr(args, "quiet", False) or getattr(args, "json", False)
    session_id: str | None = args.session
    request_id = f"req_{uuid.uuid4().hex[:12]}"
    view = LiveTurnView(request_id, None if quiet else TerminalSink(cast(TextIO, PrintableStream(sys.stderr))))
    try:
        if session_id is None:
            created = client.create_session(cwd=cwd, model=args.model, approve=args.approve,
                                            base_url=args.base_url, **options)
            session_id = created.session_id
            if not quiet:
                print(f"session {session_id} in {printable(created.cwd)} ({created.model})", file=sys.stderr)
        else:
            resumed = client.resume(session_id, model=args.model, approve=args.approve, base_url=args.base_url,
                                    **options)
            for warning in resumed.warnings:
                print(f"note: resuming {session_id}: {warning}", file=sys.stderr)
        handle = client.follow(session_id, None)
        sid = session_id
        approvals = TtyApprovals(handle, lambda call_id, decision, **plan: client.approve(sid, call_id, decision, **plan),
                                 sys.stderr)
        debugger = _debugger(plan, args.run_to, client, sid, handle, view)

        # "waiting for the model · 3 s" from the first second: in place on a terminal, else a line at
        # the first second and every 10 s (after any half-written line of the turn's text)
        sink = view.sink
        ticker = WaitingTicker(sys.stderr, before_show=sink.flush) if sink is not None else None

        def idle() -> None:  # the cell view of the notebook, on stderr, then any approval to ask
            with handle.cond:
                if ticker is not None:
                    ticker.tick(handle.model.attempt)  # "waiting for the model · 42 s" before the first chunk
                view.render(handle.model)
            approvals()
            if debugger is not None:
                debugger()

        handle.wait_snapshot()
        client.prompt(prompt, session_id, request_id=request_id)
        try:
            outcome = handle.wait_turn_end(request_id, idle=idle)
        except KeyboardInterrupt:
            client.cancel(session_id)
            print(f"{'terminated' if signals else 'interrupted'}: the turn was cancelled", file=sys.stderr)
            print(f"session: {session_id} log: {client.info(session_id).log_path}")
            return 128 + signals[0] if signals else 130
        finally:
            if ticker is not None:
                ticker.clear()
            with handle.cond:
                view.render(handle.model)
            if view.sink is not None:
                view.sink.flush()
            if debugger is not None:
                debugger.finish()  # a run-to that could not happen says so
            approvals.close()
            handle.close()
        log_path = client.info(session_id).log_path
    finally:
        client.close()
        host.shutdown()
    return _report(args, outcome, session_id, log_path, streamed=view.sink is not None)


def _debugger(plan: BreakPlan, run_to: str | None, client: DshClient, sid: str, handle: Any, view: TurnView) -> Any:
    """``--break STAGES [--break-tools NAMES] [--break-when EXPR] [--run-to 'N cK']`` (checked by
    :func:`~dsh_notebook.cmdline.options.break_plan`): the pdb-like debugger of the notebook on the
    terminal (c/s/r/p/e/q); without a terminal each pause is continued."""
    from .cli_tty import _Terminal
    from .notebook.cell.debug_console import DebugConsole

    if not plan:
        return None
    if plan.stages:
        client.debug(sid, "break", stages=plan.stages, tools=plan.tools, when=plan.when)
    console = DebugConsole(client, sid, handle.model, handle.cond)
    if plan.run_to is not None:
        stage, call = plan.run_to
        client.debug(sid, "run-to", stage=stage, call=call)
        console.asked(run_to or f"{stage} {call}")
    terminal: list[_Terminal] = []

    def ask(question: str) -> str:
        if not terminal:
            terminal.append(_Terminal())
        reply = terminal[0].ask(question)
        if reply is None:
            raise EOFError("no terminal")
        return reply

    def say(text: str) -> None:
        print(printable(text), file=sys.stderr, flush=True)

    def before(_pause: Any) -> None:
        with handle.cond:
            view.render(handle.model)

    return _Served(lambda: console.serve(ask, say, before=before), lambda: console.finish(say))


class _Served:
    """The terminal debugger: called while the turn runs (serves a pause); ``finish`` at its end."""

    def __init__(self, serve: Callable[[], object], finish: Callable[[], None]) -> None:
        self.serve, self.finish = serve, finish

    def __call__(self) -> None:
        self.serve()


def answer_on_stdout(streamed: bool) -> bool:
    """Whether stdout carries the final answer: always unless the stream already put it there —
    stdout a terminal and the stream shown on a terminal stderr, or both the same open file or pipe
    (``2>&1``): it would be printed twice."""
    return not (streamed and ((_tty(sys.stdout) and _tty(sys.stderr)) or _same_file(sys.stdout, sys.stderr)))


def _same_file(a: object, b: object) -> bool:
    try:
        sa, sb = os.fstat(a.fileno()), os.fstat(b.fileno())  # type: ignore[attr-defined]
    except (AttributeError, ValueError, OSError):
        return False
    return (sa.st_dev, sa.st_ino) == (sb.st_dev, sb.st_ino)


def _tty(stream: object) -> bool:
    try:
        return bool(stream.isatty())  # type: ignore[attr-defined]
    except (AttributeError, ValueError):
        return False


def _report(args: argparse.Namespace, outcome: TurnOutcome, session_id: str, log_path: str | None, *,
            streamed: bool) -> int:
    """The end of ``run``: the answer (once), the session line, the reason when it did not complete."""
    if getattr(args, "json", False):  # one JSON object on stdout, nothing else there
        print(json.dumps({"sessionId": session_id, "logPath": log_path, "turn": outcome.turn,
                          "completed": outcome.completed, "reason": outcome.reason,
                          "answer": outcome.final_answer}, ensure_ascii=False))
    else:
        if outcome.final_answer and answer_on_stdout(streamed):
            print(printable(outcome.final_answer))
        print(f"session: {session_id} log: {log_path}")
    if outcome.completed:
        return 0
    print(f"the turn did not complete: {printable(outcome.describe_reason())}", file=sys.stderr)
    return 1

def compact_main(args: argparse.Namespace) -> int:
    """``python -m dsh_notebook compact ID``: resume the session, compact it, say what it did."""
    settings = settings_from_env().with_overrides(model=args.model, base_url=args.base_url)
    host = new_host(settings, name="dsh-host-cli")
    client = DshClient(host, caller="cli")
    try:
        client.resume(args.session, model=args.model, base_url=args.base_url)
        done = client.compact(args.session)
        log_path = client.info(args.session).log_path
    finally:
        client.close()
        host.shutdown()
    if done.compacted:
        print(f"compacted {done.replaced} surface nodes into one summary (#{done.summary_seq}); "
              f"history ~{done.tokens_before} -> ~{done.tokens_after} tokens")
    else:
        print("nothing to compact")
    print(f"session: {args.session} log: {log_path}")
    return 0

"""``python -m dsh_notebook run PROMPT``: one turn, headless, through the same host path.

Create (or resume with ``--session``) a session, open ``session/follow``, submit the prompt
(``session/prompt`` → ``{"accepted": true}``), follow to the end of the turn that ran it, then
print the final answer and ``session: <id> log: <path>`` on stdout. Progress (streamed text,
tool phases: the notebook's :class:`~dsh_notebook.notebook.render.TurnView` on a stream sink, read
from the follow's client model) goes to stderr unless ``--quiet``. Exit codes: 0 the turn completed; 1 it ended
otherwise (the reason is printed on stderr); 130 interrupted (the run is cancelled first, so the
turn ends ``aborted`` with every call answered). Everything goes through :class:`DshClient`
over an in-process transport: the CLI is just another client of the Host.
"""

from __future__ import annotations

import argparse
import sys
import uuid

from ..client.dsh_client import DshClient
from ..config import settings_from_env
from ..notebook.render import TurnView
from ..notebook.sinks import TerminalSink
from .host import Host


def run_main(args: argparse.Namespace) -> int:
    settings = settings_from_env().with_overrides(model=args.model, base_url=args.base_url)
    host = Host(settings, name="dsh-host-cli")
    client = DshClient(host, caller="cli")
    quiet = getattr(args, "quiet", False)
    session_id: str | None = args.session
    request_id = f"req_{uuid.uuid4().hex[:12]}"
    view = TurnView(request_id, None if quiet else TerminalSink(sys.stderr))
    try:
        if session_id is None:
            created = client.create_session(cwd=args.cwd, model=args.model, approve=args.approve, base_url=args.base_url)
            session_id = created.session_id
            if not quiet:
                print(f"session {session_id} in {created.cwd} ({created.model})", file=sys.stderr)
        else:
            client.resume(session_id, model=args.model, approve=args.approve, base_url=args.base_url)
        handle = client.follow(session_id, None)

        def render() -> None:  # the cell view of the notebook, on stderr: read from the model
            with handle.cond:
                view.render(handle.model)

        handle.wait_snapshot()
        client.prompt(" ".join(args.prompt), session_id, request_id=request_id)
        try:
            outcome = handle.wait_turn_end(request_id, idle=render)
        except KeyboardInterrupt:
            client.cancel(session_id)
            print("interrupted: the turn was cancelled", file=sys.stderr)
            print(f"session: {session_id} log: {client.info(session_id).log_path}")
            return 130
        finally:
            render()
            if view.sink is not None:
                view.sink.flush()
            handle.close()
        log_path = client.info(session_id).log_path
    finally:
        client.close()
        host.shutdown()
    if outcome.final_answer:
        print(outcome.final_answer)
    print(f"session: {session_id} log: {log_path}")
    if outcome.completed:
        return 0
    print(f"the turn did not complete: {outcome.describe_reason()}", file=sys.stderr)
    return 1

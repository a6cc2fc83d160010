"""The Session Controller (seed 001 L4, object 14): the session API entry, a Service.

The Gateway calls ``controller.<method>(args, invocation)`` for every endpoint of the contract
(streams also get a sink). The controller delegates: prompts to the command handler, session ids
to the Agent resolver, facts and live frames to the follow hubs, host-wide state to the control
hub. It runs on the host loop only.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable
from typing import Any

from ..config import normalize_model_id, parse_model_id
from ..errors import HostError, UserError
from ..session.session import Session
from ..tools.modes import approve_of_mode, check_mode, default_mode, mode_of_approve
from ..wire.endpoints import (
    Accepted,
    ApproveArgs,
    Cancelled,
    Compacted,
    CreateArgs,
    DebugArgs,
    DebugState,
    Decided,
    DiffArgs,
    FollowArgs,
    KeepArgs,
    KeptFiles,
    ListedSession,
    ModeArgs,
    ModeSet,
    NoArgs,
    PromptArgs,
    ResumeArgs,
    Resumed,
    RewindArgs,
    Rewound,
    RunToTarget,
    SessionCreated,
    SessionInfo,
    SessionList,
    SessionRef,
    TurnDiff,
)
from ..wire.external import EventsArgs, EventsPage
from ..wire.pages import Page, PageArgs
from .commands import SessionCommandHandler
from .control import ControlHub
from .gateway import GatewayInvocation, StreamSink
from .live import LiveSession
from .options import window_known
from .pages import PageSource, PageSources
from .registry import AgentRegistry
from .saved import ReadOnlyController, store_reader


class SessionController:
    """create / prompt / cancel / list / resume / approve / info, follow and control."""

    def __init__(self, registry: AgentRegistry, control: ControlHub) -> None:
        self.registry = registry
        self.control_hub = control
        self.commands = SessionCommandHandler(registry)
        self.saved = ReadOnlyController(
            store_reader(registry.store.path_for), registry.hub, default_model=registry.settings.model
        )
        self.pages = PageSources()

    async def create(self, args: CreateArgs, inv: GatewayInvocation) -> SessionCreated:
        if args.mode is not None:
            check_mode(args.mode)  # BYPASS_NOT_ARMED before a workspace is copied or a session made
        settings = self.registry.settings
        model = normalize_model_id(args.model or settings.model, args.base_url or settings.base_url)
        provider, _ = parse_model_id(model)
        if args.cwd:
            cwd = await asyncio.to_thread(_check_dir, args.cwd)
        elif provider == "script":
            from ..demo import copy_demo_workspace

            cwd = str(await asyncio.to_thread(copy_demo_workspace))
        else:
            cwd = os.getcwd()
        # --mode wins over the legacy --approve; neither: what the workspace implies (auto in a demo copy)
        mode = args.mode or (mode_of_approve(args.approve) if args.approve else default_mode(cwd))
        live = await self.registry.create(cwd, model, mode, args.base_url, args, by=inv.caller)
        inv.note("created", {"sessionId": live.id, "cwd": cwd, "model": model, "mode": mode})
        return SessionCreated(session_id=live.id, cwd=cwd, model=model, approve=approve_of_mode(mode),
                              log_path=live.log_path, mode=live.mode)

    async def prompt(self, args: PromptArgs, inv: GatewayInvocation) -> Accepted:
        inv.note("delegated", "SessionCommandHandler.prompt")
        return await self.commands.prompt(args.request, inv)

    async def cancel(self, args: SessionRef, inv: GatewayInvocation) -> Cancelled:
        live = self.registry.live.get(args.session_id)
        if live is None:
            if not self.registry.saved(args.session_id):
                raise HostError(f"no session {args.session_id!r}", code="UNKNOWN_SESSION")
            return Cancelled(session_id=args.session_id, cancelled=False)
        was_running = await live.agent.cancel(cause="user")
        inv.note("cancelled", was_running)
        return Cancelled(session_id=live.id, cancelled=was_running)

    async def list(self, args: NoArgs, inv: GatewayInvocation) -> SessionList:
        saved = await asyncio.to_thread(self.registry.store.list_saved)
        out = []
        for s in saved:
            live = self.registry.live.get(s.id)
            # "N events" is the last seq + 1 everywhere (client/summary.event_count); a live
            # session's events in memory may be ahead of its flushed lines
            events = live.session.events if live else ()
            out.append(
                ListedSession(
                    session_id=s.id, title=s.title, turns=s.turns, last_activity=s.last_activity_ms,
                    event_count=events[-1].seq + 1 if events else s.event_count, path=s.path,
                    live=live is not None,
                    status=live.agent.status if live else "saved",
                )
            )  # fmt: skip
        return SessionList(sessions=tuple(out))

    async def resume(self, args: ResumeArgs, inv: GatewayInvocation) -> Resumed:
        live, how = await self.registry.resolve(
            args.session_id, model=args.model, approve=args.approve, base_url=args.base_url, options=args,
            by=inv.caller,
        )
        inv.note("resolver", how)
        warnings = tuple(live.warnings) if how == "resumed" else ()
        return Resumed(session_id=live.id, cwd=live.session.cwd, model=live.model, resolution=how, warnings=warnings,
                       mode=live.mode)

    async def approve(self, args: ApproveArgs, inv: GatewayInvocation) -> Decided:
        live = self._live(args.session_id)
        live.approvals.answer(args.call_id, args.decision, by=inv.caller, scope=args.scope, mode=args.mode,
                              feedback=args.feedback)
        return Decided(session_id=live.id, call_id=args.call_id, decision=args.decision)

    async def mode(self, args: ModeArgs, inv: GatewayInvocation) -> ModeSet:
        """Set the permission mode (a saved session is resumed first); ``BYPASS_NOT_ARMED``."""
        live, how = await self.registry.resolve(args.session_id)
        inv.note("resolver", how)
        previous = live.mode
        seq = await live.set_mode(args.mode, inv.caller)
        inv.note("mode", {"mode": live.mode, "previous": previous})
        return ModeSet(session_id=live.id, mode=live.mode, previous=previous, changed_seq=seq)

    async def debug(self, args: DebugArgs, inv: GatewayInvocation) -> DebugState:
        """The agent debugger (see :mod:`dsh_notebook.agent.debugger`). ``break`` makes a saved
        session live (its next prompt will pause); the other actions need a live one."""
        if args.action == "break":
            live, how = await self.registry.resolve(args.session_id)
            inv.note("resolver", how)
        else:
            live = self._live(args.session_id)
        dbg = live.agent.debugger
        edit_seq = None
        if args.action == "break":
            if args.stages is None:
                raise HostError("break needs stages, e.g. [\"03\", \"06\"] ([] clears)", code="BAD_ARGS")
            dbg.set_breakpoints(list(args.stages), list(args.tools) if args.tools is not None else None, when=args.when)
        elif args.action in ("continue", "step"):
            dbg.resume(args.action)  # type: ignore[arg-type]
        elif args.action == "edit":
            if args.target is None or "value" not in args.model_fields_set:
                raise HostError("edit needs target and value", code="BAD_ARGS")
            edit_seq = dbg.edit(args.target, args.value, call_id=args.call_id, by=inv.caller).seq
        elif args.action == "run-to":
            dbg.run_to(args.stage, args.call)
        paused, target = dbg.paused, dbg.runto.target
        return DebugState(
            session_id=live.id, stages=tuple(sorted(dbg.stages)),
            tools=tuple(sorted(dbg.tools)) if dbg.tools is not None else None, when=dbg.when,
            paused=paused.item() if paused is not None else None, edit_seq=edit_seq,
            run_to=RunToTarget(stage=target.stage, call=target.call) if target is not None else None,
            run_to_missed=dbg.runto.missed,
        )

    async def compact(self, args: SessionRef, inv: GatewayInvocation) -> Compacted:
        """Compact a session on demand (resumed first if saved); ``TURN_RUNNING`` while it runs."""
        live, how = await self.registry.resolve(args.session_id)
        inv.note("resolver", how)
        done = await live.agent.compact()  # coded errors (TURN_RUNNING, the model's) reach the caller
        if done is None:
            return Compacted(session_id=live.id, compacted=False)
        return Compacted(session_id=live.id, compacted=True, summary_seq=done.summary_seq, replaced=done.replaced,
                         tokens_before=done.tokens_before, tokens_after=done.tokens_after)

    async def rewind(self, args: RewindArgs, inv: GatewayInvocation) -> Rewound:
        """Back to the start of a turn, through the checkpoints the host was given (the real ones:
        :mod:`dsh_notebook.checkpoint.host_rewind`); ``SESSION_BUSY`` while the session runs a turn."""
        checkpoints = self.registry.parts.checkpoints_or_refuse()  # before a saved session is resumed
        live, how = await self.registry.resolve(args.session_id)
        inv.note("resolver", how)
        return await checkpoints.rewind(self.registry, live, args, by=inv.caller)

    async def keep(self, args: KeepArgs, inv: GatewayInvocation) -> KeptFiles:
        """Keep what a turn did to some files (the inspector's Keep): ``checkpoint/kept``."""
        checkpoints = self.registry.parts.checkpoints_or_refuse()  # before a saved session is resumed
        live, how = await self.registry.resolve(args.session_id)
        inv.note("resolver", how)
        return await checkpoints.keep(self.registry, live, args, by=inv.caller)

    async def diff(self, args: DiffArgs, inv: GatewayInvocation) -> TurnDiff:
        """The unified diffs of the files a turn changed, read from the checkpoint store."""
        checkpoints = self.registry.parts.checkpoints_or_refuse()  # before a saved session is resumed
        live, how = await self.registry.resolve(args.session_id)
        inv.note("resolver", how)
        return await checkpoints.diff(self.registry, live, args)

    async def info(self, args: SessionRef, inv: GatewayInvocation) -> SessionInfo:
        live = self.registry.live.get(args.session_id)
        if live is not None:
            await window_known(live.agent)  # a window probe under way answers first (bounded)
            # the last seq a follower may see: a turn/end still on its way to disk is not yet in
            # the session (a follow from the seq given here must always be accepted)
            return live.info().model_copy(update={"last_seq": self._visible_last(live.id)})
        self._check_saved(args.session_id)
        return await self.saved.info(args, inv)

    async def events(self, args: EventsArgs, inv: GatewayInvocation) -> EventsPage:
        """A page of the stored events after ``sinceSeq`` (as logged: masked), live or saved."""
        live = self.registry.live.get(args.session_id)
        if live is not None:
            session = live.session
            last = self._visible_last(live.id)  # what followers may see: a turn/end is out once on disk
            end = min(last, args.since_seq + args.limit)
            events = tuple(json.loads(session.line(seq)) for seq in range(args.since_seq + 1, end + 1))
            return EventsPage(session_id=live.id, events=events, last_seq=last, more=end < last)
        self._check_saved(args.session_id)
        lines = await asyncio.to_thread(_saved_lines, self.registry.store.path_for(args.session_id))
        page = lines[args.since_seq + 1: args.since_seq + 1 + args.limit]
        return EventsPage(session_id=args.session_id, events=tuple(json.loads(x) for x in page), last_seq=len(lines) - 1,
                          more=args.since_seq + len(page) < len(lines) - 1)

    def _visible_last(self, session_id: str) -> int:
        hub, live = self.registry.hub(session_id), self.registry.live[session_id]
        return hub.visible() - 1 if hub.session is live.session else live.session.last_seq

    # -- streams ------------------------------------------------------------------------------
    async def follow(self, args: FollowArgs, inv: GatewayInvocation, sink: StreamSink) -> Callable[[], None]:
        sid = args.session_id
        self.registry.check_id(sid)
        hub = self.registry.hub(sid)
        if hub.session is None:
            self._check_saved(sid)
            return await self.saved.follow(args, inv, sink)  # attaches instead if resumed meanwhile
        if not hub.session.all_serialised:  # a resumed log's events: serialise them off the loop
            session, count = hub.session, len(hub.session)
            await asyncio.to_thread(_serialise, session, count)
        inv.note("follow", "live session")
        if args.window is not None and len(hub.session) - 1 - (args.cursor if args.cursor is not None else -1) > args.window:
            self._pages(hub.session).prepare()  # the client reads what precedes its window in pages
        return hub.open(sink, args.cursor, window=args.window)

    async def page(self, args: PageArgs, inv: GatewayInvocation) -> Page:
        """A page of a session's views (:mod:`.pages`): a live session's, else its saved log's."""
        live = self.registry.live.get(args.session_id)
        if live is None:
            self._check_saved(args.session_id)
            return await self.saved.page(args, inv)
        inv.note("page", f"{args.query.kind}, live session")
        return await self._pages(live.session).page(args.query)

    def _pages(self, session: Session) -> PageSource:
        # what its followers may see: a turn/end once it is on disk (the follow hub holds it till then)
        return self.pages.live(session, lambda: self.registry.live, self.registry.hub(session.id).visible)

    def _check_saved(self, session_id: str) -> None:
        if not self.registry.saved(session_id):
            raise HostError(f"no session {session_id!r} (live or saved)", code="UNKNOWN_SESSION")

    async def control(self, args: NoArgs, inv: GatewayInvocation, sink: StreamSink) -> Callable[[], None]:
        return self.control_hub.open(sink)

    def _live(self, session_id: str) -> LiveSession:
        live = self.registry.live.get(session_id)
        if live is None:
            self._check_saved(session_id)  # no such session at all: say so
            raise HostError(f"session {session_id!r} is saved but not running here: resume it (session/resume, or "
                            "session/debug break, which resumes it) first", code="UNKNOWN_SESSION")
        return live


def _serialise(session: Session, count: int) -> None:
    """Make sure the first ``count`` events have their stored line (a resumed session's
    restored events are serialised on first use)."""
    for seq in range(count):
        session.line(seq)


def _saved_lines(path: Any) -> list[str]:
    """The event lines of a saved log (its header and a torn last line left out)."""
    from ..session.persistence import load_log
    from ..wire.base import to_json

    return [to_json(event) for event in load_log(path).events]


def _check_dir(path: str) -> str:
    cwd = os.path.abspath(os.path.expanduser(path))
    if not os.path.isdir(cwd):
        raise UserError(f"cwd {path!r} is not a directory", code="BAD_CWD")
    return cwd

"""Agent registry and resolver (seed 001 L4, objects 16–18).

The registry keeps the **live** agents of this process, one :class:`LiveSession` per session id:
the Core Session, its Agent, its follow hub, its pending approvals, and the requestIds it has
admitted (rebuilt from the log on resume, so deduplication survives restarts). The resolver
turns a session id into a live agent: already live → ``"live"``; saved on disk → resumed through
``SessionStore.resume`` (crash repair applied) → ``"resumed"``; otherwise ``UNKNOWN_SESSION``.
Concurrent resumes of one session share one future, so the log is loaded once. Every live
session gets the observers and the checkpoints the host was given (:mod:`.parts`), none if it was
given none. Host loop only.
"""

from __future__ import annotations

import asyncio
import logging
import re
from collections.abc import Callable

from pydantic import JsonValue

from ..agent.agent import Agent
from ..agent.config import AgentConfig
from ..config import (
    MASK,
    Settings,
    normalize_model_id,
    parse_model_id,
    redact_url,
)
from ..context import HarnessContext
from ..errors import DshError, HostError, UserError
from ..models.base import ModelAdapter
from ..models.routing import resolve_adapter
from ..session.session import Session
from ..session.store import SessionStore
from ..tools.base import ApprovalMode
from ..tools.modes import approve_of_mode, bypass_armed, check_mode, default_mode, mode_of_approve
from ..wire.endpoints import SessionOptions
from ..wire.events import PermissionMode
from .approvals import PendingApprovals
from .control import ControlHub
from .follow import SessionHub
from .live import (
    LiveSession,
    Resolution,
    admitted_request_ids,
    endpoint_from_log,
    is_local,
    model_from_log,
    refuse_self_replay,
)
from .options import (
    apply_options,
    apply_plan,
    apply_timeouts,
    check_offered_tools,
    initial_budgets,
    initial_plan,
    initial_rules,
    session_policy,
    session_settings,
    watch_window,
)
from .parts import NO_PARTS, HostParts

log = logging.getLogger(__name__)
AdapterFactory = Callable[[Settings, str, "str | None"], ModelAdapter]
_ID = re.compile(r"^[A-Za-z0-9_\-]{1,64}$")


def default_adapter_factory(settings: Settings, model_id: str, base_url: str | None) -> ModelAdapter:
    return resolve_adapter(settings, model_id, base_url=base_url)


class AgentRegistry:
    """Live agents by session id, and the resolver that makes a saved session live."""

    def __init__(
        self,
        settings: Settings,
        *,
        control: ControlHub,
        context: HarnessContext,
        adapter_factory: AdapterFactory | None = None,
        parts: HostParts = NO_PARTS,
    ) -> None:
        self.settings = settings
        self.parts = parts
        self.store = SessionStore(settings.home)
        self.control = control
        self.context = context
        self.adapter_factory = adapter_factory or default_adapter_factory
        self.live: dict[str, LiveSession] = {}
        self.hubs: dict[str, SessionHub] = {}
        self._resuming: dict[str, asyncio.Future[LiveSession]] = {}
        self.resumes_started = 0  # how many resumes actually loaded a log (coalescing is visible)

    # -- resolving ----------------------------------------------------------------------------
    def check_id(self, session_id: str) -> None:
        if not _ID.match(session_id):
            raise HostError(f"no session {session_id[:80]!r}", code="UNKNOWN_SESSION")

    def saved(self, session_id: str) -> bool:
        self.check_id(session_id)
        return self.store.path_for(session_id).is_file()

    async def resolve(
        self, session_id: str, *, model: str | None = None, approve: ApprovalMode | None = None,
        base_url: str | None = None, options: SessionOptions | None = None, by: str = "host",
    ) -> tuple[LiveSession, Resolution]:
        """Session id → live agent (``live``), or resume it from disk (``resumed``). ``options``
        (budgets, rules, the mode) apply to a live session too; ``approve`` only to one resumed.
        A resumed session keeps the mode its log last set (unless ``options.mode`` / ``approve``
        name another); ``by`` is who asked (logged on a ``mode/changed``)."""
        self.check_id(session_id)
        if options is not None and options.mode is not None:
            check_mode(options.mode)  # BYPASS_NOT_ARMED before anything changes
        live = self.live.get(session_id)
        if live is not None:
            check_offered_tools(options, self.context, live.agent)
            apply_options(live.agent, options)
            if options is not None and options.mode is not None:
                await live.set_mode(options.mode, by)
            return live, "live"
        pending = self._resuming.get(session_id)
        if pending is None:
            if not self.saved(session_id):
                raise HostError(f"no session {session_id!r} (live or saved)", code="UNKNOWN_SESSION")
            pending = asyncio.get_running_loop().create_future()
            self._resuming[session_id] = pending
            try:
                self.resumes_started += 1
                check_offered_tools(options, self.context)  # BAD_TOOLS before the log is touched
                refuse_self_replay(session_id, model, self.store.path_for(session_id))
                given = model is not None
                # a local model (replay:, script:) is built before the log is touched: a bad one
                # leaves the log as it was (not even the resume's session/end-seed is written)
                early = self.adapter_factory(self.settings, model, base_url) if model and is_local(model) else None
                try:
                    session = await asyncio.to_thread(self.store.resume, session_id)
                except BaseException:
                    if early is not None:
                        await early.aclose()
                    raise
                try:
                    logged_model = model_from_log(session)
                    if model is not None:  # `qwen2.5:7b` with a base URL (given or logged) is one name
                        model = normalize_model_id(model, base_url or self.settings.base_url or endpoint_from_log(session))
                    if base_url is None and (model is None or (logged_model is not None and parse_model_id(model) == parse_model_id(logged_model))):
                        base_url = self._logged_endpoint(session)  # keep talking to the same endpoint
                    model = model or logged_model or self.settings.model
                    # a model the caller names is built now, as create does: a bad one (replay of a
                    # missing log, no key …) is refused before a prompt is logged, not as the turn's error
                    adapter = early or (self.adapter_factory(self.settings, model, base_url) if given else None)
                except BaseException:
                    await asyncio.to_thread(self.store.close, session_id)  # release the writer lock
                    if early is not None:
                        await early.aclose()
                    raise
                live = self._start(session, model, default_mode(session.cwd), base_url, "resumed", options, adapter)
                live.warnings = self.store.warnings.pop(session_id, [])
                await self._resumed_mode(live, (options.mode if options is not None else None)
                                         or (mode_of_approve(approve) if approve else None), by)
                pending.set_result(live)
            except BaseException as exc:
                pending.set_exception(exc if isinstance(exc, Exception) else HostError("resume cancelled", code="CANCELLED"))
                pending.exception()  # retrieved: no "never retrieved" warning
                raise
            finally:
                self._resuming.pop(session_id, None)
            live.agent.kick()  # input queued before the crash runs now
            return live, "resumed"
        return await asyncio.shield(pending), "resumed"

    @staticmethod
    async def _resumed_mode(live: LiveSession, asked: PermissionMode | None, by: str) -> None:
        """A resumed session keeps its logged mode; ``asked`` replaces it; a logged ``bypass`` this
        process is not armed for falls back to ``default`` (logged, and a warning says so)."""
        if asked is not None:
            await live.set_mode(asked, by)
        elif live.mode == "bypass" and not bypass_armed():
            live.agent.modes.change("default", by="host", reason="bypass is not armed in this process "
                                    "(DSH_ALLOW_BYPASS=1)", turn=live.agent.current_turn)
            await live.agent.flush_quietly("a mode change")
            live.warnings.append("its mode was bypass, which this process is not armed for "
                                 "(DSH_ALLOW_BYPASS=1): it continues in mode default")

    def _logged_endpoint(self, session: Session) -> str | None:
        """The endpoint of the log's last request/header. Its credentials were never logged
        (masked): the configured URL that masks the same way supplies them, else the user must."""
        endpoint = endpoint_from_log(session)
        if endpoint is None or MASK not in endpoint:
            return endpoint
        if self.settings.base_url and redact_url(self.settings.base_url) == endpoint:
            return self.settings.base_url
        raise UserError(
            f"session {session.id} talked to {endpoint}, whose credentials are never logged: "
            "give the endpoint again with --base-url (or DSH_BASE_URL)",
            code="BASE_URL_NEEDED",
        )

    async def create(
        self, cwd: str, model: str, mode: PermissionMode, base_url: str | None,
        options: SessionOptions | None = None, by: str = "host",
    ) -> LiveSession:
        """A new session in ``mode``: a mode other than the one its workspace implies
        (:func:`~dsh_notebook.tools.modes.default_mode`) is logged first (``mode/changed``)."""
        if mode != "auto":
            check_mode(mode)  # BYPASS_NOT_ARMED before anything is made
        # fail early: BAD_CONFIG, BAD_TOOLS, NO_API_KEY, BAD_MODEL…
        check_offered_tools(options, self.context)
        adapter = self.adapter_factory(session_settings(self.settings, options), model, base_url)
        try:
            initial_budgets(self.settings, options)  # … BAD_CONFIG, BAD_RULES
            initial_rules(self.settings, options)
            session = await asyncio.to_thread(self.store.create, cwd)
        except BaseException:
            await adapter.aclose()
            raise
        live = self._start(session, model, default_mode(cwd), base_url, "created", options, adapter)
        if mode != live.mode:
            await live.set_mode(mode, by)
        return live

    # -- building a live session --------------------------------------------------------------
    def _start(
        self, session: Session, model: str, mode: PermissionMode, base_url: str | None, how: Resolution,
        options: SessionOptions | None = None,
        adapter: ModelAdapter | None = None,
    ) -> LiveSession:
        """Build the live session's Agent; ``adapter``: the one ``create`` built for ``model``
        (the Agent takes it over, and closes it with its others)."""
        sid = session.id
        max_steps, max_time = initial_budgets(self.settings, options)
        policy = session_policy(session.events, initial_rules(self.settings, options), sid, session.cwd)
        hub = self.hubs.setdefault(sid, SessionHub(sid))
        approvals = PendingApprovals()  # every mode may ask (auto: cells; plan: the plan)
        settings = session_settings(self.settings, options)

        prebuilt = {model: adapter} if adapter is not None else {}

        def adapter_for(model_id: str) -> ModelAdapter:
            return prebuilt.pop(model_id, None) or self.adapter_factory(settings, model_id, base_url)

        agent = Agent(
            session,
            AgentConfig(model=model, max_steps=max_steps, max_time=max_time,
                        retry_base_ms=round(settings.retry_delay * 1000)),
            adapter_for=adapter_for,
            approver=approvals,
            policy_mode=approve_of_mode(mode),
            mode=mode,
            context=self.context,
            frames=hub.on_frame,
            flush=hub.durable_flush(lambda: self.store.flush(sid)),  # a turn/end goes out once flushed
            approval_policy=policy,
        )
        apply_plan(agent, initial_plan(settings, options))  # output limit, request options, tools
        if options is not None and adapter is not None:
            apply_timeouts(agent, options, [adapter])
        watch_window(agent, adapter)  # the server's context window, known before the first request
        # an approval wait flushes the log (off the loop, a failure logged), as a debugger pause does
        approvals.durable = lambda: agent.flush_quietly("an approval wait")
        live = LiveSession(
            session, agent, hub, approvals, model, how,
            str(self.store.path_for(sid)), admitted_request_ids(session),
        )  # fmt: skip
        hub.attach(session, approvals.pending)
        for observe in self.parts.observers:  # the search index, the OpenTelemetry export ...
            live.undo.append(observe(session, home=settings.home, log_path=live.log_path))
        if self.parts.checkpoints is not None:
            live.checkpoints, detach = self.parts.checkpoints.attach(agent, settings.home)
            live.undo.append(detach)
        live.undo.append(agent.on_status(lambda status: self.control.status(sid, status)))
        live.undo.append(agent.inbox.subscribe(lambda inbox: self.control.queue(sid, inbox.items())))
        self.live[sid] = live
        self.control.added(sid, agent.status, agent.inbox.items())
        return live

    # -- reading ------------------------------------------------------------------------------
    def hub(self, session_id: str) -> SessionHub:
        return self.hubs.setdefault(session_id, SessionHub(session_id))

    def describe(self) -> list[dict[str, JsonValue]]:
        """The live agents (seed 001 object 17)."""
        return [
            {
                "sessionId": sid,
                "model": ls.model,
                "approve": ls.approve,
                "mode": ls.mode,
                "status": ls.agent.status,
                "resolution": ls.resolution,
                "followers": len(ls.hub.followers),
                "log": ls.log_path,
            }
            for sid, ls in self.live.items()
        ]

    async def wait_all_idle(self, *, answerable: bool = True) -> None:
        """Until no live agent is running (runs started meanwhile are waited for too).

        ``answerable=False``: no client can answer approvals any more; pending and later asks
        are ``cancelled`` so the runs can end."""
        while True:
            if not answerable:
                for ls in self.live.values():
                    ls.approvals.cancel_all(close=True)
            running = [ls.agent for ls in self.live.values() if ls.agent.status == "running"]
            if not running:
                return
            for agent in running:
                await agent.wait_idle()

    # -- shutdown -----------------------------------------------------------------------------
    async def aclose(self) -> None:
        """Cancel every run (turn/end aborted, cause shutdown), flush and close every log."""
        for sid, live in list(self.live.items()):
            try:
                live.approvals.cancel_all()
                await live.agent.close()
            except Exception:
                log.exception("closing agent %s failed", sid)
            for undo in live.undo:
                undo()
            try:
                self.store.close(sid)
            except DshError as exc:  # coded (DISK_FULL ...): say what is lost, no traceback
                log.error("the last events of %s could not be written, the log on disk ends before "
                          "them and is valid: %s", sid, exc.message.split(". Every event")[0])
            self.control.removed(sid)
        self.live.clear()
        for hub in self.hubs.values():
            hub.end_all()
            hub.detach()
        self.control.end_all()

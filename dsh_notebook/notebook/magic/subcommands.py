"""The ``%dsh`` subcommands: ``stop``, ``sessions``, ``resume ID``, ``show [ID]``, ``config``, ``mcp``,
``mode [NAME]`` (the permission mode: print it, or change it),
``doctor`` (which protections are active on this machine), ``rewind [N]`` / ``undo`` / ``changes [TURN]``
/ ``checkpoints [ID]`` (checkpoints: see :mod:`.checkpoints`), ``compact [ID]`` (summarise the older
turns now), ``policy [ID]`` (budgets, rules, grants, registered policy callables), ``policy check [ID]``
(the CLI's dry run of the rules or a mode), ``fork [ID] --at SEQ`` and ``compare A B``. Their words,
flags and help are declared in the command registry (:mod:`dsh_notebook.cmdline.table`); each is
``cmd_<name>`` here (``policy check``: ``cmd_policy_check``).

Each talks to the Host through the same Gateway path as a prompt and returns a small object with
a rich repr (:mod:`.views`), shown where its line stands in the cell (:mod:`.view_lines`), or prints
one line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...cmdline.dsh_line import MagicArgs
from ...cmdline.table import command
from ...config import redact_url
from ...errors import DshError, UserError
from .trajectory import trajectory_config
from .views import ConfigView, EventListing, McpView, SearchResults, SessionTable, StatsView

if TYPE_CHECKING:
    from ...config import Settings
    from ..cell.turn import CellTurn


def _is_log_path(target: str) -> bool:
    """``%dsh show PATH``: a log file named by its path (an id is ``s_…``, never a path)."""
    return target.endswith(".jsonl") or "/" in target or target.startswith("~") or Path(target).is_file()


class CommandsMixin:
    """Mixed into :class:`~.magics.DshMagics` (which provides the attributes declared here)."""

    current_session: str | None
    runs: dict[str, CellTurn]
    sessions: dict[str, tuple[Any, str | None]]
    approve: str | None
    mode: str | None
    link: Any

    def announce_mode(self, session_id: str, mode: str | None = None) -> None:
        raise NotImplementedError

    def settings(self) -> Settings:
        raise NotImplementedError

    def _session_or_current(self, args: MagicArgs, what: str) -> str:
        session_id = args.target or args.session or self.current_session
        if session_id is None:
            raise UserError(f"no session yet: run a prompt first, or {what} ID (ids: %dsh sessions)", code="NO_SESSION")
        return session_id

    def cmd_stop(self, args: MagicArgs) -> None:
        session_id = self._session_or_current(args, "%dsh --session")
        if self.link.cancel(session_id):
            print(f"dsh: cancelled the running turn of {session_id} (it ended aborted; every tool call answered)")
        else:
            print(f"dsh: nothing was running in {session_id}")

    def cmd_sessions(self, args: MagicArgs) -> SessionTable | SearchResults:
        if args.search is not None:
            from ...observe.search_view import search_sessions

            return SearchResults(args.search, search_sessions(self.settings().home, args.search))
        return SessionTable.from_summaries(self.link.list_sessions(), self.current_session)

    def remember(self, session_id: str) -> None:
        raise NotImplementedError

    def cmd_resume(self, args: MagicArgs) -> None:
        target = args.target
        if target is None:  # this notebook's session, recorded before a restart (notebook/context/records.py)
            from ..context.records import notebook_key, recorded_session

            target = recorded_session(Path(self.link.host.settings.home))
            if target is None:
                raise UserError(f"no session recorded for this notebook ({notebook_key()}); "
                                "use %dsh resume ID (ids: %dsh sessions)", code="NO_SESSION")
        # --model=… / --approve=… apply when the session is not live yet (a fork: --model=replay:ORIGIN)
        resumed = self.link.resume(target, model=args.model, approve=args.approve)
        self.current_session = resumed.session_id
        self.remember(resumed.session_id)
        how = "already live" if resumed.resolution == "live" else "resumed from its log"
        print(f"dsh: {resumed.session_id} {how} · {resumed.model} · workspace {resumed.cwd}; "
              "it is now the current session")
        for warning in resumed.warnings:
            print(f"dsh: note: resuming {resumed.session_id}: {warning}")

    def cmd_show(self, args: MagicArgs) -> Any:
        session_id = self._session_or_current(args, "%dsh show")
        if args.target and _is_log_path(args.target):  # a saved log by its path, as `show --stats PATH`
            return self._show_log(args, args.target)
        try:
            self.link.info(session_id)
        except DshError as exc:
            if exc.code == "UNKNOWN_SESSION" and args.target:
                raise UserError(f"no session {args.target!r}; to send that line as a prompt write "
                                f"%dsh -- show {args.target}", code="UNKNOWN_SESSION") from None
            raise
        if args.stats:
            from ...analysis.stats import session_stats

            return StatsView(session_id, session_stats(self.link.read(session_id).events))
        if not args.no_widget:
            widget = self.make_widget(session_id, inspect=args.inspect, present=args.present)
            if widget is not None:
                return widget
        model = self.link.read(session_id)
        return EventListing(session_id, model.events)

    def _sessions_dir(self) -> Path:
        """Where this kernel's host keeps its logs (``DshMagics.home`` may differ from ``DSH_HOME``)."""
        return Path(self.link.host.settings.sessions_dir)

    def log_path(self, target: str) -> Path:
        """The log of ``target``: a path to a log file, or a session id of this kernel's host."""
        from ...errors import LogFormatError

        path = Path(target).expanduser()
        if path.is_file() or _is_log_path(target):
            return path  # load_log says LOG_NOT_FOUND / LOG_HEADER … for a wrong one
        by_id = self._sessions_dir() / f"{target}.jsonl"
        if not by_id.is_file():
            raise LogFormatError(f"no session {target!r} (looked for {by_id}); %dsh sessions lists them",
                                 code="LOG_NOT_FOUND")
        return by_id

    def _show_log(self, args: MagicArgs, path: str) -> Any:
        from ...session.persistence import load_log

        loaded = load_log(self.log_path(path))
        if args.stats:
            from ...analysis.stats import session_stats

            return StatsView(loaded.id, session_stats(loaded.events))
        widget = None if args.no_widget else self.make_widget(str(loaded.path), inspect=args.inspect, present=args.present)
        return widget if widget is not None else EventListing(loaded.id, loaded.events)

    def cmd_fork(self, args: MagicArgs) -> None:
        from ...session.fork import fork_log

        origin = self._session_or_current(args, "%dsh fork")
        at = command("fork").flag("--at").checked(args.options["at"])  # type: ignore[union-attr]  # BAD_FORK_POINT
        result = fork_log(self.log_path(origin), at, self._sessions_dir())
        self.current_session = result.session_id
        self.remember(result.session_id)  # the notebook's current session: `%dsh resume` finds it
        closed = f"; {result.closers} closer{'' if result.closers == 1 else 's'} ended what was open there" if result.closers else ""
        print(f"dsh: forked {result.origin_id} at seq {result.at}{closed}; it is now the current session")
        from ...session.fork_workspace import workspace_note
        from ...session.persistence import load_log
        from ...tools.registry import is_read_only

        loaded = load_log(self.log_path(origin))
        print(f"dsh: {workspace_note(loaded.events, result.at, loaded.header.cwd, read_only=is_read_only)}")
        print(f"session: {result.session_id} log: {result.path}")

    def cmd_compare(self, args: MagicArgs) -> Any:
        from ...analysis.compare import compare_events
        from ...session.persistence import load_log
        from ..widgets.compare_view import ComparisonView

        a, b = (load_log(self.log_path(t)) for t in args.targets)
        if not args.no_widget and getattr(getattr(self, "shell", None), "kernel", None) is not None:
            try:
                from ..widgets.compare import CompareWidget

                return CompareWidget(a.id, a.events, b.id, b.events, paths=(str(a.path), str(b.path)))
            except Exception as exc:  # never lose the comparison: the text/HTML form
                print(f"dsh: widget unavailable ({type(exc).__name__}: {exc}); showing the table instead")
        pairs, divergence = compare_events(a.events, b.events)
        return ComparisonView(a.id, b.id, pairs, divergence)

    def cmd_config(self, args: MagicArgs) -> ConfigView:
        settings = self.settings()
        described = settings.describe()
        items = {"model": described["model"], "base URL": described["base_url"]}
        current = self.current_session
        known = self.sessions.get(current or "")
        if known is not None:
            created, base_url = known
            items["session"] = f"{current} · {created.model} · approve {created.approve}"
            items["workspace"] = created.cwd
            if base_url:
                items["base URL"] = redact_url(base_url) or ""
        else:
            info = self._info_or_none(current)
            items["session"] = current or "(none yet: the next prompt creates one)"
            items["workspace"] = info.cwd if info is not None else (
                "a fresh copy of the demo workspace" if settings.provider == "script" else "the kernel's working directory")
        items["approve"] = self.approve or "default (auto in the demo workspace, else ask)"
        live = self._info_or_none(current)
        items["mode"] = (f"{live.mode} (this session; %dsh mode NAME changes it)" if live is not None and live.mode
                         else self.mode or "for new sessions: auto in the demo workspace, else default")
        if live is not None and live.live:
            steps = f"{live.max_steps} steps" if live.max_steps is not None else "no step limit"
            seconds = f"{live.max_time}s" if live.max_time is not None else "no time limit"
            items["turn budget"] = f"{steps} · {seconds} (--max-steps / --max-time)"
            items.update(request_items(live.request))
        from ...models.routing import describe_defaults

        options = live.request.options if live is not None and live.live and live.request else None
        defaults = describe_defaults(known[0].model if known is not None else settings.model, options)
        if defaults:  # a local model's card sampling (issue 39 item 3)
            items["model defaults"] = defaults
        items["home"] = described["home"]
        items["sessions dir"] = described["sessions"]
        items["API key"] = described["api_key"]
        for key, value in trajectory_config().items():  # a live session's window (with its source) wins
            items.setdefault(key, value)
        from ...tools.mcp.config import load_config

        mcp = load_config(settings.home)
        count = len(mcp.servers) + len(mcp.problems)
        items["MCP servers"] = (f"{count} in {mcp.path} (%dsh mcp for status and tools)" if count or mcp.file_error
                                else f"none ({mcp.path}; %dsh mcp add NAME -- COMMAND ARGS)")
        return ConfigView(items)

    def cmd_mcp(self, args: MagicArgs) -> McpView:
        """``%dsh mcp [list|start [NAME]|restart NAME|add NAME -- CMD ARGS|add NAME --url URL|remove NAME]``."""
        import shlex

        from ...tools.mcp.listing import host_action

        try:
            tokens = shlex.split(args.text)
        except ValueError as exc:
            raise UserError(f"%dsh mcp: {exc}", code="MCP_CONFIG") from None
        host = self.link.host
        return McpView(host.run(host_action(host.mcp, tokens)))
    def cmd_doctor(self, args: MagicArgs) -> ConfigView:
        from ...doctor import protections

        return ConfigView(dict(protections()))

    def cmd_compact(self, args: MagicArgs) -> None:
        session_id = self._session_or_current(args, "%dsh compact")
        done = self.link.remote.session.compact(session_id=session_id)
        if done.compacted:
            print(f"dsh: compacted {done.replaced} surface nodes of {session_id} into one summary "
                  f"(#{done.summary_seq}); history ~{done.tokens_before} -> ~{done.tokens_after} tokens")
        else:
            print(f"dsh: nothing to compact in {session_id}")

    def cmd_rewind(self, args: MagicArgs) -> None:
        from .checkpoints import rewind_command

        rewind_command(self, args, undo=False)

    def cmd_undo(self, args: MagicArgs) -> None:
        from .checkpoints import rewind_command

        rewind_command(self, args, undo=True)

    def cmd_changes(self, args: MagicArgs) -> Any:
        from .checkpoints import changes_command

        return changes_command(self, args)

    def cmd_checkpoints(self, args: MagicArgs) -> Any:
        from .checkpoints import checkpoints_command

        return checkpoints_command(self, args)

    def cmd_mode(self, args: MagicArgs) -> None:
        """``%dsh mode``: the current session's permission mode; ``%dsh mode NAME`` changes it (with
        no session yet: the mode of the next new one, as ``DshMagics.mode``)."""
        from ...tools.modes import parse_mode

        session_id = args.session or self.current_session
        if args.target is None:
            info = self._info_or_none(session_id)
            if info is None:
                default = self.mode or "auto in a demo workspace copy, else default"
                print(f"dsh: no session yet; a new session starts in mode {default} (%dsh mode NAME to choose)")
                return
            print(f"dsh: {info.session_id} is in mode {info.mode}" + _MODE_HINT.get(str(info.mode), ""))
            self.announce_mode(info.session_id, info.mode)
            return
        mode = parse_mode(args.target, "%dsh mode")
        if session_id is None:
            self.mode = mode
            print(f"dsh: the next new session starts in mode {mode}" + _MODE_HINT.get(mode, ""))
            return
        done = self.link.set_mode(session_id, mode)
        how = f"is now in mode {done.mode} (was {done.previous})" if done.changed_seq is not None else f"is already in mode {done.mode}"
        print(f"dsh: {done.session_id} {how}" + _MODE_HINT.get(str(done.mode), ""))
        self.announce_mode(done.session_id, done.mode)

    def cmd_policy(self, args: MagicArgs) -> ConfigView:
        from ...tools.rules import registered_policies

        session_id = args.target or args.session or self.current_session
        info = self._info_or_none(session_id)
        items = {"session": session_id or "(none yet)", "mode": str(info.mode) if info is not None else "-",
                 "approve": info.approve if info is not None else "-"}
        if info is not None:
            steps, seconds = info.max_steps, info.max_time
            items["max steps"] = str(steps) if steps is not None else "no limit"
            items["max time"] = f"{seconds}s" if seconds is not None else "no limit"
            items["rules"] = info.rules or "(none: DSH_POLICY_FILE / --rules FILE)"
            items["granted for the session"] = ", ".join(_grant_text(g) for g in info.grants) or "(none)"
        names = [getattr(fn, "__qualname__", repr(fn)) for fn in registered_policies()]
        items["policy callables"] = ", ".join(names) or "(none: register with dsh_notebook.policy(fn))"
        return ConfigView(items)

    def cmd_policy_check(self, args: MagicArgs) -> None:
        """``%dsh policy check [ID|PATH] [--rules FILE] [--mode NAME]``: the CLI's dry run, one
        ``CALLID NAME allow/deny/ask RULE`` line per tool call of the session."""
        from ...tools.policy_check import verdicts

        target = self._session_or_current(args, "%dsh policy check")
        rules = args.options.get("rules") or self.settings().policy_file
        warnings, found = verdicts(self.log_path(target), rules, args.options.get("mode"))
        for warning in warnings:
            print(f"warning: {warning}")
        for verdict in found:
            print(verdict.line())
        if not found:
            print(f"dsh: no tool call in {target}")

    def _info_or_none(self, session_id: str | None) -> Any | None:
        if session_id is None:
            return None
        try:
            return self.link.info(session_id)
        except DshError:
            return None

    # --- widgets --------------------------------------------------------------------------------

    def make_widget(self, session_id: str, *, inspect: bool = False, present: bool = False) -> Any | None:
        """The live LoopWidget (or SessionInspector); ``None`` when widgets are unavailable
        (no kernel to carry them, as in terminal IPython, or the widget module fails)."""
        if getattr(getattr(self, "shell", None), "kernel", None) is None:
            return None
        try:
            from ..widgets import loop as widgets
        except Exception:
            return None
        try:
            if inspect:
                return widgets.SessionInspector(session_id, present=present)  # type: ignore[attr-defined]
            return widgets.LoopWidget(session_id, present=present)  # type: ignore[attr-defined]
        except Exception as exc:
            print(f"dsh: widget unavailable ({type(exc).__name__}: {exc}); showing text instead")
            return None

    def display_widget(self, session_id: str) -> None:
        widget = self.make_widget(session_id)
        if widget is None:
            print(f"dsh: running in the background in {session_id}; await the handle or call .wait()")
            return
        from IPython.display import display

        display(widget)


_MODE_HINT = {
    "default": ": reads run; writes, edits, bash, python and cell inserts ask",
    "accept-edits": ": reads and workspace edits run; bash, python and cell inserts ask",
    "plan": ": only reads run; the agent presents a plan for your approval (exit_plan_mode)",
    "dont-ask": ": reads run; whatever would ask is denied",
    "bypass": ": every call runs without asking, deny rules aside",
    "auto": " (legacy --approve auto): every call runs but notebook_insert, which asks",
}


def request_items(request: Any) -> dict[str, str]:
    """``%dsh config``'s lines about what a live session's requests carry (issue 20)."""
    if request is None:
        return {}
    window = (f"{request.context_window} tokens (from the {request.window_source})" if request.context_window
              else "unknown (give --context-window N)")
    limit = f"{request.max_tokens} tokens" if request.max_tokens else "derived from the window"
    options = ", ".join(f"{k}={json.dumps(v)}" for k, v in request.options.items()) or "none"
    timeouts = "default"
    if request.first_byte_timeout is not None:
        timeouts = f"first byte {request.first_byte_timeout:g} s · idle {request.idle_timeout:g} s"
    return {"context window": window, "output limit": f"{limit} (--max-tokens)",
            "request options": f"{options} (--option KEY=VALUE)", "tools offered": f"{request.tools} (--tools)",
            "model timeouts": f"{timeouts} (--first-byte-timeout / --idle-timeout)"}
def _grant_text(grant: Any) -> str:
    """``bash "git status *"``; an exact bash grant as its whole command, made visible."""
    from ...tools.grants import glob_literal
    from ...tools.visible import visible

    exact = glob_literal(grant.pattern) if grant.tool == "bash" else None
    return f'{grant.tool} "{visible(exact if exact is not None else grant.pattern)}"'

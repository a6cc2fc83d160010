"""``%dsh`` / ``%%dsh``: prompts to the agent from a notebook cell (DESIGN §2, §6).

Loop policy, on purpose: the Host runs on its own thread and loop; this module only parses the
line and talks to it through the Gateway (a :class:`~dsh_notebook.client.DshClient`, the same
client stack as the ``run`` CLI). A prompt **blocks** the cell
by default while it renders the turn (``Run All``, nbclient and papermill just work); a kernel
Interrupt cancels the turn through the Controller. ``--bg`` returns a :class:`~.turn.CellTurn`
handle at once and shows the live widget. Errors are one line, not a traceback.

Configuration: env (``DSH_MODEL``, ``DSH_BASE_URL``, ``DSH_API_KEY``, ``DSH_HOME``), then
``%config DshMagics.model|base_url|mode|approve|home|output|max_steps|max_time|policy_file``, then
the flags of one prompt (``--max-steps`` / ``--max-time`` / ``--rules`` / ``--mode`` also change an
existing session's budgets, rules and permission mode from that prompt on). A session in mode
``bypass`` is announced in red above each of its turns.
"""

from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

from IPython.core.magic import (
    Magics,
    line_cell_magic,
    magics_class,
    needs_local_scope,
    no_var_expand,
    output_can_be_silenced,
)
from IPython.display import display
from traitlets import Bool, Dict, Enum, Float, Int, Unicode, observe

from ...cmdline.dsh_line import MagicArgs, parse_line
from ...cmdline.help import command_help, help_text
from ...cmdline.options import BreakPlan, apply_process_flags, break_plan, session_options
from ...config import Settings, parse_model_id, settings_from_env
from ...demo import copy_demo_workspace, is_demo_copy
from ...errors import DshError, HostError, RunCancelled, UserError
from ...models.request_options import parse_options, parse_tools, tools_text
from ...tools.modes import MODES, parse_mode
from ...wire.codes import received
from ..cell.errors import DshMagicError
from ..cell.frontend import choose_output
from ..cell.result import TurnResult
from ..cell.sinks import DisplaySink, TerminalSink
from ..cell.turn import CellTurn
from ..context.cells import CellLog, current_cell
from ..context.mainthread import MainThreadRunner
from ..context.notebook_tools import make_notebook_tools
from ..context.python_tool import make_python_tool
from ..context.records import record_session
from .completion import install_completer
from .interpolate import interpolate
from .question_marks import keep_question_marks
from .subcommands import CommandsMixin
from .trajectory import set_prices_file

BYPASS_BANNER = ("mode bypass: every tool call of this session runs without asking — deny rules and the "
                 "sandbox aside (%dsh mode default to ask again)")

DISPLAYED = frozenset({"show", "changes", "checkpoints"})
"""Subcommands whose view is displayed at once (a widget, the event listing, the stats, a diff): a
README block pasted as one cell shows each of them, wherever the line stands."""

NOTEBOOK_TOOL_TEXTS = (
    ("python", "The `python` tool executes code in the notebook's live namespace (the user's variables "
               "and data), on approval; its result lists the names it added, rebound or deleted."),
    ("notebook_read", "`notebook_read` shows the cells run so far with their outputs."),
    ("inspect_var", "`inspect_var` describes a variable without running code."),
    ("notebook_insert", "`notebook_insert` proposes a new cell below the current one (on approval)."),
)


def notebook_section(env: Any) -> str:
    """The system prompt's notebook section: where the agent runs, and the notebook tools this
    step offers — none of them named in a turn that offers none (``--tools none``)."""
    offers = getattr(env, "offers", lambda _name: True)
    said = [text for name, text in NOTEBOOK_TOOL_TEXTS if offers(name)]
    return " ".join(["You are running inside the user's Jupyter notebook kernel.", *said])


NOTEBOOK_SECTION = notebook_section(None)  # the whole text (every notebook tool offered)


@magics_class
class DshMagics(CommandsMixin, Magics):
    """The ``%dsh`` magics; one instance per shell (``%load_ext dsh_notebook``)."""

    model = Unicode(None, allow_none=True, help="model id (provider:model) for new sessions").tag(config=True)
    base_url = Unicode(None, allow_none=True, help="OpenAI-compatible base URL for new sessions").tag(config=True)
    approve = Enum(("auto", "ask", "deny"), None, allow_none=True,
                   help="legacy approval setting for new sessions (ask = mode default, deny = dont-ask, auto = "
                        "everything runs but notebook_insert); DshMagics.mode wins").tag(config=True)
    mode = Enum(MODES, None, allow_none=True,
                help="permission mode of new sessions: default, accept-edits, plan, dont-ask, bypass (needs "
                     "DSH_ALLOW_BYPASS=1); default: auto in the demo workspace, else default. %dsh mode NAME "
                     "changes the current session's").tag(config=True)
    home = Unicode(None, allow_none=True, help="DSH_HOME for this kernel's host (before the first prompt)").tag(config=True)
    mcp_trust_readonly = Bool(None, allow_none=True,
                              help="MCP tools annotated readOnlyHint run without asking (DSH_MCP_TRUST_READONLY)").tag(config=True)
    output = Enum(("auto", "display", "stream"), "auto",
                  help="auto: by client (stream in jupyter console and terminal IPython, display in JupyterLab, "
                       "Notebook 7 and nbclient); display: an output updated in place, inert HTML (the model's Markdown "
                       "rendered with nothing that loads) and text/plain; stream: text on stdout").tag(config=True)
    prices_file = Unicode(None, allow_none=True,
                          help="a JSON price/context-window file over the built-in catalog (sets DSH_PRICES_FILE)").tag(config=True)

    @observe("prices_file")
    def _prices_file_changed(self, change: Any) -> None:
        set_prices_file(change["new"])
    sandbox_network = Bool(None, allow_none=True,
                           help="network for sandboxed tool commands (None: DSH_SANDBOX_NETWORK, default on)").tag(config=True)

    @observe("sandbox_network")
    def _sandbox_network_changed(self, change: Any) -> None:
        from ...tools.confine import configure

        configure(network=change["new"])
    max_steps = Int(None, allow_none=True,
                    help="turn budget for new sessions: model requests per turn (default DSH_MAX_STEPS, else 50; 0: none)").tag(config=True)
    max_time = Float(None, allow_none=True,
                     help="turn budget for new sessions: seconds per turn (default DSH_MAX_TIME, else none; 0: none)").tag(config=True)
    policy_file = Unicode(None, allow_none=True,
                          help="approval rules file for new sessions (default DSH_POLICY_FILE)").tag(config=True)

    max_tokens = Int(None, allow_none=True,
                     help="output limit of every request for new sessions (default DSH_MAX_TOKENS, else derived from the window)").tag(config=True)
    options = Dict(default_value={}, help="request options for new sessions, e.g. {'temperature': 0.2, 'seed': 7} "
                                          "(known OpenAI parameters as such, any other key in the request body)").tag(config=True)
    tools = Unicode(None, allow_none=True,
                    help="the tools offered to the model in new sessions: a comma list, none or all (default)").tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell, **kwargs)
        self.runner = MainThreadRunner.capture()
        self.current_session: str | None = None
        self.sessions: dict[str, tuple[Any, str | None]] = {}  # id -> (SessionCreated, base URL)
        self.runs: dict[str, CellTurn] = {}  # session id -> its last run
        self.last: TurnResult | None = None
        self._link: Any = None
        self._disposers: list[Any] = []
        self._announced = False
        self.agent_kernel = False  # set by the agent kernel (cells are prompts; code cells are %%python)
        self.waiting = False  # a blocking prompt cell is running (notebook_insert lands below it)
        self.cell_log = CellLog(shell).install() if shell is not None else None
        self._uncomplete = install_completer(shell, self._session_ids) if shell is not None else None

    # --- the magic ------------------------------------------------------------------------------

    @output_can_be_silenced
    @no_var_expand
    @line_cell_magic
    @needs_local_scope
    def dsh(self, line: str = "", cell: str | None = None, local_ns: dict[str, Any] | None = None) -> Any:
        try:
            args = parse_line(line, cell)
            apply_process_flags(args)  # --context-window, --no-network: this kernel's, from now on
            if args.help and args.command not in ("prompt", "help"):
                print(command_help(args.command))  # `%dsh show --help`
                return None
            if args.command == "prompt":
                return self.prompt(args, local_ns)
            if args.command == "help":
                print(help_text())
                return None
            if not args.no_interpolate:  # `%dsh resume {sid}`, `%dsh fork {sid} --at {seq}`
                namespaces = [ns for ns in (local_ns, self.shell.user_ns if self.shell else None) if ns is not None]
                args.target = interpolate(args.target, namespaces) if args.target else args.target
                args.targets = [interpolate(t, namespaces) for t in args.targets]
                args.options = {k: interpolate(v, namespaces) for k, v in args.options.items()}
                args.model = interpolate(args.model, namespaces) if args.model else args.model  # replay:{origin}
            shown = getattr(self, "cmd_" + args.command.replace(" ", "_"))(args)
            if args.command in DISPLAYED and shown is not None:
                display(shown)  # shown where the line stands in the cell, not only as its last line
                return None
            return shown
        except DshError as exc:
            raise DshMagicError(exc) from None
        except KeyboardInterrupt:  # an Interrupt before a turn was followed (a blocking wait has its own)
            raise DshMagicError(RunCancelled(
                "interrupted: this %dsh line stopped before it finished; no prompt was sent and the kernel is fine",
                code="INTERRUPTED")) from None

    # --- configuration and the host -------------------------------------------------------------

    def settings(self) -> Settings:
        base = settings_from_env()
        settings = base.with_overrides(model=self.model, base_url=self.base_url)
        if self.mcp_trust_readonly is not None:
            settings = replace(settings, mcp_trust_readonly=self.mcp_trust_readonly)
        return replace(settings, home=Path(self.home).expanduser()) if self.home else settings

    @property
    def link(self) -> Any:
        if self._link is None or getattr(self._link.host, "closed", False):
            from ...client.dsh_client import DshClient
            from ...launcher import process_host

            settings = self.settings()
            host = process_host(settings)
            if self.home and Path(host.settings.home) != settings.home:
                print(f"dsh: the host already runs with home {host.settings.home}; DshMagics.home applies after a restart")
            shell = self.shell
            assert shell is not None, "DshMagics needs a shell"
            tools = [make_python_tool(lambda: shell.user_ns, self.runner)]
            if self.cell_log is not None:
                tools += make_notebook_tools(shell, self.cell_log, self.runner, python_cells=lambda: self.agent_kernel,
                                             in_cell=lambda: self.waiting)
            # host.context lives on the host loop: contribute (and later dispose) there
            contributed = host.call(lambda: [*(host.context.tool(t) for t in tools),
                                             host.context.section("notebook", 90, notebook_section)])
            self._disposers = [partial(host.call, dispose) for dispose in contributed]
            self._link = DshClient(host, caller="notebook")
        return self._link

    def _announce_model(self, args: MagicArgs) -> None:
        if self._announced:
            return
        self._announced = True
        if not (args.model or self.model or settings_from_env().explicit_model):
            print("dsh: no model configured (DSH_MODEL, %config DshMagics.model or --model); "
                  "using the embedded scripted teaching model script:auto")

    # --- sessions -------------------------------------------------------------------------------

    def target_session(self, args: MagicArgs) -> str:
        """The session a prompt goes to: ``--session``, a new one, or the current one."""
        creation = {"model", "base_url", "cwd", "approve", "demo"} & args.given
        if args.session:
            if creation:
                flags = ", ".join("--" + f.replace("_", "-") for f in sorted(creation))
                raise UserError(f"{flags} apply to new sessions; drop them or use --new instead of --session", code="BAD_FLAG")
            return args.session  # becomes the current one once a prompt to it is accepted
        current = self.sessions.get(self.current_session or "")
        if args.new or self.current_session is None or (creation and not self._matches(current, args)):
            return self.create_session(args)
        return self.current_session

    def _matches(self, known: tuple[Any, str | None] | None, args: MagicArgs) -> bool:
        if known is None:
            return False
        created, base_url = known
        if args.model and args.model != created.model:
            return False
        if args.approve and args.approve != created.approve:
            return False
        if args.cwd and str(Path(args.cwd).expanduser().resolve()) != created.cwd:
            return False
        if args.demo and not is_demo_copy(created.cwd):
            return False
        return not (args.base_url and args.base_url != base_url)

    def create_session(self, args: MagicArgs) -> str:
        cwd = str(Path(args.cwd).expanduser().resolve()) if args.cwd else None
        if cwd and not Path(cwd).is_dir():
            raise UserError(f"--cwd {args.cwd}: no such directory", code="BAD_FLAG")
        base_url = args.base_url or self.base_url
        model = args.model or self.model or self.settings().model
        if (args.base_url or self.base_url or self.settings().base_url) and parse_model_id(model)[0] == "script":
            raise UserError("a base URL (--base-url, DSH_BASE_URL or DshMagics.base_url) needs a model name: "
                            "--model NAME, the model the server serves (e.g. --model qwen2.5)", code="BAD_FLAG")
        options = self.session_options(args)
        if args.demo:  # checked above: a fresh copy only for a session that will be made
            cwd = str(copy_demo_workspace())
        options.setdefault("max_steps", self.max_steps)
        options.setdefault("max_time", self.max_time)
        options.setdefault("rules", self.policy_file)
        options.setdefault("max_tokens", self.max_tokens)
        if "mode" not in options and not args.approve and self.mode is not None:
            options["mode"] = parse_mode(self.mode, "DshMagics.mode")  # --approve on the line beats the config
        if self.options:
            options["options"] = {**parse_options(dict(self.options), "DshMagics.options"), **options.get("options", {})}
        if self.tools is not None:
            options.setdefault("tools", tools_text(parse_tools(self.tools, "DshMagics.tools")))
        created = self.link.create_session(cwd=cwd, model=args.model or self.model,
                                           approve=args.approve or self.approve, base_url=base_url, **options)
        self.sessions[created.session_id] = (created, base_url)
        self.current_session = created.session_id
        print(f"dsh: new session {created.session_id} · {created.model} · mode {created.mode} · "
              f"workspace {created.cwd}{_workspace_note(created.cwd, given=cwd is not None)}")
        return str(created.session_id)

    def session_options(self, args: MagicArgs) -> dict[str, Any]:
        """The session options this line's flags set (``--max-steps``, ``--max-time``, ``--rules``,
        ``--mode``, ``--max-tokens``, ``--option``, ``--tools``, ``--max-repeats``, the timeouts), each
        checked as the CLI checks it (:func:`dsh_notebook.cmdline.options.session_options`)."""
        return session_options(args)

    # --- prompts --------------------------------------------------------------------------------

    def prompt(self, args: MagicArgs, local_ns: dict[str, Any] | None) -> Any:
        namespaces = [ns for ns in (local_ns, self.shell.user_ns if self.shell else None) if ns is not None]
        text = args.text if args.no_interpolate else interpolate(args.text, namespaces)
        self._announce_model(args)
        self._break_flags(args)
        known = set(self.sessions)
        session_id = self.target_session(args)
        options = self.session_options(args)
        if options and session_id in known | ({args.session} if args.session else set()):
            self.link.resume(session_id, **options)  # budgets / rules / the mode apply from this prompt on
        self.announce_mode(session_id)
        mode = "steer" if args.steer else "queue"
        if session_id in self.runs:  # an earlier --bg --break run's breakpoints are gone first
            self.runs[session_id].settle(replacing=args.breakpoints is not None)
        cell = current_cell(self.shell)
        debugging = False
        try:
            debugging = self._set_breakpoints(args, session_id)
            run = CellTurn(self.link, session_id, text, mode=mode, runner=self.runner, cell=cell,
                          sink=None if args.bg else self._sink(), clear_breakpoints=debugging and args.bg).start()
        except KeyboardInterrupt:
            return self._interrupted_sending(session_id, args.breakpoints is not None)
        if args.bg:
            self.current_session = session_id
            self.remember(session_id)
            self.runs[session_id] = run
            if not args.no_widget:
                self.display_widget(session_id)
            return run
        self.current_session = session_id
        self.remember(session_id)
        self.runs[session_id] = run
        if args.run_to is not None:
            run.console.asked(args.run_to)  # said at the turn's end if it could not happen
        self.waiting = True
        try:
            result = run.wait()
        finally:
            self.waiting = False
            if debugging:  # the breakpoints were this prompt's
                self._clear_breakpoints(session_id)
        self.last = result
        if run.interrupted:
            raise RunCancelled(f"interrupted: turn {result.turn} ended {result.reason.kind}; "
                               f"session {session_id} is ready for the next prompt", code="INTERRUPTED")
        if result.reason.kind == "error" and result.reason.error is not None:
            raise DshError(result.reason.error.message, code=received(result.reason.error.code))
        return result

    def announce_mode(self, session_id: str, mode: str | None = None) -> None:
        """A session in mode bypass says so, in red, in the cell (HTML, and ANSI red as text)."""
        if mode is None:
            try:
                mode = self.link.info(session_id).mode
            except DshError:
                return
        if mode != "bypass":
            return
        from html import escape

        from IPython.display import display

        display({"text/html": f'<div class="dsh-mode-bypass" style="color:#fff;background:#b3261e;padding:2px 8px;'
                              f'font-weight:600;border-radius:3px">⚠ {escape(BYPASS_BANNER)}</div>',
                 "text/plain": f"\x1b[1;31m⚠ {BYPASS_BANNER}\x1b[0m"}, raw=True)

    def _interrupted_sending(self, session_id: str, debugging: bool) -> None:
        """An Interrupt while the prompt was being sent: no cell follows the turn, so no breakpoint
        of this prompt may hold it (nobody would answer); say what may still run."""
        if debugging:
            self._clear_breakpoints(session_id)
        raise RunCancelled(f"interrupted while sending the prompt to {session_id}; if it arrived, its turn runs "
                           "on unwatched (%dsh stop cancels it, %dsh show follows it)", code="INTERRUPTED")

    def _clear_breakpoints(self, session_id: str) -> None:
        try:
            self.link.debug(session_id, "break", stages=[])
        except KeyboardInterrupt:  # a second Interrupt: the breakpoints still go (best effort)
            self.link.debug(session_id, "break", stages=[])
        except HostError as exc:
            if exc.code != "UNKNOWN_SESSION":
                raise

    @staticmethod
    def _break_flags(args: MagicArgs) -> BreakPlan:
        """``--break STAGES [--break-tools NAMES] [--break-when EXPR] [--run-to 'N cK']``, checked
        before any session is created (as ``run`` checks them)."""
        return break_plan(args)

    def _set_breakpoints(self, args: MagicArgs, session_id: str) -> bool:
        """The agent debugger for this prompt (``--break``, ``--run-to``); whether any was set."""
        plan = self._break_flags(args)
        if plan.stages:
            self.link.debug(session_id, "break", stages=plan.stages, tools=plan.tools, when=plan.when)
        if plan.run_to is not None:
            stage, call = plan.run_to
            self.link.debug(session_id, "run-to", stage=stage, call=call)
        return bool(plan)

    def _session_ids(self) -> list[str]:
        try:
            return [s.session_id for s in self.link.list_sessions()]
        except Exception:
            return []

    def remember(self, session_id: str) -> None:
        """Record the notebook's current session for ``%dsh resume`` after a restart (:mod:`.records`)."""
        try:
            record_session(Path(self.link.host.settings.home), session_id)
        except OSError as exc:
            print(f"dsh: could not record the notebook's session ({exc.strerror}); %dsh resume needs the ID")

    def _sink(self) -> DisplaySink | TerminalSink:
        mode, _why = choose_output(self.shell, self.output)  # the client's kind (frontend.py)
        return DisplaySink() if mode == "display" else TerminalSink()

    def close(self) -> None:
        if self.cell_log is not None:
            self.cell_log.uninstall()
        if self._uncomplete is not None:
            self._uncomplete()
        for dispose in self._disposers:
            try:
                dispose()
            except HostError:  # the host is already shut down: its context went with it
                pass
        self._disposers = []
        if self._link is not None:
            self._link.close()
            self._link = None


def _workspace_note(cwd: str, *, given: bool) -> str:
    """What the first line says of a workspace nobody named: the demo copy, or the notebook's folder."""
    if is_demo_copy(cwd):
        return " (a fresh copy of the demo project; --cwd DIR for your own folder)"
    return "" if given else " (the kernel's working directory, the notebook's folder; --demo for a copy of the demo project)"


DshMagics.dsh.__doc__ = help_text()


def load_ipython_extension(ipython: Any) -> None:
    """Register ``%dsh`` / ``%%dsh``; a second load is a no-op."""
    if isinstance(ipython.magics_manager.registry.get("DshMagics"), DshMagics):
        return
    ipython.register_magics(DshMagics(ipython))
    if keep_question_marks not in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.append(keep_question_marks)


def unload_ipython_extension(ipython: Any) -> None:
    if keep_question_marks in ipython.input_transformers_cleanup:
        ipython.input_transformers_cleanup.remove(keep_question_marks)
    magics = ipython.magics_manager.registry.pop("DshMagics", None)
    if isinstance(magics, DshMagics):
        magics.close()
        for kind in ("line", "cell"):
            ipython.magics_manager.magics[kind].pop("dsh", None)
        if magics in ipython.configurables:
            ipython.configurables.remove(magics)

"""``%dsh`` / ``%%dsh``: prompts to the agent from a notebook cell (DESIGN §2, §6).

Loop policy, on purpose: the Host runs on its own thread and loop; this module only parses the
line and talks to it through the Gateway (a :class:`~dsh_notebook.client.DshClient`, the same
client stack as the ``run`` CLI). A prompt **blocks** the cell
by default while it renders the turn (``Run All``, nbclient and papermill just work); a kernel
Interrupt cancels the turn through the Controller. ``--bg`` returns a :class:`~.turn.TurnRun`
handle at once and shows the live widget. Errors are one line, not a traceback.

Configuration: env (``DSH_MODEL``, ``DSH_BASE_URL``, ``DSH_API_KEY``, ``DSH_HOME``), then
``%config DshMagics.model|base_url|approve|home|output``, then the flags of one prompt.
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
from traitlets import Enum, Unicode

from ..config import Settings, parse_model_id, settings_from_env
from ..errors import DshError, HostError, RunCancelled, UserError
from .args import MagicArgs, interpolate, parse_line
from .commands import CommandsMixin
from .mainthread import MainThreadRunner
from .python_tool import make_python_tool
from .result import TurnResult
from .sinks import DisplaySink, TerminalSink
from .turn import TurnRun
from .usage import help_text, keep_question_marks

NOTEBOOK_SECTION = (
    "You are running inside the user's Jupyter notebook kernel. The `python` tool executes code in "
    "the notebook's live namespace (the user's variables and data), on approval."
)


class DshMagicError(Exception):
    """A ``DshError`` from the magic, shown by IPython as one line instead of a traceback."""

    def __init__(self, error: DshError) -> None:
        super().__init__(str(error))
        self.error = error

    def _render_traceback_(self) -> list[str]:
        return [f"\x1b[31mdsh [{self.error.code}]\x1b[0m {self.error.message}"]


@magics_class
class DshMagics(CommandsMixin, Magics):
    """The ``%dsh`` magics; one instance per shell (``%load_ext dsh_notebook``)."""

    model = Unicode(None, allow_none=True, help="model id (provider:model) for new sessions").tag(config=True)
    base_url = Unicode(None, allow_none=True, help="OpenAI-compatible base URL for new sessions").tag(config=True)
    approve = Enum(("auto", "ask", "deny"), None, allow_none=True,
                   help="approval mode for new sessions (default: auto in the demo workspace, else ask)").tag(config=True)
    home = Unicode(None, allow_none=True, help="DSH_HOME for this kernel's host (before the first prompt)").tag(config=True)
    output = Enum(("auto", "display", "stream"), "auto",
                  help="display: a Markdown output updated in place; stream: text on stdout").tag(config=True)

    def __init__(self, shell: Any = None, **kwargs: Any) -> None:
        super().__init__(shell, **kwargs)
        self.runner = MainThreadRunner.capture()
        self.current_session: str | None = None
        self.sessions: dict[str, tuple[Any, str | None]] = {}  # id -> (SessionCreated, base URL)
        self.runs: dict[str, TurnRun] = {}  # session id -> its last run
        self.last: TurnResult | None = None
        self._link: Any = None
        self._disposers: list[Any] = []
        self._announced = False

    # --- the magic ------------------------------------------------------------------------------

    @output_can_be_silenced
    @no_var_expand
    @line_cell_magic
    @needs_local_scope
    def dsh(self, line: str = "", cell: str | None = None, local_ns: dict[str, Any] | None = None) -> Any:
        try:
            args = parse_line(line, cell)
            if args.command == "prompt":
                return self.prompt(args, local_ns)
            if args.command == "help":
                print(help_text())
                return None
            if args.target and not args.no_interpolate:  # `%dsh resume {sid}` / `%dsh show {sid}`
                namespaces = [ns for ns in (local_ns, self.shell.user_ns if self.shell else None) if ns is not None]
                args.target = interpolate(args.target, namespaces)
            return getattr(self, f"cmd_{args.command}")(args)
        except DshError as exc:
            raise DshMagicError(exc) from None

    # --- configuration and the host -------------------------------------------------------------

    def settings(self) -> Settings:
        base = settings_from_env()
        settings = base.with_overrides(model=self.model, base_url=self.base_url)
        return replace(settings, home=Path(self.home).expanduser()) if self.home else settings

    @property
    def link(self) -> Any:
        if self._link is None or getattr(self._link.host, "closed", False):
            from ..client.dsh_client import DshClient
            from ..host.host import Host

            settings = self.settings()
            host = Host.get(settings)
            if self.home and Path(host.settings.home) != settings.home:
                print(f"dsh: the host already runs with home {host.settings.home}; DshMagics.home applies after a restart")
            shell = self.shell
            assert shell is not None, "DshMagics needs a shell"
            tool = make_python_tool(lambda: shell.user_ns, self.runner)
            # host.context lives on the host loop: contribute (and later dispose) there
            contributed = host.call(lambda: [host.context.tool(tool), host.context.section("notebook", 90, NOTEBOOK_SECTION)])
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
        creation = {"model", "base_url", "cwd", "approve"} & args.given
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
        created = self.link.create_session(cwd=cwd, model=args.model or self.model,
                                           approve=args.approve or self.approve, base_url=base_url)
        self.sessions[created.session_id] = (created, base_url)
        self.current_session = created.session_id
        print(f"dsh: new session {created.session_id} · {created.model} · approve {created.approve} · workspace {created.cwd}")
        return str(created.session_id)

    # --- prompts --------------------------------------------------------------------------------

    def prompt(self, args: MagicArgs, local_ns: dict[str, Any] | None) -> Any:
        namespaces = [ns for ns in (local_ns, self.shell.user_ns if self.shell else None) if ns is not None]
        text = args.text if args.no_interpolate else interpolate(args.text, namespaces)
        self._announce_model(args)
        session_id = self.target_session(args)
        mode = "steer" if args.steer else "queue"
        if args.bg:
            run = TurnRun(self.link, session_id, text, mode=mode, runner=self.runner).start()
            self.current_session = session_id
            self.runs[session_id] = run
            if not args.no_widget:
                self.display_widget(session_id)
            return run
        run = TurnRun(self.link, session_id, text, mode=mode, runner=self.runner, sink=self._sink()).start()
        self.current_session = session_id
        self.runs[session_id] = run
        result = run.wait()
        self.last = result
        if run.interrupted:
            raise RunCancelled(f"interrupted: turn {result.turn} ended {result.reason.kind}; "
                               f"session {session_id} is ready for the next prompt", code="INTERRUPTED")
        if result.reason.kind == "error" and result.reason.error is not None:
            raise DshError(result.reason.error.message, code=result.reason.error.code)
        return result

    def _sink(self) -> DisplaySink | TerminalSink:
        mode = self.output
        if mode == "auto":
            mode = "display" if getattr(self.shell, "kernel", None) is not None else "stream"
        return DisplaySink() if mode == "display" else TerminalSink()

    def close(self) -> None:
        for dispose in self._disposers:
            try:
                dispose()
            except HostError:  # the host is already shut down: its context went with it
                pass
        self._disposers = []
        if self._link is not None:
            self._link.close()
            self._link = None


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

"""The ``%dsh`` subcommands: ``stop``, ``sessions``, ``resume ID``, ``show [ID]``, ``config``.

Each talks to the Host through the same Gateway path as a prompt and returns a small object with
a rich repr (:mod:`.views`), or prints one line.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..errors import DshError, UserError
from .args import MagicArgs
from .views import ConfigView, EventListing, SessionTable

if TYPE_CHECKING:
    from ..config import Settings
    from .turn import TurnRun


class CommandsMixin:
    """Mixed into :class:`~.magics.DshMagics` (which provides the attributes declared here)."""

    current_session: str | None
    runs: dict[str, TurnRun]
    sessions: dict[str, tuple[Any, str | None]]
    approve: str | None
    link: Any

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

    def cmd_sessions(self, args: MagicArgs) -> SessionTable:
        return SessionTable.from_summaries(self.link.list_sessions(), self.current_session)

    def cmd_resume(self, args: MagicArgs) -> None:
        assert args.target is not None
        resumed = self.link.resume(args.target)
        self.current_session = resumed.session_id
        how = "already live" if resumed.resolution == "live" else "resumed from its log"
        print(f"dsh: {resumed.session_id} {how} · {resumed.model} · workspace {resumed.cwd}; "
              "it is now the current session")

    def cmd_show(self, args: MagicArgs) -> Any:
        session_id = self._session_or_current(args, "%dsh show")
        try:
            self.link.info(session_id)
        except DshError as exc:
            if exc.code == "UNKNOWN_SESSION" and args.target:
                raise UserError(f"no session {args.target!r}; to send that line as a prompt write "
                                f"%dsh -- show {args.target}", code="UNKNOWN_SESSION") from None
            raise
        if not args.no_widget:
            widget = self.make_widget(session_id, inspect=args.inspect)
            if widget is not None:
                return widget
        model = self.link.read(session_id)
        return EventListing(session_id, model.events)

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
                items["base URL"] = base_url
        else:
            info = self._info_or_none(current)
            items["session"] = current or "(none yet: the next prompt creates one)"
            items["workspace"] = info.cwd if info is not None else (
                "a fresh copy of the demo workspace" if settings.provider == "script" else "the kernel's working directory")
        items["approve"] = self.approve or "default (auto in the demo workspace, else ask)"
        items["home"] = described["home"]
        items["sessions dir"] = described["sessions"]
        items["API key"] = described["api_key"]
        return ConfigView(items)

    def _info_or_none(self, session_id: str | None) -> Any | None:
        if session_id is None:
            return None
        try:
            return self.link.info(session_id)
        except DshError:
            return None

    # --- widgets --------------------------------------------------------------------------------

    def make_widget(self, session_id: str, *, inspect: bool = False) -> Any | None:
        """The live LoopWidget (or SessionInspector); ``None`` when widgets are unavailable
        (no kernel to carry them, as in terminal IPython, or the widget module fails)."""
        if getattr(getattr(self, "shell", None), "kernel", None) is None:
            return None
        try:
            from . import widgets
        except Exception:
            return None
        try:
            if inspect:
                return widgets.SessionInspector(session_id)  # type: ignore[attr-defined]
            return widgets.LoopWidget(session_id)  # type: ignore[attr-defined]
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

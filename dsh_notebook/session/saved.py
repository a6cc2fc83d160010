"""A saved session log read whole, for serving it read-only or embedding it in a page: its
header, stored lines, the model it last used and the :class:`~dsh_notebook.wire.endpoints.
SessionInfo` that describes it (``live: false``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..demo import default_approve
from ..errors import DshError, HostError
from ..wire.endpoints import SessionInfo
from ..wire.events import RequestFrozen
from ..wire.log import SessionHeader
from .persistence import load_log


@dataclass(frozen=True)
class SavedLog:
    """A log read for read-only serving: its header, stored lines and the model it last used."""

    session_id: str
    header: SessionHeader
    lines: list[str]
    model: str | None
    path: str | None = None
    warnings: tuple[str, ...] = ()

    def info(self, default_model: str) -> SessionInfo:
        cwd = self.header.cwd
        return SessionInfo(
            session_id=self.session_id, cwd=cwd, model=self.model or default_model,
            approve=default_approve(cwd), status="idle", live=False, last_seq=len(self.lines) - 1,
            log_path=self.path,
        )  # fmt: skip


def read_saved(path: str | Path) -> SavedLog:
    """Read a log for read-only serving (blocking: call it off the host loop)."""
    try:
        loaded = load_log(path)
    except DshError as exc:
        raise HostError(f"cannot read the saved session: {exc.message}", code=exc.code) from None
    header = loaded.header
    model = next((f"{e.provider}:{e.model}" for e in reversed(loaded.events) if isinstance(e, RequestFrozen)), None)
    return SavedLog(header.id, header, list(loaded.lines), model, str(loaded.path), tuple(loaded.warnings))

"""Session log lines (DESIGN §4): the header line, then one event per line.

``{"type":"session","version":1,"id","cwd","createdAt"}`` opens every log; each later line is
one :data:`~dsh_notebook.wire.events.Event`. :data:`LogLine` is the union of both, so any line
of any log validates against it (``LogLineAdapter.validate_json(line)``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, TypeAdapter

from .base import Frozen
from .events import AnyEvent

LOG_VERSION = 1


class SessionHeader(Frozen):
    """The first line of a session log: which session, where it works, when it was made."""

    type: Literal["session"] = "session"
    version: Literal[1] = 1
    id: str = Field(min_length=1)
    cwd: str
    created_at: int


LogLine = Annotated[SessionHeader | AnyEvent, Field(discriminator="type")]
"""One line of a session log: the header or an event, discriminated by ``type``."""

LogLineAdapter: TypeAdapter[Any] = TypeAdapter(LogLine)

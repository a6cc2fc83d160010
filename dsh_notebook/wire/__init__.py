"""The typed wire: every shape that crosses a process or file boundary, as pydantic models.

- :mod:`.messages`, :mod:`.events` — model-visible messages and session events (DESIGN §4);
- :mod:`.log` — the session log's lines: :data:`LogLine` (the header or an event);
- :mod:`.frames` — transient frames of a run (assistant-stream, tool-runtime) and model chunks;
- :mod:`.follow`, :mod:`.control` — the items of the ``session/follow`` and ``session/control``
  streams;
- :mod:`.endpoints` — args and results of every endpoint (the Descriptors' models);
- :mod:`.stages` — the six stages of the tool feedback loop, declared once;
- :mod:`.envelopes` — :data:`ClientMessage` and :data:`ServerMessage`;
- :mod:`.comm` — the widget comm's custom messages (``CommFromView``, ``CommToView``);
- :mod:`.schema` — the one JSON Schema document (``python -m dsh_notebook schema``).

Each vocabulary is a discriminated union on ``type`` (or ``kind``/``role`` inside a frame);
payloads are closed. This package imports pydantic and the standard library only; every layer
(session, agent, tools, models, host, client, notebook) imports it, never the other way round.
"""

from .envelopes import ClientMessage, ServerMessage
from .log import LogLine

__all__ = ["ClientMessage", "LogLine", "ServerMessage"]

"""Fakes for testing code built on dsh_notebook — the ones the project's own tests use.

- model adapters at the model boundary: :class:`CannedModel` (scripted replies, a mid-stream
  :class:`Gate`), :class:`FunctionModel` (a reply computed from the request), the chunk builders
  :func:`text_chunks` and :func:`call_chunks`, and :func:`hold_text` / :class:`HoldModel` (a text
  answer held mid-stream until another thread sets an event);
- :class:`FakeOpenAIServer`: a loopback OpenAI-compatible server (real sockets, SSE), as strict as
  the providers about what it is sent, with scripted replies and faults (``text_reply``,
  ``tool_call_reply``, ``error_reply``);
- :class:`LogBuilder`: session logs built and written through the real Session and SessionLog.

Names load on first use (``import dsh_notebook.testing`` imports nothing heavy).
"""

from __future__ import annotations

import importlib
from typing import Any

_WHERE = {
    "CannedModel": "models", "FunctionModel": "models", "Gate": "models", "text_chunks": "models",
    "call_chunks": "models", "hold_text": "models", "HoldModel": "models",
    "FakeOpenAIServer": "openai_server", "RecordedRequest": "openai_server", "serve_fake_openai": "openai_server",
    "text_reply": "openai_chunks", "tool_call_reply": "openai_chunks", "error_reply": "openai_chunks",
    "LogBuilder": "logs", "ticking_clock": "logs",
}  # fmt: skip

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    if name not in _WHERE:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{_WHERE[name]}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])

"""The agent layer (seed 001 L5–L6): Inbox, Agent (Turn/Step), prompt assembly, requests.

Import the pieces from their modules; the common names are re-exported here lazily so that
``import dsh_notebook.agent`` stays cheap.
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    "Agent": ".agent",
    "AgentConfig": ".config",
    "Inbox": ".inbox",
    "Pending": ".inbox",
    "PreStep": ".hooks",
    "TurnStopping": ".hooks",
    "PromptAssembly": ".prompt",
    "PromptEnv": ".prompt",
    "collect_assembly": ".prompt",
    "render_prompt": ".prompt",
    "RuntimeContextProjection": ".projections",
    "SystemPromptProjection": ".projections",
    "ModelRoute": ".request",
    "RequestBuilder": ".request",
    "prepare_request": ".request",
    "StreamAttempt": ".stream",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    return getattr(import_module(module, __name__), name)

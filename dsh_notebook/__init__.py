"""dsh_notebook: an LLM agent harness inside a Jupyter kernel.

``%load_ext dsh_notebook`` registers ``%dsh`` / ``%%dsh``. What users import is listed in
``__all__`` — the magics' loader, the client and its host, the widgets, the policy hook, the coded
errors, the demo workspace — and loads on first use: ``import dsh_notebook`` imports nothing else
(no IPython, no widgets), so the core can be used without them. Fakes for tests are in
:mod:`dsh_notebook.testing`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any

if _TYPE_CHECKING:
    from .external.server import ExtensionPoint

__version__ = "0.1.0"

_ERRORS = ("DshError", "UserError", "SessionError", "ProvenanceError", "LogFormatError", "LogWriteError",
           "ModelError", "ToolError", "HostError", "RunCancelled")

__all__ = [
    "load_ipython_extension", "unload_ipython_extension",  # %load_ext dsh_notebook
    "DshClient", "Host",  # the client, and the in-process host it talks to
    "LoopWidget", "SessionInspector", "CompareWidget",  # the widgets
    "policy", "unpolicy", "PolicyCall",  # the approval policy hook
    "copy_demo_workspace",  # the demo workspace
    *_ERRORS,  # the coded errors
]  # fmt: skip


def __getattr__(name: str) -> Any:
    """The lazily loaded names of ``__all__`` (each module is imported on first use)."""
    value = _load(name)
    globals()[name] = value
    return value


def _load(name: str) -> Any:
    if name in _ERRORS:
        from . import errors

        return getattr(errors, name)
    if name == "DshClient":
        from .client.dsh_client import DshClient

        return DshClient
    if name == "Host":
        from .host.host import Host

        return Host
    if name in ("LoopWidget", "SessionInspector"):
        from .notebook import widgets

        return getattr(widgets, name)
    if name == "CompareWidget":
        from .notebook.widgets.compare import CompareWidget

        return CompareWidget
    if name == "PolicyCall":
        from .tools.rules import PolicyCall

        return PolicyCall
    if name == "copy_demo_workspace":
        from .demo import copy_demo_workspace

        return copy_demo_workspace
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _jupyter_server_extension_points() -> list[ExtensionPoint]:
    """The Jupyter Server extension of this package (the external agents' MCP server at
    ``{base_url}dsh/mcp``, issue 41), enabled by the ``jupyter_server_config.d`` file the wheel installs."""
    from .external.server import ExternalAgentsApp

    return [{"module": "dsh_notebook.external.server", "app": ExternalAgentsApp}]


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})


def load_ipython_extension(ipython: Any) -> None:
    """Register the ``%dsh`` magics (called by ``%load_ext dsh_notebook``)."""
    from .external.comm import register
    from .notebook.magic.magics import load_ipython_extension as _load

    _load(ipython)
    register(ipython)  # external agents reach the notebook's session through the kernel (issue 41)


def unload_ipython_extension(ipython: Any) -> None:
    from .external.comm import unregister
    from .notebook.magic.magics import unload_ipython_extension as _unload

    unregister(ipython)

    _unload(ipython)


def policy(fn: Any) -> Any:
    """Register an approval policy for every session of this process; usable as a decorator.

    ``fn(call)`` gets a :class:`~dsh_notebook.tools.rules.PolicyCall` (``.tool``, ``.arguments``,
    ``.subject`` — the command, code or path —, ``.call_id``, ``.session_id``) and returns
    ``"allow"``, ``"deny"``, ``"ask"`` or ``None`` (no opinion). It is consulted before the rules
    file and the session's grants; the decision is logged as ``approval/decided {by: "policy",
    rule: "policy:<name>"}``. ``dsh_notebook.unpolicy(fn)`` removes it."""
    from .tools.rules import register_policy

    return register_policy(fn)


def unpolicy(fn: Any) -> bool:
    """Remove a policy registered with :func:`policy`; ``False`` if it was not registered."""
    from .tools.rules import unregister_policy

    return unregister_policy(fn)

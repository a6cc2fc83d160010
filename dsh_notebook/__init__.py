"""dsh_notebook: an LLM agent harness inside a Jupyter kernel.

``%load_ext dsh_notebook`` registers ``%dsh`` / ``%%dsh``. Heavy modules load lazily.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"


def load_ipython_extension(ipython: Any) -> None:
    """Register the ``%dsh`` magics (called by ``%load_ext dsh_notebook``)."""
    from .notebook.magics import load_ipython_extension as _load

    _load(ipython)


def unload_ipython_extension(ipython: Any) -> None:
    from .notebook.magics import unload_ipython_extension as _unload

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

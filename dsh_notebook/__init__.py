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

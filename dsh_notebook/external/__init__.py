"""External agents in the notebook (issue 41): Claude Code, Codex or Cursor drive it over MCP.

- :mod:`.server` — the Jupyter Server extension: the MCP server at ``{base_url}dsh/mcp``
  (streamable HTTP), authenticated and authorised by Jupyter Server itself;
- :mod:`.tools` — the tools (``list_notebooks``, ``read_notebook``, ``execute_code``,
  ``insert_cell``, ``edit_cell``, ``inspect_var``, ``ask_agent``, ``session_events``);
- :mod:`.kernels` — each kernel seen from the server: its own client, the ``dsh.external`` comm;
- :mod:`.pages` — the JupyterLab pages (``{base_url}dsh/pages``): edits into the open notebook,
  the approval banner above it;
- :mod:`.comm` — the kernel's side of that comm (the notebook's session, its host);
- :mod:`.bridge` — ``python -m dsh_notebook mcp-bridge``: stdio ⇄ the running server.
"""

import posixpath

from ..errors import DshError

PATH = "dsh/mcp"
"""Where the MCP server answers, under Jupyter's ``base_url`` (DESIGN §6.2)."""
PAGES_PATH = "dsh/pages"
"""The WebSocket of the JupyterLab pages (this package's JupyterLab extension), under ``base_url``."""


def version() -> str:
    """This package's version (its metadata; without an install, the checkout's)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as of

    try:
        return of("dsh-notebook")
    except PackageNotFoundError:
        return "0.1.0"


def clean_path(path: str) -> str:
    """A notebook path as Jupyter's contents API names it (relative to its root, ``/`` separated)."""
    text = str(path or "").strip().replace("\\", "/").lstrip("/")
    norm = posixpath.normpath(text) if text else ""
    if not norm or norm == "." or norm.startswith("../") or norm == "..":
        raise DshError(f"{path!r} is not a notebook path inside Jupyter's root folder", code="UNKNOWN_NOTEBOOK")
    return norm

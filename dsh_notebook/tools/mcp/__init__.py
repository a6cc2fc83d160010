"""MCP tools: servers of ``$DSH_HOME/mcp.json`` offered to the model as ``SERVER__TOOL``.

:mod:`.config` reads and edits mcp.json, :mod:`.names` makes provider-safe tool names,
:mod:`.client` holds one server connection on the host loop (:mod:`.transport` its helpers), :mod:`.adapter` turns a server's
tool into a :class:`~dsh_notebook.tools.base.Tool` (and its results into tool results), and
:mod:`.manager` starts servers lazily and contributes their tools to the host's Scope.
:mod:`.listing` prints ``mcp list`` / ``%dsh mcp``. The ``mcp`` SDK is imported only when a
server starts: without it, everything else still imports.
"""

from .config import McpConfigError, ServerSpec, load_config
from .names import VALID_NAME, tool_names

__all__ = ["VALID_NAME", "McpConfigError", "ServerSpec", "load_config", "tool_names"]

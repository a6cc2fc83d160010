"""External agents in the notebook (issue 41): Claude Code, Codex or Cursor drive it over MCP.

- :mod:`.server` — the Jupyter Server extension: the MCP server at ``{base_url}dsh/mcp``
  (streamable HTTP), authenticated and authorised by Jupyter Server itself;
- :mod:`.tools` — the tools (``list_notebooks``, ``read_notebook``, ``execute_code``,
  ``insert_cell``, ``edit_cell``, ``inspect_var``, ``ask_agent``, ``session_events``);
- :mod:`.kernels` — each kernel seen from the server: its own client, the ``dsh.external`` comm;
- :mod:`.comm` — the kernel's side of that comm (the notebook's session, its host);
- :mod:`.bridge` — ``python -m dsh_notebook mcp-bridge``: stdio ⇄ the running server.
"""

PATH = "dsh/mcp"
"""Where the MCP server answers, under Jupyter's ``base_url`` (DESIGN §6.2)."""


def version() -> str:
    """This package's version (its metadata; without an install, the checkout's)."""
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version as of

    try:
        return of("dsh-notebook")
    except PackageNotFoundError:
        return "0.1.0"

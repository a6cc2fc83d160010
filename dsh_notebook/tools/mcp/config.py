"""``$DSH_HOME/mcp.json``: which MCP servers this host may start (stdio or streamable HTTP).

The usual form (the one Claude Desktop, Cursor and VS Code use)::

    {"mcpServers": {
        "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "."],
                  "env": {"LOG": "1"}},
        "web":   {"url": "http://127.0.0.1:8000/mcp", "headers": {"Authorization": "Bearer ${TOKEN}"}}
    }}

Optional per server: ``cwd`` (stdio), ``timeout`` (seconds per call, default ``DSH_MCP_TIMEOUT``),
``startTimeout`` (seconds to start, answer ``initialize`` and list tools; default 30),
``trustReadOnly`` (tools annotated ``readOnlyHint`` run without asking), ``disabled``; ``type``
(``stdio`` / ``http`` / ``streamable-http``) is accepted and checked. ``${VAR}`` in ``env`` and
``headers`` values is taken from the environment. Other keys are ignored (files are shared
with other clients). Header values and secret-looking ``env`` values (``*KEY*``, ``*TOKEN*`` …)
are registered as secrets (redacted from any error text). A broken file or server entry is a :class:`McpConfigError` (``MCP_CONFIG``)
naming the server and the problem; a broken entry never hides the good ones.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, NotRequired, TypedDict, cast

from ...errors import ErrorCode, UserError, register_secret

CONFIG_NAME = "mcp.json"
_VAR = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)\}")
_SECRET_NAME = re.compile(r"(?i)key|token|secret|passw|auth|cookie|credential")


class McpConfigError(UserError):
    code: ErrorCode = "MCP_CONFIG"


class ServerEntry(TypedDict, total=False):
    """One ``mcpServers`` entry as the file holds it (other keys are kept, never read)."""

    type: str
    command: str | None
    args: list[str]
    env: dict[str, str]
    cwd: str
    url: str | None
    headers: dict[str, str]
    timeout: float
    startTimeout: float
    trustReadOnly: bool
    disabled: bool


class McpFile(TypedDict):
    """The whole file: ``mcpServers`` (entries are whatever the file holds until parsed)."""

    mcpServers: dict[str, object]


class ServerState(TypedDict):
    """``McpServer.describe()``: one server's status and the server's own tool names."""

    name: str
    transport: str
    target: str
    status: str
    tools: list[str]
    starts: int
    warnings: NotRequired[list[str]]


class ToolName(TypedDict):
    name: str  # as the model sees it
    tool: str  # as the server calls it
    approval: NotRequired[str]  # "allow" (read-only and trusted) or "ask"


class ServerListing(TypedDict):
    """One server in ``mcp list``: its tools under the model-facing names; ``code`` for a bad entry."""

    name: str
    transport: str
    target: str
    status: str
    tools: list[ToolName]
    starts: int
    code: NotRequired[ErrorCode]
    warnings: NotRequired[list[str]]
    trustReadOnly: NotRequired[bool]  # this server's read-only tools run without asking


class McpListing(TypedDict):
    """``McpManager.describe()`` (what ``mcp list --json`` prints)."""

    config: str
    error: str | None
    servers: list[ServerListing]
    trustReadOnly: bool


class _Common(TypedDict):
    timeout: float | None
    start_timeout: float | None
    trust_read_only: bool
    disabled: bool


@dataclass(frozen=True)
class ServerSpec:
    """One configured server: ``command``/``args``/``env``/``cwd`` (stdio) or ``url``/``headers``."""

    name: str
    transport: Literal["stdio", "http"]
    command: str | None = None
    args: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    cwd: str | None = None
    url: str | None = None
    headers: tuple[tuple[str, str], ...] = ()
    timeout: float | None = None
    start_timeout: float | None = None
    trust_read_only: bool = False
    disabled: bool = False

    def describe(self) -> str:
        if self.transport == "http":
            return f"{self.url}"
        return " ".join([self.command or "", *self.args])

    def to_json(self) -> ServerEntry:
        out: ServerEntry = {}
        if self.transport == "http":
            out["url"] = self.url
            if self.headers:
                out["headers"] = dict(self.headers)
        else:
            out["command"] = self.command
            out["args"] = list(self.args)
            if self.env:
                out["env"] = dict(self.env)
            if self.cwd:
                out["cwd"] = self.cwd
        if self.timeout is not None:
            out["timeout"] = self.timeout
        if self.start_timeout is not None:
            out["startTimeout"] = self.start_timeout
        if self.trust_read_only:
            out["trustReadOnly"] = True
        return out


@dataclass
class McpConfig:
    """The parsed file: good servers, and a problem text for each bad one (or for the file)."""

    path: Path
    servers: dict[str, ServerSpec] = field(default_factory=dict)
    problems: dict[str, str] = field(default_factory=dict)
    file_error: str | None = None


def config_path(home: str | os.PathLike[str]) -> Path:
    return Path(home) / CONFIG_NAME


def _strings(name: str, key: str, value: Any, *, mapping: bool) -> Any:
    if mapping:
        if not isinstance(value, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in value.items()):
            raise McpConfigError(f"MCP server {name!r}: {key!r} must be an object of strings")
        return tuple((k, _expand(v)) for k, v in value.items())
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise McpConfigError(f"MCP server {name!r}: {key!r} must be a list of strings")
    return tuple(value)


def _expand(value: str) -> str:
    return _VAR.sub(lambda m: os.environ.get(m.group(1), ""), value)


def _register_secrets(pairs: tuple[tuple[str, str], ...], *, all_values: bool) -> None:
    """Header values, and env values whose names look secret, never reach a log or error text."""
    for key, value in pairs:
        if all_values or _SECRET_NAME.search(key):
            register_secret(value)
            register_secret(value.split(" ", 1)[-1])  # "Bearer TOKEN" → TOKEN too


def _seconds(name: str, raw: Mapping[str, object], key: str) -> float | None:
    value = raw.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 86_400:
        raise McpConfigError(f"MCP server {name!r}: {key!r} must be a positive number of seconds")
    return float(value)


def parse_server(name: str, raw: Any) -> ServerSpec:
    """One ``mcpServers`` entry → :class:`ServerSpec`, or :class:`McpConfigError` saying why not."""
    if not isinstance(name, str) or not name.strip():
        raise McpConfigError("an MCP server needs a non-empty name")
    if not isinstance(raw, dict):
        raise McpConfigError(f"MCP server {name!r}: the entry must be an object with 'command' or 'url'")
    kind = raw.get("type")  # an MCP config's transport ("stdio"/"http"), not wire routing
    has_cmd, has_url = "command" in raw, "url" in raw
    if has_cmd == has_url:
        raise McpConfigError(f"MCP server {name!r}: give exactly one of 'command' (stdio) or 'url' (streamable HTTP)")
    if kind is not None and kind not in ("stdio", "http", "streamable-http", "streamableHttp"):
        raise McpConfigError(f"MCP server {name!r}: type {kind!r} is not supported (stdio or http)")
    if kind is not None and (kind == "stdio") != has_cmd:
        raise McpConfigError(f"MCP server {name!r}: type {kind!r} does not match its {'command' if has_cmd else 'url'}")
    timeout, start_timeout = _seconds(name, raw, "timeout"), _seconds(name, raw, "startTimeout")
    common: _Common = {
        "timeout": timeout,
        "start_timeout": start_timeout,
        "trust_read_only": raw.get("trustReadOnly") is True,
        "disabled": raw.get("disabled") is True,
    }
    if has_url:
        url = raw["url"]
        if not isinstance(url, str) or not re.match(r"^https?://[^\s/]+", url):
            raise McpConfigError(f"MCP server {name!r}: 'url' must be an http(s) URL, not {url!r}")
        headers = _strings(name, "headers", raw.get("headers", {}), mapping=True)
        _register_secrets(headers, all_values=True)
        return ServerSpec(name, "http", url=url, headers=headers, **common)
    command = raw["command"]
    if not isinstance(command, str) or not command.strip():
        raise McpConfigError(f"MCP server {name!r}: 'command' must be a non-empty string")
    cwd = raw.get("cwd")
    if cwd is not None and not isinstance(cwd, str):
        raise McpConfigError(f"MCP server {name!r}: 'cwd' must be a string")
    env = _strings(name, "env", raw.get("env", {}), mapping=True)
    _register_secrets(env, all_values=False)
    return ServerSpec(
        name, "stdio", command=command, args=_strings(name, "args", raw.get("args", []), mapping=False),
        env=env, cwd=cwd, **common,
    )


def load_config(home: str | os.PathLike[str]) -> McpConfig:
    """Read ``$DSH_HOME/mcp.json`` (absent → no servers). Never raises for bad content."""
    path = config_path(home)
    config = McpConfig(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return config
    except OSError as exc:
        config.file_error = f"{path}: cannot be read ({exc.strerror or exc})"
        return config
    try:
        data = json.loads(text) if text.strip() else {}
    except ValueError as exc:
        config.file_error = f"{path}: not valid JSON ({exc})"
        return config
    servers = data.get("mcpServers", {}) if isinstance(data, dict) else None
    if not isinstance(servers, dict):
        config.file_error = f"{path}: expected an object {{\"mcpServers\": {{NAME: {{...}}}}}}"
        return config
    for name, raw in servers.items():
        try:
            config.servers[name] = parse_server(name, raw)
        except McpConfigError as exc:
            config.problems[name] = exc.message
    return config


def _read_raw(path: Path) -> McpFile:
    try:
        data = json.loads(path.read_text(encoding="utf-8") or "{}")
    except FileNotFoundError:
        return {"mcpServers": {}}
    except ValueError as exc:
        raise McpConfigError(f"{path} is not valid JSON ({exc}); fix or remove it first") from None
    if not isinstance(data, dict) or not isinstance(data.setdefault("mcpServers", {}), dict):
        raise McpConfigError(f"{path}: expected an object {{\"mcpServers\": {{...}}}}")
    return cast(McpFile, data)  # other keys of the file ride along untouched


def _write_raw(path: Path, data: McpFile) -> None:
    """Atomic replace, mode 0600 (the file may hold tokens); other keys of the file are kept."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=".mcp-", suffix=".json", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(data, fh, indent=2)
            fh.write("\n")
        os.chmod(tmp, 0o600)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def add_server(home: str | os.PathLike[str], name: str, entry: ServerEntry, *, replace: bool = True) -> ServerSpec:
    """Validate ``entry`` and store it as ``mcpServers[name]`` (replacing one of that name)."""
    spec = parse_server(name, entry)
    path = config_path(home)
    data = _read_raw(path)
    if name in data["mcpServers"] and not replace:
        raise McpConfigError(f"an MCP server named {name!r} is already in {path}")
    data["mcpServers"][name] = entry
    _write_raw(path, data)
    return spec


def remove_server(home: str | os.PathLike[str], name: str) -> None:
    path = config_path(home)
    data = _read_raw(path)
    if name not in data["mcpServers"]:
        known = ", ".join(sorted(data["mcpServers"])) or "none"
        raise McpConfigError(f"no MCP server named {name!r} in {path} (configured: {known})", code="MCP_UNKNOWN_SERVER")
    del data["mcpServers"][name]
    _write_raw(path, data)

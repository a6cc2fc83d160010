"""``mcp list`` / ``%dsh mcp``: the servers, their status and tools; ``mcp add`` / ``remove``.

Shared by the CLI (``python -m dsh_notebook mcp list|add|remove``) and the notebook
(``%dsh mcp [list|start [NAME]|restart NAME|add …|remove NAME]``). ``add`` takes
``NAME [--env K=V]… [--cwd DIR] [--timeout S] -- COMMAND [ARGS…]`` (stdio) or
``NAME --url URL [--header K=V]…`` (streamable HTTP) and writes ``$DSH_HOME/mcp.json``.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path
from typing import Any

from ...context import HarnessContext
from .config import McpConfigError, McpListing, ServerEntry, add_server, remove_server

ACTIONS = ("list", "start", "restart", "add", "remove")
USAGE = ("usage: mcp [list] | mcp start [NAME] | mcp restart NAME | mcp remove NAME | "
         "mcp add NAME [--env K=V]... [--cwd DIR] [--timeout S] -- COMMAND [ARGS...] | "
         "mcp add NAME --url URL [--header K=V]...")


def format_listing(desc: McpListing) -> str:
    """Readable lines: one per server (status, target), then its tools as the model sees them."""
    trust = "yes" if desc.get("trustReadOnly") else "no (DSH_MCP_TRUST_READONLY=1 to allow)"
    lines = [f"MCP config: {desc['config']}  ·  read-only tools run without asking: {trust}"]
    if desc.get("error"):
        lines.append(f"  error [MCP_CONFIG] {desc['error']}")
    if not desc["servers"]:
        lines.append("  no servers configured (add one: mcp add NAME -- COMMAND ARGS, or mcp add NAME --url URL)")
    for server in desc["servers"]:
        tools = server["tools"]
        count = f" · {len(tools)} tool{'s' if len(tools) != 1 else ''}" if tools else ""
        own = "  · trustReadOnly (its read-only tools run without asking)" if server.get("trustReadOnly") \
            and not desc.get("trustReadOnly") else ""
        lines.append(f"  {server['name']}  [{server['transport']}] {server['target']}  — {server['status']}{count}{own}")
        for warning in server.get("warnings", []):
            lines.append(f"    warning: {warning}")
        for tool in tools:
            alias = "" if tool["name"] == f"{server['name']}__{tool['tool']}" else f"  (server's name: {tool['tool']})"
            runs = "  (runs without asking)" if tool.get("approval") == "allow" else ""
            lines.append(f"      {tool['name']}{alias}{runs}")
    return "\n".join(lines)


def _pairs(values: list[str] | None, flag: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for item in values or ():
        key, eq, value = item.partition("=")
        if not eq or not key:
            raise McpConfigError(f"{flag} takes KEY=VALUE, not {item!r}")
        out[key] = value
    return out


def parse_add(tokens: list[str]) -> tuple[str, ServerEntry]:
    """``NAME [options] -- COMMAND ARGS`` or ``NAME --url URL`` → (name, mcp.json entry)."""
    command: list[str] = []
    if "--" in tokens:
        cut = tokens.index("--")
        tokens, command = tokens[:cut], tokens[cut + 1:]
    parser = argparse.ArgumentParser(prog="mcp add", add_help=False, exit_on_error=False, allow_abbrev=False)
    parser.add_argument("name")
    parser.add_argument("--url")
    parser.add_argument("--env", action="append")
    parser.add_argument("--header", action="append")
    parser.add_argument("--cwd")
    parser.add_argument("--timeout", type=float)
    try:
        ns, extra = parser.parse_known_args(tokens)
    except (argparse.ArgumentError, SystemExit) as exc:
        raise McpConfigError(f"mcp add: {exc}; {USAGE}") from None
    if extra:
        raise McpConfigError(f"mcp add: unexpected {' '.join(extra)!r} (put the server command after --); {USAGE}")
    if bool(ns.url) == bool(command):
        raise McpConfigError(f"mcp add {ns.name}: give either -- COMMAND ARGS or --url URL; {USAGE}")
    entry: ServerEntry
    if ns.url:
        entry = {"url": ns.url}
        if ns.header:
            entry["headers"] = _pairs(ns.header, "--header")
    else:
        entry = {"command": command[0], "args": command[1:]}
        if ns.env:
            entry["env"] = _pairs(ns.env, "--env")
        if ns.cwd:
            entry["cwd"] = ns.cwd
    if ns.timeout is not None:
        entry["timeout"] = ns.timeout
    return ns.name, entry


def add_from_tokens(home: Path, tokens: list[str]) -> str:
    name, entry = parse_add(tokens)
    add_server(home, name, entry)
    return name


def remove_from_tokens(home: Path, tokens: list[str]) -> str:
    if len(tokens) != 1:
        raise McpConfigError(f"usage: mcp remove NAME; {USAGE}")
    remove_server(home, tokens[0])
    return tokens[0]


async def host_action(manager: Any, tokens: list[str]) -> str:
    """``%dsh mcp …`` on the live host's manager (run on the host loop); the text to show."""
    action, rest = (tokens[0], tokens[1:]) if tokens else ("list", [])
    if action not in ACTIONS:
        raise McpConfigError(f"unknown mcp action {action!r}; {USAGE}")
    note = ""
    if action not in ("add", "remove"):
        await manager.reload()  # mcp.json edited by hand since: changed servers stop, new ones appear
    if action == "add":
        name = await asyncio.to_thread(add_from_tokens, manager.home, rest)
        await manager.reload()
        await manager.start(name)
        note = f"added MCP server {name!r} to {manager.config.path}; its tools are offered from the next step on\n"
    elif action == "remove":
        name = await asyncio.to_thread(remove_from_tokens, manager.home, rest)
        await manager.reload()
        note = f"removed MCP server {name!r} (stopped; its tools are gone)\n"
    elif action in ("start", "restart"):
        if len(rest) > 1 or (action == "restart" and not rest):
            raise McpConfigError(USAGE)
        if rest and rest[0] not in manager.servers:
            known = ", ".join(sorted(manager.servers)) or "none"
            raise McpConfigError(f"no MCP server named {rest[0]!r} (configured: {known})", code="MCP_UNKNOWN_SERVER")
        if action == "restart":
            await manager.restart(rest[0])
        elif rest:
            await manager.start(rest[0])
        else:
            await manager.start_all()
    elif rest:
        raise McpConfigError(f"mcp list takes no arguments; {USAGE}")
    return note + format_listing(manager.describe())


async def probe(settings: Any, *, start: bool = True) -> McpListing:
    """Start every configured server in a private manager, describe, stop them all."""
    from .manager import McpManager

    manager = McpManager(settings, HarnessContext("mcp-list"))
    try:
        if start:
            await manager.start_all()
        return manager.describe()
    finally:
        await manager.aclose()


def cli_main(args: argparse.Namespace) -> int:
    """``python -m dsh_notebook mcp list [--json] [--no-start] | add … | remove NAME``."""
    from ...config import settings_from_env

    settings = settings_from_env()
    if args.action == "add":
        name = add_from_tokens(settings.home, list(args.rest))
        print(f"added MCP server {name!r} to {settings.home / 'mcp.json'}")
        args.no_start, args.json = False, False
    elif args.action == "remove":
        name = remove_from_tokens(settings.home, list(args.rest))
        print(f"removed MCP server {name!r} from {settings.home / 'mcp.json'}")
        return 0
    else:  # `mcp list --json`: argparse leaves flags after the action in `rest`
        unknown = [r for r in args.rest if r not in ("--json", "--no-start")]
        if unknown:
            raise McpConfigError(f"mcp list takes --json and --no-start, not {' '.join(unknown)!r}; {USAGE}")
        args.json = args.json or "--json" in args.rest
        args.no_start = args.no_start or "--no-start" in args.rest
    logging.getLogger("dsh_notebook.tools.mcp.client").setLevel(logging.ERROR)  # warnings: in the listing
    desc = asyncio.run(probe(settings, start=not args.no_start))
    if args.json:
        json.dump(desc, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(format_listing(desc))
    failed = bool(desc.get("error")) or any(s["status"].startswith("failed") for s in desc["servers"])
    return 1 if failed else 0


def add_cli_parser(sub: Any) -> None:
    mcp = sub.add_parser("mcp", help="MCP servers of $DSH_HOME/mcp.json: list (status, tools), add, remove")
    mcp.add_argument("action", choices=["list", "add", "remove"], nargs="?", default="list")
    mcp.add_argument("--json", action="store_true", help="list: the listing as JSON")
    mcp.add_argument("--no-start", action="store_true", help="list: do not start the servers (no tools shown)")
    mcp.add_argument("rest", nargs=argparse.REMAINDER,
                     help="add: NAME [--env K=V] [--cwd DIR] [--timeout S] -- COMMAND ARGS | NAME --url URL; remove: NAME")

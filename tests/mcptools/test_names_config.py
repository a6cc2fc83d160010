"""Tool-name sanitising and mcp.json parsing/editing (pure functions, no server)."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from dsh_notebook.tools.mcp.config import (
    McpConfigError,
    add_server,
    load_config,
    parse_server,
    remove_server,
)
from dsh_notebook.tools.mcp.listing import parse_add
from dsh_notebook.tools.mcp.names import VALID_NAME, server_prefixes, tool_names


def test_plain_names_are_server__tool() -> None:
    assert tool_names("files", "files", ["read", "list-dir"]) == {"read": "files__read", "list-dir": "files__list-dir"}


def test_refused_characters_become_underscores_and_collisions_get_a_stable_hash() -> None:
    names = tool_names("s", "s", ["a.b", "a_b", "a b", "ünï/code"])
    assert all(VALID_NAME.match(n) for n in names.values())
    assert names["a_b"] == "s__a_b"  # sorted first: keeps the plain name
    assert names["a b"] != names["a.b"] and {names["a b"], names["a.b"]}.isdisjoint({"s__a_b"})
    assert names["a b"].startswith("s__a_b_") and len(names["a b"]) == len("s__a_b_") + 6
    assert names["ünï/code"] == "s___n__code"
    assert tool_names("s", "s", ["a_b", "a b", "a.b", "ünï/code"]) == names  # order does not matter


def test_long_names_are_truncated_to_64_with_a_hash_of_the_original() -> None:
    long_tool = "x" * 100
    name = tool_names("srv", "srv", [long_tool, long_tool[:-1]])
    assert all(len(n) == 64 and VALID_NAME.match(n) for n in name.values())
    assert name[long_tool] != name[long_tool[:-1]]
    assert name == tool_names("srv", "srv", [long_tool[:-1], long_tool])


def test_server_prefixes_are_clean_short_and_unique() -> None:
    prefixes = server_prefixes(["my server", "my_server", "a" * 40])
    assert prefixes["my_server"] == "my_server"
    assert prefixes["my server"].startswith("my_server_") and prefixes["my server"] != "my_server"
    assert len(prefixes["a" * 40]) == 32


@pytest.mark.parametrize(("entry", "problem"), [
    ("npx", "must be an object"),
    ({}, "exactly one of 'command'"),
    ({"command": "x", "url": "http://h"}, "exactly one of 'command'"),
    ({"command": ""}, "non-empty string"),
    ({"command": "x", "args": "a b"}, "'args' must be a list of strings"),
    ({"command": "x", "env": {"A": 1}}, "'env' must be an object of strings"),
    ({"url": "ws://h"}, "http(s) URL"),
    ({"url": "http://h", "timeout": -1}, "'timeout' must be a positive number"),
    ({"type": "sse", "url": "http://h"}, "type 'sse' is not supported"),
    ({"type": "stdio", "url": "http://h"}, "does not match"),
])
def test_bad_entries_are_coded_errors_naming_the_server(entry: object, problem: str) -> None:
    with pytest.raises(McpConfigError) as err:
        parse_server("srv", entry)
    assert err.value.code == "MCP_CONFIG" and "'srv'" in err.value.message and problem in err.value.message


def test_load_keeps_good_servers_next_to_bad_ones_and_reports_a_broken_file(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text(json.dumps({"mcpServers": {
        "ok": {"command": "x", "args": ["-v"], "env": {"T": "${DSH_TEST_TOKEN}"}}, "bad": {"url": 3}}}))
    os.environ["DSH_TEST_TOKEN"] = "tok"
    try:
        config = load_config(tmp_path)
    finally:
        del os.environ["DSH_TEST_TOKEN"]
    assert list(config.servers) == ["ok"] and dict(config.servers["ok"].env) == {"T": "tok"}
    assert "'bad'" in config.problems["bad"]
    (tmp_path / "mcp.json").write_text("{not json")
    broken = load_config(tmp_path)
    assert broken.servers == {} and "not valid JSON" in (broken.file_error or "")
    assert load_config(tmp_path / "nowhere").servers == {}


def test_add_and_remove_edit_the_file_atomically_keeping_other_keys(tmp_path: Path) -> None:
    (tmp_path / "mcp.json").write_text(json.dumps({"other": 1, "mcpServers": {}}))
    name, entry = parse_add(["files", "--env", "A=1", "--timeout", "5", "--", "npx", "-y", "pkg", "--flag"])
    assert (name, entry) == ("files", {"command": "npx", "args": ["-y", "pkg", "--flag"], "env": {"A": "1"}, "timeout": 5.0})
    add_server(tmp_path, name, entry)
    add_server(tmp_path, "web", parse_add(["web", "--url", "http://127.0.0.1:1/mcp", "--header", "X=y"])[1])
    data = json.loads((tmp_path / "mcp.json").read_text())
    assert data["other"] == 1 and set(data["mcpServers"]) == {"files", "web"}
    assert data["mcpServers"]["web"] == {"url": "http://127.0.0.1:1/mcp", "headers": {"X": "y"}}
    assert stat.S_IMODE((tmp_path / "mcp.json").stat().st_mode) == 0o600
    remove_server(tmp_path, "files")
    assert set(json.loads((tmp_path / "mcp.json").read_text())["mcpServers"]) == {"web"}
    with pytest.raises(McpConfigError) as err:
        remove_server(tmp_path, "files")
    assert err.value.code == "MCP_UNKNOWN_SERVER" and "web" in err.value.message


@pytest.mark.parametrize("tokens", [["x"], ["x", "--url", "http://h", "--", "cmd"], ["x", "--bogus", "--", "c"],
                                    ["x", "--env", "novalue", "--", "c"]])
def test_bad_add_arguments_are_coded_errors(tokens: list[str]) -> None:
    with pytest.raises(McpConfigError) as err:
        name, entry = parse_add(tokens)
        parse_server(name, entry)
    assert err.value.code == "MCP_CONFIG"

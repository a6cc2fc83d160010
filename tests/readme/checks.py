"""The checks of the blocks that cannot run (``<!-- check KIND: why -->``; see blocks.py).

Each function returns the problems it found (an empty list: the block is right). They read the
code a user's command would reach — the CLI's argparse parsers, the ``%dsh`` parser, the
Makefile, pyproject.toml, the readers of mcp.json, rules and prices files — so a renamed flag, a
removed target, a wrong pin or a bad config key fails the docs' tests.
"""

from __future__ import annotations

import ast
import contextlib
import importlib.metadata
import importlib.util
import io
import json
import re
import shlex
import shutil
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

from .blocks import ROOT

if sys.version_info >= (3, 11):
    import tomllib
else:  # pytest itself depends on tomli before 3.11
    import tomli as tomllib

BUILTINS = frozenset({"cd", "export", "echo", "source", ".", "set", "test", "true"})
KNOWN_MAGICS = frozenset({"load_ext", "env", "config", "dsh", "time", "pip"})
_SPLIT = re.compile(r"\s*(?:&&|\|\||;|\|)\s*")


# --- shell commands ------------------------------------------------------------------------------


def commands(text: str) -> list[list[str]]:
    """The simple commands of a shell block: continuation lines joined, comments dropped, lists and
    pipelines split, leading ``VAR=value`` assignments removed."""
    joined = re.sub(r"\\\n", " ", text)
    out = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        current: list[str] = []
        for word in [*words, ";"]:
            if word in ("&&", "||", ";", "|"):
                while current and re.fullmatch(r"[A-Za-z_]\w*=.*", current[0]):
                    current.pop(0)
                if current:
                    out.append(current)
                current = []
            else:
                current.append(word)
    return out


def makefile_targets() -> set[str]:
    text = (ROOT / "Makefile").read_text(encoding="utf-8")
    return {m.group(1) for m in re.finditer(r"(?m)^([\w.-]+):(?!=)", text)}


def pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def _pins() -> set[str]:
    """Every ``name==version`` the project installs (pyproject, the Makefile, the local models' lines)."""
    from dsh_notebook.models.local_models import NAMED, XLLAMACPP

    project = pyproject()["project"]
    reqs = [*project["dependencies"], *(r for extra in project["optional-dependencies"].values() for r in extra)]
    found = {r.replace(" ", "") for r in reqs if "==" in r}
    found |= set(re.findall(r"\b([\w.-]+==[\w.]+)", (ROOT / "Makefile").read_text(encoding="utf-8")))
    return found | {XLLAMACPP} | {m.wheel for m in NAMED.values()}


def check_pip(args: list[str]) -> list[str]:
    problems = []
    extras = set(pyproject()["project"]["optional-dependencies"])
    for arg in args:
        if arg.startswith("-"):
            if arg not in ("--no-deps", "-U", "--upgrade", "-e", "-q"):
                problems.append(f"pip install {arg}: an option the docs do not use elsewhere")
            continue
        local = re.fullmatch(r"\.(?:\[([\w,-]+)\])?", arg)
        if local:
            unknown = set((local.group(1) or "").split(",")) - extras - {""}
            if unknown:
                problems.append(f"pip install {arg}: pyproject.toml has no extra {sorted(unknown)} (it has {sorted(extras)})")
            continue
        if arg.startswith(("dsh-notebook", "dsh_notebook")):
            problems.append(f"pip install {arg}: the package is not on PyPI; install from a clone: pip install .")
            continue
        if "==" in arg:
            if arg not in _pins():
                problems.append(f"pip install {arg}: not a pin the project uses ({sorted(_pins())})")
            continue
        name = re.split(r"[<>=!~\[]", arg, maxsplit=1)[0]
        try:
            importlib.metadata.distribution(name)
        except importlib.metadata.PackageNotFoundError:
            problems.append(f"pip install {arg}: no such distribution in the project's environment")
    return problems


def check_dsh_cli(args: list[str]) -> list[str]:
    from dsh_notebook.cli import build_parser

    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            parsed = build_parser().parse_args(args)
    except SystemExit as exc:
        if exc.code == 0:
            return []
        return [f"python -m dsh_notebook {' '.join(args)}: {err.getvalue().strip().splitlines()[-1]}"]
    if getattr(parsed, "command", None) == "mcp" and parsed.action == "add":
        return _mcp_add(parsed.rest)
    return []


def _mcp_add(tokens: list[str]) -> list[str]:
    from dsh_notebook.errors import UserError
    from dsh_notebook.tools.mcp.config import parse_server
    from dsh_notebook.tools.mcp.listing import parse_add

    try:
        name, entry = parse_add(tokens)
        parse_server(name, entry)
    except UserError as exc:
        return [f"mcp add {' '.join(tokens)}: [{exc.code}] {exc.message}"]
    return []


def check_command(words: list[str]) -> list[str]:
    head, args = words[0], words[1:]
    if head in BUILTINS:
        return []
    if Path(head).name.startswith("python") and args[:1] == ["-m"]:
        module, rest = args[1], args[2:]
        if module == "dsh_notebook":
            return check_dsh_cli(rest)
        if module == "pip" and rest[:1] == ["install"]:
            return check_pip(rest[1:])
        return [] if importlib.util.find_spec(module) else [f"python -m {module}: no such module"]
    if head == "make":
        targets = makefile_targets()
        missing = [a for a in args if "=" not in a and not a.startswith("-") and a not in targets]
        return [f"make {a}: the Makefile has no such target" for a in missing]
    if head == "pip":
        return check_pip(args[1:]) if args[:1] == ["install"] else [f"pip {' '.join(args)}: only pip install is checked"]
    if head == "jupyter" and args:
        bin_dir = Path(sys.executable).parent
        found = (bin_dir / f"jupyter-{args[0]}").exists() or shutil.which(f"jupyter-{args[0]}")
        return [] if found else [f"jupyter {args[0]}: no jupyter-{args[0]} in the environment"]
    bin_dir = Path(sys.executable).parent
    if (bin_dir / head).exists() or shutil.which(head) or (ROOT / head).is_file():
        return []
    return [f"{head}: no such program here"]


def check_commands(text: str) -> list[str]:
    found = commands(text)
    if not found:
        return ["no command in the block"]
    return [p for words in found for p in check_command(words)]


# --- notebook cells that cannot run --------------------------------------------------------------


def check_magics(text: str) -> list[str]:
    from IPython.core.inputtransformer2 import TransformerManager

    from dsh_notebook.cmdline.dsh_line import parse_line
    from dsh_notebook.errors import UserError
    from dsh_notebook.notebook.magic.magics import DshMagics
    from dsh_notebook.notebook.magic.question_marks import keep_question_marks

    problems = []
    manager = TransformerManager()
    manager.cleanup_transforms.append(keep_question_marks)  # as the extension installs it
    python = manager.transform_cell(text)
    try:
        tree = ast.parse(python)
    except SyntaxError as exc:
        return [f"not valid Python as IPython runs it: {exc}"]
    settings = set(DshMagics.class_traits(config=True))
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("run_line_magic", "run_cell_magic")):
            continue
        values = [str(a.value) for a in node.args if isinstance(a, ast.Constant)]
        name, line = values[0], values[1]
        body = values[2] if node.func.attr == "run_cell_magic" and len(values) > 2 else None
        if name not in KNOWN_MAGICS:
            problems.append(f"%{name}: not a magic the docs use (known: {sorted(KNOWN_MAGICS)})")
        elif name == "dsh":
            try:
                args = parse_line(line, body)
            except UserError as exc:
                problems.append(f"%dsh {line}: [{exc.code}] {exc.message}")
                continue
            if args.command == "mcp" and args.text.startswith("add"):
                problems += _mcp_add(shlex.split(args.text)[1:])
        elif name == "config":
            m = re.match(r"DshMagics\.(\w+)\s*=", line)
            if m and m.group(1) not in settings:
                problems.append(f"%config DshMagics.{m.group(1)}: no such setting (known: {sorted(settings)})")
    return problems


# --- files the code reads ------------------------------------------------------------------------


def _mcp_json(path: Path) -> list[str]:
    from dsh_notebook.tools.mcp.config import load_config

    home = path.parent
    (home / "mcp.json").write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    config = load_config(home)
    return ([config.file_error] if config.file_error else []) + [f"{n}: {p}" for n, p in config.problems.items()] + (
        [] if config.servers else ["no server in it"])


def _rules(path: Path) -> list[str]:
    from dsh_notebook.errors import UserError
    from dsh_notebook.tools.rules import load_rules

    try:
        return [] if load_rules(path).rules else ["no rule in it"]
    except UserError as exc:
        return [f"[{exc.code}] {exc.message}"]


def _prices(path: Path) -> list[str]:
    from dsh_notebook.errors import UserError
    from dsh_notebook.session.catalog import load_catalog

    try:
        load_catalog(path)
    except UserError as exc:
        return [f"[{exc.code}] {exc.message}"]
    return []


def check_mcp_client(text: str, lang: str) -> list[str]:
    """An external agent's MCP config (Claude Code's and Cursor's JSON, Codex's TOML) pointing at the
    notebook server: each server is ``python -m dsh_notebook mcp-bridge …`` (as the CLI parses it)
    or a URL ending in ``/dsh/mcp`` with Jupyter's token in an ``Authorization`` header."""
    from dsh_notebook.external import PATH

    try:
        data = tomllib.loads(text) if lang == "toml" else json.loads(text)
    except ValueError as exc:
        return [f"not {lang}: {exc}"]
    servers = data.get("mcpServers") or data.get("mcp_servers") or {}
    if not servers:
        return ["no mcpServers / mcp_servers entry"]
    problems = []
    for name, entry in servers.items():
        if "command" in entry:
            argv = [entry["command"], *entry.get("args", [])]
            if not (Path(argv[0]).name.startswith("python") and argv[1:4] == ["-m", "dsh_notebook", "mcp-bridge"]):
                problems.append(f"{name}: not python -m dsh_notebook mcp-bridge: {argv}")
            else:
                problems += check_dsh_cli(argv[3:])
        elif "url" in entry:
            if not str(entry["url"]).rstrip("/").endswith("/" + PATH):
                problems.append(f"{name}: the notebook server answers at {{base_url}}{PATH}, not {entry['url']}")
            auth = (entry.get("headers") or {}).get("Authorization", "")
            if not re.match(r"(?i)(token|bearer) \S", auth):
                problems.append(f"{name}: Jupyter's token goes in an Authorization header (token … or Bearer …)")
        else:
            problems.append(f"{name}: neither a command nor a url")
    return problems


FILE_CHECKS: dict[str, Callable[[Path], list[str]]] = {"mcp.json": _mcp_json, "rules": _rules, "prices": _prices}


def check_file(kind: str, text: str) -> list[str]:
    try:
        json.loads(text)
    except ValueError as exc:
        return [f"not JSON: {exc}"]
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "block.json"
        path.write_text(text, encoding="utf-8")
        return FILE_CHECKS[kind](path)

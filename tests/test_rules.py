"""The package's rules as tests: layer imports (AST, imports inside functions included) and the
ownership map (docs/architecture/ownership-map.md) against the modules that exist."""

from __future__ import annotations

import ast
import fnmatch
import re
from pathlib import Path

from tests.support.source import ONE_WORKER, parsed

pytestmark = ONE_WORKER  # the package's files parsed once, in one worker
ROOT = Path(__file__).resolve().parents[1]
PKG = ROOT / "dsh_notebook"
CORE = ("session", "analysis", "pages", "agent", "tools", "models", "wire", "checkpoint")
UI = ("IPython", "ipywidgets", "anywidget")
LAYERS = ("session", "agent", "tools", "models", "host", "client", "notebook", "kernel", "observe", "demo", "testing", "checkpoint",
          "redaction", "cmdline", "analysis", "pages", "external")
TOP_MODULES = ("cli", "cli_run", "cli_tty", "config", "context", "doctor", "errors", "glossary", "launcher", "providers",
               "teach")


def modules() -> list[Path]:
    return sorted(p for p in PKG.rglob("*.py") if "static" not in p.parts)


def rel(path: Path) -> str:
    return path.relative_to(PKG).as_posix()


def imported(path: Path, package: list[str] | None = None) -> list[tuple[int, str]]:
    """Every name ``path`` imports, anywhere in it (functions, ``TYPE_CHECKING``), as dotted names;
    ``from pkg import x`` gives ``pkg.x`` (``tests/test_layers.py``'s ``resolve`` turns it into the
    module ``x`` when there is one, else the package). The one import walker of the rule tests."""
    package = package or ["dsh_notebook", *path.relative_to(PKG).parent.parts]
    out: list[tuple[int, str]] = []
    for node in _statements(parsed(path)):
        if isinstance(node, ast.Import):
            out += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[: len(package) - node.level + 1] if node.level else []
            name = ".".join([*base, node.module] if node.module else base)
            out += [(node.lineno, f"{name}.{a.name}") for a in node.names]
    return out


_BODIES = ("body", "orelse", "finalbody", "handlers", "cases")


def _statements(tree: ast.Module) -> list[ast.AST]:
    """Every statement of ``tree``, nested ones included (an import is always a statement), in
    source order: a walk of the statement lists only, the expressions (most of a tree) skipped."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = list(reversed(tree.body))
    while stack:
        node = stack.pop()
        out.append(node)
        for field in _BODIES:
            stack.extend(reversed(getattr(node, field, None) or ()))
    return out


def test_the_core_never_imports_ui_libraries_or_openai() -> None:
    bad = []
    for path in modules():
        if rel(path).split("/")[0] not in CORE:
            continue
        for line, name in imported(path):
            top = name.split(".")[0]
            if top in UI or (top == "openai" and rel(path) != "models/openai_compat.py"):
                bad.append(f"{rel(path)}:{line} imports {name}")
    assert bad == [], "the core imports what it must not:\n" + "\n".join(bad)


def test_the_wire_imports_only_pydantic_the_stdlib_and_itself() -> None:
    bad = []
    for path in sorted((PKG / "wire").rglob("*.py")):
        for line, name in imported(path):
            parts = name.split(".")
            if parts[0] == "dsh_notebook" and (len(parts) < 2 or parts[1] != "wire"):
                bad.append(f"{rel(path)}:{line} imports {name}")
            # typing_extensions is pydantic's own dependency: its TypedDict is the one pydantic
            # reads on Python < 3.12 (wire/fold_state.py's state shapes)
            elif parts[0] not in ("dsh_notebook", "pydantic", "pydantic_core", "typing_extensions", "__future__") \
                    and not _stdlib(parts[0]):
                bad.append(f"{rel(path)}:{line} imports {name}")
    assert bad == [], "wire/ must import no layer and no third-party library but pydantic:\n" + "\n".join(bad)


def _stdlib(name: str) -> bool:
    import sys

    return name in sys.stdlib_module_names


def test_the_rule_checker_sees_imports_inside_functions(tmp_path: Path) -> None:
    probe = tmp_path / "probe.py"
    probe.write_text("def f():\n    import IPython\n    from openai import OpenAI\n    from ..host import gateway\n")
    names = [n for _, n in imported(probe, ["dsh_notebook", "tools"])]
    assert names == ["IPython", "openai.OpenAI", "dsh_notebook.host.gateway"]


# --- the ownership map ---------------------------------------------------------------------------


OWNERSHIP_MAP = ROOT / "docs" / "architecture" / "ownership-map.md"


def ownership_entries() -> list[str]:
    """The module paths named in the ownership map (its table's last column)."""
    entries: list[str] = []
    for row in OWNERSHIP_MAP.read_text(encoding="utf-8").splitlines():
        if row.startswith("|") and not row.startswith("|---"):
            cells = [c.strip() for c in row.strip("|").split("|")]
            entries += re.findall(r"`([^`]+)`", cells[-1])
    return [e for e in entries if e != "module"]


def covered(module: str, entries: list[str]) -> bool:
    for entry in entries:
        if entry.endswith("/") and module.startswith(entry):
            return True
        if fnmatch.fnmatch(module, entry):
            return True
    return False


def test_every_module_of_the_map_exists() -> None:
    missing = []
    for entry in ownership_entries():
        base = ROOT if entry.startswith(("js/", "labextension/")) else PKG
        if entry.endswith("/"):
            ok = (base / entry).is_dir()
        else:
            ok = bool(list(base.glob(entry)))
        if not ok:
            missing.append(entry)
    assert missing == [], "the ownership map (docs/architecture/ownership-map.md) names modules that do not exist: " + ", ".join(missing)


def test_every_package_module_is_in_the_map() -> None:
    entries = ownership_entries()
    absent = [
        rel(p) for p in modules()
        if p.name != "__init__.py" and not covered(rel(p), entries)
    ]  # fmt: skip
    assert absent == [], (
        "add these modules to the ownership map (docs/architecture/ownership-map.md): " + ", ".join(absent)
    )


def test_the_layers_are_the_ones_the_rules_name() -> None:
    packages = sorted(p.name for p in PKG.iterdir() if (p / "__init__.py").is_file())
    assert set(packages) <= set(LAYERS) | {"wire"}, packages
    tops = sorted(p.stem for p in PKG.glob("*.py") if not p.name.startswith("__"))
    assert set(tops) <= set(TOP_MODULES), tops


# --- mypy ----------------------------------------------------------------------------------------

STRICT_PACKAGES = ("wire", "agent", "client")
STRICT_FLAGS = ("warn_unused_ignores", "disallow_any_generics", "disallow_subclassing_any", "disallow_untyped_calls",
                "disallow_untyped_defs", "disallow_incomplete_defs", "check_untyped_defs",
                "disallow_untyped_decorators", "warn_return_any", "no_implicit_reexport", "strict_equality",
                "extra_checks")


def test_the_wire_the_agent_and_the_client_are_strict() -> None:
    """mypy's per-module strict flags stay on for ``wire/``, ``agent/`` and ``client/`` (issue 40
    item 5; ``make lint`` runs mypy). ``strict = true`` itself cannot be set per module: in an
    override it turns strict on for the whole package."""
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert "strict" not in config
    for package in STRICT_PACKAGES:
        names = {f"dsh_notebook.{package}", f"dsh_notebook.{package}.*"}
        found = [o for o in config.get("overrides", ()) if names <= set(o["module"])]
        assert found, f"no mypy override for dsh_notebook.{package}"
        off = [flag for flag in STRICT_FLAGS if found[0].get(flag) is not True]
        assert off == [], f"dsh_notebook.{package} is not strict: {off}"

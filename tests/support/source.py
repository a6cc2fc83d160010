"""The package's source as the rule tests read it (tests/test_rules.py, tests/test_layers.py,
tests/test_names.py, tests/test_no_abbreviations.py, tests/wire/test_error_codes.py): each file
parsed once per test process, not once per test. A tree is keyed by the file's path, size and
modification time, so a file a test writes (a probe under ``tmp_path``) is parsed as it is; the
trees are shared, so a reader walks them and never changes them. Those tests are one xdist group
(:data:`ONE_WORKER`): a parallel run parses the package in one worker, not in each."""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

ONE_WORKER = pytest.mark.xdist_group("package-source")


def parsed(path: Path) -> ast.Module:
    """``path``'s syntax tree (read once while the file stays as it is)."""
    st = path.stat()
    return _parse(str(path), st.st_mtime_ns, st.st_size)


@functools.lru_cache(maxsize=2048)
def _parse(path: str, mtime_ns: int, size: int) -> ast.Module:
    return ast.parse(Path(path).read_text(encoding="utf-8"), path)


def every_node(tree: ast.AST) -> tuple[ast.AST, ...]:
    """Every node of ``tree`` in ``ast.walk``'s order, listed once per tree (a parsed file's tree
    is shared, so its walk is too)."""
    return _every_node(tree)


@functools.lru_cache(maxsize=2048)
def _every_node(tree: ast.AST) -> tuple[ast.AST, ...]:
    return tuple(ast.walk(tree))

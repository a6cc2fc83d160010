"""The package's public face (issue 25 item 4): ``dsh_notebook.__all__`` lists what users import,
every listed name loads, nothing public is left unlisted, and ``import dsh_notebook`` stays light."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
from pathlib import Path

import dsh_notebook
import dsh_notebook.testing

ROOT = Path(__file__).resolve().parents[1]
INIT = ROOT / "dsh_notebook" / "__init__.py"


def top_level_public_names(path: Path) -> set[str]:
    """Names a module defines or imports at its top level, without a leading underscore."""
    names: set[str] = set()
    for node in ast.parse(path.read_text()).body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.Assign):
            names |= {t.id for t in node.targets if isinstance(t, ast.Name)}
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names |= {(a.asname or a.name).split(".")[0] for a in node.names}
    return {n for n in names if not n.startswith("_") and n != "annotations"}


def test_every_name_of_all_loads() -> None:
    assert dsh_notebook.__all__ and len(set(dsh_notebook.__all__)) == len(dsh_notebook.__all__)
    for name in dsh_notebook.__all__:
        assert getattr(dsh_notebook, name) is not None, name
    for name in dsh_notebook.testing.__all__:
        assert getattr(dsh_notebook.testing, name) is not None, name


def test_no_public_name_is_left_out_of_all() -> None:
    unlisted = top_level_public_names(INIT) - set(dsh_notebook.__all__) - {"Any"}
    assert unlisted == set(), f"add to dsh_notebook.__all__ (or make private): {sorted(unlisted)}"


def test_what_the_docs_import_from_the_package_is_public() -> None:
    """``from dsh_notebook import X`` in the docs (README, CONTRIBUTING, docs/) and the notebooks: X is
    listed or a module."""
    from tests.readme.blocks import doc_files

    texts = [path.read_text(encoding="utf-8") for path in doc_files()]
    for nb in sorted((ROOT / "notebooks").glob("*.ipynb")):
        texts += ["".join(c["source"]) for c in json.loads(nb.read_text())["cells"] if c["cell_type"] == "code"]
    imported = {n.strip() for t in texts for m in re.findall(r"from dsh_notebook import ([\w, ]+)", t)
                for n in m.split(",")}
    modules = {p.stem for p in (ROOT / "dsh_notebook").iterdir() if p.suffix == ".py" or (p / "__init__.py").is_file()}
    assert imported - set(dsh_notebook.__all__) - modules == set()


def test_importing_the_package_imports_nothing_else() -> None:
    code = ("import sys, dsh_notebook, dsh_notebook.testing\n"
            "print(sorted(m for m in sys.modules if m.startswith(('dsh_notebook', 'IPython', 'ipywidgets', "
            "'anywidget', 'openai', 'pydantic'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True,
                         cwd=ROOT)
    assert out.stdout.strip() == "['dsh_notebook', 'dsh_notebook.testing']"

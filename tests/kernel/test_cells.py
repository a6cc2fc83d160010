"""How the agent kernel reads cells (prompt, ``%%python``, IPython lines) and what Tab offers."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import pytest

from dsh_notebook.notebook.magic.cell_kinds import CellRewriter, rewrite, split_cell
from dsh_notebook.notebook.magic.complete import complete
from tests.support.cli import dsh

REPO = Path(__file__).resolve().parents[2]


def lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def test_a_prose_cell_is_one_dsh_prompt_and_keeps_its_text_exactly() -> None:
    text = "what's in {df}?\nuse `%timeit` if you like; don't say \"hi\"\n\nthanks"
    out = "".join(rewrite(lines(text)))
    assert out.splitlines()[0] == f"get_ipython().run_cell_magic('dsh', '', {text!r})"
    assert out.count("\n") == text.count("\n") + 1  # line numbers kept


def test_percent_and_bang_lines_are_ipython_and_the_rest_is_the_prompt() -> None:
    out = rewrite(lines("%env A=1\n!ls\nexplain the files\n  %dsh show\nmore prose"))
    assert out[:2] == ["%env A=1\n", "!ls\n"]
    assert out[2] == "get_ipython().run_cell_magic('dsh', '', 'explain the files\\nmore prose')\n"
    assert out[3] == "%dsh show\n" and out[4] == "\n"
    assert split_cell("%dsh sessions\n%pip list") == ("magic", "")


def test_python_cells_other_cell_magics_and_empty_cells() -> None:
    assert rewrite(lines("%%python\nx = 42\nprint(x)")) == ["# %%python\n", "x = 42\n", "print(x)"]
    assert split_cell("\n%%python\nx = 1") == ("python", "x = 1")
    assert split_cell("%%pythonic\nx")[0] == "magic"  # only the exact %%python marker
    assert rewrite(lines("%%time\nsleep")) == lines("%%time\nsleep")
    assert rewrite(lines("%%dsh --new\nhello")) == lines("%%dsh --new\nhello")
    assert rewrite(["  \n"]) == ["  \n"]
    helper = CellRewriter(lambda: {"df": 1})
    assert helper(["df?"]) == ["df?"] and helper(["df.columns??\n"]) == ["df.columns??\n"]  # IPython's help
    assert helper(["why?"])[0].startswith("get_ipython().run_cell_magic('dsh'")  # not a variable: a prompt
    off = CellRewriter()
    off.enabled = False
    assert off(["import sys"]) == ["import sys"]


def names() -> list[str]:
    return ["dataset", "data2", "_hidden", "model"]


@pytest.mark.parametrize(("code", "matches", "start"), [
    ("%dsh --ap", ["--approve"], 5),
    ("%dsh --approve a", ["ask", "auto"], 15),
    ("%dsh --model deep", ["deepseek:deepseek-chat", "deepseek:deepseek-reasoner"], 13),
    ("%dsh --session s_", ["s_0123456789ab"], 15),
    ("%dsh resume ", ["s_0123456789ab"], 12),
    ("%dsh --new --bg ", None, 16),
    ("%dsh --model x --n", ["--new", "--no-widget", "--no-interpolate", "--no-network"], 15),
    ("%dsh tell me about ", [], 19),
    ("%dsh tell me about {da", ["data2}", "dataset}"], 20),
    ("compare {da", ["data2}", "dataset}"], 9),
    ("literal {{da", [], 12),
    ("%%dsh --new\nlook at {mo", ["model}"], 21),
])
def test_completion(code: str, matches: list[str] | None, start: int) -> None:
    got = complete(code, len(code), names, lambda: ["s_0123456789ab"])
    assert got is not None
    found, cursor_start, cursor_end = got
    if matches is None:
        assert "sessions" in found and "--approve" in found
    else:
        assert sorted(found) == sorted(matches)
    assert (cursor_start, cursor_end) == (start, len(code))


def test_completion_leaves_python_and_other_magics_to_ipython() -> None:
    assert complete("%%python\nimport o", 17, names) is None
    assert complete("%pip ins", 8, names) is None
    assert complete("!l", 2, names) is None


def test_install_kernel_flags_exclude_each_other(tmp_path: object) -> None:
    done = dsh("install-kernel", "--user", "--prefix", "x", timeout=60)
    assert done.returncode == 2 and "not allowed with argument" in done.stderr


def test_install_kernel_user_writes_the_spec_into_the_users_data_dir(tmp_path: Path) -> None:
    env = {**os.environ, "JUPYTER_DATA_DIR": str(tmp_path / "data"), "PYTHONPATH": str(REPO)}
    done = dsh("install-kernel", "--user", timeout=60, env=env)
    assert done.returncode == 0, done.stderr
    spec = json.loads((tmp_path / "data" / "kernels" / "dsh" / "kernel.json").read_text())
    assert spec["display_name"] == "Agent (dsh)"
    assert spec["argv"] == [sys.executable, "-m", "dsh_notebook.kernel", "-f", "{connection_file}"]

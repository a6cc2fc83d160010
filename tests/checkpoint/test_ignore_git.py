"""Ignore rules as git does them: the files a checkpoint covers are exactly the files
``git ls-files --others --exclude-standard`` lists in the same tree (a fresh repository, so every
file is untracked) — on a table of cases and on random trees with random ``.gitignore`` files in
random folders (negation, nested files, anchored patterns, ``**``, folders only, classes), and
``DSH_CHECKPOINT_IGNORE`` read as ``.git/info/exclude``."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pytest

from dsh_notebook.checkpoint.ignore import limits_for
from dsh_notebook.checkpoint.store import CheckpointStore

GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")
ENV = {**os.environ, "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_CONFIG_NOSYSTEM": "1"}

PATTERNS = ["*.log", "!keep.log", "build/", "/build", "build", "a/b", "/a/*.txt", "**/tmp", "a/**", "a/**/z.txt",
            "!a/b/", "doc?.md", "[ab].txt", "[!a].txt", "*", "!*.md", "!/src/", "src/**/*.c", "\\#hash", "c.txt  ",
            "!build/", "x*/", "**/b/*.log", "sub/", "/sub/c", "!*/", "*.txt", "!z.txt", "b/**", "# comment", "",
            "**/*.c", "/*", "!/src", "tmp/*", "!tmp/keep.log", "**", "*/c",
            # several stars in a name, and blocks between several ** (matched atomically, in linear time)
            "*o*c*", "d*c*.md", "*e*p*.*g", "!*a*t*", "?o*1*.md", "*[ab]*.txt", "**/*d*r/**/*.*", "a*/**/b*/**",
            "**/s*c/**/*a*n*", "*/**/*.log", "x*r/**/z*"]
DIRS = ["a", "b", "build", "src", "tmp", "sub", "xdir"]
FILES = ["keep.log", "x.log", "a.txt", "b.txt", "c.txt", "doc1.md", "docs.md", "z.txt", "main.c", "#hash", "c"]


def git_covers(ws: Path, exclude: list[str]) -> set[str]:
    subprocess.run([GIT or "git", "init", "-q"], cwd=ws, check=True, env=ENV, capture_output=True)
    (ws / ".git" / "info").mkdir(exist_ok=True)
    (ws / ".git" / "info" / "exclude").write_text("".join(f"{p}\n" for p in exclude))
    out = subprocess.run([GIT or "git", "ls-files", "--others", "--exclude-standard", "-z"], cwd=ws, check=True,
                         env=ENV, capture_output=True).stdout
    return {p for p in out.decode().split("\0") if p}


def we_cover(ws: Path, home: Path, exclude: list[str]) -> set[str]:
    limits = limits_for(str(ws), {"DSH_CHECKPOINT_IGNORE": ",".join(exclude)})
    snap = CheckpointStore(home).take(str(ws), limits)
    return {p for p, e in snap.listing.items() if e.kind == "f"}


def write(ws: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text(text)


CASES = {
    "negation": {".gitignore": "*.log\n!keep.log\n", "x.log": "", "keep.log": "", "a/keep.log": "", "a/y.log": ""},
    "nested": {".gitignore": "*.txt\n", "a/.gitignore": "!b.txt\n/c.txt\n", "a/b.txt": "", "a/c.txt": "",
               "a/d/c.txt": "", "b.txt": "", "a/x.md": ""},
    "anchored": {".gitignore": "/build\nsub/out\n", "build/x": "", "src/build/y": "", "sub/out": "", "a/sub/out": ""},
    "double star": {".gitignore": "**/tmp\na/**/z.txt\nb/**\n!b/keep\n", "tmp/x": "", "q/tmp/y": "", "a/z.txt": "",
                    "a/m/n/z.txt": "", "b/x": "", "b/keep": "", "c/z.txt": ""},
    "no re-include below an ignored folder": {".gitignore": "build/\n!build/keep\n", "build/keep": "", "x": ""},
    "folders only": {".gitignore": "out/\n", "out": "", "a/out/x": ""},
    "classes": {".gitignore": "[ab].txt\ndoc?.md\n[!x]y\n", "a.txt": "", "c.txt": "", "doc1.md": "", "doc12.md": "",
                "ay": "", "xy": ""},
    "escapes and spaces": {".gitignore": "\\#hash\ntrail  \n\\!bang\n", "#hash": "", "trail": "", "!bang": "", "k": ""},
    "whitelist": {".gitignore": "/*\n!/src\n/src/*\n!/src/keep\n", "a": "", "src/keep": "", "src/drop": "", "b/c": ""},
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_table_matches_git(tmp_path: Path, name: str) -> None:
    ws = tmp_path / "ws"
    write(ws, CASES[name])
    exclude = ["*.md"] if name == "classes" else []
    assert we_cover(ws, tmp_path / "home", exclude) == git_covers(ws, exclude)


def random_tree(rng: random.Random, root: Path, depth: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    for f in rng.sample(FILES, rng.randint(1, 4)):
        (root / f).write_text(f)
    if rng.random() < (0.9 if depth == 0 else 0.35):
        (root / ".gitignore").write_text("".join(f"{p}\n" for p in rng.sample(PATTERNS, rng.randint(1, 5))))
    if depth < 3:
        for d in rng.sample(DIRS, rng.randint(0, 3 - depth)):
            random_tree(rng, root / d, depth + 1)


@pytest.mark.parametrize("seed", range(60))
def test_random_trees_match_git(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    ws = tmp_path / "ws"
    random_tree(rng, ws, 0)
    exclude = rng.sample(PATTERNS, rng.randint(0, 2))
    exclude = [p for p in exclude if "," not in p and p.strip() and not p.startswith("#")]
    ours, theirs = we_cover(ws, tmp_path / "home", exclude), git_covers(ws, exclude)
    ignores = {str(p.relative_to(ws)): p.read_text() for p in ws.rglob(".gitignore")}
    assert ours == theirs, f"exclude={exclude} gitignores={ignores}: only ours {ours - theirs}, only git's {theirs - ours}"

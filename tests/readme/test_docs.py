"""The docs as a whole (issue 40 item 1): a README of at most 300 lines whose two commands are the
Makefile's and CI's, every page reachable from docs/index.md, every relative link and anchor
resolving, the floors page equal to the ranking tests/test_layers.py enforces, and the TODO markers
of work in flight exactly the ones listed here (so none is forgotten when its work lands)."""

from __future__ import annotations

import re
from pathlib import Path

from .blocks import README, ROOT, blocks, doc_files
from .checks import commands, makefile_targets

DOCS = ROOT / "docs"
INDEX = DOCS / "index.md"

# Work in flight when the docs were restructured: each marker names the page section to fill when
# its change is on main. Remove a marker (and its line here) in the change that lands the work.
OPEN_TODOS = {
}
_TODO = re.compile(r"TODO\(([\w-]+)\)")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)|!\[[^\]]*\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def page(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def prose(path: Path) -> list[str]:
    """The lines of a page outside its fenced blocks."""
    out, fenced = [], False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced:
            out.append(line)
    return out


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces → hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    seen: dict[str, int] = {}
    out = set()
    for line in prose(path):
        m = _HEADING.match(line)
        if m:
            base = slug(m.group(2))
            n = seen.get(base, 0)
            seen[base] = n + 1
            out.add(base if n == 0 else f"{base}-{n}")
    return out


def links(path: Path) -> list[str]:
    return [a or b for line in prose(path) for a, b in _LINK.findall(line)]


def test_the_readme_is_at_most_300_lines() -> None:
    assert len(README.read_text(encoding="utf-8").splitlines()) <= 300


def test_the_readme_names_the_two_commands_ci_runs() -> None:
    """`make demo` and `make test` are the README's first block; the Makefile has both and CI runs
    the README's test command."""
    first = next(b for b in blocks(README) if b.lang == "bash")
    assert [words[:2] for words in commands(first.text)] == [["make", "demo"], ["make", "test"]]
    assert {"demo", "test", "setup"} <= makefile_targets()
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert re.search(r"(?m)^make test$", ci)


def test_every_page_is_reachable_from_the_index() -> None:
    linked = {(INDEX.parent / target.split("#", 1)[0]).resolve() for target in links(INDEX)
              if not target.startswith(("http:", "https:", "#"))}
    pages = {p.resolve() for p in DOCS.rglob("*.md")} - {INDEX.resolve()}
    assert sorted(page(p) for p in pages - linked) == []
    assert "docs/index.md" in links(README) or any(t.startswith("docs/index.md") for t in links(README))


def test_every_relative_link_and_anchor_resolves() -> None:
    bad = []
    for path in doc_files():
        for target in links(path):
            if target.startswith(("http:", "https:", "mailto:")):
                continue
            file, _, anchor = target.partition("#")
            dest = (path.parent / file).resolve() if file else path
            if not dest.exists():
                bad.append(f"{page(path)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                bad.append(f"{page(path)}: {target} (no heading #{anchor} in {page(dest)})")
    assert bad == []


def test_the_open_todos_are_the_listed_ones() -> None:
    found: dict[str, list[str]] = {}
    for path in [*doc_files(), ROOT / "docs" / "gen.py"]:
        for name in _TODO.findall(path.read_text(encoding="utf-8")):
            found.setdefault(name, []).append(page(path))
    assert {name: sorted(set(pages)) for name, pages in found.items()} == {k: [v] for k, v in OPEN_TODOS.items()}, (
        "a TODO marker in the docs was added or removed: update OPEN_TODOS in tests/readme/test_docs.py")


def test_the_floors_page_is_the_ranking_the_layers_test_enforces() -> None:
    from tests.test_layers import RANKS

    rows = [line for line in (DOCS / "architecture" / "floors.md").read_text(encoding="utf-8").splitlines()
            if re.match(r"^\| \d+ \|", line)]
    table = [tuple(re.findall(r"`([^`]+)`", row.split("|")[2])) for row in rows]
    assert table == list(RANKS)
    assert [int(row.split("|")[1]) for row in rows] == list(range(len(RANKS)))

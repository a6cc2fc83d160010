"""No GPL code ships (issue 36): the package is MIT, so nothing ``pip install dsh-notebook`` can
install — its dependencies and those of every extra (``local``, ``mcp``, ``otel``, ``dev``),
followed transitively through the installed distributions' metadata — may declare a GPL or AGPL
licence (LGPL is not GPL). Read: ``License-Expression`` (every ``OR`` alternative GPL), the free
``License`` field and the ``License ::`` classifiers."""

from __future__ import annotations

import importlib.metadata as md
import re
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

tomllib = pytest.importorskip("tomllib")
PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"
_GPL = re.compile(r"\bA?GPL|GNU (?:Affero )?General Public License", re.IGNORECASE)


def _roots() -> list[Requirement]:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    extras = project.get("optional-dependencies", {})
    return [Requirement(r) for r in [*project["dependencies"], *(r for group in extras.values() for r in group)]]


def _applies(marker: Marker | None, extras: set[str]) -> bool:
    return marker is None or any(marker.evaluate({"extra": e}) for e in extras | {""})


def runtime_distributions() -> dict[str, md.Distribution]:
    """Every distribution the package's dependencies and extras pull in, by canonical name."""
    found: dict[str, md.Distribution] = {}
    done: set[tuple[str, frozenset[str]]] = set()
    todo = [(req, frozenset[str]()) for req in _roots()]
    while todo:
        req, parent_extras = todo.pop()
        if not _applies(req.marker, set(parent_extras)):
            continue
        key = (canonicalize_name(req.name), frozenset(req.extras))
        if key in done:
            continue
        done.add(key)
        try:
            dist = md.distribution(req.name)
        except md.PackageNotFoundError:
            pytest.fail(f"{req.name} (a dependency) is not installed: its licence cannot be checked")
        found[key[0]] = dist
        todo += [(Requirement(r), frozenset(req.extras)) for r in dist.requires or []]
    return found


def gpl_declaration(dist: md.Distribution) -> str | None:
    """What in ``dist``'s metadata declares a GPL/AGPL licence, else None."""
    meta = dist.metadata
    expression = meta.get("License-Expression") or ""
    if expression and all(_GPL.search(alt) for alt in re.split(r"\bOR\b", expression)):
        return f"License-Expression: {expression}"
    text = meta.get("License") or ""
    if _GPL.search(text):
        return f"License: {text[:80]}"
    for classifier in meta.get_all("Classifier") or []:
        if classifier.startswith("License ::") and _GPL.search(classifier):
            return f"Classifier: {classifier}"
    return None


def test_no_runtime_dependency_declares_a_gpl_or_agpl_licence() -> None:
    dists = runtime_distributions()
    assert {"pydantic", "openai", "ipykernel", "mcp", "xllamacpp"} <= set(dists)
    offenders = {name: why for name, dist in sorted(dists.items()) if (why := gpl_declaration(dist))}
    assert offenders == {}, f"GPL/AGPL in what `pip install dsh-notebook[...]` installs: {offenders}"
    assert {"tree-sitter", "tree-sitter-bash"} <= set(dists)  # the parser approvals use (MIT)


def test_the_licence_check_recognises_gpl_declarations() -> None:
    """The check itself, on the declarations it must catch and the ones it must let pass."""

    class Meta(md.Distribution):
        def __init__(self, **fields: str | list[str]) -> None:
            self.fields = fields

        def read_text(self, filename: str) -> str | None:
            if filename != "METADATA":
                return None
            lines = ["Metadata-Version: 2.4", "Name: x", "Version: 1"]
            for key, value in self.fields.items():
                for v in value if isinstance(value, list) else [value]:
                    lines.append(f"{key.replace('_', '-')}: {v}")
            return "\n".join(lines) + "\n"

        def locate_file(self, path: str | Path) -> Path:
            return Path(path)

    assert gpl_declaration(Meta(License="GPLv3+"))  # bashlex 0.18
    assert gpl_declaration(Meta(Classifier="License :: OSI Approved :: GNU General Public License v3 or later (GPLv3+)"))
    assert gpl_declaration(Meta(License_Expression="AGPL-3.0-only"))
    assert gpl_declaration(Meta(License_Expression="GPL-2.0-only OR GPL-3.0-only"))
    assert gpl_declaration(Meta(Classifier="License :: OSI Approved :: GNU Affero General Public License v3"))
    assert not gpl_declaration(Meta(License_Expression="MIT"))
    assert not gpl_declaration(Meta(License_Expression="MIT OR GPL-2.0-or-later"))  # a permissive choice
    assert not gpl_declaration(Meta(License="LGPL-2.1", Classifier="License :: OSI Approved :: GNU Lesser "
                                                                   "General Public License v2 (LGPLv2)"))
    assert not gpl_declaration(Meta(Classifier=["License :: OSI Approved :: MIT License"]))

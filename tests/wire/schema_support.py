"""Validate wire JSON against the document ``python -m dsh_notebook schema`` prints."""

from __future__ import annotations

import functools
import json
from typing import Any

from jsonschema import Draft202012Validator

from tests.support.cli import dsh


@functools.cache
def document() -> dict[str, Any]:
    """The schema exactly as the CLI prints it (a real subprocess, as an outside checker sees it)."""
    out = dsh("schema", check=True).stdout
    return json.loads(out)  # type: ignore[no-any-return]


@functools.cache
def validator(name: str) -> Draft202012Validator:
    """A validator for one top-level union (``LogLine``, ``ClientMessage``, ``ServerMessage``)."""
    return Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": document()["$defs"]})


def problems(name: str, value: Any) -> list[str]:
    """Why ``value`` does not validate against ``name`` (empty when it does)."""
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"[:300] for e in validator(name).iter_errors(value)]

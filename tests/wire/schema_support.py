"""Validate wire JSON against the document ``python -m dsh_notebook schema`` prints (built in this
process: ``test_the_document_is_deterministic_across_processes`` pins that the CLI prints exactly it)."""

from __future__ import annotations

import functools
import json
from typing import Any

from jsonschema import Draft202012Validator

from dsh_notebook.wire.schema import schema_json


@functools.cache
def document() -> dict[str, Any]:
    """The schema as the CLI prints it."""
    return json.loads(schema_json())  # type: ignore[no-any-return]


@functools.cache
def validator(name: str) -> Draft202012Validator:
    """A validator for one top-level union (``LogLine``, ``ClientMessage``, ``ServerMessage``)."""
    return Draft202012Validator({"$ref": f"#/$defs/{name}", "$defs": document()["$defs"]})


def problems(name: str, value: Any) -> list[str]:
    """Why ``value`` does not validate against ``name`` (empty when it does)."""
    return [f"{'/'.join(map(str, e.absolute_path))}: {e.message}"[:300] for e in validator(name).iter_errors(value)]

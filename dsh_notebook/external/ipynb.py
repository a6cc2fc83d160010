"""nbformat v4 notebooks, cells and outputs as TypedDicts (issue 41): what the tools read and write.

The shapes of nbformat's own JSON schema (v4.5): a notebook (``nbformat``, ``nbformat_minor``,
``metadata``, ``cells``); a cell by ``cell_type`` (``code`` with ``outputs`` and
``execution_count``; ``markdown`` and ``raw``, which may have ``attachments``), whose ``id`` is
absent before nbformat 4.5; an output by ``output_type`` (``stream``, ``display_data``,
``execute_result``, ``error``). Keys the format allows to be absent are ``NotRequired``;
metadata and MIME bundles are open JSON objects.

A notebook enters from Jupyter's contents manager (the file) or from a JupyterLab page (the open
notebook, :mod:`dsh_notebook.wire.external_pages`) and is validated here
(:func:`as_notebook`): a notebook that is not nbformat 4 is ``BAD_NOTEBOOK_FILE``. Keys this
module does not name (another minor version's) are kept, so a notebook written back loses nothing.
(``typing_extensions``' TypedDict: pydantic validates only that one on Python < 3.12.)
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, JsonValue, TypeAdapter, ValidationError, with_config
from typing_extensions import NotRequired, TypedDict

from ..errors import DshError

MultilineString = str | list[str]
"""A text as nbformat stores it: one string, or its lines."""
MimeBundle = dict[str, JsonValue]
"""``{mime type: data}``: a string (or its lines) per type, JSON for ``application/json``."""
Metadata = dict[str, JsonValue]
_KEEP = ConfigDict(extra="allow")  # keys another minor version adds survive a round trip


@with_config(_KEEP)
class StreamOutput(TypedDict):
    output_type: Literal["stream"]
    name: str  # stdout | stderr
    text: MultilineString


@with_config(_KEEP)
class DisplayDataOutput(TypedDict):
    output_type: Literal["display_data"]
    data: MimeBundle
    metadata: Metadata


@with_config(_KEEP)
class ExecuteResultOutput(TypedDict):
    output_type: Literal["execute_result"]
    execution_count: int | None
    data: MimeBundle
    metadata: Metadata


@with_config(_KEEP)
class ErrorOutput(TypedDict):
    output_type: Literal["error"]
    ename: str
    evalue: str
    traceback: list[str]


Output = StreamOutput | DisplayDataOutput | ExecuteResultOutput | ErrorOutput
"""One output of a code cell."""


@with_config(_KEEP)
class CodeCell(TypedDict):
    id: NotRequired[str]
    cell_type: Literal["code"]
    metadata: Metadata
    source: MultilineString
    outputs: list[Annotated[Output, Field(discriminator="output_type")]]
    execution_count: int | None


@with_config(_KEEP)
class MarkdownCell(TypedDict):
    id: NotRequired[str]
    cell_type: Literal["markdown"]
    metadata: Metadata
    source: MultilineString
    attachments: NotRequired[dict[str, MimeBundle]]


@with_config(_KEEP)
class RawCell(TypedDict):
    id: NotRequired[str]
    cell_type: Literal["raw"]
    metadata: Metadata
    source: MultilineString
    attachments: NotRequired[dict[str, MimeBundle]]


Cell = CodeCell | MarkdownCell | RawCell
"""One cell of a notebook."""
CellType = Literal["code", "markdown", "raw"]


@with_config(_KEEP)
class Notebook(TypedDict):
    nbformat: int
    nbformat_minor: int
    metadata: Metadata
    cells: list[Annotated[Cell, Field(discriminator="cell_type")]]


_NOTEBOOK: TypeAdapter[Notebook] = TypeAdapter(Notebook)
_CELL: TypeAdapter[Cell] = TypeAdapter(Annotated[Cell, Field(discriminator="cell_type")])


def as_notebook(data: object, where: str) -> Notebook:
    """``data`` (a notebook's JSON, or nbformat's ``NotebookNode``) as a :class:`Notebook`;
    ``BAD_NOTEBOOK_FILE`` naming the first problem when it is not nbformat 4."""
    try:
        return _NOTEBOOK.validate_python(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        at = ".".join(str(p) for p in first["loc"])
        raise DshError(f"{where} is not an nbformat 4 notebook ({at}: {first['msg']}); open and save it in "
                       "JupyterLab to repair it", code="BAD_NOTEBOOK_FILE") from None


def cell_json(cell: Cell) -> dict[str, JsonValue]:
    """A cell as the JSON object it is (for the page's ops)."""
    data: dict[str, JsonValue] = _CELL.dump_python(cell, mode="json")
    return data


def text_of(value: MultilineString | None) -> str:
    """A multiline string as one string (``""`` for none)."""
    if isinstance(value, list):
        return "".join(value)
    return value or ""

"""The wire as one JSON Schema document (draft 2020-12): ``python -m dsh_notebook schema``.

Every model is in ``$defs`` under its class name; the three top-level unions are the ``$defs``
entries ``LogLine``, ``ClientMessage`` and ``ServerMessage``, and the root is ``anyOf`` the
three (the widget comm's custom messages are ``CommFromView`` / ``CommToView``; the JupyterLab
pages' socket of the external agents ``PageFromServer`` / ``PageToServer``, with the values of its
replies ``PageNotebook`` / ``PageSaved`` and the cells' ``CellProvenance``); ``x-endpoints``
names each endpoint's args and result (or stream items) models (the front end's
``UnaryEndpoints`` / ``StreamEndpoints``, which its Remote is typed by), ``x-stages`` is the stage
table of :mod:`.stages` (the front end's ``STAGE_TABLE``), and ``FoldState`` is the client fold's
state (:mod:`.fold_state`: what both folds, Python's and the widget's, produce). To check
one line against one union, validate it against
``{"$ref": "#/$defs/LogLine", "$defs": <the document's $defs>}`` (see the README). The document
is deterministic: the same code prints the same bytes (``$defs`` sorted, keys in model order).
"""

from __future__ import annotations

import json
from typing import Any

from pydantic import BaseModel, JsonValue, RootModel, TypeAdapter

from .codes import ErrorCode as _ErrorCode
from .comm import CommFromView as _CommFromView
from .comm import CommToView as _CommToView
from .control import ControlItem
from .endpoints import ENDPOINTS
from .envelopes import ClientMessage as _ClientMessage
from .envelopes import ServerMessage as _ServerMessage
from .external import CellProvenance
from .external_pages import FromPage as _FromPage
from .external_pages import PageNotebook, PageSaved
from .external_pages import ToPage as _ToPage
from .fold_state import FoldState
from .follow import FollowItem
from .log import LogLine as _LogLine
from .stages import stage_rows

DRAFT = "https://json-schema.org/draft/2020-12/schema"
SCHEMA_ID = "https://dsh-notebook.invalid/wire.schema.json"
TOP_LEVEL = ("LogLine", "ClientMessage", "ServerMessage")


# Named roots: their class names become the ``$defs`` keys of the unions.
class LogLine(RootModel[_LogLine]):
    """One line of a session log: the header line or one event."""


class ClientMessage(RootModel[_ClientMessage]):
    """One message from a client: client-request, open or cancel."""


class ServerMessage(RootModel[_ServerMessage]):
    """One message from the host: server-response, or a stream's item / error / end frame."""


class ErrorCode(RootModel[_ErrorCode]):
    """Every error code the package raises (the closed set; ``code`` fields stay strings)."""


class CommFromView(RootModel[_CommFromView]):
    """A widget view's custom message to the kernel: an envelope for the host, bye, open-inspector."""


class CommToView(RootModel[_CommToView]):
    """The kernel's custom message to a widget view: a batch of the host's envelopes."""


class PageFromServer(RootModel[_ToPage]):
    """What the server sends a JupyterLab page over ``{base_url}dsh/pages`` (external agents)."""


class PageToServer(RootModel[_FromPage]):
    """What a JupyterLab page sends the server over ``{base_url}dsh/pages`` (external agents)."""


class FollowStreamItem(RootModel[FollowItem]):
    """The value of an item frame on a ``session/follow`` stream."""


class ControlStreamItem(RootModel[ControlItem]):
    """The value of an item frame on a ``session/control`` stream."""


def _strip_titles(node: Any) -> Any:
    """Drop pydantic's generated ``title`` of properties (noise for readers and TS generators)."""
    if isinstance(node, dict):
        props = node.get("properties")
        out = {k: _strip_titles(v) for k, v in node.items()}
        if isinstance(props, dict):
            out["properties"] = {
                k: {kk: vv for kk, vv in _strip_titles(v).items() if kk != "title"}
                for k, v in props.items()
            }
        return out
    if isinstance(node, list):
        return [_strip_titles(v) for v in node]
    return node


def _ref(name: str) -> dict[str, JsonValue]:
    return {"$ref": f"#/$defs/{name}"}


def _endpoints() -> dict[str, JsonValue]:
    """``x-endpoints``: each endpoint's args and its result (unary) or items (stream)."""
    out: dict[str, JsonValue] = {}
    for name, (args, result) in ENDPOINTS.items():
        if isinstance(result, str):
            out[name] = {"kind": "stream", "args": _ref(args.__name__), "items": _ref(result)}
        else:
            out[name] = {"kind": "unary", "args": _ref(args.__name__), "result": _ref(result.__name__)}
    return out


def wire_schema() -> dict[str, JsonValue]:
    """The whole wire as one JSON Schema document."""
    roots: list[type[BaseModel]] = [LogLine, ClientMessage, ServerMessage, FollowStreamItem, ControlStreamItem,
                                    ErrorCode, CommFromView, CommToView, PageFromServer, PageToServer, PageNotebook,
                                    PageSaved, CellProvenance]
    for args, result in ENDPOINTS.values():
        roots += [m for m in (args, result) if not isinstance(m, str) and m not in roots]
    shapes: list[tuple[str, TypeAdapter[Any]]] = [(m.__name__, TypeAdapter(m)) for m in roots]
    shapes.append(("FoldState", TypeAdapter(FoldState)))  # a TypedDict: the fold's state is plain JSON
    _, doc = TypeAdapter.json_schemas([(name, "validation", a) for name, a in shapes], ref_template="#/$defs/{model}")
    defs = _strip_titles(doc["$defs"])
    return {
        "$schema": DRAFT,
        "$id": SCHEMA_ID,
        "title": "dsh_notebook wire",
        "description": (
            "Session log lines (LogLine), client messages (ClientMessage) and host messages "
            "(ServerMessage) of dsh_notebook. Payloads are closed: unknown fields do not validate."
        ),
        "anyOf": [{"$ref": f"#/$defs/{name}"} for name in TOP_LEVEL],
        "x-endpoints": _endpoints(),
        "x-stages": stage_rows(),
        "$defs": dict(sorted(defs.items())),
    }


def schema_json() -> str:
    """The document as text, exactly as ``python -m dsh_notebook schema`` prints it."""
    return json.dumps(wire_schema(), indent=2, ensure_ascii=False) + "\n"

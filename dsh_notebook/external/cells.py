"""Cells and outputs as an external agent reads them (issue 41): text, images, provenance.

A cell is addressed by its nbformat id (nbformat 4.5). Its outputs become MCP content parts:
text (a stream, a ``text/plain`` result, a traceback without its colour codes) cut to its head and
tail with a marker when long, and images (``image/png``, ``image/jpeg``) as image content. Cells an
external agent wrote carry ``metadata.dsh.provenance`` (client, call id, session, tool, time): the
reader shows it.
"""

from __future__ import annotations

import base64
import re
import time
from dataclasses import dataclass
from typing import Any

MAX_OUTPUT = 20_000
"""Characters of one output kept (its head and tail) before the middle is elided."""
MAX_TOTAL = 200_000
"""Characters of one result in all; further cells are left out with a marker."""
MAX_IMAGE = 4 * 1024 * 1024
IMAGES = ("image/png", "image/jpeg", "image/gif", "image/webp")
_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


@dataclass(frozen=True)
class Part:
    """One piece of a result: text, or an image (base64 ``data``)."""

    kind: str  # "text" | "image"
    text: str = ""
    mime: str = ""
    data: str = ""

    @property
    def size(self) -> int:
        return len(self.text) if self.kind == "text" else len(self.data)


def clip(text: str, limit: int = MAX_OUTPUT) -> str:
    """``text``, or its head and tail around a marker saying how much was left out."""
    if len(text) <= limit:
        return text
    half = limit // 2
    return f"{text[:half]}\n… [{len(text) - 2 * half} characters elided: the output's head and tail are shown] …\n{text[-half:]}"


def _text(value: Any) -> str:
    return "".join(value) if isinstance(value, list) else str(value or "")


def output_parts(output: dict[str, Any]) -> list[Part]:
    """An nbformat output (or an IOPub message's content with its ``output_type``) as parts."""
    kind = output.get("output_type")
    if kind == "stream":
        return [Part("text", clip(_text(output.get("text"))))]
    if kind == "error":
        trace = _ANSI.sub("", "\n".join(output.get("traceback") or []))
        return [Part("text", clip(trace or f"{output.get('ename')}: {output.get('evalue')}"))]
    if kind in ("execute_result", "display_data", "update_display_data"):
        data = output.get("data") or {}
        parts = []
        for mime in IMAGES:
            raw = data.get(mime)
            if isinstance(raw, str | list):
                b64 = _text(raw).replace("\n", "")
                if len(b64) <= MAX_IMAGE:
                    parts.append(Part("image", mime=mime, data=b64))
                else:
                    parts.append(Part("text", f"[{mime}: {len(b64) * 3 // 4} bytes, too large to send]"))
                break
        if "text/plain" in data:
            parts.append(Part("text", clip(_text(data["text/plain"]))))
        elif not parts and "text/markdown" in data:
            parts.append(Part("text", clip(_text(data["text/markdown"]))))
        elif not parts and data:
            parts.append(Part("text", f"[{', '.join(sorted(data))}]"))
        return parts
    return []


def iopub_output(msg: dict[str, Any]) -> dict[str, Any] | None:
    """An IOPub message of an execution as an nbformat output (``None``: not an output)."""
    kind, content = msg["msg_type"], dict(msg["content"])
    if kind in ("stream", "error", "execute_result", "display_data", "update_display_data"):
        content["output_type"] = kind
        return content
    return None


def merge_streams(outputs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive stream outputs of one name joined (as a notebook shows them)."""
    out: list[dict[str, Any]] = []
    for o in outputs:
        if (o.get("output_type") == "stream" and out and out[-1].get("output_type") == "stream"
                and out[-1].get("name") == o.get("name")):
            out[-1] = {**out[-1], "text": _text(out[-1].get("text")) + _text(o.get("text"))}
        else:
            out.append(o)
    return out


def provenance_line(cell: dict[str, Any]) -> str:
    prov = ((cell.get("metadata") or {}).get("dsh") or {}).get("provenance")
    if not isinstance(prov, dict):
        return ""
    client = prov.get("client") or {}
    who = " ".join(str(x) for x in (client.get("name"), client.get("version")) if x)
    return f" · {prov.get('tool', 'written')} by external agent {who} (call {prov.get('callId')}, session {prov.get('sessionId')})"


def cell_parts(cell: dict[str, Any]) -> list[Part]:
    """One cell: a header line (id, type, execution count, provenance), its source, its outputs."""
    count = cell.get("execution_count")
    head = f"── cell {cell.get('id', '(no id: save the notebook in JupyterLab 4 to give its cells ids)')} " \
           f"[{cell.get('cell_type')}]" + (f" [{count}]" if count is not None else "") + provenance_line(cell)
    parts = [Part("text", f"{head}\n{clip(_text(cell.get('source')))}")]
    for output in cell.get("outputs") or []:
        parts.extend(output_parts(output))
    return parts


def fit(parts: list[Part], limit: int = MAX_TOTAL) -> list[Part]:
    """At most ``limit`` characters of text and image data in all; a marker says what was left out."""
    out: list[Part] = []
    used = 0
    for i, part in enumerate(parts):
        if used + part.size > limit and out:
            out.append(Part("text", f"… [{len(parts) - i} more parts left out: ask for fewer cells (cell_ids)] …"))
            break
        out.append(part)
        used += part.size
    return out


def provenance(client: dict[str, Any], call_id: str, session_id: str, tool: str) -> dict[str, Any]:
    """``metadata.dsh.provenance`` of a cell an external agent wrote."""
    return {"client": client, "callId": call_id, "sessionId": session_id, "tool": tool,
            "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}


def image_bytes(part: Part) -> int:
    try:
        return len(base64.b64decode(part.data, validate=False))
    except ValueError:
        return len(part.data) * 3 // 4

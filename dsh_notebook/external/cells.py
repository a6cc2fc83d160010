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

from ..wire.events import ExternalClient
from ..wire.external import CellProvenance, ExternalTool
from . import kernel_messages as km
from .ipynb import Cell, MimeBundle, Output, text_of

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


def _bundle_parts(data: MimeBundle) -> list[Part]:
    """A MIME bundle: its image (as image content), and its plain text (else markdown, else its types)."""
    parts = []
    for mime in IMAGES:
        raw = data.get(mime)
        if isinstance(raw, str | list):
            b64 = _json_text(raw).replace("\n", "")
            if len(b64) <= MAX_IMAGE:
                parts.append(Part("image", mime=mime, data=b64))
            else:
                parts.append(Part("text", f"[{mime}: {len(b64) * 3 // 4} bytes, too large to send]"))
            break
    if "text/plain" in data:
        parts.append(Part("text", clip(_json_text(data["text/plain"]))))
    elif not parts and "text/markdown" in data:
        parts.append(Part("text", clip(_json_text(data["text/markdown"]))))
    elif not parts and data:
        parts.append(Part("text", f"[{', '.join(sorted(data))}]"))
    return parts


def _json_text(value: object) -> str:
    """A bundle's text (a string, or its lines)."""
    if isinstance(value, list):
        return "".join(str(x) for x in value)
    return str(value or "")


def output_parts(output: Output) -> list[Part]:
    """An nbformat output as parts."""
    if output["output_type"] == "stream":
        return [Part("text", clip(text_of(output["text"])))]
    if output["output_type"] == "error":
        trace = _ANSI.sub("", "\n".join(output["traceback"]))
        return [Part("text", clip(trace or f"{output['ename']}: {output['evalue']}"))]
    return _bundle_parts(output["data"])


def iopub_output(msg: km.Output) -> Output | None:
    """An IOPub output of an execution as the nbformat output a notebook would keep (``None``
    for an ``update_display_data``: the update of a display shown already)."""
    if msg["msg_type"] == "stream":
        return {"output_type": "stream", "name": msg["content"]["name"], "text": msg["content"]["text"]}
    if msg["msg_type"] == "error":
        error = msg["content"]
        return {"output_type": "error", "ename": error["ename"], "evalue": error["evalue"], "traceback": error["traceback"]}
    if msg["msg_type"] == "execute_result":
        result = msg["content"]
        return {"output_type": "execute_result", "execution_count": result["execution_count"], "data": result["data"],
                "metadata": result["metadata"]}
    if msg["msg_type"] == "display_data":
        return {"output_type": "display_data", "data": msg["content"]["data"], "metadata": msg["content"]["metadata"]}
    return None


def merge_streams(outputs: list[Output]) -> list[Output]:
    """Consecutive stream outputs of one name joined (as a notebook shows them)."""
    out: list[Output] = []
    for o in outputs:
        last = out[-1] if out else None
        if o["output_type"] == "stream" and last is not None and last["output_type"] == "stream" \
                and last["name"] == o["name"]:
            out[-1] = {**last, "text": text_of(last["text"]) + text_of(o["text"])}
        else:
            out.append(o)
    return out


def provenance_line(cell: Cell) -> str:
    """What ``metadata.dsh.provenance`` says of who wrote the cell (``""``: nobody external)."""
    dsh = cell["metadata"].get("dsh")
    prov = dsh.get("provenance") if isinstance(dsh, dict) else None
    if not isinstance(prov, dict):
        return ""
    client = prov.get("client")
    names = (client.get("name"), client.get("version")) if isinstance(client, dict) else ()
    who = " ".join(str(x) for x in names if x)
    return f" · {prov.get('tool', 'written')} by external agent {who} (call {prov.get('callId')}, session {prov.get('sessionId')})"


def cell_parts(cell: Cell) -> list[Part]:
    """One cell: a header line (id, type, execution count, provenance), its source, its outputs."""
    count = cell["execution_count"] if cell["cell_type"] == "code" else None
    head = f"── cell {cell.get('id', '(no id: save the notebook in JupyterLab 4 to give its cells ids)')} " \
           f"[{cell['cell_type']}]" + (f" [{count}]" if count is not None else "") + provenance_line(cell)
    parts = [Part("text", f"{head}\n{clip(text_of(cell['source']))}")]
    if cell["cell_type"] == "code":
        for output in cell["outputs"]:
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


def provenance(client: ExternalClient, call_id: str, session_id: str, tool: ExternalTool) -> CellProvenance:
    """``metadata.dsh.provenance`` of a cell an external agent wrote."""
    return CellProvenance(client=client, call_id=call_id, session_id=session_id, tool=tool,
                          time=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))


def image_bytes(part: Part) -> int:
    try:
        return len(base64.b64decode(part.data, validate=False))
    except ValueError:
        return len(part.data) * 3 // 4

"""The ``dsh.external`` comm between the MCP server and a notebook's kernel (issue 41).

The server (in the Jupyter Server process) opens one comm per kernel to the ``dsh.external``
target that ``%load_ext dsh_notebook`` registers, and speaks over it:

- to the kernel (:data:`ToKernel`): the host's own wire envelopes (:class:`~.comm.CommEnvelope`,
  :class:`~.comm.CommBye`, as a widget view sends them), :class:`NotebookAsk` (the notebook's
  session) and :class:`InspectAsk` (``inspect_var``: the agent's safe description of a variable);
- from the kernel (:data:`FromKernel`): :class:`KernelHello` when the comm opens (its process id
  tells a restarted kernel), :class:`KernelReply` to an ask, and :class:`~.comm.CommBatch` — the
  host's replies to the envelopes, batched as the widgets get them.

Both ends are Python; the messages are validated where they arrive (a comm message that is none of
these is ignored, as a stray custom message always was).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, JsonValue, TypeAdapter, ValidationError

from .base import Frozen
from .comm import CommBatch, CommBye, CommEnvelope
from .envelopes import WireError, WireId
from .events import PermissionMode


class NotebookAsk(Frozen):
    """The notebook's session: the magics' current one, or a new one made as ``%dsh`` makes it."""

    kind: Literal["notebook"] = "notebook"
    id: WireId


class InspectAsk(Frozen):
    """``inspect_var``: describe the kernel's variable ``name`` (no user code runs)."""

    kind: Literal["inspect"] = "inspect"
    id: WireId
    name: str = Field(max_length=1_000)


class KernelHello(Frozen):
    """The comm is open: the kernel's process id (another one later: the kernel was restarted)."""

    kind: Literal["hello"] = "hello"
    pid: int
    version: str


class KernelReply(Frozen):
    """The answer to the ask ``id``: its ``value`` (the ask's own shape), or its coded ``error``."""

    kind: Literal["reply"] = "reply"
    id: WireId
    ok: bool
    value: dict[str, JsonValue] | None = None
    error: WireError | None = None


class NotebookSession(Frozen):
    """The value of a :class:`NotebookAsk`: the session the notebook's external calls go to."""

    session_id: str
    created: bool
    cwd: str
    mode: PermissionMode | None = None
    log_path: str | None = None


ToKernel = Annotated[CommEnvelope | CommBye | NotebookAsk | InspectAsk, Field(discriminator="kind")]
"""What the server sends the kernel over the ``dsh.external`` comm."""
FromKernel = Annotated[KernelHello | KernelReply | CommBatch, Field(discriminator="kind")]
"""What the kernel sends the server over the ``dsh.external`` comm."""

ToKernelAdapter: TypeAdapter[ToKernel] = TypeAdapter(ToKernel)
FromKernelAdapter: TypeAdapter[FromKernel] = TypeAdapter(FromKernel)


def read_to_kernel(data: object) -> CommEnvelope | CommBye | NotebookAsk | InspectAsk | None:
    """A server's message, typed; ``None`` for anything else."""
    try:
        return ToKernelAdapter.validate_python(data)
    except ValidationError:
        return None


def read_from_kernel(data: object) -> KernelHello | KernelReply | CommBatch | None:
    """A kernel's message, typed; ``None`` for anything else."""
    try:
        return FromKernelAdapter.validate_python(data)
    except ValidationError:
        return None


__all__ = [
    "FromKernel", "InspectAsk", "KernelHello", "KernelReply", "NotebookAsk", "NotebookSession", "ToKernel",
    "read_from_kernel", "read_to_kernel",
]  # fmt: skip

"""The kernel's side of the external agents' path (issue 41): the ``dsh.external`` comm target.

The MCP server runs in the Jupyter Server process; the notebook's session lives here, in the
kernel, where its host is the one writer. ``%load_ext dsh_notebook`` registers the comm target
``dsh.external``; the server opens one comm per kernel (through its own kernel client, on the
kernel's authenticated ZMQ channels) and speaks over it:

- ``{"kind": "envelope", "cid", "envelope"}`` — the host's own wire envelopes (``external/begin``,
  ``external/end``, ``session/info``, ``session/prompt``, ``session/follow`` …), routed as the
  widgets' are (:class:`~dsh_notebook.notebook.widgets.comm_transport.WidgetBridge`), with replies batched
  back as ``{"kind": "batch", "cid", "items"}``;
- ``{"kind": "notebook", "id"}`` — the notebook's session: the magics' current one, or a new one
  made as ``%dsh`` would make it (the notebook's mode and model settings), which becomes current;
- ``{"kind": "inspect", "id", "name"}`` — ``inspect_var``: the in-kernel agent's safe description
  of a variable (no user code runs, :mod:`dsh_notebook.notebook.context.inspection`), masked.

Answers to the last two are ``{"kind": "reply", "id", "ok", "value" | "error"}``. On open the
kernel says ``{"kind": "hello", "pid", "version"}`` (the server tells a restarted kernel by its
pid). The messages are the models of :mod:`dsh_notebook.wire.external_kernel`; a message that is
none of them is ignored (one with an ``id`` is answered ``BAD_ENVELOPE``). When the comm closes, the external turns it left open end ``aborted``. Handlers run on
whichever thread the kernel dispatches comm messages on (the main thread, or a subshell's):
nothing here blocks on the host loop's thread.
"""

from __future__ import annotations

import json
import logging
import os
from typing import Any

from pydantic import JsonValue

from ..errors import DshError
from ..notebook.widgets.comm_transport import WidgetBridge
from ..redaction import redact
from ..wire.base import dump
from ..wire.comm import CommBye, CommEnvelope
from ..wire.envelopes import WireError
from ..wire.external_kernel import (
    InspectAsk,
    KernelHello,
    KernelReply,
    NotebookAsk,
    NotebookSession,
    read_to_kernel,
)
from . import version
from .kernel_messages import CommMessage

log = logging.getLogger(__name__)
TARGET = "dsh.external"


def register(shell: Any) -> bool:
    """Register the comm target on ``shell``'s kernel (a no-op outside a kernel); whether it is."""
    kernel = getattr(shell, "kernel", None)
    manager = getattr(kernel, "comm_manager", None)
    if manager is None:
        return False
    manager.register_target(TARGET, lambda comm, msg: ExternalChannel(shell, comm))
    return True


def unregister(shell: Any) -> None:
    manager = getattr(getattr(shell, "kernel", None), "comm_manager", None)
    if manager is not None:
        manager.targets.pop(TARGET, None)


class ExternalChannel:
    """One server's comm: envelopes to the host, the notebook's session, variables."""

    def __init__(self, shell: Any, comm: Any) -> None:
        self.shell, self.comm = shell, comm
        self.caller = f"external:{comm.comm_id}"
        self.bridge = WidgetBridge(self._send, self._connect, interval=0.02)
        comm.on_msg(self.on_msg)
        comm.on_close(self.on_close)
        comm.send(dump(KernelHello(pid=os.getpid(), version=version())))

    # -- plumbing ---------------------------------------------------------------------------------
    def _send(self, data: dict[str, JsonValue]) -> None:
        self.comm.send(data)

    def _magics(self) -> Any:
        from ..notebook.magic.magics import DshMagics

        magics = self.shell.magics_manager.registry.get("DshMagics")
        if not isinstance(magics, DshMagics):
            raise DshError("dsh_notebook is not loaded in this kernel (%load_ext dsh_notebook)", code="KERNEL_UNSUPPORTED")
        return magics

    def _connect(self, send: Any) -> Any:
        return self._magics().link.host.connect(send, caller=self.caller)

    def on_msg(self, msg: CommMessage) -> None:
        data = msg["content"]["data"]
        message = read_to_kernel(data)
        if isinstance(message, CommEnvelope | CommBye):
            self.bridge.handle(data)
            return
        ident = message.id if message is not None else data.get("id") if isinstance(data, dict) else None
        if not isinstance(ident, str) or not ident:
            return  # nothing to answer
        try:
            if isinstance(message, NotebookAsk):
                value = dump(self.notebook_session())
            elif isinstance(message, InspectAsk):
                value = self.inspect(message.name)
            else:
                raise DshError(f"not a message of the dsh.external comm (kind {str(data.get('kind'))[:40]!r})",
                               code="BAD_ENVELOPE")
            reply = KernelReply(id=ident, ok=True, value=value)
        except DshError as exc:
            reply = KernelReply(id=ident, ok=False, error=WireError(code=exc.code, message=exc.message))
        except Exception as exc:  # a defect must still answer (every call gets a result)
            log.debug("external channel message failed", exc_info=True)
            reply = KernelReply(id=ident, ok=False,
                                error=WireError(code="INTERNAL", message=redact(f"{type(exc).__name__}: {exc}")))
        self.comm.send(dump(reply))

    def on_close(self, msg: Any = None) -> None:
        self.bridge.close()
        try:
            host = self._magics().link.host
            host.call(lambda: host.externals.abandon(self.caller))
        except Exception:  # the host is gone already: nothing is left open
            log.debug("abandoning external calls failed", exc_info=True)

    # -- what only the kernel knows -----------------------------------------------------------
    def notebook_session(self) -> NotebookSession:
        """The notebook's session id (made as ``%dsh`` makes one when there is none yet)."""
        from ..cmdline.dsh_line import parse_line

        magics = self._magics()
        created = False
        if magics.current_session is None:
            args = parse_line("external agent", None)
            args.cwd = os.getcwd()  # the kernel's folder (the notebook's), never a demo copy: the
            args.given.add("cwd")  # checkpoints must cover the notebook and what its code writes
            magics.create_session(args)
            created = True
        session_id = magics.current_session
        info = magics.link.info(session_id)
        if created:
            magics.remember(session_id)
        return NotebookSession(session_id=session_id, created=created, cwd=info.cwd, mode=info.mode,
                               log_path=info.log_path)

    def inspect(self, name: str) -> dict[str, JsonValue]:
        """The in-kernel agent's ``inspect_var`` description of ``name`` (masked)."""
        from ..notebook.context.inspection import describe
        from ..notebook.context.notebook_tools import lookup

        if not name.strip():
            raise DshError("inspect_var needs a variable name", code="BAD_ARGS")
        try:
            value = lookup(self.shell.user_ns, name)
        except KeyError as exc:
            raise DshError(f"no notebook variable {exc.args[0]!r}", code="UNKNOWN_VARIABLE") from None
        except AttributeError as exc:
            raise DshError(f"{name}: {exc}", code="UNKNOWN_VARIABLE") from None
        text = redact(json.dumps({"name": name, **describe(value)}, ensure_ascii=False, default=str))
        try:
            described: dict[str, JsonValue] = json.loads(text)
            return described
        except ValueError:  # a mask cut through JSON syntax: the text as it is
            return {"name": name, "text": text}

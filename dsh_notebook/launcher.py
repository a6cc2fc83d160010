"""Where a Host is built for real (issue 40 item 4): the one place that chooses its parts.

The host imports neither its observers nor the checkpoint store (:mod:`.host.parts`); this module,
a floor above it, hands them over: the search indexer and the OpenTelemetry export
(:func:`dsh_notebook.observe.attach`) on every live session, and the checkpoints of every turn
with their rewind, keep and diff (:mod:`dsh_notebook.checkpoint`), told what the sandbox hides.
Every real host comes from here: the kernel's (:func:`process_host`: the magics, the widgets,
``DshClient()``), ``serve --stdio`` (:func:`serve_main`) and the CLI's ``run`` / ``compact``
(:func:`new_host`).
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from .checkpoint.exclude import use_hidden
from .checkpoint.turns import attach_checkpoints
from .config import Settings, settings_from_env
from .host.host import Host
from .host.live import LiveSession
from .host.parts import Checkpoints, HostParts, LiveSessions
from .host.registry import AdapterFactory
from .observe import attach as attach_observers
from .tools import sandbox_mounts
from .wire.endpoints import DiffArgs, KeepArgs, KeptFiles, RewindArgs, Rewound, TurnDiff


def sandbox_hidden(cwd: str) -> list[str]:
    """The absolute paths the sandbox keeps hidden when ``cwd`` is the workspace (issue 35 finding
    6): a checkpoint never snapshots, copies or restores them. The checkpoint store sits below the
    tools and cannot ask the sandbox itself; :mod:`.tools.sandbox_mounts` keeps the one list."""
    try:
        plan = sandbox_mounts.mount_plan(Path(cwd))
        return [*plan.hidden_dirs, *plan.hidden_files]
    except Exception:  # a workspace the sandbox refuses (WORKSPACE_UNSAFE): what it would hide anyway
        home = os.path.expanduser("~")
        names = [*getattr(sandbox_mounts, "CREDENTIAL_DIRS", ()), *getattr(sandbox_mounts, "CREDENTIAL_FILES", ())]
        return [sandbox_mounts.dsh_home(), *(os.path.join(home, n) for n in names)]


def hide_from_checkpoints() -> None:
    """Checkpoints of this process leave out what the sandbox hides (the host's, and the
    ``checkpoints`` / ``rewind`` commands')."""
    use_hidden(sandbox_hidden)


# the endpoints' code is loaded on the first rewind, keep or diff, not with the host
async def _rewind(registry: LiveSessions, live: LiveSession, args: RewindArgs, *, by: str | None = None) -> Rewound:
    from .checkpoint.host_rewind import rewind_live

    return await rewind_live(registry, live, args, by=by)


async def _keep(registry: LiveSessions, live: LiveSession, args: KeepArgs, *, by: str | None = None) -> KeptFiles:
    from .checkpoint.host_rewind import keep_live

    return await keep_live(registry, live, args, by=by)


async def _diff(registry: LiveSessions, live: LiveSession, args: DiffArgs) -> TurnDiff:
    from .checkpoint.host_rewind import diff_live

    return await diff_live(registry, live, args)


def real_parts() -> HostParts:
    """The search indexer and the OpenTelemetry export on every live session; the checkpoints
    (off per session with ``DSH_CHECKPOINTS=0``), leaving out what the sandbox hides."""
    hide_from_checkpoints()
    return HostParts(observers=(attach_observers,),
                     checkpoints=Checkpoints(attach=attach_checkpoints, rewind=_rewind, keep=_keep, diff=_diff))


def new_host(settings: Settings | None = None, *, adapter_factory: AdapterFactory | None = None,
             name: str = "dsh-host") -> Host:
    """A Host of its own (the CLI's, a test's) with the real observers and checkpoints."""
    return Host(settings, adapter_factory=adapter_factory, parts=real_parts(), name=name)


def process_host(settings: Settings | None = None) -> Host:
    """The process's host (the kernel's), started on first use with the real parts."""
    running = Host.current()
    if running is None:
        return Host.get(settings, parts=real_parts())
    running.given(real_parts())  # started bare (``Host.get()`` first): its next sessions get the real parts
    return running


def serve_main(args: argparse.Namespace) -> int:
    """``serve --stdio``: the host protocol on stdin/stdout, on a real host."""
    from .host.stdio import serve

    return serve(lambda: new_host(settings_from_env(), name="dsh-host-stdio"))

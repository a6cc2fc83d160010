"""The ``bash {command, timeout_ms?}`` tool: a real shell command in the workspace.

How it is contained:

- ``/bin/bash -c COMMAND`` runs with ``cwd`` = the workspace, stdin closed, and the
  allow-listed :func:`~..confine.allowed_env` environment (no API keys, tokens or secrets);
- where bubblewrap works it runs **inside a sandbox** (:mod:`..confine`): its own PID namespace,
  the file system read-only but for the workspace, every home hidden but for a read-only
  allow-list, no setuid/setgid file can be made (seccomp), ``--die-with-parent``; elsewhere it
  runs unconfined and the product says so once;
- it gets its **own process group** (``start_new_session``), so a timeout or a cancellation kills
  the whole group — the shell and every child it started — with ``SIGKILL``; when the call ends
  for any reason, every process still carrying the call's marker variable is killed too
  (``setsid``, ``nohup``, double forks), and so are those of live calls when the process exits;
- stdout and stderr are merged and kept in a :class:`HeadTail` buffer: the first and last
  ``OUTPUT_HEAD``/``OUTPUT_TAIL`` bytes survive, the middle is elided with a marker;
- the exit code is always reported. A non-zero exit is *not* a tool error: the tool ran and the
  command's verdict is in the text ("tool ran" and "tests passed" are different judgements).
  A timeout is an error (``TIMED_OUT``) that still shows the output produced so far.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import secrets
import signal
import subprocess
import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field

from ...errors import ToolError
from ..base import Tool, ToolContext, ToolOutput, argument
from ..confine import WATCHDOG, Confined, confined_command, kill_marked
from ..sandbox import HeadTail, Workspace

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
OUTPUT_HEAD = 15_000
OUTPUT_TAIL = 15_000
EOF_GRACE_S = 1.0  # after the shell exits, how long background children may hold the pipe
PROGRESS_EVERY_S = 0.1


class BashArgs(BaseModel):
    model_config = ConfigDict(extra="forbid")
    command: str = Field(min_length=1, description="The shell command line to run.")
    timeout_ms: int | None = Field(
        None,
        ge=1,
        le=MAX_TIMEOUT_MS,
        description=f"Timeout in milliseconds (default {DEFAULT_TIMEOUT_MS}).",
    )


_live_markers: set[str] = set()
STOP_GRACE_S = 2.0  # how long the reaper may take to end the command's processes


def kill_group(pid: int) -> None:
    """SIGKILL the process group led by ``pid`` (the shell and all its children)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pid, signal.SIGKILL)


def _kill_live_calls() -> None:
    """At interpreter exit: nothing a still-running call started survives the host."""
    for marker in list(_live_markers):
        kill_marked(marker)


atexit.register(_kill_live_calls)


async def _pump(stream: asyncio.StreamReader, sink: HeadTail, ctx: ToolContext) -> None:
    last = 0.0
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            return
        sink.write(chunk)
        now = time.monotonic()
        if now - last >= PROGRESS_EVERY_S:
            last = now
            tail = chunk.decode("utf-8", errors="replace").rstrip().rsplit("\n", 1)[-1]
            ctx.progress(f"{sink.total} bytes of output; last line: {tail[-200:]}")


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """The stream protocol plus a future set when the shell exits.

    ``Process.wait()`` resolves only once the pipes close as well, which a background child can
    postpone forever; ``exited`` resolves at the exit itself.
    """

    def __init__(self, limit: int, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=limit, loop=loop)
        self.exited: asyncio.Future[None] = loop.create_future()

    def process_exited(self) -> None:
        super().process_exited()
        if not self.exited.done():
            self.exited.set_result(None)


async def _spawn(confined: Confined, cwd: Path) -> tuple[asyncio.subprocess.Process, _Protocol]:
    loop = asyncio.get_running_loop()
    try:
        transport, protocol = await loop.subprocess_exec(
            lambda: _Protocol(2**16, loop),
            *confined.argv,
            cwd=cwd,
            env=confined.env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,  # its own process group, so a kill reaches every child
            pass_fds=confined.pass_fds,  # bwrap's seccomp program
        )
    finally:
        confined.close()  # the child has its copy (or never started)
    return asyncio.subprocess.Process(transport, protocol, loop), protocol


async def run_bash(args: BashArgs, ctx: ToolContext) -> ToolOutput:
    ws = Workspace(ctx.cwd)
    timeout_ms = args.timeout_ms or DEFAULT_TIMEOUT_MS
    marker = secrets.token_hex(8)
    _live_markers.add(marker)
    sandboxed = True
    confined: Confined | None = None
    try:
        # probing bwrap (once) and starting the watchdog (once) block briefly: not on the loop
        confined = await asyncio.to_thread(
            confined_command, ["/bin/bash", "-c", args.command], ws.root, ctx.env, marker)
        sandboxed = confined.sandboxed
        return await _run(ctx, ws.root, confined, timeout_ms, marker, reaped=not sandboxed)
    finally:
        if confined is not None:
            confined.close()
        kill_marked(marker)  # detached children (setsid, nohup, double fork) end with the call
        _live_markers.discard(marker)
        if not sandboxed:
            WATCHDOG.unregister(marker)


async def _stop(proc: asyncio.subprocess.Process, exited: asyncio.Future[None], reaped: bool) -> None:
    """End the command and everything it started: the reaper gets SIGTERM (it kills its whole
    tree, orphans included, then exits); the process group's SIGKILL is the backstop."""
    if reaped and not exited.done():
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(proc.pid, signal.SIGTERM)
        await asyncio.wait({exited}, timeout=STOP_GRACE_S)
    kill_group(proc.pid)
    await asyncio.shield(exited)


async def _run(ctx: ToolContext, root: Path, confined: Confined,
               timeout_ms: int, marker: str, *, reaped: bool = False) -> ToolOutput:
    spawn = asyncio.ensure_future(_spawn(confined, root))
    try:
        proc, protocol = await asyncio.shield(spawn)
    except OSError as exc:
        raise ToolError(f"could not start /bin/bash: {exc}", code="SPAWN_FAILED") from exc
    except asyncio.CancelledError:  # cancelled while starting: the group may already exist
        with contextlib.suppress(Exception):
            proc, protocol = await spawn
            kill_group(proc.pid)
            await protocol.exited
        raise
    assert proc.stdout is not None
    sink = HeadTail(OUTPUT_HEAD, OUTPUT_TAIL)
    pump = asyncio.create_task(_pump(proc.stdout, sink, ctx))
    exited = protocol.exited
    timed_out = False
    stragglers = False
    try:
        done, _ = await asyncio.wait({exited}, timeout=timeout_ms / 1000)
        if not done:
            timed_out = True
            await asyncio.shield(_stop(proc, exited, reaped))
        done, _ = await asyncio.wait({pump}, timeout=EOF_GRACE_S)
        if not done:  # background children still hold the output pipe: stop them
            stragglers = True
            kill_group(proc.pid)
            kill_marked(marker)
            await asyncio.wait({pump}, timeout=EOF_GRACE_S)
    except asyncio.CancelledError:
        with contextlib.suppress(Exception):
            await asyncio.shield(_stop(proc, exited, reaped))
        raise
    finally:
        if not pump.done():
            pump.cancel()
            with contextlib.suppress(BaseException):
                await pump
    output = sink.text().rstrip("\n")
    if timed_out:
        shown = output or "(no output)"
        raise ToolError(
            f"command timed out after {timeout_ms} ms; its process group was killed.\n"
            f"Output so far:\n{shown}",
            code="TIMED_OUT",
        )
    parts = [output if output else "(no output)"]
    if stragglers:
        parts.append("[background processes still holding the output were stopped]")
    parts.append(f"[exit code: {proc.returncode}]")
    return ToolOutput("\n".join(parts), meta={"exitCode": proc.returncode, "bytes": sink.total})


bash_tool = Tool(
    name="bash",
    description=(
        "Run a shell command with /bin/bash in the workspace and return its combined "
        "stdout/stderr and exit code. Long output keeps its beginning and end. "
        f"Default timeout {DEFAULT_TIMEOUT_MS // 1000} s (timeout_ms to change, max "
        f"{MAX_TIMEOUT_MS // 1000} s); on timeout the whole process group is killed."
    ),
    args_model=BashArgs,
    execute=run_bash,
    approval="ask",
    effect="bash",
    subject=argument("command"),
    timeout_s=None,  # the tool enforces its own timeout_ms and kills the process group
)

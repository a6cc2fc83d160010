"""Issue 35 (low) / design 8: a process the ``python`` tool starts with ``setsid env -i …`` (no
marker left in its environment) and a double-forked daemon outlived the call and the kernel.
The kernel is now a child subreaper while the call runs: every detached process stays in its
tree and ends with the call; the zombies it adopted are reaped. Real processes, in-process and
in a real agent kernel."""

from __future__ import annotations

import json
import os
import secrets
import signal
from pathlib import Path

import pytest

from dsh_notebook.tools.reaper import is_subreaper
from tests.hardening.test_python_tool_processes import alive, run_tool
from tests.kernel.conftest import agent_env, dsh_prefix, fake_env, fake_server, start_agent_kernel  # noqa: F401
from tests.kernel.test_agent_kernel import run
from tests.support.fake_openai import FakeOpenAIServer, text_reply, tool_call_reply


def escape_code(tag: str) -> str:
    """Six ways out: ``setsid env -i`` direct and behind a shell's ``&``, ``setsid -f``, a Python
    double fork that execs with an empty environment, a daemon with ``nohup`` under ``env -i``,
    and a double fork whose middle process is never waited for."""
    return f"""
import os, subprocess
subprocess.Popen(['setsid', 'env', '-i', 'sleep', '{tag}1'])
subprocess.run('setsid env -i sleep {tag}2 >/dev/null 2>&1 < /dev/null &', shell=True)
subprocess.Popen(['setsid', '-f', 'env', '-i', 'sleep', '{tag}3'])
if os.fork() == 0:
    if os.fork() == 0:
        os.setsid()
        os.execve('/bin/sleep', ['sleep', '{tag}4'], {{}})
    os._exit(0)
subprocess.run("env -i /bin/sh -c 'nohup sleep {tag}5 >/dev/null 2>&1 &'", shell=True)
middle = os.fork()
if middle == 0:
    if os.fork() == 0:
        os.execve('/bin/sleep', ['sleep', '{tag}6'], {{}})
    os._exit(0)
print('escaped')
"""


def sleepers(tag: str) -> list[int]:
    """PIDs of live ``sleep TAG*`` processes (found by their command line: they carry nothing else)."""
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as fh:
                    argv = fh.read().split(b"\0")
            except OSError:
                continue
            if len(argv) > 1 and argv[0].endswith(b"sleep") and argv[1].startswith(tag.encode()) and alive(int(entry)):
                out.append(int(entry))
    return out


def end(pids: list[int]) -> None:
    for pid in pids:  # only the processes this test started, by pid
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def zombie_children() -> list[int]:
    me = os.getpid()
    out = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat", "rb") as fh:
                    fields = fh.read().rsplit(b")", 1)[1].split()
            except OSError:
                continue
            if fields[0] == b"Z" and int(fields[1]) == me:
                out.append(int(entry))
    return out


@pytest.mark.integration
async def test_detached_processes_without_a_marker_end_with_the_call(tmp_path: Path) -> None:
    tag = f"31{secrets.randbelow(10**6):06d}."
    zombies_before = set(zombie_children())
    try:
        out = await run_tool({}, escape_code(tag), tmp_path)
        assert "escaped" in out.text, out.text
        assert sleepers(tag) == [], out.text
        assert "[processes]" in out.text
        assert set(zombie_children()) <= zombies_before  # the adopted ones were reaped
        assert not is_subreaper()  # the process adopts nothing after the call
    finally:
        end(sleepers(tag))


@pytest.mark.kernel
def test_in_a_real_kernel_nothing_outlives_the_call_or_the_kernel(
        fake_env: dict[str, str], fake_server: FakeOpenAIServer, tmp_path: Path) -> None:  # noqa: F811
    tag = f"32{secrets.randbelow(10**6):06d}."
    km, kc = start_agent_kernel(fake_env, tmp_path)
    try:
        code = escape_code(tag)
        fake_server.enqueue(tool_call_reply([("c1", "python", json.dumps({"code": code}))]), text_reply("done"))
        assert run(kc, '%config DshMagics.approve = "auto"')[0]["content"]["status"] == "ok"
        reply, _ = run(kc, "start helpers that try to escape")
        assert reply["content"]["status"] == "ok"
        tools = {m["tool_call_id"]: m["content"] for r in fake_server.requests for m in r.messages
                 if m.get("role") == "tool"}
        assert "escaped" in tools["c1"] and "[processes] " in tools["c1"], tools["c1"]
        assert sleepers(tag) == []
        # a cell after the call: the kernel adopts nothing any more, and has no zombie left
        reply, shown = run(kc, "%%python\nimport ctypes, os\nf = ctypes.c_int(0)\n"
                               "ctypes.CDLL(None).prctl(37, ctypes.byref(f), 0, 0, 0)\n"
                               "def state(e):\n"
                               "    try:\n"
                               "        return open(f'/proc/{e}/stat').read().rsplit(')', 1)[1].split()[:2]\n"
                               "    except OSError:  # ended between the listing and the read\n"
                               "        return []\n"
                               "z = [e for e in os.listdir('/proc') if e.isdigit() and state(e) == ['Z', str(os.getpid())]]\n"
                               "print('subreaper', f.value, 'zombies', len(z))")
        assert reply["content"]["status"] == "ok", shown
        assert "subreaper 0 zombies 0" in shown, shown
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
        left = sleepers(tag)
        end(left)
    assert left == []

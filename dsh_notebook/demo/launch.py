"""``make demo``'s last step: JupyterLab on a walkthrough notebook, and the URL to open, last.

``python -m dsh_notebook.demo.launch NOTEBOOK [--port N] [--ip ADDR] [--no-browser]`` starts
``jupyter lab`` with its own token on a free port (``--allow-root`` when run as root: containers and
cloud VMs), its log in a file, waits until the server answers, then prints the URL with the token
as its last lines. A browser is opened only when this machine has one (a display, or macOS /
Windows) and ``--no-browser`` (``DSH_DEMO_BROWSER=0``) was not given; otherwise it says how to open
the URL (from another machine: an SSH tunnel). Ctrl-C or SIGTERM stops the server cleanly (its
kernels with it) and exits 0.
"""

from __future__ import annotations

import argparse
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
import webbrowser
from pathlib import Path
from types import FrameType


def free_port(ip: str) -> int:
    with socket.socket() as s:
        s.bind((ip, 0))
        return int(s.getsockname()[1])


def has_browser() -> bool:
    """Whether opening a page here reaches a person (not a text browser in a headless box)."""
    if os.environ.get("DSH_DEMO_BROWSER", "1") == "0":
        return False
    if sys.platform == "darwin" or os.name == "nt":
        return True
    if not (os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY")):
        return False
    try:
        webbrowser.get()
    except webbrowser.Error:
        return False
    return True


def lab_command(notebook: str, ip: str, port: int, token: str) -> list[str]:
    cmd = [sys.executable, "-m", "jupyterlab", "--no-browser", f"--ip={ip}", f"--port={port}",
           "--port-retries=0", f"--IdentityProvider.token={token}", "--ServerApp.root_dir=.", notebook]
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.insert(3, "--allow-root")  # JupyterLab refuses root without it
    return cmd


def wait_until_up(url: str, proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Poll the server's status endpoint until it answers (or the server exits, or time runs out)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            return False
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return True
        except (urllib.error.URLError, OSError):
            pass
        time.sleep(0.25)
    return False


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dsh_notebook.demo.launch", description=__doc__.split("\n\n")[0],
                                     allow_abbrev=False)
    parser.add_argument("notebook", help="the notebook to open, relative to this directory")
    parser.add_argument("--port", type=int, default=int(os.environ.get("DSH_DEMO_PORT", "0")),
                        help="the server's port (default DSH_DEMO_PORT, else a free one)")
    parser.add_argument("--ip", default=os.environ.get("DSH_DEMO_IP", "127.0.0.1"),
                        help="the address to listen on (default DSH_DEMO_IP, else 127.0.0.1)")
    parser.add_argument("--no-browser", action="store_true", help="never open a browser; print the URL")
    parser.add_argument("--log", default=os.environ.get("DSH_DEMO_LOG", ".venv/demo-lab.log"),
                        help="JupyterLab's own log (default .venv/demo-lab.log)")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds to wait for the server")
    args = parser.parse_args(argv)
    if not Path(args.notebook).is_file():
        print(f"error: [BAD_ARGS] no notebook {args.notebook!r} here ({Path.cwd()})", file=sys.stderr)
        return 2
    port = args.port or free_port(args.ip)
    token = secrets.token_hex(24)
    log = Path(args.log)
    log.parent.mkdir(parents=True, exist_ok=True)
    host = "127.0.0.1" if args.ip in ("0.0.0.0", "::", "") else args.ip
    base = f"http://{host}:{port}"
    url = f"{base}/lab/tree/{args.notebook}?token={token}"
    print(f"dsh demo: starting JupyterLab on {base} (its log: {log}) …", flush=True)
    with log.open("ab") as out:
        proc = subprocess.Popen(lab_command(args.notebook, args.ip, port, token), stdout=out,
                                stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True)
    stopping: list[int] = []

    def stop(signum: int, _frame: FrameType | None) -> None:
        stopping.append(signum)
        raise KeyboardInterrupt

    previous = {s: signal.signal(s, stop) for s in (signal.SIGTERM, signal.SIGHUP)}
    try:
        if not wait_until_up(f"{base}/api/status?token={token}", proc, args.timeout):
            print(f"error: JupyterLab did not start (exit {proc.poll()}); its log, {log}:", file=sys.stderr)
            print("".join(log.read_text(errors="replace").splitlines(keepends=True)[-20:]), file=sys.stderr)
            return 1
        opened = not args.no_browser and has_browser() and webbrowser.open(url)
        how = ("opened in your browser; if it did not appear, open" if opened else
               "no browser on this machine: open this URL in a browser here, or from another machine "
               f"after `ssh -L {port}:127.0.0.1:{port} THIS_HOST`; Ctrl-C stops the server.\nOpen")
        print(f"dsh demo: JupyterLab is running. {how}:\n\n    {url}\n", flush=True)
        proc.wait()
        return 0 if proc.returncode in (0, -signal.SIGTERM, -signal.SIGINT) else int(proc.returncode or 1)
    except KeyboardInterrupt:
        return 0
    finally:
        _stop(proc)
        for s, handler in previous.items():
            signal.signal(s, handler)
        if proc.returncode is not None and (stopping or proc.returncode <= 0):
            print("dsh demo: JupyterLab stopped.", flush=True)


def _stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the server's process group (JupyterLab shuts its kernels down), then SIGKILL."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
    except ProcessLookupError:
        proc.wait()


if __name__ == "__main__":
    sys.exit(main())

"""``make demo`` (its last step; ``setup`` and ``kernel`` taken as done): JupyterLab starts — as root
too, where it needs ``--allow-root`` — the URL with its token is printed last and answers 200, no
browser is opened on a machine without one, and Ctrl-C stops the server and its process cleanly."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import urllib.error
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

pytestmark = [pytest.mark.kernel, pytest.mark.slow,
              pytest.mark.skipif(shutil.which("make") is None, reason="no make")]


def get(url: str) -> int:
    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *args: object, **kwargs: object) -> None:
            return None

    try:
        with urllib.request.build_opener(NoRedirect).open(url, timeout=10) as response:
            return int(response.status)
    except urllib.error.HTTPError as exc:
        return int(exc.code)


def _live_ctrl_c() -> None:
    """At a terminal Ctrl-C is live; a test runner started in the background (``(make test &)``)
    passes SIGINT down ignored, and an ignored SIGINT stays ignored across exec."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def test_make_demo_prints_the_url_last_and_stops_on_ctrl_c(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("DISPLAY", "WAYLAND_DISPLAY", "BROWSER")}
    env.update({"PYTHONPATH": str(REPO), "DSH_DEMO_LOG": str(tmp_path / "lab.log"),
                "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "JUPYTER_CONFIG_DIR": str(tmp_path / "config")})
    proc = subprocess.Popen(["make", "--no-print-directory", "-o", "setup", "-o", "kernel", "demo"], cwd=REPO,
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            start_new_session=True, preexec_fn=_live_ctrl_c)
    assert proc.stdout is not None
    lines: list[str] = []
    try:
        for line in proc.stdout:
            lines.append(line)
            if "/lab/tree/" in line:
                break
        blank = proc.stdout.readline()
        url = lines[-1].strip()
        assert re.fullmatch(r"http://127\.0\.0\.1:\d+/lab/tree/notebooks/01-tool-feedback-loop\.ipynb\?token=[0-9a-f]{48}",
                            url), "".join(lines)
        assert blank == "\n"
        assert "no browser on this machine" in "".join(lines)  # says how to open it instead
        assert get(url) in (200, 302)
        base = url.split("/lab/")[0]
        assert get(f"{base}/api/status") != 200  # without the token: refused
        os.killpg(proc.pid, signal.SIGINT)  # Ctrl-C at the terminal: the whole foreground group
        # a bound, not a pace: JupyterLab's own shutdown idles 7-15 s quiet, over 60 s under load
        rest = proc.communicate(timeout=180)[0]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()
    assert "JupyterLab stopped." in rest, rest
    with pytest.raises(OSError):
        urllib.request.urlopen(url, timeout=5)
    if os.geteuid() == 0:
        assert "--allow-root" not in rest and "Running as root is not recommended" not in (tmp_path / "lab.log").read_text()

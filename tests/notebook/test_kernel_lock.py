"""``%dsh resume`` in two real kernels (issue 16, item 3): the kernel that has the session open
keeps it; the second gets ``SESSION_BUSY`` and writes nothing; once the first kernel is gone the
second resumes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.kernel


def _run(kc: Any, code: str) -> str:
    texts: list[str] = []

    def hook(msg: dict[str, Any]) -> None:
        content = msg.get("content", {})
        if msg.get("msg_type") == "stream":
            texts.append(content.get("text", ""))
        elif msg.get("msg_type") in ("execute_result", "display_data"):
            texts.append(str(content.get("data", {}).get("text/plain", "")))
        elif msg.get("msg_type") == "error":
            texts.append("\n".join(content.get("traceback", [])))

    kc.execute_interactive(code, timeout=120, output_hook=hook)
    return "".join(texts)


def test_resume_in_a_second_kernel_is_session_busy(kernel_env: dict[str, str], tmp_path: Path,
                                                   isolated_dsh_home: Path) -> None:
    from jupyter_client.manager import start_new_kernel

    km1, kc1 = start_new_kernel(kernel_name="python3", cwd=str(tmp_path), env=kernel_env)
    km2, kc2 = start_new_kernel(kernel_name="python3", cwd=str(tmp_path), env=kernel_env)
    try:
        for kc in (kc1, kc2):
            assert kc.execute_interactive("%load_ext dsh_notebook", timeout=60)["content"]["status"] == "ok"
        _run(kc1, "%dsh --no-widget hello")
        sid = _run(kc1, "print(_.session_id)").strip().splitlines()[-1]
        log_path = isolated_dsh_home / "sessions" / f"{sid}.jsonl"
        before = log_path.read_bytes()
        busy = _run(kc2, f"%dsh resume {sid}")
        assert "SESSION_BUSY" in busy and "Traceback" not in busy
        assert log_path.read_bytes() == before
        kc1.stop_channels()
        km1.shutdown_kernel(now=True)
        resumed = _run(kc2, f"%dsh resume {sid}")
        assert "resumed from its log" in resumed, resumed
    finally:
        kc2.stop_channels()
        km2.shutdown_kernel(now=True)
        if km1.is_alive():
            kc1.stop_channels()
            km1.shutdown_kernel(now=True)

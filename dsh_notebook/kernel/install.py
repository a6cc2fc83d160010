"""``python -m dsh_notebook install-kernel [--user | --sys-prefix | --prefix P]``.

Writes the kernelspec ``dsh`` (display name "Agent (dsh)") with ``jupyter_client``'s
``KernelSpecManager``: ``argv`` is this interpreter, ``-m dsh_notebook.kernel -f
{connection_file}``, so the kernel runs in the environment that installed it. Without a flag the
spec goes into the active virtual environment (``--sys-prefix``) when there is one, else into the
user's Jupyter data directory (``--user``).
"""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path

from ..errors import UserError
from . import DISPLAY_NAME, KERNEL_NAME


def kernel_json() -> dict[str, object]:
    return {
        "argv": [sys.executable, "-m", "dsh_notebook.kernel", "-f", "{connection_file}"],
        "display_name": DISPLAY_NAME,
        "language": "dsh",
        "interrupt_mode": "signal",
        "metadata": {"debugger": False},
    }


def install_kernel(*, user: bool = False, sys_prefix: bool = False, prefix: str | None = None) -> str:
    """Install the spec; returns the directory it was written to."""
    from jupyter_client.kernelspec import KernelSpecManager

    if sum(bool(x) for x in (user, sys_prefix, prefix)) > 1:
        raise UserError("--user, --sys-prefix and --prefix exclude each other", code="BAD_FLAG")
    if not (user or sys_prefix or prefix):
        in_venv = sys.prefix != getattr(sys, "base_prefix", sys.prefix)
        sys_prefix, user = in_venv, not in_venv
    if sys_prefix:
        prefix = sys.prefix
    with tempfile.TemporaryDirectory() as tmp:
        spec_dir = Path(tmp) / KERNEL_NAME
        spec_dir.mkdir()
        (spec_dir / "kernel.json").write_text(json.dumps(kernel_json(), indent=1) + "\n")
        try:
            return str(KernelSpecManager().install_kernel_spec(str(spec_dir), KERNEL_NAME, user=user,
                                                             prefix=prefix, replace=None))
        except OSError as exc:
            raise UserError(f"cannot install the kernelspec: {exc.strerror or exc} ({exc.filename or ''}); "
                            "try --user or --prefix DIR", code="INSTALL_FAILED") from None


def install_main(args: object) -> int:
    path = install_kernel(user=bool(getattr(args, "user", False)), sys_prefix=bool(getattr(args, "sys_prefix", False)),
                          prefix=getattr(args, "prefix", None))
    print(f"installed kernelspec {KERNEL_NAME!r} ({DISPLAY_NAME}) in {path}")
    print("pick \"Agent (dsh)\" in the JupyterLab launcher, or run a notebook with kernel_name='dsh'")
    return 0

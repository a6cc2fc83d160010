"""Execute the walkthrough notebooks headless and write the executed copies.

``python -m dsh_notebook.kernel.walkthrough notebooks notebooks/executed`` runs every
``NN-*.ipynb`` in order on a real kernel (nbclient) with the embedded default model and an
isolated ``DSH_HOME`` unless one is set. Any cell error fails the run (exit 1) and names the cell.
Each notebook runs on the kernel its metadata names: ``python3``, or ``dsh`` (the agent kernel,
notebook 05) — when no ``dsh`` kernelspec is installed, one is installed into a temporary prefix
for this run (:func:`ensure_agent_kernel`).
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any


def ensure_agent_kernel() -> str:
    """Make the ``dsh`` kernelspec findable: the installed one, else a temporary install
    (``JUPYTER_PATH``, inherited by the kernels started from here). Returns its directory."""
    from jupyter_client.kernelspec import KernelSpecManager, NoSuchKernel

    from . import KERNEL_NAME
    from .install import install_kernel

    try:
        return str(KernelSpecManager().get_kernel_spec(KERNEL_NAME).resource_dir)
    except NoSuchKernel:
        prefix = tempfile.mkdtemp(prefix="dsh-kernelspec-")
        path = install_kernel(prefix=prefix)
        data = str(Path(prefix) / "share" / "jupyter")
        os.environ["JUPYTER_PATH"] = os.pathsep.join(p for p in (data, os.environ.get("JUPYTER_PATH")) if p)
        return path


def quiet_kernel_env() -> None:
    """No debugger chatter from the kernels started here (debugpy's frozen-modules warning on
    stderr, which reaches this command's output): ``PYDEVD_DISABLE_FILE_VALIDATION=1``, inherited."""
    os.environ.setdefault("PYDEVD_DISABLE_FILE_VALIDATION", "1")


def execute_notebook(src: Path, dest_dir: Path, *, timeout: int = 300) -> Path:
    """Run ``src`` on a fresh kernel of its kernelspec (cwd = its folder); write the executed copy.

    The kernel talks over IPC sockets in a private temporary folder (0700, removed afterwards),
    not TCP: nothing listens on a port, and ipykernel has no "running over TCP without
    encryption" warning to print into this command's output."""
    import shutil

    import nbformat
    from jupyter_client.manager import KernelManager

    quiet_kernel_env()
    nb = nbformat.read(src, as_version=4)
    kernel_name = (nb.metadata.get("kernelspec") or {}).get("name") or "python3"
    if kernel_name == "dsh":
        ensure_agent_kernel()
    sockets = tempfile.mkdtemp(prefix="dsh-kernel-")
    km = KernelManager(kernel_name=kernel_name, transport="ipc", ip=str(Path(sockets) / "kernel"))
    try:
        _run(nb, src, kernel_name, km, timeout)
    finally:
        if km.has_kernel:  # the client does not stop a kernel it was handed
            km.shutdown_kernel()
        km.cleanup_resources()
        shutil.rmtree(sockets, ignore_errors=True)
    dest_dir.mkdir(parents=True, exist_ok=True)
    dest = dest_dir / src.name
    nbformat.write(nb, dest)
    return dest


def _run(nb: Any, src: Path, kernel_name: str, km: Any, timeout: int) -> None:
    from nbclient import NotebookClient

    client = NotebookClient(
        nb,
        km=km,
        timeout=timeout,
        kernel_name=kernel_name,
        resources={"metadata": {"path": str(src.parent)}},
        allow_errors=False,
        record_timing=True,
        # one stream output per cell and name, as JupyterLab shows it: the kernel flushes stdout on
        # a timer, so under load one print() can arrive as two messages ("workspace now:" and the
        # list), which a reader of the saved copy (or a test of its text) would otherwise see apart
        coalesce_streams=True,
        # saved like JupyterLab saves by default (no widget state): `jupyter nbconvert --to html`
        # of the executed copy then shows each widget's text/html replay, offline — with widget
        # state it would load the widget manager from a CDN and find no kernel behind it
        store_widget_state=False,
    )
    client.execute()


def notebooks_in(folder: Path) -> list[Path]:
    return sorted(p for p in folder.glob("[0-9][0-9]-*.ipynb") if p.is_file())


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    src = Path(args[0] if args else "notebooks")
    dest = Path(args[1] if len(args) > 1 else src / "executed")
    if "DSH_HOME" not in os.environ:
        os.environ["DSH_HOME"] = tempfile.mkdtemp(prefix="dsh-walkthrough-")
    failures = 0
    for path in notebooks_in(src):
        start = time.perf_counter()
        try:
            out = execute_notebook(path, dest)
        except Exception as exc:  # report every notebook, then fail
            failures += 1
            print(f"FAILED {path.name}: {type(exc).__name__}: {str(exc)[-2000:]}", flush=True)
            continue
        print(f"ok     {path.name} -> {out} ({time.perf_counter() - start:.1f} s)", flush=True)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""The kernel-wide trajectory settings of ``%dsh``: ``DshMagics.prices_file`` (and ``--context-window
N``, applied by :func:`dsh_notebook.cmdline.options.apply_process_flags` as the CLI applies it).
Both are the documented environment variables of :mod:`dsh_notebook.session.catalog`
(``DSH_CONTEXT_WINDOW``, ``DSH_PRICES_FILE``), set for the kernel's process, where its host reads
them for every later request and figure."""

from __future__ import annotations

import os

from ...session.catalog import CONTEXT_WINDOW_ENV, PRICES_FILE_ENV, load_catalog


def set_prices_file(path: str | None) -> None:
    """Use ``path`` as the prices file (checked now: a bad file is a ``BAD_CONFIG`` error)."""
    if not path:
        os.environ.pop(PRICES_FILE_ENV, None)
        return
    load_catalog(path)
    os.environ[PRICES_FILE_ENV] = str(path)


def trajectory_config() -> dict[str, str]:
    """The ``%dsh config`` rows for prices, the context window and the trace export."""
    from ...observe.otel import describe
    from ...session.catalog import PRICES_AS_OF

    prices = os.environ.get(PRICES_FILE_ENV, "").strip()
    window = os.environ.get(CONTEXT_WINDOW_ENV, "").strip()
    return {
        "prices": f"{prices} over the built-in table (as of {PRICES_AS_OF})" if prices
        else f"built-in table (as of {PRICES_AS_OF})",
        "context window": f"{window} tokens (DSH_CONTEXT_WINDOW)" if window else "the model's (from the prices)",
        "OpenTelemetry": describe(),
    }

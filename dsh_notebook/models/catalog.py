"""The price catalog now lives below the session (``dsh_notebook.session.catalog``), whose stats
fold prices; these names stay importable here for agent/ until its rewrite imports them there."""

from __future__ import annotations

from ..session.catalog import (
    CONTEXT_WINDOW_ENV,
    PRICES_AS_OF,
    PRICES_FILE_ENV,
    Catalog,
    ModelInfo,
    Price,
    context_window,
    cost_usd,
    default_catalog,
    env_context_window,
    load_catalog,
    price,
)

__all__ = [
    "CONTEXT_WINDOW_ENV", "PRICES_AS_OF", "PRICES_FILE_ENV", "Catalog", "ModelInfo", "Price",
    "context_window", "cost_usd", "default_catalog", "env_context_window", "load_catalog", "price",
]  # fmt: skip

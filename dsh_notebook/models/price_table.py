"""The price table the widgets fold their trajectory figures with (the ``pricing`` trait, and the
same table inside an exported page).

The loop widget's header (running tokens, cost, context fill) and the inspector's waterfall
derive their figures in the browser from the events they already follow (``js/src/model/
trajectory.ts``, the same fold as :func:`dsh_notebook.analysis.stats.session_stats`). What the
browser cannot know is the catalog: this sends it once, as JSON — the built-in table with the
prices file (``DSH_PRICES_FILE``) laid over it, and ``DSH_CONTEXT_WINDOW`` — and
``js/src/model/pricing.ts`` looks models up by the same rules as
:class:`~dsh_notebook.session.catalog.Catalog`.
"""

from __future__ import annotations

from collections.abc import Iterable

from pydantic import JsonValue

from ..errors import DshError
from ..session.catalog import PRICES_AS_OF, default_catalog, env_context_window


def pricing_table(used: Iterable[tuple[str, str]] | None = None) -> dict[str, JsonValue]:
    """``{"asOf", "contextWindow", "models": {"provider:model": {"price", "contextWindow"}}}``.

    With ``used`` (the ``(provider, model)`` pairs a saved session asked), only the entries those
    look up (an exported page carries what it prices, not the whole catalog).

    A bad prices file or ``DSH_CONTEXT_WINDOW`` leaves the figures unknown (cost ``null``) rather
    than breaking the widget; ``show --stats`` reports the configuration error itself.
    """
    try:
        catalog = default_catalog()
        window = env_context_window()
    except DshError:
        return {"asOf": PRICES_AS_OF, "contextWindow": None, "models": {}}
    models: dict[str, JsonValue] = {}
    wanted = None if used is None else {id(i) for p, m in used if (i := catalog.lookup(p, m)) is not None}
    for (provider, model), info in catalog.entries.items():
        if wanted is not None and id(info) not in wanted:
            continue
        p = info.price
        price: JsonValue = None if p is None else {"input": p.input, "cachedInput": p.cached_input, "output": p.output}
        models[f"{provider}:{model}"] = {"price": price, "contextWindow": info.context_window}
    return {"asOf": PRICES_AS_OF, "contextWindow": window, "models": models}


__all__ = ["pricing_table"]

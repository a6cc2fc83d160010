"""``{name}`` (or ``{name.attr}``) in a ``%dsh`` prompt: replaced by ``str()`` of that notebook
variable; ``{{`` and ``}}`` are literal braces; any other brace is left as typed; a name that is not
defined is a ``UserError`` (``UNKNOWN_VARIABLE``). ``--no-interpolate`` sends the text untouched.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from ...errors import UserError

_PLACEHOLDER = re.compile(r"\{\{|\}\}|\{([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*)\}")


def interpolate(text: str, namespaces: Sequence[Mapping[str, Any]]) -> str:
    """Replace ``{name}`` / ``{name.attr}`` by ``str(value)``; ``{{``/``}}`` are literal braces."""

    def lookup(match: re.Match[str]) -> str:
        whole = match.group(0)
        if whole == "{{":
            return "{"
        if whole == "}}":
            return "}"
        dotted = match.group(1)
        head, *attrs = dotted.split(".")
        for ns in namespaces:
            if head in ns:
                value = ns[head]
                break
        else:
            raise UserError(
                f"{{{dotted}}} in the prompt names no notebook variable; define {head}, write "
                f"{{{{{dotted}}}}} for literal braces, or use --no-interpolate",
                code="UNKNOWN_VARIABLE",
            )
        for attr in attrs:
            try:
                value = getattr(value, attr)
            except AttributeError:
                raise UserError(f"{{{dotted}}}: {type(value).__name__} has no attribute {attr!r}", code="UNKNOWN_VARIABLE") from None
        try:
            return str(value)
        except Exception as exc:
            raise UserError(f"{{{dotted}}}: str() failed: {exc}", code="UNKNOWN_VARIABLE") from None

    return _PLACEHOLDER.sub(lookup, text)

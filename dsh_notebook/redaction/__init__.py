"""Secret redaction: what is logged, shown, indexed, exported, traced and sent never holds a
secret this process knows — and what a tool runs or writes is never changed by it.

Redaction is for the views of a run, not for the run: a tool gets the model's arguments as the
model wrote them (issue 35 finding 3: ``rm -f risk-assessment-draft.md`` once ran as
``rm -f ri***.md``); the session log, the frames, ``show``, the exports, the search index, the
traces and the history sent back to the model are masked.

- :mod:`.core` — the known values (environment variables by name, URL passwords, registered
  keys) as one compiled alternation, :func:`redact`, :func:`redact_json_text` (tool-call
  arguments masked inside their JSON strings), :func:`secrets_hidden`;
- :mod:`.forms` — every form a known value is written in (JSON-escaped, percent-encoded, NFC/NFD);
- :mod:`.shapes` — keys that need no registry: at a word boundary, with a body that looks random;
- :mod:`.stream` — :class:`StreamRedactor`, the same masking for text that arrives in pieces.

Everything runs in linear time whatever the text (``tests/benchmarks/bench_redaction.py``).
"""

from __future__ import annotations

from .core import (
    MASK,
    MIN_SECRET_LEN,
    REDACTOR,
    Redactor,
    env_secrets,
    is_secret_name,
    redact,
    redact_data,
    redact_json_text,
    redact_known,
    register_secret,
    secrets_hidden,
    url_password,
)
from .forms import encoded_forms
from .shapes import keylike
from .stream import StreamRedactor

__all__ = [
    "MASK", "MIN_SECRET_LEN", "REDACTOR", "Redactor", "StreamRedactor", "encoded_forms", "env_secrets",
    "is_secret_name", "keylike", "redact", "redact_data", "redact_json_text", "redact_known", "register_secret",
    "secrets_hidden", "url_password",
]

"""Moved to :mod:`dsh_notebook.testing.openai_chunks` (the fakes users and tests share); this name stays
for the tests that import it from here."""

from dsh_notebook.testing.openai_chunks import (  # noqa: F401
    USAGE,
    Reply,
    chunk,
    error_reply,
    multibyte_split_points,
    reasoning_chunks,
    split_text,
    text_chunks,
    text_reply,
    tool_call_chunks,
    tool_call_reply,
)

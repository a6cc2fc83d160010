"""Moved to :mod:`dsh_notebook.testing.openai_server` (the fakes users and tests share); this name stays
for the tests that import it from here."""

from dsh_notebook.testing.openai_server import (  # noqa: F401
    DEFAULT_KEY,
    PATHS,
    FakeOpenAIServer,
    RecordedRequest,
    Reply,
    check_request,
    chunk,
    error_reply,
    multibyte_split_points,
    reasoning_chunks,
    serve_fake_openai,
    split_text,
    text_chunks,
    text_reply,
    tool_call_chunks,
    tool_call_reply,
)

"""Moved to :mod:`dsh_notebook.testing.openai_chunks` (the fakes users and tests share); this name stays
for the tests that import it from here."""

from dsh_notebook.testing.openai_chunks import *  # noqa: F403

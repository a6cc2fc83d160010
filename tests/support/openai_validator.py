"""Moved to :mod:`dsh_notebook.testing.openai_validator` (the fakes users and tests share); this name stays
for the tests that import it from here."""

from dsh_notebook.testing.openai_validator import *  # noqa: F403

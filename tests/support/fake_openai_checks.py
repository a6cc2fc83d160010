"""Moved to :mod:`dsh_notebook.testing.openai_checks` (the fakes users and tests share); this name stays
for the tests that import it from here."""

from dsh_notebook.testing.openai_checks import *  # noqa: F403

"""The two command lines, ``python -m dsh_notebook`` and ``%dsh``, from one registry.

:mod:`.table` declares every command and :mod:`.flags` the flags of a run, once (:mod:`.spec`
gives their shapes); the CLI's parser (:mod:`.argparser`), the ``%dsh`` line parser
(:mod:`.dsh_line`), the help (:mod:`.help`), tab completion (:mod:`.complete`) and what a run's
flags mean (:mod:`.options`, :mod:`.checks`) are derived from it. :func:`reference` yields every
command with its args and flags: the generated reference docs read it.
"""

from __future__ import annotations

from .table import reference

__all__ = ["reference"]

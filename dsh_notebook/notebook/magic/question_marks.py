"""The one input transformer the extension installs, so that a ``%dsh`` prompt may end with a
question mark (the help text itself comes from the command registry: :mod:`dsh_notebook.cmdline.help`).
"""

from __future__ import annotations

import re

_QUESTION_LINE = re.compile(r"^(?P<indent>[ \t]*)(?P<assign>[A-Za-z_][\w.]*\s*=\s*)?%dsh[ \t]+(?P<rest>.*\S)[ \t]*\?[ \t]*$")


def keep_question_marks(lines: list[str]) -> list[str]:
    """An input transformer: ``%dsh what is this?`` is a prompt, not IPython's ``obj?`` help.

    IPython turns any line ending in ``word?`` into a help request (and ``… ?`` into a syntax
    error) *before* it looks at magics. This rewrites such ``%dsh`` lines to the very call
    IPython itself would make (``get_ipython().run_line_magic("dsh", line)``), a step earlier.
    ``%dsh?`` (help on the magic) and ``%%dsh`` cells are left alone.
    """
    if lines and lines[0].lstrip().startswith("%%"):
        return lines
    out = []
    for line in lines:
        m = _QUESTION_LINE.match(line.rstrip("\r\n"))
        if m is None:
            out.append(line)
            continue
        rest = line.rstrip("\r\n")[len(m.group("indent")) + len(m.group("assign") or "") + len("%dsh"):].strip()
        ending = line[len(line.rstrip("\r\n")):]
        out.append(f"{m.group('indent')}{m.group('assign') or ''}get_ipython().run_line_magic('dsh', {rest!r}){ending}")
    return out

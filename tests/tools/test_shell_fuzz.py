"""Lines nobody wrote by hand: any line the parser resolves, bash runs nothing it did not report.

Hypothesis builds lines from shell fragments chosen to find where tree-sitter and bash read
differently (line continuations, ``!``/``{``/``time`` joined to words, numbers before
redirections, here-documents whose end moves, ``\\r``, adjacent quotes …); every line the parser
resolves is run by ``/bin/bash`` (:mod:`tests.tools.bash_oracle`). The parser may refuse a line
bash would run harmlessly; it may never report less than bash runs. Derandomized: the same lines
every run (the offline campaign behind it ran ~60,000 lines)."""

from __future__ import annotations

import tempfile
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dsh_notebook.tools.shell_parse import parse_line
from tests.tools.bash_oracle import HOME, bash_runs

pytestmark = pytest.mark.integration  # every example may run /bin/bash (the oracle)
FRAGMENTS = [
    "-<<E\n", "- <<E\n", "\nE\n", "x-", "<<E |\n", "<<E |", "$'--' ", "$'-p' ",
    "a", "b", "x", "echo", "ls", "touch", " ", " ", " ", "\t", ";", "&", "&&", "||", "|", "|&", "\n", "(", ")",
    "{ ", " }", "{", "}", "! ", "!", "'", '"', "\\", "$", "`", "#", "<", ">", ">>", "2>", "&>", ">&", "2>&1", ">&-",
    "<<EOF\n", "\nEOF\n", "<<'E'\n", "\nE\n", "<<-X\n\t", "\n\tX\n", "<<<", "EOF", "=", "a=b", "~", "*", "?", "[ ",
    " ]", "[", "]", ",", "-", "--", "-v", "-p", "$'\\x41'", "\\n", "\\\n", "\\ ", "\\;", "time ", "time", "if", "then",
    "fi", "do", "done", "case", "in", "esac", "for", "bash -c '", "sh -c \"", "env ", "nice ", "x=1", "\r", ":", ".",
    "/", "{}", "find", "-exec", "'a b'", '"a b"', "1", "2", "0", "test", "printf", "read",
]  # fmt: skip


@settings(max_examples=400, derandomize=True, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(st.lists(st.sampled_from(FRAGMENTS), min_size=1, max_size=14).map("".join))
def test_bash_never_runs_more_than_the_parser_reports(line: str) -> None:
    parsed = parse_line(line)
    if parsed.unresolved:
        return
    with tempfile.TemporaryDirectory() as tmp:
        ran = bash_runs(line, Path(tmp), [r.target for r in parsed.redirects if r.op == "<"])
    reported = Counter(tuple(HOME + w.text[1:] if w.dynamic else w.text for w in cmd.words)
                       for cmd in parsed.commands if "/" not in cmd.literal[0])
    assert not ran - reported, f"bash ran {dict(ran - reported)} that the parser did not report"

"""Compare's first divergence, one step from the event itself: the CLI prints, per side, the
``show ID --search seq:N`` command that prints that event (run here, it does), and the notebook
widget opens a SessionInspector of that side with that event selected (``selected_seq``), one per
side, a second press re-selecting in the one already open. Real logs from the scripted model via
real ``python -m dsh_notebook`` subprocesses."""

from __future__ import annotations

from pathlib import Path

from dsh_notebook.notebook.widgets import SessionInspector
from dsh_notebook.notebook.widgets.compare import CompareWidget
from dsh_notebook.session.persistence import load_log
from dsh_notebook.wire.events import TurnEnd
from tests.session.test_fork_compare import cli, origin, session_line

__all__ = ["origin"]


def forked(origin: tuple[Path, str, Path]) -> tuple[Path, str, Path, str, Path]:
    home, sid, path = origin
    first_end = next(e for e in load_log(path).events if isinstance(e, TurnEnd))
    fork_id, fork_path = session_line(cli(home, "fork", sid, "--at", str(first_end.seq)).stdout)
    assert cli(home, "run", "--session", fork_id, "what is in src/math.ts?").returncode == 0
    return home, sid, path, fork_id, fork_path


def test_the_cli_prints_the_command_that_shows_each_divergent_event(origin: tuple[Path, str, Path]) -> None:
    home, sid, _path, fork_id, _fork_path = forked(origin)
    out = cli(home, "compare", sid, fork_id).stdout.splitlines()
    line = next(x for x in out if x.startswith("first divergence:"))
    a_seq, b_seq = (int(p.split(" seq ")[1]) for p in line.split(" (")[0].removeprefix("first divergence: ").split(", "))
    opens = [x for x in out if x.startswith("open ")]
    assert opens == [f"open A at seq {a_seq}: python -m dsh_notebook show {sid} --search seq:{a_seq}",
                     f"open B at seq {b_seq}: python -m dsh_notebook show {fork_id} --search seq:{b_seq}"]
    for target, at in ((sid, a_seq), (fork_id, b_seq)):
        shown = cli(home, "show", target, "--search", f"seq:{at}")
        assert shown.returncode == 0, shown.stderr
        rows = [x for x in shown.stdout.splitlines() if x.strip()]
        assert any(x.lstrip().startswith(f"{at} ") or f"#{at}" in x or f"seq {at}" in x for x in rows), shown.stdout
    assert not [x for x in cli(home, "compare", sid, sid).stdout.splitlines() if x.startswith("open ")]


def test_the_widget_opens_an_inspector_of_each_side_at_its_divergent_event(origin: tuple[Path, str, Path]) -> None:
    _home, _sid, path, fork_id, fork_path = forked(origin)
    a, b = load_log(path), load_log(fork_path)
    w = CompareWidget(a.id, a.events, b.id, b.events, paths=(str(a.path), str(b.path)))
    a_seq, b_seq = w.first_divergent_seqs or (None, None)
    assert isinstance(a_seq, int) and isinstance(b_seq, int)
    w._on_custom(w, {"kind": "open-inspector", "side": "b", "seq": b_seq}, [])
    shown = w.inspectors["b"]
    assert isinstance(shown, SessionInspector) and shown.selected_seq == b_seq and shown.session_id == fork_id
    w._on_custom(w, {"kind": "open-inspector", "side": "a", "seq": a_seq}, [])
    assert w.inspectors["a"].selected_seq == a_seq and w.inspectors["a"] is not shown
    assert w.open_inspector("b", 3) is shown and shown.selected_seq == 3  # the one already open, re-selected
    assert w.open_inspector("c", 1) is None and w.open_inspector("a", len(a.events)) is None
    assert w.open_inspector("a", True) is None and w.open_inspector("a", "2") is None

"""``%dsh fork`` and ``%dsh compare`` in a real kernel (nbclient), on the scripted model."""

from __future__ import annotations

from pathlib import Path

import pytest

from .test_kernel import run_notebook, text_of

pytestmark = pytest.mark.kernel


def test_fork_then_compare_in_a_notebook(kernel_env: dict[str, str], tmp_path: Path) -> None:
    nb = run_notebook([
        "%load_ext dsh_notebook",
        "%dsh --new read README.md and summarise",
        "origin = _.session_id\nfrom dsh_notebook.session.persistence import load_log\n"
        "from dsh_notebook.config import settings_from_env\n"
        "events = load_log(settings_from_env().sessions_dir / f'{origin}.jsonl').events\n"
        "end = [e.seq for e in events if e.type == 'turn/end'][0]\nend",
        "%dsh fork {origin} --at {end}",
        "fork = get_ipython().magics_manager.registry['DshMagics'].current_session\nfork != origin",
        "%dsh what is in src/math.ts?",
        "view = %dsh compare {origin} {fork}\nprint(view.first_divergent_seqs)\nview",
        "%dsh fork --at 999999",
    ], tmp_path, allow_errors=True)
    fork_out = text_of(nb.cells[3])
    assert "forked s_" in fork_out and "it is now the current session" in fork_out
    assert "session: s_" in fork_out and " log: " in fork_out
    assert "True" in text_of(nb.cells[4])
    compare = nb.cells[6]
    html = next(o.data["text/html"] for o in compare.outputs if o.output_type == "execute_result")
    assert "first divergence" in html and 'class="dsh-div"' in html and "dsh-add" in html
    plain = text_of(compare)
    assert "first divergence: A seq" in plain and "turn 2 step 1" in plain
    bad = text_of(nb.cells[7])
    assert "BAD_FORK_POINT" in bad and "Traceback" not in bad

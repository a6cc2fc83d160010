"""``%dsh compare A B`` in a real kernel (nbclient) is the CompareWidget: the widget view for a
front end with widgets, the text and HTML table for anything else, and its data aligns every step
of both sessions with the first divergence marked and its request diff."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .test_kernel import run_notebook, text_of

pytestmark = pytest.mark.kernel


def test_compare_is_a_widget_with_the_table_as_fallback(kernel_env: dict[str, str], tmp_path: Path) -> None:
    nb = run_notebook([
        "%load_ext dsh_notebook",
        "%dsh --new read README.md and summarise",
        "origin = _.session_id",
        "%dsh read README.md and summarise",
        "from dsh_notebook.session.persistence import load_log\nfrom dsh_notebook.config import settings_from_env\n"
        "events = load_log(settings_from_env().sessions_dir / f'{origin}.jsonl').events\n"
        "end = [e.seq for e in events if e.type == 'turn/end'][0]",
        "%dsh fork {origin} --at {end}",
        "fork = get_ipython().magics_manager.registry['DshMagics'].current_session",
        "%dsh what is in src/math.ts?",
        "w = %dsh compare {origin} {fork}\nw",
        "import json\nprint(type(w).__name__, w.first_divergent_seqs)\n"
        "print(json.dumps({'rows': [(r['turn'], r['step'], r['state'], bool(r['a']), bool(r['b'])) for r in w.data['rows']],"
        " 'div': w.data['divergence'], 'agreeing': w.data['agreeing']}))",
        "t = %dsh compare --no-widget {origin} {fork}\nprint(type(t).__name__)",
    ], tmp_path)
    shown = next(o for o in nb.cells[8].outputs if o.output_type == "execute_result")
    assert "application/vnd.jupyter.widget-view+json" in shown.data  # the widget, for JupyterLab
    assert 'class="dsh-div"' in shown.data["text/html"] and "first divergence" in shown.data["text/html"]
    assert "first divergence: A seq" in shown.data["text/plain"]  # nbconvert / a terminal
    name_line, data_line = text_of(nb.cells[9]).strip().splitlines()
    assert name_line.startswith("CompareWidget (")
    data = json.loads(data_line)
    # turn 1 agrees (2 steps: the read, the answer); turn 2 is where they diverge, then each goes on alone
    assert [r[:3] for r in data["rows"][:3]] == [[1, 1, "same"], [1, 2, "same"], [2, 1, "first"]]
    assert all(r[2] == "after" for r in data["rows"][3:]) and data["agreeing"] == 2
    div = data["div"]
    assert div["what"] == "request", data
    assert (div["turn"], div["step"]) == (2, 1)
    assert any(x.startswith("-") and "read README.md" in x for x in div["diff"])
    assert any(x.startswith("+") and "src/math.ts?" in x for x in div["diff"])
    assert name_line == f"CompareWidget ({div['a']['seq']}, {div['b']['seq']})"
    assert "ComparisonView" in text_of(nb.cells[10])

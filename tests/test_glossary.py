"""The glossary is one source, up to date, defines every seed word the widgets' texts use, and
every walkthrough notebook links it."""

from __future__ import annotations

import json
import re
from pathlib import Path

from dsh_notebook.glossary import MD_FILE, TERMS, by_name, main, to_typescript

ROOT = Path(__file__).resolve().parents[1]
# the texts a learner reads in the widgets: captions, explanations, stage titles, placeholders
UI_TEXT = [*sorted((ROOT / "js" / "src" / "model").glob("*.ts")), *sorted((ROOT / "js" / "src" / "ui").glob("*.ts")),
           ROOT / "js" / "src" / "loop.ts", ROOT / "js" / "src" / "inspector.ts"]
# the seeds' jargon: a word of this list that a widget shows must be in the glossary
JARGON = ("seed 000", "seed 001", "L1", "L8", "stage", "tool feedback loop", "Cordis", "surface", "end-seed",
          "follow", "snapshot", "cursor", "sourceEventSeqs", "messageSeqs", "frozen", "runtime-context", "wrapper",
          "turn", "step", "attempt", "approval", "derive_messages", "prepare_request", "execute_tool_calls",
          "commit_ready", "adapter.stream", "tool runtime", "provenance", "payloads", "responsibilities", "replay",
          "accepted", "envelope", "rpcId", "requestId", "Inbox", "steer", "seq", "session", "inspector")


def ui_strings() -> str:
    """Every string literal (quotes and template literals) of the widgets' UI sources."""
    out = []
    for path in UI_TEXT:
        if path.name.endswith(".gen.ts") or path.name == "glossary.ts":
            continue
        out += re.findall(r'"((?:[^"\\\n]|\\.)*)"|`((?:[^`\\]|\\.)*)`', path.read_text())
    return "\n".join(a or b for a, b in out)


def test_the_generated_files_are_up_to_date() -> None:
    assert main(["--check"]) == 0, "run: python -m dsh_notebook.glossary"
    assert MD_FILE.is_file()
    # the front end's copy is written by `make types` (js/scripts/gen-types.mjs pulls it from Python)
    assert (ROOT / "js" / "src" / "glossary.gen.ts").read_text(encoding="utf-8") == to_typescript(), "run: make types"


def test_every_term_is_defined_once_in_plain_words() -> None:
    names = [n.lower() for t in TERMS for n in (t.term, *t.aliases)]
    assert len(names) == len(set(names)), sorted(n for n in names if names.count(n) > 1)
    anchors = [t.anchor for t in TERMS]
    assert len(anchors) == len(set(anchors))
    for t in TERMS:
        assert len(t.definition) >= 60 and t.definition.rstrip().endswith((".", ")")), t.term  # sentences, not labels


def test_every_seed_word_the_widgets_show_is_in_the_glossary() -> None:
    text = ui_strings()
    known = by_name()
    used = [w for w in JARGON if re.search(rf"(?<![\w/]){re.escape(w)}", text, flags=re.IGNORECASE)]
    assert len(used) >= 20, used  # the scan reads the real captions (not an empty list that passes)
    missing = [w for w in used if w.lower() not in known and w.lower() + "s" not in known]
    assert missing == [], f"add to dsh_notebook/glossary.py: {missing}"
    # and the code words of the captions (derive_messages(), adapter.stream(), execute_tool_calls()…)
    code_words = set(re.findall(r"\b([a-z]+(?:_[a-z]+)+|[a-z]+\.[a-z]+)\(\)", text))
    assert {"derive_messages", "commit_ready", "execute_tool_calls", "prepare_request", "adapter.stream"} <= code_words
    undefined = sorted(w for w in code_words if w not in known and w.split(".")[-1] not in known)
    assert undefined == [], f"code words in widget captions with no glossary entry: {undefined}"


def test_every_walkthrough_notebook_links_the_glossary() -> None:
    notebooks = sorted((ROOT / "notebooks").glob("[0-9][0-9]-*.ipynb"))
    assert len(notebooks) >= 5
    for path in notebooks:
        cells = json.loads(path.read_text())["cells"]
        links = [c for c in cells if c["cell_type"] == "markdown" and "](glossary.md)" in "".join(c["source"])]
        assert links, f"{path.name} has no markdown link to glossary.md"
    anchors = {t.anchor for t in TERMS}
    assert all(f'id="{a}"' in MD_FILE.read_text() for a in anchors)

"""Issue 35 finding 9: a known secret written JSON-escaped, percent-encoded or in Unicode is
masked like the secret itself, in the log, ``show`` (plain, ``--json``, ``--messages``,
``--search``), the search index, ``export-html``, OpenTelemetry (live and ``export-otel``, with
content capture on) and every request sent to the model.

The attack: a password holding a quote, a backslash and a non-ASCII letter, and a token in
Cyrillic, both known by their variables' names, sit in a JSON config file (written with
``ensure_ascii`` true and false) and a ``.env`` URL (percent-encoded). The model reads them with
the real ``read`` and ``bash`` tools and repeats them, escaped, in its answer.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from urllib.parse import quote, quote_plus

from hypothesis import given, settings
from hypothesis import strategies as st

from dsh_notebook.redaction import MASK, Redactor, StreamRedactor
from dsh_notebook.redaction.forms import trie_pattern
from tests.realuse.cli import REPO, session_of
from tests.support.cli import dsh
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply, tool_call_reply
from tests.support.log_checks import assert_valid_log
from tests.support.otlp_receiver import OTLPReceiver

PASSWORD = 'Pa"ss\\wörd-Zq9!x'  # a quote, a backslash, a non-ASCII letter
TOKEN = "Жук-секрет-ключ-42"  # Unicode only
SECRETS = {"DB_PASSWORD": PASSWORD, "MY_API_TOKEN": TOKEN}


def written_forms(secret: str) -> set[str]:
    """The secret as programs write it: raw, JSON (ASCII or not), JSON inside JSON, URL-encoded."""
    once = {secret, json.dumps(secret)[1:-1], json.dumps(secret, ensure_ascii=False)[1:-1],
            quote(secret, safe=""), quote_plus(secret, safe="")}
    twice = {json.dumps(f, ensure_ascii=a)[1:-1] for f in once for a in (True, False)}
    return once | twice


FORMS = {form for s in SECRETS.values() for form in written_forms(s)}


def _leaks(text: str) -> list[str]:
    return sorted(f for f in FORMS if f in text)


def _cli(home: Path, server: FakeOpenAIServer, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("OTEL_")}
    full = {**base, "DSH_HOME": str(home), "PYTHONPATH": str(REPO), "DSH_API_KEY": server.api_key or "",
            "OTEL_BSP_SCHEDULE_DELAY": "100", **SECRETS, **(env or {})}
    return dsh(*args, env=full, timeout=180)


def test_escaped_and_unicode_secrets_never_reach_the_log_views_exports_traces_or_requests(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    config = {"db": {"user": "app", "password": PASSWORD}, "api": {"token": TOKEN}}
    (ws / "config.json").write_text(json.dumps(config))  # ensure_ascii: \u00f6, \u0416 ...
    (ws / "config.utf8.json").write_text(json.dumps(config, ensure_ascii=False), encoding="utf-8")
    (ws / ".env").write_text(f"DATABASE_URL=postgres://app:{quote(PASSWORD, safe='')}@db/x\n"
                             f"TOKEN_URL=https://api.example/?t={quote_plus(TOKEN)}\n", encoding="utf-8")
    said = (f'The password is "{json.dumps(PASSWORD)[1:-1]}", in the URL {quote(PASSWORD, safe="")}; '
            f"the token is {json.dumps(TOKEN)[1:-1]} ({TOKEN}).")
    with OTLPReceiver() as live, FakeOpenAIServer() as server:
        server.enqueue(
            tool_call_reply([("r1", "read", json.dumps({"file_path": "config.json"})),
                             ("b1", "bash", json.dumps({"command": "cat config.utf8.json .env"}))],
                            reasoning=f"found {json.dumps(PASSWORD, ensure_ascii=False)[1:-1]}", pieces=6),
            text_reply(said, pieces=11),
        )
        done = _cli(home, server, "run", "--approve", "auto", "--model", "fake-model", "--base-url", server.base_url,
                    "--cwd", str(ws), "what is in the config?",
                    env={"OTEL_EXPORTER_OTLP_ENDPOINT": live.endpoint,
                         "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"})
        assert done.returncode == 0, done.stderr
        sid, log = session_of(done.stdout)
        views = {" ".join(a): _cli(home, server, *a) for a in (
            ("show", sid), ("show", "--json", sid), ("show", "--messages", sid),
            ("show", "--search", "password", sid), ("sessions", "--search", "password", "--json"),
            ("export-html", sid, "-o", str(tmp_path / "page.html")))}
        with OTLPReceiver() as saved:
            exported = _cli(home, server, "export-otel", sid, env={
                "OTEL_EXPORTER_OTLP_ENDPOINT": saved.endpoint, "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT": "true"})
        requests = [json.dumps(r.body, ensure_ascii=a) for r in server.requests for a in (True, False)]
    assert exported.returncode == 0, exported.stderr
    for name, out in views.items():
        assert out.returncode == 0, (name, out.stderr)
    # the tools did read the secrets (masked in what they answered), the index holds the session
    events = assert_valid_log(log)
    results = [e.message.text for e in events if e.type == "tool/result"]
    assert len(results) == 2 and all(MASK in r and '"user": "app"' in r for r in results), results
    assert sid in views["sessions --search password --json"].stdout
    spans = [json.dumps(s.attributes, default=str, ensure_ascii=a) for s in (*live.spans, *saved.spans) for a in (True, False)]
    assert any("gen_ai.tool.call.result" in s for s in spans)  # content was captured
    store = home / "checkpoints"  # the workspace's own bytes, kept for a rewind: the user's files as they are
    files = [str(p) + "\n" + p.read_bytes().decode("utf-8", "replace") for p in home.rglob("*")
             if p.is_file() and store not in p.parents]
    assert any(p.suffix == ".jsonl" for p in home.rglob("*")) and len(files) >= 2
    outputs = {"run": done.stdout + done.stderr, **{k: v.stdout + v.stderr for k, v in views.items()},
               "page": (tmp_path / "page.html").read_text(encoding="utf-8")}
    for where, text in [*outputs.items(), *(("file", f) for f in files), *(("request", r) for r in requests),
                        *(("span", s) for s in spans)]:
        assert _leaks(text) == [], (where, text[:300])


def test_every_written_form_is_masked_whole_and_the_same_however_a_stream_was_cut() -> None:
    r = Redactor()
    r.add(SECRETS.values())
    for form in FORMS:
        assert r.redact(f"<{form}>") == f"<{MASK}>", form
    text = " | ".join(sorted(FORMS)) + " end"
    whole = r.redact(text)
    assert _leaks(whole) == []
    for step in (1, 2, 5, 13):
        s = StreamRedactor(r)
        assert "".join(s.feed(text[i:i + step]) for i in range(0, len(text), step)) + s.flush() == whole


def test_a_secret_typed_nfd_is_masked_when_registered_nfc() -> None:
    import unicodedata

    r = Redactor()
    r.add(["crème-brûlée-Zq9"])
    assert r.redact(unicodedata.normalize("NFD", "x crème-brûlée-Zq9 y")) == f"x {MASK} y"


@settings(max_examples=300, deadline=None)
@given(st.sets(st.text("ab\\\"%ö-", min_size=1, max_size=8), min_size=1, max_size=12), st.text("ab\\\"%ö- ", max_size=80))
def test_the_trie_of_forms_masks_what_the_longest_first_alternation_masks(literals: set[str], text: str) -> None:
    """The known forms are one trie-shaped pattern (fast when many forms share a first letter);
    it matches exactly what the plain alternation, longest literal first, matches."""
    import re

    plain = re.compile("|".join(re.escape(v) for v in sorted(literals, key=len, reverse=True)))
    assert re.compile(trie_pattern(literals)).sub(MASK, text) == plain.sub(MASK, text)

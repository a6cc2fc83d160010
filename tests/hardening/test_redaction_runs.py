"""Issue 35 finding 3 / item 3: redaction never changes what a tool runs or writes.

Attacks from the finding, through the real CLI (a subprocess), the real ``bash`` and ``write``
tools, real files, and the loopback OpenAI-compatible server:

- ``rm -f risk-assessment-draft.md`` once ran as ``rm -f ri***.md`` and deleted three files;
- ``flask-sqlalchemy==3.1`` was written as ``fla***==3.1``;
- ``OpenAI(api_key=os.environ[...])`` became a syntax error;
- a command holding a real secret runs with the secret, while the log, ``show`` and the history
  sent back to the model hold ``***`` — and the session resumes on that history.

Plus the false positives of the finding (``task-``, ``kiosk-``, ``ask-``, ``mask-``,
``api_key=<identifier>``) untouched and real key shapes still masked.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from dsh_notebook.redaction import MASK, Redactor, StreamRedactor, redact, redact_json_text
from tests.realuse.cli import REPO, session_of
from tests.support.cli import dsh
from tests.support.fake_openai import FakeOpenAIServer
from tests.support.fake_openai_chunks import text_reply, tool_call_reply
from tests.support.log_checks import assert_valid_log

SECRET = "Zq8wT4-mLx2Vp-R7cK9n"  # MY_SERVICE_TOKEN: a secret known by its variable's name
APP = 'import os\nfrom openai import OpenAI\n\nclient = OpenAI(api_key=os.environ["OPENAI_API_KEY"])\n'
REQUIREMENTS = "flask-sqlalchemy==3.1\ntask-runner==2.0.1\nkiosk-mode-toolkit==1.4\n"
NEIGHBOURS = ("risk-register.md", "rival-notes.md", "rich-summary.md")  # what `rm -f ri***.md` also deleted


def _cli(home: Path, server: FakeOpenAIServer, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DSH_HOME": str(home), "PYTHONPATH": str(REPO), "DSH_API_KEY": server.api_key or "",
           "MY_SERVICE_TOKEN": SECRET}
    return dsh(*args, env=env, timeout=180)


def test_tools_run_and_write_exactly_what_the_model_wrote_and_only_the_views_are_masked(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    ws.mkdir()
    for name in ("risk-assessment-draft.md", *NEIGHBOURS):
        (ws / name).write_text(f"# {name}\n")
    calls = [
        ("c1", "bash", json.dumps({"command": "rm -f risk-assessment-draft.md"})),
        ("c2", "write", json.dumps({"file_path": "requirements.txt", "content": REQUIREMENTS})),
        ("c3", "write", json.dumps({"file_path": "app.py", "content": APP})),
        ("c4", "bash", json.dumps({"command": f"printf '%s' '{SECRET}' > token.txt"})),
    ]
    with FakeOpenAIServer() as server:
        server.enqueue(tool_call_reply(calls, pieces=5), text_reply("done"), text_reply("resumed"))
        done = _cli(home, server, "run", "--approve", "auto", "--model", "fake-model", "--base-url",
                    server.base_url, "--cwd", str(ws), "tidy the project")
        assert done.returncode == 0, done.stderr
        sid, log = session_of(done.stdout)
        again = _cli(home, server, "run", "--approve", "auto", "--model", "fake-model", "--base-url",
                     server.base_url, "--cwd", str(ws), "--session", sid, "go on")
        shown = _cli(home, server, "show", "--json", sid)
        requests = [r.body for r in server.requests]
    assert again.returncode == 0, again.stderr
    assert shown.returncode == 0, shown.stderr
    # what ran: the model's own arguments
    assert not (ws / "risk-assessment-draft.md").exists()
    assert all((ws / name).read_text() == f"# {name}\n" for name in NEIGHBOURS)
    assert (ws / "requirements.txt").read_text() == REQUIREMENTS
    assert (ws / "app.py").read_text() == APP
    compile(APP, "app.py", "exec")
    assert (ws / "token.txt").read_text() == SECRET  # the command ran with the secret in it
    # what is logged: the same arguments, byte for byte, except the secret
    events = assert_valid_log(log)
    logged = {e.call_id: e.arguments for e in events if e.type == "tool/call"}
    assert [logged[c] for c in ("c1", "c2", "c3")] == [a for _i, _n, a in calls[:3]]
    assert json.loads(logged["c4"]) == {"command": f"printf '%s' '{MASK}' > token.txt"}
    (message,) = [e.message for e in events if e.type == "assistant/message" and e.message.tool_calls]
    assert [c.arguments for c in message.tool_calls] == [logged[c] for c in ("c1", "c2", "c3", "c4")]
    for text in (log.read_text(), shown.stdout, done.stdout, done.stderr, again.stdout, again.stderr):
        assert SECRET not in text
    # the history sent back to the model (and on resume): masked, the other calls as written
    for body in requests[1:]:
        sent = {c["id"]: c["function"]["arguments"] for m in body["messages"] for c in m.get("tool_calls") or []}
        assert sent["c1"] == calls[0][2] and sent["c2"] == calls[1][2] and sent["c3"] == calls[2][2]
        assert SECRET not in json.dumps(body)
    assert len(requests) == 3


FALSE_POSITIVES = (
    "rm -f risk-assessment-draft.md",
    "pip install flask-sqlalchemy==3.1",
    'client = OpenAI(api_key=os.environ["OPENAI_API_KEY"])',
    "OpenAI(api_key=settings.key)",
    "api_key = my_key_var",
    "api_key: str = Field(default_factory=load_key)",
    '{"api_key": "os.environ.get(\'KEY\')"}',
    "task-1234567890abcdef-queue",
    "kiosk-mode-enabled-2024-final",
    "ask-the-user-before-deleting-anything",
    "mask-rcnn-resnet50-fpn-coco-2017",
    "see sk-learn-model-selection-guide-2024",
    "Authorization: Bearer $GITHUB_TOKEN",
    "the bearer of this letter is authorised",
    "https://example.com/search?q=x&key=value&token=abc",
)
KEYS = (
    "sk-proj-Ar9sLk2Qx7Vb4Nm8Tz1Wc6YhP3dF",
    "sk-4f1c9e0b7a2d4c6e8f0a1b3c5d7e9f21",  # hex (DeepSeek)
    "sk-ant-api03-Xq7Lm2Pz9Rk4Vt1Wc8Yb6Nh3Jd5Fs0",
    "ghp_Xq7Lm2Pz9Rk4Vt1Wc8Yb6Nh3Jd5Fs0Ga2",
    "hf_Xq7Lm2Pz9Rk4Vt1Wc8Yb6Nh3Jd5Fs0Ga",
    "AKIAIOSFODNN7EXAMPLE",
)


@pytest.mark.parametrize("text", FALSE_POSITIVES)
def test_words_paths_and_identifiers_that_resemble_keys_are_left_alone(text: str) -> None:
    assert Redactor().redact(text) == text
    as_args = json.dumps({"command": text})
    assert redact_json_text(as_args) == as_args  # the model's exact bytes


@pytest.mark.parametrize("key", KEYS)
def test_keys_with_random_bodies_are_masked_at_a_word_boundary_in_every_context(key: str) -> None:
    r = Redactor()
    for text, want in ((key, MASK), (f"key={key}", f"key={MASK}"), (f'"{key}"', f'"{MASK}"'),
                       (f"export X={key}\n", f"export X={MASK}\n")):
        assert r.redact(text) == want
    assert r.redact(f"api_key={key}") == f"api_key={MASK}"
    assert r.redact(f"Authorization: Bearer {key}") == f"Authorization: Bearer {MASK}"
    glued = f"task{key}" if key.startswith("sk-") else None
    if glued:  # not at a word boundary: `task-`, `kiosk-`: not a key
        assert r.redact(glued) == glued
    assert json.loads(redact_json_text(json.dumps({"command": f"curl -H 'X-Key: {key}' x"}))) == {
        "command": f"curl -H 'X-Key: {MASK}' x"}


def test_the_stream_masks_the_same_keys_and_leaves_the_same_words_however_it_is_cut() -> None:
    text = " ".join((*FALSE_POSITIVES, *KEYS)) + " end"
    whole = redact(text)
    for step in (1, 3, 7, 64):
        s = StreamRedactor(Redactor())
        cut = "".join(s.feed(text[i:i + step]) for i in range(0, len(text), step)) + s.flush()
        assert cut == Redactor().redact(text) == whole
    assert all(f in whole for f in FALSE_POSITIVES) and not any(k in whole for k in KEYS)

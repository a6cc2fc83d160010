"""Redaction: secrets by name and by value, URL passwords, split deltas, thread safety."""

from __future__ import annotations

import threading

import pytest

from dsh_notebook.errors import ToolError, redact, register_secret
from dsh_notebook.redaction import (
    MIN_SECRET_LEN,
    Redactor,
    StreamRedactor,
    env_secrets,
    is_secret_name,
    url_password,
)


@pytest.mark.parametrize("name", ["OPENAI_API_KEY", "GITHUB_TOKEN", "client_secret", "DB_PASSWORD", "MY_PASS",
                                  "ANTHROPIC_AUTH", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID", "GCP_CREDENTIALS"])
def test_secret_names(name: str) -> None:
    assert is_secret_name(name)


@pytest.mark.parametrize("name", ["PATH", "PWD", "HOME", "LANG", "KEYBOARD_LAYOUT", "AUTHOR", "DATABASE_URL"])
def test_plain_names(name: str) -> None:
    assert not is_secret_name(name)


def test_url_with_password_is_a_secret_whatever_its_name() -> None:
    assert url_password("postgres://app:s3cretpw@db:5432/x") == "s3cretpw"
    assert url_password("https://example.com/x") is None
    assert env_secrets({"DATABASE_URL": "mysql://u:hunter22hunter@h/db", "PLAIN": "x"}) == {"hunter22hunter"}


def test_values_from_the_environment_are_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-value-0123456789")
    monkeypatch.setenv("MY_PASS", "horse-battery-staple")
    text = redact("a tok-value-0123456789 b horse-battery-staple c")
    assert text == "a *** b *** c"
    assert "horse-battery-staple" not in str(ToolError("failed: horse-battery-staple"))


def test_a_variable_set_after_a_redaction_is_masked_by_the_next(monkeypatch: pytest.MonkeyPatch) -> None:
    """The environment is read again only when it changed: a change is still seen at once."""
    assert redact("late-secret-value-42") == "late-secret-value-42"
    monkeypatch.setenv("LATE_API_KEY", "late-secret-value-42")
    assert redact("x late-secret-value-42") == "x ***"


def test_short_values_are_not_masked_by_value() -> None:
    r = Redactor()
    r.add(["x" * (MIN_SECRET_LEN - 1), "long-enough-secret"])
    assert r.redact("xxxxxxx and long-enough-secret") == "xxxxxxx and ***"


def test_key_shapes_and_url_credentials_without_registration() -> None:
    """Key shapes need a random-looking body (issue 35: `sk-abcdefghijkl` or `Bearer abcdefghijk`
    are words, not keys; tests/hardening/test_redaction_runs.py has the false positives)."""
    r = Redactor()
    out = r.redact("https://bob:pw123456@h/p?token=Zx81kQ2mPw9vLr4T&x=1 Bearer eyJhbGciOi9JIUzI1NiJ9x7Qp "
                   "sk-proj-4fT9xQ2mLp8vRz1KwY6b")
    assert out == "https://bob:***@h/p?token=***&x=1 Bearer *** ***"


def test_registered_key_is_masked() -> None:
    register_secret("registered-key-ABCDEFGH")
    assert redact("x registered-key-ABCDEFGH y") == "x *** y"


def test_a_secret_split_across_deltas_is_masked() -> None:
    r = Redactor()
    r.add(["split-secret-value-42"])
    s = StreamRedactor(r)
    pieces = [s.feed(p) for p in ("hello split-se", "cret-val", "ue-42 and more text ", "to end")]
    joined = "".join(pieces) + s.flush()
    assert joined == "hello *** and more text to end"
    assert "split-se" not in "".join(pieces)  # never shown, even in part


def test_registering_while_other_threads_redact_is_safe() -> None:
    r = Redactor()
    errors: list[BaseException] = []
    stop = threading.Event()

    def reader() -> None:
        try:
            while not stop.is_set():
                known = r.values  # registered before this redact: must be masked by it
                out = r.redact("value-0000000001")
                assert out == "***" or "value-0000000001" not in known
        except BaseException as exc:  # a "set changed size during iteration" would land here
            errors.append(exc)

    threads = [threading.Thread(target=reader) for _ in range(3)]
    for t in threads:
        t.start()
    for i in range(100):  # each add compiles the whole alternation again: 300 took 9 s beside the readers
        r.add([f"value-{i:010d}"])
    stop.set()
    for t in threads:
        t.join()
    assert errors == []
    assert len(r.values) == 100 and r.redact("value-0000000099") == "***"


def test_ordinary_text_waits_at_most_for_the_end_of_its_word() -> None:
    # issue 21: a word may begin a secret or a key shape (`sk-…`, `scheme://u:pw@`): it waits for
    # the whitespace after it, so the result does not depend on where the deltas were cut
    r = Redactor()
    r.add(["split-secret-value-42"])
    s = StreamRedactor(r)
    assert s.feed("held ") == "held "
    assert s.feed("and spl") == "and "  # "spl" may begin the secret: it waits
    assert s.feed("endid") == ""
    assert s.feed(" ok") == "splendid " and s.flush() == "ok"

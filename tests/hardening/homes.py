"""A fake ``$HOME`` full of credential-looking files in the places real tools keep them — most of
them on no list the product keeps (issue 35, finding 10: 13 of 27 stayed readable) — plus a venv
and a user site folder the sandbox must still let the interpreter read."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

# relative path -> a secret only that file holds
CREDENTIALS = {
    ".cache/huggingface/token": "SECRET-HF-01",
    ".kaggle/kaggle.json": "SECRET-KAGGLE-02",
    ".vault-token": "SECRET-VAULT-03",
    ".foo/secret": "SECRET-FOO-04",
    ".config/gcloud/application_default_credentials.json": "SECRET-GCLOUD-05",
    ".azure/msal_token_cache.json": "SECRET-AZURE-06",
    ".terraform.d/credentials.tfrc.json": "SECRET-TERRAFORM-07",
    ".docker/config.json": "SECRET-DOCKER-08",
    ".gem/credentials": "SECRET-GEM-09",
    ".m2/settings.xml": "SECRET-MAVEN-10",
    ".gradle/gradle.properties": "SECRET-GRADLE-11",
    ".composer/auth.json": "SECRET-COMPOSER-12",
    ".pulumi/credentials.json": "SECRET-PULUMI-13",
    ".oci/config": "SECRET-OCI-14",
    ".databrickscfg": "SECRET-DATABRICKS-15",
    ".sbt/credentials": "SECRET-SBT-16",
    ".ivy2/.credentials": "SECRET-IVY-17",
    ".s3cfg": "SECRET-S3CFG-18",
    ".pgpass": "SECRET-PGPASS-19",
    ".netrc": "SECRET-NETRC-20",
    ".npmrc": "SECRET-NPMRC-21",
    ".yarnrc.yml": "SECRET-YARN-22",
    ".pypirc": "SECRET-PYPIRC-23",
    ".git-credentials": "SECRET-GITCRED-24",
    ".ssh/id_ed25519": "SECRET-SSH-25",
    ".aws/credentials": "SECRET-AWS-26",
    ".local/share/keyrings/login.keyring": "SECRET-KEYRING-27",
    ".mozilla/firefox/p.default/logins.json": "SECRET-FIREFOX-28",
    ".password-store/mail.gpg": "SECRET-PASS-29",
    ".bashrc": "export OPENAI_API_KEY=SECRET-BASHRC-30",
    ".random-tool/nested/deep/token.json": "SECRET-RANDOM-31",
    ".local/share/some-app/session.db": "SECRET-APPDATA-32",
    "Documents/passwords.txt": "SECRET-DOCS-33",
    "notes.txt": "SECRET-NOTES-34",
}
# non-dot files of the home: workspace content when the workspace is the home itself
PLAIN = {"Documents/passwords.txt", "notes.txt"}
PROBE_MODULE = "dshprobe_sitepkg"


@contextmanager
def outside_tmp_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A fake ``$HOME`` in ``/var/tmp`` — not under ``/tmp``, which the sandbox hides whole (a home
    there would pass for the wrong reason) — that a normal user can enter, with ``$DSH_HOME``
    inside it as ``~/.dsh`` would be, and a project folder."""
    top = Path(tempfile.mkdtemp(prefix="dsh-fakehome-", dir="/var/tmp"))
    top.chmod(0o755)
    home = top / "home"
    (home / "proj").mkdir(parents=True)
    (home / ".dsh" / "sessions").mkdir(parents=True)
    (home / ".dsh" / "sessions" / "s_other.jsonl").write_text("SECRET-OTHERLOG\n")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("DSH_HOME", str(home / ".dsh"))
    for var in ("JUPYTER_RUNTIME_DIR", "JUPYTER_DATA_DIR", "IPYTHONDIR", "XDG_DATA_HOME", "XDG_CONFIG_HOME",
                "DSH_SANDBOX_READ", "DSH_POLICY_FILE"):
        monkeypatch.delenv(var, raising=False)
    try:
        yield home
    finally:
        shutil.rmtree(top, ignore_errors=True)


def plant(home: Path) -> None:
    for rel, text in CREDENTIALS.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text + "\n")


def make_venv(home: Path) -> Path:
    """A real venv under the home (``python -m venv``, no pip: fast; on the system's Python, which
    every user can run), and a user-site-like folder with a module of its own."""
    venv = home / ".venvs" / "tool"
    base = "/usr/bin/python3" if os.path.exists("/usr/bin/python3") else os.path.join(sys.base_prefix, "bin", "python3")
    subprocess.run([base, "-m", "venv", "--without-pip", str(venv)],
                   check=True, capture_output=True, env={"PATH": os.environ.get("PATH", "/usr/bin:/bin")})
    site = home / ".local" / "lib" / "dshprobe" / "site-packages"
    site.mkdir(parents=True)
    (site / f"{PROBE_MODULE}.py").write_text("ANSWER = 42\n")
    return venv


def read_everything(home: Path) -> str:
    """A shell script that tries every credential by name and by search, then says where it got."""
    names = " ".join(f"'{home / rel}'" for rel in CREDENTIALS)
    return "\n".join([
        f"for f in {names}; do cat \"$f\" 2>/dev/null; done",
        f"find '{home}' -type f 2>/dev/null | head -2000 | xargs -d '\\n' cat 2>/dev/null",
        f"grep -rah SECRET '{home}' 2>/dev/null | head -50",
        "echo end-of-reading",
    ])


def leaked(out: str, allowed: set[str] = frozenset()) -> list[str]:  # type: ignore[assignment]
    """The credentials whose secret appears in ``out`` (``allowed``: relative paths meant to be seen)."""
    return [rel for rel, text in CREDENTIALS.items() if rel not in allowed and text.split("=")[-1] in out]

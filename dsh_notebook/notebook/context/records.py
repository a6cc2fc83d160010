"""Which session a notebook talks to, remembered across kernel restarts (``%dsh resume``).

Every time a session becomes a notebook's current one (a prompt is accepted, ``%dsh resume ID``)
its id is written to ``$DSH_HOME/notebooks.json`` under the notebook's key: the path of the
``.ipynb`` the front end named (``JPY_SESSION_NAME``), else ``cwd:<the kernel's working
directory>``. After a restart, ``%dsh resume`` without an ID resumes that session — so a notebook
"says" it continues its conversation by holding a ``%dsh resume`` cell. The file is small JSON,
written atomically with mode 0600; a broken file reads as empty.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

FILE = "notebooks.json"


def notebook_key() -> str:
    name = os.environ.get("JPY_SESSION_NAME")
    if name:
        return str(Path(name).expanduser().resolve())
    return f"cwd:{Path.cwd().resolve()}"


def _load(home: Path) -> dict[str, str]:
    try:
        data = json.loads((home / FILE).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return {str(k): str(v) for k, v in data.items()} if isinstance(data, dict) else {}


def recorded_session(home: Path, key: str | None = None) -> str | None:
    return _load(home).get(key or notebook_key())


def record_session(home: Path, session_id: str, key: str | None = None) -> None:
    key = key or notebook_key()
    data = _load(home)
    if data.get(key) == session_id:
        return
    data[key] = session_id
    home.mkdir(parents=True, exist_ok=True)
    tmp = home / f".{FILE}.{os.getpid()}.tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        json.dump(data, f, indent=1, sort_keys=True)
    os.replace(tmp, home / FILE)

"""Issue 35's checkpoint findings as attacks on real processes: a hostile ``.gitignore`` line
(finding 5), a workspace that is ``$HOME`` (6), a racing process swapping a folder for a symlink
(8), a full disk (12), a ``run`` started while the CLI rewinds (the lock)."""

from __future__ import annotations

import ctypes
import fcntl
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import termios
import time
from pathlib import Path

import pytest

from dsh_notebook.checkpoint.store import CheckpointStore
from tests.checkpoint.support import ROOT, Turns, cli

PATHOLOGICAL = "*a*a*a*a*a*a*a*a*b\n"
COLD = [sys.executable, "-m", "dsh_notebook"]


def _env(home: Path, **extra: str) -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "DSH_HOME": str(home), **extra}


def _hostile_repo(ws: Path) -> None:
    ws.mkdir(parents=True)
    (ws / ".gitignore").write_text(PATHOLOGICAL)
    (ws / ("a" * 199 + "c")).write_text("not ignored\n")
    (ws / ("a" * 199 + "b")).write_text("ignored\n")


CHECKPOINT = r"""
import sys
from dsh_notebook.checkpoint.store import CheckpointStore
snap = CheckpointStore(sys.argv[2]).take(sys.argv[1])
print(sorted(snap.listing))
"""


def test_a_pathological_gitignore_line_is_matched_in_linear_time(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _hostile_repo(ws)
    for depth in range(3):  # the same name below folders: the any-depth prefix, tried at each
        (ws / "/".join(["a" * 60] * (depth + 1))).mkdir(parents=True, exist_ok=True)
        (ws / "/".join(["a" * 60] * (depth + 1)) / ("a" * 150 + "c")).write_text("x")
    try:
        done = subprocess.run([sys.executable, "-c", CHECKPOINT, str(ws), str(tmp_path / "home")], capture_output=True,
                              text=True, timeout=120, env=_env(tmp_path / "home"), check=False)
    except subprocess.TimeoutExpired:
        pytest.fail("the checkpoint did not end: the ignore pattern backtracks")
    listed = done.stdout
    assert done.returncode == 0, done.stderr
    assert "a" * 199 + "c" in listed and "a" * 199 + "b" not in listed


@pytest.mark.parametrize(("sig", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_run_answers_sigint_while_the_pathological_gitignore_is_in_its_workspace(tmp_path: Path, sig: int,
                                                                                  code: int) -> None:
    ws = tmp_path / "ws"
    _hostile_repo(ws)
    home = tmp_path / "home"
    listener = socket.create_server(("127.0.0.1", 0))  # a model that accepts and never answers
    listener.settimeout(60)
    port = listener.getsockname()[1]
    proc = subprocess.Popen([*COLD, "run", "--quiet", "--cwd", str(ws), "--model", "openai:m", "--base-url",
                             f"http://127.0.0.1:{port}/v1", "hello"], env=_env(home, DSH_API_KEY="k"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        try:
            conn, _ = listener.accept()  # the checkpoint is done: the first request is on its way
        except TimeoutError:
            conn = None  # still checkpointing: SIGINT must be answered all the same
        deadline = time.monotonic() + 30
        while conn is not None and time.monotonic() < deadline and not any(
                "checkpoint/taken" in p.read_text() for p in (home / "sessions").glob("*.jsonl")):
            time.sleep(0.02)  # the log is flushed before the request: wait for it to be on disk
        proc.send_signal(sig)
        try:
            # answered = the turn ends (its closing checkpoint scans the hostile workspace again: seconds
            # alone, far more beside the whole suite on 2 cores); a regex holding the GIL never ends
            out, err = proc.communicate(timeout=180)
        except subprocess.TimeoutExpired:
            pytest.fail(f"{signal.Signals(sig).name} was not answered: the process is stuck (a regex holding the GIL)")
        if conn is not None:
            conn.close()
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        listener.close()
    assert proc.returncode == code, err
    logs = list((home / "sessions").glob("*.jsonl"))
    types = [json.loads(line).get("type") for line in logs[0].read_text().splitlines()[1:]]
    assert "checkpoint/taken" in types and types[-1] == "turn/end", types


@pytest.fixture
def home_workspace(tmp_path: Path) -> Path:
    home = tmp_path / "user"
    for rel, text in {".ssh/id_rsa": "SECRET-SSH-KEY", ".aws/credentials": "SECRET-AWS", "notes.txt": "mine\n",
                      "proj/main.py": "print(1)\n"}.items():
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text(text)
    return home


def test_a_workspace_that_is_home_never_snapshots_dsh_home_or_secrets(home_workspace: Path) -> None:
    home = home_workspace
    env = {"HOME": str(home), "DSH_HOME": str(home / ".dsh"), "DSH_TEST_COLD": "1"}
    first = cli("run", "--quiet", "--approve", "auto", "--cwd", str(home), "--model", "script:auto", "hello", env=env)
    assert first.returncode == 0, first.stderr
    sid = first.stdout.strip().splitlines()[-1].split()[1]
    second = cli("run", "--quiet", "--approve", "auto", "--session", sid, "--model", "script:auto", "hello", env=env)
    assert second.returncode == 0, second.stderr
    (home / "later.txt").write_text("made after the turns\n")
    store = CheckpointStore(home / ".dsh")
    snaps = [p.stem for p in (store.root / "snapshots").iterdir()]
    listed = {p for s in snaps for p in store.listing(s)}
    assert "notes.txt" in listed and "proj/main.py" in listed
    assert not [p for p in listed if p.startswith((".dsh", ".ssh", ".aws"))], sorted(listed)
    blobs = [p.read_bytes() for p in (store.root / "blobs").rglob("*") if p.is_file()]
    assert not [b for b in blobs if b"SECRET-" in b]
    own = sorted(p for p in (home / ".dsh").rglob("*") if p.is_file())
    done = cli("rewind", sid, "--to-turn", "2", "--force", env=env)  # later.txt goes; the store stays whole
    assert done.returncode == 0, done.stdout + done.stderr
    assert not (home / "later.txt").exists()
    assert all(p.exists() for p in own), [str(p) for p in own if not p.exists()]
    assert (home / ".ssh" / "id_rsa").read_text() == "SECRET-SSH-KEY"
    again = cli("rewind", sid, "--to-turn", "1", env=env)
    assert again.returncode == 0, again.stdout + again.stderr
    assert cli("checkpoints", sid, env=env).returncode == 0


def _session_with_many_files(home: Path, ws: Path, count: int) -> str:
    """A session whose turn 1 deleted ``count`` files: its log built with the real writer, its
    checkpoints with the real store."""
    from dsh_notebook.session.store import SessionStore

    (ws / "data").mkdir(parents=True)
    for i in range(count):
        (ws / "data" / f"file-{i:04d}.txt").write_text(f"content {i}\n")
    store, sessions = CheckpointStore(home), SessionStore(home)
    session = sessions.create(str(ws))
    turns = Turns(store, ws)
    turns.start(1)
    shutil.rmtree(ws / "data")
    turns.end(1)
    for event in turns.events:
        session.append(event.model_copy(update={"seq": -1}))  # type: ignore[attr-defined]
    sessions.close(session.id)
    return session.id


def test_a_run_started_during_a_cli_rewind_is_session_busy(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    sid = _session_with_many_files(home, ws, 300)
    read, write = os.pipe()
    fcntl.fcntl(write, fcntl.F_SETPIPE_SZ, 4096)  # its lines fill the pipe: the rewind waits, mid-way
    size = fcntl.fcntl(write, fcntl.F_GETPIPE_SZ)
    proc = subprocess.Popen([*COLD, "rewind", sid, "--to-turn", "1"], env=_env(home), stdout=write,
                            stderr=subprocess.PIPE)
    os.close(write)
    try:
        deadline = time.monotonic() + 120
        while True:  # wait until the rewind is blocked writing to the full pipe
            buf = ctypes.c_int()
            fcntl.ioctl(read, termios.FIONREAD, buf)
            if buf.value >= size:
                break
            assert proc.poll() is None, "the rewind ended without filling its output"
            assert time.monotonic() < deadline, "the rewind never filled its output"
            time.sleep(0.01)
        run = cli("run", "--quiet", "--session", sid, "--model", "script:auto", "hello", env={"DSH_HOME": str(home)})
        assert run.returncode != 0 and "SESSION_BUSY" in run.stderr, run.stdout + run.stderr
    finally:
        out = b""
        while chunk := os.read(read, 65536):
            out += chunk
        os.close(read)
        proc.wait(timeout=120)
    assert proc.returncode == 0, proc.stderr.read() if proc.stderr else ""
    assert len(list((ws / "data").iterdir())) == 300 and out.count(b"restore ") == 300


RACER = r"""
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
a, b, stop = (p.encode() for p in sys.argv[1:4])
AT_FDCWD, RENAME_EXCHANGE = -100, 2
print("racing", flush=True)
while not os.path.exists(stop):
    libc.renameat2(AT_FDCWD, a, AT_FDCWD, b, RENAME_EXCHANGE)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="renameat2 (Linux)")
def test_a_folder_swapped_for_a_symlink_by_a_racing_process_writes_nothing_outside(tmp_path: Path) -> None:
    ws, outside, home = tmp_path / "ws", tmp_path / "root-only", tmp_path / "home"
    outside.mkdir(mode=0o700)
    (ws / "sub").mkdir(parents=True)
    for i in range(200):
        (ws / "sub" / f"f{i:03d}.txt").write_text(f"original {i}\n")
    store = CheckpointStore(home)
    turns = Turns(store, ws)
    turns.start(1)
    for i in range(200):
        (ws / "sub" / f"f{i:03d}.txt").unlink()
    turns.end(1)
    os.symlink(outside, ws / "swap")
    stop = tmp_path / "stop"
    racer = subprocess.Popen([sys.executable, "-c", RACER, str(ws / "sub"), str(ws / "swap"), str(stop)],
                             stdout=subprocess.PIPE, text=True)
    assert racer.stdout is not None and racer.stdout.readline().strip() == "racing"
    from dsh_notebook.checkpoint.rewind import rewind_files

    try:
        outcomes = []
        for _ in range(3):  # each rewind writes 200 files into sub/ while sub and the symlink swap places
            tl = turns.timeline()
            fr = rewind_files(store, tl, 1, force=True)  # type: ignore[arg-type]
            outcomes.append(fr)
            assert os.listdir(outside) == [], f"written outside the workspace: {os.listdir(outside)[:5]}"
            for p in ws.rglob("*.txt"):
                if not p.is_symlink():
                    p.unlink()
    finally:
        stop.touch()
        racer.wait(timeout=60)
    assert os.listdir(outside) == []
    for fr in outcomes:  # all or nothing: a rewind the race broke says so, with the path's code
        assert fr.rolled_back or not fr.failed, fr.failed
        assert not fr.rolled_back or any("CHECKPOINT_UNSAFE_PATH" in why or "IO_ERROR" in why for _, why in fr.failed)


FULL_DISK = r"""
import os, sys
home = sys.argv[1]
with open(os.path.join(home, "filler"), "wb") as f:   # leave ~96 KiB: room for a log, not for the blob
    try:
        while True:
            f.write(b"x" * 16384)
            f.flush()
    except OSError:
        pass
os.truncate(os.path.join(home, "filler"), os.path.getsize(os.path.join(home, "filler")) - 96 * 1024)
sys.argv = ["dsh", "run", "--quiet", "--approve", "auto", "--cwd", sys.argv[2], "--model", "script:auto", "hello"]
from dsh_notebook.cli import main
sys.exit(main(sys.argv[1:]))
"""


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None, reason="needs root and unshare -m")
def test_a_full_disk_during_a_checkpoint_loses_no_event_and_leaves_no_temp_file(tmp_path: Path) -> None:
    home, ws = tmp_path / "home", tmp_path / "ws"
    home.mkdir()
    ws.mkdir()
    (ws / "big.bin").write_bytes(os.urandom(2 * 1024 * 1024))  # its blob cannot fit
    (ws / "small.txt").write_text("small\n")
    shell = f'mount -t tmpfs -o size=1m dsh-full "{home}" && "$0" -c "$1" "{home}" "{ws}"; rc=$?; ' \
            f'find "{home}" -name "*.tmp" -printf "TMP %p\\n"; for f in "{home}"/sessions/*.jsonl; do ' \
            'echo "LOG $f"; cat "$f"; done; exit $rc'
    done = subprocess.run(["unshare", "-m", "--propagation", "private", "sh", "-c", shell, sys.executable, FULL_DISK],
                          capture_output=True, text=True, timeout=180, check=False, env=_env(home))
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    assert "TMP " not in done.stdout, done.stdout
    log = done.stdout.split("LOG ", 1)[1].splitlines()[2:]
    events = [json.loads(line) for line in log if line.startswith("{")]
    types = [e["type"] for e in events]
    assert "turn/start" in types and types[-1] == "turn/end", types
    assert events[-1]["reason"]["kind"] == "completed"
    failed = [e for e in events if e["type"] == "checkpoint/failed"]
    assert failed and failed[0]["code"] == "DISK_FULL" and failed[0]["phase"] == "start", failed
    assert done.returncode == 0, done.stderr[-2000:]
    warnings = [ln for ln in done.stderr.splitlines() if "checkpoint" in ln]
    assert warnings and all("DISK_FULL" in w for w in warnings), done.stderr


def test_each_rewind_failure_carries_its_own_code(tmp_path: Path) -> None:
    """Issue 35 (low): every rewind failure said CHECKPOINT_BLOB_MISSING, unsafe paths included."""
    home, ws = tmp_path / "home", tmp_path / "ws"
    sid = _session_with_many_files(home, ws, 3)
    store = CheckpointStore(home)
    log = [json.loads(line) for line in (home / "sessions" / f"{sid}.jsonl").read_text().splitlines()[1:]]
    start = next(e["snapshot"] for e in log if e["type"] == "checkpoint/taken")
    path = store.root / "snapshots" / f"{start}.json"
    doc = json.loads(path.read_text())
    sha, _ = store.put_blob(b"evil\n")
    doc["files"]["../evil.txt"] = ["f", 0o644, 5, sha, None, None]  # a tampered snapshot
    path.write_text(json.dumps(doc))
    done = cli("rewind", sid, "--to-turn", "1", env={"DSH_HOME": str(home)})
    assert done.returncode == 2 and "[CHECKPOINT_UNSAFE_PATH]" in done.stderr and "../evil.txt" in done.stderr, done.stderr
    assert not (tmp_path / "evil.txt").exists() and len(list((ws / "data").iterdir())) == 3
    store.blob_path(store.listing(start)["data/file-0000.txt"].sha or "").unlink()
    doc["files"].pop("../evil.txt")
    path.write_text(json.dumps(doc))
    shutil.rmtree(ws / "data")
    again = cli("rewind", sid, "--to-turn", "1", "--force", env={"DSH_HOME": str(home)})
    assert again.returncode == 2 and "[CHECKPOINT_BLOB_MISSING]" in again.stderr and "data/file-0000.txt" in again.stderr

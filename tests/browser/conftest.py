"""Fixtures for end-to-end tests in real JupyterLab + Debian's headless Chromium (Playwright).

A throw-away JupyterLab on a free 127.0.0.1 port with every Jupyter directory isolated
(settings per the recipe's pitfalls: no autosave, no news toast, app exposed for run-all), its
kernels importing this checkout, ``DSH_HOME`` in a temp dir; one Chromium for the session and
one page per test. Screenshots go to ``tests/browser/artifacts/`` (git-ignored).
Skipped when ``/usr/bin/chromium`` or the built widget bundle is missing.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = Path(__file__).resolve().parent / "artifacts"
CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
# A notebook's first line for a test that watches a scripted answer arrive (the suite's processes
# run the scripted model without a pace, tests/conftest.py): the default pace, a class's view
CLASSROOM_PACE = "import os; os.environ['DSH_SCRIPT_PACE'] = '0.02'"
CHROME_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
               "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TOKEN = "dshtesttoken"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Lab:
    def __init__(self, url: str, root: Path, token: str, home: Path) -> None:
        self.url, self.root, self.token, self.home = url, root, token, home

    def api(self, path: str, method: str = "GET") -> Any:
        req = urllib.request.Request(f"{self.url}{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req) as r:
            body = r.read()
        return json.loads(body) if body else None

    def shutdown_sessions(self) -> None:
        for s in self.api("/api/sessions"):
            self.api(f"/api/sessions/{s['id']}", method="DELETE")

    def shutdown_kernels(self) -> None:
        """Every session's and every other kernel shut down (the REST API waits for each)."""
        self.shutdown_sessions()
        for k in self.api("/api/kernels"):
            self.api(f"/api/kernels/{k['id']}", method="DELETE")

    def write_notebook(self, name: str, *cells: str) -> str:
        import nbformat
        from nbformat.v4 import new_code_cell, new_notebook

        nb = new_notebook(cells=[new_code_cell(c) for c in cells], metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3 (ipykernel)", "language": "python"}})
        nbformat.write(nb, self.root / name)
        return name


SERVER_FLAGS = {
    "lab": ("jupyterlab", ["--LabApp.extension_manager=readonly", "--LabApp.news_url=None",
                           "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                           "--LabApp.expose_app_in_browser=True"]),
    # Notebook 7 (``jupyter notebook``): the same front-end settings dir, its own app flags
    "notebook": ("notebook", ["--JupyterNotebookApp.expose_app_in_browser=True"]),
}


@contextlib.contextmanager
def launch_server(base: Path, app: str = "lab") -> Iterator[Lab]:
    """Start an isolated JupyterLab (``app="lab"``) or Notebook 7 (``app="notebook"``) under
    ``base`` (root, state, DSH_HOME); stop it on exit."""
    root, state, home = base / "root", base / "state", base / "dsh_home"
    root.mkdir(parents=True, exist_ok=True)
    settings = state / "settings" / "@jupyterlab"
    (settings / "apputils-extension").mkdir(parents=True, exist_ok=True)
    (settings / "docmanager-extension").mkdir(parents=True, exist_ok=True)
    (settings / "apputils-extension" / "notification.jupyterlab-settings").write_text(
        '{"fetchNews": "false", "checkForUpdates": false}')
    (settings / "docmanager-extension" / "plugin.jupyterlab-settings").write_text('{"autosave": false}')
    # no language-server extension: it scans for 19 language servers in the background (seconds of
    # CPU at start, and the server's shutdown waited for the scan); no test uses it
    (state / "config").mkdir(parents=True, exist_ok=True)
    (state / "config" / "jupyter_server_config.json").write_text(
        json.dumps({"ServerApp": {"jpserver_extensions": {"jupyter_lsp": False,
                                                           # as the wheel enables it (issue 41's MCP server)
                                                           "dsh_notebook": True}}}))
    if os.environ.get("LAB_COMMS_OVER_SUBSHELLS"):
        (settings / "apputils-extension" / "kernels-settings.jupyterlab-settings").write_text(
            json.dumps({"commsOverSubshells": os.environ["LAB_COMMS_OVER_SUBSHELLS"]}))
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY") and k not in ("DSH_MODEL", "DSH_BASE_URL")}
    # this package's JupyterLab extension, where the wheel puts it (share/jupyter/labextensions), when
    # `cd labextension && npm run build` built it
    built = REPO / "dsh_notebook" / "labextension"
    if (built / "package.json").exists():
        link = state / "data" / "labextensions" / "dsh-notebook-lab"
        link.parent.mkdir(parents=True, exist_ok=True)
        if not link.is_symlink():
            link.symlink_to(built, target_is_directory=True)
        env["JUPYTER_PATH"] = os.pathsep.join([str(state / "data"), env.get("JUPYTER_PATH", "")]).rstrip(os.pathsep)
    env.update(JUPYTER_CONFIG_DIR=str(state / "config"), JUPYTER_RUNTIME_DIR=str(state / "runtime"),
               JUPYTERLAB_SETTINGS_DIR=str(state / "settings"), JUPYTERLAB_WORKSPACES_DIR=str(state / "workspaces"),
               IPYTHONDIR=str(state / "ipython"), JUPYTER_PLATFORM_DIRS="1", DSH_HOME=str(home),
               PYTHONPATH=os.pathsep.join([str(REPO), env.get("PYTHONPATH", "")]).rstrip(os.pathsep))
    module, flags = SERVER_FLAGS[app]
    for attempt in range(3):  # a port another worker's server took between our probe and its bind
        port = _free_port()
        log_path = base / f"{app}-{attempt}.log"
        with open(log_path, "w") as log:
            # port_retries=0: a taken port fails the start instead of moving it to a port we don't know
            # (two servers run side by side under ``-n 2``)
            proc = subprocess.Popen(
                [sys.executable, "-m", module, "--no-browser", f"--port={port}", "--ip=127.0.0.1",
                 "--ServerApp.port_retries=0", f"--IdentityProvider.token={TOKEN}", f"--ServerApp.root_dir={root}",
                 "--allow-root", *flags],
                env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            url = f"http://127.0.0.1:{port}"
            if not _wait_ready(proc, url, log_path, app):
                continue
            lab = Lab(url, root, TOKEN, home)
            yield lab
            # the kernels first, through the API (each shut down cleanly); then the server is killed:
            # its own SIGTERM shutdown takes 7-15 s of nothing to stop
            with contextlib.suppress(OSError):
                lab.shutdown_kernels()
            return
        finally:
            proc.kill()
            proc.wait(timeout=20)
    raise RuntimeError(f"jupyter {app} did not start on a free port; see {base}/{app}-*.log")


def _wait_ready(proc: subprocess.Popen[bytes], url: str, log_path: Path, app: str) -> bool:
    """True once the server answers; False when it exited because its port was taken."""
    deadline = time.time() + 90
    while True:
        try:
            urllib.request.urlopen(f"{url}/api/status?token={TOKEN}").close()
            return True
        except OSError:
            if proc.poll() is not None:
                if "is already in use" in log_path.read_text(errors="replace"):
                    return False
                raise RuntimeError(f"jupyter {app} did not start; see {log_path}") from None
            if time.time() > deadline:
                raise RuntimeError(f"jupyter {app} did not start; see {log_path}") from None
            time.sleep(0.25)


def launch_lab(base: Path) -> contextlib.AbstractContextManager[Lab]:
    return launch_server(base, "lab")


def skip_reason() -> str | None:
    if not shutil.which(CHROMIUM):
        return f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    if not (REPO / "dsh_notebook" / "static" / "widget.js").exists():
        return "widget bundle not built (make widget)"
    return None


@pytest.fixture(scope="session")
def lab(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    with launch_lab(tmp_path_factory.mktemp("lab")) as lab:
        yield lab


@pytest.fixture(scope="session")
def nb7(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Lab]:
    """A Notebook 7 server (``jupyter notebook``), isolated like ``lab``."""
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    pytest.importorskip("notebook", minversion="7", reason="Notebook 7 not installed (pip install 'notebook>=7')")
    with launch_server(tmp_path_factory.mktemp("nb7"), "notebook") as server:
        yield server


@pytest.fixture(scope="session")
def browser() -> Iterator[Any]:
    reason = skip_reason()
    if reason:
        pytest.skip(reason)
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROME_ARGS)
        yield b
        b.close()


def _page(browser: Any, server: Lab, request: pytest.FixtureRequest) -> Iterator[Any]:
    ARTIFACTS.mkdir(exist_ok=True)
    pg = browser.new_page(viewport={"width": 1280, "height": 1500})
    errors: list[str] = []
    pg.on("pageerror", lambda e: errors.append(str(e)))
    pg.page_errors = errors
    yield pg
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        pg.screenshot(path=str(ARTIFACTS / f"failure-{request.node.name}.png"))
    pg.close()
    server.shutdown_sessions()


@pytest.fixture
def page(browser: Any, lab: Lab, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A page on the JupyterLab server; its kernels are shut down afterwards."""
    yield from _page(browser, lab, request)


@pytest.fixture
def nb7_page(browser: Any, nb7: Lab, request: pytest.FixtureRequest) -> Iterator[Any]:
    """A page on the Notebook 7 server; its kernels are shut down afterwards."""
    yield from _page(browser, nb7, request)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: Any) -> Iterator[None]:
    rep = (yield).get_result()  # type: ignore[attr-defined]
    setattr(item, f"rep_{rep.when}", rep)


# ---------- helpers ------------------------------------------------------------------------------

KERNEL_IDLE_JS = """() => {
    const ei = document.querySelector('.jp-NotebookPanel .jp-Notebook-ExecutionIndicator');
    const sb = [...document.querySelectorAll('.jp-StatusBar-TextItem')]
                 .map(e => e.textContent).find(t => t.includes(' | '));
    return ei && ei.dataset.status === 'idle' && sb && !sb.startsWith('No Kernel') && sb.endsWith('| Idle');
}"""


def open_notebook(page: Any, lab: Lab, name: str) -> None:
    page.goto(f"{lab.url}/lab/tree/{name}?token={lab.token}&reset")
    page.wait_for_selector(".jp-NotebookPanel .jp-Cell", timeout=60_000)
    page.wait_for_function(KERNEL_IDLE_JS, timeout=60_000)


def run_all_cells(page: Any) -> None:
    # fire and forget: returning the promise would make evaluate() wait for every cell
    page.evaluate("() => { window.jupyterapp.commands.execute('notebook:run-all-cells'); }")


def loop_widget(lab: Lab, page: Any, name: str, model: str) -> Any:
    """A notebook ``name`` that shows a loop widget on ``model`` (tools approved), opened and run:
    the widget's locator once it is drawn."""
    open_notebook(page, lab, lab.write_notebook(name, "%load_ext dsh_notebook",
                                                "from dsh_notebook.notebook.widgets import LoopWidget\n"
                                                f"w = LoopWidget(model={model!r}, approve='auto')\nw"))
    run_all_cells(page)
    loop = page.locator(".dsh-loop").first
    loop.wait_for(timeout=60_000)
    return loop


def inspector_view(lab: Lab, page: Any, name: str, cells: tuple[str, ...], view: str) -> tuple[Any, Any]:
    """A notebook ``name`` of ``cells`` whose first output is a session inspector, opened and run;
    its ``view`` (``timeline``, ``waterfall``: hidden at first) shown by its toggle. The inspector's
    locator once its rows are drawn, and the view's."""
    open_notebook(page, lab, lab.write_notebook(name, *cells))
    run_all_cells(page)
    insp = page.locator(".dsh-inspector").first
    first_rows(insp)
    panel = insp.locator(f".dsh-{view}")
    assert not panel.is_visible()
    insp.locator(f".dsh-f-{view}").click()
    panel.wait_for(state="visible", timeout=5_000)
    return insp, panel


def first_rows(widget: Any, rows: str = ".dsh-row", timeout: float = 120.0) -> None:
    """Wait until ``widget`` (an inspector's or a loop widget's locator) draws its first ``rows``,
    or says why it cannot: an error box showing a coded error fails at once with its text (a log
    the widget cannot read shows that in seconds; waiting for rows would wait for ever)."""
    error = widget.locator(".dsh-error:visible")

    def state() -> str | None:
        if widget.locator(rows).count():
            return "rows"
        shown = (error.first.text_content() or "") if error.count() else ""
        return shown if shown and not shown.startswith("note:") else None

    got = wait_until(state, timeout=timeout, what=f"the widget's first {rows}")
    if got != "rows":
        raise AssertionError(f"no rows: the widget shows the error {got!r}")


def wait_until(fn: Callable[[], Any], timeout: float = 30.0, every: float = 0.05, what: str = "condition") -> Any:
    t0 = time.time()
    while time.time() - t0 < timeout:
        v = fn()
        if v:
            return v
        time.sleep(every)
    raise AssertionError(f"{what}: not met within {timeout}s")


# An element's box unchanged for ten animation frames in a row (false after 600 frames).
STILL_JS = """(el) => new Promise((resolve) => {
  let last = '', same = 0, frames = 0;
  const tick = () => {
    const r = el.getBoundingClientRect(), k = `${r.left},${r.top},${r.width},${r.height}`;
    same = k === last ? same + 1 : 0; last = k; frames += 1;
    if (same >= 10) resolve(true); else if (frames > 600) resolve(false); else requestAnimationFrame(tick);
  };
  requestAnimationFrame(tick);
})"""


def click_when_still(locator: Any) -> None:
    """Click ``locator`` once it has stopped moving. Playwright scrolls an element into view and
    presses at once; in JupyterLab's windowed notebook that scroll brings cells into view whose
    measured heights then move the element (by 450 px, 25 ms after the scroll, in a traced run), so
    the press and the release land on different nodes and Chromium sends the click to their common
    ancestor: lost. Scroll first, wait until its box keeps still, then click."""
    locator.scroll_into_view_if_needed()
    assert locator.evaluate(STILL_JS), "the element never kept its place for ten frames"
    locator.click()


# ---------- waits on the page's state (no test waits a fixed time) --------------------------------

FRAMES_JS = "(n) => new Promise((done) => { const on = (k) => (k ? requestAnimationFrame(() => on(k - 1)) : done()); on(n); })"

# Resolves true once the element (or, without one, the document) has looked the same for `frames`
# animation frames in a row and no CSS transition or finite animation runs in it: a render done,
# a ResizeObserver's class applied, a scroller at rest, a theme's colours no longer fading. The
# widgets render on animation frames, so a frame is the unit of "done". False after ~10 s of frames.
SETTLE_JS = """async (el, frames) => {
  const frame = () => new Promise((r) => requestAnimationFrame(() => r()));
  const running = () => (el ? el.getAnimations({subtree: true}) : document.getAnimations()).some((a) =>
    (a.playState === 'running' || a.pending) && a.effect && a.effect.getComputedTiming().iterations !== Infinity);
  const scrollers = '.dsh-diagram-scroll, .dsh-history, .dsh-vlist, [role=tablist], .jp-WindowedPanel-outer';
  const sig = () => {
    if (!el) return [document.body.dataset.jpThemeName, getComputedStyle(document.body).getPropertyValue('--jp-layout-color0')].join('|');
    const r = el.getBoundingClientRect();
    const parts = [r.left, r.top, r.width, r.height, el.scrollLeft, el.scrollTop, el.scrollWidth, el.scrollHeight,
                   el.dataset.pane || '', el.getElementsByTagName('*').length, el.textContent.length];
    for (const s of el.querySelectorAll(scrollers)) parts.push(s.scrollLeft, s.scrollTop);
    return parts.join('|');
  };
  let last = null, same = 0;
  for (let i = 0; i < 600; i++) {
    await frame();
    const now = sig();
    same = now === last && !running() ? same + 1 : 0;
    if (same >= frames) return true;
    last = now;
  }
  return false;
}"""


def frames(page: Any, n: int = 2) -> None:
    """Wait for ``n`` animation frames of the page: whatever a key or a click scheduled for the next
    render (the widgets render on animation frames) has been drawn."""
    page.evaluate(FRAMES_JS, n)


def settle(target: Any, frames: int = 2) -> None:
    """Wait until ``target`` (a locator, or a page for the whole document) is at rest: see SETTLE_JS."""
    if hasattr(target, "evaluate_all"):  # a locator: its first element
        done = target.first.evaluate(SETTLE_JS, frames)
    else:
        done = target.evaluate(f"(frames) => ({SETTLE_JS})(null, frames)", frames)
    assert done, "the page did not come to rest within ~10 s of animation frames"


def set_theme(page: Any, theme: str) -> None:
    """Switch JupyterLab's theme and wait until its colours are applied everywhere (the theme's CSS
    loaded — JupyterLab says so on ``body`` — and no colour transition still running)."""
    page.evaluate("(t) => window.jupyterapp.commands.execute('apputils:change-theme', {theme: t})", theme)
    light = "true" if theme.endswith("Light") else "false"
    page.wait_for_function("(light) => document.body.dataset.jpThemeLight === light", arg=light, timeout=20_000)
    settle(page)


def click_until(target: Any, done: Callable[[], bool], what: str, timeout: float = 10.0) -> None:
    """Click ``target`` until ``done()``. The widgets re-render on animation frames and a render may
    replace the element a click lands on (the click is then lost): after each click the page draws
    its next frames before ``done()`` is asked again."""
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: not reached by clicking within {timeout}s")
        target.first.click()
        frames(target.page, 2)


def is_done(prompt: str | None) -> bool:
    return re.fullmatch(r"\[\d+\]:", prompt or "") is not None


def shot(page: Any, name: str, selector: str | None = None) -> Path:
    path = ARTIFACTS / f"{name}.png"
    if selector:
        page.locator(selector).first.screenshot(path=str(path))
    else:
        page.screenshot(path=str(path))
    return path


# The recorder samples the loop widget every 30 ms: current stage, its value, status, phases.
RECORDER_JS = """() => {
  // Every state the loop widget renders, in order: a MutationObserver sees each render (a stage
  // shown for 60 ms while the diagram catches up is not lost between two samples of a busy
  // machine); the 30 ms interval adds the header's idle/running changes. Repeats are dropped.
  window.__dsh = [];
  let last = '';
  const sample = () => {
    const root = document.querySelector('.dsh-loop');
    if (!root) return;
    const cur = root.querySelector('.dsh-stage[data-state=current]');
    const s = {
      stage: cur ? cur.dataset.stage : null,
      value: cur ? (cur.querySelector('.dsh-stage-value') || {}).textContent : null,
      call: (root.querySelector('.dsh-scrub-label') || {}).textContent || '',
      header: (root.querySelector('.dsh-sub') || {}).textContent || '',
      waiting: !!root.querySelector('.dsh-allow'),
    };
    const key = JSON.stringify(s);
    if (key === last) return;
    last = key;
    window.__dsh.push({t: Date.now(), ...s});
  };
  window.__dshObserver = new MutationObserver(sample);
  window.__dshObserver.observe(document.body, {subtree: true, childList: true, attributes: true, characterData: true});
  window.__dshTimer = setInterval(sample, 30);
}"""


@pytest.fixture
def record() -> Callable[[Any], Callable[[], list[dict[str, Any]]]]:
    def start(page: Any) -> Callable[[], list[dict[str, Any]]]:
        page.evaluate(RECORDER_JS)
        return lambda: list(page.evaluate("() => window.__dsh"))

    return start

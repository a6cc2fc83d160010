"""``DshMagics.output = "auto"``: the mode follows the client that sent the execute request."""

from __future__ import annotations

from typing import Any

from dsh_notebook.notebook.cell.frontend import choose_output, mode_for_request


def request(metadata: dict[str, Any] | None = None, allow_stdin: bool = True) -> dict[str, Any]:
    return {"header": {"msg_type": "execute_request"}, "metadata": metadata or {},
            "content": {"code": "%dsh hi", "allow_stdin": allow_stdin}}


def test_jupyterlab_and_notebook7_name_their_cell_so_they_get_the_live_display() -> None:
    lab = request({"cellId": "9a1c", "deletedCells": [], "recordTiming": False})
    assert mode_for_request(lab)[0] == "display"


def test_headless_executors_allow_no_stdin_and_keep_the_display() -> None:
    assert mode_for_request(request(allow_stdin=False))[0] == "display"  # nbclient, papermill


def test_a_terminal_client_gets_the_stream() -> None:
    mode, why = mode_for_request(request())  # jupyter console: no cell id, stdin allowed
    assert mode == "stream" and "console" in why


class _Shell:
    kernel = None


def test_the_override_and_terminal_ipython() -> None:
    assert choose_output(_Shell(), "display")[0] == "display"
    assert choose_output(_Shell(), "auto")[0] == "stream"

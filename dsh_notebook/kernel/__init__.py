"""The agent kernel ``dsh`` ("Agent (dsh)"): a Jupyter kernel in which every cell is a prompt.

Built on ipykernel — :class:`~.kernel.DshKernel` subclasses ``IPythonKernel`` — so the
protocol, interrupts, stdin, comms (widgets) and ``%`` magics are IPython's; the extension
``dsh_notebook`` is loaded at the first execution and cells are rewritten by :mod:`dsh_notebook.notebook.magic.cell_kinds`.
``python -m dsh_notebook install-kernel`` installs the kernelspec (:mod:`.install`);
``python -m dsh_notebook.kernel -f CONNECTION_FILE`` is what Jupyter runs.
"""

KERNEL_NAME = "dsh"
DISPLAY_NAME = "Agent (dsh)"

"""``python -m dsh_notebook.kernel -f {connection_file}``: the agent kernel's entry point."""

from __future__ import annotations


def main() -> None:
    from ipykernel.kernelapp import IPKernelApp

    from .kernel import DshKernel

    IPKernelApp.launch_instance(kernel_class=DshKernel)


if __name__ == "__main__":
    main()

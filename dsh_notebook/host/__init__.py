"""The host side of seed 001 L2–L4 and L8: Gateway, Session Controller, Agent registry, follow
and control — on its own thread and asyncio loop (DESIGN §2).

``Host.get()`` is the process's host; ``DESCRIPTORS`` is the contract the client shares.
"""

from __future__ import annotations

from .contract import DESCRIPTORS, Descriptor

__all__ = ["DESCRIPTORS", "Descriptor", "Host"]


def __getattr__(name: str) -> object:
    if name == "Host":  # lazy: importing the contract must not import the agent stack
        from .host import Host

        return Host
    raise AttributeError(name)

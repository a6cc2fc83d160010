"""The client side of seed 001 L1–L2 and L8: Remote, Connection, transports, the client fold,
and :class:`DshClient` (what the magics and the CLI use)."""

from __future__ import annotations

from .connection import Connection, Subscription, Transport
from .dsh_client import DshClient, FollowHandle, Receipt, TurnOutcome
from .model import ClientSessionModel
from .remote import Remote
from .transport import InProcessTransport, StdioTransport

__all__ = [
    "ClientSessionModel", "Connection", "DshClient", "FollowHandle", "InProcessTransport", "Receipt",
    "Remote", "StdioTransport", "Subscription", "Transport", "TurnOutcome",
]  # fmt: skip

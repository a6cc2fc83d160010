"""The fact layer: the Core Session, repair, persistence and the store.

The shapes it records — events and messages — are the wire's (:mod:`dsh_notebook.wire`).
"""

from .persistence import LoadedLog, load_log
from .repair import (
    PairingRepairer,
    Repair,
    RepairResult,
    close_interrupted_turn,
    repair_pairing,
)
from .session import MessageHistory, Session, now_ms
from .store import SessionStore, SessionSummary
from .writer import SessionLog

__all__ = [
    "LoadedLog",
    "MessageHistory",
    "PairingRepairer",
    "Repair",
    "RepairResult",
    "Session",
    "SessionLog",
    "SessionStore",
    "SessionSummary",
    "close_interrupted_turn",
    "load_log",
    "now_ms",
    "repair_pairing",
]

"""Checkpoints and rewind (issue 26): a content-addressed snapshot of the workspace at the start
of every turn, the turn's file changes at its end, and a rewind that puts files, conversation
and notebook variables back as they were at the start of a turn."""

from .store import CheckpointStore, Entry, Snapshot

__all__ = ["CheckpointStore", "Entry", "Snapshot"]

"""The exception tree of dsh_notebook.

Every error a user or a remote client can see carries a stable ``code`` (UPPER_SNAKE) and a
message that says what went wrong and, where possible, how to fix it::

    DshError                      code, message
    ├── UserError                 misuse: bad flag, bad config, missing key, bad prompt
    ├── SessionError              the fact layer refused something
    │   ├── ProvenanceError       sourceEventSeqs broke a rule
    │   ├── LogFormatError        a session log cannot be read (version, corrupt line)
    │   └── LogWriteError         a session log cannot be written (DISK_FULL, LOG_WRITE_FAILED)
    ├── ModelError                the provider failed (auth, unknown model, overflow, 429/5xx …)
    ├── ToolError                 raised inside the tool pipeline; always becomes a tool result
    ├── HostError                 the host path refused a call (envelope, method, args, session)
    └── RunCancelled              control flow: a run was cancelled

Messages never contain secrets: every message goes through :func:`redact`
(:mod:`.redaction`: known values from the environment and the configured keys, key shapes).
"""

from __future__ import annotations

from typing import Any

from pydantic import JsonValue

from .redaction import redact, register_secret
from .wire.codes import ERROR_CODES, ErrorCode

__all__ = [
    "ERROR_CODES", "DshError", "ErrorCode", "HostError", "LogFormatError", "ModelError", "ProvenanceError", "RunCancelled",
    "SessionError", "ToolError", "UserError", "redact", "register_secret",
]


class DshError(Exception):
    """Base of every dsh_notebook error: a stable ``code`` plus a readable message."""

    code: ErrorCode = "DSH_ERROR"

    def __init__(self, message: str, *, code: ErrorCode | None = None, **details: Any) -> None:
        super().__init__(redact(message))
        if code is not None:
            self.code = code
        self.details = details

    @property
    def message(self) -> str:
        return str(self.args[0]) if self.args else ""

    def to_dict(self) -> dict[str, JsonValue]:
        return {"code": self.code, "message": self.message}

    def __str__(self) -> str:
        return f"[{self.code}] {self.message}"


class UserError(DshError):
    """The caller misused an API, a flag or the configuration."""

    code: ErrorCode = "USER_ERROR"


class SessionError(DshError):
    """The Session refused an append or a restore."""

    code: ErrorCode = "SESSION_ERROR"


class ProvenanceError(SessionError):
    """``sourceEventSeqs`` broke a provenance rule."""

    code: ErrorCode = "BAD_PROVENANCE"


class LogFormatError(SessionError):
    """A session log cannot be read: unknown version, corrupt line, missing header."""

    code: ErrorCode = "LOG_FORMAT"


class LogWriteError(SessionError):
    """A session log could not be written or fsynced; the events stay in memory (pending)."""

    code: ErrorCode = "LOG_WRITE_FAILED"


class ModelError(DshError):
    """A model provider failed. ``retryable`` tells the Step whether another attempt may help."""

    code: ErrorCode = "MODEL_ERROR"

    def __init__(
        self,
        message: str,
        *,
        code: ErrorCode | None = None,
        retryable: bool = False,
        status: int | None = None,
        retry_after_ms: int | None = None,
    ) -> None:
        super().__init__(message, code=code)
        self.retryable = retryable
        self.status = status
        self.retry_after_ms = retry_after_ms

    def to_dict(self) -> dict[str, JsonValue]:
        out: dict[str, JsonValue] = {"code": self.code, "message": self.message}
        if self.status is not None:
            out["status"] = self.status
        if self.retry_after_ms is not None:
            out["retryAfterMs"] = self.retry_after_ms
        return out


class ToolError(DshError):
    """An error inside the tool pipeline; the scheduler turns it into a tool result."""

    code: ErrorCode = "TOOL_ERROR"


class HostError(DshError):
    """The host path refused a call: bad envelope, unknown method, bad args, unknown session."""

    code: ErrorCode = "HOST_ERROR"


class RunCancelled(DshError):
    """A run was cancelled (user stop, kernel interrupt, shutdown)."""

    code: ErrorCode = "CANCELLED"

"""The closed set of error codes (``ErrorInfo.code``, ``DshError.code``, a host's refusals).

Every code the package raises is one of :data:`ErrorCode`, and the type says so: ``DshError``
and its subclasses, ``ErrorInfo`` / ``ToolErrorInfo`` / ``WireError`` / ``CheckpointFailed`` /
``ResultPayload``'s constructors, ``error_outcome`` and every other ``code`` parameter take an
``ErrorCode``, so mypy checks each literal wherever it is written; ``tests/wire/test_error_codes.py``
finds every code the Python and the TypeScript can produce (however it is passed) and checks the
``code`` parameters stay typed. The schema carries the set as ``$defs.ErrorCode`` and the TS types
as ``ErrorCode`` (the front end's own codes are typed with it). The ``code`` fields of the wire stay
strings when they are *read*, so a log written by another version still reads; a code read that way
and passed on goes through :func:`received`. A new code is added here first.
"""

from __future__ import annotations

from typing import Literal, TypeGuard, cast, get_args

ErrorCode = Literal[
    "ABORTED_BEFORE_DISPATCH", "AMBIGUOUS_SESSION", "ARGUMENTS_TOO_LARGE", "AUTH", "BAD_ARGS",
    "BAD_ARGUMENT", "BAD_ARGUMENTS", "BAD_BASE_REQUEST", "BAD_BASE_URL", "BAD_BREAK_WHEN",
    "BAD_CONFIG", "BAD_CWD", "BAD_EDIT", "BAD_ENVELOPE", "BAD_FLAG", "BAD_FORK_POINT", "BAD_HOME",
    "BAD_JSON", "BAD_MESSAGE_SEQS", "BAD_MODE", "BAD_MODEL", "BAD_NOTEBOOK_FILE", "BAD_OFFSET",
    "BAD_POLICY", "BAD_PROVENANCE", "BAD_QUERY", "BAD_REQUEST", "BAD_RESTORE", "BAD_RULES",
    "BAD_RUN_TO", "BAD_SEQ", "BAD_SESSION_ID", "BAD_TIME", "BAD_TOOLS", "BAD_TOOL_NAME",
    "BASE_URL_NEEDED", "BINARY_FILE", "BUNDLE_MISSING", "BYPASS_NOT_ARMED", "CANCELLED",
    "CHECKPOINT_BLOB_MISSING", "CHECKPOINT_FAILED", "CHECKPOINT_NOT_FOUND",
    "CHECKPOINT_ROLLED_BACK", "CHECKPOINT_UNRESTORABLE", "CHECKPOINT_UNSAFE_PATH",
    "CHECKPOINT_VARIABLE_UNREADABLE", "CLOSED", "COMPACTION_STALE", "CONNECTION",
    "CONTEXT_DISPOSED", "CONTEXT_OVERFLOW", "DEADLOCK", "DEMO_DEST_NOT_EMPTY", "DENIED",
    "DISK_FULL", "DSH_ERROR", "DUPLICATE_RPC_ID", "DUPLICATE_TOOL", "EDIT_CONFLICT",
    "EMPTY_CONTENT", "EMPTY_PROMPT", "EMPTY_RESPONSE", "EMPTY_SUMMARY", "EXTERNAL_CALL_ENDED",
    "FILE_NOT_FOUND", "FILE_TOO_LARGE", "FORKED_BEFORE_RESULT", "HARD_LINK", "HOST_CLOSED",
    "HOST_ERROR", "HOST_UNAVAILABLE", "INSTALL_FAILED", "INTERNAL", "INTERRUPTED", "INVALID_ARGS",
    "INVALID_JSON", "INVALID_PATH", "INVALID_PATTERN", "IO_ERROR", "IS_DIRECTORY", "KERNEL_DEAD",
    "KERNEL_RESTARTED", "KERNEL_UNSUPPORTED", "LINE_TOO_LONG", "LOCAL_MODEL_MISSING",
    "LOCAL_SERVER_FAILED", "LOCAL_SERVER_MISSING", "LOG_CLOSED", "LOG_CORRUPT", "LOG_FORMAT",
    "LOG_HEADER", "LOG_NOT_FOUND", "LOG_NOT_REGULAR", "LOG_VERSION", "LOG_WRITE_FAILED",
    "MCP_CONFIG", "MCP_ERROR", "MCP_NOT_INSTALLED", "MCP_SERVER_DIED", "MCP_SERVER_UNAVAILABLE",
    "MCP_START_FAILED", "MCP_TIMEOUT", "MCP_TOOL_ERROR", "MCP_UNKNOWN_SERVER", "MISSING_DEPENDENCY",
    "MODEL_ERROR", "MODEL_TIMEOUT", "NOT_A_REQUEST", "NOT_LOSSLESS", "NOT_PAUSED", "NOT_UNIQUE",
    "NO_API_KEY", "NO_CHANGE", "NO_KERNEL", "NO_MAIN_THREAD", "NO_MATCH", "NO_NOTEBOOK_FILE",
    "NO_SESSION", "OTLP_EXPORT_FAILED", "OUTPUT_IS_A_LOG", "OUTPUT_NOT_WRITABLE",
    "OUTSIDE_WORKSPACE", "PAGE_GONE", "PAGE_TIMEOUT", "PATH_TOO_LONG", "PROMPT_UNDEFINED_VARIABLE",
    "PROMPT_UNKNOWN_VARIABLE", "PYTHON_ERROR", "RATE_LIMITED", "READ_ONLY", "REENTRANT_APPEND",
    "REPLAY_DIVERGED", "REPLAY_EXHAUSTED", "REQUEST_CONFLICT", "RUN_TO_PASSED", "SEARCH_INDEX",
    "SERVER_ERROR", "SERVICE_EXISTS", "SESSION_BUSY", "SESSION_ERROR", "SESSION_EXISTS",
    "SPAWN_FAILED", "SPECIAL_FILE", "STREAM_CUT", "STREAM_ENDED", "STREAM_INCOMPLETE", "TIMED_OUT",
    "TIMEOUT", "TOOL_ERROR", "TOOL_NOT_STARTED", "TOOL_OUTCOME_UNKNOWN", "TOOL_RAISED",
    "TRUNCATED_CALL", "TURN_RUNNING", "UNKNOWN", "UNKNOWN_APPROVAL", "UNKNOWN_CELL", "UNKNOWN_HOOK",
    "UNKNOWN_METHOD", "UNKNOWN_MODEL", "UNKNOWN_NOTEBOOK", "UNKNOWN_PROVIDER", "UNKNOWN_SCENARIO",
    "UNKNOWN_SERVICE", "UNKNOWN_SESSION", "UNKNOWN_STREAM", "UNKNOWN_TOOL", "UNKNOWN_VARIABLE",
    "UNPAIRED_TOOL_CALLS", "UNSUPPORTED_CONTENT", "USER_ERROR", "VARIABLES_NEED_KERNEL",
    "WORKSPACE_UNSAFE",
]  # fmt: skip

ERROR_CODES: frozenset[str] = frozenset(get_args(ErrorCode))


def is_code(value: object) -> TypeGuard[ErrorCode]:
    """Is ``value`` a code of the closed set (a checked ``str`` → :data:`ErrorCode`)?"""
    return value in ERROR_CODES


def received(code: str) -> ErrorCode:
    """A code read from the wire or a log (another process's, maybe another version's), passed on
    as it came: the one place a ``str`` becomes an :data:`ErrorCode` unchecked. Never for a code
    this process makes (write the literal: mypy checks it)."""
    return cast(ErrorCode, code)

"""Tools (seed 001 L7): definitions, registry, sandbox, the ToolRuntime pipeline, the scheduler."""

from __future__ import annotations

from .base import (
    ApprovalRequest,
    Approver,
    AutoApprover,
    DenyApprover,
    Tool,
    ToolContext,
    ToolOutput,
)
from .outcome import PolicyVerdict, PreparedToolCall, ToolInvocation, ToolOutcome, error_outcome
from .registry import ToolRegistry, builtin_tools
from .runtime import ToolRuntime
from .sandbox import Workspace, scrubbed_env
from .scheduler import BatchOutcome, ToolBatch, execute_tool_calls

__all__ = [
    "ApprovalRequest",
    "Approver",
    "AutoApprover",
    "BatchOutcome",
    "DenyApprover",
    "PolicyVerdict",
    "PreparedToolCall",
    "Tool",
    "ToolBatch",
    "ToolContext",
    "ToolInvocation",
    "ToolOutcome",
    "ToolOutput",
    "ToolRegistry",
    "ToolRuntime",
    "Workspace",
    "builtin_tools",
    "error_outcome",
    "execute_tool_calls",
    "scrubbed_env",
]

"""The Session command handler (seed 001 L4, object 15): business admission of a Prompt command.

The command arrives checked (``PromptCommand`` itself refuses a bad requestId, non-text content
``UNSUPPORTED_CONTENT`` and a blank prompt ``EMPTY_CONTENT`` when the Gateway binds it); in order:
resolve the Agent
(live or resumed; ``UNKNOWN_SESSION``), drop a repeated requestId (accepted again, queued once;
the same requestId with other content is ``REQUEST_CONFLICT``),
build the user message — its source carries both the ``requestId`` (the user's submission) and
the ``rpcId`` (the transport call that brought it) — and hand it to ``agent.followup`` (mode
``queue``: next turn) or ``agent.steer`` (mode ``steer``: next step of the running turn). The
answer ``{"accepted": true}`` means *the message is in the Agent's inbox* — not that the run
finished; the answer arrives by ``session/follow``. Every decision is noted on the invocation
(``resolver``, ``admission``) so the trace shows it.
"""

from __future__ import annotations

from pydantic import JsonValue

from ..errors import HostError
from ..redaction import redact
from ..wire.endpoints import Accepted, PromptCommand
from ..wire.messages import MessageSource, TextBlock, UserMessage
from .gateway import GatewayInvocation
from .live import content_digest
from .registry import AgentRegistry


class SessionCommandHandler:
    """Admission: validate, resolve, dedupe, followup/steer."""

    def __init__(self, registry: AgentRegistry) -> None:
        self.registry = registry
        self.decisions: list[dict[str, JsonValue]] = []  # for learners: every admission decision

    async def prompt(self, command: PromptCommand, inv: GatewayInvocation) -> Accepted:
        rid = command.request_id
        blocks = command.blocks
        live, how = await self.registry.resolve(command.session_id)
        inv.note("resolver", how)
        decision: dict[str, JsonValue] = {
            "sessionId": live.id,
            "requestId": rid,
            "rpcId": inv.rpc_id,
            "mode": command.mode,
        }
        digest = content_digest(blocks)
        if rid in live.request_ids:
            if live.request_ids[rid] != digest:
                decision.update(decision="conflict", queued=False)
                inv.note("admission", decision)
                self.decisions.append(decision)
                raise HostError(
                    f"requestId {rid!r} was already used for a different prompt in session {live.id}; "
                    "a retry must repeat the same content, a new prompt needs a new requestId",
                    code="REQUEST_CONFLICT",
                )
            decision.update(decision="duplicate", queued=False)
        else:
            message = UserMessage(
                content=_redacted(blocks),  # issue 21: a key typed in a prompt is never logged or sent
                source=MessageSource(kind="user", request_id=rid, rpc_id=inv.rpc_id, cell=command.cell),
            )
            if command.mode == "steer":
                live.agent.steer(message)
                decision["inbox"] = "agent.steer → next-step"
            else:
                live.agent.followup(message)
                decision["inbox"] = "agent.followup → next-turn"
            live.request_ids[rid] = digest
            decision.update(decision="accepted", queued=True, message=message.model_dump(mode="json", exclude_none=True))
        inv.note("admission", decision)
        self.decisions.append(decision)
        del self.decisions[:-200]
        return Accepted(accepted=True)



def _redacted(blocks: tuple[TextBlock, ...]) -> tuple[TextBlock, ...]:
    """The prompt's text blocks with every known secret and key shape masked."""
    out = []
    for block in blocks:
        clean = redact(block.text)
        out.append(block.model_copy(update={"text": clean}) if clean != block.text else block)
    return tuple(out)

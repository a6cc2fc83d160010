// The wire shapes the front end uses: aliases of the types generated from the Python models
// (`wire.gen.ts`, from `python -m dsh_notebook schema`; never written by hand here).
import type {
  AssistantMessage, AttemptChunk, ClientMessage, ControlStreamItem, ErrorCode, EventItem, FollowStreamItem,
  PausedCall, PausedHistory, PausedMessage, PausedRequest, PausedResult, ReasoningBlock, ServerMessage, StreamChunkFrame, StreamEnd, StreamStart, SystemMessage, TextBlock,
  ToolCallBlock, ToolMessage, UserMessage, WireError,
} from "./wire.gen";

export type * from "./wire.gen";

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export type Block = TextBlock | ReasoningBlock | ToolCallBlock;
export type Message = UserMessage | SystemMessage | AssistantMessage | ToolMessage;
/** One durable session event (the union of every event type, discriminated by `type`). */
export type SessionEvent = EventItem["event"];
export type EventType = SessionEvent["type"];
/** One normalized model chunk of an `assistant-stream` chunk frame. */
export type StreamChunk = AttemptChunk["chunk"];
export type AssistantStreamFrame = StreamStart | StreamChunkFrame | StreamEnd;
export type FollowItem = FollowStreamItem;
/** The debugger's ``paused`` item, its payload's shape chosen by ``stage``. */
export type PausedItem = PausedMessage | PausedCall | PausedResult | PausedHistory | PausedRequest;
export type ControlItem = ControlStreamItem;
export type ClientEnvelope = ClientMessage;
export type ServerEnvelope = ServerMessage;
export type RemoteErrorInfo = WireError;

/** A coded error this front end makes: `code` one of the closed set (`ErrorCode`, generated from
 *  dsh_notebook/wire/codes.py), so tsc refuses a code the package does not know. */
export function coded(code: ErrorCode, message: string): RemoteErrorInfo {
  return { code, message };
}

/** Whether a code read from the wire (a string: another version's too) is `expected`, a code of
 *  the closed set — how the front end compares codes, so each one it names is checked. */
export function isCode(code: string | null | undefined, expected: ErrorCode): boolean {
  return code === expected;
}

/** The message a surface event carries (`user/message`, `system/message`, `assistant/message`,
 *  `tool/result`), else undefined. */
export function messageOf(ev: SessionEvent): Message | undefined {
  return "message" in ev ? (ev.message as Message) : undefined;
}

/** `turn` / `step` of an event that has them. */
export function turnOf(ev: SessionEvent): number | undefined {
  return "turn" in ev && typeof ev.turn === "number" ? ev.turn : undefined;
}
export function stepOf(ev: SessionEvent): number | undefined {
  return "step" in ev && typeof ev.step === "number" ? ev.step : undefined;
}

// Wire shapes (DESIGN §4, §6): session events, messages, follow-stream items and envelopes.

export type Json = null | boolean | number | string | Json[] | { [k: string]: Json };

export interface TextBlock { type: "text"; text: string }
export interface ReasoningBlock { type: "reasoning"; text: string }
export interface ToolCallBlock { type: "tool-call"; id: string; name: string; arguments: string }
export type Block = TextBlock | ReasoningBlock | ToolCallBlock;

/** The notebook cell that sent a prompt (the front end's cellId, the kernel's execution count). */
export interface CellRef { cellId?: string; executionCount?: number }
export interface MessageSource { kind: "user" | "plugin"; requestId?: string; rpcId?: string; plugin?: string; form?: string; cell?: CellRef }
export interface UserMessage { role: "user"; content: TextBlock[]; source?: MessageSource }
export interface SystemMessage { role: "system"; content: TextBlock[] }
export interface AssistantMessage { role: "assistant"; content: Block[]; provider?: string; model?: string }
export interface ToolMessage { role: "tool"; toolCallId: string; content: TextBlock[]; isError?: boolean }
export type Message = UserMessage | SystemMessage | AssistantMessage | ToolMessage;

/** One durable session event: envelope + payload fields at top level. */
export interface SessionEvent {
  seq: number;
  time: number;
  type: string;
  sourceEventSeqs?: number[];
  surfaceOp?: { op: "replace"; startSeq: number; endSeq: number };
  turn?: number;
  step?: number;
  message?: Message;
  callId?: string;
  name?: string;
  arguments?: string;
  messageSeqs?: number[];
  baseRequestSeq?: number;
  [key: string]: unknown;
}

export interface SessionHeader { type?: "session"; version?: number; id?: string; cwd?: string; createdAt?: number }

/** Chunks as `chunk_to_dict` writes them. */
export interface StreamChunk {
  type: "block-start" | "text-delta" | "reasoning-delta" | "tool-call-delta" | "block-end" | "usage" | "finish";
  index?: number;
  blockType?: "text" | "reasoning" | "tool-call";
  id?: string;
  name?: string;
  text?: string;
  argumentsDelta?: string;
  block?: Block;
  reason?: string;
  [key: string]: unknown;
}

export type AssistantStreamFrame =
  | { kind: "start"; attemptId: string; turn?: number; step?: number; startedAfterSeq?: number }
  | { kind: "chunk"; attemptId: string; index: number; time?: number; chunk: StreamChunk }
  | { kind: "end"; attemptId: string; outcome?: { kind: "committed"; eventType?: string; seq?: number } | { kind: "abandoned" } };

export interface ToolRuntimeFrame {
  callId: string;
  name: string;
  phase: "prepare" | "policy" | "approval" | "execute" | "progress" | "result" | string;
  status: "start" | "done" | "waiting" | "allow" | "deny" | "error" | string;
  detail?: unknown;
  time?: number;
}

export interface SnapshotItem {
  type: "snapshot";
  sessionId?: string;
  header?: SessionHeader;
  cursor: number;
  events: SessionEvent[];
  live?: LiveSnapshot;
}
export interface LiveAttemptSnapshot {
  attemptId: string;
  turn?: number;
  step?: number;
  startedAfterSeq?: number;
  /** `{index, time, chunk}` entries (host) or bare chunks. */
  chunks?: ({ index?: number; time?: number; chunk: StreamChunk } | StreamChunk)[];
}
/** The `live` part of a follow snapshot (host/follow.py `live_snapshot`). */
export interface LiveSnapshot {
  attached?: boolean;
  status?: "idle" | "running";
  turn?: number | null;
  step?: number | null;
  assistant?: LiveAttemptSnapshot | null;
  assistantStream?: LiveAttemptSnapshot | null;
  tools?: Record<string, ToolRuntimeFrame> | ToolRuntimeFrame[];
  toolRuntime?: ToolRuntimeFrame[];
  approvals?: { callId: string; name: string; arguments?: string; reason?: string }[];
}

export type FollowItem =
  | SnapshotItem
  | { type: "event"; event: SessionEvent }
  | { type: "assistant-stream"; frame: AssistantStreamFrame }
  | { type: "tool-runtime"; frame: ToolRuntimeFrame }
  | { type: "status"; status: "idle" | "running"; turn?: number; step?: number }
  | { type: "error"; code: string; message: string };

export interface RemoteErrorInfo { code: string; message: string }

export type ClientEnvelope =
  | { type: "client-request"; rpcId: string; method: string; payload: { args: Record<string, unknown> } }
  | { type: "open"; streamId: string; endpoint: string; payload: { args: Record<string, unknown> } }
  | { type: "cancel"; streamId: string };

export type ServerEnvelope =
  | { type: "server-response"; rpcId: string; result: { ok: true; value: unknown } | { ok: false; error: RemoteErrorInfo } }
  | { type: "item"; streamId: string; value?: unknown; item?: unknown }
  | { type: "error"; streamId: string; error: RemoteErrorInfo }
  | { type: "end"; streamId: string };

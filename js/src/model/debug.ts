// The agent debugger in the loop widget (issue 15): breakpoints, the pause, and the JSON editor's
// rules — what an edit is prefilled with and what it must look like before it is sent.
import type { PauseState } from "../types";
import type { DebugArgs, ErrorCode, JsonValue } from "../wire.gen";
import { STAGES, type Stage, type StageNo } from "./stages";
import { checkMessages } from "../wire-check";

/** A stage as the wire spells it. */
export type DebugStage = Stage["key"];
export type EditTarget = NonNullable<Stage["edit"]>;

export const stageKey = (no: StageNo): DebugStage => STAGES[no - 1].key;
export function stageNo(stage: string): StageNo | 0 {
  return STAGES.find((s) => s.key === stage || String(s.no) === stage)?.no ?? 0;
}

/** What each editable target is called on screen. */
const EDIT_LABEL: Record<EditTarget, string> = {
  arguments: "the call's arguments (a JSON object)",
  result: "the tool result's text (a JSON string)",
  request: "the frozen request's messages (a JSON array of messages)",
};

/** Where each editable target applies (the stage table's `edit`), and what it is called on screen. */
export const EDIT_AT = Object.fromEntries(Object.entries(EDIT_LABEL).map(([target, label]) =>
  [target, { stages: STAGES.filter((s) => s.edit === target).map((s) => s.key), label }])) as Record<EditTarget, { stages: DebugStage[]; label: string }>;

/** The breakpoints the widget asks for: stages and an optional tools filter. */
export interface Breakpoints { stages: DebugStage[]; tools: string[] }

export function toggleStage(bp: Breakpoints, stage: DebugStage): Breakpoints {
  const on = new Set(bp.stages);
  if (on.has(stage)) on.delete(stage); else on.add(stage);
  return { stages: [...on].sort(), tools: bp.tools };
}

/** "bash, read  grep" → ["bash", "read", "grep"] (empty: every tool). */
export function parseTools(text: string): string[] {
  return [...new Set(text.split(/[\s,]+/).map((t) => t.trim()).filter(Boolean))];
}

/** The `session/debug` arguments of a `break` for these breakpoints. */
export function breakArgs(sessionId: string, bp: Breakpoints): DebugArgs {
  const args: DebugArgs = { sessionId, action: "break", stages: bp.stages };
  if (bp.tools.length) args.tools = bp.tools;
  return args;
}

/** What a call-less pause's seq is: "paused at 06 · request/frozen #16". */
const SEQ_OF: Partial<Record<string, string>> = { "01": "assistant/message", "06": "request/frozen" };

/** "paused at 04 · c3" (and the tool's name when known). */
export function pauseLabel(p: PauseState): string {
  const what = SEQ_OF[p.stage];
  const call = p.callId ? ` · ${p.callId}` : p.seq != null && what ? ` · ${what} #${p.seq}` : "";
  const name = p.name ? ` (${p.name})` : "";
  return `paused at ${p.stage}${call}${name}`;
}

/** A stable identity of one pause: a new pause (even at the same stage) resets the editor. */
export const pauseKey = (p: PauseState): string => `${p.stage}:${p.callId ?? ""}:${p.seq ?? ""}`;

const obj = (v: unknown): Record<string, unknown> => (v && typeof v === "object" && !Array.isArray(v) ? v as Record<string, unknown> : {});

/** The editor's initial text: the value at that stage, as pretty JSON. Arguments are the model's
 *  raw JSON string — shown parsed when they parse, else as the string they are. */
export function editorText(p: PauseState): string | null {
  const target = p.editable as EditTarget | null;
  const payload = obj(p.payload);
  if (target === "arguments") {
    const raw = payload.arguments;
    if (typeof raw === "string") {
      try { return JSON.stringify(JSON.parse(raw), null, 2); } catch { return JSON.stringify(raw); }
    }
    return JSON.stringify(raw ?? {}, null, 2);
  }
  if (target === "result") return JSON.stringify(typeof payload.result === "string" ? payload.result : "");
  if (target === "request") return JSON.stringify(payload.messages ?? [], null, 2);
  return null;
}

/** Why the editor's text is not sent: `BAD_JSON` it does not parse, `BAD_EDIT` it parses but is
 *  not the shape the target needs (the host's own refusals use `BAD_EDIT` too). */
export type EditErrorCode = Extract<ErrorCode, "BAD_JSON" | "BAD_EDIT">;
export type Checked = { ok: true; value: JsonValue } | { ok: false; code: EditErrorCode; error: string };

const bad = (error: string): Checked => ({ ok: false, code: "BAD_EDIT", error });

/** What the editor says when it does not send: "Not sent — BAD_JSON: not valid JSON: …". */
export const refusal = (c: { code: string; error: string }): string => `Not sent — ${c.code}: ${c.error}`;

/** Parse and check the editor's text for `target`; the value `session/debug` edit takes. */
export function checkEdit(target: EditTarget, text: string): Checked {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (e) {
    return { ok: false, code: "BAD_JSON", error: `not valid JSON: ${(e as Error).message}` };
  }
  if (target === "arguments") {
    if (!value || typeof value !== "object" || Array.isArray(value)) return bad("the arguments must be a JSON object, like {\"command\": \"ls\"}");
    return { ok: true, value: value as JsonValue };
  }
  if (target === "result") {
    if (typeof value !== "string") return bad("a tool result is text: write it as a JSON string in double quotes, like \"all tests passed\"");
    return { ok: true, value };
  }
  const wrong = checkMessages(value);
  return wrong ? bad(wrong) : { ok: true, value: value as JsonValue };
}

/** The `session/debug` arguments of an edit of pause `p` with a checked value. */
export function editArgs(sessionId: string, p: PauseState, value: JsonValue): DebugArgs {
  const args: DebugArgs = { sessionId, action: "edit", target: p.editable as EditTarget, value };
  if (p.callId) args.callId = p.callId;
  return args;
}

/** The diagram follows the pause: the call it is about (05–06 and a call-less 01: the latest
 *  call) and the paused stage. */
export function pausedAt<T extends { callId: string }>(p: PauseState, traces: T[]): { call?: T; stage: StageNo | 0 } {
  const call = (p.callId ? traces.find((t) => t.callId === p.callId) : undefined) ?? traces[traces.length - 1];
  return { call, stage: stageNo(p.stage) };
}

/** A "Run to…" call choice: `cK` (the K-th tool call of the turn) and how it reads on screen. */
export interface CallChoice { value: string; label: string }

/** The calls a run can still be sent to: those of the running turn ("c2 · read", the call id
 *  when it is not spelled cK), then the next few not made yet. Idle: the next turn's first calls. */
export function callChoices(traces: readonly { callId: string; name: string; turn?: number }[], turn: number | null, extra = 3): CallChoice[] {
  const mine = turn == null ? [] : traces.filter((t) => t.turn === turn);
  const out = mine.map((t, i) => {
    const k = `c${i + 1}`;
    return { value: k, label: `${k} · ${t.name}${t.callId !== k ? ` (${t.callId})` : ""}` };
  });
  for (let k = mine.length + 1; k <= mine.length + extra; k++) out.push({ value: `c${k}`, label: `c${k} · ${turn == null ? "next turn" : "not made yet"}` });
  return out;
}

/** The `session/debug` arguments of a run-to. */
export function runToArgs(sessionId: string, stage: DebugStage, call: string): DebugArgs {
  return { sessionId, action: "run-to", stage, call };
}

// ClientSessionModel (seed 001 L8): folds follow-stream items into view state.
// Durable events are kept dense by seq; live frames (assistant stream, tool runtime, status)
// are transient view state that the next durable event settles.
import type {
  AssistantStreamFrame, Block, FollowItem, SessionEvent, SessionHeader, StreamChunk, ToolRuntimeFrame,
} from "./types";

export interface LiveBlock { index: number; type: "text" | "reasoning" | "tool-call"; text: string; id?: string; name?: string; done: boolean }
export interface LiveAttempt {
  attemptId: string;
  turn?: number;
  step?: number;
  startedAfterSeq?: number;
  blocks: LiveBlock[];
  chunks: number;
  /** Set when the attempt ended; committed attempts stay until their durable event arrives. */
  outcome?: { kind: "committed"; seq?: number } | { kind: "abandoned" };
  lastChunkTime?: number;
}
/** `seq`: the durable event a phase was re-derived from (absent on live frames). */
export interface ToolPhase { phase: string; status: string; detail?: unknown; time?: number; seq?: number }
/** `derived`: set when the phases were re-derived from the log (model/runtime-log.ts), not live. */
export interface ToolRuntimeState {
  callId: string;
  name: string;
  phases: ToolPhase[];
  waiting: boolean;
  derived?: { callSeq: number; resultSeq?: number; elapsedMs?: number };
}

export interface Submission { requestId: string; text?: string; mode?: string; state: "pending" | "accepted" | "delivered" | "rejected"; rpcId?: string; seq?: number; turn?: number; error?: { code: string; message: string } }

export class ClientSessionModel {
  sessionId?: string;
  header?: SessionHeader;
  events: SessionEvent[] = [];
  /** Inclusive last seq folded (-1 when empty). */
  cursor = -1;
  status: "idle" | "running" = "idle";
  turn?: number;
  step?: number;
  attempt: LiveAttempt | null = null;
  readonly toolRuntime = new Map<string, ToolRuntimeState>();
  /** callId -> asked and not yet decided (from events and the snapshot's live part). */
  readonly approvals = new Map<string, { callId: string; name: string; reason?: string }>();
  /** The Client Session's pending state: requestId -> submission (pending → accepted → delivered | rejected). */
  readonly submissions = new Map<string, Submission>();
  turnEnds: { turn?: number; reason?: unknown; seq: number }[] = [];
  /** Set when a seq gap was seen: the follow stream must be reopened from `cursor`. */
  gap = false;
  error?: { code: string; message: string };
  /** Bumped on every change; views compare it to skip work. */
  revision = 0;
  private listeners = new Set<(m: ClientSessionModel) => void>();

  subscribe(fn: (m: ClientSessionModel) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    this.revision += 1;
    for (const fn of this.listeners) fn(this);
  }

  // -- submissions (mirrors client/model.py) --------------------------------------------------
  submit(requestId: string, text: string, mode = "queue"): void {
    this.submissions.set(requestId, { requestId, text, mode, state: "pending" });
    this.changed();
  }
  accepted(requestId: string, rpcId?: string): void {
    const sub = this.submissions.get(requestId) ?? { requestId, state: "pending" as const };
    sub.rpcId = rpcId;
    if (sub.state === "pending") sub.state = "accepted";
    this.submissions.set(requestId, sub);
    this.changed();
  }
  rejected(requestId: string, error: { code: string; message: string }): void {
    const sub = this.submissions.get(requestId) ?? { requestId, state: "pending" as const };
    sub.state = "rejected";
    sub.error = error;
    this.submissions.set(requestId, sub);
    this.changed();
  }

  private reset(): void {
    this.events = [];
    this.cursor = -1;
    this.attempt = null;
    this.toolRuntime.clear();
    this.approvals.clear();
    this.turnEnds = [];
  }

  /** Fold many items, notifying listeners once. */
  applyAll(items: FollowItem[]): void {
    for (const item of items) this.fold(item);
    this.changed();
  }

  apply(item: FollowItem): void {
    this.fold(item);
    this.changed();
  }

  private fold(item: FollowItem): void {
    switch (item.type) {
      case "snapshot": {
        if (this.sessionId !== undefined && item.sessionId !== undefined && item.sessionId !== this.sessionId) this.reset();
        this.sessionId = item.sessionId ?? this.sessionId;
        this.header = item.header ?? this.header;
        this.gap = false;
        for (const ev of item.events) this.addEvent(ev);
        if (item.cursor > this.cursor) this.gap = true; // the snapshot skipped events we lack
        const live = item.live ?? {};
        this.status = live.status ?? "idle";
        this.turn = live.turn ?? undefined;
        this.step = live.step ?? undefined;
        this.attempt = null;
        const a = live.assistant ?? live.assistantStream;
        if (a) {
          this.attempt = { attemptId: a.attemptId, turn: a.turn, step: a.step, startedAfterSeq: a.startedAfterSeq, blocks: [], chunks: 0 };
          for (const c of a.chunks ?? []) this.foldChunk(this.attempt, "chunk" in c && c.chunk ? (c.chunk as StreamChunk) : (c as StreamChunk));
        }
        const tools = live.tools ?? live.toolRuntime;
        for (const f of Array.isArray(tools) ? tools : Object.values(tools ?? {})) this.foldTool(f);
        if (live.approvals) {
          this.approvals.clear();
          for (const ap of live.approvals) this.approvals.set(ap.callId, { callId: ap.callId, name: ap.name, reason: ap.reason });
        }
        return;
      }
      case "event":
        this.addEvent(item.event);
        return;
      case "assistant-stream":
        this.foldStream(item.frame);
        return;
      case "tool-runtime":
        this.foldTool(item.frame);
        return;
      case "status":
        this.status = item.status;
        if (item.turn !== undefined) this.turn = item.turn;
        if (item.step !== undefined) this.step = item.step;
        return;
      case "error":
        this.error = { code: item.code, message: item.message };
        return;
    }
  }

  private addEvent(ev: SessionEvent): void {
    if (ev.seq <= this.cursor) return; // duplicate from a catch-up: already folded
    if (ev.seq !== this.cursor + 1) {
      this.gap = true;
      return;
    }
    this.events.push(ev);
    this.cursor = ev.seq;
    // the durable event settles live state
    if (ev.type === "tool/result" && ev.message?.role === "tool") this.approvals.delete(ev.message.toolCallId);
    if (ev.type === "assistant/message" || ev.type === "assistant/attempt") {
      if (this.attempt && (this.attempt.outcome === undefined || this.attempt.outcome.kind === "committed")) this.attempt = null;
    } else if (ev.type === "tool/result" && ev.message && ev.message.role === "tool") {
      const t = this.toolRuntime.get(ev.message.toolCallId);
      if (t) t.waiting = false;
    } else if (ev.type === "approval/asked" && ev.callId) {
      this.approvals.set(ev.callId, { callId: ev.callId, name: String(ev.name ?? ""), reason: ev.reason as string | undefined });
    } else if (ev.type === "approval/decided" && ev.callId) {
      this.approvals.delete(ev.callId);
      const t = this.toolRuntime.get(ev.callId);
      if (t) t.waiting = false;
    } else if (ev.type === "user/message" && ev.message?.role === "user") {
      const rid = ev.message.source?.requestId;
      const sub = rid ? this.submissions.get(rid) : undefined;
      if (sub) { sub.state = "delivered"; sub.seq = ev.seq; sub.turn = ev.turn; }
    } else if (ev.type === "turn/start") {
      this.turn = ev.turn;
    } else if (ev.type === "turn/end") {
      this.turnEnds.push({ turn: ev.turn, reason: ev.reason, seq: ev.seq });
      this.attempt = null;
      for (const t of this.toolRuntime.values()) t.waiting = false;
    }
  }

  private foldStream(frame: AssistantStreamFrame): void {
    if (frame.kind === "start") {
      this.attempt = { attemptId: frame.attemptId, turn: frame.turn, step: frame.step, startedAfterSeq: frame.startedAfterSeq, blocks: [], chunks: 0 };
      return;
    }
    const a = this.attempt;
    if (!a || a.attemptId !== frame.attemptId) return;
    if (frame.kind === "chunk") {
      this.foldChunk(a, frame.chunk);
      if (frame.time !== undefined) a.lastChunkTime = frame.time;
      return;
    }
    const outcome = frame.outcome ?? { kind: "abandoned" as const };
    if (outcome.kind === "abandoned") this.attempt = null;
    else if (outcome.seq !== undefined && outcome.seq <= this.cursor) this.attempt = null; // event already here
    else a.outcome = { kind: "committed", seq: outcome.seq };
  }

  private foldChunk(a: LiveAttempt, c: StreamChunk): void {
    a.chunks += 1;
    const idx = c.index ?? 0;
    let b = a.blocks.find((x) => x.index === idx);
    const ensure = (type: LiveBlock["type"]): LiveBlock => {
      if (!b) {
        b = { index: idx, type, text: "", done: false };
        a.blocks.push(b);
        a.blocks.sort((x, y) => x.index - y.index);
      }
      return b;
    };
    switch (c.type) {
      case "block-start": {
        const nb = ensure(c.blockType ?? "text");
        nb.id = c.id ?? nb.id;
        nb.name = c.name ?? nb.name;
        return;
      }
      case "text-delta": ensure("text").text += c.text ?? ""; return;
      case "reasoning-delta": ensure("reasoning").text += c.text ?? ""; return;
      case "tool-call-delta": {
        const nb = ensure("tool-call");
        nb.id = c.id ?? nb.id;
        nb.name = c.name ?? nb.name;
        nb.text += c.argumentsDelta ?? "";
        return;
      }
      case "block-end": {
        const blk = c.block as Block | undefined;
        const nb = ensure(blk?.type ?? "text");
        if (blk?.type === "tool-call") { nb.id = blk.id; nb.name = blk.name; nb.text = blk.arguments; }
        else if (blk) nb.text = blk.text;
        nb.done = true;
        return;
      }
      default:
        return;
    }
  }

  private foldTool(f: ToolRuntimeFrame): void {
    let t = this.toolRuntime.get(f.callId);
    if (!t) {
      t = { callId: f.callId, name: f.name, phases: [], waiting: false };
      this.toolRuntime.set(f.callId, t);
    }
    t.phases.push({ phase: f.phase, status: f.status, detail: f.detail, time: f.time });
    if (f.phase === "approval") t.waiting = f.status === "waiting";
    if (f.phase === "result") t.waiting = false;
  }

  /** The text streamed so far by the live attempt (text blocks only). */
  liveText(): string {
    return (this.attempt?.blocks ?? []).filter((b) => b.type === "text").map((b) => b.text).join("");
  }

  /** Calls that wait for an approval decision right now (log + live frames). */
  waitingApprovals(): { callId: string; name: string; reason?: string }[] {
    const out = new Map(this.approvals);
    for (const t of this.toolRuntime.values()) if (t.waiting && !out.has(t.callId)) out.set(t.callId, { callId: t.callId, name: t.name });
    return [...out.values()];
  }

  /** The first turn/end after `seq`. */
  turnEndAfter(seq: number): { turn?: number; reason?: unknown; seq: number } | undefined {
    return this.turnEnds.find((t) => t.seq > seq);
  }

  /** The text of the last assistant message of `turn` (default: the last ended turn). */
  finalAnswer(turn?: number): string {
    const tt = turn ?? this.turnEnds[this.turnEnds.length - 1]?.turn;
    if (tt === undefined) return "";
    for (let i = this.events.length - 1; i >= 0; i--) {
      const e = this.events[i];
      if (e.type === "assistant/message" && e.turn === tt && e.message?.role === "assistant") {
        const text = e.message.content.filter((b) => b.type === "text").map((b) => (b as { text: string }).text).join("");
        if (text) return text;
      }
    }
    return "";
  }
}

// ClientSessionModel (seed 001 L8): THE fold of follow and control items into view state — the
// same fold as dsh_notebook/client/model.py (+ frames.py, views.py). `state()` returns the same
// JSON as the Python `ClientSessionModel.state()` after every item; the parity test
// (tests/client/test_parity.py) checks it on recorded real runs. The state's shapes are not
// declared here: `FoldState` and its parts are generated from dsh_notebook/wire/fold_state.py
// (`wire.gen.ts`, `make types`), so a field renamed there fails tsc here until the fold follows.
import type {
  AssistantStreamFrame, ControlItem, FoldState, FollowItem, InboxEntry, InboxSpliced, InboxState, PausedItem,
  PauseState, PendingApprovalState, QueueItem, RunState, SessionEvent, SessionHeader, StreamChunk, StreamingAttempt,
  StreamingBlock, Submission, ToolPhase, ToolRuntimeFrame, ToolState, TurnEndEntry, TurnEndReason, UserMessage, WireError,
} from "./types";

const pauseState = (p: PausedItem): PauseState =>
  ({ stage: p.stage, callId: p.callId ?? null, seq: p.seq ?? null, name: p.name ?? null, editable: p.editable ?? null, payload: p.payload });

const CANCELED_REASON: TurnEndReason = { kind: "aborted", cause: "canceled before it ran" };

const newSubmission = (requestId: string, text: string | null = null, mode: Submission["mode"] = null): Submission =>
  ({ requestId, text, mode, state: "pending", rpcId: null, queuedSeq: null, claimSeq: null, seq: null, turn: null, error: null });
const newTool = (callId: string, name: string): ToolState =>
  ({ callId, name, arguments: null, phases: [], waiting: false, callSeq: null, resultSeq: null, isError: null });

/** The concatenated `kind` blocks of a wire message. */
export function textOf(message: { content?: readonly { type: string; text?: string }[] }, kind = "text"): string {
  return (message.content ?? []).filter((b) => b.type === kind).map((b) => b.text ?? "").join("");
}

export class ClientSessionModel implements FoldState {
  sessionId: string | null = null;
  header: SessionHeader | null = null;
  start = -1;
  /** Inclusive last seq folded (-1 when empty). */
  cursor = -1;
  events: SessionEvent[] = [];
  status: FoldState["status"] = "idle";
  turn: number | null = null;
  step: number | null = null;
  attempt: StreamingAttempt | null = null;
  tools: Record<string, ToolState> = {};
  approvals: Record<string, PendingApprovalState> = {};
  queue: QueueItem[] = [];
  inbox: InboxState = { "next-turn": [], "next-step": [] };
  submissions: Record<string, Submission> = {};
  turnEnds: TurnEndEntry[] = [];
  paused: PauseState | null = null;
  gap = false;
  /** A stream error (not fold state: the connection reports it). */
  error?: WireError;
  /** Bumped on every change; views compare it to skip work. */
  revision = 0;
  /** Call ids whose `waiting` may be true (a turn/end clears only these, not every tool). */
  private maybeWaiting = new Set<string>();
  private listeners = new Set<(m: ClientSessionModel) => void>();

  constructor(sessionId: string | null = null, cursor = -1) {
    this.sessionId = sessionId;
    this.reset(cursor);
  }

  /** A deep copy of the whole view state (what the parity test compares). */
  state(): FoldState {
    const { sessionId, header, start, cursor, events, status, turn, step, attempt, tools, approvals, queue, inbox, submissions, turnEnds, paused, gap } = this;
    return JSON.parse(JSON.stringify({ sessionId, header, start, cursor, events, status, turn, step, attempt, tools, approvals, queue, inbox, submissions, turnEnds, paused, gap })) as FoldState;
  }

  subscribe(fn: (m: ClientSessionModel) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  private changed(): void {
    this.revision += 1;
    for (const fn of this.listeners) fn(this);
  }

  private reset(cursor = -1): void {
    this.header = null;
    this.start = this.cursor = cursor;
    this.events = [];
    this.status = "idle";
    this.turn = this.step = null;
    this.attempt = null;
    this.tools = {};
    this.approvals = {};
    this.queue = [];
    this.inbox = { "next-turn": [], "next-step": [] };
    this.submissions = {};
    this.turnEnds = [];
    this.paused = null;
    this.gap = false;
    this.maybeWaiting = new Set();
  }

  // -- the client's own submissions (client/model.py: submit / accepted / rejected) -----------
  submit(requestId: string, text: string, mode: Submission["mode"] = "queue"): void {
    this.submissions[requestId] = newSubmission(requestId, text, mode);
    this.changed();
  }
  accepted(requestId: string, rpcId: string | null = null): void {
    const sub = (this.submissions[requestId] ??= newSubmission(requestId));
    sub.rpcId = rpcId;
    if (sub.state === "pending") sub.state = "accepted";
    this.changed();
  }
  rejected(requestId: string, error: WireError): void {
    const sub = (this.submissions[requestId] ??= newSubmission(requestId));
    sub.state = "rejected";
    sub.error = { code: error.code, message: error.message };
    this.changed();
  }

  // -- the fold -------------------------------------------------------------------------------
  /** Fold many items, notifying listeners once. */
  applyAll(items: FollowItem[]): void {
    for (const item of items) this.fold(item);
    this.changed();
  }

  apply(item: FollowItem): void {
    this.fold(item);
    this.changed();
  }

  /** Hold at most the last `keep` events (the window of a widget on a long session). */
  trim(keep: number): void {
    const drop = this.events.length - Math.max(0, keep);
    if (drop <= 0) return;
    this.events.splice(0, drop);
    this.start += drop;
    this.changed();
  }

  /** The fold holds the session from its first event (not a window of it). */
  get whole(): boolean {
    return this.start < 0;
  }

  /** Fold one control item (only what concerns this session). */
  applyControl(item: ControlItem): void {
    if (item.type === "baseline") {
      for (const entry of item.sessions ?? []) {
        if (entry.sessionId === this.sessionId) { this.queue = [...(entry.queue ?? [])]; this.status = entry.status || this.status; }
      }
    } else if (item.sessionId === this.sessionId && item.type === "queue") {
      this.queue = [...(item.items ?? [])];
    } else if (item.sessionId === this.sessionId && item.type === "status") {
      this.status = item.status || this.status;
    }
    this.changed();
  }

  private fold(item: FollowItem): void {
    switch (item.type) {
      case "snapshot": {
        if (this.sessionId !== null && item.sessionId !== this.sessionId) this.reset();
        this.sessionId = item.sessionId ?? null;
        this.header = item.header ?? null;
        this.gap = false;
        if (item.start !== undefined && item.start !== null && item.start > this.cursor) {
          this.events = []; // a window: it begins after `start`, nothing is missing before it
          this.start = this.cursor = item.start;
        }
        for (const ev of item.events ?? []) this.addEvent(ev);
        if (item.cursor > this.cursor) this.gap = true; // the snapshot skipped events we lack
        this.foldLive(item.live ?? {});
        return;
      }
      case "event":
        this.addEvent(item.event);
        return;
      case "assistant-stream":
        this.foldStream(item.frame);
        return;
      case "tool-runtime":
        this.foldTool(item.frame, false);
        return;
      case "status":
        this.status = item.status || this.status;
        this.turn = item.turn ?? null;
        this.step = item.step ?? null;
        return;
      case "paused":
        this.paused = pauseState(item);
        return;
      case "resumed":
        this.paused = null;
        return;
    }
  }

  private foldLive(live: Partial<RunState>): void {
    this.status = live.status || "idle";
    this.turn = live.turn ?? null;
    this.step = live.step ?? null;
    this.attempt = null;
    const a = live.assistant;
    if (a) {
      const attempt = (this.attempt = this.newAttempt(a));
      for (const entry of a.chunks ?? []) {
        this.foldChunk(attempt, entry.chunk);
        if (entry.time !== undefined && entry.time !== null) attempt.lastChunkTime = entry.time;
      }
    }
    for (const f of Object.values(live.tools ?? {})) this.foldTool(f, true);
    this.approvals = {};
    for (const ap of live.approvals ?? []) this.approvals[ap.callId] = { callId: ap.callId, name: ap.name, reason: ap.reason ?? null };
    this.paused = live.paused ? pauseState(live.paused) : null;
  }

  private addEvent(ev: SessionEvent): void {
    const seq = ev.seq ?? -1;
    if (seq <= this.cursor) return; // a duplicate from a catch-up: already folded
    if (seq > this.cursor + 1) {
      this.gap = true;
      return;
    }
    this.events.push(ev);
    this.cursor = seq;
    switch (ev.type) {
      case "user/message": {
        const source = ev.message.source;
        const rid = source?.requestId ?? null;
        const sub = rid ? this.sub(rid, textOf(ev.message)) : null; // (the text only when there is a submission)
        if (sub && source?.kind === "user") {
          sub.state = "delivered"; sub.seq = seq; sub.turn = ev.turn ?? null;
          if (sub.claimSeq === null) sub.claimSeq = seq;
        }
        return;
      }
      case "assistant/message":
      case "assistant/attempt":
        this.attempt = null; // the durable event settles the live attempt
        return;
      case "tool/call": {
        const t = (this.tools[ev.callId] ??= newTool(ev.callId, ev.name));
        t.name = ev.name; t.arguments = ev.arguments; t.callSeq = seq;
        return;
      }
      case "debug/edit": {
        // the debugger changed what the call runs with (02–03): approvals and views show that
        const t = ev.target === "arguments" && ev.callId ? this.tools[ev.callId] : undefined;
        if (t) t.arguments = typeof ev.after === "string" ? ev.after : JSON.stringify(ev.after);
        return;
      }
      case "tool/result": {
        const callId = String(ev.message.toolCallId);
        const t = (this.tools[callId] ??= newTool(callId, ev.error?.name || "?"));
        t.resultSeq = seq; t.isError = Boolean(ev.message.isError); t.waiting = false;
        delete this.approvals[callId];
        return;
      }
      case "approval/asked":
        this.approvals[ev.callId] = { callId: ev.callId, name: ev.name, reason: ev.reason ?? null };
        return;
      case "approval/decided":
        delete this.approvals[ev.callId];
        if (this.tools[ev.callId]) this.tools[ev.callId].waiting = false;
        return;
      case "agent/inbox/spliced":
        this.splice(ev);
        return;
      case "turn/start":
        this.turn = ev.turn ?? null;
        return;
      case "turn/end":
        this.turnEnds.push({ turn: ev.turn ?? null, reason: ev.reason, seq });
        this.attempt = null;
        this.paused = null;
        for (const id of this.maybeWaiting) { const t = this.tools[id]; if (t) t.waiting = false; }
        this.maybeWaiting.clear();
        return;
      default:
        return;
    }
  }

  private splice(ev: InboxSpliced): void {
    const lst = (this.inbox[ev.target] ??= []);
    const start = ev.start || 0, count = ev.removedCount || 0;
    const added: InboxEntry[] = (ev.inserted ?? []).map((m: UserMessage, k) => ({ id: `i${ev.seq}.${k}`, requestId: m.source?.requestId ?? null, text: textOf(m) }));
    const removed = lst.splice(start, count, ...added);
    for (const entry of added) {
      const sub = this.sub(entry.requestId, entry.text);
      if (sub && (sub.state === "pending" || sub.state === "accepted")) { sub.state = "queued"; sub.queuedSeq = ev.seq; }
    }
    for (const entry of removed) {
      const sub = this.sub(entry.requestId, entry.text);
      if (sub) { sub.state = ev.outcome === "claimed" ? "claimed" : "canceled"; sub.claimSeq = ev.seq; }
    }
  }

  /** The submission of `requestId` (made for ones other clients submitted). */
  private sub(requestId: string | null, text: string): Submission | null {
    if (!requestId) return null;
    return (this.submissions[requestId] ??= newSubmission(requestId, text));
  }

  private newAttempt(f: { attemptId: string; turn?: number | null; step?: number | null; startedAfterSeq?: number | null }): StreamingAttempt {
    return { attemptId: String(f.attemptId), turn: f.turn ?? null, step: f.step ?? null, startedAfterSeq: f.startedAfterSeq ?? null, blocks: [], chunks: 0, outcome: null, lastChunkTime: null };
  }

  private foldStream(frame: AssistantStreamFrame): void {
    if (frame.kind === "start") {
      this.attempt = this.newAttempt(frame);
      return;
    }
    const a = this.attempt;
    if (!a || a.attemptId !== frame.attemptId) return;
    if (frame.kind === "chunk") {
      this.foldChunk(a, frame.chunk);
      if (frame.time !== undefined && frame.time !== null) a.lastChunkTime = frame.time;
      return;
    }
    const outcome = frame.outcome ?? { kind: "abandoned" as const };
    if (outcome.kind !== "committed") this.attempt = null;
    else if (outcome.seq !== undefined && outcome.seq !== null && outcome.seq <= this.cursor) this.attempt = null; // event already here
    else a.outcome = { kind: "committed", seq: outcome.seq ?? null };
  }

  private foldChunk(a: StreamingAttempt, c: StreamChunk): void {
    a.chunks += 1;
    const idx = ("index" in c ? c.index : 0) || 0;
    const block = (type: StreamingBlock["type"]): StreamingBlock => {
      let b = a.blocks.find((x) => x.index === idx);
      if (!b) {
        b = { index: idx, type, text: "", id: null, name: null, done: false };
        a.blocks.push(b);
        a.blocks.sort((x, y) => x.index - y.index);
      }
      return b;
    };
    switch (c.type) {
      case "block-start": {
        const b = block(c.blockType || "text");
        b.id = c.id || b.id; b.name = c.name || b.name;
        return;
      }
      case "text-delta": block("text").text += c.text || ""; return;
      case "reasoning-delta": block("reasoning").text += c.text || ""; return;
      case "tool-call-delta": {
        const b = block("tool-call");
        b.id = c.id || b.id; b.name = c.name || b.name;
        b.text += c.argumentsDelta || "";
        return;
      }
      case "block-end": {
        const done = c.block;
        const b = block(done?.type || "text");
        if (done?.type === "tool-call") { b.id = done.id ?? null; b.name = done.name ?? null; b.text = done.arguments || ""; }
        else if (done) b.text = done.text || "";
        b.done = true;
        return;
      }
      default:
        return;
    }
  }

  /** `again`: the frame may already be folded (a snapshot's live part after a reconnect). */
  private foldTool(f: ToolRuntimeFrame, again: boolean): void {
    const callId = String(f.callId);
    const t = (this.tools[callId] ??= newTool(callId, String(f.name || "?")));
    const phase: ToolPhase = { phase: f.phase, status: f.status, detail: f.detail ?? null, time: f.time ?? null };
    const last = t.phases[t.phases.length - 1];
    const same = last && last.phase === phase.phase && last.status === phase.status && last.detail === phase.detail && last.time === phase.time;
    if (!(again && same)) t.phases.push(phase);
    if (phase.phase === "approval") t.waiting = phase.status === "waiting";
    if (t.waiting) this.maybeWaiting.add(callId);
    else if (phase.phase === "result") t.waiting = false;
  }

  // -- views (client/views.py) ------------------------------------------------------------------
  /** The folded event with that seq (undefined if it is not held). */
  event(seq: number | null | undefined): SessionEvent | undefined {
    if (seq === null || seq === undefined || !(this.start < seq && seq <= this.cursor)) return undefined;
    return this.events[seq - this.start - 1];
  }

  /** The text the live attempt has streamed so far (its text blocks). */
  liveText(): string {
    return (this.attempt?.blocks ?? []).filter((b) => b.type === "text").map((b) => b.text).join("");
  }

  /** Calls that wait for an approval decision right now (log + live frames). */
  waitingApprovals(): PendingApprovalState[] {
    const out = new Map(Object.entries(this.approvals));
    for (const t of Object.values(this.tools)) if (t.waiting && !out.has(t.callId)) out.set(t.callId, { callId: t.callId, name: t.name, reason: null });
    return [...out.values()];
  }

  /** The first turn/end after `seq`. */
  turnEndAfter(seq: number | null): TurnEndEntry | undefined {
    return this.turnEnds.find((t) => t.seq !== null && seq !== null && t.seq > seq);
  }

  /** How a submission ended (its turn's end, a synthetic aborted end if canceled), else undefined. */
  submissionOutcome(requestId: string): TurnEndEntry | undefined {
    const sub = this.submissions[requestId];
    if (!sub) return undefined;
    if (sub.state === "canceled") return { turn: null, reason: { ...CANCELED_REASON }, seq: sub.claimSeq };
    if (sub.state === "claimed" || sub.state === "delivered") return this.turnEndAfter(sub.claimSeq);
    return undefined;
  }

  /** The text of the last assistant message of `turn` (default: the last ended turn). */
  finalAnswer(turn?: number | null): string {
    const tt = turn ?? this.turnEnds[this.turnEnds.length - 1]?.turn;
    if (tt === undefined || tt === null) return "";
    for (let i = this.events.length - 1; i >= 0; i--) {
      const e = this.events[i];
      if (e.type === "assistant/message" && e.turn === tt) {
        const text = textOf(e.message);
        if (text) return text;
      }
    }
    return "";
  }
}


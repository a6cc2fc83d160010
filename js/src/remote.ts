// Remote (seed 001 L2): a method facade over a Connection, one method per host endpoint.
import type { Connection, StreamHandle, StreamHandlers } from "./connection";
import type { DebugArgs, DebugState, DiffArgs, KeepArgs, KeptFiles, ModeSet, Page, PageArgs, RewindArgs, Rewound, TurnDiff } from "./wire.gen";

export interface PromptRequest {
  sessionId: string;
  requestId: string;
  mode: "queue" | "steer";
  content: string;
}

let requestCounter = 0;
export function newRequestId(): string {
  requestCounter += 1;
  return `req_${Date.now().toString(36)}_${requestCounter}`;
}

export class Remote {
  constructor(private readonly connection: Connection) {}

  create(args: { cwd?: string; model?: string; approve?: string; mode?: string } = {}): Promise<{ sessionId: string; cwd?: string; model?: string }> {
    return this.connection.call("session/create", args);
  }
  prompt(request: PromptRequest): Promise<{ accepted: boolean }> {
    return this.connection.call("session/prompt", { request });
  }
  cancel(sessionId: string): Promise<unknown> {
    return this.connection.call("session/cancel", { sessionId });
  }
  /** `scope: "session"` with allow: this tool (bash: a read-only command name or this exact command) for the rest of the session.
   *  `plan`: the answer to exit_plan_mode — `mode` (accept-edits / default) with allow, `feedback` with deny. */
  approve(sessionId: string, callId: string, decision: "allow" | "deny", scope: "call" | "session" = "call",
    plan: { mode?: string; feedback?: string } = {}): Promise<unknown> {
    const args: Record<string, unknown> = scope === "session" ? { sessionId, callId, decision, scope } : { sessionId, callId, decision };
    if (plan.mode) args.mode = plan.mode;
    if (plan.feedback) args.feedback = plan.feedback;
    return this.connection.call("session/approve", args);
  }
  /** `session/mode`: the session's permission mode from now on (BYPASS_NOT_ARMED unless armed). */
  setMode(sessionId: string, mode: string): Promise<ModeSet> {
    return this.connection.call<ModeSet>("session/mode", { sessionId, mode });
  }
  info(sessionId: string): Promise<Record<string, unknown>> {
    return this.connection.call("session/info", { sessionId });
  }
  /** The agent debugger (`session/debug`): break / continue / step / edit / state. */
  debug(args: DebugArgs): Promise<DebugState> {
    return this.connection.call<DebugState>("session/debug", args as unknown as Record<string, unknown>);
  }
  /** Checkpoints: files / conversation / variables back to the start of a turn (`session/rewind`). */
  rewind(args: RewindArgs): Promise<Rewound> {
    return this.connection.call<Rewound>("session/rewind", args as unknown as Record<string, unknown>);
  }
  /** Checkpoints: the unified diffs of the files a turn changed (`session/diff`). */
  /** The inspector's per-file Keep: `checkpoint/kept`, which later rewinds and undos respect (`session/keep`). */
  keep(args: KeepArgs): Promise<KeptFiles> {
    return this.connection.call<KeptFiles>("session/keep", args as unknown as Record<string, unknown>);
  }

  diff(args: DiffArgs): Promise<TurnDiff> {
    return this.connection.call<TurnDiff>("session/diff", args as unknown as Record<string, unknown>);
  }
  /** A page of the session's views (`session/page`): rows, stats, the timeline, a turn, a diff … */
  page(sessionId: string, query: PageArgs["query"]): Promise<Page> {
    return this.connection.call<Page>("session/page", { sessionId, query });
  }
  /** `window`: hold at most the last `window` events (the snapshot starts there; the rest in pages). */
  follow(sessionId: string, cursor: number | undefined, handlers: StreamHandlers, window?: number): StreamHandle {
    const payload: Record<string, unknown> = { sessionId };
    if (cursor !== undefined && cursor >= 0) payload.cursor = cursor;
    if (window !== undefined && window > 0) payload.window = window;
    return this.connection.open("session/follow", payload, handlers);
  }
}

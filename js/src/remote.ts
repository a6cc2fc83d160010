// Remote (seed 001 L2): a method facade over a Connection, one method per host endpoint. Each
// endpoint's args and result are the generated `UnaryEndpoints` / `StreamEndpoints` (wire.gen.ts,
// from dsh_notebook/wire/endpoints.py): nothing here restates a shape, so a field renamed in Python
// fails tsc here (or at the caller) after `make types`.
import type { ArgsOf, Connection, ResultOf, StreamHandle, StreamHandlers } from "./connection";
import type { ApproveArgs, FollowArgs, FollowStreamItem, PageArgs, PromptCommand } from "./types";

/** What `prompt` sends: the Prompt command (`PromptCommand`, checked again by the host's Gateway). */
export type PromptRequest = PromptCommand;

let requestCounter = 0;
export function newRequestId(): string {
  requestCounter += 1;
  return `req_${Date.now().toString(36)}_${requestCounter}`;
}

export class Remote {
  constructor(private readonly connection: Connection) {}

  create(args: ArgsOf<"session/create"> = {}): Promise<ResultOf<"session/create">> {
    return this.connection.call("session/create", args);
  }
  prompt(request: PromptRequest): Promise<ResultOf<"session/prompt">> {
    return this.connection.call("session/prompt", { request });
  }
  cancel(sessionId: string): Promise<ResultOf<"session/cancel">> {
    return this.connection.call("session/cancel", { sessionId });
  }
  /** `scope: "session"` with allow: this tool (bash: a read-only command name or this exact command) for the rest of the session.
   *  `plan`: the answer to exit_plan_mode — `mode` (accept-edits / default) with allow, `feedback` with deny. */
  approve(sessionId: string, callId: string, decision: ApproveArgs["decision"], scope: NonNullable<ApproveArgs["scope"]> = "call",
    plan: { mode?: ApproveArgs["mode"]; feedback?: string } = {}): Promise<ResultOf<"session/approve">> {
    const args: ApproveArgs = scope === "session" ? { sessionId, callId, decision, scope } : { sessionId, callId, decision };
    if (plan.mode) args.mode = plan.mode;
    if (plan.feedback) args.feedback = plan.feedback;
    return this.connection.call("session/approve", args);
  }
  /** `session/mode`: the session's permission mode from now on (BYPASS_NOT_ARMED unless armed). */
  setMode(sessionId: string, mode: ArgsOf<"session/mode">["mode"]): Promise<ResultOf<"session/mode">> {
    return this.connection.call("session/mode", { sessionId, mode });
  }
  info(sessionId: string): Promise<ResultOf<"session/info">> {
    return this.connection.call("session/info", { sessionId });
  }
  /** The agent debugger (`session/debug`): break / continue / step / edit / state. */
  debug(args: ArgsOf<"session/debug">): Promise<ResultOf<"session/debug">> {
    return this.connection.call("session/debug", args);
  }
  /** Checkpoints: files / conversation / variables back to the start of a turn (`session/rewind`). */
  rewind(args: ArgsOf<"session/rewind">): Promise<ResultOf<"session/rewind">> {
    return this.connection.call("session/rewind", args);
  }
  /** The inspector's per-file Keep: `checkpoint/kept`, which later rewinds and undos respect (`session/keep`). */
  keep(args: ArgsOf<"session/keep">): Promise<ResultOf<"session/keep">> {
    return this.connection.call("session/keep", args);
  }
  /** Checkpoints: the unified diffs of the files a turn changed (`session/diff`). */
  diff(args: ArgsOf<"session/diff">): Promise<ResultOf<"session/diff">> {
    return this.connection.call("session/diff", args);
  }
  /** A page of the session's views (`session/page`): rows, stats, the timeline, a turn, a diff … */
  page(sessionId: string, query: PageArgs["query"]): Promise<ResultOf<"session/page">> {
    return this.connection.call("session/page", { sessionId, query });
  }
  /** `window`: hold at most the last `window` events (the snapshot starts there; the rest in pages). */
  follow(sessionId: string, cursor: number | undefined, handlers: StreamHandlers<FollowStreamItem>, window?: number): StreamHandle {
    const args: FollowArgs = { sessionId };
    if (cursor !== undefined && cursor >= 0) args.cursor = cursor;
    if (window !== undefined && window > 0) args.window = window;
    return this.connection.open("session/follow", args, handlers);
  }
}

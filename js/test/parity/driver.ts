// The client side of a recorded transcript (js/test/fixtures/streams/*.jsonl), folded by the JS
// ClientSessionModel exactly as tests/client/parity.py folds it with the Python one: the
// client's own prompt calls (submit → accepted / rejected) and every item of its follow and
// control streams. One state per line that reached the model.
import { ClientSessionModel } from "../../src/fold";
import type { ClientEnvelope, ControlItem, FoldState, FollowArgs, FollowItem, PromptArgs, ServerEnvelope } from "../../src/types";

export interface TranscriptLine { dir: "in" | "out"; msg: ClientEnvelope | ServerEnvelope }
export interface Step { line: number; state: FoldState }

/** `window`: the model holds at most that many events (trimmed after each follow item, as a widget does). */
export function replay(lines: TranscriptLine[], window?: number): Step[] {
  let model: ClientSessionModel | null = null;
  const streams = new Map<string, string>(); // streamId -> endpoint
  const prompts = new Map<string, string>(); // rpcId -> requestId
  const steps: Step[] = [];
  lines.forEach((line, i) => {
    const msg = line.msg;
    if (line.dir === "out") {
      if (msg.type === "open") {
        streams.set(msg.streamId, msg.endpoint);
        const args = (msg.payload?.args ?? {}) as Partial<FollowArgs>;
        if (msg.endpoint === "session/follow" && model === null) model = new ClientSessionModel(args.sessionId ?? null, args.cursor ?? -1);
        return;
      }
      if (msg.type === "client-request" && msg.method === "session/prompt" && model !== null) {
        const req = (msg.payload?.args as unknown as PromptArgs).request;
        const text = typeof req.content === "string" ? req.content : req.content.map((b) => (typeof b.text === "string" ? b.text : "")).join("");
        prompts.set(msg.rpcId, req.requestId);
        model.submit(req.requestId, text, req.mode ?? "queue");
        steps.push({ line: i, state: model.state() });
      }
      return;
    }
    if (model === null) return;
    if (msg.type === "server-response" && msg.rpcId !== null && prompts.has(msg.rpcId)) {
      const rid = prompts.get(msg.rpcId) as string;
      if (msg.result.ok) model.accepted(rid, msg.rpcId);
      else model.rejected(rid, msg.result.error);
      steps.push({ line: i, state: model.state() });
    } else if (msg.type === "item") {
      const endpoint = streams.get(msg.streamId);
      if (endpoint === "session/follow") {
        model.apply(msg.value as FollowItem);
        if (window !== undefined) model.trim(window);
      }
      else if (endpoint === "session/control") model.applyControl(msg.value as ControlItem);
      else return;
      steps.push({ line: i, state: model.state() });
    }
  });
  return steps;
}

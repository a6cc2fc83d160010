// LoopWidget: the six stages of seed 000 drawn from a real session, live or replayed.
import { resolveMessageSeqs } from "./model/diff";
import { explainStage } from "./model/explain";
import { deriveMessages, messagesOfSeqs } from "./model/history";
import { Player } from "./model/playback";
import { ProvenanceIndex } from "./model/provenance";
import { runtimeView } from "./model/runtime-log";
import { CallTracer, memoPlaybackSteps, stageAt, STAGES, type StageNo, type ToolCallTrace } from "./model/stages";
import { payloadCards, stageNote } from "./model/cards";
import { newRequestId } from "./remote";
import { acquire, follow, release, type Shared, type WidgetModel } from "./transport";
import { createPromptBox, renderPlayback } from "./ui/controls";
import { renderDiagram, renderPhases, type ViewName } from "./ui/diagram";
import { frameThrottle, h, replace } from "./ui/dom";
import { renderHistory } from "./ui/history-view";
import { renderPayloads } from "./ui/payload-view";
import { renderRoles } from "./ui/roles-view";
import { Pricing, type PricingTable } from "./model/pricing";
import { TrajectoryFold } from "./model/trajectory";
import { elapsedMs, renderTotals } from "./ui/totals";

interface Position { call?: ToolCallTrace; stage: StageNo | 0; seq: number; catchingUp?: boolean }

/** Live mode never skips a stage: when several facts arrive in one batch (a 1 ms tool), the
 *  diagram walks through the stages it missed, this long each. */
const LIVE_DWELL_MS = 320;

export function renderLoop(model: WidgetModel, el: HTMLElement): () => void {
  const s: Shared = acquire(model);
  const tracer = new CallTracer();
  const prov = new ProvenanceIndex();
  const traj = new TrajectoryFold(new Pricing((model.get("pricing") as PricingTable | undefined) ?? undefined));
  const player = new Player();
  const stepsOf = memoPlaybackSteps();
  const readonly = Boolean(model.get("readonly"));
  let mode: "live" | "replay" = readonly ? "replay" : "live";
  let view: ViewName = "history";
  let showWrappers = false;
  let pendingAnswer: { requestId: string } | null = null;
  let flashSeq: number | null = null;
  let errorText = String(model.get("error") ?? "");
  let liveIndex = -1;
  let liveTimer: ReturnType<typeof setTimeout> | null = null;

  const root = h("div", { class: "dsh-root dsh-loop" });
  el.append(root);
  const header = h("div", { class: "dsh-header" });
  const diagram = h("div", { class: "dsh-diagram-wrap" });
  const explain = h("div", { class: "dsh-explain", "aria-live": "polite" });
  const tabs = h("div", { class: "dsh-tabs", role: "tablist" });
  const viewEl = h("div", { class: "dsh-view" });
  const controls = h("div", { class: "dsh-controls" });
  const errorEl = h("div", { class: "dsh-error", role: "alert" });
  const totalsEl = h("span", { class: "dsh-totals-wrap", "aria-live": "off" });
  const drawTotals = () => {
    const events = traj.update(s.fold.events) && s.fold.events, t = traj.totals();
    replace(totalsEl, renderTotals(t, elapsedMs(traj, t, events[events.length - 1]?.time ?? null, s.fold.status === "running")));
  };
  const ticker = setInterval(() => { if (s.fold.status === "running") drawTotals(); }, 1000);
  const prompt = createPromptBox({
    submit: (text, steer) => void submit(text, steer),
    stop: () => { if (s.sessionId) s.remote.cancel(s.sessionId).catch((e) => prompt.setStatus(`stop failed: ${e.message}`, "err")); },
  });
  root.append(header, errorEl, diagram, explain, controls, tabs, viewEl);
  if (!readonly) root.append(prompt.el);

  const showError = (msg: string) => { errorText = msg; render.schedule(); };

  async function submit(text: string, steer: boolean): Promise<void> {
    try {
      if (!s.sessionId) {
        prompt.setStatus("creating a session…");
        const created = await s.remote.create((model.get("create_args") as Record<string, unknown>) ?? {});
        // remembered in the widget state: a reloaded page or another view follows the same session
        model.set?.("session_id", created.sessionId);
        model.save_changes?.();
        follow(s, created.sessionId, showError);
      }
      const requestId = newRequestId();
      const mode_ = steer ? "steer" : "queue";
      prompt.setStatus(`sending ${requestId}…`);
      prompt.setAnswer("");
      s.fold.submit(requestId, text, mode_);
      pendingAnswer = { requestId };
      const res = await s.remote.prompt({ sessionId: s.sessionId as string, requestId, mode: mode_, content: text }).catch((e) => {
        s.fold.rejected(requestId, { code: (e as { code?: string }).code ?? "ERROR", message: (e as Error).message });
        throw e;
      });
      if (res.accepted) s.fold.accepted(requestId);
      prompt.setStatus(res.accepted ? `accepted ✓ (${requestId}) — the answer arrives through follow` : `not accepted (${requestId})`, res.accepted ? "ok" : "err");
      mode = "live";
      render.schedule();
    } catch (e) {
      prompt.setStatus(`${(e as { code?: string }).code ?? "ERROR"}: ${(e as Error).message}`, "err");
    }
  }

  function position(traces: ToolCallTrace[]): Position {
    if (mode === "replay") {
      const st = player.current;
      if (!st) return { call: traces[0], stage: 0, seq: -1 };
      return { call: traces[st.call], stage: st.stage, seq: st.seq };
    }
    const steps = player.steps;
    const target = steps.length - 1;
    if (liveIndex < 0 && target >= 0) liveIndex = steps.findIndex((st) => st.call === steps[target].call);
    if (liveIndex >= 0 && liveIndex < target) {
      if (liveTimer === null) liveTimer = setTimeout(() => { liveTimer = null; liveIndex += 1; render.schedule(); }, LIVE_DWELL_MS);
      const st = steps[liveIndex];
      return { call: traces[st.call], stage: st.stage, seq: st.seq, catchingUp: true };
    }
    liveIndex = target;
    const call = traces[traces.length - 1];
    const seq = s.fold.cursor;
    if (!call) return { stage: 0, seq };
    const rt = s.fold.tools[call.callId];
    let stage = stageAt(call, seq, Boolean(rt && rt.phases.length));
    const last = steps[target];
    if (last && last.call === call.index && stage < last.stage) stage = last.stage; // never step back
    return { call, stage, seq };
  }

  function answerText(): string {
    const sub = pendingAnswer ? s.fold.submissions[pendingAnswer.requestId] : undefined;
    if (!sub || sub.seq === null) return "";
    const end = s.fold.turnEndAfter(sub.seq);
    if (end) {
      const kind = String((end.reason as { kind?: string } | undefined)?.kind ?? "ended");
      return `answer (turn ${end.turn ?? "?"} ${kind}): ${s.fold.finalAnswer(end.turn) || "(no text)"}`;
    }
    const live = s.fold.liveText();
    return live ? `answer streaming: ${live}` : "";
  }

  function seekStage(stage: StageNo, pos: Position): void {
    if (!pos.call) return;
    if (mode === "live") { mode = "replay"; player.setSteps(stepsOf(tracer.traces, s.fold.events)); }
    if (!player.seekStage(pos.call.index, stage)) player.seekCall(pos.call.index);
  }

  function jump(seq: number): void {
    view = "payloads";
    flashSeq = seq;
    render.schedule();
  }

  const render = frameThrottle(() => {
    const events = s.fold.events;
    const traces = tracer.update(events);
    prov.update(events);
    player.setSteps(stepsOf(traces, events));
    const pos = position(traces);
    const call = pos.call;
    // live tool-runtime frames when there are any, else the phases re-derived from the log
    // through the shown position (replay, reload, a follow that began after the call)
    const rt = runtimeView(call ? s.fold.tools[call.callId] : undefined, events, call, pos.seq);
    const hdr = s.fold.header;
    replace(header,
      h("span", { class: "dsh-title" }, "Tool feedback loop"),
      h("span", { class: "dsh-sub" }, `${s.sessionId ?? String(model.get("session_id") || "new session")}${hdr?.cwd ? ` · ${hdr.cwd}` : ""} · ${events.length} events · ${s.fold.status}`),
      mode === "replay" ? h("span", { class: "dsh-badge" }, player.playing ? "replaying" : "paused") : h("span", { class: "dsh-badge dsh-badge-live" }, "live"),
      totalsEl);
    drawTotals();
    errorEl.hidden = !errorText && !s.fold.error;
    errorEl.textContent = errorText || (s.fold.error ? `${s.fold.error.code}: ${s.fold.error.message}` : "");

    const frozenSeqs = call?.frozenSeq !== undefined && pos.stage >= 6 ? resolveMessageSeqs(events, call.frozenSeq) : [];
    // stage 05's count is that of the history the next request froze (request/frozen.messageSeqs),
    // the same number in live and replay mode; before it is frozen, what derive_messages() gives now
    const derived = deriveMessages(events, pos.seq);
    const messageCount = call?.frozenSeq !== undefined ? resolveMessageSeqs(events, call.frozenSeq).length : derived.length;
    replace(diagram, renderDiagram({
      call, stage: pos.stage, seq: pos.seq, runtime: rt, messageCount,
      frozenCount: frozenSeqs.length, streaming: Boolean(s.fold.attempt),
    }, { onStage: (st) => { seekStage(st, pos); render.schedule(); }, onView: (v) => { view = v; render.schedule(); } }));

    // explanation beneath the diagram
    if (call && pos.stage) {
      const ex = explainStage(call, pos.stage, events);
      const waiting = mode === "live" ? s.fold.waitingApprovals().filter((w) => w.callId === call.callId) : [];
      replace(explain,
        h("div", { class: "dsh-explain-title" }, `0${pos.stage} · ${STAGES[pos.stage - 1].title} — ${ex.title}`),
        h("div", { class: "dsh-explain-text" }, ex.text),
        pos.stage === 3 || (pos.stage === 4 && rt?.derived) ? renderPhases(rt, call.approvalSeqs.length > 0) : null,
        waiting.length ? approvalBar(call) : null);
    } else {
      replace(explain, h("div", { class: "dsh-explain-title" }, "From one tool call to the next request"),
        h("div", { class: "dsh-explain-text" }, s.fold.attempt ? "The model is streaming its response…" : "Press play, or send a prompt: the diagram follows one tool call from the model's intent to the next request. The three views below change with the stage; links in the diagram switch them."));
    }
    // approvals for other calls (parallel tools) still get buttons
    if (mode === "live") for (const w of s.fold.waitingApprovals()) if (w.callId !== call?.callId) explain.append(approvalBar({ callId: w.callId, name: w.name } as ToolCallTrace));

    const stepIdx = mode === "replay" ? player.index : player.steps.length - 1;
    replace(controls, renderPlayback({
      playing: player.playing, live: mode === "live", canLive: !readonly, calls: traces,
      callIndex: call ? call.index : -1, stepIndex: stepIdx, stepCount: player.steps.length,
    }, {
      play: () => { if (mode === "live") { mode = "replay"; player.seek(-1); } player.play(); },
      pause: () => player.pause(),
      back: () => { if (mode === "live") { mode = "replay"; player.seek(player.steps.length - 1); } player.back(); },
      forward: () => { if (mode === "live") { mode = "replay"; player.seek(player.steps.length - 1); } else player.forward(); },
      scrub: (i) => { mode = "replay"; player.pause(); player.seekCall(i); },
      goLive: () => { mode = "live"; player.pause(); render.schedule(); },
    }));

    replace(tabs, ...(["history", "payloads", "roles"] as ViewName[]).map((v) => {
      const b = h("button", { class: `dsh-tab ${v === view ? "dsh-tab-on" : ""}`, role: "tab", type: "button", "aria-selected": v === view, "data-view": v },
        v === "history" ? "Message history" : v === "payloads" ? "Event payloads" : "Responsibilities");
      b.addEventListener("click", () => { view = v; render.schedule(); });
      return b;
    }));

    if (view === "history") {
      const msgs = pos.stage === 6 && call?.frozenSeq !== undefined ? messagesOfSeqs(events, frozenSeqs) : derived;
      replace(viewEl, renderHistory({
        messages: msgs, showWrappers, focusCall: call?.callId,
        attempt: mode === "live" && !pos.catchingUp ? s.fold.attempt : null,
        caption: pos.stage === 6 ? `The frozen request #${call?.frozenSeq}: its messageSeqs.` : "Only user / assistant / tool messages; system prompt and runtime-context wrappers are hidden.",
        note: stageNote(call, pos.stage),
      }, (show) => { showWrappers = show; render.schedule(); }));
    } else if (view === "payloads") {
      const cards = payloadCards(events, call, pos.seq, flashSeq);
      replace(viewEl, renderPayloads(cards, (seq) => prov.citing(seq), jump,
        "Expandable payloads of this call's events, as committed to the log; links jump to the cited event."));
      if (flashSeq !== null) {
        const target = viewEl.querySelector(`.dsh-card[data-seq="${flashSeq}"]`);
        target?.classList.add("dsh-flash");
        target?.scrollIntoView?.({ block: "nearest" });
        flashSeq = null;
      }
    } else {
      replace(viewEl, renderRoles(call, pos.stage));
    }
    prompt.setRunning(s.fold.status === "running");
    const ans = answerText();
    if (ans) prompt.setAnswer(ans);
  });

  function approvalBar(call: ToolCallTrace): HTMLElement {
    const decide = (decision: "allow" | "deny", scope: "call" | "session" = "call") => {
      if (!s.sessionId) return;
      s.remote.approve(s.sessionId, call.callId, decision, scope).catch((e) => showError(`approve failed: ${e.message}`));
    };
    const allow = h("button", { class: "dsh-btn dsh-allow", type: "button", "data-call-id": call.callId }, "Allow");
    const always = h("button", { class: "dsh-btn dsh-allow-session", type: "button", "data-call-id": call.callId,
      title: "allow this tool (for bash: this command prefix) for the rest of the session" }, "Allow for this session");
    const deny = h("button", { class: "dsh-btn dsh-deny", type: "button", "data-call-id": call.callId }, "Deny");
    allow.addEventListener("click", () => decide("allow"));
    always.addEventListener("click", () => decide("allow", "session"));
    deny.addEventListener("click", () => decide("deny"));
    return h("div", { class: "dsh-approval" }, h("span", null, `waiting for approval: ${call.name} · ${call.callId}`), allow, always, deny);
  }

  const unsubscribe = s.fold.subscribe(() => render.schedule());
  const unPlayer = player.onChange(() => render.schedule());
  const onError = () => { errorText = String(model.get("error") ?? ""); render.schedule(); };
  model.on("change:error", onError);

  const sid = String(model.get("session_id") ?? "");
  if (sid && !s.follow) follow(s, sid, showError);
  else if (sid) s.sessionId = sid;
  if (readonly) {
    // replay starts at the first tool call; it waits for the snapshot
    const off = s.fold.subscribe(() => {
      if (s.fold.events.length === 0) return;
      off();
      tracer.update(s.fold.events);
      player.setSteps(stepsOf(tracer.traces, s.fold.events));
      if (player.index < 0) player.seek(0);
    });
    if (s.fold.events.length) { player.setSteps(stepsOf(tracer.update(s.fold.events), s.fold.events)); player.seek(0); }
  }
  render.flush();

  return () => {
    if (liveTimer !== null) clearTimeout(liveTimer);
    clearInterval(ticker);
    render.cancel();
    unsubscribe();
    unPlayer();
    player.dispose();
    model.off("change:error", onError);
    release(model, s);
    root.remove();
  };
}


// LoopWidget: the six stages of seed 000 drawn from a real session, live or replayed.
import type { CreateArgs, SessionEvent } from "./types";
import { countOf, eventCount } from "./model/counts";
import { resolveMessageSeqs } from "./model/diff";
import { explainStage } from "./model/explain";
import { deriveMessages, SURFACE_TYPES } from "./model/history";
import { liveDwell, Player } from "./model/playback";
import { livePace, readingMs, wordCount } from "./model/pacing";
import { maskOf, maskTrace } from "./model/predict-mask";
import { TurnTracker, turnNarration, turnValue, WaitClock, waitingText, type TurnNow } from "./model/live-turn";
import { PredictMode } from "./model/predict";
import { ProvenanceIndex } from "./model/provenance";
import { runtimeView } from "./model/runtime-log";
import { CallTracer, memoPlaybackSteps, stageAt, STAGES, type PlaybackStep, type StageNo, type ToolCallTrace } from "./model/stages";
import { newRequestId } from "./remote";
import { acquire, follow, release, type Shared, type WidgetModel } from "./transport";
import { LoopWindow } from "./data/loop-window";
import type { DerivedMessage } from "./model/history";
import type { MessagesPage, MessagesQuery, RequestDiffPage, RequestDiffQuery, StatsPage } from "./wire.gen";
import { messagesPageOf, requestDiffPageOf } from "./data/local";
import type { Totals } from "./model/trajectory";
import type { PagedHistory } from "./model/history-focus";
import { isolateKeys, keepFocus, roving, uid } from "./ui/a11y";
import { createPlayback, createPromptBox, type PlaybackCallbacks } from "./ui/controls";
import { createDiagramFrame } from "./ui/diagram-frame";
import { renderDiagram, renderPhases } from "./ui/diagram";
import { frameThrottle, h, pressGuard, replace } from "./ui/dom";
import { createGlossary } from "./ui/glossary";
import { createApprovalBanner } from "./ui/approval-banner";
import { createExternalCalls } from "./ui/external-calls";
import { externalClientOf } from "./model/external";
import { createModeControl } from "./ui/mode-select";
import { ModeFold } from "./model/mode";
import { createPredictPanel } from "./ui/predict";
import type { PagedView, View } from "./ui/view";
import { HISTORY_PAGE } from "./ui/history-view";
import { VIEW_NAMES, VIEWS, type ViewName } from "./ui/views";
import { pausedAt } from "./model/debug";
import { DebugPanel, keepToggleFocus } from "./ui/debug-bar";
import { Pricing, type PricingTable } from "./model/pricing";
import { TrajectoryFold } from "./model/trajectory";
import { elapsedMs, renderTotals } from "./ui/totals";
import { changesBadge } from "./ui/changes";
import { keepTabInView, observePane, softBreaks } from "./ui/narrow";
import { installClicker, type ClickerAction } from "./ui/clicker";
import { createPresentControls, followLabPresentation } from "./ui/present";
import { createViewsToggle, showStage } from "./ui/presenter";
import { followCurrent, keepFocusInside } from "./ui/focus";

/** The arguments of an external call (issue 41), for the approval banner. */
function externalArgs(events: readonly SessionEvent[], callId: string): string | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const ev = events[i];
    if (ev.type === "external/call" && ev.callId === callId) return ev.arguments;
  }
  return null;
}

/** The narration's title line, as shown and as read (model/pacing.ts counts its words). */
const narrationTitle = (stage: StageNo, title: string): string => `${STAGES[stage - 1].key} · ${STAGES[stage - 1].title} — ${title}`;

interface Position {
  call?: ToolCallTrace; stage: StageNo | 0; seq: number; catchingUp?: boolean;
  /** Live: the latest turn has no tool call yet (its 01 is shown, waiting or settled as text). */
  turn?: TurnNow;
}

export function renderLoop(model: WidgetModel, el: HTMLElement): () => void {
  const s: Shared = acquire(model);
  // what the loop draws from: the fold (a short session), its live window, or a part of a long
  // session read from the kernel (data/loop-window.ts); each with its own tracer and steps
  const win = new LoopWindow(s.fold, s.pages);
  interface Drawn { part: object | null; tracer: CallTracer; prov: ProvenanceIndex; stepsOf: ReturnType<typeof memoPlaybackSteps> }
  const fresh = (part: object | null): Drawn => ({ part, tracer: new CallTracer(), prov: new ProvenanceIndex(), stepsOf: memoPlaybackSteps() });
  const liveDrawn = fresh(null);
  let partDrawn: Drawn | null = null;
  const drawn = (): Drawn => {
    const part = win.part;
    if (!part) return liveDrawn;
    if (partDrawn?.part !== part) partDrawn = fresh(part);
    return partDrawn;
  };
  /** The calls traced in what is drawn, and the events it holds (indexed by seq). */
  const tracer = { get traces() { return drawn().tracer.traces; }, update: (ev: readonly SessionEvent[]) => drawn().tracer.update(ev) };
  const prov = { update: (ev: readonly SessionEvent[]) => drawn().prov.update(ev), citing: (seq: number) => drawn().prov.citing(seq) };
  const held = (): readonly SessionEvent[] => win.events();
  const traj = new TrajectoryFold(new Pricing((model.get("pricing") as PricingTable | undefined) ?? undefined));
  const player = new Player();
  const stepsOf = (t: readonly ToolCallTrace[], e: readonly SessionEvent[]) => drawn().stepsOf(t, e);
  let histBack = 0; // a long session's history: pages of HISTORY_PAGE messages back from the newest
  let histKey = "";
  let lastHistory: DerivedMessage[] = [];
  let readingCall: number | undefined; // the session's call number being read from the kernel
  // every move of the position (a press, the scrubber, a part read) takes a number: a part that
  // arrives after a later move does not move the position back
  let nav = 0;
  const navigate = (): number => { readingCall = undefined; win.cancel(); return ++nav; };
  const readonly = Boolean(model.get("readonly"));
  let mode: "live" | "replay" = readonly ? "replay" : "live";
  let view: ViewName = VIEW_NAMES[0];
  let pendingAnswer: { requestId: string; done?: boolean } | null = null;
  let errorText = String(model.get("error") ?? "");
  let liveIndex = -1;
  let liveTimer: ReturnType<typeof setTimeout> | null = null;
  const predict = new PredictMode(); // predict, then reveal (replay only)
  let readingPace = false; // a stage stays at least its narration's reading time (model/pacing.ts)
  let viewsOpen = false; // presenter mode: the three views on demand (ui/presenter.ts)
  let lastShown = ""; // the stage / question last brought into view in presenter mode
  let wantView = false; // a presenter action asked for it (Present pressed)
  let brought = 0; // px the widget scrolled the notebook to show the current stage
  const turns = new TurnTracker();
  const waitClock = new WaitClock();
  let waitTimer: ReturnType<typeof setTimeout> | null = null;
  /** Show view `v` (and the views, in presenter mode). */
  const openView = (v: ViewName) => { view = v; viewsOpen = true; render.schedule(); };
  // one of each row of the views table, each with its own state (ui/views.ts)
  const views = Object.fromEntries(VIEW_NAMES.map((v) => [v, VIEWS[v].create({ schedule: () => render.schedule(), open: () => openView(v) })])) as Record<ViewName, View>;
  const banner = createApprovalBanner((callId, decision, scope, plan) => {
    if (!s.sessionId) return;
    return s.remote.approve(s.sessionId, callId, decision, scope, plan).catch((e) => showError(`approve failed: ${e.message}`));
  });
  const external = createExternalCalls();
  const modes = new ModeFold();
  // the permission mode (issue 36): set through session/mode; the log's mode/changed is what shows
  const modeCtl = createModeControl((m) => s.remote.setMode(s.sessionId as string, m), (msg) => showError(msg));
  const predictPanel = createPredictPanel({
    answer: (g) => { const t = predict.answer(g, tracer.traces, held()); if (t !== null) player.seek(t); render.schedule(); },
    // on from the reveal: after the last one the last stage stays (never "no stage")
    next: () => { predict.revealed = null; if (player.stepOnly || player.index >= player.steps.length - 1) player.forward(); else player.play(); render.schedule(); },
    judge: (right) => { predict.judge(right); render.schedule(); },
    setVote: (on) => { predict.vote = on; render.schedule(); },
  });
  player.gate = (i) => mode === "replay" && predict.gate(player.steps, i, tracer.traces, held());
  // a long session's replay plays on into its next part (read from the kernel)
  player.more = () => {
    if (!win.windowed || !win.moreAfter || mode !== "replay") return false;
    void stepPart(1);
    return true;
  };
  /** The words a learner reads at step `i`: the narration as the widget shows it (its title
   *  line and its text). */
  const narration = (i: number): string => {
    const st = player.steps[i];
    const call = st ? tracer.traces[st.call] : undefined;
    if (!st || !call || !st.stage) return "";
    const ex = explainStage(call, st.stage, held(), frozenTotal(call));
    return `${narrationTitle(st.stage, ex.title)} ${ex.text}`;
  };
  const readMs = (i: number) => (readingPace ? readingMs(narration(i), player.wpm) : 0);
  player.readMs = readMs;

  const root = h("div", { class: "dsh-root dsh-loop" });
  el.append(root);
  const headerInfo = h("span", { class: "dsh-header-info" });
  const header = h("div", { class: "dsh-header" }, headerInfo, modeCtl.el);
  const frame = createDiagramFrame();
  const diagram = frame.body;
  const head = h("div", { class: "dsh-head" }, header, banner.el, external.el);
  const explain = h("div", { class: "dsh-explain", "aria-live": "polite" });
  const tabs = h("div", { class: "dsh-tabs", role: "tablist", "aria-label": "views" });
  const viewId = uid("dsh-view");
  const viewEl = h("div", { class: "dsh-view", role: "tabpanel", id: viewId });
  const controls = h("div", { class: "dsh-controls" });
  const errorEl = h("div", { class: "dsh-error", role: "alert" });
  const totalsEl = h("span", { class: "dsh-totals-wrap", "aria-live": "off" });
  /** The last request went to the offline teaching model (script:*). */
  const offlineRun = (events: readonly SessionEvent[]): boolean => {
    for (let i = events.length - 1; i >= 0; i--) {
      const ev = events[i];
      if (ev.type === "request/frozen") return ev.provider === "script";
    }
    return false;
  };
  const drawTotals = () => {
    const events = s.fold.events;
    const last = events[events.length - 1]?.time ?? null;
    if (win.windowed) { // a long session's totals are the kernel's (show --stats of the whole log)
      const t = (s.pages.get({ kind: "stats", table: "tools", offset: 0, limit: 1 }) as StatsPage | undefined)?.totals as Totals | undefined;
      if (!t) return;
      replace(totalsEl, renderTotals(t, t.durationMs + openTurnMs(last), offlineRun(events)));
      return;
    }
    traj.update(events);
    const t = traj.totals();
    replace(totalsEl, renderTotals(t, elapsedMs(traj, t, last, s.fold.status === "running"), offlineRun(events)));
  };
  /** A long session's open turn, so far (its start in the fold's window; a turn that began before
   *  the window counts from the window's first event). */
  const openTurnMs = (last: number | null): number => {
    turns.update(s.fold.events);
    const now = turns.now([]);
    if (!now || now.ended) return 0;
    const start = s.fold.event(now.seq)?.time ?? s.fold.events[0]?.time;
    if (start === undefined) return 0;
    const until = s.fold.status === "running" ? Math.max(Date.now(), last ?? 0) : last ?? start;
    return Math.max(0, until - start);
  };
  // each second of a run: the totals, and the "waiting for the model · N s" line while it waits
  const ticker = setInterval(() => { if (s.fold.status === "running") { drawTotals(); if (waitClock.active) render.schedule(); } }, 1000);
  const prompt = createPromptBox({
    submit: (text, steer) => void submit(text, steer),
    stop: () => { if (s.sessionId) s.remote.cancel(s.sessionId).catch((e) => prompt.setStatus(`stop failed: ${e.message}`, "err")); },
  });
  const toReplay = (at: number) => { if (mode === "live") { mode = "replay"; player.seek(at); return true; } return false; };
  /** At the first / last step held of a long session that goes on: the next part is read. */
  const atEdge = (dir: 1 | -1): boolean => win.windowed && (dir > 0 ? player.index >= player.steps.length - 1 && win.moreAfter
    : player.index <= 0 && win.moreBefore);
  const playbackCb: PlaybackCallbacks = {
    play: () => {
      toReplay(-1);
      // a long session replayed to its end plays again from its first call (its first part)
      if (win.windowed && player.index >= player.steps.length - 1 && !win.moreAfter && win.moreBefore) {
        const to = goToCall(0);
        const mine = nav;
        void to.then(() => { if (nav === mine) player.play(); });
        return;
      }
      player.play();
    },
    pause: () => player.pause(),
    back: () => { toReplay(player.steps.length - 1); if (atEdge(-1)) void stepPart(-1); else { navigate(); player.back(); } },
    forward: () => { if (toReplay(player.steps.length - 1)) return; if (atEdge(1)) void stepPart(1); else { navigate(); player.forward(); } },
    scrub: (i) => { mode = "replay"; player.pause(); if (win.windowed) void goToCall(i); else player.seekCall(i); },
    goLive: () => { mode = "live"; player.pause(); navigate(); win.toLive(); liveIndex = -1; render.schedule(); },
    setSpeed: (sp) => player.setSpeed(sp),
    setStepOnly: (on) => { if (on) toReplay(player.steps.length - 1); player.setStepOnly(on); },
    setPredict: (on) => {
      predict.set(on);
      if (on) {
        // the first question at or after the stage shown (a live run: from its last tool call's start)
        if (mode === "live") { const last = player.steps[player.steps.length - 1]; toReplay(last ? player.steps.findIndex((st) => st.call === last.call) : 0); }
        predict.start(player.steps, Math.max(0, player.index), tracer.traces, held());
      }
      render.schedule();
    },
    setReadingPace: (on) => { readingPace = on; render.schedule(); },
    releaseHold: () => { toReplay(player.index); player.releaseHold(); },
    setWpm: (wpm) => player.setWpm(wpm),
  };
  const playback = createPlayback(playbackCb);
  const clicker = (a: ClickerAction): boolean => {
    if (a === "next" && predictPanel.submit()) return true; // a question open: "next" reveals it
    if (a === "next") playbackCb.forward();
    else if (a === "prev") playbackCb.back();
    else if (a === "first" || a === "last") {
      if (!player.steps.length) return false;
      mode = "replay";
      player.pause();
      const total = win.callTotal();
      if (win.windowed && total !== undefined) {
        const to = goToCall(a === "first" ? 0 : total - 1);
        const mine = nav;
        void to.then(() => { if (a === "last" && nav === mine) player.seek(player.steps.length - 1); });
      } else { navigate(); player.seek(a === "first" ? 0 : player.steps.length - 1); }
    } else if (readonly) return false;
    else playbackCb.goLive();
    render.schedule();
    return true;
  };
  const present = createPresentControls(root, (on, source) => {
    if (source === "toggle") { model.set?.("present", on); model.save_changes?.(); }
    presenting(on);
  });
  /** Presenter mode on: hold each stage until "next" (the default), at reading pace when played,
   *  the views collapsed, the stage brought into view. */
  function presenting(on: boolean): void {
    readingPace = on;
    player.setStepOnly(on);
    viewsOpen = false;
    wantView = on;
    render.schedule();
  }
  const viewsToggle = createViewsToggle(viewId, () => { viewsOpen = !viewsOpen; render.schedule(); });
  playback.el.append(viewsToggle.el);
  controls.append(playback.el);
  const debug = new DebugPanel({ sessionId: () => s.sessionId, debug: (a) => s.remote.debug(a), cancel: (sid) => s.remote.cancel(sid), changed: () => render.schedule(), calls: () => tracer.traces, turn: () => s.fold.turn }, readonly);
  const glossary = createGlossary();
  root.append(head, glossary.panel, errorEl, frame.el, debug.el, explain, predictPanel.el, controls, playback.pacing, tabs, viewEl);
  const unKeys = isolateKeys(root);
  const unClicker = installClicker(root, clicker);
  // the focus stays inside after any control; presenting, a control clicked hands it to the
  // current stage (a clicker's Space then steps)
  const keeper = keepFocusInside(root, { home: () => root.querySelector<HTMLElement>('.dsh-stage[aria-current="step"]'), pointerHome: () => present.on });
  const unPane = observePane(root);
  const unTabs = roving(tabs, ".dsh-tab", "horizontal");
  if (!readonly) root.append(prompt.el);

  const showError = (msg: string) => { errorText = msg; render.schedule(); };

  async function submit(text: string, steer: boolean): Promise<void> {
    try {
      if (!s.sessionId) {
        prompt.setStatus("creating a session…");
        // the widget's constructor arguments, checked in Python (notebook/widgets/checks.py)
        const args: CreateArgs = { ...((model.get("create_args") as CreateArgs | undefined) ?? {}) };
        if (modeCtl.pending) args.mode = modeCtl.pending; // picked before the session existed
        const created = await s.remote.create(args);
        // remembered in the widget state: a reloaded page or another view follows the same session
        model.set?.("session_id", created.sessionId);
        model.save_changes?.();
        follow(s, created.sessionId, showError);
        if (debug.bp.stages.length) await debug.send();
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
      prompt.setStatus(res.accepted ? `accepted ✓ (request ${requestId}) — the answer appears below as it arrives` : `not accepted (request ${requestId})`, res.accepted ? "ok" : "err");
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
    if (s.fold.paused) { liveIndex = target; return { ...pausedAt(s.fold.paused, traces), seq: s.fold.cursor }; } // the diagram follows the pause
    // a turn without a tool call yet is the present: its 01, waiting for (or settled as) the
    // model's response — never the last call of an earlier turn (issue 37 item 6)
    turns.update(s.fold.events);
    const turn = turns.now(traces);
    if (turn && !turn.hasCall) { liveIndex = target; return { stage: 1, seq: s.fold.cursor, turn }; }
    if (liveIndex < 0 && target >= 0) liveIndex = steps.findIndex((st) => st.call === steps[target].call);
    // catching up at reading pace never replays an earlier turn while a newer one runs
    if (turn && liveIndex >= 0 && liveIndex < target && (traces[steps[liveIndex].call]?.turn ?? turn.turn) < turn.turn) {
      const first = steps.findIndex((st) => (traces[st.call]?.turn ?? turn.turn) >= turn.turn);
      liveIndex = first < 0 ? target : first;
    }
    // the run is over (idle, or its turn ended): the diagram catches up at once
    const over = s.fold.status !== "running" || s.fold.events[s.fold.events.length - 1]?.type === "turn/end";
    // (at reading pace it catches up between turns a stage at a time, still visibly)
    if (liveIndex >= 0 && liveIndex < target && over && !readingPace) liveIndex = target;
    if (liveIndex >= 0 && liveIndex < target) {
      const quick = liveDwell(target - liveIndex, player.speed);
      const dwell = readingPace ? livePace(readingMs(narration(liveIndex), player.wpm), player.speed, !over, quick) : quick;
      if (liveTimer === null) liveTimer = setTimeout(() => { liveTimer = null; liveIndex += 1; render.schedule(); }, dwell);
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

  // -- a long session: its parts and pages (data/loop-window.ts) ----------------------------------

  /** The number of messages request `call.frozenSeq` froze, from the kernel's page (a long
   *  session; null while it comes); undefined: resolved from the events (a short one). */
  function frozenTotal(call: ToolCallTrace | undefined): number | null | undefined {
    if (!win.windowed || call?.frozenSeq === undefined) return undefined;
    const p = historyPage({ kind: "messages", seq: call.frozenSeq, request: true, limit: HISTORY_PAGE }) as MessagesPage | undefined;
    return p ? p.total : null;
  }

  /** A page of the history at a seq: computed here when what is drawn holds the session from its
   *  first event (the part a replay starts with: exact, and no round trip), else the kernel's. */
  function historyPage(q: MessagesQuery | RequestDiffQuery): MessagesPage | RequestDiffPage | undefined {
    if (win.lo > 0) return s.pages.get(q) as MessagesPage | RequestDiffPage | undefined;
    const events = held();
    return q.kind === "messages" ? messagesPageOf(events, q.seq, Boolean(q.request), q.offset ?? null, q.limit ?? HISTORY_PAGE)
      : requestDiffPageOf(events, q.seq, q.offset ?? 0, q.limit ?? 200);
  }

  /** A long session's history at the shown position, from the kernel's messages pages: a page
   *  of HISTORY_PAGE messages (the newest, or `histBack` pages before them), the totals, and at 06
   *  what the request adds (its request-diff page). */
  function pagedHistory(call: ToolCallTrace | undefined, pos: Position): { derived: DerivedMessage[]; derivedTotal?: number; frozenTotal?: number; view: PagedView } {
    const frozen = pos.stage === 6 && call?.frozenSeq !== undefined;
    // derive_messages() changes only at a surface event: the history at the last one at or before
    // the position is the same page (stages 02–03 share 01's; a live run asks once a message)
    const events = held();
    let through = pos.seq;
    for (let i = Math.min(pos.seq, events.length - 1); i >= win.lo; i--) {
      const ev = events[i];
      if (ev && SURFACE_TYPES.has(ev.type)) { through = i; break; }
    }
    const at = frozen ? call!.frozenSeq! : through;
    const key = `${frozen}:${at}`;
    if (key !== histKey) { histKey = key; histBack = 0; }
    const newest = (seq: number, request: boolean) => seq >= 0
      ? historyPage({ kind: "messages", seq, request, limit: HISTORY_PAGE }) as MessagesPage | undefined : undefined;
    const derivedNewest = newest(through, false);
    const frozenNewest = call?.frozenSeq !== undefined && pos.stage >= 5 ? newest(call.frozenSeq, true) : undefined;
    const top = frozen ? frozenNewest : derivedNewest;
    let page = top;
    if (top && histBack > 0) {
      const offset = Math.max(0, top.total - HISTORY_PAGE * (histBack + 1));
      page = historyPage({ kind: "messages", seq: at, request: frozen, offset, limit: HISTORY_PAGE }) as MessagesPage | undefined;
    }
    const diff = frozen ? historyPage({ kind: "request-diff", seq: at, offset: 0, limit: 200 }) as RequestDiffPage | undefined : undefined;
    // while a page comes, the last one stays on screen (marked busy): no flash of an empty history
    const messages = page ? (page.messages ?? []).map((m) => ({ seq: m.seq, message: m.message }) as DerivedMessage) : lastHistory;
    if (page) lastHistory = messages;
    const total = top?.total;
    const shownTo = page ? page.offset + messages.length : 0;
    const paged: PagedHistory | undefined = total !== undefined ? { total,
      added: frozen ? diff?.items?.filter((it) => it.kind !== "removed").map((it) => it.seq) : undefined } : undefined;
    return {
      derived: frozen ? (derivedNewest?.messages ?? []).map((m) => ({ seq: m.seq, message: m.message }) as DerivedMessage) : messages,
      derivedTotal: derivedNewest?.total, frozenTotal: frozenNewest?.total,
      view: { messages, loading: !page, earlier: page ? page.offset : 0, later: total !== undefined ? total - shownTo : 0, paged,
        onEarlier: page && page.offset > 0 ? () => { histBack += 1; render.schedule(); } : undefined,
        onLater: histBack > 0 ? () => { histBack -= 1; render.schedule(); } : undefined },
    };
  }

  /** The steps of what is drawn now (after a part was read). */
  function stepsNow(): PlaybackStep[] {
    const events = held();
    const steps = stepsOf(tracer.update(events), events);
    player.setSteps(steps);
    return steps;
  }

  /** Step past the part held (`dir` 1: on from its last step, -1: back from its first): read the
   *  part that goes on, and show the step after (before) the one shown — or (`dir` 0) the part
   *  around the step shown (a call the live window traced once and no longer holds). */
  async function stepPart(dir: 1 | -1 | 0): Promise<void> {
    const cur = player.current;
    if (!cur) return;
    const mine = navigate();
    try {
      if (!await win.readAround(cur.seq, dir < 0) || nav !== mine) return;
    } catch (e) {
      if (nav !== mine) return;
      player.pause();
      showError(`${(e as { code?: string }).code ?? "ERROR"}: ${(e as Error).message}`);
      return;
    }
    const steps = stepsNow();
    const at = steps.findIndex((st) => st.seq === cur.seq && st.stage === cur.stage);
    if (at >= 0) player.seek(at + dir);
    else player.seek(dir > 0 ? steps.findIndex((st) => st.seq > cur.seq) : steps.map((st) => st.seq < cur.seq).lastIndexOf(true));
    player.resume();
    render.schedule();
  }

  /** Show the session's call `number` (a long session's scrubber): from the part held, else its
   *  part read from the kernel. */
  async function goToCall(number: number): Promise<void> {
    const mine = navigate();
    const base = callBase();
    const local = base !== undefined ? number - base : -1;
    if (local >= 0 && local < tracer.traces.length && tracer.traces[local].callSeq !== undefined) { player.seekCall(local); return; }
    readingCall = number;
    render.schedule();
    try {
      const c = await win.call(number);
      if (nav !== mine) return; // moved on meanwhile
      if (!c || !await win.readAround(c.seq) || nav !== mine) return;
      stepsNow();
      const t = tracer.traces.find((x) => x.callSeq === c.seq);
      if (t) player.seekCall(t.index);
    } catch (e) {
      if (nav === mine) showError(`${(e as { code?: string }).code ?? "ERROR"}: ${(e as Error).message}`);
    } finally {
      if (nav === mine) readingCall = undefined;
      render.schedule();
    }
  }

  /** The session's number of the first call traced in what is drawn (0 for a short session;
   *  undefined while the kernel numbers it). */
  function callBase(): number | undefined {
    if (!win.windowed) return 0;
    const first = tracer.traces.find((t) => t.callSeq !== undefined);
    if (!first) return win.callTotal();
    const n = win.callNumber(first.callSeq as number);
    return n === undefined ? undefined : n - first.index;
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
    navigate();
    if (mode === "live") { mode = "replay"; player.setSteps(stepsOf(tracer.traces, held())); }
    if (!player.seekStage(pos.call.index, stage)) player.seekCall(pos.call.index);
  }

  const press = pressGuard(root, () => render.schedule());
  const render = frameThrottle(followCurrent(root, keepFocus(root, () => {
    if (press.hold()) return; // a click in progress: render after its release
    const events = held();
    const traces = tracer.update(events);
    prov.update(events);
    player.setSteps(stepsOf(traces, events));
    const pos = position(traces);
    const call = pos.call;
    // replaying a call the live window no longer holds (a long live session): its part is read
    if (win.windowed && !win.part && win.reading === null && mode === "replay" && pos.seq >= 0 && pos.seq < win.lo) void stepPart(0);
    // live tool-runtime frames when there are any, else the phases re-derived from the log
    // through the shown position (replay, reload, a follow that began after the call)
    const rt = runtimeView(call ? s.fold.tools[call.callId] : undefined, events, call, pos.seq);
    const hdr = s.fold.header;
    // the mode: the last mode/changed the fold holds, else the one the whole log last set (the
    // facets page: a long session's change can lie before the window)
    const facets = win.windowed ? s.pages.get({ kind: "facets" }) : undefined;
    const sessionMode = s.sessionId || s.fold.events.length ? modes.update(s.fold.events, hdr?.cwd, facets?.mode ?? null) : null;
    modeCtl.update(sessionMode, !readonly);
    root.classList.toggle("dsh-bypass", sessionMode === "bypass");
    replace(headerInfo,
      h("span", { class: "dsh-title" }, "Tool feedback loop"),
      h("span", { class: "dsh-sub" }, softBreaks(`${s.sessionId ?? String(model.get("session_id") || "new session")}${hdr?.cwd ? ` · ${hdr.cwd}` : ""} · ${countOf(eventCount(s.fold.cursor), "event")} · ${s.fold.status}`)),
      mode === "replay" ? h("span", { class: "dsh-badge" }, player.playing ? "replaying" : "paused") : h("span", { class: "dsh-badge dsh-badge-live" }, "live"),
      changesBadge(s.fold.events), totalsEl, present.el, glossary.button);
    drawTotals();
    // approvals from the run's real state, whatever stage is shown (replay, animation, a click):
    // the session's latest events (the fold's), whatever part is drawn
    const latest = s.fold.events;
    const waiting = readonly ? [] : s.fold.waitingApprovals();
    banner.update(waiting.map((w) => ({ ...w, client: externalClientOf(latest, w.callId),
      arguments: s.fold.tools[w.callId]?.arguments ?? traces.find((t) => t.callId === w.callId)?.arguments
        ?? externalArgs(latest, w.callId) ?? "" })));
    external.update(latest, new Set(waiting.map((w) => w.callId)));
    root.dataset.speed = String(player.speed);
    root.dataset.stepMs = String(player.lastDelay);
    root.dataset.stepOnly = String(player.stepOnly);
    root.dataset.stepIndex = String(mode === "replay" ? player.index : player.steps.length - 1);
    // the pace as the page measures it: when the shown step changed (performance.now()) and the
    // reading time it is owed at this speed
    root.dataset.stepAt = String(Math.round(player.shownAt));
    const replaying = mode === "replay" && player.index >= 0;
    root.dataset.readMs = String(replaying ? player.owedMs(player.index) : 0);
    // the pace it is owed at: words a minute at 1×, and the words of the narration it reads
    root.dataset.wpm = String(player.wpm);
    root.dataset.words = String(replaying ? wordCount(narration(player.index)) : 0);
    root.dataset.readingPace = String(readingPace);
    const pv = predict.view(mode === "replay", player.index);
    predictPanel.update(pv.question, pv.reveal, predict.score(), predict.vote);
    root.dataset.asking = pv.question ? pv.question.kind : "";
    // the first call's arguments asked on its own 01: hidden everywhere until the reveal
    const mask = maskOf(pv.question);
    const shownCall = maskTrace(call, mask);
    const waited = mode === "live" && s.fold.status === "running" ? waitClock.seconds(s.fold.attempt, Date.now()) : null;
    if (waited === null && waitTimer === null && mode === "live") { // the line is due at the grace: a render then
      const due = waitClock.dueIn(Date.now());
      if (due !== null) waitTimer = setTimeout(() => { waitTimer = null; render.schedule(); }, due + 20);
    }
    const waitLine = waited === null ? null : waitingText(waited);
    root.dataset.waiting = waitLine ?? "";
    const problem = errorText || (s.fold.error ? `${s.fold.error.code}: ${s.fold.error.message}` : "") || (win.windowed ? s.pages.error : "");
    errorEl.hidden = !problem;
    errorEl.textContent = problem;

    // stage 05's count is that of the history the next request froze (request/frozen.messageSeqs),
    // the same number in live and replay mode; before it is frozen, what derive_messages() gives now
    // (a long session's: the kernel's messages pages, a page of them held)
    const hist = win.windowed ? pagedHistory(call, pos) : null;
    const frozenCount = call?.frozenSeq !== undefined && pos.stage >= 6 ? (hist ? hist.frozenTotal : resolveMessageSeqs(events, call.frozenSeq).length) : 0;
    const derived = hist ? hist.derived : deriveMessages(events, pos.seq);
    const messageCount = hist ? (call?.frozenSeq !== undefined ? hist.frozenTotal : hist.derivedTotal)
      : call?.frozenSeq !== undefined ? resolveMessageSeqs(events, call.frozenSeq).length : derived.length;
    debug.update(s.fold.paused);
    debug.settle(s.fold.status);
    keepToggleFocus(diagram, () => replace(diagram, renderDiagram({
      call: shownCall, stage: pos.stage, seq: pos.seq, runtime: rt, messageCount,
      frozenCount: frozenCount ?? undefined, streaming: Boolean(s.fold.attempt),
      waiting: pos.turn ? turnValue(pos.turn, waited) : undefined,
      breakToggle: readonly ? undefined : (no) => debug.toggle(no), paused: mode === "live" && s.fold.paused ? pos.stage : 0,
    }, { onStage: (st) => { seekStage(st, pos); render.schedule(); }, onView: openView })));

    // explanation beneath the diagram; a live run's wait for the model said as the clients say it
    const waitEl = waitLine ? h("div", { class: "dsh-waiting", role: "status" }, waitLine) : null;
    if (shownCall && pos.stage) {
      const ex = explainStage(shownCall, pos.stage, events, frozenTotal(shownCall));
      replace(explain,
        h("div", { class: "dsh-explain-title" }, narrationTitle(pos.stage, ex.title)),
        h("div", { class: "dsh-explain-text" }, ex.text),
        pos.stage === 3 || (pos.stage === 4 && rt?.derived) ? renderPhases(rt, shownCall.approvalSeqs.length > 0) : null, waitEl);
    } else if (pos.turn) {
      const ex = turnNarration(pos.turn, (s.fold.attempt?.chunks ?? 0) > 0, events);
      replace(explain, h("div", { class: "dsh-explain-title" }, narrationTitle(1, ex.title)), h("div", { class: "dsh-explain-text" }, ex.text), waitEl);
    } else {
      replace(explain, h("div", { class: "dsh-explain-title" }, "From one tool call to the next request"),
        h("div", { class: "dsh-explain-text" }, s.fold.attempt ? "The model is streaming its response…" : "Press play, or send a prompt: the diagram follows one tool call from the model's intent to the next request. The views below change with the stage; links in the diagram switch them."));
    }

    const stepIdx = mode === "replay" ? player.index : player.steps.length - 1;
    playback.update({
      playing: player.playing, live: mode === "live", canLive: !readonly, calls: traces,
      callIndex: call ? call.index : -1, stepIndex: stepIdx, stepCount: player.steps.length,
      speed: player.speed, stepOnly: player.stepOnly, predict: predict.on, readingPace, wpm: player.wpm,
      note: pos.turn ? `turn ${pos.turn.turn}: ${pos.turn.ended ? "answered without a tool call" : "no tool call yet"}` : undefined,
      session: win.windowed ? { base: callBase(), total: win.callTotal(), moreBefore: win.moreBefore, moreAfter: win.moreAfter, reading: readingCall } : undefined,
    });
    // what the page holds of the session: the seqs drawn from (a long session's part or window)
    // and the events its fold holds (at most half as many again as its window)
    root.dataset.window = win.windowed ? `${win.lo}..${win.hi}` : "";
    root.dataset.held = String(s.fold.events.length);
    root.classList.toggle("dsh-views-open", viewsOpen);
    viewsToggle.set(viewsOpen);

    replace(tabs, ...VIEW_NAMES.map((v) => {
      const b = h("button", { class: `dsh-tab ${v === view ? "dsh-tab-on" : ""}`, role: "tab", type: "button", "data-view": v,
        "aria-selected": String(v === view), "aria-controls": viewId, tabindex: v === view ? 0 : -1, id: `${viewId}-${v}` },
        VIEWS[v].tab);
      b.addEventListener("click", () => { view = v; render.schedule(); });
      return b;
    }));
    keepTabInView(tabs);

    viewEl.setAttribute("aria-labelledby", `${viewId}-${view}`);
    views[view].render(viewEl, {
      events, call, shownCall, stage: pos.stage, seq: pos.seq, derived, mask, question: pv.question,
      attempt: mode === "live" && !pos.catchingUp ? s.fold.attempt : null, sessionMode: sessionMode ?? undefined,
      citing: (seq) => prov.citing(seq), history: hist?.view,
    });
    for (const v of VIEW_NAMES) if (v !== view) views[v].leave?.();
    prompt.setRunning(s.fold.status === "running");
    const ans = answerText();
    if (ans) prompt.setAnswer(ans);
    // the status line says what is true now: once the turn ended, no "appears below as it arrives"
    if (pendingAnswer && !pendingAnswer.done && ans.startsWith("answer (turn")) { prompt.setStatus(`answered ✓ (request ${pendingAnswer.requestId})`, "ok"); pendingAnswer = { ...pendingAnswer, done: true }; }
    // presenter mode: a new stage (or question) brought into view while the widget is driven
    const shown = `${call?.callId ?? ""}:${pos.stage}:${pos.turn?.turn ?? ""}:${pv.question?.key ?? ""}:${pv.reveal?.question.key ?? ""}`;
    if (present.on && shown !== lastShown && (keeper.owned || wantView)) showCurrent();
    lastShown = shown;
    wantView = false;
  })));

  /** Presenter mode: the narration and the current stage (or the open question) in view; what
   *  the widget itself scrolled the notebook, in total (a test tells it from a key's default scroll). */
  function showCurrent(): void {
    brought += showStage({ root, frame: frame.el, diagram, explain, question: predictPanel.el, bar: controls });
    root.dataset.brought = String(Math.round(brought));
  }

  // presenter mode: a taller or narrower widget (the pane class, a new text size, a longer
  // narration) keeps the current stage in view while it is driven
  const roPresent = typeof ResizeObserver === "function" ? new ResizeObserver(() => { if (present.on && keeper.owned) requestAnimationFrame(showCurrent); }) : null;
  roPresent?.observe(root);
  const unLab = followLabPresentation(root, (on) => { const v = on || Boolean(model.get("present")); present.set(v); presenting(v); });
  const unsubscribe = s.fold.subscribe(() => render.schedule());
  const unPlayer = player.onChange(() => render.schedule());
  const unPages = s.pages.onChange(() => render.schedule()); // a long session's pages as they arrive
  const onError = () => { errorText = String(model.get("error") ?? ""); render.schedule(); };
  model.on("change:error", onError);
  const onPresent = () => { const on = Boolean(model.get("present")); if (on !== present.on) { present.set(on); presenting(on); } };
  model.on("change:present", onPresent);
  if (model.get("present")) { present.set(true); presenting(true); }

  const sid = String(model.get("session_id") ?? "");
  // a replay of a saved log starts at its first call: its first part is asked for beside the
  // follow (a long log's snapshot is its last events; a short one's makes the part unneeded)
  if (sid && !s.follow && readonly && s.window > 0) win.readStart();
  if (sid && !s.follow) follow(s, sid, showError);
  else if (sid) s.sessionId = sid;
  if (sid && !readonly) s.remote.debug({ sessionId: sid, action: "state" }).then((st) => debug.load(st)).catch(() => undefined);
  if (readonly) {
    // replay starts at the first tool call; it waits for the snapshot
    const off = s.fold.subscribe(() => {
      if (s.fold.events.length === 0) return;
      off();
      if (win.windowed) { // a long log: its first part from the kernel (the fold holds its last events)
        void win.readAround(0).then((ok) => { if (ok) { stepsNow(); if (player.index < 0) player.seek(0); } render.flush(); },
          (e: { code?: string; message?: string }) => showError(`${e.code ?? "ERROR"}: ${e.message ?? String(e)}`));
        return;
      }
      tracer.update(s.fold.events);
      player.setSteps(stepsOf(tracer.traces, s.fold.events));
      if (player.index < 0) player.seek(0);
      render.flush(); // at once: a long log's later snapshot parts need not be folded first
    });
    if (s.fold.events.length) { player.setSteps(stepsOf(tracer.update(s.fold.events), s.fold.events)); player.seek(0); }
  }
  render.flush();

  return () => {
    if (liveTimer !== null) clearTimeout(liveTimer);
    if (waitTimer !== null) clearTimeout(waitTimer);
    roPresent?.disconnect();
    unLab();
    keeper.dispose();
    unKeys();
    unClicker();
    model.off("change:present", onPresent);
    unPane();
    press.dispose();
    unTabs();
    frame.dispose();
    clearInterval(ticker);
    render.cancel();
    unsubscribe();
    unPlayer();
    unPages();
    player.dispose();
    model.off("change:error", onError);
    release(model, s);
    root.remove();
  };
}


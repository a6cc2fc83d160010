// SessionInspector: the whole event log as a virtualised timeline with filters, search, jump to
// seq, provenance both ways, the derived messages at any seq, and the diff of frozen requests.
import { countOf, eventCount, fmtInt } from "./model/counts";
import { diffRequests, frozenRequests } from "./model/diff";
import { deriveMessages } from "./model/history";
import { ProvenanceIndex } from "./model/provenance";
import { EventFilter, summarize, type Filter } from "./model/summary";
import { acquire, follow, release, type WidgetModel } from "./transport";
import { stepOf, type SessionEvent } from "./types";
import { fmtMs, fmtTime, frameThrottle, h, pressGuard, replace } from "./ui/dom";
import { createGlossary } from "./ui/glossary";
import { createPresentControls, followLabPresentation } from "./ui/present";
import { keepFocusInside } from "./ui/focus";
import { renderHistory } from "./ui/history-view";
import { jsonTree } from "./ui/json";
import { createVirtualList } from "./ui/vlist";
import { isolateKeys, keepFocus, roving, uid } from "./ui/a11y";
import { OPEN_ALL, QUIET_KEYS, toolOutputText } from "./model/card-focus";
import { listKeys } from "./ui/list-keys";
import { plainOutput } from "./ui/payload-view";
import { Pricing, type PricingTable } from "./model/pricing";
import { TrajectoryFold } from "./model/trajectory";
import { approvalSeqs, durationsBySeq } from "./model/waterfall";
import { createWaterfall } from "./ui/waterfall";
import { sessionViews } from "./ui/timeline-stats";
import { keepTabInView, observePane, softBreaks } from "./ui/narrow";
import { reviewChanges } from "./ui/changes";
import { exportRows } from "./model/query";
import { ModeFold } from "./model/mode";
import { createModeControl } from "./ui/mode-select";

const ROW = 26;
type Detail = "event" | "messages" | "diff";

export function renderInspector(model: WidgetModel, el: HTMLElement): () => void {
  const s = acquire(model);
  const prov = new ProvenanceIndex();
  const filterer = new EventFilter();
  const filter: Filter = { type: "", turn: "", tool: "", text: "" };
  let rows: number[] = [];
  let selected = -1;
  let detail: Detail = "event";
  let showWrappers = true;
  let optionsFor = -1;
  let errorText = String(model.get("error") ?? "");
  const traj = new TrajectoryFold(new Pricing((model.get("pricing") as PricingTable | undefined) ?? undefined));
  let durations = new Map<number, number>();
  const wf = createWaterfall((seq) => select(seq, true));
  wf.el.hidden = true;
  const wfBtn = h("button", { class: "dsh-btn dsh-f-waterfall", type: "button", "aria-pressed": "false", title: "requests and tool calls of a turn on a time axis" }, "Waterfall");
  const drawWf = () => { if (!wf.el.hidden) wf.update(traj, s.fold.events, selected, s.fold.status === "running"); };
  wfBtn.addEventListener("click", () => {
    wf.el.hidden = !wf.el.hidden;
    wfBtn.setAttribute("aria-pressed", String(!wf.el.hidden));
    if (selected >= 0) wf.showTurnOf(selected);
    drawWf();
  });

  const views = sessionViews((seq) => select(seq, true), () => drawViews());
  const drawViews = () => views.draw(traj, s.fold.events.length, selected, s.fold.status === "running");
  let wantSeq = Number(model.get("selected_seq") ?? -1); // an inspector opened at an event (compare's link)
  const onWant = () => { wantSeq = Number(model.get("selected_seq") ?? -1); render.schedule(); };
  model.on("change:selected_seq", onWant);

  const root = h("div", { class: "dsh-root dsh-inspector" });
  el.append(root);
  const modes = new ModeFold();
  const modeCtl = createModeControl((m) => s.remote.setMode(s.sessionId as string, m), (msg) => { errorText = msg; render.schedule(); });
  const headerInfo = h("span", { class: "dsh-header-info" });
  const header = h("div", { class: "dsh-header" }, headerInfo, modeCtl.el);
  const errorEl = h("div", { class: "dsh-error", role: "alert" });
  const typeSel = h("select", { class: "dsh-f-type", "aria-label": "filter by type" }) as HTMLSelectElement;
  const turnSel = h("select", { class: "dsh-f-turn", "aria-label": "filter by turn" }) as HTMLSelectElement;
  const toolSel = h("select", { class: "dsh-f-tool", "aria-label": "filter by tool" }) as HTMLSelectElement;
  const search = h("input", { class: "dsh-f-text", type: "search", placeholder: 'search: type:tool/result name:bash exit:1 turn:3 "text"',
    title: 'all terms must match: type:T (type:tool = tool/…), name:TOOL, exit:N or exit:!N, turn:N, seq:N or seq:A..B, words or "a phrase"',
    "aria-label": "search events" }) as HTMLInputElement;
  const jumpIn = h("input", { class: "dsh-f-seq", type: "number", min: 0, placeholder: "seq" }) as HTMLInputElement;
  const jumpBtn = h("button", { class: "dsh-btn dsh-f-go", type: "button" }, "Jump");
  const countEl = h("span", { class: "dsh-muted dsh-f-count", "aria-live": "polite" });
  const exportBtn = (format: "jsonl" | "csv") => {
    const b = h("button", { class: `dsh-btn dsh-f-export dsh-f-export-${format}`, type: "button", "data-format": format,
      title: `download the ${format === "csv" ? "listed rows as CSV (seq,time,turn,type,name,exit,snippet)" : "listed events as JSON lines"}` },
      format === "csv" ? "CSV" : "JSONL");
    b.addEventListener("click", () => exportListed(format));
    return b;
  };
  const toolbar = h("div", { class: "dsh-toolbar" }, typeSel, turnSel, toolSel, search, jumpIn, jumpBtn, wfBtn, ...views.buttons,
    exportBtn("jsonl"), exportBtn("csv"), countEl);
  const list = createVirtualList(ROW, renderRow);
  const side = h("div", { class: "dsh-detail" });
  const glossary = createGlossary();
  const present = createPresentControls(root, (on, source) => { if (source === "toggle") { model.set?.("present", on); model.save_changes?.(); } });
  const onPresent = () => present.set(Boolean(model.get("present")));
  onPresent();
  model.on("change:present", onPresent);
  // JupyterLab's presentation mode presents too; the focus stays inside after Present, A−, A+
  const unLab = followLabPresentation(root, (on) => present.set(on || Boolean(model.get("present"))));
  const keeper = keepFocusInside(root);
  root.append(header, glossary.panel, errorEl, toolbar, wf.el, ...views.panes, h("div", { class: "dsh-split" }, list.el, side));
  const unKeys = isolateKeys(root);
  const unPane = observePane(root);
  const unTabs = roving(side, ".dsh-tab", "horizontal");
  const panelId = uid("dsh-detail");
  const unList = listKeys(list.el, () => rows, () => selected, (seq) => select(seq, true));

  const refilter = () => {
    rows = filterer.apply(s.fold.events, filter);
    list.setCount(rows.length);
    countEl.textContent = filterer.error || `${fmtInt(rows.length)} of ${countOf(eventCount(s.fold.cursor), "event")}`;
    countEl.classList.toggle("dsh-f-bad", Boolean(filterer.error));
  };
  function exportListed(format: "jsonl" | "csv"): void {
    const events = s.fold.events;
    const text = exportRows(rows.map((i) => ({ ev: events[i], turn: filterer.turnOf(i), tool: filterer.toolAt(i),
      snippet: filterer.snippet(events, i)?.text ?? summarize(events[i]) })), format);
    const name = `${s.sessionId ?? String(model.get("session_id") || "session")}-events.${format}`;
    const mime = format === "csv" ? "text/csv" : "application/x-ndjson";
    const href = typeof URL.createObjectURL === "function"
      ? URL.createObjectURL(new Blob([text], { type: mime })) : `data:${mime};charset=utf-8,${encodeURIComponent(text)}`;
    const a = h("a", { class: "dsh-f-download", href, download: name, hidden: true });
    a.dataset.rows = String(rows.length);
    root.append(a);
    a.click();
    a.remove();
    if (href.startsWith("blob:")) setTimeout(() => URL.revokeObjectURL(href), 60_000);
  }
  function rowSummary(i: number): HTMLElement {
    const snip = filterer.snippet(s.fold.events, rows[i]);
    if (!snip) return h("span", { class: "dsh-row-sum" }, summarize(s.fold.events[rows[i]]));
    const parts: (string | HTMLElement)[] = [];
    let at = 0;
    for (const [a, b] of snip.marks) { parts.push(snip.text.slice(at, a), h("mark", null, snip.text.slice(a, b))); at = b; }
    parts.push(snip.text.slice(at));
    return h("span", { class: "dsh-row-sum dsh-row-snip" }, ...parts);
  }
  const onFilter = () => {
    filter.type = typeSel.value; filter.turn = turnSel.value; filter.tool = toolSel.value; filter.text = search.value;
    refilter();
  };
  for (const c of [typeSel, turnSel, toolSel]) c.addEventListener("change", onFilter);
  let searchTimer: ReturnType<typeof setTimeout> | undefined;
  search.addEventListener("input", () => { clearTimeout(searchTimer); searchTimer = setTimeout(onFilter, 150); });
  const doJump = () => select(Number(jumpIn.value), true);
  jumpBtn.addEventListener("click", doJump);
  jumpIn.addEventListener("keydown", (e) => { if (e.key === "Enter") doJump(); });

  function select(seq: number, scroll: boolean): void {
    const ev = s.fold.events[seq];
    if (!ev) { countEl.textContent = `no event #${seq}`; return; }
    selected = seq;
    let i = rows.indexOf(seq);
    if (i < 0) { // the filter hides it: clear the filter so the jump lands
      typeSel.value = turnSel.value = toolSel.value = search.value = "";
      onFilter();
      i = rows.indexOf(seq);
    }
    if (scroll) list.scrollToIndex(i); else list.refresh();
    renderDetail();
    if (!wf.el.hidden) { drawWf(); wf.showTurnOf(seq); }
    drawViews();
    views.reveal(seq);
  }

  function renderRow(i: number): HTMLElement {
    const ev = s.fold.events[rows[i]];
    const cites = ev.sourceEventSeqs ?? [];
    const by = prov.citing(ev.seq);
    const row = h("div", { class: `dsh-row ${ev.seq === selected ? "dsh-row-sel" : ""} dsh-t-${ev.type.replace(/\//g, "-")}`, "data-seq": ev.seq,
      "data-fkey": `row-${ev.seq}`, role: "option", "aria-selected": String(ev.seq === selected), tabindex: ev.seq === selected ? 0 : -1 },
      h("span", { class: "dsh-row-seq" }, String(ev.seq)),
      h("span", { class: "dsh-row-time" }, fmtTime(ev.time)),
      h("span", { class: "dsh-row-type" }, ev.type),
      h("span", { class: "dsh-row-turn" }, filterer.turnOf(ev.seq) !== undefined ? `t${filterer.turnOf(ev.seq)}${stepOf(ev) !== undefined ? `.${stepOf(ev)}` : ""}` : ""),
      h("span", { class: "dsh-row-dur" }, durations.has(ev.seq) ? fmtMs(durations.get(ev.seq) as number) : ""),
      rowSummary(i),
      h("span", { class: "dsh-row-prov" }, cites.length ? `→${cites.join(",")}` : "", by.length ? ` ←${by.join(",")}` : ""));
    row.addEventListener("click", () => select(ev.seq, false));
    return row;
  }

  function seqButton(n: number): HTMLElement {
    const b = h("button", { class: "dsh-link dsh-seqlink", type: "button", "data-seq": n }, `#${n}`);
    b.addEventListener("click", () => select(n, true));
    return b;
  }

  function renderDetail(): void { keepFocus(side, renderDetailNow)(); }

  function renderDetailNow(): void {
    const events = s.fold.events;
    const ev = events[selected];
    if (!ev) { replace(side, h("div", { class: "dsh-muted" }, "Select an event (click a row, or jump to a seq).")); return; }
    // the request diff only fits a request event; elsewhere its tab is not offered
    const fits: Detail[] = ev.type.startsWith("request/") ? ["event", "messages", "diff"] : ["event", "messages"];
    if (!fits.includes(detail)) detail = "event";
    const tabs = fits.map((d) => {
      const b = h("button", { class: `dsh-tab ${d === detail ? "dsh-tab-on" : ""}`, type: "button", "data-detail": d, role: "tab",
        id: `${panelId}-${d}`, "aria-selected": String(d === detail), "aria-controls": panelId, tabindex: d === detail ? 0 : -1 },
        d === "event" ? `Event #${ev.seq}` : d === "messages" ? `Messages at #${ev.seq}` : "Request diff");
      b.addEventListener("click", () => { detail = d; renderDetail(); });
      return b;
    });
    let body: HTMLElement;
    if (detail === "event") {
      const cites = ev.sourceEventSeqs ?? [];
      const by = prov.citing(ev.seq);
      body = h("div", null,
        h("div", { class: "dsh-prov" },
          h("div", null, "cites: ", ...(cites.length ? cites.flatMap((n, i) => (i ? [", ", seqButton(n)] : [seqButton(n)])) : ["—"])),
          h("div", { class: "dsh-citedby" }, ev.type === "tool/call" ? "result citing this call: " : "cited by: ",
            ...(by.length ? by.flatMap((n, i) => (i ? [", ", seqButton(n)] : [seqButton(n)])) : [ev.type === "tool/call" ? "not committed yet" : "—"]))),
        ev.type === "checkpoint/changes" ? reviewChanges(ev, s.sessionId, s.remote, events) : null,
        h("div", { class: "dsh-card-json" }, jsonTree(ev, { onSeq: (n) => select(n, true), collapseKeys: QUIET_KEYS }, OPEN_ALL)),
        toolOutputText(ev) !== undefined ? plainOutput(toolOutputText(ev) as string) : null);
    } else if (detail === "messages") {
      body = renderHistory({ messages: deriveMessages(events, ev.seq), showWrappers, caption: `derive_messages() as of seq ${ev.seq}`, note: "" },
        (show) => { showWrappers = show; renderDetail(); });
    } else {
      body = renderDiff(events, ev);
    }
    body.id = panelId;
    body.setAttribute("role", "tabpanel");
    body.setAttribute("aria-labelledby", `${panelId}-${detail}`);
    const tablist = h("div", { class: "dsh-tabs", role: "tablist", "aria-label": "event details" }, ...tabs);
    replace(side, tablist, body);
    keepTabInView(tablist);
  }

  function renderDiff(events: readonly SessionEvent[], ev: SessionEvent): HTMLElement {
    const reqs = frozenRequests(events);
    let idx = reqs.findIndex((r) => r.seq >= ev.seq);
    if (ev.type !== "request/frozen") idx = reqs.findIndex((r) => r.seq > ev.seq);
    if (idx < 0) return h("div", { class: "dsh-muted" }, "No frozen request at or after this event.");
    const d = diffRequests(events, reqs, idx);
    const prevLink = d.from !== null ? seqButton(d.from) : "(none: the first request)";
    return h("div", { class: "dsh-diff" },
      h("div", null, "request ", seqButton(d.to), " vs previous ", prevLink, ` — ${countOf(d.kept, "message")} kept, ${fmtInt(d.added.length)} added, ${fmtInt(d.removed.length)} removed`),
      h("ul", { class: "dsh-diff-list" },
        ...d.added.map((a) => h("li", { class: `dsh-diff-add dsh-kind-${a.kind.replace(/ /g, "-")}` }, "+ ", seqButton(a.seq), ` ${a.type} — ${a.kind}: `, h("span", { class: "dsh-muted" }, events[a.seq] ? summarize(events[a.seq]) : ""))),
        ...d.removed.map((r) => h("li", { class: "dsh-diff-del" }, "− ", seqButton(r), ` ${events[r]?.type ?? ""} (no longer in the request)`))));
  }

  const fillSelect = (sel: HTMLSelectElement, label: string, values: (string | number)[]) => {
    const cur = sel.value;
    replace(sel, h("option", { value: "" }, label), ...values.map((v) => h("option", { value: String(v) }, String(v))));
    sel.value = values.map(String).includes(cur) ? cur : "";
  };
  // a long list (thousands of turns) is filled when the select is first used, not on every batch
  const lazy = new Map<HTMLSelectElement, { label: string; values: (string | number)[]; key: string }>();
  const fillLater = (sel: HTMLSelectElement, label: string, values: (string | number)[]) => {
    const key = `${values.length}:${values[values.length - 1] ?? ""}`;
    const was = lazy.get(sel);
    if (was?.key === key) return;
    if (values.length <= 200 || sel.options.length > 1) { lazy.delete(sel); fillSelect(sel, label, values); return; }
    lazy.set(sel, { label, values, key });
    if (!sel.options.length) replace(sel, h("option", { value: "" }, label));
  };
  for (const sel of [turnSel]) {
    const fill = () => { const p = lazy.get(sel); if (p) { lazy.delete(sel); fillSelect(sel, p.label, p.values); } };
    sel.addEventListener("focus", fill);
    sel.addEventListener("pointerdown", fill);
  }

  const press = pressGuard(root, () => render.schedule());
  const render = frameThrottle(() => {
    if (press.hold()) return; // a click in progress: render after its release
    const events = s.fold.events;
    prov.update(events);
    durations = durationsBySeq(traj.update(events), approvalSeqs(events));
    drawWf();
    const sessionMode = events.length ? modes.update(events, s.fold.header?.cwd) : null;
    // a live session of this kernel can change its mode here; a saved log only shows it
    modeCtl.update(sessionMode, Boolean(s.sessionId) && !model.get("readonly")); // (a saved one is resumed)
    root.classList.toggle("dsh-bypass", sessionMode === "bypass");
    replace(headerInfo,
      h("span", { class: "dsh-title" }, "Session inspector"),
      h("span", { class: "dsh-sub" }, softBreaks(`${s.sessionId ?? String(model.get("session_id") || "")}${s.fold.header?.cwd ? ` · ${s.fold.header.cwd}` : ""} · ${countOf(eventCount(s.fold.cursor), "event")} · ${s.fold.status}`)),
      present.el, glossary.button);
    errorEl.hidden = !errorText && !s.fold.error;
    errorEl.textContent = errorText || (s.fold.error ? `${s.fold.error.code}: ${s.fold.error.message}` : "");
    if (optionsFor !== events.length) {
      optionsFor = events.length;
      const o = filterer.options(events);
      fillSelect(typeSel, "all types", o.types);
      fillLater(turnSel, "all turns", o.turns);
      fillSelect(toolSel, "all tools", o.tools);
      filter.type = typeSel.value; filter.turn = turnSel.value; filter.tool = toolSel.value;
      refilter();
    }
    drawViews();
    if (wantSeq >= 0 && events[wantSeq]) { const w = wantSeq; wantSeq = -1; select(w, true); root.dataset.openedAt = String(w); }
    if (selected < 0) renderDetail();
  });

  // the first events render at once, not at the next frame: a long log's later snapshot parts
  // can arrive before that frame, and the first rows need not wait for them to be folded
  let shown = false;
  const unsub = s.fold.subscribe(() => {
    if (shown || !s.fold.events.length) render.schedule();
    else { shown = true; render.flush(); }
  });
  const onErr = () => { errorText = String(model.get("error") ?? ""); render.schedule(); };
  model.on("change:error", onErr);
  const sid = String(model.get("session_id") ?? "");
  if (sid && !s.follow) follow(s, sid, (m) => { errorText = m; render.schedule(); });
  render.flush();
  return () => {
    render.cancel();
    unKeys();
    unPane();
    press.dispose();
    unTabs();
    unList();
    unsub();
    list.dispose();
    clearTimeout(searchTimer);
    model.off("change:error", onErr);
    model.off("change:present", onPresent);
    unLab();
    keeper.dispose();
    model.off("change:selected_seq", onWant);
    release(model, s);
    root.remove();
  };
}

// SessionInspector: the whole event log as a virtualised list with filters, search, jump to seq,
// provenance both ways, the derived messages at any seq, and the diff of frozen requests. What it
// shows comes from the session's pages (data/pages.ts): computed here while the widget's window
// holds the whole session, from the kernel (`session/page`) once it holds less — so a 100,000-event
// session opens as fast as a short one and only the rows on screen are ever in the page.
import { countOf, eventCount, fmtInt } from "./model/counts";
import { ROW_FILTER_NONE, rowsQuery } from "./data/rows";
import { summarize } from "./model/summary";
import { markSpans } from "./model/query";
import { acquire, follow, release, type WidgetModel } from "./transport";
import { stepOf } from "./types";
import type { DiffItem, Row, RowFilter, RowsPage } from "./wire.gen";
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
import { createWaterfall } from "./ui/waterfall";
import { sessionViews } from "./ui/timeline-stats";
import { keepTabInView, observePane, softBreaks } from "./ui/narrow";
import { reviewChanges, showDecisions } from "./ui/changes";
import { createCombobox } from "./ui/combobox";
import type { SessionEvent } from "./types";
import { ModeFold } from "./model/mode";
import { createModeControl } from "./ui/mode-select";

const ROW = 26;
const PAGE = 100; // rows a page of the list holds
const EXPORT_PART = 5000; // rows an export part holds
const DIFF_PAGE = 200;
type Detail = "event" | "messages" | "diff";

export function renderInspector(model: WidgetModel, el: HTMLElement): () => void {
  const s = acquire(model);
  const pages = s.pages;
  let filter: RowFilter = { ...ROW_FILTER_NONE };
  let total = 0; // rows the filter lists
  let selected = -1;
  let selIndex = -1; // the selected event's row in the list (-1: not listed / not known)
  let selRow: Row | null = null;
  let detail: Detail = "event";
  let showWrappers = true;
  let messagesShown = 150; // the newest derived messages the Messages tab shows
  let errorText = String(model.get("error") ?? "");
  const wf = createWaterfall(pages, (seq) => select(seq, true));
  wf.el.hidden = true;
  const wfBtn = h("button", { class: "dsh-btn dsh-f-waterfall", type: "button", "aria-pressed": "false", title: "requests and tool calls of a turn on a time axis" }, "Waterfall");
  const drawWf = () => { if (!wf.el.hidden) wf.update(selected, s.fold.status === "running"); };
  wfBtn.addEventListener("click", () => {
    wf.el.hidden = !wf.el.hidden;
    wfBtn.setAttribute("aria-pressed", String(!wf.el.hidden));
    if (selected >= 0) wf.showTurnOf(selected);
    drawWf();
  });

  const views = sessionViews(pages, (seq) => select(seq, true), () => render.schedule());
  const drawViews = () => views.draw(selected, s.fold.status === "running");
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
  const turnBox = createCombobox("dsh-f-turn", "filter by turn", "all turns", (v) => { filter = { ...filter, turn: v ? Number(v) : null }; refilter(); });
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
    b.addEventListener("click", () => void exportListed(format, b));
    return b;
  };
  const toolbar = h("div", { class: "dsh-toolbar" }, typeSel, turnBox.el, toolSel, search, jumpIn, jumpBtn, wfBtn, ...views.buttons,
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
  const unList = listKeys(list.el, () => total, () => selIndex, (j) => void selectIndex(j));

  /** The page of the list that holds row `i` (undefined while it comes). */
  const pageOf = (i: number): RowsPage | undefined => pages.get(rowsQuery(filter, Math.floor(i / PAGE) * PAGE, PAGE));
  const rowAt = (i: number): Row | undefined => { const p = pageOf(i); return p?.rows?.[i - p.offset]; };

  function refilter(): void {
    selIndex = -1;
    total = -1; // the next page of the listing sets the list's length
    render.flush(); // at once: a window holding the whole session lists the rows now
  }
  const onFilter = () => {
    filter = { type: typeSel.value || null, turn: turnBox.value ? Number(turnBox.value) : null, tool: toolSel.value || null, text: search.value };
    refilter();
  };
  for (const c of [typeSel, toolSel]) c.addEventListener("change", onFilter);
  let searchTimer: ReturnType<typeof setTimeout> | undefined;
  search.addEventListener("input", () => { clearTimeout(searchTimer); searchTimer = setTimeout(onFilter, 150); });
  const doJump = () => select(Number(jumpIn.value), true);
  jumpBtn.addEventListener("click", doJump);
  jumpIn.addEventListener("keydown", (e) => { if (e.key === "Enter") doJump(); });

  /** Download the listed rows: the export's parts asked in turn (computed here at once while the
   *  window holds the whole session), joined in one file. */
  async function exportListed(format: "jsonl" | "csv", btn: HTMLButtonElement): Promise<void> {
    const q = { ...filter };
    const parts: string[] = [];
    let offset = 0, rows = 0;
    btn.disabled = true;
    try {
      for (;;) {
        const query = { kind: "export" as const, filter: q, format, offset, limit: EXPORT_PART };
        const part = (pages.local ? pages.get(query) : undefined) ?? await pages.fetch(query);
        parts.push(part.text);
        rows += part.rows;
        offset += part.rows;
        if (!part.rows || offset >= part.total) break;
      }
    } catch (e) {
      countEl.textContent = `export failed: ${(e as Error).message}`;
      return;
    } finally { btn.disabled = false; }
    const name = `${s.sessionId ?? String(model.get("session_id") || "session")}-events.${format}`;
    const mime = format === "csv" ? "text/csv" : "application/x-ndjson";
    const href = typeof URL.createObjectURL === "function"
      ? URL.createObjectURL(new Blob(parts, { type: mime })) : `data:${mime};charset=utf-8,${encodeURIComponent(parts.join(""))}`;
    const a = h("a", { class: "dsh-f-download", href, download: name, hidden: true });
    a.dataset.rows = String(rows);
    root.append(a);
    a.click();
    a.remove();
    if (href.startsWith("blob:")) setTimeout(() => URL.revokeObjectURL(href), 60_000);
  }

  function rowSummary(row: Row, terms: string[]): HTMLElement {
    const snip = row.snippet;
    if (!snip) return h("span", { class: "dsh-row-sum" }, summarize(row.event as SessionEvent));
    const parts: (string | HTMLElement)[] = [];
    let at = 0;
    for (const [a, b] of markSpans(snip.text, terms)) { parts.push(snip.text.slice(at, a), h("mark", null, snip.text.slice(a, b))); at = b; }
    parts.push(snip.text.slice(at));
    return h("span", { class: "dsh-row-sum dsh-row-snip" }, ...parts);
  }

  /** Select event `seq`: its row found in the list (the filter cleared if it hides it). */
  function select(seq: number, scroll: boolean): void {
    if (!Number.isInteger(seq) || seq < 0 || seq > s.fold.cursor) { countEl.textContent = `no event #${seq}`; return; }
    selected = seq;
    selRow = null;
    void locate(seq, scroll);
    renderDetail();
    drawWf();
    if (!wf.el.hidden) wf.showTurnOf(seq);
    drawViews();
    views.reveal(seq);
  }
  async function locate(seq: number, scroll: boolean): Promise<void> {
    let page = await pages.fetch(rowsQuery(filter, 0, PAGE, seq));
    if ((page.index === null || page.index === undefined) && (filter.type || filter.turn !== null || filter.tool || filter.text)) {
      // the filter hides it: clear the filter so the jump lands
      typeSel.value = toolSel.value = search.value = "";
      turnBox.value = "";
      filter = { ...ROW_FILTER_NONE };
      refilter();
      page = await pages.fetch(rowsQuery(filter, 0, PAGE, seq));
    }
    if (selected !== seq) return; // another selection meanwhile
    const i = page.index ?? -1;
    selIndex = i;
    selRow = i >= 0 ? page.rows?.[i - page.offset] ?? null : null;
    if (i >= 0) { if (scroll) list.scrollToIndex(i); else list.refresh(); }
    renderDetail();
    render.schedule();
  }
  async function selectIndex(j: number): Promise<void> {
    let row = rowAt(j);
    if (!row) {
      const p = await pages.fetch(rowsQuery(filter, Math.floor(j / PAGE) * PAGE, PAGE));
      row = p.rows?.[j - p.offset];
    }
    if (!row) return;
    selected = row.event.seq;
    selIndex = j;
    selRow = row;
    list.scrollToIndex(j);
    list.el.querySelector<HTMLElement>(`.dsh-row[data-index="${j}"]`)?.focus({ preventScroll: true });
    renderDetail();
    drawWf();
    if (!wf.el.hidden) wf.showTurnOf(selected);
    drawViews();
    views.reveal(selected);
  }

  function renderRow(i: number): HTMLElement {
    const row = rowAt(i);
    if (!row) return h("div", { class: "dsh-row-pending", "data-index": i, "aria-hidden": "true" }, "…");
    const ev = row.event as SessionEvent;
    const cites = ev.sourceEventSeqs ?? [];
    const by = row.citedBy ?? [];
    const sel = ev.seq === selected;
    const terms = pageOf(i)?.terms ?? [];
    const r = h("div", { class: `dsh-row ${sel ? "dsh-row-sel" : ""} dsh-t-${ev.type.replace(/\//g, "-")}`, "data-seq": ev.seq, "data-index": i,
      "data-fkey": `row-${ev.seq}`, role: "option", "aria-selected": String(sel), tabindex: sel ? 0 : -1 },
      h("span", { class: "dsh-row-seq" }, String(ev.seq)),
      h("span", { class: "dsh-row-time" }, fmtTime(ev.time)),
      h("span", { class: "dsh-row-type" }, ev.type),
      h("span", { class: "dsh-row-turn" }, row.turn !== null ? `t${row.turn}${stepOf(ev) !== undefined ? `.${stepOf(ev)}` : ""}` : ""),
      h("span", { class: "dsh-row-dur" }, row.durationMs !== null ? fmtMs(row.durationMs) : ""),
      rowSummary(row, terms),
      h("span", { class: "dsh-row-prov" }, cites.length ? `→${cites.join(",")}` : "", by.length ? ` ←${by.join(",")}` : ""));
    r.addEventListener("click", () => { selected = ev.seq; selIndex = i; selRow = row; list.refresh(); renderDetail(); drawWf(); drawViews(); views.reveal(ev.seq); });
    return r;
  }

  function seqButton(n: number): HTMLElement {
    const b = h("button", { class: "dsh-link dsh-seqlink", type: "button", "data-seq": n }, `#${n}`);
    b.addEventListener("click", () => select(n, true));
    return b;
  }

  let detailKey = "";
  /** Draw the detail pane: at once (`force`: a choice of the user), else only when what it shows
   *  arrived or changed (a page landing does not rebuild an open JSON tree). */
  function renderDetail(force = true): void {
    const key = detailState();
    if (force || key !== detailKey) {
      detailKey = key;
      keepFocus(side, renderDetailNow)();
    }
    reviewDecisions();
  }
  function detailState(): string {
    const row = selectedRow();
    if (!row) return `${selected}:none`;
    const seq = row.event.seq;
    const extra = detail === "messages" ? pages.get({ kind: "messages", seq, limit: Math.min(1000, messagesShown) })?.count
      : detail === "diff" ? pages.get({ kind: "request-diff", seq, offset: 0, limit: DIFF_PAGE })?.count : "";
    return `${seq}:${detail}:${row.citedBy?.length ?? 0}:${extra ?? "…"}:${messagesShown}`;
  }
  /** A checkpoint's review on screen: the Keep / Revert decisions logged since it was drawn (or
   *  read from the kernel's pages since) shown in place — a diff opened in it stays open. */
  function reviewDecisions(): void {
    const review = side.querySelector<HTMLElement>(".dsh-changes-review");
    const ev = review ? (selectedRow()?.event as SessionEvent | undefined) : undefined;
    if (!review || ev?.type !== "checkpoint/changes") return;
    const events = decisionEvents(ev.seq);
    if (events) showDecisions(review, ev.turn, events);
  }

  /** The selected event's row (its event, citations), from the list's pages or the window. */
  function selectedRow(): Row | null {
    if (selRow && selRow.event.seq === selected) return selRow;
    if (selIndex >= 0) { const r = rowAt(selIndex); if (r && r.event.seq === selected) return (selRow = r); }
    const p = selected >= 0 ? pages.get(rowsQuery(ROW_FILTER_NONE, 0, 1, selected)) : undefined;
    const r = p?.rows?.find((x) => x.event.seq === selected);
    return r ? (selRow = r) : null;
  }

  /** The Keep / Revert decisions logged after the checkpoint/changes at `seq` (ui/changes.ts
   *  decisionsOf reads them): the window's events when it holds all that follow `seq`, else the
   *  session's pages of those two types (undefined while they come). */
  function decisionEvents(seq: number): SessionEvent[] | undefined {
    const held = s.fold.events;
    if (s.fold.whole || (held.length && held[0].seq <= seq + 1)) return held.filter((e) => e.seq > seq);
    const found: SessionEvent[] = [];
    for (const type of ["checkpoint/kept", "checkpoint/reverted"]) {
      const p = pages.get(rowsQuery({ ...ROW_FILTER_NONE, text: `type:${type} seq:${seq + 1}..` }, 0, 1000));
      if (!p) return undefined;
      for (const r of p.rows ?? []) found.push(r.event as SessionEvent);
    }
    return found.sort((a, b) => a.seq - b.seq);
  }

  function renderDetailNow(): void {
    const row = selectedRow();
    if (!row) {
      replace(side, h("div", { class: "dsh-muted" }, selected >= 0 ? `Loading event #${selected}…` : "Select an event (click a row, or jump to a seq)."));
      return;
    }
    const ev = row.event as SessionEvent;
    // the request diff only fits a request event; elsewhere its tab is not offered
    const fits: Detail[] = ev.type.startsWith("request/") ? ["event", "messages", "diff"] : ["event", "messages"];
    if (!fits.includes(detail)) detail = "event";
    const tabs = fits.map((d) => {
      const b = h("button", { class: `dsh-tab ${d === detail ? "dsh-tab-on" : ""}`, type: "button", "data-detail": d, role: "tab",
        id: `${panelId}-${d}`, "aria-selected": String(d === detail), "aria-controls": panelId, tabindex: d === detail ? 0 : -1 },
        d === "event" ? `Event #${ev.seq}` : d === "messages" ? `Messages at #${ev.seq}` : "Request diff");
      b.addEventListener("click", () => { detail = d; messagesShown = 150; renderDetail(); });
      return b;
    });
    let body: HTMLElement;
    if (detail === "event") {
      const cites = ev.sourceEventSeqs ?? [];
      const by = row.citedBy ?? [];
      body = h("div", null,
        h("div", { class: "dsh-prov" },
          h("div", null, "cites: ", ...(cites.length ? cites.flatMap((n, i) => (i ? [", ", seqButton(n)] : [seqButton(n)])) : ["—"])),
          h("div", { class: "dsh-citedby" }, ev.type === "tool/call" ? "result citing this call: " : "cited by: ",
            ...(by.length ? by.flatMap((n, i) => (i ? [", ", seqButton(n)] : [seqButton(n)])) : [ev.type === "tool/call" ? "not committed yet" : "—"]))),
        ev.type === "checkpoint/changes" ? reviewChanges(ev, s.sessionId, s.remote, decisionEvents(ev.seq) ?? []) : null,
        h("div", { class: "dsh-card-json" }, jsonTree(ev, { onSeq: (n) => select(n, true), collapseKeys: QUIET_KEYS }, OPEN_ALL)),
        toolOutputText(ev) !== undefined ? plainOutput(toolOutputText(ev) as string) : null);
    } else if (detail === "messages") {
      const page = pages.get({ kind: "messages", seq: ev.seq, limit: Math.min(1000, messagesShown) });
      body = page ? renderHistory({ messages: (page.messages ?? []).map((m) => ({ seq: m.seq, message: m.message })), earlier: page.offset,
        onEarlier: page.offset > 0 && messagesShown < 1000 ? () => { messagesShown += 150; renderDetail(); } : undefined,
        showWrappers, caption: `derive_messages() as of seq ${ev.seq}${page.total > (page.messages?.length ?? 0) ? ` · the newest ${fmtInt(page.messages?.length ?? 0)} of ${fmtInt(page.total)}` : ""}`, note: "" },
        (show) => { showWrappers = show; renderDetail(); }) : h("div", { class: "dsh-muted" }, "Deriving the messages…");
    } else {
      body = renderDiff(ev);
    }
    body.id = panelId;
    body.setAttribute("role", "tabpanel");
    body.setAttribute("aria-labelledby", `${panelId}-${detail}`);
    const tablist = h("div", { class: "dsh-tabs", role: "tablist", "aria-label": "event details" }, ...tabs);
    replace(side, tablist, body);
    keepTabInView(tablist);
  }

  function renderDiff(ev: SessionEvent): HTMLElement {
    const first = pages.get({ kind: "request-diff", seq: ev.seq, offset: 0, limit: DIFF_PAGE });
    if (!first) return h("div", { class: "dsh-muted" }, "Comparing the requests…");
    if (first.toSeq === null) return h("div", { class: "dsh-muted" }, "No frozen request at or after this event.");
    const n = (first.added ?? 0) + (first.removed ?? 0);
    const item = (it: DiffItem): HTMLElement => it.kind === "removed"
      ? h("li", { class: "dsh-diff-del" }, "− ", seqButton(it.seq), ` ${it.type} (no longer in the request)`)
      : h("li", { class: `dsh-diff-add dsh-kind-${it.kind.replace(/ /g, "-")}` }, "+ ", seqButton(it.seq), ` ${it.type} — ${it.kind}: `,
        h("span", { class: "dsh-muted" }, it.event ? summarize(it.event as SessionEvent) : ""));
    const prevLink = first.fromSeq !== null ? seqButton(first.fromSeq) : "(none: the first request)";
    const head = h("div", null, "request ", seqButton(first.toSeq), " vs previous ", prevLink,
      ` — ${countOf(first.kept ?? 0, "message")} kept, ${fmtInt(first.added ?? 0)} added, ${fmtInt(first.removed ?? 0)} removed`);
    if (n <= DIFF_PAGE) return h("div", { class: "dsh-diff" }, head, h("ul", { class: "dsh-diff-list" }, ...(first.items ?? []).map(item)));
    // a long diff (a request after a compaction, a flat log's first request): its items virtualised
    const items = createVirtualList(24, (i) => {
      const p = pages.get({ kind: "request-diff", seq: ev.seq, offset: Math.floor(i / DIFF_PAGE) * DIFF_PAGE, limit: DIFF_PAGE });
      const it = p?.items?.[i - (p.offset ?? 0)];
      return it ? item(it) : h("li", { class: "dsh-row-pending" }, "…");
    }, 360);
    items.el.classList.add("dsh-diff-list");
    items.el.setAttribute("aria-label", "messages the request adds and drops");
    items.setCount(n);
    return h("div", { class: "dsh-diff" }, head, items.el);
  }

  const fillSelect = (sel: HTMLSelectElement, label: string, values: string[]) => {
    const cur = sel.value;
    if (sel.options.length === values.length + 1 && values.every((v, i) => sel.options[i + 1].value === v)) return;
    replace(sel, h("option", { value: "" }, label), ...values.map((v) => h("option", { value: v }, v)));
    sel.value = values.includes(cur) ? cur : "";
  };

  const press = pressGuard(root, () => render.schedule());
  let shownCount = -1;
  const render = frameThrottle(() => {
    if (press.hold()) return; // a click in progress: render after its release
    const count = eventCount(s.fold.cursor);
    // the mode: the last mode/changed the window holds, else the one the whole log last set (the
    // facets page: a long session's change can lie before the window)
    const facets = count ? pages.get({ kind: "facets" }) : undefined;
    const sessionMode = count ? modes.update(s.fold.events, s.fold.header?.cwd, facets?.mode ?? null) : null;
    // a live session of this kernel can change its mode here; a saved log only shows it
    modeCtl.update(sessionMode, Boolean(s.sessionId) && !model.get("readonly")); // (a saved one is resumed)
    root.classList.toggle("dsh-bypass", sessionMode === "bypass");
    replace(headerInfo,
      h("span", { class: "dsh-title" }, "Session inspector"),
      h("span", { class: "dsh-sub" }, softBreaks(`${s.sessionId ?? String(model.get("session_id") || "")}${s.fold.header?.cwd ? ` · ${s.fold.header.cwd}` : ""} · ${countOf(count, "event")} · ${s.fold.status}`)),
      present.el, glossary.button);
    const problem = errorText || (s.fold.error ? `${s.fold.error.code}: ${s.fold.error.message}` : "") || pages.error;
    errorEl.hidden = !problem;
    errorEl.textContent = problem;
    if (facets) {
      fillSelect(typeSel, "all types", facets.types ?? []);
      turnBox.setValues(facets.turns ?? []);
      fillSelect(toolSel, "all tools", facets.tools ?? []);
    }
    const first = count ? pageOf(0) : undefined;
    if (first) {
      if (first.total !== total || shownCount !== first.count) { total = first.total; shownCount = first.count; list.setCount(total); }
      else list.refresh();
      countEl.textContent = first.error || `${fmtInt(total)} of ${countOf(count, "event")}`;
      countEl.classList.toggle("dsh-f-bad", Boolean(first.error));
    } else if (!count) {
      countEl.textContent = `0 of ${countOf(0, "event")}`;
      list.setCount(0);
    }
    drawWf();
    drawViews();
    if (wantSeq >= 0 && s.fold.cursor >= wantSeq) { const w = wantSeq; wantSeq = -1; select(w, true); root.dataset.openedAt = String(w); }
    renderDetail(false);
  });

  const unsub = s.fold.subscribe(() => render.schedule());
  const unPages = pages.onChange(() => render.schedule());
  const onErr = () => { errorText = String(model.get("error") ?? ""); render.schedule(); };
  model.on("change:error", onErr);
  const sid = String(model.get("session_id") ?? "");
  if (sid && !s.follow) {
    follow(s, sid, (m) => { errorText = m; render.schedule(); });
    if (s.window > 0) pages.prefetch(rowsQuery(filter, 0, PAGE)); // a long session's first rows, beside its snapshot
  } else if (sid) s.sessionId = sid;
  render.flush();
  return () => {
    render.cancel();
    unKeys();
    unPane();
    press.dispose();
    unTabs();
    unList();
    unsub();
    unPages();
    list.dispose();
    turnBox.dispose();
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

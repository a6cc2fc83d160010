// Checkpoints in the widgets (issue 26): the loop header's `+a ~m -d` of the last turn that changed
// files, and the inspector's review of a `checkpoint/changes` event — each file with Keep / Revert
// and a Diff toggle that fetches the file's unified diff (`session/diff`, read from the checkpoint
// blobs). Both decisions are events the host logs (issue 38 item 4): Revert is a rewind of that
// file alone (`session/rewind` with `paths` → `checkpoint/reverted`), Keep is `session/keep` →
// `checkpoint/kept`; later rewinds and undos respect them. A read-only review (a saved log with no
// host) shows the decisions already logged.
import type { CheckpointChanges, FileChange, FileDiff, KeptFiles, Rewound, TurnDiff } from "../wire.gen";
import type { SessionEvent } from "../types";
import type { Remote } from "../remote";
import { h } from "./dom";

const count = (n: number | null | undefined, list: FileChange[] | undefined): number => n ?? list?.length ?? 0;

/** The last `checkpoint/changes` of the session, or null. */
export function lastChanges(events: readonly SessionEvent[]): CheckpointChanges | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const ev = events[i];
    if (ev?.type === "checkpoint/changes") return ev;
  }
  return null;
}

/** `+2 ~1 -1` for the header (null when no turn recorded changes). */
export function changesBadge(events: readonly SessionEvent[]): HTMLElement | null {
  const ch = lastChanges(events);
  if (!ch) return null;
  const a = count(ch.addedCount, ch.added), m = count(ch.modifiedCount, ch.modified), d = count(ch.deletedCount, ch.deleted);
  return h("span", { class: "dsh-changes", "data-turn": ch.turn, "data-added": a, "data-modified": m, "data-deleted": d,
    title: `turn ${ch.turn} changed files: ${a} added, ${m} modified, ${d} deleted (%dsh changes ${ch.turn}; %dsh undo)` },
  `+${a} ~${m} -${d}`);
}

type Revert = (paths: string[]) => Promise<Rewound>;
type Keep = (paths: string[]) => Promise<KeptFiles>;
/** The diffs of these files of the turn (`session/diff` with `paths`). */
export type DiffFetch = (paths: string[]) => Promise<TurnDiff>;

let diffIds = 0;

const LINE_CLASS: Record<string, string> = { "+": "dsh-dl-add", "-": "dsh-dl-del", "@": "dsh-dl-hunk", "\\": "dsh-dl-note" };

/** One file's diff: coloured +/- lines, or why there is none (binary, too large, unavailable). */
export function renderFileDiff(d: FileDiff | undefined): HTMLElement {
  if (!d) return h("div", { class: "dsh-file-diff-note" }, "no diff for this file in the turn's checkpoints");
  if (d.kind !== "text") {
    const what = { binary: "binary file: no text diff", "too-large": "too large to show", unavailable: "no diff available", same: "content unchanged" }[d.kind] ?? d.kind;
    return h("div", { class: `dsh-file-diff-note dsh-file-diff-${d.kind}` }, d.note ? `${what} (${d.note})` : what);
  }
  const lines = (d.text ?? "").replace(/\n$/, "").split("\n");
  const pre = h("pre", { class: "dsh-file-diff-text", tabindex: 0, "aria-label": `unified diff of ${d.path}: ${d.added ?? 0} added, ${d.removed ?? 0} removed lines` });
  lines.forEach((line, i) => {
    const head = i < 2 && (line.startsWith("--- ") || line.startsWith("+++ "));
    pre.append(h("span", { class: `dsh-dl ${head ? "dsh-dl-head" : LINE_CLASS[line[0] ?? ""] ?? "dsh-dl-ctx"}` }, line));
  });
  return h("div", { class: "dsh-file-diff-body" },
    h("div", { class: "dsh-muted" }, `+${d.added ?? 0} −${d.removed ?? 0} lines`), pre);
}

function diffToggle(paths: string[], diff: DiffFetch | null): [HTMLElement, HTMLElement] {
  const id = `dsh-file-diff-${++diffIds}`;
  const panel = h("div", { class: "dsh-file-diff", id, hidden: true, role: "region", "aria-label": `diff of ${paths[0]}` });
  const btn = h("button", { class: "dsh-btn dsh-diff-toggle", type: "button", "aria-expanded": "false", "aria-controls": id,
    disabled: diff === null, title: diff ? `show the diff of ${paths[0]} (before the turn → after it)` : "read-only: no host to read the checkpoints" }, "Diff");
  let loaded = false;
  btn.addEventListener("click", () => {
    const open = btn.getAttribute("aria-expanded") !== "true";
    btn.setAttribute("aria-expanded", String(open));
    panel.hidden = !open;
    if (!open || loaded || !diff) return;
    loaded = true;
    panel.replaceChildren(h("div", { class: "dsh-muted" }, "reading the diff…"));
    diff(paths.slice(0, 1)).then((res) => {
      panel.replaceChildren(renderFileDiff((res.files ?? []).find((f) => f.path === paths[0])));
    }).catch((e: Error) => {
      loaded = false;
      panel.replaceChildren(h("div", { class: "dsh-file-diff-note" }, `diff failed: ${e.message}`));
    });
  });
  return [btn, panel];
}

function outcome(res: Rewound, paths: string[]): string {
  const conflicts = (res.conflicts ?? []).filter((p) => paths.includes(p));
  if (conflicts.length) return `not reverted: changed outside the agent since (${conflicts.join(", ")})`;
  const failed = (res.failed ?? []).filter((f) => paths.some((p) => f.startsWith(`${p}:`)));
  if (failed.length) return `failed: ${failed.join("; ")}`;
  const done = [...(res.written ?? []), ...(res.removed ?? [])].filter((p) => paths.includes(p));
  return done.length ? "reverted" : "already as before the turn";
}

/** The decisions already logged on turn `turn`'s files: path → "kept" | "reverted" (the latest wins). */
export function decisionsOf(events: readonly SessionEvent[], turn: number): Map<string, string> {
  const out = new Map<string, string>();
  for (const ev of events) {
    if (ev.type === "checkpoint/kept" && ev.turn === turn) for (const p of ev.paths) out.set(p, "kept");
    if (ev.type === "checkpoint/reverted" && ev.toTurn === turn) {
      const held = new Set(ev.conflicts ?? []);
      for (const p of ev.paths) if (!held.has(p)) out.set(p, "reverted");
    }
  }
  return out;
}

/** The review of one turn's changes: a row per file with Diff / Keep / Revert. */
export function renderChanges(ev: CheckpointChanges, revert: Revert | null, diff: DiffFetch | null = null,
  keepFn: Keep | null = null, decided: Map<string, string> = new Map()): HTMLElement {
  const moved = new Set((ev.added ?? []).map((f) => f.renamedFrom).filter((p): p is string => !!p));
  const rows: [string, FileChange, string[]][] = [
    ...(ev.added ?? []).map((f): [string, FileChange, string[]] => f.renamedFrom ? ["renamed", f, [f.path, f.renamedFrom]] : ["added", f, [f.path]]),
    ...(ev.modified ?? []).map((f): [string, FileChange, string[]] => ["modified", f, [f.path]]),
    ...(ev.deleted ?? []).filter((f) => !moved.has(f.path)).map((f): [string, FileChange, string[]] => ["deleted", f, [f.path]]),
  ];
  const list = h("ul", { class: "dsh-changes-list", "aria-label": `files turn ${ev.turn} changed` });
  for (const [kind, f, paths] of rows) {
    const status = h("span", { class: "dsh-change-status", role: "status" });
    const keep = h("button", { class: "dsh-btn dsh-keep", type: "button", disabled: keepFn === null,
      title: keepFn ? "keep the agent's change: later rewinds and undos leave it" : "read-only: no host to record it" }, "Keep");
    const back = h("button", { class: "dsh-btn dsh-revert", type: "button", disabled: revert === null,
      title: revert ? `put ${paths.join(" and ")} back as at the start of turn ${ev.turn}` : "read-only: no host to rewind" }, "Revert");
    const already = decided.get(f.path);
    if (already) { status.textContent = already; status.dataset.from = "log"; }
    keep.addEventListener("click", () => {
      if (!keepFn) return;
      keep.disabled = back.disabled = true;
      status.dataset.from = "press";
      status.textContent = "keeping…";
      keepFn(paths.filter((p) => p === f.path)).then(() => { status.textContent = "kept"; back.disabled = false; })
        .catch((e: Error) => { status.textContent = `keep failed: ${e.message}`; keep.disabled = back.disabled = false; });
    });
    back.addEventListener("click", () => {
      if (!revert) return;
      keep.disabled = back.disabled = true;
      status.dataset.from = "press";
      status.textContent = "reverting…";
      revert(paths).then((res) => { status.textContent = outcome(res, paths); })
        .catch((e: Error) => { status.textContent = `revert failed: ${e.message}`; back.disabled = false; });
    });
    const label = kind === "renamed" ? `${f.renamedFrom} → ${f.path}` : f.path;
    const size = kind === "modified" && f.beforeSize !== undefined && f.beforeSize !== null ? `${f.beforeSize} → ${f.size} B` : `${f.size} B`;
    const [toggle, panel] = diffToggle(paths, diff);
    list.append(h("li", { class: `dsh-change dsh-change-${kind}`, "data-path": f.path },
      h("span", { class: "dsh-change-kind" }, { added: "+", modified: "~", deleted: "-", renamed: ">" }[kind] ?? "?"),
      h("span", { class: "dsh-change-path" }, label), h("span", { class: "dsh-muted" }, ` ${size} `), toggle, keep, back, status, panel));
  }
  const a = count(ev.addedCount, ev.added), m = count(ev.modifiedCount, ev.modified), d = count(ev.deletedCount, ev.deleted);
  return h("div", { class: "dsh-changes-review" },
    h("div", null, `turn ${ev.turn} changed files: +${a} ~${m} -${d}`),
    rows.length ? list : h("div", { class: "dsh-muted" }, "no file changes"));
}

/** The Keep / Revert decisions logged on turn `turn`'s files since `review` was drawn, shown in
 *  place (its open diffs stay open): a file's status says the log's latest decision, unless it
 *  says what a press in this review answered. */
export function showDecisions(review: HTMLElement, turn: number, events: readonly SessionEvent[]): void {
  const decided = decisionsOf(events, turn);
  for (const li of review.querySelectorAll<HTMLElement>(".dsh-change")) {
    const status = li.querySelector<HTMLElement>(".dsh-change-status");
    const d = decided.get(li.dataset.path ?? "");
    if (!status || !d || status.dataset.from === "press" || status.textContent === d) continue;
    status.textContent = d;
    status.dataset.from = "log";
  }
}

/** The inspector's review of one turn's changes, wired to the host when the session is known. */
export function reviewChanges(ev: CheckpointChanges, sessionId: string | null | undefined, remote: Remote,
  events: readonly SessionEvent[] = []): HTMLElement {
  const decided = decisionsOf(events, ev.turn);
  if (!sessionId) return renderChanges(ev, null, null, null, decided);
  return renderChanges(ev, (paths) => remote.rewind({ sessionId, toTurn: ev.turn, paths, files: true }),
    (paths) => remote.diff({ sessionId, turn: ev.turn, paths }),
    (paths) => remote.keep({ sessionId, turn: ev.turn, paths }), decided);
}

// Checkpoints in the widgets (issue 26): the loop header's `+a ~m -d` of the last turn that changed
// files, and the inspector's review of a `checkpoint/changes` event — each file with Keep / Revert
// (Revert of one file is a rewind of that file alone: `session/rewind` with `paths`).
import type { CheckpointChanges, FileChange, Rewound } from "../wire.gen";
import type { SessionEvent } from "../types";
import { h } from "./dom";

const count = (n: number | null | undefined, list: FileChange[] | undefined): number => n ?? list?.length ?? 0;

/** The last `checkpoint/changes` of the session, or null. */
export function lastChanges(events: readonly SessionEvent[]): CheckpointChanges | null {
  for (let i = events.length - 1; i >= 0; i--) {
    const ev = events[i];
    if (ev?.type === "checkpoint/changes") return ev as CheckpointChanges;
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

function outcome(res: Rewound, paths: string[]): string {
  const conflicts = (res.conflicts ?? []).filter((p) => paths.includes(p));
  if (conflicts.length) return `not reverted: changed outside the agent since (${conflicts.join(", ")})`;
  const failed = (res.failed ?? []).filter((f) => paths.some((p) => f.startsWith(`${p}:`)));
  if (failed.length) return `failed: ${failed.join("; ")}`;
  const done = [...(res.written ?? []), ...(res.removed ?? [])].filter((p) => paths.includes(p));
  return done.length ? "reverted" : "already as before the turn";
}

/** The review of one turn's changes: a row per file with Keep / Revert. */
export function renderChanges(ev: CheckpointChanges, revert: Revert | null): HTMLElement {
  const moved = new Set((ev.added ?? []).map((f) => f.renamedFrom).filter((p): p is string => !!p));
  const rows: [string, FileChange, string[]][] = [
    ...(ev.added ?? []).map((f): [string, FileChange, string[]] => f.renamedFrom ? ["renamed", f, [f.path, f.renamedFrom]] : ["added", f, [f.path]]),
    ...(ev.modified ?? []).map((f): [string, FileChange, string[]] => ["modified", f, [f.path]]),
    ...(ev.deleted ?? []).filter((f) => !moved.has(f.path)).map((f): [string, FileChange, string[]] => ["deleted", f, [f.path]]),
  ];
  const list = h("ul", { class: "dsh-changes-list", "aria-label": `files turn ${ev.turn} changed` });
  for (const [kind, f, paths] of rows) {
    const status = h("span", { class: "dsh-change-status", role: "status" });
    const keep = h("button", { class: "dsh-btn dsh-keep", type: "button", title: "keep the agent's change" }, "Keep");
    const back = h("button", { class: "dsh-btn dsh-revert", type: "button", disabled: revert === null,
      title: revert ? `put ${paths.join(" and ")} back as at the start of turn ${ev.turn}` : "read-only: no host to rewind" }, "Revert");
    keep.addEventListener("click", () => { status.textContent = "kept"; keep.disabled = back.disabled = true; });
    back.addEventListener("click", () => {
      if (!revert) return;
      keep.disabled = back.disabled = true;
      status.textContent = "reverting…";
      revert(paths).then((res) => { status.textContent = outcome(res, paths); })
        .catch((e: Error) => { status.textContent = `revert failed: ${e.message}`; back.disabled = false; });
    });
    const label = kind === "renamed" ? `${f.renamedFrom} → ${f.path}` : f.path;
    const size = kind === "modified" && f.beforeSize !== undefined && f.beforeSize !== null ? `${f.beforeSize} → ${f.size} B` : `${f.size} B`;
    list.append(h("li", { class: `dsh-change dsh-change-${kind}`, "data-path": f.path },
      h("span", { class: "dsh-change-kind" }, { added: "+", modified: "~", deleted: "-", renamed: ">" }[kind] ?? "?"),
      h("span", { class: "dsh-change-path" }, label), h("span", { class: "dsh-muted" }, ` ${size} `), keep, back, status));
  }
  const a = count(ev.addedCount, ev.added), m = count(ev.modifiedCount, ev.modified), d = count(ev.deletedCount, ev.deleted);
  return h("div", { class: "dsh-changes-review" },
    h("div", null, `turn ${ev.turn} changed files: +${a} ~${m} -${d}`),
    rows.length ? list : h("div", { class: "dsh-muted" }, "no file changes"));
}

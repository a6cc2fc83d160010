// The permission mode of a session (issue 36), read from its log: the last `mode/changed`, else
// the mode its workspace implies (`auto` in a demo-workspace copy, else `default`) — as
// dsh_notebook/tools/modes.py (`SessionMode`, `default_mode`). And how a call's decision reads.
import type { ModeArgs, SessionEvent } from "../types";

/** A mode a person picks: what `session/mode` takes (generated from dsh_notebook/wire/events.py's
 *  `ChosenMode`; `auto` is only the legacy `--approve auto`). */
export type ChosenMode = ModeArgs["mode"];
/** Each chosen mode once, in the selector's order: a mode added to or dropped from the Python set
 *  fails tsc here (the record must name exactly the generated modes). */
const CHOSEN: Record<ChosenMode, true> = { default: true, "accept-edits": true, plan: true, "dont-ask": true, bypass: true };
export const MODES = Object.keys(CHOSEN) as readonly ChosenMode[];
export const isChosenMode = (mode: string): mode is ChosenMode => Object.prototype.hasOwnProperty.call(CHOSEN, mode);

/** What each mode lets run, in a few words (the selector's option titles, the header's tooltip). */
export const MODE_HINTS: Record<string, string> = {
  default: "reads run; writes, edits, bash, python and cell inserts ask",
  "accept-edits": "reads and workspace edits run; bash, python and cell inserts ask",
  plan: "only reads run; the agent presents a plan for your approval",
  "dont-ask": "reads run; whatever would ask is denied",
  bypass: "every call runs without asking, deny rules aside (needs DSH_ALLOW_BYPASS=1)",
  auto: "legacy --approve auto: every call runs but notebook_insert, which asks",
};

/** `…/dsh-demo-*\/demo`: a copy of the demo workspace (demo/__init__.py `is_demo_copy`). */
export function isDemoCopy(cwd: string | undefined | null): boolean {
  if (!cwd) return false;
  const parts = cwd.replace(/\/+$/, "").split("/");
  return (parts[parts.length - 2] ?? "").startsWith("dsh-demo-");
}

/** Incremental: the mode after the events folded so far. Follows the events by seq, so a window
 *  that drops its oldest events (a widget's trim) or starts later (a windowed snapshot) folds each
 *  event once; `earlier`: the mode the log set before the events held (a window's, from the kernel's
 *  facets page; null: none, or the events are the whole session). */
export class ModeFold {
  private through = -1; // the last seq folded
  private logged: string | null = null;

  update(events: readonly SessionEvent[], cwd: string | undefined | null, earlier: string | null = null): string {
    const last = events.length ? events[events.length - 1].seq : -1;
    if (last < this.through) { this.through = -1; this.logged = null; } // a new snapshot
    let i = events.length;
    while (i > 0 && events[i - 1].seq > this.through) i--; // the first event not folded yet
    for (; i < events.length; i++) {
      const ev = events[i];
      if (ev && ev.type === "mode/changed") this.logged = ev.mode;
    }
    this.through = Math.max(this.through, last);
    return this.logged ?? earlier ?? (isDemoCopy(cwd) ? "auto" : "default");
  }
}

/** "allow by mode (plan)", "deny by rule (rules.json#1 bash "rm *") · default", "allow by user (default)". */
export function decisionText(ev: SessionEvent | undefined): string {
  if (!ev || ev.type !== "approval/decided") return "";
  const by = ev.decider ?? ev.by ?? "?";
  const what = ev.rule && (ev.decider === "rule" || ev.decider === "grant") ? ` (${ev.rule})` : "";
  const next = ev.nextMode ? ` → continue in ${ev.nextMode}` : "";
  const feedback = ev.feedback ? ` · feedback: ${ev.feedback}` : "";
  return `${ev.decision} by ${by}${what}${ev.mode ? ` · mode ${ev.mode}` : ""}${next}${feedback}`;
}

// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { changesBadge, decisionsOf, renderChanges } from "../src/ui/changes";
import { summarize } from "../src/model/summary";
import type { CheckpointChanges, KeptFiles, Rewound, TurnDiff } from "../src/wire.gen";
import type { SessionEvent } from "../src/types";

const changes: CheckpointChanges = {
  seq: 9, time: 1, type: "checkpoint/changes", turn: 2, snapshot: "a1", after: "b2",
  added: [{ path: "NOTES.md", size: 49, sha: "x" }, { path: "t/new.mjs", size: 10, sha: "y", renamedFrom: "t/old.mjs" }],
  modified: [{ path: "src/math.ts", size: 430, beforeSize: 407, sha: "z" }],
  deleted: [{ path: "package.json", size: 238 }, { path: "t/old.mjs", size: 10 }],
  addedCount: 2, modifiedCount: 1, deletedCount: 2,
};

const flush = () => new Promise((r) => setTimeout(r, 0));

describe("checkpoint changes in the widgets", () => {
  it("the header shows the last turn's +a ~m -d", () => {
    expect(changesBadge([])).toBeNull();
    const badge = changesBadge([{ seq: 0, time: 0, type: "turn/start", turn: 1 } as SessionEvent, changes as SessionEvent]);
    expect(badge?.textContent).toBe("+2 ~1 -2");
    expect(badge?.dataset.turn).toBe("2");
  });

  it("lists each file once (a rename as one row) with Keep and Revert; Revert rewinds that file alone, Keep is logged", async () => {
    const asked: string[][] = [];
    const kept: string[][] = [];
    const keep = (paths: string[]): Promise<KeptFiles> => {
      kept.push(paths);
      return Promise.resolve({ sessionId: "s", turn: 2, paths, keptSeq: 12 });
    };
    const revert = (paths: string[]): Promise<Rewound> => {
      asked.push(paths);
      return Promise.resolve(paths[0] === "src/math.ts"
        ? { sessionId: "s", toTurn: 2, conflicts: ["src/math.ts"] }
        : { sessionId: "s", toTurn: 2, written: paths.slice(1), removed: paths.slice(0, 1) });
    };
    const el = renderChanges(changes, revert, null, keep);
    const rows = [...el.querySelectorAll("li")];
    expect(rows.map((r) => r.querySelector(".dsh-change-path")?.textContent)).toEqual(
      ["NOTES.md", "t/old.mjs → t/new.mjs", "src/math.ts", "package.json"]);
    (rows[1].querySelector(".dsh-revert") as HTMLButtonElement).click();
    (rows[2].querySelector(".dsh-revert") as HTMLButtonElement).click();
    (rows[3].querySelector(".dsh-keep") as HTMLButtonElement).click();
    await flush();
    expect(asked).toEqual([["t/new.mjs", "t/old.mjs"], ["src/math.ts"]]);
    expect(rows[1].querySelector(".dsh-change-status")?.textContent).toBe("reverted");
    expect(rows[2].querySelector(".dsh-change-status")?.textContent).toContain("changed outside the agent");
    expect(kept).toEqual([["package.json"]]);  // session/keep: the host logs checkpoint/kept
    expect(rows[3].querySelector(".dsh-change-status")?.textContent).toBe("kept");
    expect((rows[3].querySelector(".dsh-keep") as HTMLButtonElement).disabled).toBe(true);
    expect((rows[3].querySelector(".dsh-revert") as HTMLButtonElement).disabled).toBe(false);  // a Revert may follow
  });

  it("shows the decisions already logged (the latest per file wins; a revert that met a conflict is none)", () => {
    const events = [
      { seq: 10, time: 1, type: "checkpoint/kept", turn: 2, paths: ["NOTES.md", "src/math.ts"] },
      { seq: 11, time: 1, type: "checkpoint/reverted", toTurn: 2, paths: ["NOTES.md"], removed: ["NOTES.md"] },
      { seq: 12, time: 1, type: "checkpoint/reverted", toTurn: 2, paths: ["package.json"], conflicts: ["package.json"] },
      { seq: 13, time: 1, type: "checkpoint/kept", turn: 1, paths: ["other.txt"] },
    ] as SessionEvent[];
    const decided = decisionsOf(events, 2);
    expect([...decided.entries()].sort()).toEqual([["NOTES.md", "reverted"], ["src/math.ts", "kept"]]);
    const rows = [...renderChanges(changes, null, null, null, decided).querySelectorAll("li")];
    expect(rows.map((r) => r.querySelector(".dsh-change-status")?.textContent)).toEqual(["reverted", "", "kept", ""]);
    expect(summarize(events[0])).toBe("turn 2 · kept NOTES.md, src/math.ts");
  });

  it("the inspector's row summary of a checkpoint/changes", () => {
    expect(summarize(changes as SessionEvent)).toBe("+2 ~1 -2 files");
  });

  it("read-only (no host): Revert and Keep are disabled", () => {
    const el = renderChanges(changes, null);
    expect([...el.querySelectorAll(".dsh-revert")].every((b) => (b as HTMLButtonElement).disabled)).toBe(true);
    expect([...el.querySelectorAll(".dsh-keep")].every((b) => (b as HTMLButtonElement).disabled)).toBe(true);
  });
});

describe("a file's diff in the review", () => {
  const turnDiff = (paths: string[]): Promise<TurnDiff> => Promise.resolve({
    sessionId: "s", turn: 2, files: paths.map((p) => p === "src/math.ts"
      ? { path: p, kind: "text" as const, text: "--- a/src/math.ts\n+++ b/src/math.ts\n@@ -1,2 +1,2 @@\n ctx\n-old line\n+new line\n", added: 1, removed: 1 }
      : { path: p, kind: "binary" as const, note: "after: binary, 3 bytes" }),
  });

  it("Diff expands the row with coloured +/- lines fetched once, and collapses it", async () => {
    const asked: string[][] = [];
    const el = renderChanges(changes, null, (paths) => { asked.push(paths); return turnDiff(paths); });
    const row = el.querySelector('li[data-path="src/math.ts"]') as HTMLElement;
    const toggle = row.querySelector(".dsh-diff-toggle") as HTMLButtonElement;
    const panel = row.querySelector(".dsh-file-diff") as HTMLElement;
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    expect(panel.hidden).toBe(true);
    expect(toggle.getAttribute("aria-controls")).toBe(panel.id);
    toggle.click();
    await flush();
    expect(panel.hidden).toBe(false);
    expect(toggle.getAttribute("aria-expanded")).toBe("true");
    expect([...panel.querySelectorAll(".dsh-dl-del")].map((n) => n.textContent)).toEqual(["-old line"]);
    expect([...panel.querySelectorAll(".dsh-dl-add")].map((n) => n.textContent)).toEqual(["+new line"]);
    expect(panel.querySelectorAll(".dsh-dl-head")).toHaveLength(2);
    toggle.click();
    expect(panel.hidden).toBe(true);
    toggle.click();
    await flush();
    expect(asked).toEqual([["src/math.ts"]]);
  });

  it("a binary file says so; read-only has no Diff", async () => {
    const el = renderChanges(changes, null, turnDiff);
    const row = el.querySelector('li[data-path="NOTES.md"]') as HTMLElement;
    (row.querySelector(".dsh-diff-toggle") as HTMLButtonElement).click();
    await flush();
    expect(row.querySelector(".dsh-file-diff")?.textContent).toContain("binary file");
    const ro = renderChanges(changes, null);
    expect([...ro.querySelectorAll(".dsh-diff-toggle")].every((b) => (b as HTMLButtonElement).disabled)).toBe(true);
  });
});

// @vitest-environment jsdom
import { describe, expect, it } from "vitest";
import { changesBadge, renderChanges } from "../src/ui/changes";
import { summarize } from "../src/model/summary";
import type { CheckpointChanges, Rewound } from "../src/wire.gen";
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

  it("lists each file once (a rename as one row) with Keep and Revert; Revert rewinds that file alone", async () => {
    const asked: string[][] = [];
    const revert = (paths: string[]): Promise<Rewound> => {
      asked.push(paths);
      return Promise.resolve(paths[0] === "src/math.ts"
        ? { sessionId: "s", toTurn: 2, conflicts: ["src/math.ts"] }
        : { sessionId: "s", toTurn: 2, written: paths.slice(1), removed: paths.slice(0, 1) });
    };
    const el = renderChanges(changes, revert);
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
    expect(rows[3].querySelector(".dsh-change-status")?.textContent).toBe("kept");
    expect((rows[3].querySelector(".dsh-revert") as HTMLButtonElement).disabled).toBe(true);
  });

  it("the inspector's row summary of a checkpoint/changes", () => {
    expect(summarize(changes as SessionEvent)).toBe("+2 ~1 -2 files");
  });

  it("read-only (no host): Revert is disabled", () => {
    const el = renderChanges(changes, null);
    expect([...el.querySelectorAll(".dsh-revert")].every((b) => (b as HTMLButtonElement).disabled)).toBe(true);
  });
});

// @vitest-environment jsdom
// The views table's conformance test (issue 40 item 2): every row of VIEWS (src/ui/views.ts) is a
// tab with its label in the table's order, draws one `.dsh-view-NAME` root into the labelled panel
// at every stage of a real run, shows what its test row says it shows, and opens from each stage
// whose diagram link the table sends to it. A view without a row in SAMPLES does not compile.
import { afterEach, describe, expect, it } from "vitest";
import type { StageNo } from "../src/model/stages";
import { STAGE_VIEW, VIEW_NAMES, VIEWS, type ViewName } from "../src/ui/views";
import type { FollowItem } from "../src/types";
import { FakeModel, mount, waitFor } from "./fake-model";
import { eventsOf, readmeRun } from "./helpers";

/** Each view's test row: a stage of the README run (read README.md, then answer) and a text the
 *  view shows there. */
const SAMPLES: Record<ViewName, { stage: StageNo; shows: string }> = {
  history: { stage: 6, shows: "The frozen request #14: its messageSeqs." },
  payloads: { stage: 4, shows: "committed" },
  roles: { stage: 2, shows: "execute_tool_calls()" },
};

const cleanups: (() => void)[] = [];
afterEach(() => { while (cleanups.length) cleanups.pop()?.(); document.body.innerHTML = ""; });

function replay(): HTMLElement {
  const events = eventsOf(readmeRun());
  const snap = [{ type: "snapshot", sessionId: "s_saved", cursor: events.length - 1, events }] as unknown as FollowItem[];
  const { el, cleanup } = mount(new FakeModel({ kind: "loop", session_id: "s_saved", readonly: true, error: "", create_args: {} }, snap));
  cleanups.push(cleanup);
  return el;
}

const tab = (el: HTMLElement, v: string) => el.querySelector<HTMLElement>(`.dsh-tab[data-view="${v}"]`);
const panel = (el: HTMLElement) => el.querySelector<HTMLElement>('.dsh-view[role="tabpanel"]') as HTMLElement;
const current = (el: HTMLElement) => el.querySelector(".dsh-stage[aria-current=step]")?.getAttribute("data-stage");

async function atStage(el: HTMLElement, stage: StageNo): Promise<void> {
  await waitFor(() => el.querySelector(`.dsh-stage[data-stage="${stage}"]`) !== null);
  el.querySelector<HTMLElement>(`.dsh-stage[data-stage="${stage}"]`)?.click();
  await waitFor(() => current(el) === String(stage));
}

async function show(el: HTMLElement, v: string): Promise<void> {
  tab(el, v)?.click();
  await waitFor(() => tab(el, v)?.getAttribute("aria-selected") === "true");
}

describe("the views table", () => {
  it("every view has a test row, a tab label and a diagram link label", () => {
    expect(Object.keys(SAMPLES).sort()).toEqual([...VIEW_NAMES].sort());
    for (const v of VIEW_NAMES) {
      expect(VIEWS[v].tab.trim(), `${v}: its tab label`).not.toBe("");
      expect(VIEWS[v].link.trim(), `${v}: its link label`).not.toBe("");
    }
    expect(new Set(VIEW_NAMES.map((v) => VIEWS[v].tab)).size, "two views with one tab label").toBe(VIEW_NAMES.length);
  });

  it("the tabs are the table's rows, in its order, with its labels", async () => {
    const el = replay();
    await waitFor(() => el.querySelectorAll(".dsh-tab").length > 0);
    const tabs = [...el.querySelectorAll<HTMLElement>(".dsh-tab")];
    expect(tabs.map((t) => t.getAttribute("data-view"))).toEqual(VIEW_NAMES);
    expect(tabs.map((t) => t.textContent)).toEqual(VIEW_NAMES.map((v) => VIEWS[v].tab));
  });

  for (const v of VIEW_NAMES) {
    it(`${v}: draws one .dsh-view-${v} root in the panel its tab labels, at every stage, and shows its sample`, async () => {
      const el = replay();
      for (const stage of [1, 2, 3, 4, 5, 6] as StageNo[]) {
        await atStage(el, stage);
        await show(el, v);
        const p = panel(el);
        expect(p.getAttribute("aria-labelledby"), `${v} at ${stage}: the panel is labelled by its tab`).toBe(tab(el, v)?.id);
        const roots = [...p.children].filter((c) => c.classList.contains(`dsh-view-${v}`));
        expect(roots.length, `${v} at ${stage}: one .dsh-view-${v} root`).toBe(1);
        expect(p.children.length, `${v} at ${stage}: nothing but its root`).toBe(1);
        expect(p.textContent?.trim(), `${v} at ${stage}: says something`).not.toBe("");
        if (stage === SAMPLES[v].stage) expect(p.textContent, `${v} at ${stage}: its test row`).toContain(SAMPLES[v].shows);
        // another view and back: it draws again (what it keeps of its own survives the switch)
        const other = VIEW_NAMES.find((o) => o !== v);
        if (other) { await show(el, other); await show(el, v); expect(panel(el).querySelector(`.dsh-view-${v}`)).not.toBeNull(); }
      }
    });
  }

  it("each stage's link in the diagram opens the view the table names, with its row's label", async () => {
    const el = replay();
    for (const [no, v] of Object.entries(STAGE_VIEW)) {
      const other = VIEW_NAMES.find((o) => o !== v) as string;
      await show(el, other);
      const link = el.querySelector<HTMLElement>(`.dsh-stage[data-stage="${no}"] .dsh-stage-link`);
      expect(link?.textContent, `stage ${no}'s link`).toBe(`→ ${VIEWS[v].link}`);
      link?.click();
      await waitFor(() => tab(el, v)?.getAttribute("aria-selected") === "true");
      expect(panel(el).querySelector(`.dsh-view-${v}`), `stage ${no} opens ${v}`).not.toBeNull();
    }
  });

  it("the presenter's Views toggle names every view", async () => {
    const el = replay();
    await waitFor(() => el.querySelector(".dsh-views-toggle") !== null);
    const title = el.querySelector(".dsh-views-toggle")?.getAttribute("title") ?? "";
    for (const v of VIEW_NAMES) expect(title).toContain(VIEWS[v].tab.toLowerCase());
  });
});

// @vitest-environment jsdom
// The exported page's pieces in the DOM: the StaticModel transport (no kernel), the standalone
// mount, the glossary popover, and the outcome line of tool results.
import { afterEach, describe, expect, it } from "vitest";
import { GLOSSARY } from "../src/glossary.gen";
import { toolOutcome } from "../src/model/outcome";
import { mountAll } from "../src/standalone";
import { StaticModel, type EmbeddedSession } from "../src/static";
import type { SessionHeader } from "../src/types";
import { waitFor } from "./fake-model";
import { eventsOf, readmeRun } from "./helpers";

function embedded(): EmbeddedSession {
  const items = readmeRun();
  const snap = items.find((i) => i.type === "snapshot") as { header: SessionHeader; sessionId: string };
  return { sessionId: snap.sessionId, header: snap.header, events: eventsOf(items), info: { sessionId: snap.sessionId, live: false } };
}

afterEach(() => { document.body.innerHTML = ""; });

describe("StaticModel: the transport of a page with no kernel", () => {
  it("answers follow with a snapshot, info from the header, everything else READ_ONLY", () => {
    const data = embedded();
    const m = new StaticModel(data, "loop");
    const [item] = m.answer({ type: "open", streamId: "st_1", endpoint: "session/follow", payload: { args: { sessionId: data.sessionId } } }) as { value: { type: string; events: unknown[]; cursor: number } }[];
    expect(item.value.type).toBe("snapshot");
    expect(item.value.events).toHaveLength(data.events.length);
    expect(item.value.cursor).toBe(data.events.length - 1);
    const [later] = m.answer({ type: "open", streamId: "st_2", endpoint: "session/follow", payload: { args: { sessionId: data.sessionId, cursor: 10 } } }) as { value: { events: { seq: number }[] } }[];
    expect(later.value.events[0].seq).toBe(11);
    const [info] = m.answer({ type: "client-request", rpcId: "r1", method: "session/info", payload: { args: { sessionId: data.sessionId } } }) as { result: { ok: boolean; value: unknown } }[];
    expect(info.result).toEqual({ ok: true, value: data.info });
    for (const method of ["session/prompt", "session/approve", "session/create", "session/cancel"]) {
      const [r] = m.answer({ type: "client-request", rpcId: "r2", method, payload: { args: { sessionId: data.sessionId } } }) as { result: { ok: boolean; error: { code: string } } }[];
      expect(r.result.ok).toBe(false);
      expect(r.result.error.code).toBe("READ_ONLY");
    }
    const [other] = m.answer({ type: "open", streamId: "st_3", endpoint: "session/follow", payload: { args: { sessionId: "s_other" } } }) as { type: string; error: { code: string } }[];
    expect([other.type, other.error.code]).toEqual(["error", "UNKNOWN_SESSION"]);
  });

  it("mounts the loop and the inspector of the embedded session, and the glossary opens", async () => {
    const data = embedded();
    document.body.innerHTML = `<div data-dsh-session="s1" data-kind="loop"></div><div data-dsh-session="s1" data-kind="inspector"></div>
      <script type="application/vnd.dsh-session+json" id="s1">${JSON.stringify(data).replace(/</g, "\\u003c")}</script>`;
    expect(mountAll()).toBe(2);
    expect(mountAll()).toBe(0); // a second copy of the bundle on the page mounts nothing twice
    await waitFor(() => document.querySelectorAll(".dsh-loop .dsh-stage").length === 6 && document.querySelectorAll(".dsh-inspector .dsh-row").length > 0);
    const sub = document.querySelector(".dsh-loop .dsh-sub")?.textContent ?? "";
    expect(sub).toContain(`${data.events.length} events`);
    expect(document.querySelector(".dsh-inspector .dsh-f-count")?.textContent).toBe(`${data.events.length} of ${data.events.length} events`);
    expect(document.querySelector(".dsh-loop .dsh-prompt")).toBeNull();

    const btn = document.querySelector<HTMLButtonElement>(".dsh-loop .dsh-glossary-btn");
    const panel = document.querySelector<HTMLElement>(".dsh-loop .dsh-glossary");
    expect(panel?.hidden).toBe(true);
    btn?.click();
    expect(panel?.hidden).toBe(false);
    expect(btn?.getAttribute("aria-expanded")).toBe("true");
    expect(panel?.querySelectorAll("dt").length).toBe(GLOSSARY.length);
    const search = panel?.querySelector<HTMLInputElement>(".dsh-glossary-search");
    let leaked = 0;
    document.addEventListener("keydown", () => { leaked += 1; });
    if (search) { search.value = "cursor"; search.dispatchEvent(new Event("input")); }
    expect([...(panel?.querySelectorAll("dt") ?? [])].map((d) => d.textContent)).toContain("cursor");
    expect(panel?.querySelectorAll("dt").length).toBeLessThan(GLOSSARY.length);
    search?.dispatchEvent(new KeyboardEvent("keydown", { key: "b", bubbles: true }));
    search?.dispatchEvent(new KeyboardEvent("keydown", { key: "Escape", bubbles: true }));
    expect(leaked).toBe(0); // keys typed in the glossary never reach the notebook's shortcuts
    expect(panel?.hidden).toBe(true);
  });
});

describe("toolOutcome", () => {
  it("leads with the exit code and the verdict line; ✓ only for exit 0", () => {
    const failing = toolOutcome("ok   add(2, 3) = 5\nFAIL subtract(7, 4)\n2 of 6 tests failed\n[exit code: 1]");
    expect(failing).toEqual({ ok: false, text: "exit 1 · 2 of 6 tests failed (3 lines)" });
    expect(toolOutcome("all 6 tests passed\n[exit code: 0]")).toEqual({ ok: true, text: "exit 0 · all 6 tests passed" });
    expect(toolOutcome("Error: no such file", true).ok).toBe(false);
  });
});

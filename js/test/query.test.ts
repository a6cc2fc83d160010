// @vitest-environment jsdom
// The inspector's query language (twin of observe/query.py) and the inspector's search: field
// terms, <mark>ed snippets, export of the listed rows, detail tabs that fit the event.
import { afterEach, describe, expect, it } from "vitest";
import widget from "../src/index";
import { EventFilter } from "../src/model/summary";
import { exportRows, isoTime, parseQuery, snippetOf } from "../src/model/query";
import { FakeModel, tick, waitFor } from "./fake-model";
import { eventsOf, readmeRun } from "./helpers";

let cleanup: (() => void) | null = null;
afterEach(() => { cleanup?.(); cleanup = null; document.body.innerHTML = ""; });

const all = { type: "", turn: "", tool: "" };

describe("query language", () => {
  it("parses field terms, phrases and words; a bad value is BAD_QUERY", () => {
    const p = parseQuery('type:tool/result name:Bash exit:!0 turn:3 seq:4..9 "Free Text" word* http://x');
    expect(p.ok && p.query).toEqual({ types: ["tool/result"], names: ["bash"], exits: [[false, 0]], turns: [3],
      seqs: [[4, 9]], texts: ["free text", "word", "http://x"] });
    for (const bad of ["turn:x", "exit:one", "seq:a..b"]) {
      const r = parseQuery(bad);
      expect(r.ok).toBe(false);
      expect(!r.ok && r.error).toMatch(/^BAD_QUERY: /);
    }
  });

  it("filters a real run by type, tool, turn, seq and text", () => {
    const events = eventsOf(readmeRun());
    const f = new EventFilter();
    expect(f.apply(events, { ...all, text: "type:tool/result name:read turn:1" })).toEqual([11]);
    expect(f.apply(events, { ...all, text: "type:tool" })).toEqual([10, 11]);
    expect(f.apply(events, { ...all, text: "name:read demo-math" })).toEqual([11]);
    expect(f.apply(events, { ...all, text: "turn:2" })).toEqual([]);
    expect(f.apply(events, { ...all, text: "type:request seq:9..20" })).toEqual([14]);
    expect(f.apply(events, { ...all, text: "exit:0" })).toEqual([]); // no result of the run has an exit code
    expect(f.apply(events, { ...all, text: "turn:x" })).toEqual([]);
    expect(f.error).toContain("BAD_QUERY");
  });

  it("cuts a snippet around the first hit and marks every hit; exports CSV and JSONL", () => {
    const s = snippetOf(`${"x ".repeat(60)}the Tests failed; tests again`, ["tests"]);
    expect(s.text.startsWith("…")).toBe(true);
    expect(s.marks.map(([a, b]) => s.text.slice(a, b))).toEqual(["Tests", "tests"]);
    const ev = { seq: 3, time: 9, type: "tool/result", meta: { exitCode: 1 } } as never;
    expect(exportRows([{ ev, turn: 1, tool: "bash", snippet: 'say "hi", ok' }], "csv"))
      .toBe('seq,time,turn,type,name,exit,snippet\n3,1970-01-01T00:00:00.009Z,1,tool/result,bash,1,"say ""hi"", ok"\n');
    // ISO 8601 UTC to the millisecond, as show --export csv (observe/query_view.py iso_time)
    expect(isoTime(1796618834322)).toBe("2026-12-07T04:47:14.322Z");
    expect(JSON.parse(exportRows([{ ev, turn: 1, tool: "bash", snippet: "" }], "jsonl"))).toEqual(ev);
  });
});

describe("inspector search", () => {
  function mount(): HTMLElement {
    const el = document.createElement("div");
    document.body.append(el);
    const model = new FakeModel({ kind: "inspector", session_id: "s_7", readonly: true, error: "", create_args: {} }, readmeRun());
    cleanup = widget.render({ model, el } as never);
    return el;
  }
  const search = async (el: HTMLElement, text: string, count: string) => {
    const box = el.querySelector(".dsh-f-text") as HTMLInputElement;
    box.value = text;
    box.dispatchEvent(new Event("input"));
    await waitFor(() => (el.querySelector(".dsh-f-count")?.textContent ?? "").startsWith(count));
  };

  it("marks hits in each row's snippet, exports the listed rows, offers the diff tab only on requests", async () => {
    const el = mount();
    await waitFor(() => el.querySelectorAll(".dsh-row").length > 0);
    expect(el.querySelector(".dsh-row mark")).toBeNull();
    await search(el, "name:read DEMO-math", "1 of");
    expect(el.querySelector(".dsh-f-count")?.textContent).toBe("1 of 18 events");
    const marks = [...el.querySelectorAll(".dsh-row .dsh-row-snip mark")].map((m) => m.textContent);
    expect(marks).toEqual(["demo-math"]);

    let saved: { name: string; href: string; rows: string } | undefined;
    const orig = HTMLAnchorElement.prototype.click;
    HTMLAnchorElement.prototype.click = function (this: HTMLAnchorElement) { saved = { name: this.download, href: this.href, rows: this.dataset.rows ?? "" }; };
    try {
      (el.querySelector(".dsh-f-export-csv") as HTMLElement).click();
    } finally { HTMLAnchorElement.prototype.click = orig; }
    expect(saved?.name).toBe("s_7-events.csv");
    expect(saved?.rows).toBe("1");
    if (saved?.href.startsWith("data:")) {
      const csv = decodeURIComponent(saved.href.slice(saved.href.indexOf(",") + 1));
      expect(csv.split("\n")[1]).toMatch(/^11,\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z,1,tool\/result,read,,/);
    }

    await search(el, "turn:x", "BAD_QUERY");
    expect(el.querySelector(".dsh-f-count")?.textContent).toContain("BAD_QUERY");
    expect(el.querySelectorAll(".dsh-row").length).toBe(0);

    await search(el, "", "18 of");
    (el.querySelector('.dsh-row[data-seq="14"]') as HTMLElement).click();
    await tick();
    expect([...el.querySelectorAll(".dsh-tab")].map((t) => t.getAttribute("data-detail"))).toEqual(["event", "messages", "diff"]);
    (el.querySelector('.dsh-tab[data-detail="diff"]') as HTMLElement).click();
    await tick();
    expect(el.querySelector(".dsh-diff")).not.toBeNull();
    (el.querySelector('.dsh-row[data-seq="11"]') as HTMLElement).click();
    await tick();
    expect([...el.querySelectorAll(".dsh-tab")].map((t) => t.getAttribute("data-detail"))).toEqual(["event", "messages"]);
    expect(el.querySelector(".dsh-diff")).toBeNull();
    expect(el.querySelector('.dsh-tab[data-detail="event"]')?.getAttribute("aria-selected")).toBe("true");
  });
});

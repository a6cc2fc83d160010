// node <bundle of this file> INPUT.json → the JS pages (js/src/data/local.ts) of
// `{"events": [...], "pricing": {...}, "queries": [...]}`: one JSON array, a page per query.
import { readFileSync } from "node:fs";
import { LocalPages } from "../../src/data/local";
import type { PageQuery } from "../../src/data/pages";
import { ClientSessionModel } from "../../src/fold";
import { Pricing } from "../../src/model/pricing";

const path = process.argv[2];
if (!path) {
  console.error("usage: pages-main INPUT.json");
  process.exit(2);
}
const input = JSON.parse(readFileSync(path, "utf8"));
const fold = new ClientSessionModel();
fold.apply({ type: "snapshot", sessionId: "s_pages", header: { type: "session", version: 1, id: "s_pages", cwd: "/ws", createdAt: 0 },
  cursor: input.events.length - 1, events: input.events, live: { attached: false, status: "idle", turn: null, step: null, assistant: null } } as never);
const pages = new LocalPages(fold, new Pricing(input.pricing));
process.stdout.write(JSON.stringify((input.queries as PageQuery[]).map((q) => pages.get(q))) + "\n");

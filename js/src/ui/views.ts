// The loop widget's views, one row each: the tab's label, the diagram's link to it and the view
// itself (ui/view.ts says what a view is given). The tabs, their order, the diagram's links, the
// presenter's "Views" toggle and the panel all read this table, so the compiler checks the rest:
// a view is this row, its renderer (ui/<name>-view.ts) and its row in js/test/views.test.ts
// (a Record over ViewName: a view without one does not compile).
import type { StageNo } from "../model/stages";
import { historyView } from "./history-view";
import { payloadView } from "./payload-view";
import { rolesView } from "./roles-view";
import type { ViewRow } from "./view";

export const VIEWS = {
  history: { tab: "Message history", link: "history", create: historyView },
  payloads: { tab: "Event payloads", link: "payload", create: payloadView },
  roles: { tab: "Responsibilities", link: "who", create: rolesView },
} satisfies Record<string, ViewRow>;

export type ViewName = keyof typeof VIEWS;

/** The views in the table's order: the order of the tabs. */
export const VIEW_NAMES = Object.keys(VIEWS) as ViewName[];

/** The view each stage's link in the diagram opens. */
export const STAGE_VIEW: Record<StageNo, ViewName> = { 1: "history", 2: "payloads", 3: "roles", 4: "payloads", 5: "history", 6: "payloads" };

/** "message history, event payloads, responsibilities": the views as a sentence names them. */
export const viewList = (): string => VIEW_NAMES.map((v) => VIEWS[v].tab.toLowerCase()).join(", ");

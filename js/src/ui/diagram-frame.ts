// The frame around the six-stage diagram: a horizontal scroller that keeps its position across
// re-renders, "← more" / "more →" cues with a fade when stages are out of view (narrow output
// areas), the current stage scrolled into view when it changes, the return arc that draws the
// stages as a loop (06 → back to 01), and the colour legend, always visible.
import { ROLES, type Role } from "../model/explain";
import { roving } from "./a11y";
import { h } from "./dom";
import { icon } from "./icons";

const ROLE_NOTE: Record<Role, string> = {
  model: "the LLM: decides, writes text and tool calls",
  agent: "the harness: runs the loop, builds requests",
  tools: "runs the tool, returns its output",
  session: "the log: commits every event",
};

export function renderLegend(): HTMLElement {
  return h("ul", { class: "dsh-legend", "aria-label": "colour legend: who is responsible" },
    ...ROLES.map((r) => h("li", { class: "dsh-legend-item", "data-role": r.role, title: ROLE_NOTE[r.role] },
      h("span", { class: `dsh-dot dsh-role-${r.role}`, "aria-hidden": "true" }),
      h("strong", { class: "dsh-legend-label" }, r.role === "agent" ? "Agent (harness)" : r.label),
      h("span", { class: "dsh-legend-note" }, ROLE_NOTE[r.role]))),
    // the fourth colour (issue 41): an agent outside Jupyter calling over MCP, outside the six stages
    h("li", { class: "dsh-legend-item", "data-role": "external", title: EXTERNAL_NOTE },
      h("span", { class: "dsh-dot dsh-role-external", "aria-hidden": "true" }),
      h("strong", { class: "dsh-legend-label" }, "External agent"),
      h("span", { class: "dsh-legend-note" }, EXTERNAL_NOTE)));
}

const EXTERNAL_NOTE = "an agent outside Jupyter (over MCP): its calls are in this session too";

/** The stage row with its return arc beneath: the sixth stage hands the next request to the
 *  model, which starts stage 01 of the next tool call. */
export function withReturnArc(row: HTMLElement, stage: number): HTMLElement {
  const arc = h("div", { class: `dsh-return ${stage === 6 ? "dsh-return-on" : ""}`, "data-state": stage === 6 ? "current" : "idle" },
    h("span", { class: "dsh-return-head", "aria-hidden": "true" }, icon("up")),
    h("span", { class: "dsh-return-label" }, "06 → 01: the next request goes to the model, and the loop starts again"));
  return h("div", { class: "dsh-loopdraw", role: "group", "aria-label": "the tool feedback loop: stages 01 to 06, then back to 01" }, row, arc);
}

/** How far the current stage is kept from the scroller's edges: the "more" fades are 76–116 px
 *  wide (widget.css), and a card under a fade is not in view. */
const CUE_CLEAR = 96;

export interface DiagramFrame { el: HTMLElement; body: HTMLElement; update(): void; dispose(): void }

export function createDiagramFrame(): DiagramFrame {
  const body = h("div", { class: "dsh-diagram-wrap dsh-diagram-scroll" });
  const more = h("button", { class: "dsh-more dsh-more-right", type: "button", tabindex: -1, title: "scroll to the later stages", hidden: true }, "more →");
  const less = h("button", { class: "dsh-more dsh-more-left", type: "button", tabindex: -1, title: "scroll to the earlier stages", hidden: true }, "← more");
  const el = h("div", { class: "dsh-diagram-frame" }, h("div", { class: "dsh-diagram-port" }, body, less, more), renderLegend());
  let lastStage: string | null = null;
  let lastWidth = 0;

  const update = () => {
    const overflow = body.scrollWidth > body.clientWidth + 1;
    more.hidden = !overflow || body.scrollLeft + body.clientWidth >= body.scrollWidth - 1;
    less.hidden = !overflow || body.scrollLeft <= 1;
    el.dataset.overflow = String(overflow);
    // the fades cover the whole stage row and its return arc, down to the scrollbar (0 px when overlay)
    more.style.bottom = less.style.bottom = `${Math.max(0, body.offsetHeight - body.clientHeight)}px`;
    const cur = body.querySelector<HTMLElement>('.dsh-stage[aria-current="step"]');
    const stage = cur?.dataset.stage ?? null;
    // a new stage, or a narrowed / widened pane: the current stage is brought clear of the fades
    if (cur && (stage !== lastStage || body.clientWidth !== lastWidth) && overflow) {
      const left = cur.offsetLeft; // the scroller is the stages' offsetParent (position: relative)
      const right = left + cur.offsetWidth;
      // clear of the "more" fades as wide as they are drawn (116 px in a medium pane, 84 px in a
      // narrow one: issue 23 — a fixed 96 px left stage 04 under the cue at 1024 px), plus a margin
      const fade = (b: HTMLElement) => (parseFloat(getComputedStyle(b).width) || CUE_CLEAR - 8) + 8;
      const cueL = Math.max(CUE_CLEAR, fade(less)), cueR = Math.max(CUE_CLEAR, fade(more));
      if (left < body.scrollLeft + cueL) body.scrollLeft = Math.max(0, left - cueL);
      else if (right > body.scrollLeft + body.clientWidth - cueR) body.scrollLeft = right - body.clientWidth + cueR;
    }
    lastStage = stage;
    lastWidth = body.clientWidth;
  };
  const page = (dir: 1 | -1) => { body.scrollBy?.({ left: dir * Math.max(120, body.clientWidth * 0.7), behavior: "smooth" }); };
  more.addEventListener("click", () => page(1));
  less.addEventListener("click", () => page(-1));
  body.addEventListener("scroll", update, { passive: true });
  const unRove = roving(body, ".dsh-stage", "both");
  const mo = typeof MutationObserver === "function" ? new MutationObserver(update) : null;
  mo?.observe(body, { childList: true });
  const ro = typeof ResizeObserver === "function" ? new ResizeObserver(update) : null;
  ro?.observe(body);
  return {
    el, body, update,
    dispose() { mo?.disconnect(); ro?.disconnect(); unRove(); body.removeEventListener("scroll", update); },
  };
}

// The entry of an exported page (no anywidget, no kernel): mounts the loop widget and the
// inspector of the session embedded in <script type="application/vnd.dsh-session+json">, each
// into the elements that name it (data-dsh-session="<script id>" data-kind="loop|inspector"),
// through the same anywidget render({model, el}) the notebook uses, on a StaticModel.
import widget from "./index";
import { StaticModel, type EmbeddedSession } from "./static";

export function mountAll(doc: Document = document): number {
  let mounted = 0;
  for (const el of Array.from(doc.querySelectorAll<HTMLElement>("[data-dsh-session]"))) {
    if (el.dataset.dshMounted) continue; // the bundle can be on a page twice (one per output)
    const source = doc.getElementById(el.dataset.dshSession ?? "");
    if (!source) continue;
    el.dataset.dshMounted = "1";
    const data = JSON.parse(source.textContent ?? "{}") as EmbeddedSession;
    const kind = el.dataset.kind === "inspector" ? "inspector" : "loop";
    widget.render({ model: new StaticModel(data, kind), el });
    mounted += 1;
  }
  return mounted;
}

if (typeof document !== "undefined") {
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", () => mountAll());
  else mountAll();
}

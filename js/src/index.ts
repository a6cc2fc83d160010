// anywidget entry: one bundle, three widgets (chosen by the model's `kind`).
import { renderCompare } from "./compare";
import { renderInspector } from "./inspector";
import { renderLoop } from "./loop";
import type { WidgetModel } from "./transport";
import { h } from "./ui/dom";

function render({ model, el }: { model: WidgetModel; el: HTMLElement }): () => void {
  try {
    const kind = String(model.get("kind") ?? "loop");
    if (kind === "compare") return renderCompare(model, el);
    return kind === "inspector" ? renderInspector(model, el) : renderLoop(model, el);
  } catch (e) {
    // never a blank widget: say what broke
    el.append(h("div", { class: "dsh-root" }, h("div", { class: "dsh-error", role: "alert" }, `dsh widget failed to render: ${(e as Error).message}`)));
    return () => { el.textContent = ""; };
  }
}

export default { render };

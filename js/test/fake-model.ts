// A widget model whose "kernel side" answers like the Python bridge + Host would (the boundary
// the widgets talk to), for DOM tests of the real widget code.
import widget from "../src/index";
import { LocalPages } from "../src/data/local";
import type { PageQuery } from "../src/data/pages";
import { ClientSessionModel } from "../src/fold";
import { Pricing, type PricingTable } from "../src/model/pricing";
import type { FollowItem } from "../src/types";

type Handler = (...args: unknown[]) => void;

export class FakeModel {
  handlers = new Map<string, Set<Handler>>();
  sent: Record<string, unknown>[] = [];
  /** The "kernel's" pages (session/page) of the whole log the items hold: the JS twin of
   *  dsh_notebook/observe/pages*.py (tests/client/test_pages_parity.py checks they agree). */
  private kernel: LocalPages | null = null;
  constructor(public state: Record<string, unknown>, public items: FollowItem[] = []) {}

  private pages(): LocalPages {
    if (!this.kernel) {
      const whole = new ClientSessionModel();
      whole.applyAll(this.items);
      this.kernel = new LocalPages(whole, new Pricing((this.state.pricing as PricingTable | undefined) ?? undefined));
    }
    return this.kernel;
  }

  /** The follow's items as the host sends them to a client holding `window` events. */
  private windowed(window: number | undefined): FollowItem[] {
    const first = this.items[0] as { type?: string; events?: { seq: number }[] } | undefined;
    if (!window || first?.type !== "snapshot" || (first.events ?? []).length <= window) return this.items;
    const events = (first.events ?? []).slice(-window);
    return [{ ...first, events, start: events[0].seq - 1 } as unknown as FollowItem, ...this.items.slice(1)];
  }
  get(name: string) { return this.state[name]; }
  on(ev: string, cb: Handler) { if (!this.handlers.has(ev)) this.handlers.set(ev, new Set()); this.handlers.get(ev)?.add(cb); }
  off(ev?: string | null, cb?: Handler | null) { if (ev && cb) this.handlers.get(ev)?.delete(cb); }
  emit(content: unknown) { for (const h of this.handlers.get("msg:custom") ?? []) h(content); }
  send(content: unknown) {
    const c = content as { kind: string; cid: string; envelope?: Record<string, unknown> };
    this.sent.push(c as Record<string, unknown>);
    const env = c.envelope;
    if (!env) return;
    const reply = (items: unknown[]) => queueMicrotask(() => this.emit({ kind: "batch", cid: c.cid, items }));
    const args = ((env.payload as { args?: Record<string, unknown> } | undefined)?.args ?? {}) as { window?: number; query?: PageQuery };
    if (env.type === "open") {
      // items travel as JSON text, as the host encodes them
      reply(this.windowed(args.window).map((v) => JSON.stringify({ type: "item", streamId: env.streamId, value: v })));
    } else if (env.type === "client-request") {
      const value = env.method === "session/prompt" ? { accepted: true } : env.method === "session/create" ? { sessionId: "s_new" }
        : env.method === "session/page" && args.query ? { page: JSON.parse(JSON.stringify(this.pages().get(args.query))) } : { ok: 1 };
      reply([{ type: "server-response", rpcId: env.rpcId, result: { ok: true, value } }]);
    }
  }
}

export const tick = () => new Promise((r) => setTimeout(r, 40));
export async function waitFor(pred: () => boolean, ms = 4000): Promise<void> {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error("condition not met");
    await tick();
  }
}

/** Mount a widget into the document; returns its element and its cleanup. */
export function mount(model: FakeModel): { el: HTMLElement; cleanup: () => void } {
  const el = document.createElement("div");
  document.body.append(el);
  const dispose = widget.render({ model, el } as never) as unknown as () => void;
  return { el, cleanup: () => { dispose?.(); el.remove(); } };
}

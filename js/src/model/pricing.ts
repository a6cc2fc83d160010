// Prices and context windows in the browser: the same lookup as dsh_notebook/models/catalog.py
// (`Catalog.lookup` / `price` / `context_window`) over the table the Python widget sends in its
// `pricing` trait (built-in figures with the prices file laid over them, and DSH_CONTEXT_WINDOW).
// An unknown model has no price (cost null, never a guess); `script:*` runs locally and is free.

/** USD per million tokens. */
export interface Price { input: number; cachedInput: number; output: number }
export interface ModelEntry { price: Price | null; contextWindow: number | null }
/** What the widget's `pricing` trait holds (dsh_notebook/notebook/pricing.py). */
export interface PricingTable {
  asOf: string;
  /** DSH_CONTEXT_WINDOW (beats the table, loses to a request's own contextWindow). */
  contextWindow: number | null;
  /** "provider:model" → figures, in the catalog's order. */
  models: Record<string, ModelEntry>;
}

export const EMPTY_PRICING: PricingTable = { asOf: "", contextWindow: null, models: {} };
const SNAPSHOT = /-(\d{4}-\d{2}-\d{2}|\d{4})$/; // gpt-4o-2024-08-06, gpt-4-0613
const FREE: Price = { input: 0, cachedInput: 0, output: 0 };
/** The offline teaching model's nominal context window (SCRIPT_CONTEXT_WINDOW in models/catalog.py). */
export const SCRIPT_CONTEXT_WINDOW = 128_000;

export class Pricing {
  private readonly seen = new Map<string, ModelEntry | null>();
  constructor(readonly table: PricingTable = EMPTY_PRICING) {}

  lookup(provider: string, model: string): ModelEntry | null {
    const key = `${provider}\u0000${model}`;
    if (this.seen.has(key)) return this.seen.get(key) ?? null;
    const found = this.find(provider.toLowerCase(), model);
    this.seen.set(key, found);
    return found;
  }

  private find(provider: string, model: string): ModelEntry | null {
    const models = this.table.models ?? {};
    for (const name of [model, model.replace(SNAPSHOT, "")]) {
      const info = models[`${provider}:${name}`];
      if (info) return info;
      if (provider === "openai") { // a bare name on an OpenAI-compatible endpoint
        for (const [k, other] of Object.entries(models)) if (k.slice(k.indexOf(":") + 1) === name) return other;
      }
    }
    return null;
  }

  price(provider: string, model: string): Price | null {
    if (provider.toLowerCase() === "script") return FREE;
    return this.lookup(provider, model)?.price ?? null;
  }

  /** `override` (a request's recorded window, or the caller's), DSH_CONTEXT_WINDOW, the table. */
  contextWindow(provider: string, model: string, override: number | null): number | null {
    if (override) return override;
    if (this.table.contextWindow) return this.table.contextWindow;
    if (provider.toLowerCase() === "script") return SCRIPT_CONTEXT_WINDOW;
    return this.lookup(provider, model)?.contextWindow ?? null;
  }
}

/** What `usage` cost at `p` (usage is disjoint: inputTokens excludes the cached input). */
export function costOf(p: Price, usage: { inputTokens?: number; outputTokens?: number; cacheReadTokens?: number | null }): number {
  const cached = usage.cacheReadTokens || 0;
  const total = (usage.inputTokens ?? 0) * p.input + cached * p.cachedInput + (usage.outputTokens ?? 0) * p.output;
  return total / 1_000_000;
}

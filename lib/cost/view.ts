// Usage as users see it (docs/cost.md): tokens by kind and by model, their dollars at the price
// table, and the texts that show them. A usage mam could not read is `known: false` with why,
// never a zero. Pure.
import { noTokens, type Tokens } from "../agents/usage.ts";
import { type Price, priceOf, type PriceTable, usdOf } from "./prices.ts";
import { type ByModel, tokensOf, totalOf } from "./tokens.ts";

export type TokenCount = Tokens & { total: number };

export interface UsageView {
  /** false: mam has no count for this (a kind whose records it cannot read, nothing metered yet) */
  known: boolean;
  /** why it is unknown, or what part of it is (a session of a kind mam cannot read) */
  why?: string;
  tokens: TokenCount | null;
  /** null: unknown, or a model used has no price (unpriced names it) */
  usd: number | null;
  models: Record<string, TokenCount & { usd: number | null }>;
  /** the models used that have no price */
  unpriced?: string[];
}

const counted = (t: Tokens): TokenCount => ({ ...t, total: totalOf(t) });

export const unknownUsage = (why: string): UsageView => ({ known: false, why, tokens: null, usd: null, models: {} });

/** the view of a count by model at the given prices */
export function usageView(m: ByModel, prices: PriceTable): UsageView {
  const models: UsageView["models"] = {};
  const unpriced: string[] = [];
  let usd: number | null = 0;
  for (const [name, t] of Object.entries(m).sort(([a], [b]) => a.localeCompare(b))) {
    const p: Price | undefined = priceOf(prices, name);
    const u = p ? usdOf(p, t) : null;
    if (u === null) {
      if (totalOf(t) > 0) unpriced.push(name);
    } else if (usd !== null) usd += u;
    models[name] = { ...counted(t), usd: u };
  }
  if (unpriced.length) usd = null;
  return { known: true, tokens: counted(Object.keys(m).length ? tokensOf(m) : noTokens()), usd, models, ...(unpriced.length ? { unpriced } : {}) };
}

const num = (n: number) => n.toLocaleString("en-US");

/** dollars: 2 decimals from a cent up, 4 below */
export const dollars = (usd: number): string => `$${usd >= 0.01 || usd === 0 ? usd.toFixed(2) : usd.toFixed(4)}`;

/** tokens in a few characters: 950, 12.3k, 4.1M */
export function compact(n: number): string {
  if (n < 1000) return String(n);
  if (n < 1e6) return `${(n / 1e3).toFixed(n < 1e4 ? 1 : 0)}k`;
  return `${(n / 1e6).toFixed(n < 1e7 ? 1 : 0)}M`;
}

/** a short cost for a table cell: $0.12, or 12.3k tok when there is no price, or ? */
export function shortCost(v: UsageView | null | undefined): string {
  if (!v || !v.known || !v.tokens) return "?";
  return v.usd !== null ? dollars(v.usd) : `${compact(v.tokens.total)} tok`;
}

/** one line: `12,345 tokens (input 10,000 · output 2,000 · cache write 300 · cache read 45), $0.0123` */
export function usageText(v: UsageView): string {
  if (!v.known || !v.tokens) return `unknown${v.why ? ` (${v.why})` : ""}`;
  const t = v.tokens;
  const parts = `input ${num(t.input)} · output ${num(t.output)} · cache write ${num(t.cache_write)} · cache read ${num(t.cache_read)}`;
  const money = v.usd !== null ? dollars(v.usd) : `$ unknown (no price for ${v.unpriced!.join(", ")})`;
  return `${num(t.total)} tokens (${parts}), ${money}${v.why ? `; ${v.why}` : ""}`;
}

// Budgets (docs/cost.md): a job's (`job submit --budget-usd`, `--max-tokens`) and a session's daily
// cap (`create --daily-budget-usd`, `--daily-max-tokens`), checked against what the meter counted.
// Going over means more than the limit. A limit in dollars on tokens of a model that has no price
// cannot be checked: that counts as over too (a budget that does not hold is worse than a job
// that stops; the detail says which price is missing). Pure.
import { dayOf, type Ledger } from "./ledger.ts";
import type { PriceTable } from "./prices.ts";
import { dollars, type UsageView, usageView } from "./view.ts";

export interface Limits {
  usd: number | null;
  tokens: number | null;
}

/** what a budget_exceeded event's data holds: integers and strings (dollars as decimal text) */
export type BudgetData = { [k: string]: string | number };

/** what a budget that cannot be checked (a model without a price) tells the user to do */
export const PRICE_HINT = "add its price to ~/.config/mam/prices.json";

export const hasLimits = (l: Limits) => l.usd !== null || l.tokens !== null;

/** over: the detail of the budget_exceeded event (after "<what> ") and its data */
export type Check = { over: false } | { over: true; detail: string; data: BudgetData };

/** dollars in an event's data: a string (event payloads hold integers only) */
const usdData = (n: number) => n.toFixed(6).replace(/\.?0+$/, "");

/** is `v` over `lim`? `what`: "its budget", "its daily cap" */
export function checkLimits(v: UsageView, lim: Limits, what: string, hint: string): Check {
  if (!v.known || !v.tokens) return { over: false };
  const data: BudgetData = { tokens: v.tokens.total };
  if (v.usd !== null) data.usd = usdData(v.usd);
  if (lim.tokens !== null) data.max_tokens = lim.tokens;
  if (lim.usd !== null) data.budget_usd = usdData(lim.usd);
  if (lim.tokens !== null && v.tokens.total > lim.tokens) {
    return { over: true, detail: `went over ${what}: ${v.tokens.total.toLocaleString("en-US")} tokens of ${lim.tokens.toLocaleString("en-US")}`, data };
  }
  if (lim.usd !== null) {
    if (v.usd === null && v.tokens.total > 0) {
      return { over: true, detail: `cannot check ${what} of ${dollars(lim.usd)}: no price for ${v.unpriced!.join(", ")} (${hint})`, data: { ...data, unpriced: v.unpriced!.join(",") } };
    }
    if (v.usd !== null && v.usd > lim.usd) return { over: true, detail: `went over ${what}: ${dollars(v.usd)} of ${dollars(lim.usd)}`, data };
  }
  return { over: false };
}

/** a session's daily cap, as `create` stored it in its row (daily_budget_usd, daily_max_tokens) */
export function dailyLimits(row: Record<string, unknown>): Limits {
  const usd = row.daily_budget_usd;
  const tokens = row.daily_max_tokens;
  return {
    usd: typeof usd === "number" && Number.isFinite(usd) && usd > 0 ? usd : null,
    tokens: typeof tokens === "number" && Number.isSafeInteger(tokens) && tokens > 0 ? tokens : null,
  };
}

/** is a session over its daily cap `lim` on the UTC day of `now`, by what the ledger counted? */
export function dailyCapCheck(ledger: Ledger | "none" | "broken", name: string, lim: Limits, prices: PriceTable, now: number): Check {
  if (!hasLimits(lim) || ledger === "none" || ledger === "broken") return { over: false };
  return checkLimits(usageView(ledger.sessions[name]?.days[dayOf(now)] ?? {}, prices), lim, "its daily cap", PRICE_HINT);
}

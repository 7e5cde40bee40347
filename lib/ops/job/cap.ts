// A session's daily cap (`create --daily-budget-usd`, `--daily-max-tokens`; docs/cost.md#budgets)
// as a new job meets it: past it on the current UTC day, the session takes no new job until
// 00:00 UTC. `job submit` to it is refused; the queue does not count it as free (a job waiting
// for it waits, a pool's job goes to another agent of the role).
import { dailyCapCheck, dailyLimits, hasLimits } from "../../cost/budget.ts";
import { dayOf, readLedger } from "../../cost/ledger.ts";
import { loadPrices } from "../../cost/prices.ts";
import type { Row } from "../../registry/types.ts";
import type { Deps } from "../deps.ts";

/** why a row is past its daily cap today (`<name> went over its daily cap: … (UTC day D)`), else undefined */
export function pastDailyCap(deps: Pick<Deps, "ws" | "env" | "clock">, row: Row): string | undefined {
  const lim = dailyLimits(row);
  if (!hasLimits(lim)) return undefined;
  const now = deps.clock.ms();
  const c = dailyCapCheck(readLedger(deps.ws), row.name, lim, loadPrices(deps.env), now);
  return c.over ? `${c.detail} (UTC day ${dayOf(now)})` : undefined;
}

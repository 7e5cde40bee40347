// mam status --jobs (docs/jobs.md#the-board): every job of the workspace on the board, read from
// the records and journals; what a job that runs after others waits for, from the queue.
import { boardOf, type Card, cardOf, type Column } from "../../jobs/board.ts";
import { effectiveStatus } from "../../jobs/store.ts";
import { hostName } from "../../team/host.ts";
import type { Deps } from "../deps.ts";
import { heldFor, readQueue } from "./queue.ts";

export interface Board {
  workspace: string;
  board: Record<Column, Card[]>;
}

export function readBoard(deps: Deps): Board {
  return { workspace: deps.ws, board: boardOf(readCards(deps, deps.jobs.ids())) };
}

/** the cards of these jobs (a job with no record, or a broken one, has none: job status reports it) */
export function readCards(deps: Deps, ids: readonly string[]): Card[] {
  let host: string | undefined;
  try {
    host = hostName(deps.env);
  } catch {}
  const q = readQueue(deps.jobs, host);
  const held = heldFor(q);
  const cards: Card[] = [];
  for (const id of ids) {
    try {
      const rec = deps.jobs.read(id);
      if (!rec) continue;
      const evs = deps.jobs.journal(id);
      cards.push(cardOf(rec, evs, effectiveStatus(rec, evs), held.get(id)));
    } catch {}
  }
  return cards;
}

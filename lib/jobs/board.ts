// The jobs as a board (mam status --jobs; docs/jobs.md#the-board): each job in one column by where
// it stands, with who has it and since when. Pure: the caller reads the records and journals.
import type { JobEvent } from "./event.ts";
import { busySession } from "./loop.ts";
import type { JobRecord } from "./record-file.ts";
import { BOARD_COLUMNS as COLUMNS, type BoardColumn as Column, type JobStatus } from "./statuses.ts";

export type { Column };

export interface Card {
  job_id: string;
  column: Column;
  /** who has it now: its agent, the reviewer, the merge queue, or the line it waits in */
  who: string;
  /** since when it stands there (the event that put it there; its creation when none) */
  since: string;
  /** the task in a few words */
  task: string;
  /** what it waits for, what it waits at, how it ended */
  note: string;
}

const MERGE_OPEN = new Set(["merge_queued", "merge_checking", "merge_conflict", "check_failed"]);

/**
 * the card of one job: `held` is what it waits for when it runs after jobs that have not ended
 * (lib/jobs/after.ts heldWords), undefined otherwise
 */
export function cardOf(rec: JobRecord, events: readonly JobEvent[], status: JobStatus, held: string | undefined): Card {
  const last = events.at(-1);
  const since = (pick?: (e: JobEvent) => boolean) => (pick ? events.findLast(pick) : last)?.timestamp ?? rec.created_at;
  const task = (rec.brief_file !== undefined ? `brief ${rec.brief_file}` : (rec.prompt ?? "")).replace(/\s+/g, " ").trim().slice(0, 60);
  const base = { job_id: rec.job_id, task };
  const line = rec.to_role !== undefined && status === "queued" ? `a free ${rec.to_role}` : rec.agent_session;
  switch (status) {
    case "queued":
      return held !== undefined
        ? { ...base, column: "waiting", who: line, since: since((e) => e.event === "queued"), note: held }
        : { ...base, column: "queued", who: line, since: since((e) => e.event === "queued"), note: last?.detail ?? "" };
    case "pending":
    case "running": {
      const who = busySession(rec, events);
      const review = rec.type === "loop" && who === rec.reviewer_session;
      return { ...base, column: review ? "in_review" : "working", who, since: since(), note: rec.type === "loop" ? `round ${rec.iteration} of ${rec.max_iterations}` : (last ? `${last.event}: ${last.detail}` : "") };
    }
    case "completed": {
      const m = events.findLast((e) => MERGE_OPEN.has(e.event) || e.event === "merged");
      if (m && m.event !== "merged") return { ...base, column: "merging", who: "merge queue", since: m.timestamp, note: `${m.event}: ${m.detail}` };
      return { ...base, column: "done", who: rec.agent_session, since: since((e) => e.event === "completed" || e.event === "merged"), note: m ? `merged: ${m.detail}` : "" };
    }
    default:
      return { ...base, column: "failed", who: rec.agent_session, since: since((e) => e.event === status), note: `${status}${last ? `: ${last.detail}` : ""}` };
  }
}

/** the cards in their columns, each column's newest first */
export function boardOf(cards: readonly Card[]): Record<Column, Card[]> {
  const out = Object.fromEntries(COLUMNS.map((c) => [c, [] as Card[]])) as Record<Column, Card[]>;
  for (const c of cards) out[c.column].push(c);
  for (const c of COLUMNS) out[c].sort((a, b) => (a.since < b.since ? 1 : a.since > b.since ? -1 : a.job_id < b.job_id ? -1 : 1));
  return out;
}

/** the board as text: the columns that hold jobs, done and failed the newest `ended` of them */
export function boardText(board: Record<Column, Card[]>, ended = 5): string {
  const out: string[] = [];
  for (const c of COLUMNS) {
    const cards = board[c];
    if (cards.length === 0) continue;
    const shown = c === "done" || c === "failed" ? cards.slice(0, ended) : cards;
    out.push(`${c.replace("_", " ").toUpperCase()} (${cards.length}${shown.length < cards.length ? `, the newest ${shown.length}` : ""})`);
    for (const k of shown) out.push(`  ${k.job_id}  ${k.who}  since ${k.since}  ${k.task}${k.note ? `  — ${k.note.replace(/\s+/g, " ").slice(0, 100)}` : ""}`);
  }
  return out.length ? out.join("\n") : "no jobs";
}

// Notices: what mam has to say besides a result (a dialog it did not type into, a broker that is
// down, a daemon it did not start). Code below the front doors returns them as data; the front
// door prints each once, as `WARNING: …`, `NOTE: …` or `mam: …` (noticeLine).
import { cliSpelling, spellFields } from "./fields.ts";
import { visible } from "./sanitize.ts";
export type Level = "info" | "note" | "warning" | "error";

/** something a use case has to say besides its result (a dialog it did not type into, a broker that is down, …) */
export interface Notice {
  level: Level;
  text: string;
}

export const warning = (text: string): Notice => ({ level: "warning", text });
export const note = (text: string): Notice => ({ level: "note", text });
export const info = (text: string): Notice => ({ level: "info", text });
/** a failure that is also a result (a wait that timed out: its jobs are still shown) */
export const failure = (text: string): Notice => ({ level: "error", text });

const PREFIX: Record<Level, string> = { info: "mam: ", note: "NOTE: ", warning: "WARNING: ", error: "ERROR: " };

/**
 * the one printed form of a notice: `WARNING: …`, `NOTE: …`, `ERROR: …`, `mam: …` (one line, safe
 * for a terminal); a {{field}} it names reads as the command line's flag unless a front door spelled it
 */
export const noticeLine = (n: Notice): string => `${PREFIX[n.level]}${visible(spellFields(n.text, cliSpelling))}`;

export const isNotice = (v: unknown): v is Notice =>
  typeof v === "object" && v !== null && typeof (v as Notice).text === "string" && (v as Notice).level in PREFIX;

/** the notices a result carries (its `warnings` field), in order */
export function noticesOf(out: unknown): Notice[] {
  const w = typeof out === "object" && out !== null ? (out as { warnings?: unknown }).warnings : undefined;
  return Array.isArray(w) ? w.filter(isNotice) : [];
}

/**
 * a result with its notices as printed lines: what --json and the MCP results carry (a `mam: …`
 * line about the setup, such as a daemon that is off, is said on stderr only)
 */
export function withNoticeLines<T>(out: T): T {
  if (typeof out !== "object" || out === null || !Array.isArray((out as { warnings?: unknown }).warnings)) return out;
  return { ...out, warnings: noticesOf(out).filter((n) => n.level !== "info").map(noticeLine) };
}

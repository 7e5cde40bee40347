// Helpers the kinds' conversation stores share: reading the agents' own files defensively (a
// missing, unreadable or half-written file is "nothing there", never an error) and the common
// shape of a store whose conversations of a workspace can simply be listed.
import { closeSync, openSync, readFileSync, readSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Env } from "../../sys/paths.ts";
import type { Conversation, ConversationStore } from "./kind.ts";

export function mtime(p: string): number {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return -1;
  }
}

export function list(dir: string): string[] {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
}

/** the first `max` bytes of a file as text (conversation files can be large) */
function head(p: string, max = 64 * 1024): string {
  let fd: number | undefined;
  try {
    fd = openSync(p, "r");
    const buf = Buffer.alloc(max);
    const n = readSync(fd, buf, 0, max, 0);
    return buf.subarray(0, n).toString("utf8");
  } catch {
    return "";
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export function firstJsonLines(p: string, n = 5): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of head(p).split("\n").slice(0, n)) {
    try {
      const v = JSON.parse(line);
      if (v && typeof v === "object") out.push(v as Record<string, unknown>);
    } catch {}
  }
  return out;
}

export function readJson(p: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(readFileSync(p, "utf8"));
    return v && typeof v === "object" ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

export function newestOf(cands: Conversation[]): Conversation | undefined {
  return cands.sort((a, b) => b.mtimeMs - a.mtimeMs)[0];
}

export const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** a store whose conversations of a workspace can simply be listed */
export function listedStore(conversations: (ws: string, env: Env) => Conversation[]): ConversationStore {
  return {
    find: (id, ws, env = process.env) => conversations(ws, env).find((c) => c.id === id),
    newest: (ws, env = process.env) => newestOf(conversations(ws, env)),
  };
}

/** every <root>/<dir>/<file>.json, parsed */
export function* jsonTwoDeep(root: string): Generator<{ dir: string; path: string; obj: Record<string, unknown> }> {
  for (const d of list(root)) {
    for (const f of list(join(root, d))) {
      if (!f.endsWith(".json")) continue;
      const path = join(root, d, f);
      const obj = readJson(path);
      if (obj) yield { dir: d, path, obj };
    }
  }
}

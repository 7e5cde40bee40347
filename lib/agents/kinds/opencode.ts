// opencode (verified with 1.18.33): everything mam knows about this kind. herdr starts it; it picks
// its own conversation id (ses_…), which mam finds in opencode's SQLite database: the newest
// top-level session whose directory is the workspace. It resumes with --session <id>.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type Env, homeDir } from "../../sys/paths.ts";
import type { AgentKind, Conversation } from "./kind.ts";
import { listedStore } from "./store-util.ts";

// ---- store: $XDG_DATA_HOME or ~/.local/share, opencode/opencode.db, table `session` ---------------
// (id ses_…, directory, parent_id set for subagents' sessions, time_updated in ms). The conversation
// lives in rows of that database, not in files of its own: `files` is empty, so
// --purge-conversation leaves it to `opencode session delete` (docs/sessions.md).

export function opencodeDb(env: Env): string {
  return join(env.XDG_DATA_HOME || join(homeDir(env), ".local", "share"), "opencode", "opencode.db");
}

function opencodeConversations(ws: string, env: Env): Conversation[] {
  const path = opencodeDb(env);
  if (!existsSync(path)) return [];
  const { Database } = require("bun:sqlite") as typeof import("bun:sqlite");
  let db: import("bun:sqlite").Database | undefined;
  try {
    db = new Database(path, { readonly: true });
    const rows = db.query("SELECT id, time_updated FROM session WHERE directory = ? AND parent_id IS NULL").all(ws) as { id: unknown; time_updated: unknown }[];
    return rows.filter((r) => typeof r.id === "string" && r.id !== "").map((r) => ({ id: r.id as string, mtimeMs: Number(r.time_updated) || 0, files: [] }));
  } catch {
    // busy, locked, or another schema: nothing mam can read
    return [];
  } finally {
    db?.close();
  }
}

export const opencode: AgentKind = {
  kind: "opencode",
  exe: "opencode",
  command: null,
  herdrKind: "opencode",
  freshArgs: () => [],
  assignsId: false,
  resumeArgs: (id) => ["--session", id],
  resumeNote: null,
  startDialog: null,
  resumeLoaded: null,
  exitText: "/exit",
  reads: "prose",
  store: listedStore(opencodeConversations),
  screenRules: "opencode.screen.json",
  // no hooks: mam sees its state on its screen (and, on herdr, in herdr's agent status)
  hooks: null,
  // none needed: its default permissions (`"*": "allow"`) run mam's commands unasked; it has no
  // start argument that allows one command (permissions live in its config, OPENCODE_PERMISSION)
  grants: null,
  // `mam create --mcp` and `mam mcp install` know claude's and codex's config only
  mcp: null,
  // mam does not read its records yet: its usage shows as unknown (docs/cost.md)
  usage: null,
  limits: null,
  continueAtReset: null,
};

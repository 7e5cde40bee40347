// hermes: everything mam knows about this kind. herdr starts it; it picks its own conversation id,
// kept in a SQLite database whose schema is not public (see the store below).
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type Env, homeDir } from "../../sys/paths.ts";
import type { AgentKind, Conversation, ConversationStore } from "./kind.ts";

// ---- store: ~/.hermes/state.db (SQLite). Its schema is not public: a session row is recognised
//      by an id column holding the id and a cwd/workspace column holding the workspace. ----------

function hermesQuery(env: Env, fn: (db: import("bun:sqlite").Database) => Conversation | undefined): Conversation | undefined {
  const path = join(homeDir(env), ".hermes", "state.db");
  if (!existsSync(path)) return undefined;
  const { Database } = require("bun:sqlite") as typeof import("bun:sqlite");
  let db: import("bun:sqlite").Database | undefined;
  try {
    db = new Database(path, { readonly: true });
    return fn(db);
  } catch {
    return undefined;
  } finally {
    db?.close();
  }
}

function hermesTables(db: import("bun:sqlite").Database): { table: string; id: string; ws?: string; time?: string }[] {
  const out = [];
  for (const { name } of db.query("SELECT name FROM sqlite_master WHERE type='table'").all() as { name: string }[]) {
    if (!/^[A-Za-z0-9_]+$/.test(name)) continue;
    const cols = (db.query(`PRAGMA table_info(${name})`).all() as { name: string }[]).map((c) => c.name);
    const id = cols.find((c) => c === "session_id") ?? cols.find((c) => c === "id");
    const ws = cols.find((c) => ["cwd", "workspace", "workspace_root", "project_dir"].includes(c));
    const time = cols.find((c) => ["updated_at", "last_active", "created_at"].includes(c));
    if (id && ws) out.push({ table: name, id, ws, time });
  }
  return out;
}

const store: ConversationStore = {
  find(id, ws, env = process.env) {
    return hermesQuery(env, (db) => {
      for (const t of hermesTables(db)) {
        const hit = db.query(`SELECT 1 FROM ${t.table} WHERE ${t.id} = ? AND ${t.ws} = ? LIMIT 1`).get(id, ws);
        if (hit) return { id, mtimeMs: 0, files: [] };
      }
      return undefined;
    });
  },
  newest(ws, env = process.env) {
    return hermesQuery(env, (db) => {
      for (const t of hermesTables(db)) {
        if (!t.time) continue;
        const row = db.query(`SELECT ${t.id} AS id FROM ${t.table} WHERE ${t.ws} = ? ORDER BY ${t.time} DESC LIMIT 1`).get(ws) as { id?: unknown } | null;
        if (row && row.id != null) return { id: String(row.id), mtimeMs: 0, files: [] };
      }
      return undefined;
    });
  },
};

export const hermes: AgentKind = {
  kind: "hermes",
  exe: "hermes",
  command: null,
  herdrKind: "hermes",
  freshArgs: () => [],
  assignsId: false,
  resumeArgs: (id) => ["--resume", id],
  resumeNote: null,
  startDialog: null,
  resumeLoaded: null,
  exitText: "/exit",
  reads: "prose",
  store,
  screenRules: "hermes.screen.json",
  // no hooks: mam sees its state on its screen (and, on herdr, in herdr's agent status)
  hooks: null,
  // none: not verified which of its options would allow one command; the user allows mam's
  // commands in its own settings (docs/sessions.md, "Permissions mam grants")
  grants: null,
  // `mam create --mcp` and `mam mcp install` know claude's and codex's config only
  mcp: null,
  // mam does not read its records yet: its usage shows as unknown (docs/cost.md)
  usage: null,
  limits: null,
  continueAtReset: null,
};

// Where each agent kind keeps its conversations on disk, and how to find this workspace's
// (never another workspace's) conversations (SPEC §5.1, §5.3–5.4; the original's P0-C rule).
import { createHash } from "node:crypto";
import { closeSync, existsSync, openSync, readFileSync, readSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { type Env, homeDir } from "../sys/paths.ts";

export interface Conversation {
  id: string;
  mtimeMs: number;
  /** the files that belong to this conversation (what --purge-conversation deletes) */
  files: string[];
}

export interface ConversationStore {
  /** conversation `id` of workspace `ws`, if it is on disk */
  find(id: string, ws: string, env?: Env): Conversation | undefined;
  /** the newest conversation of workspace `ws` */
  newest(ws: string, env?: Env): Conversation | undefined;
}

function mtime(p: string): number {
  try {
    return statSync(p).mtimeMs;
  } catch {
    return -1;
  }
}

function list(dir: string): string[] {
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

function firstJsonLines(p: string, n = 5): Record<string, unknown>[] {
  const out: Record<string, unknown>[] = [];
  for (const line of head(p).split("\n").slice(0, n)) {
    try {
      const v = JSON.parse(line);
      if (v && typeof v === "object") out.push(v as Record<string, unknown>);
    } catch {}
  }
  return out;
}

function readJson(p: string): Record<string, unknown> | undefined {
  try {
    const v = JSON.parse(readFileSync(p, "utf8"));
    return v && typeof v === "object" ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

function newestOf(cands: Conversation[]): Conversation | undefined {
  return cands.sort((a, b) => b.mtimeMs - a.mtimeMs)[0];
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

/** a store whose conversations of a workspace can simply be listed */
function listedStore(conversations: (ws: string, env: Env) => Conversation[]): ConversationStore {
  return {
    find: (id, ws, env = process.env) => conversations(ws, env).find((c) => c.id === id),
    newest: (ws, env = process.env) => newestOf(conversations(ws, env)),
  };
}

/** every <root>/<dir>/<file>.json, parsed */
function* jsonTwoDeep(root: string): Generator<{ dir: string; path: string; obj: Record<string, unknown> }> {
  for (const d of list(root)) {
    for (const f of list(join(root, d))) {
      if (!f.endsWith(".json")) continue;
      const path = join(root, d, f);
      const obj = readJson(path);
      if (obj) yield { dir: d, path, obj };
    }
  }
}

// ---- claude: $CLAUDE_CONFIG_DIR or ~/.claude, projects/<key>/<id>.jsonl -----------------------

/** Claude Code's project folder name: every character outside [A-Za-z0-9] becomes "-" */
export function claudeProjectKey(cwd: string): string {
  return cwd.replace(/[^A-Za-z0-9]/g, "-");
}

export function claudeProjectDir(ws: string, env: Env = process.env): string {
  const base = env.CLAUDE_CONFIG_DIR || join(homeDir(env), ".claude");
  return join(base, "projects", claudeProjectKey(ws));
}

function claudeConversation(dir: string, file: string): Conversation | undefined {
  const p = join(dir, file);
  const stem = file.replace(/\.jsonl$/, "");
  const id = firstJsonLines(p).map((o) => str(o.sessionId)).find(Boolean) ?? stem;
  const files = [p];
  if (existsSync(join(dir, stem))) files.push(join(dir, stem)); // per-session sidecar folder
  return { id, mtimeMs: mtime(p), files };
}

const claude: ConversationStore = {
  find(id, ws, env = process.env) {
    const dir = claudeProjectDir(ws, env);
    if (existsSync(join(dir, `${id}.jsonl`))) return claudeConversation(dir, `${id}.jsonl`);
    return list(dir)
      .filter((f) => f.endsWith(".jsonl"))
      .map((f) => claudeConversation(dir, f))
      .find((c) => c?.id === id);
  },
  newest(ws, env = process.env) {
    const dir = claudeProjectDir(ws, env);
    return newestOf(
      list(dir)
        .filter((f) => f.endsWith(".jsonl"))
        .map((f) => claudeConversation(dir, f)!)
        .filter(Boolean),
    );
  },
};

// ---- codex: $CODEX_HOME or ~/.codex, sessions/**/rollout-*.jsonl whose session_meta has our cwd --

function codexFiles(env: Env): string[] {
  const root = join(env.CODEX_HOME || join(homeDir(env), ".codex"), "sessions");
  const out: string[] = [];
  const walk = (d: string, depth: number) => {
    for (const e of list(d)) {
      const p = join(d, e);
      if (e.startsWith("rollout-") && e.endsWith(".jsonl")) out.push(p);
      else if (depth < 4 && !e.includes(".")) walk(p, depth + 1);
    }
  };
  walk(root, 0);
  return out;
}

function codexMeta(p: string): { id?: string; cwd?: string } {
  for (const o of firstJsonLines(p)) {
    const payload = (o.payload && typeof o.payload === "object" ? o.payload : o) as Record<string, unknown>;
    if (o.type === "session_meta" || str(payload.cwd)) return { id: str(payload.id), cwd: str(payload.cwd) };
  }
  return {};
}

function codexConversations(ws: string, env: Env): Conversation[] {
  const out: Conversation[] = [];
  for (const p of codexFiles(env)) {
    const m = codexMeta(p);
    if (m.id && m.cwd === ws) out.push({ id: m.id, mtimeMs: mtime(p), files: [p] });
  }
  return out;
}

const codex = listedStore(codexConversations);

// ---- gemini: ~/.gemini/tmp/<sha256(cwd)>/chats/session-*.json with sessionId -------------------

function geminiConversations(ws: string, env: Env): Conversation[] {
  const dir = join(homeDir(env), ".gemini", "tmp", createHash("sha256").update(ws).digest("hex"), "chats");
  const out: Conversation[] = [];
  for (const f of list(dir)) {
    if (!f.endsWith(".json")) continue;
    const p = join(dir, f);
    const id = str(readJson(p)?.sessionId);
    if (id) out.push({ id, mtimeMs: mtime(p), files: [p] });
  }
  return out;
}

const gemini = listedStore(geminiConversations);

// ---- agy (antigravity-cli): cache/last_conversations.json maps workspace → conversation;
//      conversations/<id>.db must exist -------------------------------------------------------

function agyDir(env: Env): string {
  return join(homeDir(env), ".gemini", "antigravity-cli");
}

function agyConversation(id: string, env: Env): Conversation | undefined {
  const db = join(agyDir(env), "conversations", `${id}.db`);
  return existsSync(db) ? { id, mtimeMs: mtime(db), files: [db] } : undefined;
}

function agyIdFor(ws: string, env: Env): string | undefined {
  const map = readJson(join(agyDir(env), "cache", "last_conversations.json"));
  if (!map) return undefined;
  const v = map[ws];
  if (typeof v === "string") return v;
  if (v && typeof v === "object") {
    const o = v as Record<string, unknown>;
    return str(o.conversation_id) ?? str(o.conversationId) ?? str(o.id);
  }
  return undefined;
}

const agy: ConversationStore = {
  find(id, ws, env = process.env) {
    // the cache is the only link between a conversation and a workspace
    return agyIdFor(ws, env) === id ? agyConversation(id, env) : undefined;
  },
  newest(ws, env = process.env) {
    const id = agyIdFor(ws, env);
    return id ? agyConversation(id, env) : undefined;
  },
};

// ---- cline: ~/.cline/data/sessions/<id>/<id>.json with cwd or workspace_root ------------------

function clineConversations(ws: string, env: Env): Conversation[] {
  const root = join(homeDir(env), ".cline", "data", "sessions");
  const out: Conversation[] = [];
  for (const { dir, path, obj } of jsonTwoDeep(root)) {
    if (obj.cwd === ws || obj.workspace_root === ws) out.push({ id: str(obj.session_id) ?? dir, mtimeMs: mtime(path), files: [join(root, dir)] });
  }
  return out;
}

const cline = listedStore(clineConversations);

// ---- opencode: $XDG_DATA_HOME or ~/.local/share, opencode/storage/session/*/ses_*.json --------

function opencodeConversations(ws: string, env: Env): Conversation[] {
  const root = join(env.XDG_DATA_HOME || join(homeDir(env), ".local", "share"), "opencode", "storage", "session");
  const out: Conversation[] = [];
  for (const { path, obj } of jsonTwoDeep(root)) {
    const id = str(obj.id);
    if (id && obj.directory === ws) out.push({ id, mtimeMs: mtime(path), files: [path] });
  }
  return out;
}

const opencode = listedStore(opencodeConversations);

// ---- hermes: ~/.hermes/state.db (SQLite). Its schema is not public: a session row is recognised
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

const hermes: ConversationStore = {
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

export const STORES = { claude, codex, gemini, agy, cline, opencode, hermes } satisfies Record<string, ConversationStore>;

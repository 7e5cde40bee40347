// agy (antigravity-cli): everything mam knows about this kind. herdr starts it; it picks its own
// conversation id, and its cache of last conversations per workspace is the only link between a
// conversation and a workspace.
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type Env, homeDir } from "../../sys/paths.ts";
import type { AgentKind, Conversation, ConversationStore } from "./kind.ts";
import { mtime, readJson, str } from "./store-util.ts";

// ---- store: cache/last_conversations.json maps workspace → conversation; conversations/<id>.db
//      must exist --------------------------------------------------------------------------------

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

const store: ConversationStore = {
  find(id, ws, env = process.env) {
    // the cache is the only link between a conversation and a workspace
    return agyIdFor(ws, env) === id ? agyConversation(id, env) : undefined;
  },
  newest(ws, env = process.env) {
    const id = agyIdFor(ws, env);
    return id ? agyConversation(id, env) : undefined;
  },
};

export const agy: AgentKind = {
  kind: "agy",
  exe: "agy",
  command: null,
  herdrKind: "agy",
  freshArgs: () => [],
  assignsId: false,
  resumeArgs: (id) => ["--conversation", id],
  resumeNote: null,
  startDialog: null,
  resumeLoaded: null,
  exitText: "Exit",
  reads: "prose",
  store,
  screenRules: "agy.screen.json",
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

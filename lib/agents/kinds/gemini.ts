// gemini (Gemini CLI): everything mam knows about this kind. herdr starts it; it picks its own
// conversation id, which mam finds in its chats under a folder named by the workspace's hash.
import { sha256Hex } from "../../sys/digest.ts";
import { join } from "node:path";
import { type Env, homeDir } from "../../sys/paths.ts";
import type { AgentKind, Conversation } from "./kind.ts";
import { list, listedStore, mtime, readJson, str } from "./store-util.ts";

// ---- store: ~/.gemini/tmp/<sha256(cwd)>/chats/session-*.json with sessionId ---------------------

function geminiConversations(ws: string, env: Env): Conversation[] {
  const dir = join(homeDir(env), ".gemini", "tmp", sha256Hex(ws), "chats");
  const out: Conversation[] = [];
  for (const f of list(dir)) {
    if (!f.endsWith(".json")) continue;
    const p = join(dir, f);
    const id = str(readJson(p)?.sessionId);
    if (id) out.push({ id, mtimeMs: mtime(p), files: [p] });
  }
  return out;
}

export const gemini: AgentKind = {
  kind: "gemini",
  exe: "gemini",
  command: null,
  herdrKind: "gemini",
  freshArgs: () => [],
  assignsId: false,
  resumeArgs: (id) => ["--resume", id],
  exitText: "/quit",
  reads: "prose",
  store: listedStore(geminiConversations),
  screenRules: "gemini.screen.json",
  // no hooks: mam sees its state on its screen (and, on herdr, in herdr's agent status)
  hooks: null,
  // none: not verified which of its options would allow one command; the user allows mam's
  // commands in its own settings (docs/sessions.md, "Permissions mam grants")
  grants: null,
  // `mam create --mcp` and `mam mcp install` know claude's and codex's config only
  mcp: null,
  // mam does not read its records yet: its usage shows as unknown (docs/cost.md)
  usage: null,
};

// opencode: everything mam knows about this kind. herdr starts it; it picks its own conversation
// id, which mam finds in the session files whose directory is the workspace.
import { join } from "node:path";
import { type Env, homeDir } from "../../sys/paths.ts";
import type { AgentKind, Conversation } from "./kind.ts";
import { jsonTwoDeep, listedStore, mtime, str } from "./store-util.ts";

// ---- store: $XDG_DATA_HOME or ~/.local/share, opencode/storage/session/*/ses_*.json -------------

function opencodeConversations(ws: string, env: Env): Conversation[] {
  const root = join(env.XDG_DATA_HOME || join(homeDir(env), ".local", "share"), "opencode", "storage", "session");
  const out: Conversation[] = [];
  for (const { path, obj } of jsonTwoDeep(root)) {
    const id = str(obj.id);
    if (id && obj.directory === ws) out.push({ id, mtimeMs: mtime(path), files: [path] });
  }
  return out;
}

export const opencode: AgentKind = {
  kind: "opencode",
  exe: "opencode",
  command: null,
  herdrKind: "opencode",
  freshArgs: () => [],
  assignsId: false,
  resumeArgs: (id) => ["--session", id],
  exitText: "/exit",
  reads: "prose",
  store: listedStore(opencodeConversations),
  screenRules: "opencode.screen.json",
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

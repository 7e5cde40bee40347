// cline (Cline CLI): everything mam knows about this kind. herdr starts it; it picks its own
// conversation id, which mam finds in the session files that name the workspace.
import { join } from "node:path";
import { type Env, homeDir } from "../../sys/paths.ts";
import type { AgentKind, Conversation } from "./kind.ts";
import { jsonTwoDeep, listedStore, mtime, str } from "./store-util.ts";

// ---- store: ~/.cline/data/sessions/<id>/<id>.json with cwd or workspace_root --------------------

function clineConversations(ws: string, env: Env): Conversation[] {
  const root = join(homeDir(env), ".cline", "data", "sessions");
  const out: Conversation[] = [];
  for (const { dir, path, obj } of jsonTwoDeep(root)) {
    if (obj.cwd === ws || obj.workspace_root === ws) out.push({ id: str(obj.session_id) ?? dir, mtimeMs: mtime(path), files: [join(root, dir)] });
  }
  return out;
}

export const cline: AgentKind = {
  kind: "cline",
  exe: "cline",
  command: null,
  herdrKind: "cline",
  freshArgs: () => [],
  assignsId: false,
  resumeArgs: (id) => ["--resume", id],
  exitText: "/exit",
  reads: "prose",
  store: listedStore(clineConversations),
  screenRules: "cline.screen.json",
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

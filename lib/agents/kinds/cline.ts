// cline (Cline CLI, verified with 3.0.65): everything mam knows about this kind. herdr starts it;
// it picks its own conversation id, which mam finds in the session files that name the workspace,
// and resumes it with --id <id>.
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
  // `cline --help` (3.0.65): `--id <session-id>` resumes a session
  resumeArgs: (id) => ["--id", id],
  resumeNote: null,
  startDialog: null,
  resumeLoaded: null,
  exitText: "/exit",
  reads: "prose",
  store: listedStore(clineConversations),
  screenRules: "cline.screen.json",
  // no hooks: mam sees its state on its screen (and, on herdr, in herdr's agent status)
  hooks: null,
  // none needed: cline 3.0.65 auto-approves every tool unless started with --auto-approve false
  // (then it asks for each; it has no argument that allows one command)
  grants: null,
  // `mam create --mcp` and `mam mcp install` know claude's and codex's config only
  mcp: null,
  // mam does not read its records yet: its usage shows as unknown (docs/cost.md)
  usage: null,
  limits: null,
  continueAtReset: null,
};

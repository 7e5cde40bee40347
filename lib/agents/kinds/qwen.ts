// qwen (Qwen Code, verified with 0.24.4): everything mam knows about this kind. herdr does not
// know it: mam types its command into a pane (on tmux it is the session's command). mam assigns
// the conversation id at start (--session-id, a UUID) and resumes it (--resume); conversations are
// JSONL files per project folder; mam grants its reporting commands with --allowed-tools prefix
// rules of its shell tool (each part of `a && b` is checked on its own).
import { join } from "node:path";
import { type Env, homeDir } from "../../sys/paths.ts";
import { type AgentKind, type Conversation, GRANTED_COMMANDS } from "./kind.ts";
import { firstJsonLines, list, listedStore, mtime, str } from "./store-util.ts";

// ---- store: $QWEN_HOME or ~/.qwen, projects/<cwd, every non-alphanumeric as ->/chats/<id>.jsonl --

export function qwenChatsDir(ws: string, env: Env): string {
  return join(env.QWEN_HOME || join(homeDir(env), ".qwen"), "projects", ws.replace(/[^A-Za-z0-9]/g, "-"), "chats");
}

function qwenConversations(ws: string, env: Env): Conversation[] {
  const dir = qwenChatsDir(ws, env);
  const out: Conversation[] = [];
  for (const f of list(dir)) {
    if (!f.endsWith(".jsonl")) continue;
    const p = join(dir, f);
    const stem = f.slice(0, -".jsonl".length);
    const head = firstJsonLines(p, 1)[0];
    // the file is named by its session id; its records carry the cwd (a folder whose key collides is not ours)
    if (str(head?.cwd) !== undefined && head?.cwd !== ws) continue;
    const id = str(head?.sessionId) ?? stem;
    const files = [p, ...list(dir).filter((x) => x === `${stem}.runtime.json`).map((x) => join(dir, x))];
    out.push({ id, mtimeMs: mtime(p), files });
  }
  return out;
}

export const qwen: AgentKind = {
  kind: "qwen",
  exe: "qwen",
  command: null,
  // herdr 0.8 has no qwen kind
  herdrKind: null,
  freshArgs: (id) => (id ? ["--session-id", id] : []),
  assignsId: true,
  resumeArgs: (id) => ["--resume", id],
  resumeNote: null,
  startDialog: null,
  resumeLoaded: null,
  exitText: "/quit",
  reads: "prose",
  store: listedStore(qwenConversations),
  screenRules: "qwen.screen.json",
  // no hooks: mam sees its state on its screen
  hooks: null,
  // one `--allowed-tools=RULE` each (the `=` form: the option takes several values)
  grants: (mam) => GRANTED_COMMANDS.map((c) => `--allowed-tools=run_shell_command(${mam} ${c})`),
  // `mam create --mcp` and `mam mcp install` know claude's and codex's config only
  mcp: null,
  // mam does not read its records yet: its usage shows as unknown (docs/cost.md)
  usage: null,
};

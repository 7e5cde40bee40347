// mam hooks install|uninstall|status claude|codex [--global]: the agent's hook settings that make
// it report to mam (lib/agents/hooks-config.ts). Project scope by default (the workspace's
// .claude/settings.local.json, .codex/hooks.json); --global: the user's own settings.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { checkSettings, hookCommand, oursIn, withOurs, withoutOurs } from "../agents/hooks-config.ts";
import { HOOK_KINDS } from "../agents/kinds/index.ts";
import { atomicWriteFile } from "../sys/atomic.ts";
import { EXIT, MamError, usageError } from "../sys/errors.ts";
import { out, outJson } from "../sys/io.ts";
import { homeDir, resolveWorkspace } from "../sys/paths.ts";
import { selfCommand } from "../sys/self.ts";
import { bool, defineCommand, jsonArg, type ParsedArgs, str, workspaceArg } from "./command.ts";

const common = {
  agent: { type: "positional", description: "the agent kind: claude or codex", required: true, valueHint: "AGENT" },
  global: { type: "boolean", description: "the user's own settings (claude: $CLAUDE_CONFIG_DIR or ~/.claude/settings.json; codex: $CODEX_HOME or ~/.codex/hooks.json) instead of the workspace's" },
  ...workspaceArg,
} as const;

interface Target {
  kind: string;
  path: string;
  scope: "project" | "global";
}

function target(args: ParsedArgs): Target {
  const kind = str(args, "agent") ?? "";
  if (!Object.hasOwn(HOOK_KINDS, kind)) throw usageError(`no hooks for agent '${kind}'`, `give one of: ${Object.keys(HOOK_KINDS).join(", ")}`);
  const hk = HOOK_KINDS[kind]!;
  const ws = resolveWorkspace(str(args, "workspace"));
  if (bool(args, "global")) return { kind, path: hk.globalFile(process.env, homeDir()), scope: "global" };
  return { kind, path: join(ws, hk.projectFile), scope: "project" };
}

/** the settings file as a JSON object ({} when missing); a broken file is an error, never overwritten */
function readSettings(path: string): Record<string, unknown> {
  if (!existsSync(path)) return {};
  const text = readFileSync(path, "utf8");
  if (text.trim() === "") return {};
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    throw new MamError(`${path} is not valid JSON (${(e as Error).message})`, EXIT.FAIL, "fix it first; mam changes nothing in it");
  }
  try {
    return checkSettings(doc, path);
  } catch (e) {
    throw new MamError((e as Error).message, EXIT.FAIL, "fix it first; mam changes nothing in it");
  }
}

function write(path: string, doc: Record<string, unknown>): void {
  mkdirSync(dirname(path), { recursive: true });
  atomicWriteFile(path, `${JSON.stringify(doc, null, 2)}\n`);
}

const install = defineCommand({
  meta: {
    name: "install",
    description: "add mam's hooks to the agent's settings (the user's own hooks are kept; running it again changes nothing)",
    examples: [
      "mam hooks install claude            # <workspace>/.claude/settings.local.json",
      "mam hooks install codex --global     # ~/.codex/hooks.json",
      "mam hooks install claude --json     # {agent, scope, path, changed, events, note}",
    ],
  },
  args: { ...common, ...jsonArg },
  run({ args }) {
    const t = target(args);
    const before = readSettings(t.path);
    const after = withOurs(before, t.kind, hookCommand(selfCommand(), t.kind));
    const same = JSON.stringify(before) === JSON.stringify(after);
    if (!same) write(t.path, after);
    const note = HOOK_KINDS[t.kind]!.note;
    if (bool(args, "json")) return void outJson({ agent: t.kind, scope: t.scope, path: t.path, changed: !same, events: HOOK_KINDS[t.kind]!.events, note: note ?? null });
    out(`${same ? "already installed" : "installed"}: ${t.kind} hooks (${HOOK_KINDS[t.kind]!.events.join(", ")}) in ${t.path}`);
    if (note) out(`note: ${note}`);
  },
});

const uninstall = defineCommand({
  meta: {
    name: "uninstall",
    description: "remove mam's hooks from the agent's settings (only mam's; the user's own hooks stay)",
    examples: ["mam hooks uninstall claude", "mam hooks uninstall claude --json   # {agent, scope, path, removed}"],
  },
  args: { ...common, ...jsonArg },
  run({ args }) {
    const t = target(args);
    const said = (removed: boolean, text: string) => (bool(args, "json") ? outJson({ agent: t.kind, scope: t.scope, path: t.path, removed }) : out(text));
    if (!existsSync(t.path)) return said(false, `not installed: ${t.path} does not exist`);
    const before = readSettings(t.path);
    const after = withoutOurs(before, t.kind);
    if (JSON.stringify(before) === JSON.stringify(after)) return said(false, `not installed: no mam hooks in ${t.path}`);
    write(t.path, after);
    said(true, `removed: ${t.kind} hooks from ${t.path}`);
  },
});

const status = defineCommand({
  meta: { name: "status", description: "are mam's hooks installed for the agent (exit 3 when not)", examples: ["mam hooks status claude --json"] },
  args: { ...common, ...jsonArg },
  run({ args }) {
    const t = target(args);
    const found = existsSync(t.path) ? oursIn(readSettings(t.path), t.kind) : { events: [], commands: [] };
    const want = HOOK_KINDS[t.kind]!.events;
    const missing = want.filter((e) => !found.events.includes(e));
    const state = found.events.length === 0 ? "not-installed" : missing.length ? "partial" : "installed";
    if (bool(args, "json")) outJson({ agent: t.kind, scope: t.scope, path: t.path, state, events: found.events, missing, commands: found.commands });
    else {
      out(`${t.kind} hooks (${t.scope}): ${state} in ${t.path}`);
      if (found.events.length) out(`events: ${found.events.join(", ")}${missing.length ? `; missing: ${missing.join(", ")} (run mam hooks install ${t.kind})` : ""}`);
      for (const c of found.commands) out(`command: ${c}`);
    }
    return state === "not-installed" ? 3 : 0;
  },
});

export default defineCommand({
  meta: {
    name: "hooks",
    description: "agent hooks: let claude and codex report their state and conversation id to mam (mam agent-report)",
    examples: ["mam hooks install claude", "mam hooks status claude", "mam hooks uninstall claude"],
  },
  subCommands: { install, uninstall, status },
});

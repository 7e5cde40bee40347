// mam create | stop | resume | status (SPEC §5): parse → call → render.
import { kindNames } from "../agents/kinds/index.ts";
import { usageError } from "../sys/errors.ts";
import { err, out, outJson, useColor } from "../sys/io.ts";
import { resolveWorkspace } from "../sys/paths.ts";
import { bool, defineCommand, jsonArg, str, workspaceArg } from "./command.ts";
import { worktreeArgs, worktreeOption } from "./worktree.ts";

const startServerArg = {
  "start-server": { type: "boolean" as const, description: "start the herdr server (headless, detached) when it is not running" },
};

export const create = defineCommand({
  meta: {
    name: "create",
    description: "start an agent in its own pane (herdr) or session (tmux) and register it in .mam/agent-sessions.yaml",
    passthrough: true,
    examples: [
      "mam create --agent claude --role worker",
      "mam create --agent codex --role reviewer --session api-review --herdr-session mam --start-server",
      "mam create --agent gemini --mux tmux --role worker",
      'mam create --agent claude --role worker --submit-job "Fix the failing test in api/"',
      "mam create --agent claude --role worker --session feat-x --worktree        # its own git worktree on branch feat-x",
      "mam create --agent codex --role worker --worktree fix/login --base main",
      "mam create --agent claude --role worker -- --model opus     # after --: the agent's own arguments",
      "mam create --agent claude --role lead --mcp                 # with mam's MCP tools (see mam mcp)",
      "mam create --agent claude --role worker --no-grant          # claude asks before each mam command too",
    ],
  },
  args: {
    agent: { type: "string", required: true, description: `agent kind: ${kindNames().join(", ")}`, valueHint: "KIND" },
    ...workspaceArg,
    role: { type: "string", default: "creator", description: "the session's role (free text, immutable once set)", valueHint: "ROLE" },
    session: { type: "string", description: "session name (default <workspace slug>-<role>-<agent>)", valueHint: "NAME" },
    "herdr-session": { type: "string", description: "herdr server to create the pane on (default: the one you run in, else default)", valueHint: "SERVER" },
    mux: { type: "string", description: "herdr or tmux (default: MAM_MUX, else herdr when installed, else tmux)", valueHint: "herdr|tmux" },
    "tmux-server": { type: "string", description: "private tmux server (tmux -L NAME; default mam)", valueHint: "NAME" },
    ...startServerArg,
    "no-onboard": { type: "boolean", description: "do not type the onboarding message into the new agent" },
    "submit-job": { type: "string", description: "submit this job to the new session right away", valueHint: "TEXT" },
    ...worktreeArgs,
    mcp: { type: "boolean", description: "give the agent mam's MCP tools (claude: --mcp-config; codex: -c mcp_servers.mam…)" },
    "no-grant": { type: "boolean", description: "do not pre-approve mam's own commands in the agent (claude: --allowedTools for `mam job event`, `mam job status`, `mam status`); resume keeps this" },
    ...jsonArg,
  },
  async run({ args, rest }) {
    const ws = resolveWorkspace(str(args, "workspace"));
    const worktree = worktreeOption(args);
    const { createAndFollowUp } = await import("../ops/session/create.ts");
    const c = await createAndFollowUp({
      ws,
      agent: str(args, "agent")!,
      role: str(args, "role")!,
      name: str(args, "session"),
      choice: { herdrSession: str(args, "herdr-session"), mux: str(args, "mux"), tmuxServer: str(args, "tmux-server") },
      startServer: bool(args, "start-server"),
      onboard: !bool(args, "no-onboard"),
      agentArgs: rest,
      env: process.env,
      submitJob: str(args, "submit-job"),
      worktree,
      mcp: bool(args, "mcp"),
      grant: !bool(args, "no-grant"),
    });
    for (const w of c.warnings) err(w);
    if (bool(args, "json")) {
      outJson({ ...c, mux: c.backend });
      return;
    }
    const { createdText } = await import("../ops/session/render.ts");
    out(createdText(c));
  },
});

export const stop = defineCommand({
  meta: {
    name: "stop",
    description: "stop an agent session: graceful (resumable), --hard, or --soft (archive, leave the pane)",
    examples: [
      "mam stop api-worker-claude",
      'mam stop api-worker-claude --reason "done for today"',
      "mam stop api-worker-claude --hard",
      "mam stop api-worker-claude --soft",
      "mam stop api-worker-claude --hard --purge-conversation --yes",
      "mam stop feat-x --remove-worktree            # refused (exit 4) when it has uncommitted or unmerged work",
      "mam stop feat-x --remove-worktree --force",
    ],
  },
  args: {
    name: { type: "positional", description: "session name", valueHint: "NAME" },
    ...workspaceArg,
    hard: { type: "boolean", description: "close the pane at once (status terminated)" },
    soft: { type: "boolean", description: "leave the pane running, archive the row (status archived); a later stop (graceful or --hard) of that row closes the pane" },
    "purge-conversation": { type: "boolean", description: "with --hard: delete this session's own conversation files in this workspace" },
    yes: { type: "boolean", description: "confirm --purge-conversation" },
    reason: { type: "string", default: "requested", description: "why (stored as stop_reason)", valueHint: "TEXT" },
    "remove-worktree": { type: "boolean", description: "also remove the session's git worktree (its branch stays); refused with uncommitted or unmerged work" },
    force: { type: "boolean", description: "with --remove-worktree: remove it even with uncommitted or unmerged work" },
    ...jsonArg,
  },
  async run({ args }) {
    const name = str(args, "name")!;
    if (bool(args, "hard") && bool(args, "soft")) throw usageError("--hard and --soft contradict each other");
    if (bool(args, "purge-conversation") && !bool(args, "hard")) throw usageError("--purge-conversation goes with --hard");
    if (bool(args, "purge-conversation") && !bool(args, "yes")) throw usageError("--purge-conversation deletes conversation files; add --yes to confirm");
    if (bool(args, "force") && !bool(args, "remove-worktree")) throw usageError("--force goes with --remove-worktree");
    const ws = resolveWorkspace(str(args, "workspace"));
    const { stopSession } = await import("../ops/session/stop.ts");
    const r = await stopSession({
      ws,
      name,
      mode: bool(args, "hard") ? "hard" : bool(args, "soft") ? "soft" : "graceful",
      purge: bool(args, "purge-conversation"),
      reason: str(args, "reason")!,
      env: process.env,
      removeWorktree: bool(args, "remove-worktree"),
      force: bool(args, "force"),
    });
    if (bool(args, "json")) return outJson(r);
    const { stoppedText } = await import("../ops/session/render.ts");
    out(stoppedText(r));
  },
});

export const resume = defineCommand({
  meta: {
    name: "resume",
    description: "bring a stopped session back with its own conversation (else this workspace's newest)",
    examples: ["mam resume api-worker-claude", "mam resume api-worker-claude --fresh"],
  },
  args: {
    name: { type: "positional", description: "session name", valueHint: "NAME" },
    ...workspaceArg,
    fresh: { type: "boolean", description: "start a fresh conversation when none is found" },
    ...startServerArg,
    ...jsonArg,
  },
  async run({ args }) {
    const name = str(args, "name")!;
    const ws = resolveWorkspace(str(args, "workspace"));
    const { resumeSession } = await import("../ops/session/resume.ts");
    const r = await resumeSession({ ws, name, fresh: bool(args, "fresh"), startServer: bool(args, "start-server"), env: process.env });
    for (const w of r.warnings) err(w);
    if (bool(args, "json")) return outJson(r);
    const { resumedText } = await import("../ops/session/render.ts");
    out(resumedText(r));
  },
});

export const status = defineCommand({
  meta: {
    name: "status",
    alias: "ls",
    description: "every agent session of the workspace: registry status, live state, job, drift (read-only)",
    examples: ["mam status", "mam ls --json", "mam status --watch 5"],
  },
  args: {
    ...workspaceArg,
    ...jsonArg,
    watch: { type: "string", optionalValue: "2", description: "redraw every SECS seconds (default 2) until Ctrl-C", valueHint: "SECS" },
  },
  async run({ args }) {
    const ws = resolveWorkspace(str(args, "workspace"));
    const watch = str(args, "watch");
    const json = bool(args, "json");
    if (watch !== undefined && (!/^\d+(\.\d+)?$/.test(watch) || Number(watch) <= 0)) throw usageError(`--watch takes a number of seconds > 0 (got '${watch}')`);
    if (watch !== undefined && json) throw usageError("--watch and --json do not go together");
    const { sessionStatus } = await import("../ops/session/status-run.ts");
    if (watch === undefined) {
      const doc = await sessionStatus(ws, process.env, json);
      if (json) return outJson(doc.doc);
      return out(doc.text(useColor()));
    }
    const { watchStatus } = await import("../ops/session/status-run.ts");
    return watchStatus(ws, process.env, Number(watch) * 1000);
  },
});

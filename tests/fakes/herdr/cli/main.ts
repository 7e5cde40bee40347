// The fake herdr CLI (herdr.md §2): resolves the server (--session > HERDR_SOCKET_PATH >
// HERDR_SESSION > default), pings it, sends one request, and prints by herdr's rules: the whole
// response line on stdout (exit 0), the whole error line on stderr (exit 1), plain-text usage
// errors (exit 2); silent commands print nothing; reads print the raw text.
import type { Json } from "../common/client.ts";
import { stripSessionFlag, UsageError } from "../common/session.ts";
import { agentStart } from "./agent-start.ts";
import {
  CliRawError,
  CliUsage,
  type Parsed,
  parseAnyOrder,
  parseArgs,
  parseDirection,
  parseEnv,
  parseFloatFlag,
  parseFormat,
  parseSource,
  parseState,
  parseStatuses,
  parseU32,
  parseU64,
  parseU64Raw,
  type Spec,
} from "./args.ts";
import { apiCommand, type CliCtx, cliRelease, cliVersion, err, Failed, makeCtx, type OutMode, out } from "./io.ts";
import { serverStop, sessionList, sessionStop, status } from "./sessions.ts";
import { worktreeCommands } from "./worktree.ts";

interface Cmd {
  spec: Spec;
  /** method + params, or a custom runner */
  build?: (p: Parsed, ctx: CliCtx) => { method: string; params: Json };
  mode?: OutMode;
  run?: (p: Parsed, ctx: CliCtx, argv: string[]) => Promise<number>;
}

const drop = <T extends Json>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

function readParams(p: Parsed, idKey: "pane_id" | "target", id: string): Json {
  const raw = p.bools.has("--raw");
  const format = p.bools.has("--ansi") || raw ? "ansi" : parseFormat(p.flags["--format"]);
  return drop({ [idKey]: id, source: parseSource(p.flags["--source"]) ?? "recent", lines: parseU32("--lines", p.flags["--lines"]), format, strip_ansi: raw ? false : undefined });
}

const READ_FLAGS = { "--source": "value", "--lines": "value", "--format": "value", "--ansi": "bool", "--raw": "bool" } as const;

/** --focus / --no-focus: the last one wins, default no focus (src/cli/workspace.rs:41-80) */
function focusFlag(p: Parsed): boolean {
  return p.boolOrder.filter((b) => b === "--focus" || b === "--no-focus").at(-1) === "--focus";
}

const COMMANDS: Record<string, Record<string, Cmd>> = {
  workspace: {
    create: {
      spec: { usage: "usage: herdr workspace create [--cwd PATH] [--label TEXT] [--env KEY=VALUE] [--focus|--no-focus]", flags: { "--cwd": "value", "--label": "value", "--env": "multi", "--focus": "bool", "--no-focus": "bool" } },
      build: (p) => ({ method: "workspace.create", params: drop({ cwd: p.flags["--cwd"], label: p.flags["--label"], focus: focusFlag(p), env: parseEnv(p.multi["--env"]) }) }),
    },
    list: { spec: { usage: "usage: herdr workspace list" }, build: () => ({ method: "workspace.list", params: {} }) },
    get: { spec: { usage: "usage: herdr workspace get <workspace_id>", positional: ["id"] }, build: (p) => ({ method: "workspace.get", params: { workspace_id: p.pos.id } }) },
    focus: { spec: { usage: "usage: herdr workspace focus <workspace_id>", positional: ["id"] }, build: (p) => ({ method: "workspace.focus", params: { workspace_id: p.pos.id } }) },
    close: { spec: { usage: "usage: herdr workspace close <workspace_id>", positional: ["id"] }, build: (p) => ({ method: "workspace.close", params: { workspace_id: p.pos.id } }) },
    rename: {
      spec: { usage: "usage: herdr workspace rename <workspace_id> <label>", positional: ["id"], rest: { name: "label", min: 1 } },
      build: (p) => ({ method: "workspace.rename", params: { workspace_id: p.pos.id, label: p.rest.join(" ") } }),
    },
  },
  tab: {
    create: {
      spec: { usage: "usage: herdr tab create [--workspace ID] [--cwd PATH] [--label TEXT] [--env KEY=VALUE] [--focus|--no-focus]", flags: { "--workspace": "value", "--cwd": "value", "--label": "value", "--env": "multi", "--focus": "bool", "--no-focus": "bool" } },
      build: (p) => ({ method: "tab.create", params: drop({ workspace_id: p.flags["--workspace"], cwd: p.flags["--cwd"], label: p.flags["--label"], focus: focusFlag(p), env: parseEnv(p.multi["--env"]) }) }),
    },
    list: { spec: { usage: "usage: herdr tab list [--workspace ID]", flags: { "--workspace": "value" } }, build: (p) => ({ method: "tab.list", params: drop({ workspace_id: p.flags["--workspace"] }) }) },
    get: { spec: { usage: "usage: herdr tab get <tab_id>", positional: ["id"] }, build: (p) => ({ method: "tab.get", params: { tab_id: p.pos.id } }) },
    focus: { spec: { usage: "usage: herdr tab focus <tab_id>", positional: ["id"] }, build: (p) => ({ method: "tab.focus", params: { tab_id: p.pos.id } }) },
    close: { spec: { usage: "usage: herdr tab close <tab_id>", positional: ["id"] }, build: (p) => ({ method: "tab.close", params: { tab_id: p.pos.id } }) },
  },
  pane: {
    list: { spec: { usage: "usage: herdr pane list [--workspace ID]", flags: { "--workspace": "value" } }, build: (p) => ({ method: "pane.list", params: drop({ workspace_id: p.flags["--workspace"] }) }) },
    get: { spec: { usage: "usage: herdr pane get <pane_id>", positional: ["id"] }, build: (p) => ({ method: "pane.get", params: { pane_id: p.pos.id } }) },
    focus: { spec: { usage: "usage: herdr pane focus <pane_id>", positional: ["id"] }, build: (p) => ({ method: "pane.focus", params: { pane_id: p.pos.id } }) },
    close: { spec: { usage: "usage: herdr pane close <pane_id>", positional: ["id"] }, build: (p) => ({ method: "pane.close", params: { pane_id: p.pos.id } }) },
    current: {
      spec: { usage: "usage: herdr pane current [--current|--pane <pane_id>]", flags: { "--current": "bool", "--pane": "value" } },
      build: (p, ctx) => ({ method: "pane.current", params: drop({ caller_pane_id: p.flags["--pane"] ?? (ctx.env.HERDR_PANE_ID || undefined) }) }),
    },
    split: {
      spec: {
        usage: "usage: herdr pane split [<pane_id>|--pane ID|--current] --direction right|down [--ratio FLOAT] [--cwd PATH] [--env KEY=VALUE] [--focus] [--no-focus]",
        positional: ["id?"],
        flags: { "--pane": "value", "--current": "bool", "--direction": "value", "--ratio": "value", "--cwd": "value", "--env": "multi", "--focus": "bool", "--no-focus": "bool" },
      },
      // 0.8.0 (src/cli/pane.rs:513-624): the pane is the positional id, --pane ID, or --current
      // (HERDR_PANE_ID); none → the server splits its focused pane
      build: (p, ctx) => {
        const direction = parseDirection(p.flags["--direction"]);
        if (!direction) throw new CliUsage("missing required --direction");
        const target = p.flags["--pane"] ?? (p.bools.has("--current") ? ctx.env.HERDR_PANE_ID?.trim() || undefined : p.pos.id);
        return {
          method: "pane.split",
          params: drop({ target_pane_id: target, direction, ratio: parseFloatFlag("--ratio", p.flags["--ratio"]), cwd: p.flags["--cwd"], focus: focusFlag(p), env: parseEnv(p.multi["--env"]) }),
        };
      },
    },
    rename: {
      spec: { usage: "usage: herdr pane rename <pane_id> <label>|--clear", positional: ["id"], rest: { name: "label", min: 1 } },
      build: (p) => ({ method: "pane.rename", params: p.rest.length === 1 && p.rest[0] === "--clear" ? { pane_id: p.pos.id } : { pane_id: p.pos.id, label: p.rest.join(" ") } }),
    },
    run: {
      spec: { usage: "usage: herdr pane run <pane_id> <command>", positional: ["id"], rest: { name: "command", min: 1 } },
      build: (p) => ({ method: "pane.send_input", params: { pane_id: p.pos.id, text: p.rest.join(" "), keys: ["Enter"] } }),
      mode: "silent",
    },
    "send-text": {
      spec: { usage: "usage: herdr pane send-text <pane_id> <text>", positional: ["id"], rest: { name: "text", min: 1 } },
      build: (p) => ({ method: "pane.send_text", params: { pane_id: p.pos.id, text: p.rest.join(" ") } }),
      mode: "silent",
    },
    "send-keys": {
      spec: { usage: "usage: herdr pane send-keys <pane_id> <key> [key ...]", positional: ["id"], rest: { name: "key", min: 1 } },
      build: (p) => ({ method: "pane.send_keys", params: { pane_id: p.pos.id, keys: p.rest } }),
      mode: "silent",
    },
    read: {
      spec: {
        usage: "usage: herdr pane read <pane_id> [--source visible|recent|recent-unwrapped|detection] [--lines N] [--format text|ansi] [--raw]",
        positional: ["id"],
        flags: { ...READ_FLAGS },
        anyOrder082: ["--source", "--lines", "--format"],
      },
      build: (p) => ({ method: "pane.read", params: readParams(p, "pane_id", p.pos.id!) }),
      mode: "text",
    },
    "wait-output": {
      spec: {
        usage: "usage: herdr pane wait-output <pane_id> (--match TEXT|--regex REGEX) [--source visible|recent|recent-unwrapped|detection] [--lines N] [--timeout MS] [--raw]",
        positional: ["id"],
        flags: { "--match": "value", "--regex": "value", "--source": "value", "--lines": "value", "--timeout": "value", "--raw": "bool" },
        anyOrder082: ["--match", "--regex", "--source", "--lines", "--timeout"],
      },
      build: (p) => {
        const m = p.flags["--match"];
        const r = p.flags["--regex"];
        if ((m === undefined) === (r === undefined)) throw new CliUsage("exactly one of --match or --regex is required");
        return {
          method: "pane.wait_for_output",
          params: drop({
            pane_id: p.pos.id,
            source: parseSource(p.flags["--source"]) ?? "recent",
            match: m !== undefined ? { type: "substring", value: m } : { type: "regex", value: r },
            lines: parseU32("--lines", p.flags["--lines"]),
            timeout_ms: parseU64Raw("--timeout", p.flags["--timeout"]),
            strip_ansi: p.bools.has("--raw") ? false : undefined,
          }),
        };
      },
    },
    "process-info": {
      spec: { usage: "usage: herdr pane process-info [--pane <pane_id>|--current]", flags: { "--pane": "value", "--current": "bool" } },
      // 0.8.0 (src/cli/pane.rs:225-245): --current sends no pane id, so the server answers for
      // its focused pane; 0.8.2 (d8838082) sends the caller's HERDR_PANE_ID
      build: (p, ctx) => {
        const current = cliRelease(ctx.env) === "0.8.2" ? ctx.env.HERDR_PANE_ID?.trim() || undefined : undefined;
        return { method: "pane.process_info", params: drop({ pane_id: p.bools.has("--current") ? current : p.flags["--pane"] }) };
      },
    },
    "report-agent": {
      spec: {
        usage: "usage: herdr pane report-agent <pane_id> --source ID --agent LABEL --state idle|working|blocked|unknown [--message TEXT] [--seq N] [--agent-session-id ID] [--agent-session-path PATH]",
        positional: ["id"],
        flags: { "--source": "value", "--agent": "value", "--state": "value", "--message": "value", "--seq": "value", "--agent-session-id": "value", "--agent-session-path": "value" },
      },
      build: (p) => {
        const source = p.flags["--source"]?.trim();
        if (!source) throw new CliUsage("missing required --source");
        if (p.flags["--agent"] === undefined) throw new CliUsage("missing required --agent");
        const state = parseState(p.flags["--state"]);
        if (!state) throw new CliUsage("missing required --state");
        return {
          method: "pane.report_agent",
          params: drop({
            pane_id: p.pos.id,
            source,
            agent: p.flags["--agent"],
            state,
            message: p.flags["--message"],
            seq: parseU64Raw("--seq", p.flags["--seq"]),
            agent_session_id: p.flags["--agent-session-id"],
            agent_session_path: p.flags["--agent-session-path"],
          }),
        };
      },
      mode: "silent",
    },
    "release-agent": {
      spec: { usage: "usage: herdr pane release-agent <pane_id> --source ID --agent LABEL [--seq N]", positional: ["id"], flags: { "--source": "value", "--agent": "value", "--seq": "value" } },
      build: (p) => {
        const source = p.flags["--source"]?.trim();
        if (!source) throw new CliUsage("missing required --source");
        if (p.flags["--agent"] === undefined) throw new CliUsage("missing required --agent");
        return { method: "pane.release_agent", params: drop({ pane_id: p.pos.id, source, agent: p.flags["--agent"], seq: parseU64Raw("--seq", p.flags["--seq"]) }) };
      },
      mode: "silent",
    },
  },
  agent: {
    list: { spec: { usage: "usage: herdr agent list" }, build: () => ({ method: "agent.list", params: {} }) },
    get: { spec: { usage: "usage: herdr agent get <target>", positional: ["target"] }, build: (p) => ({ method: "agent.get", params: { target: p.pos.target } }) },
    focus: { spec: { usage: "usage: herdr agent focus <target>", positional: ["target"] }, build: (p) => ({ method: "agent.focus", params: { target: p.pos.target } }) },
    rename: {
      spec: { usage: "usage: herdr agent rename <target> <name>|--clear", positional: ["target", "name"], literal: true },
      build: (p) => ({ method: "agent.rename", params: p.pos.name === "--clear" ? { target: p.pos.target } : { target: p.pos.target, name: p.pos.name } }),
    },
    read: {
      spec: { usage: "usage: herdr agent read <target> [--source visible|recent|recent-unwrapped|detection] [--lines N] [--format text|ansi] [--raw]", positional: ["target"], flags: { ...READ_FLAGS } },
      build: (p) => ({ method: "agent.read", params: readParams(p, "target", p.pos.target!) }),
      mode: "text",
    },
    "send-keys": {
      spec: { usage: "usage: herdr agent send-keys <target> <key> [key ...]", positional: ["target"], rest: { name: "key", min: 1 } },
      build: (p) => ({ method: "agent.send_keys", params: { target: p.pos.target, keys: p.rest } }),
    },
    wait: {
      spec: { usage: "usage: herdr agent wait <target> [--until idle|working|blocked|done|unknown]... [--timeout MS]", positional: ["target"], flags: { "--until": "multi", "--timeout": "value" } },
      build: (p) => ({ method: "agent.wait", params: drop({ target: p.pos.target, until: parseStatuses(p.multi["--until"]), timeout_ms: parseU64("--timeout", p.flags["--timeout"]) }) }),
    },
    prompt: {
      spec: { usage: "usage: herdr agent prompt <target> <text> [--wait] [--until STATUS]... [--timeout MS]", positional: ["target", "text?"], literal: true, flags: { "--wait": "bool", "--until": "multi", "--timeout": "value" } },
      build: (p) => {
        if (p.pos.text === undefined) throw new CliUsage("agent prompt requires text");
        const wait = p.bools.has("--wait");
        if (!wait && p.flags["--timeout"] !== undefined) throw new CliUsage("--timeout requires --wait");
        if (!wait && p.multi["--until"]) throw new CliUsage("--until requires --wait");
        const params: Json = { target: p.pos.target, text: p.pos.text };
        if (wait) params.wait = drop({ until: parseStatuses(p.multi["--until"]), timeout_ms: parseU64("--timeout", p.flags["--timeout"]) });
        return { method: "agent.prompt", params };
      },
    },
    start: {
      spec: { usage: "usage: herdr agent start <name> --kind KIND --pane <pane_id> [--timeout MS] [-- ARGS...]", positional: ["name"], flags: { "--kind": "value", "--pane": "value", "--timeout": "value" } },
      run: (p, ctx, agentArgs) => agentStart(ctx, p, agentArgs),
    },
  },
  worktree: worktreeCommands,
  notification: {
    // src/cli/notification.rs: the title is the first argument; bad values are usage errors
    show: {
      spec: { usage: "usage: herdr notification show <title> [--body TEXT] [--position top-left|top-right|bottom-left|bottom-right] [--sound none|done|request]", positional: ["title"], flags: { "--body": "value", "--position": "value", "--sound": "value" } },
      build: (p) => {
        const position = p.flags["--position"];
        if (position !== undefined && !["top-left", "top-right", "bottom-left", "bottom-right"].includes(position))
          throw new CliUsage(`invalid position: ${position} (expected top-left, top-right, bottom-left, or bottom-right)`);
        const sound = p.flags["--sound"] ?? "none";
        if (!["none", "done", "request"].includes(sound)) throw new CliUsage(`invalid sound: ${sound} (expected none, done, or request)`);
        return { method: "notification.show", params: drop({ title: p.pos.title, body: p.flags["--body"], position, sound }) };
      },
    },
  },
  api: {
    snapshot: { spec: { usage: "usage: herdr api snapshot" }, build: () => ({ method: "session.snapshot", params: {} }) },
    schema: {
      spec: { usage: "usage: herdr api schema --json", flags: { "--json": "bool" } },
      run: async () => {
        const { SCHEMA_PATH } = await import("../schema/herdr-schema.ts");
        await out(await Bun.file(SCHEMA_PATH).text());
        return 0;
      },
    },
  },
};

const HELP = `herdr (fake, for tests) — commands:
  herdr [--session NAME] server            run the server in the foreground
  herdr server stop | session list [--json] | session stop NAME [--json] | status [server|client] [--json]
  herdr workspace create|list|get|focus|rename|close
  herdr tab create|list|get|focus|close
  herdr pane list|get|current|split|rename|close|run|send-text|send-keys|read|wait-output|process-info|report-agent|release-agent|focus
  herdr agent start|get|list|prompt|wait|read|send-keys|rename|focus
  herdr worktree list|create|open|remove
  herdr notification show <title> [--body TEXT] [--position P] [--sound S]
  herdr api snapshot | api schema --json
`;

async function dispatch(ctx: CliCtx, args: string[], explicitDefault: boolean): Promise<number> {
  const [group, sub, ...rest] = args;
  if (group === undefined) throw new CliUsage("the fake herdr has no TUI; start a headless server with `herdr [--session NAME] server`");
  if (group === "--version" || group === "-V" || group === "version") {
    await out(`herdr ${cliVersion(ctx.env)}\n`);
    return 0;
  }
  if (group === "--help" || group === "-h" || group === "help") {
    await out(HELP);
    return 0;
  }
  if (group === "server") {
    if (sub === undefined) {
      const { runServer } = await import("../server/main.ts");
      return runServer(ctx.target(), explicitDefault);
    }
    if (sub === "stop") return serverStop(ctx, rest);
    throw new CliUsage("usage: herdr server [stop]");
  }
  if (group === "session") {
    if (sub === "list") return sessionList(ctx, rest);
    if (sub === "stop") return sessionStop(ctx, rest);
    throw new CliUsage("usage: herdr session list [--json] | herdr session stop <name> [--json]");
  }
  if (group === "status") return status(ctx, sub === undefined ? [] : [sub, ...rest]);
  const table = COMMANDS[group];
  if (!table) throw new CliUsage(`unknown command: ${group}\n${HELP}`);
  const cmd = sub !== undefined ? table[sub] : undefined;
  if (!cmd) throw new CliUsage(`usage: herdr ${group} ${Object.keys(table).join("|")}`);
  let words = rest;
  let agentArgs: string[] = [];
  if (group === "agent" && sub === "start") {
    const dd = rest.indexOf("--");
    if (dd >= 0) {
      words = rest.slice(0, dd);
      agentArgs = rest.slice(dd + 1);
    }
  }
  const r082 = cmd.spec.anyOrder082 !== undefined && cliRelease(ctx.env) === "0.8.2";
  const parsed = r082 ? parseAnyOrder(words, cmd.spec) : parseArgs(words, cmd.spec);
  if (cmd.run) return cmd.run(parsed, ctx, agentArgs);
  let built: { method: string; params: Json };
  try {
    built = cmd.build!(parsed, ctx);
  } catch (e) {
    // 0.8.2's order-free parsers report a bad value as a usage error (exit 2), not a raw Error
    if (r082 && e instanceof CliRawError) throw new CliUsage(e.message);
    throw e;
  }
  const { method, params } = built;
  // request ids as 0.8.0's CLI sets them (src/cli.rs:730-742 send_ok_request, src/cli/pane.rs:166)
  const mode = cmd.mode ?? "json";
  const id = mode === "silent" ? "cli:request" : `cli:${group}:${sub === "process-info" ? "process_info" : sub}`;
  return apiCommand(ctx, id, method, params, mode);
}

export async function main(argv: string[]): Promise<number> {
  try {
    const { argv: args, session } = stripSessionFlag(argv);
    const ctx = makeCtx(process.env, session);
    return await dispatch(ctx, args, session === "default");
  } catch (e) {
    if (e instanceof Failed) return e.code;
    if (e instanceof CliUsage || e instanceof UsageError) {
      await err(`${e.message}\n`);
      return 2;
    }
    if (e instanceof CliRawError) {
      await err(`Error: ${e.message}\n`);
      return 1;
    }
    await err(`Error: ${(e as Error)?.message ?? String(e)}\n`);
    return 1;
  }
}

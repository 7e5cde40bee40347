// Captures real screens of claude, codex, gemini, opencode, qwen and cline for the screen-state detector's fixtures:
//   bun tests/real-agents/capture-screens.ts [NAME-FILTER]
// Each scenario runs the pinned CLI (scripts/install-test-agents.ts) in its own harness world
// (tests/helpers/real-agents.ts: isolated config, private tmux, scripted model endpoint), drives it
// to one state, then writes tests/fixtures/screens/<kind>/<state>-<what>.txt (tmux capture-pane
// -p -J of the visible screen), .title (#{pane_title}) and .json (the verdict the detector owes).
// Re-runnable; a scenario that does not reach its state is reported and writes nothing.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Refusal, Reply, Turn } from "../fakes/model-api/server.ts";
import { MAM_CMD } from "../helpers/mam.ts";
import { type RealAgentWorld, realAgentWorld, agentExe, typeAndSubmit, waitScreen } from "../helpers/real-agents.ts";
import { waitFor } from "../helpers/sandbox.ts";

const OUT = join(import.meta.dir, "..", "fixtures", "screens");

interface Verdict {
  state: "working" | "blocked" | "idle" | "unknown";
  dialog?: "start" | "permission" | "limit";
  reason?: string;
}

interface Scenario {
  kind: "claude" | "codex" | "gemini" | "opencode" | "qwen" | "cline";
  file: string;
  verdict: Verdict;
  trust?: boolean;
  /** qwen: give it its model provider (default true for qwen's scenarios) */
  provider?: boolean;
  /** cline: leave its one-time notice unseen */
  notice?: boolean;
  /** claude as a claude.ai subscriber (no API key) */
  subscriber?: boolean;
  /** change the world before the agent starts (config files) */
  prepare?: (w: RealAgentWorld) => void;
  script?: (t: Turn) => Reply;
  /** keep the pane after the agent exits (a shell follows it) */
  keepShell?: boolean;
  /** the agent's own extra arguments (its folder's path in them is the sandbox's) */
  args?: (w: RealAgentWorld) => string[];
  /** drive the agent to the state; resolves when the screen shows it */
  drive: (w: RealAgentWorld, pane: string) => Promise<void>;
}

const idleClaude = (s: string) => s.includes("? for shortcuts") && /^❯/m.test(s);
const idleCodex = (s: string) => /^› /m.test(s) && s.includes("? for shortcuts");
const idleGemini = (s: string) => s.includes("Type your message") && s.includes("Gemini CLI v");
const idleOpencode = (s: string) => s.includes("ctrl+p commands") && !s.includes("esc interrupt");
const idleQwen = (s: string) => s.includes("Type your message") && s.includes("Qwen Code");
const idleCline = (s: string) => /^\s*❯ (What can I do for you\?|Ask anything)/m.test(s) && s.includes("Auto-approve all") && !s.includes("esc to cancel");
/** opencode takes its time (seconds) before its main request: type, Enter once, and wait for it */
async function submitSlowly(w: RealAgentWorld, pane: string, text: string): Promise<void> {
  const before = w.api.turns().length;
  await w.tmux(["send-keys", "-t", pane, "-l", text]);
  await Bun.sleep(500);
  await w.tmux(["send-keys", "-t", pane, "Enter"]);
  if (!(await waitFor(() => w.api.turns().length > before, 90_000, 200))) throw new Error(`the text typed into ${pane} never reached the model`);
}

interface TurnCues {
  /** the screen at its input box, ready */
  idle: (s: string) => boolean;
  /** the scripted answer "ready" on screen */
  answered: string | RegExp;
  /** a text of its working screen */
  working: string;
  /** the fixture's name after blocked-real-permission-, and a text of the permission prompt */
  permission: [string, string];
  /** opencode: seconds pass before it sends a prompt */
  slowStart?: boolean;
  /** the permission scenario's own setup (a config that asks), and its arguments */
  prepare?: (w: RealAgentWorld) => void;
  args?: string[];
}

/** the four screens of one turn of a kind: at its prompt, after an answer, working, at a permission prompt */
function turnScenarios(kind: Scenario["kind"], c: TurnCues): Scenario[] {
  const wait = c.slowStart ? 90_000 : 60_000;
  const ready = async (w: RealAgentWorld, p: string) => {
    await waitScreen(w, p, c.idle, `${kind}'s input box`, wait);
    // a new agent's prompt may be drawn before it takes text (gemini, cline): let it settle
    await Bun.sleep(1000);
  };
  const submit = (w: RealAgentWorld, p: string, text: string) => (c.slowStart ? submitSlowly(w, p, text) : typeAndSubmit(w, p, text));
  const answered = (s: string) => (typeof c.answered === "string" ? s.includes(c.answered) : c.answered.test(s)) && c.idle(s);
  return [
    { kind, file: "idle-real-prompt", verdict: { state: "idle" }, drive: async (w, p) => void (await waitScreen(w, p, c.idle, `${kind}'s input box`, wait)) },
    {
      kind, file: "idle-real-after-answer", verdict: { state: "idle" },
      drive: async (w, p) => {
        await ready(w, p);
        await submit(w, p, "hello");
        await waitScreen(w, p, answered, "the answer", wait);
      },
    },
    {
      kind, file: "working-real-answer", verdict: { state: "working" }, script: slow,
      drive: async (w, p) => {
        await ready(w, p);
        await submit(w, p, "work slowly please");
        await waitScreen(w, p, (s) => s.includes(c.working), `${kind} working`, wait);
        await Bun.sleep(1500);
      },
    },
    {
      kind, file: `blocked-real-permission-${c.permission[0]}`, verdict: { state: "blocked", dialog: "permission" },
      script: wantsShell("mkdir -p build && touch build/out.txt"), prepare: c.prepare, args: c.args && (() => c.args!),
      drive: async (w, p) => {
        await ready(w, p);
        await submit(w, p, "make the build folder, run it");
        await waitScreen(w, p, (s) => s.includes(c.permission[1]), "the permission prompt", wait);
      },
    },
  ];
}
const slow: (t: Turn) => Reply = (t) => (t.lastUserText.includes("work slowly") ? { text: "finished the slow work", delayMs: 15_000 } : { text: "ready" });
const wantsShell = (cmd: string) => (t: Turn): Reply => (t.toolOutputs.length === 0 && t.lastUserText.includes("run it") ? { shell: cmd } : { text: "ok, done" });
/** the model calls these tools one after the other (each after the one before it answered) */
const wantsTools = (...tools: NonNullable<Reply["tool"]>[]) => (t: Turn): Reply =>
  t.lastUserText.includes("run it") && t.toolOutputs.length < tools.length ? { tool: tools[t.toolOutputs.length]! } : { text: "ok, done" };
/** the file the user named: "change the file /abs/a.txt, run it" (claude reads and edits absolute paths) */
const namedFile = (t: Turn) => /change the file (\S+),/.exec(t.lastUserText)?.[1] ?? "a.txt";
const permissionPrompt = async (w: RealAgentWorld, p: string) => {
  await waitScreen(w, p, idleClaude, "claude's prompt box");
  await typeAndSubmit(w, p, "change the file, run it");
  await waitScreen(w, p, (s) => /Do you want to (proceed|make this edit|create)/.test(s), "the permission prompt");
};

/** a reset two hours ahead, on a whole minute (claude prints h:mm): epoch s */
const resetIn2h = () => Math.floor((Date.now() + 2 * 3600_000) / 60_000) * 60;
/** the endpoint refuses from now on, then a message is typed: the agent meets the limit */
const meetLimit = async (w: RealAgentWorld, p: string, r: Refusal) => {
  w.api.refuse(r);
  await typeAndSubmit(w, p, "do the work");
};
const limitOptions = (s: string) => s.includes("What do you want to do?") && s.includes("Stop and wait for limit to reset");
const CLAUDE_LIMIT = /You've hit your session limit · resets \d/;
const CODEX_LIMIT = /You.ve hit your usage limit\./;
const codexNudge = (s: string) => s.includes("Approaching rate limits") && s.includes("Keep current model");

const SCENARIOS: Scenario[] = [
  // ---- usage limits (shared/reference/real-limits.md): the endpoint answers 429 in each CLI's real shape ----
  {
    // a subscriber at its 5-hour limit: the limit line, then claude types /rate-limit-options itself and asks
    kind: "claude", file: "blocked-real-limit-options", verdict: { state: "blocked", dialog: "limit" }, subscriber: true,
    drive: async (w, p) => {
      await waitScreen(w, p, idleClaude, "claude's prompt box");
      await meetLimit(w, p, { shape: "subscription", resetsAt: resetIn2h() });
      await waitScreen(w, p, limitOptions, "the limit's options");
    },
  },
  {
    // the options dismissed (Esc, its own hint): at its prompt, the limit line in view
    kind: "claude", file: "idle-real-limited-session", verdict: { state: "idle" }, subscriber: true,
    drive: async (w, p) => {
      await waitScreen(w, p, idleClaude, "claude's prompt box");
      await meetLimit(w, p, { shape: "subscription", resetsAt: resetIn2h() });
      await waitScreen(w, p, limitOptions, "the limit's options");
      await w.tmux(["send-keys", "-t", p, "Escape"]);
      await waitScreen(w, p, (s) => !limitOptions(s) && CLAUDE_LIMIT.test(s) && idleClaude(s), "the prompt after the options");
    },
  },
  {
    // an API key's 429 with retry-after 3600: one request, no retry, no limit words
    kind: "claude", file: "idle-real-limited-api-key", verdict: { state: "idle" },
    drive: async (w, p) => {
      await waitScreen(w, p, idleClaude, "claude's prompt box");
      await meetLimit(w, p, { shape: "api-key", retryAfter: 3600 });
      await waitScreen(w, p, (s) => s.includes("API Error: Request rejected (429)") && idleClaude(s), "the 429 line");
    },
  },
  {
    // usage_limit_reached: the first time usage runs high in a process, codex offers another model
    kind: "codex", file: "blocked-real-limit-nudge", verdict: { state: "blocked", dialog: "limit" },
    drive: async (w, p) => {
      await waitScreen(w, p, (s) => idleCodex(s) && s.includes("mock-model default"), "codex's prompt", 60_000);
      await meetLimit(w, p, { shape: "codex-usage", resetsAt: resetIn2h() });
      await waitScreen(w, p, codexNudge, "the model nudge");
    },
  },
  {
    // the nudge closed (Esc): at its prompt, the limit line in view
    kind: "codex", file: "idle-real-limited-usage", verdict: { state: "idle" },
    drive: async (w, p) => {
      await waitScreen(w, p, (s) => idleCodex(s) && s.includes("mock-model default"), "codex's prompt", 60_000);
      await meetLimit(w, p, { shape: "codex-usage", resetsAt: resetIn2h() });
      await waitScreen(w, p, (s) => codexNudge(s) || (CODEX_LIMIT.test(s) && idleCodex(s)), "the limit line or the nudge");
      if (codexNudge(await w.screen(p))) await w.tmux(["send-keys", "-t", p, "Escape"]);
      await waitScreen(w, p, (s) => !codexNudge(s) && CODEX_LIMIT.test(s) && idleCodex(s), "the limit line at the prompt");
    },
  },
  {
    kind: "claude", file: "idle-real-prompt", verdict: { state: "idle" },
    drive: async (w, p) => void (await waitScreen(w, p, idleClaude, "claude's prompt box")),
  },
  {
    kind: "claude", file: "idle-real-after-answer", verdict: { state: "idle" },
    drive: async (w, p) => {
      await waitScreen(w, p, idleClaude, "claude's prompt box");
      await typeAndSubmit(w, p, "hello");
      await waitScreen(w, p, (s) => s.includes("● ready") && idleClaude(s), "the answer");
    },
  },
  {
    kind: "claude", file: "working-real-answer", verdict: { state: "working" }, script: slow,
    drive: async (w, p) => {
      await waitScreen(w, p, idleClaude, "claude's prompt box");
      await typeAndSubmit(w, p, "work slowly please");
      await waitScreen(w, p, (s) => s.includes("esc to interrupt"), "claude working");
      await Bun.sleep(1500);
    },
  },
  {
    kind: "claude", file: "blocked-real-permission-bash", verdict: { state: "blocked", dialog: "permission" },
    script: wantsShell("mkdir -p build && touch build/out.txt"),
    drive: async (w, p) => {
      await waitScreen(w, p, idleClaude, "claude's prompt box");
      await typeAndSubmit(w, p, "make the build folder, run it");
      await waitScreen(w, p, (s) => s.includes("Do you want to proceed?"), "the permission prompt");
    },
  },
  {
    // no description from the model: claude shows its own ("Run shell command"), and a remark
    kind: "claude", file: "blocked-real-permission-bash-multiline", verdict: { state: "blocked", dialog: "permission" },
    script: wantsTools({ name: "Bash", input: { command: "touch made.txt &&\\\n  echo two-lines" } }),
    drive: permissionPrompt,
  },
  {
    kind: "claude", file: "blocked-real-permission-create", verdict: { state: "blocked", dialog: "permission" },
    script: wantsTools({ name: "Write", input: { file_path: "notes.txt", content: "hello\n" } }),
    drive: permissionPrompt,
  },
  {
    // claude edits only a file it has read
    kind: "claude", file: "blocked-real-permission-edit", verdict: { state: "blocked", dialog: "permission" },
    prepare: (w) => writeFileSync(join(w.sb.ws, "a.txt"), "one\n"),
    script: (t) => wantsTools({ name: "Read", input: { file_path: namedFile(t) } }, { name: "Edit", input: { file_path: namedFile(t), old_string: "one", new_string: "two" } })(t),
    drive: async (w, p) => {
      await waitScreen(w, p, idleClaude, "claude's prompt box");
      await typeAndSubmit(w, p, `change the file ${w.sb.ws}/a.txt, run it`);
      await waitScreen(w, p, (s) => s.includes("Do you want to make this edit"), "the edit prompt");
    },
  },
  {
    // an MCP tool: mam's own MCP server, its tools not allowed
    kind: "claude", file: "blocked-real-permission-mcp", verdict: { state: "blocked", dialog: "permission" },
    args: (w) => {
      const cfg = join(w.sb.root, "mcp.json");
      writeFileSync(cfg, JSON.stringify({ mcpServers: { mam: { command: MAM_CMD[0], args: [...MAM_CMD.slice(1), "mcp", "--workspace", w.sb.ws] } } }));
      return [`--mcp-config=${cfg}`];
    },
    script: wantsTools({ name: "mcp__mam__job_list", input: {} }),
    drive: async (w, p) => {
      await waitScreen(w, p, idleClaude, "claude's prompt box");
      await Bun.sleep(3000); // claude connects its MCP servers in the background
      await typeAndSubmit(w, p, "list the jobs, run it");
      await waitScreen(w, p, (s) => s.includes("Do you want to proceed?") && s.includes("(MCP)"), "the MCP tool prompt");
    },
  },
  {
    kind: "claude", file: "blocked-real-start-trust", verdict: { state: "blocked", dialog: "start" }, trust: false,
    drive: async (w, p) => void (await waitScreen(w, p, (s) => s.includes("Yes, I trust this folder"), "the trust dialog")),
  },
  {
    kind: "claude", file: "blocked-real-start-api-key", verdict: { state: "blocked", dialog: "start" },
    prepare: (w) => {
      const cfg = w.claudeConfig();
      cfg.customApiKeyResponses = { approved: [], rejected: [] };
      writeFileSync(join(w.claudeConfigDir, ".claude.json"), JSON.stringify(cfg));
    },
    drive: async (w, p) => void (await waitScreen(w, p, (s) => s.includes("Do you want to use this API key?"), "the API key dialog")),
  },
  {
    kind: "claude", file: "unknown-real-exited-unable-to-connect", verdict: { state: "unknown" },
    keepShell: true,
    prepare: (w) => writeFileSync(join(w.claudeConfigDir, ".claude.json"), "{}"),
    drive: async (w, p) => void (await waitScreen(w, p, (s) => s.includes("Unable to connect") && s.includes("agent exited"), "claude's exit", 90_000)),
  },
  {
    // while it starts (about 6 s) codex shows its logo and a composer whose footer is only
    // "? for shortcuts": typed text waits there, and a trust dialog may still follow
    kind: "codex", file: "unknown-real-starting", verdict: { state: "unknown" },
    drive: async (w, p) => void (await waitScreen(w, p, (s) => s.includes("? for shortcuts") && !s.includes("mock-model"), "codex starting")),
  },
  {
    // ready: the footer names the model and the folder
    kind: "codex", file: "idle-real-prompt", verdict: { state: "idle" },
    drive: async (w, p) => void (await waitScreen(w, p, (s) => idleCodex(s) && s.includes("mock-model default"), "codex's prompt")),
  },
  {
    kind: "codex", file: "idle-real-after-answer", verdict: { state: "idle" },
    drive: async (w, p) => {
      await waitScreen(w, p, idleCodex, "codex's prompt");
      await typeAndSubmit(w, p, "hello");
      await waitScreen(w, p, (s) => s.includes("• ready") && idleCodex(s), "the answer");
    },
  },
  {
    kind: "codex", file: "working-real-answer", verdict: { state: "working" }, script: slow,
    drive: async (w, p) => {
      await waitScreen(w, p, idleCodex, "codex's prompt");
      await typeAndSubmit(w, p, "work slowly please");
      await waitScreen(w, p, (s) => s.includes("esc to interrupt"), "codex working");
      await Bun.sleep(1500);
    },
  },
  {
    kind: "codex", file: "blocked-real-permission-command", verdict: { state: "blocked", dialog: "permission" },
    script: (t) => ({ ...wantsShell("touch /var/tmp/mam-capture-escalated.txt")(t), escalate: true }),
    // top-level keys go before the first [table]
    prepare: (w) => writeFileSync(join(w.codexHome, "config.toml"), `approval_policy = "on-request"\n${readFileSync(join(w.codexHome, "config.toml"), "utf8")}`),
    drive: async (w, p) => {
      await waitScreen(w, p, idleCodex, "codex's prompt");
      await typeAndSubmit(w, p, "touch the file, run it");
      await waitScreen(w, p, (s) => /allow|approv|proceed/i.test(s) && !idleCodex(s), "the approval prompt");
    },
  },
  {
    kind: "codex", file: "blocked-real-start-trust", verdict: { state: "blocked", dialog: "start" }, trust: false,
    // codex asks about trust in a git repository
    prepare: (w) => void Bun.spawnSync(["git", "init", "-q", w.sb.ws]),
    drive: async (w, p) => void (await waitScreen(w, p, (s) => s.includes("Trust this folder") || s.includes("trust"), "the trust dialog")),
  },
  {
    kind: "codex", file: "blocked-real-start-sign-in", verdict: { state: "blocked", dialog: "start" },
    prepare: (w) => writeFileSync(join(w.codexHome, "config.toml"), `[projects."${w.sb.ws}"]\ntrust_level = "trusted"\n`),
    drive: async (w, p) => void (await waitScreen(w, p, (s) => s.includes("Sign in with ChatGPT"), "the sign-in menu")),
  },
  ...turnScenarios("gemini", { idle: idleGemini, answered: "✦ ready", working: "esc to cancel", permission: ["shell", "Allow execution of"] }),
  {
    kind: "gemini", file: "blocked-real-start-trust", verdict: { state: "blocked", dialog: "start" }, trust: false,
    drive: async (w, p) => void (await waitScreen(w, p, (s) => s.includes("Do you trust the files in this folder?"), "the trust dialog")),
  },
  // opencode allows every command unless its config says ask
  ...turnScenarios("opencode", {
    idle: idleOpencode, answered: /^\s+ready\b/m, working: "esc interrupt", permission: ["bash", "Permission required"], slowStart: true,
    prepare: (w) => {
      const f = join(w.sb.with({}).HOME!, ".config", "opencode", "opencode.json");
      writeFileSync(f, JSON.stringify({ ...JSON.parse(readFileSync(f, "utf8")), permission: { bash: "ask" } }));
    },
  }),
  ...turnScenarios("qwen", { idle: idleQwen, answered: "◆︎ ready", working: "esc to cancel", permission: ["shell", "Allow execution of"] }),
  {
    kind: "qwen", file: "blocked-real-start-provider", verdict: { state: "blocked", dialog: "start" }, provider: false,
    drive: async (w, p) => void (await waitScreen(w, p, (s) => /connect a provider/i.test(s), "the provider dialog")),
  },
  // cline approves every tool unless told otherwise
  ...turnScenarios("cline", { idle: idleCline, answered: "* ready", working: "esc to cancel", permission: ["command", "Approve tool call?"], args: ["--auto-approve", "false"] }),
  {
    kind: "cline", file: "blocked-real-start-sign-in", verdict: { state: "blocked", dialog: "start" },
    prepare: (w) => rmSync(join(w.sb.with({}).HOME!, ".cline", "data", "settings", "providers.json")),
    drive: async (w, p) => void (await waitScreen(w, p, (s) => s.includes("Connect a model provider to get started"), "the sign-in", 60_000)),
  },
  {
    kind: "cline", file: "blocked-real-start-notice", verdict: { state: "blocked", dialog: "start" }, notice: true,
    drive: async (w, p) => void (await waitScreen(w, p, (s) => s.includes("Press Enter to open, any other key to close"), "the notice", 60_000)),
  },
];

async function runScenario(sc: Scenario): Promise<void> {
  const w = await realAgentWorld({
    script: sc.script ?? (() => ({ text: "ready" })),
    trustClaude: sc.trust,
    trustCodex: sc.trust,
    trustGemini: sc.trust,
    qwenProvider: sc.kind === "qwen" && sc.provider !== false,
    clineNotice: sc.notice === true,
    subscriber: sc.subscriber === true,
  });
  try {
    sc.prepare?.(w);
    const env = Object.entries(w.env).map(([k, v]) => `${k}=${v}`);
    const exe = agentExe(sc.kind);
    const cmd = sc.keepShell ? ["bash", "--noprofile", "--norc", "-c", `'${exe}'; echo "[agent exited: $?]"; exec bash --noprofile --norc`] : [exe, ...(sc.args?.(w) ?? [])];
    const r = await w.tmux(["new-session", "-d", "-P", "-F", "#{pane_id}", "-s", "cap", "-x", "200", "-y", "50", "-c", w.sb.ws, "env", ...env, ...cmd]);
    if (r.code !== 0) throw new Error(`tmux new-session failed: ${r.stderr}`);
    const pane = r.stdout.trim();
    await sc.drive(w, pane);
    // let the screen and the title settle (a spinner frame can outlive the work by a moment)
    if (sc.verdict.state !== "working") await Bun.sleep(1000);
    const text = await w.screen(pane);
    const title = (await w.tmux(["display-message", "-p", "-t", pane, "#{pane_title}"])).stdout.replace(/\n$/, "");
    const dir = join(OUT, sc.kind);
    mkdirSync(dir, { recursive: true });
    // the sandbox's random temp path would make every capture differ: name it once
    const clean = (s: string) => s.replaceAll(w.sb.root, "/tmp/mam-ra-XXXXXX");
    writeFileSync(join(dir, `${sc.file}.txt`), clean(text));
    writeFileSync(join(dir, `${sc.file}.title`), `${clean(title)}\n`);
    writeFileSync(join(dir, `${sc.file}.json`), `${JSON.stringify(sc.verdict)}\n`);
    console.error(`captured ${sc.kind}/${sc.file} (title ${JSON.stringify(title)})`);
    if (process.env.CAPTURE_RECORDS) {
      // what the agent wrote meanwhile (its transcript or rollout lines), and what the endpoint was asked
      console.error(Bun.spawnSync(["bash", "-c", `find '${w.claudeConfigDir}/projects' '${w.codexHome}/sessions' -name '*.jsonl' -exec tail -n 6 {} +`]).stdout.toString());
      console.error(w.api.requests.map((r) => `${r.method} ${r.path} ${r.status ?? 200}${r.turn ? ` main=${r.turn.main}` : ""}`).join("\n"));
    }
  } finally {
    await w.cleanup();
  }
}

if (import.meta.main) {
  const filter = process.argv[2];
  let failed = 0;
  for (const sc of SCENARIOS) {
    if (filter && !`${sc.kind}/${sc.file}`.includes(filter)) continue;
    try {
      await runScenario(sc);
    } catch (e) {
      failed++;
      console.error(`FAILED ${sc.kind}/${sc.file}: ${(e as Error).message}`);
    }
  }
  process.exit(failed ? 1 : 0);
}

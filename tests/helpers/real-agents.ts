// The real-agent harness (tests/real-agents, `npm run test:agents`): per test its own sandbox
// (temp HOME and workspace), its own scripted model endpoint (tests/fakes/model-api), its own
// CLAUDE_CONFIG_DIR (.claude.json pre-seeded: onboarding done, the test key approved, the
// workspace trusted only when asked) and CODEX_HOME (config.toml with the mock provider, trust
// only when asked), gemini's, opencode's, qwen's and cline's settings in the sandbox's HOME (the
// endpoint as their model, no update checks or telemetry; gemini trusts the workspace unless told
// otherwise, qwen has a provider only when asked, cline's one-time notices are seen unless asked;
// opencode's plugin pre-installed from the test agents' install), and its own tmux server (-L,
// socket in the sandbox). Nothing touches the user's own agent settings. mam is NOT on the env's
// PATH: tests run it by absolute path (MAM_BIN), as a user who downloaded it does. Teardown: the
// tmux server, codex's background app-server, cline's hub daemon and the gemini processes that
// outlive their pane (by pid), the endpoint, then the sandbox reaper.
// A team across machines (tests/helpers/team.ts) gets a real agent on one of its hosts with
// realAgentHost: that host's own CLAUDE_CONFIG_DIR and CODEX_HOME in its folder, trusting its
// workspace, and the agents on its PATH.
import { mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, symlinkSync, writeFileSync, existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { installTestAgents } from "../../scripts/install-test-agents.ts";
import { type ModelApi, type Script, startModelApi } from "../fakes/model-api/server.ts";
import { type RunResult, run, runMam } from "./mam.ts";
import { anchoredPids, makeSandbox, type Sandbox, waitFor } from "./sandbox.ts";
import { type Host, makeHost } from "./team.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName } from "./tmux.ts";

/** the key the agents send; claude approves keys by their last 20 characters */
export const TEST_API_KEY = "sk-ant-mam-test-0123456789abcdefghij";

let agentsBin: string | undefined;
/** the bin folder holding the pinned claude and codex (installs them on first use) */
export function testAgentsBin(): string {
  agentsBin ??= installTestAgents();
  return agentsBin;
}

/** what trusts the workspace */
export interface Trust {
  /** trust the workspace in claude's config (default true) */
  trustClaude?: boolean;
  /** trust the workspace in codex's config (default true) */
  trustCodex?: boolean;
  /** trust the workspace in gemini's trustedFolders.json (default true) */
  trustGemini?: boolean;
  /** claude as a claude.ai subscriber (SUBSCRIBER_ENV) instead of with an API key (default false) */
  subscriber?: boolean;
}

export interface RealAgentOptions extends Trust {
  script: Script;
  /** give qwen its model provider (OPENAI_* env and settings; default false: codex also reads OPENAI_API_KEY); without it, qwen's first-run dialog */
  qwenProvider?: boolean;
  /** leave cline's one-time notices (ClinePass, Cline Desktop) unseen (default false: seeded as shown) */
  clineNotice?: boolean;
  /** extra env for mam and the agents */
  env?: Record<string, string>;
}

export interface RealAgentWorld {
  sb: Sandbox;
  api: ModelApi;
  /** the private tmux server mam uses (--tmux-server) */
  server: string;
  claudeConfigDir: string;
  codexHome: string;
  /** env for mam (and so the agents): PATH has the agents and no mam */
  env: Record<string, string>;
  /** run mam by absolute path in the workspace */
  mam(args: string[], timeoutMs?: number): Promise<RunResult>;
  tmux(args: string[]): Promise<RunResult>;
  /** the visible screen of a pane, soft wraps joined */
  screen(pane: string): Promise<string>;
  /** claude's per-user config file (.claude.json), parsed */
  claudeConfig(): any;
  cleanup(): Promise<void>;
}

export function seedClaudeConfig(dir: string, ws: string | undefined): void {
  mkdirSync(dir, { recursive: true });
  const cfg: Record<string, unknown> = {
    hasCompletedOnboarding: true,
    customApiKeyResponses: { approved: [TEST_API_KEY.slice(-20)], rejected: [] },
  };
  if (ws) cfg.projects = { [ws]: { hasTrustDialogAccepted: true, allowedTools: [] } };
  writeFileSync(join(dir, ".claude.json"), `${JSON.stringify(cfg, null, 2)}\n`);
}

/** gemini's settings (shared/reference/real-gemini.md): an API key, no update check, no telemetry, folder trust on, session cleanup off */
export function seedGemini(home: string, ws: string | undefined): void {
  const dir = join(home, ".gemini");
  mkdirSync(dir, { recursive: true });
  const settings = {
    security: { auth: { selectedType: "gemini-api-key" }, folderTrust: { enabled: true } },
    ui: { theme: "Default" },
    // sessionRetention off: a later gemini start would delete a resumed conversation (a gemini bug; docs/sessions.md)
    general: { enableAutoUpdate: false, enableAutoUpdateNotification: false, sessionRetention: { enabled: false } },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    ide: { enabled: false, hasSeenNudge: true },
  };
  writeFileSync(join(dir, "settings.json"), `${JSON.stringify(settings, null, 2)}\n`);
  writeFileSync(join(dir, "trustedFolders.json"), `${JSON.stringify(ws ? { [ws]: "TRUST_FOLDER" } : {}, null, 2)}\n`);
}

/** the version of @opencode-ai/plugin opencode installs into its config folder at every start (its own version) */
const OPENCODE_PLUGIN = "@opencode-ai/plugin";

/**
 * opencode's config (real-opencode-qwen.md): the endpoint as an OpenAI-compatible provider, no
 * autoupdate or sharing; and its plugin pre-installed in the config folder (package.json, a lockfile
 * whose root names it, node_modules from the test agents' install), so opencode does not install it
 * from the npm registry at every start
 */
export function seedOpencode(home: string, apiUrl: string, agentsBin: string): void {
  const dir = join(home, ".config", "opencode");
  mkdirSync(dir, { recursive: true });
  const config = {
    $schema: "https://opencode.ai/config.json",
    model: "mock/mock-model",
    small_model: "mock/mock-model",
    autoupdate: false,
    share: "disabled",
    provider: {
      mock: {
        npm: "@ai-sdk/openai-compatible",
        name: "Mock",
        options: { baseURL: `${apiUrl}/v1`, apiKey: "mock-key" },
        models: { "mock-model": { name: "Mock Model", tool_call: true, limit: { context: 100000, output: 8000 } } },
      },
    },
  };
  writeFileSync(join(dir, "opencode.json"), `${JSON.stringify(config, null, 2)}\n`);
  const modules = dirname(agentsBin);
  const version = JSON.parse(readFileSync(join(modules, OPENCODE_PLUGIN, "package.json"), "utf8")).version as string;
  const deps = { [OPENCODE_PLUGIN]: version };
  writeFileSync(join(dir, "package.json"), `${JSON.stringify({ dependencies: deps }, null, 2)}\n`);
  writeFileSync(join(dir, "package-lock.json"), `${JSON.stringify({ lockfileVersion: 3, packages: { "": { dependencies: deps } } }, null, 2)}\n`);
  symlinkSync(modules, join(dir, "node_modules"));
}

/** qwen's settings (real-opencode-qwen.md): the OpenAI-compatible provider, no update check or telemetry, ask before tools */
export function seedQwen(home: string, provider: boolean): void {
  const dir = join(home, ".qwen");
  mkdirSync(dir, { recursive: true });
  const settings = {
    ...(provider ? { security: { auth: { selectedType: "openai" } }, model: { name: "mock-model" } } : {}),
    general: { enableAutoUpdate: false },
    privacy: { usageStatisticsEnabled: false },
    telemetry: { enabled: false },
    tools: { useRipgrep: false, approvalMode: "default" },
  };
  writeFileSync(join(dir, "settings.json"), `${JSON.stringify(settings, null, 2)}\n`);
}

/** cline's provider (as `cline auth --provider openai-compatible --baseurl …` writes it) and, unless asked, its one-time notices as shown */
export function seedCline(home: string, apiUrl: string, notice: boolean): void {
  const dir = join(home, ".cline", "data", "settings");
  mkdirSync(dir, { recursive: true });
  const settings = { provider: "openai-compatible", apiKey: "mock-key", model: "mock-model", baseUrl: `${apiUrl}/v1` };
  const providers = { version: 1, lastUsedProvider: "openai-compatible", modes: {}, providers: { "openai-compatible": { settings, updatedAt: new Date().toISOString(), tokenSource: "manual" } } };
  writeFileSync(join(dir, "providers.json"), `${JSON.stringify(providers, null, 2)}\n`);
  // the notices cline 3.0.65 shows once each (ClinePass, Cline Desktop, zen mode), as seen
  const shown = { "cline-cli-cline-pass-intro": true, "cline-cli-desktop-launch": true, "cline-cli-zen": true };
  if (!notice) writeFileSync(join(dir, "cli-notices.json"), `${JSON.stringify({ shown }, null, 2)}\n`);
}

export function seedCodexHome(dir: string, apiUrl: string, ws: string | undefined): void {
  mkdirSync(dir, { recursive: true });
  const lines = [
    `model = "mock-model"`,
    `model_provider = "mock"`,
    ``,
    `[model_providers.mock]`,
    `name = "mock"`,
    `base_url = "${apiUrl}/v1"`,
    `wire_api = "responses"`,
    `env_key = "MOCK_API_KEY"`,
  ];
  if (ws) lines.push(``, `[projects."${ws}"]`, `trust_level = "trusted"`);
  writeFileSync(join(dir, "config.toml"), `${lines.join("\n")}\n`);
}

/** any token: the endpoint checks none; claude sends it as `Authorization: Bearer` */
export const TEST_OAUTH_TOKEN = "sk-ant-oat01-mam-test-0123456789";

/**
 * claude as a claude.ai subscriber (shared/reference/real-limits.md, "Setup used"): no API key, an
 * OAuth token and a plan: its banner says `Claude Max`, and at a usage limit it says "You've hit
 * your session limit · resets …" (an API key never does)
 */
export const SUBSCRIBER_ENV = { CLAUDE_CODE_OAUTH_TOKEN: TEST_OAUTH_TOKEN, CLAUDE_CODE_SUBSCRIPTION_TYPE: "max" };

/** the env the agent CLIs need to run offline against the endpoint, isolated in the sandbox; `subscriber`: claude as a claude.ai subscriber (SUBSCRIBER_ENV, no API key) */
export function agentEnv(api: ModelApi, claudeConfigDir: string, codexHome: string, subscriber = false): Record<string, string> {
  return {
    ANTHROPIC_BASE_URL: api.url,
    ...(subscriber ? SUBSCRIBER_ENV : { ANTHROPIC_API_KEY: TEST_API_KEY }),
    CLAUDE_CONFIG_DIR: claudeConfigDir,
    CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: "1",
    DISABLE_AUTOUPDATER: "1",
    CODEX_HOME: codexHome,
    MOCK_API_KEY: "mock-key",
    GEMINI_API_KEY: "mock-key",
    GOOGLE_GEMINI_BASE_URL: api.url,
    OPENCODE_DISABLE_MODELS_FETCH: "1",
    OPENCODE_DISABLE_AUTOUPDATE: "1",
    OPENCODE_DISABLE_LSP_DOWNLOAD: "1",
  };
}

/** qwen's model provider (also read by other OpenAI clients, so only in the worlds that give it) */
export function qwenEnv(api: ModelApi): Record<string, string> {
  return { OPENAI_API_KEY: "mock-key", OPENAI_BASE_URL: `${api.url}/v1`, OPENAI_MODEL: "mock-model" };
}

/** pids of gemini processes (node …/gemini, and the child it relaunches) anchored in the sandbox: they outlive a closed pane */
export function geminiLeftovers(root: string): number[] {
  return anchoredPids(root).filter((p) => /(^|\/)gemini(\s|$)|@google\/gemini-cli/.test(cmdline(p)));
}

/** pids of cline's background hub daemons (cline --cline-hub-daemon) anchored in the sandbox: cline's, shared, they outlive the TUI */
export function clineDaemons(root: string): number[] {
  return anchoredPids(root).filter((p) => cmdline(p).includes("--cline-hub-daemon"));
}

function cmdline(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").replaceAll("\0", " ").trim();
  } catch {
    return "?";
  }
}

/** pids of codex's background app-server daemons that live under codexHome */
export function codexDaemons(codexHome: string): number[] {
  const out: number[] = [];
  for (const ent of readdirSync("/proc")) {
    if (!/^\d+$/.test(ent)) continue;
    try {
      const exe = readlinkSync(`/proc/${ent}/exe`);
      const cmd = readFileSync(`/proc/${ent}/cmdline`, "utf8");
      if ((exe.startsWith(codexHome) || cmd.startsWith(codexHome)) && cmd.includes("app-server")) out.push(Number(ent));
    } catch {}
  }
  return out;
}

/** claude's config dir and codex's home under `dir`, seeded for the endpoint, trusting `ws` unless told */
export function seedAgentConfigs(dir: string, api: ModelApi, ws: string, t: Trust = {}): { claudeConfigDir: string; codexHome: string } {
  const claudeConfigDir = join(dir, "claude-config");
  const codexHome = join(dir, "codex-home");
  seedClaudeConfig(claudeConfigDir, t.trustClaude === false ? undefined : ws);
  seedCodexHome(codexHome, api.url, t.trustCodex === false ? undefined : ws);
  return { claudeConfigDir, codexHome };
}

let newestBin: string | undefined;
/**
 * the bin folders of the agent CLIs, first found first: MAM_TEST_AGENTS=newest puts the newest
 * verified versions (tests/real-agents/newest, npm run test:agents:newest) before the pinned ones,
 * MAM_TEST_AGENTS_FIRST any other bin folder (docs/real-agents.md, "Versions")
 */
export function agentBins(): string[] {
  if (process.env.MAM_TEST_AGENTS !== undefined && process.env.MAM_TEST_AGENTS !== "newest") throw new Error(`MAM_TEST_AGENTS=${process.env.MAM_TEST_AGENTS}: only 'newest' is known`);
  if (process.env.MAM_TEST_AGENTS === "newest") newestBin ??= installTestAgents(process.env, "newest");
  return [...(newestBin && process.env.MAM_TEST_AGENTS === "newest" ? [newestBin] : []), ...(process.env.MAM_TEST_AGENTS_FIRST ? [process.env.MAM_TEST_AGENTS_FIRST] : []), testAgentsBin()];
}

/** the path of an agent CLI the tests run (agentBins' first) */
export const agentExe = (exe: string): string => agentBins().map((b) => join(b, exe)).find((p) => existsSync(p)) ?? join(testAgentsBin(), exe);

/** the agents and the system, never a mam: the tests run mam by absolute path */
export const agentsPath = (first?: string) => [...(first ? [first] : []), ...agentBins(), "/usr/local/bin", "/usr/bin", "/bin"].join(":");

/** end codex's background app-servers under codexHome (SIGTERM, then SIGKILL after a grace time) */
export async function endCodexDaemons(codexHome: string): Promise<void> {
  for (const pid of codexDaemons(codexHome)) {
    try {
      process.kill(pid, "SIGTERM");
    } catch {}
  }
  // it may wait for a model request still under way
  if (await waitFor(() => codexDaemons(codexHome).length === 0, 3000, 100)) return;
  for (const pid of codexDaemons(codexHome)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {}
  }
  await waitFor(() => codexDaemons(codexHome).length === 0, 3000, 100);
}

export async function realAgentWorld(o: RealAgentOptions): Promise<RealAgentWorld> {
  if (!TMUX_BIN) throw new Error("tmux is not installed: the real-agent tests need it (apt install tmux)");
  const sb = makeSandbox("mam-ra-");
  const api = startModelApi(o.script);
  const { claudeConfigDir, codexHome } = seedAgentConfigs(sb.root, api, sb.ws, o);
  const home = sb.with({}).HOME!;
  seedGemini(home, o.trustGemini === false ? undefined : sb.ws);
  seedOpencode(home, api.url, testAgentsBin());
  seedQwen(home, o.qwenProvider === true);
  seedCline(home, api.url, o.clineNotice === true);
  const server = tmuxServerName("mamra");
  const env = sb.with({
    PATH: agentsPath(sb.bin),
    TMUX_TMPDIR: sb.root,
    // no broker configured (MQTT_BROKER unset): the journal is the channel, as on a fresh machine
    MQTT_BROKER: undefined,
    MQTT_PORT: undefined,
    // mam waits for the real prompt, as for a user
    MAM_PROMPT_WAIT_S: undefined,
    ...agentEnv(api, claudeConfigDir, codexHome, o.subscriber === true),
    ...(o.qwenProvider === true ? qwenEnv(api) : {}),
    ...o.env,
  });
  const tmux = (args: string[]) => run([TMUX_BIN!, "-L", server, ...args], { env, timeoutMs: 20_000 });
  return {
    sb,
    api,
    server,
    claudeConfigDir,
    codexHome,
    env,
    mam: (args, timeoutMs = 120_000) => runMam(args, { env, cwd: sb.ws, timeoutMs }),
    tmux,
    screen: async (pane) => (await tmux(["capture-pane", "-p", "-J", "-t", pane])).stdout,
    claudeConfig: () => JSON.parse(readFileSync(join(claudeConfigDir, ".claude.json"), "utf8")),
    async cleanup() {
      await killTmuxServer(server, env);
      // gemini survives the hangup of its closed pane, cline's hub daemon outlives the TUI: end them as their user would
      for (const pid of [...geminiLeftovers(sb.root), ...clineDaemons(sb.root)]) {
        try {
          process.kill(pid, "SIGTERM");
        } catch {}
      }
      // the agents take a moment to go after their terminal does (codex waits for its requests)
      await waitFor(() => anchoredPids(sb.root).every((p) => codexDaemons(codexHome).includes(p)), 10_000, 100);
      await endCodexDaemons(codexHome);
      await api.stop();
      const left = anchoredPids(sb.root).map((p) => `${p}: ${cmdline(p)}`);
      try {
        await sb.cleanup();
      } catch (e) {
        throw new Error(`${(e as Error).message}\n${left.join("\n")}`);
      }
    },
  };
}

/**
 * claude's prompt box is on screen: its footer says "? for shortcuts" (2.1.197) or, with auto mode
 * the default (2.1.332), "auto mode on (shift+tab to cycle)"
 */
export const claudeFooter = (s: string) => s.includes("? for shortcuts") || s.includes("auto mode on (shift+tab to cycle)");

/** wait until the pane's screen satisfies `pred`; throws with the screen when it never does */
export async function waitScreen(w: RealAgentWorld, pane: string, pred: (s: string) => boolean, what: string, timeoutMs = 30_000): Promise<string> {
  let s = "";
  if (await waitFor(async () => pred((s = await w.screen(pane))), timeoutMs, 200)) return s;
  throw new Error(`pane ${pane} never showed ${what}; it shows:\n${s}`);
}

/**
 * type text into a pane by hand (the harness's own tests, not mam) and submit it: Enter, and
 * Enter again while the endpoint has not seen a new main turn (codex can drop an Enter that comes
 * right after typed text)
 */
export async function typeAndSubmit(w: RealAgentWorld, pane: string, text: string): Promise<void> {
  const before = w.api.turns().length;
  await w.tmux(["send-keys", "-t", pane, "-l", text]);
  for (let i = 0; i < 4; i++) {
    await Bun.sleep(400);
    await w.tmux(["send-keys", "-t", pane, "Enter"]);
    if (await waitFor(() => w.api.turns().length > before, 3000, 100)) return;
  }
  throw new Error(`the text typed into ${pane} never reached the model; the pane shows:\n${await w.screen(pane)}`);
}

export interface RealAgentHost extends Host {
  api: ModelApi;
  claudeConfigDir: string;
  codexHome: string;
  /** the visible screen of a session's pane, soft wraps joined (what mam's detector reads) */
  visible(session: string): string;
}

/**
 * a host of a team (makeHost) whose agents are the real CLIs: its own CLAUDE_CONFIG_DIR and
 * CODEX_HOME in its folder, seeded for `api` and trusting its workspace unless told, the agents on
 * its PATH and no mam; stop() also waits for the agents to go and ends codex's app-server
 */
export function realAgentHost(root: string, name: string, brokerEnv: Record<string, string>, api: ModelApi, t: Trust = {}): RealAgentHost {
  if (!TMUX_BIN) throw new Error("tmux is not installed: the real-agent tests need it (apt install tmux)");
  const dir = join(root, name);
  const ws = join(dir, "ws");
  mkdirSync(ws, { recursive: true });
  const { claudeConfigDir, codexHome } = seedAgentConfigs(dir, api, realpathSync(ws), t);
  const h = makeHost(root, name, brokerEnv, { PATH: agentsPath(), ...agentEnv(api, claudeConfigDir, codexHome, t.subscriber === true) });
  const stopHost = h.stop;
  return Object.assign(h, {
    api,
    claudeConfigDir,
    codexHome,
    visible(session: string) {
      return Bun.spawnSync([TMUX_BIN!, "-L", h.tmux, "capture-pane", "-p", "-J", "-t", `=${session}:`], { env: h.env }).stdout.toString();
    },
    async stop() {
      await stopHost();
      // the agents take a moment to go after their terminal does
      await waitFor(() => anchoredPids(dir).every((p) => codexDaemons(codexHome).includes(p)), 10_000, 100);
      await endCodexDaemons(codexHome);
    },
  });
}

/** the end of a test file's real-agent host: its agents and daemon, the endpoint, then the sandbox once nothing of it runs */
export async function endRealAgentHost(h: RealAgentHost | undefined, api: ModelApi | undefined, sb: Sandbox | undefined): Promise<void> {
  await h?.stop();
  await api?.stop();
  if (sb) await waitFor(() => anchoredPids(sb.root).length === 0, 10_000, 100);
  await sb?.cleanup();
}

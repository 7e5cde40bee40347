// Which mam the agents' texts name (lib/sys/agent-mam.ts) and what mam pre-approves in them
// (each kind's `grants`, lib/agents/kinds/): the words are `mam` only when a login PATH finds this
// very binary; a grant matches every command the header, the loop texts and the onboarding tell
// the agent to run.
import { afterAll, afterEach, describe, expect, test } from "bun:test";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, realpathSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { claudeRules } from "../../lib/agents/kinds/claude.ts";
import { grantArgs, kindNames } from "../../lib/agents/kinds/index.ts";
import { GRANTED_COMMANDS } from "../../lib/agents/kinds/kind.ts";
import { feedbackRequest, jobHeader, reviewRequest } from "../../lib/jobs/header.ts";
import { eventLine } from "../fakes/model-api/scripts.ts";
import type { JobRecord } from "../../lib/jobs/store.ts";
import { loopJob } from "../helpers/job-record.ts";
import { onboardingText } from "../../lib/ops/session/create.ts";
import { agentMam, loginPathDirs, resolveAgentMam } from "../../lib/sys/agent-mam.ts";
import { selfCommand } from "../../lib/sys/self.ts";
import { shq } from "../../lib/sys/shell.ts";

const root = realpathSync(mkdtempSync(join(tmpdir(), "mam-grants-")));
afterAll(() => rmSync(root, { recursive: true, force: true }));
let n = 0;

/** a fake compiled mam binary at `dir/name` */
function binary(dir: string, name = "mam"): string {
  mkdirSync(dir, { recursive: true });
  const p = join(dir, name);
  writeFileSync(p, "#!/bin/sh\n");
  chmodSync(p, 0o755);
  return p;
}

function home(): string {
  const h = join(root, `home${++n}`);
  mkdirSync(h, { recursive: true });
  return h;
}

describe("agentMam: the words that run mam in an agent's shell", () => {
  test("MAM_AGENT_MAM is used verbatim; an empty one is ignored", () => {
    const self = { command: ["/opt/mam/mam"], compiled: true };
    expect(resolveAgentMam({ MAM_AGENT_MAM: "'/my tools/mam' --x" }, self)).toBe("'/my tools/mam' --x");
    expect(resolveAgentMam({ MAM_AGENT_MAM: "", HOME: home() }, self)).toBe("/opt/mam/mam");
    expect(agentMam({ MAM_AGENT_MAM: "mam" })).toBe("mam");
  });

  test("the running binary found as `mam` on a login PATH (through a symlink) → mam", () => {
    const h = home();
    const bin = binary(join(root, `dl${++n}`));
    mkdirSync(join(h, ".local", "bin"), { recursive: true });
    symlinkSync(bin, join(h, ".local", "bin", "mam"));
    expect(resolveAgentMam({ HOME: h }, { command: [bin], compiled: true })).toBe("mam");
    // ~/bin is searched too; a file there that is not executable does not count
    const h2 = home();
    binary(join(h2, ".local", "bin"));
    chmodSync(join(h2, ".local", "bin", "mam"), 0o644);
    mkdirSync(join(h2, "bin"));
    symlinkSync(bin, join(h2, "bin", "mam"));
    expect(resolveAgentMam({ HOME: h2 }, { command: [bin], compiled: true })).toBe("mam");
  });

  test("another mam first on the login PATH, or none → the absolute path", () => {
    const bin = binary(join(root, `dl${++n}`));
    const h = home();
    binary(join(h, ".local", "bin")); // a different file named mam
    mkdirSync(join(h, "bin"));
    symlinkSync(bin, join(h, "bin", "mam")); // ours, but later on the PATH: the shell runs the other
    expect(resolveAgentMam({ HOME: h }, { command: [bin], compiled: true })).toBe(bin);
    expect(resolveAgentMam({ HOME: home() }, { command: [bin], compiled: true })).toBe(bin);
    expect(resolveAgentMam({}, { command: [bin], compiled: true })).toBe(bin);
  });

  test("a path that needs quoting is shell-quoted", () => {
    const bin = binary(join(root, `my downloads ${++n}`));
    expect(resolveAgentMam({ HOME: home() }, { command: [bin], compiled: true })).toBe(`'${bin}'`);
    expect(shq("/a/it's mam")).toBe(`'/a/it'\\''s mam'`);
  });

  test("from source: bun and mam.ts, each quoted when needed; never a `mam` on PATH", () => {
    const h = home();
    mkdirSync(join(h, "bin"));
    symlinkSync(binary(join(root, `src${++n}`)), join(h, "bin", "mam"));
    expect(resolveAgentMam({ HOME: h }, { command: ["/x/bun", "/y/my repo/mam.ts"], compiled: false })).toBe(`/x/bun '/y/my repo/mam.ts'`);
    // this test process runs from source
    expect(agentMam({ HOME: h })).toBe(selfCommand().map(shq).join(" "));
  });

  test("the login PATH: the user's own bin folders first, then the system's", () => {
    expect(loginPathDirs("/h")).toEqual(["/h/.local/bin", "/h/bin", "/usr/local/bin", "/usr/bin", "/bin"]);
    expect(loginPathDirs(undefined)).toEqual(["/usr/local/bin", "/usr/bin", "/bin"]);
  });
});

const T = "2027-01-01T00:00:00Z";
function job(over: Partial<JobRecord> = {}): JobRecord {
  return loopJob({ expected_artifacts: ["out.md"], ...over }, T);
}
const WS = "/work/my ws";
const WT = { path: "/work/my ws/.mam/worktrees/wrk", branch: "feat-x", base: "main", base_commit: "0123abc" };

describe("grants: claude's allow rules match every mam command the agent is told to run", () => {
  const saved = process.env.MAM_AGENT_MAM;
  afterEach(() => {
    if (saved === undefined) delete process.env.MAM_AGENT_MAM;
    else process.env.MAM_AGENT_MAM = saved;
  });

  test("claude: exactly three rules, each its own --allowedTools= argument", () => {
    expect(GRANTED_COMMANDS).toEqual(["job event", "job status", "status"]);
    expect(grantArgs("claude", {}, "/opt/mam")).toEqual([
      "--allowedTools=Bash(/opt/mam job event:*)",
      "--allowedTools=Bash(/opt/mam job status:*)",
      "--allowedTools=Bash(/opt/mam status:*)",
    ]);
    expect(grantArgs("claude", { MAM_AGENT_MAM: "mam" })).toEqual(claudeRules("mam").map((r) => `--allowedTools=${r}`));
  });

  test("gemini: a policy file with one allow rule of exactly mam's command prefixes, kept in mam's state folder", () => {
    const home = mkdtempSync(join(tmpdir(), "mam-grant-"));
    try {
      const args = grantArgs("gemini", { HOME: home }, "/opt/my mam");
      expect(args).toHaveLength(2);
      expect(args[0]).toBe("--policy");
      expect(args[1]).toStartWith(join(home, ".local", "state", "mam", "grants") + "/");
      const toml = Bun.TOML.parse(readFileSync(args[1]!, "utf8")) as { rule: Record<string, unknown>[] };
      expect(toml.rule).toEqual([
        { toolName: "run_shell_command", commandPrefix: ["/opt/my mam job event", "/opt/my mam job status", "/opt/my mam status"], decision: "allow", priority: 100 },
      ]);
      expect(statSync(args[1]!).mode & 0o777).toBe(0o600);
      // the same text, the same file; another mam, another file
      expect(grantArgs("gemini", { HOME: home }, "/opt/my mam")).toEqual(args);
      expect(grantArgs("gemini", { HOME: home }, "mam")[1]).not.toBe(args[1]);
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });

  test("qwen: one --allowed-tools= prefix rule of its shell tool per command", () => {
    expect(grantArgs("qwen", {}, "/opt/mam")).toEqual(GRANTED_COMMANDS.map((c) => `--allowed-tools=run_shell_command(/opt/mam ${c})`));
  });

  test("every other kind gets no arguments, but copilot (from its docs, unverified)", () => {
    for (const k of kindNames().filter((k) => !["claude", "gemini", "qwen", "copilot"].includes(k))) expect(grantArgs(k, {}, "mam")).toEqual([]);
    expect(grantArgs("copilot", {}, "mam")).toEqual(GRANTED_COMMANDS.map((c) => `--allow-tool=shell(mam ${c}:*)`));
  });

  for (const [label, mam] of [
    ["this process's own words", undefined],
    ["mam", "mam"],
    ["an absolute path with a space", "'/opt/my tools/mam'"],
  ] as const) {
    test(`the header, review, feedback and onboarding commands all begin with a granted prefix (${label})`, () => {
      if (mam !== undefined) process.env.MAM_AGENT_MAM = mam;
      else delete process.env.MAM_AGENT_MAM;
      const m = agentMam();
      const prefixes = claudeRules(m).map((r) => /^Bash\((.*):\*\)$/.exec(r)![1]!);
      expect(prefixes).toEqual([`${m} job event`, `${m} job status`, `${m} status`]);
      const granted = (cmd: string) => prefixes.some((p) => cmd === p || cmd.startsWith(`${p} `));
      // the header: every indented line is a command to run
      for (const j of [job(), job({ worktree: WT }), job({ type: "single", reviewer_session: undefined })]) {
        const cmds = jobHeader(j, "wrk", WS).split("\n").filter((l) => l.startsWith("  ")).map((l) => l.trim());
        expect(cmds).toHaveLength(4);
        for (const c of cmds) expect(granted(c), c).toBe(true);
        // the scripted model of the real-agent tests runs these lines whole
        expect(eventLine(jobHeader(j, "wrk", WS), "started")).toBe(cmds[0]!);
      }
      // review and feedback: every command that names mam (the review's git lines are the reviewer's own)
      for (const text of [reviewRequest(job({ worktree: WT }), WS, "done"), feedbackRequest(job(), WS, "rename it", 2)]) {
        const cmds = text.split("\n").filter((l) => l.startsWith("  ") && !l.trim().startsWith("git ")).map((l) => l.trim());
        expect(cmds.length).toBeGreaterThanOrEqual(3);
        for (const c of cmds) expect(granted(c), c).toBe(true);
      }
      // the onboarding: each `…` command span that names mam's job event / status
      const onb = onboardingText("wrk", "claude", "worker", WS);
      const spans = [...onb.matchAll(/`([^`]*)`/g)].map((x) => x[1]!).filter((s) => / (job event|status)\b/.test(s));
      expect(spans.length).toBeGreaterThanOrEqual(5);
      for (const s of spans) expect(granted(s), s).toBe(true);
    });
  }

  test("the onboarding names mam as the header does, and says so when that is not `mam`", () => {
    expect(onboardingText("w", "claude", "worker", WS, undefined, "mam")).not.toContain("Where the mam skills say");
    const t = onboardingText("w", "claude", "worker", WS, undefined, "/dl/mam");
    expect(t).toContain("`/dl/mam job event <id> started`");
    expect(t).toContain("`/dl/mam status` shows the team");
    expect(t).toContain("Where the mam skills say `mam`, run `/dl/mam`.");
    expect(t).not.toContain("{{");
  });
});

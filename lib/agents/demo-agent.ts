// The built-in demo agent (SPEC §8): reads prompts from its terminal and reports job events the
// way a real agent following mam's job header would, by running `mam job event …` (itself).
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { isAbsolute, join, normalize } from "node:path";
import { childEnv, selfCommand } from "../sys/self.ts";
import { demoUsageFile } from "./kinds/demo.ts";

export interface DemoAgentOptions {
  /** only what its banner says: it does jobs and reviews whatever it is told (undefined: not given) */
  role?: "worker" | "reviewer";
  /** a reviewer passes on this review (earlier ones send feedback) */
  passOn: number;
  thinkMs: number;
  /**
   * a worker asks before its job's "command" in a permission dialog, as claude does (one per job),
   * so that `mam approve`, notifications and the dashboard's buttons can be tried without an account
   */
  dialog?: boolean;
  print: (line: string) => void;
}

export interface PromptJob {
  id: string;
  source: string;
  ws: string;
}

/**
 * a header's event command, whatever words name mam before `job event` (agentMam: `mam`, an
 * absolute path, a quoted one, or bun and mam.ts from source); the demo agent runs itself
 */
const EVENT_CMD = /(?:^|\s)job event ([0-9a-f]{8}) [a-z_]+ --source ('(?:[^']|'\\'')*'|\S+) --workspace ('(?:[^']|'\\'')*'|\S+)/;

function unquote(s: string): string {
  return s.startsWith("'") ? s.slice(1, -1).replaceAll(`'\\''`, "'") : s;
}

/** the job a prompt is about: its id, the source to report as, the workspace */
export function jobOf(prompt: string): PromptJob | undefined {
  const m = EVENT_CMD.exec(prompt);
  return m ? { id: m[1]!, source: unquote(m[2]!), ws: unquote(m[3]!) } : undefined;
}

export type DemoStep =
  | { event: string; detail: string }
  | { write: string; in?: string }
  | { say: string }
  | { ask: string }
  /** commit what it wrote in its worktree (a job in a worktree asks it to) */
  | { commit: string; message: string }
  /** a merge queue's conflict job: rebase onto the target, keeping its own side of each conflict */
  | { rebase: string; onto: string };

/** the worktree a job's header asks the agent to work in (lib/jobs/header.ts worktreeLine) */
export function worktreeOfPrompt(prompt: string): { path: string; branch: string } | undefined {
  const m = /^Work in your git worktree (.+?) on branch (\S+) \(made from /m.exec(prompt);
  return m ? { path: m[1]!, branch: m[2]! } : undefined;
}

/** a review request: mam's loop sends it with this header line */
function isReview(prompt: string): boolean {
  return /\[mam\] Review for job/.test(prompt);
}

/** a job for the worker: a job header, or the reviewer's feedback */
function isWork(prompt: string): boolean {
  return /\[mam\] Job [0-9a-f]{8} (delegated to you|iteration \d+ of \d+: reviewer .* asks for changes)/.test(prompt);
}

/** what the demo agent does with one prompt (pure, so tests can pin it) */
export function demoSteps(prompt: string, o: Pick<DemoAgentOptions, "passOn" | "dialog">, reviewsSoFar: number): DemoStep[] {
  const job = jobOf(prompt);
  // only a whole request (its [mam] header line included) is acted on: a fragment of one (the
  // last line arriving with the late Enter) is not a second request
  if (!job || (!isReview(prompt) && !isWork(prompt))) return [{ say: "ready" }];
  if (isReview(prompt)) {
    const review = reviewsSoFar + 1;
    return review >= o.passOn
      ? [{ event: "progress", detail: `reviewing (review ${review})` }, { event: "completed", detail: "PASS: looks good" }]
      : [{ event: "progress", detail: `reviewing (review ${review})` }, { event: "completed", detail: "feedback: please also handle the empty input" }];
  }
  const steps: DemoStep[] = [];
  if (/delegated to you/.test(prompt)) steps.push({ event: "started", detail: "demo agent on it" });
  const artifacts = /^Expected artifacts: (.+)$/m.exec(prompt)?.[1]?.split(",").map((s) => s.trim()).filter(Boolean) ?? [];
  steps.push({ event: "progress", detail: /asks for changes/.test(prompt) ? "addressing the feedback" : "working" });
  // a new job's "command" waits for the user's yes (a job's feedback does not ask again)
  if (o.dialog && /delegated to you/.test(prompt)) steps.push({ ask: artifacts.length ? `write ${artifacts.join(" ")}` : "echo hello" });
  const wt = worktreeOfPrompt(prompt);
  // a merge queue's conflict job (lib/ops/job/merge-plan.ts conflictPrompt): the scripted fix
  const conflict = /mam's merge queue could not rebase your branch (\S+) onto (\S+) /.exec(prompt);
  if (wt && conflict) steps.push({ rebase: wt.path, onto: conflict[2]! });
  for (const a of artifacts) steps.push(wt ? { write: a, in: wt.path } : { write: a });
  if (wt && artifacts.length) steps.push({ commit: wt.path, message: `demo agent: ${artifacts.join(", ")}` });
  const task = /^Task: (.+)$/m.exec(prompt)?.[1] ?? "the job";
  steps.push({ event: "completed", detail: /asks for changes/.test(prompt) ? "feedback addressed" : `done: ${task.slice(0, 60)}` });
  return steps;
}

/**
 * tell herdr the demo agent's state: `${HERDR_BIN_PATH:-herdr}` (herdr 0.8.0 sets HERDR_BIN_PATH
 * only in plugin panes; a normal pane finds herdr on PATH); best effort
 */
async function reportHerdr(state: "idle" | "working" | "blocked"): Promise<void> {
  const pane = process.env.HERDR_PANE_ID;
  if (!pane) return;
  const bin = process.env.HERDR_BIN_PATH || Bun.which("herdr");
  if (!bin) return;
  try {
    const p = Bun.spawn([bin, "pane", "report-agent", pane, "--source", "custom:mam-demo", "--agent", "demo", "--state", state], {
      stdin: "ignore",
      stdout: "ignore",
      stderr: "ignore",
    });
    await p.exited;
  } catch {}
}

async function runEvent(job: PromptJob, event: string, detail: string, print: (l: string) => void): Promise<void> {
  const args = ["job", "event", job.id, event, "--source", job.source, "--workspace", job.ws, "--detail", detail];
  print(`$ mam ${args.join(" ")}`);
  const p = Bun.spawn([...selfCommand(), ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe", env: childEnv() });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  for (const l of `${out}${err}`.split("\n").filter(Boolean)) print(`  ${l}`);
  if (code !== 0) print(`  (exit ${code})`);
}

/** git in the demo's worktree, as the demo agent (its own name on its commits) */
async function demoGit(dir: string, args: string[], print: (l: string) => void): Promise<number> {
  const p = Bun.spawn(["git", "-C", dir, "-c", "user.name=mam demo agent", "-c", "user.email=demo-agent@mam.invalid", "-c", "core.editor=true", ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe", env: { ...childEnv(), GIT_EDITOR: "true" } });
  const [out, err, code] = await Promise.all([new Response(p.stdout).text(), new Response(p.stderr).text(), p.exited]);
  print(`$ git ${args.join(" ")}`);
  for (const l of `${out}${err}`.split("\n").filter(Boolean).slice(0, 8)) print(`  ${l}`);
  return code;
}

/** commit everything in the worktree */
async function commitAll(dir: string, message: string, print: (l: string) => void): Promise<void> {
  await demoGit(dir, ["add", "-A"], print);
  await demoGit(dir, ["commit", "-q", "-m", message], print);
}

/** rebase onto the target; each conflict is resolved with the demo's own side (a real agent would merge both) */
async function rebaseOwnSide(dir: string, onto: string, print: (l: string) => void): Promise<void> {
  if ((await demoGit(dir, ["rebase", onto], print)) === 0) return;
  for (let i = 0; i < 50; i++) {
    const p = Bun.spawn(["git", "-C", dir, "diff", "--name-only", "--diff-filter=U"], { stdin: "ignore", stdout: "pipe", stderr: "ignore" });
    const files = (await new Response(p.stdout).text()).split("\n").filter(Boolean);
    if (files.length === 0) break;
    // in a rebase, "theirs" is the commit being replayed: the demo's own change
    await demoGit(dir, ["checkout", "--theirs", "--", ...files], print);
    await demoGit(dir, ["add", "--", ...files], print);
    if ((await demoGit(dir, ["rebase", "--continue"], print)) === 0) return;
  }
}

function writeArtifact(ws: string, rel: string, print: (l: string) => void, who = ""): void {
  const n = normalize(rel);
  if (isAbsolute(n) || n.startsWith("..")) {
    print(`skipping artifact outside the workspace: ${rel}`);
    return;
  }
  const p = join(ws, n);
  mkdirSync(join(p, ".."), { recursive: true });
  writeFileSync(p, `written by the mam demo agent${who ? ` ${who}` : ""} at ${new Date().toISOString()}\n`);
  print(`wrote ${n}`);
}

/**
 * made-up token counts for one "answer" (the demo calls no model): about a token per four
 * characters read and written, so longer prompts and reports cost more; labelled synthetic
 */
export function syntheticTokens(prompt: string, detail: string): { input: number; output: number } {
  return { input: 120 + Math.ceil(prompt.length / 4), output: 12 + Math.ceil(detail.length / 4) };
}

/**
 * append a line to this session's synthetic usage file (lib/agents/kinds/demo.ts reads it, as the
 * meter reads a real agent's transcript); best effort: a demo that cannot write it shows no cost
 */
function recordUsage(job: PromptJob, line: Record<string, unknown>): void {
  try {
    const f = demoUsageFile(job.ws, job.source);
    mkdirSync(join(f, ".."), { recursive: true, mode: 0o700 });
    appendFileSync(f, `${JSON.stringify({ ...line, synthetic: true, at: new Date().toISOString() })}\n`, { mode: 0o600 });
  } catch {}
}

/** the demo's permission dialog: its lines are read by demo.screen.json as claude's are by its rules */
export function dialogLines(command: string): string[] {
  return [
    "",
    " Demo command",
    "",
    `   ${command}`,
    "   (the demo agent asks first, as a real agent asks before a command)",
    "",
    " Do you want to proceed?",
    " ❯ 1. Yes",
    "   2. No",
    "",
    " Esc to cancel · mam approve answers it from anywhere",
  ];
}

/** a key typed while the dialog shows: 1 (yes), 2 or Esc (no); anything else is no answer yet */
export function answerOf(key: string): boolean | undefined {
  const k = key[0];
  if (k === "1") return true;
  if (k === "2" || k === "\u001b" || k === "\u0003") return false;
  return undefined;
}

/** the terminal hands over each key as it is typed (raw) while a dialog waits for one */
function rawKeys(on: boolean): void {
  try {
    if (process.stdin.isTTY) process.stdin.setRawMode(on);
  } catch {}
}

export async function runDemoAgent(o: DemoAgentOptions): Promise<number> {
  const reviews = new Map<string, number>();
  // the dialog that waits for a key: the input loop hands it the next one
  let answer: ((key: string) => void) | undefined;
  const ask = (command: string): Promise<boolean> =>
    new Promise((resolve) => {
      for (const l of dialogLines(command)) o.print(l);
      rawKeys(true);
      answer = (key) => {
        const yes = answerOf(key);
        if (yes === undefined) return;
        answer = undefined;
        rawKeys(false);
        // the dialog leaves the screen, as claude redraws it
        o.print("\u001b[H\u001b[2J");
        o.print(yes ? `● ran: ${command}` : "● Interrupted · the user said no");
        resolve(yes);
      };
    });
  o.print(`demo agent (${o.role ?? "it does jobs, and reviews when asked"}) ready; type /exit to leave`);
  await reportHerdr("idle");
  let buf: string[] = [];
  let timer: ReturnType<typeof setTimeout> | undefined;
  let queue = Promise.resolve();
  const handle = (prompt: string) => {
    queue = queue.then(async () => {
      const job = jobOf(prompt);
      await reportHerdr("working");
      const steps = demoSteps(prompt, o, job ? (reviews.get(job.id) ?? 0) : 0);
      // a job taken shows on the screen at once, as a real agent's spinner does: its LIVE is
      // "working" (demo.screen.json) while it thinks, not "unknown". On a line of its own: the
      // job's last line (typed before its late Enter) may still hold the cursor
      if (steps.some((s) => "event" in s)) {
        o.print(`\n  on job ${job!.id}`);
        recordUsage(job!, { demo_usage: "turn", text: prompt });
      }
      if (job && isReview(prompt)) reviews.set(job.id, (reviews.get(job.id) ?? 0) + 1);
      let refused: string | undefined;
      for (const s of steps) {
        if ("say" in s) o.print(s.say);
        else if ("ask" in s) {
          await reportHerdr("blocked");
          if (!(await ask(s.ask))) refused = s.ask;
          await reportHerdr("working");
        } else if ("write" in s) {
          if (refused === undefined) writeArtifact(s.in ?? job!.ws, s.write, o.print, s.in ? job!.source : "");
        } else if ("commit" in s) {
          if (refused === undefined) await commitAll(s.commit, s.message, o.print);
        } else if ("rebase" in s) {
          await rebaseOwnSide(s.rebase, s.onto, o.print);
        } else {
          if (refused !== undefined && s.event === "completed") s.detail = `done without ${refused} (the user said no)`;
          await Bun.sleep(o.thinkMs);
          // the made-up answer comes before the command it "asks" for, as a real one does
          recordUsage(job!, { demo_usage: "answer", id: crypto.randomUUID(), ...syntheticTokens(prompt, s.detail) });
          await runEvent(job!, s.event, s.detail, o.print);
        }
      }
      await reportHerdr("idle");
      o.print("> ");
    });
  };
  const decoder = new TextDecoder();
  let pending = "";
  for await (const chunk of Bun.stdin.stream()) {
    pending += decoder.decode(chunk, { stream: true });
    if (answer) {
      // a dialog is up: the keys are its answer, not a prompt
      const keys = pending;
      pending = "";
      answer(keys);
      continue;
    }
    let nl: number;
    while ((nl = pending.indexOf("\n")) >= 0) {
      const line = pending.slice(0, nl).replace(/\r$/, "").replace(/\u001b\[20[01]~/g, "");
      pending = pending.slice(nl + 1);
      if (line.trim() === "/exit") {
        await queue;
        o.print("bye");
        return 0;
      }
      buf.push(line);
      // a prompt is the lines that arrive together; it ends after a short quiet spell
      clearTimeout(timer);
      timer = setTimeout(() => {
        const text = buf.join("\n").trim();
        buf = [];
        if (text) handle(text);
      }, 200);
    }
  }
  await queue;
  return 0;
}

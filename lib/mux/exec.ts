// Running a multiplexer CLI (herdr, tmux) as a child: explicit env (Bun.spawn would otherwise use
// the launch-time environment, bun-craft §2.3), a deadline per call, output captured, always reaped.
import type { Env } from "../sys/paths.ts";
import { shq } from "../sys/shell.ts";

export interface ExecResult {
  code: number | null;
  signal: string | null;
  stdout: string;
  stderr: string;
  timedOut: boolean;
  ms: number;
}

export interface ExecOptions {
  env: Env;
  timeoutMs: number;
  cwd?: string;
  stdin?: string;
  /** kill the child (SIGKILL) when this aborts; the result then says timedOut */
  signal?: AbortSignal;
}

/** env without undefined values, as Bun.spawn wants it */
export function cleanEnv(env: Env, drop: string[] = []): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && !drop.includes(k)) out[k] = v;
  return out;
}

async function drain(stream: ReadableStream<Uint8Array> | undefined, deadline: Promise<void>): Promise<string> {
  if (!stream) return "";
  const text = new Response(stream).text();
  // a grandchild that kept the pipe open must not hang us after a kill
  return Promise.race([text, deadline.then(() => "")]);
}

export async function execCapture(argv: string[], opts: ExecOptions): Promise<ExecResult> {
  const t0 = performance.now();
  const proc = Bun.spawn(argv, {
    env: cleanEnv(opts.env),
    cwd: opts.cwd,
    stdin: opts.stdin !== undefined ? new TextEncoder().encode(opts.stdin) : "ignore",
    stdout: "pipe",
    stderr: "pipe",
  });
  let timedOut = false;
  let release!: () => void;
  const afterKill = new Promise<void>((r) => (release = r));
  const kill = () => {
    timedOut = true;
    try {
      proc.kill("SIGKILL");
    } catch {}
    setTimeout(release, 500);
  };
  const timer = setTimeout(kill, opts.timeoutMs);
  if (opts.signal?.aborted) kill();
  else opts.signal?.addEventListener("abort", kill, { once: true });
  try {
    const [stdout, stderr] = await Promise.all([drain(proc.stdout, afterKill), drain(proc.stderr, afterKill)]);
    const code = await proc.exited;
    return { code: timedOut ? null : code, signal: proc.signalCode == null ? null : String(proc.signalCode), stdout, stderr, timedOut, ms: performance.now() - t0 };
  } finally {
    clearTimeout(timer);
    opts.signal?.removeEventListener("abort", kill);
    release();
  }
}

/** the first bytes of a text, on one line, for error messages */
export function firstBytes(text: string, n = 120): string {
  const t = text.replace(/\s+/g, " ").trim();
  if (t === "") return "(nothing)";
  return JSON.stringify(t.length > n ? `${t.slice(0, n)}…` : t);
}

/** the words as one POSIX-shell command line, each quoted only when needed */
export function shJoin(argv: string[]): string {
  return argv.map(shq).join(" ");
}

const ANSI_RE = /\u001b\[[0-9;?]*[ -\/]*[@-~]|\u001b\][^\u0007\u001b]*(?:\u0007|\u001b\\)|\u001b[@-Z\\-_]/g;

/** a line that is only a shell prompt ("$ ", "user@host:~/ws$ ", "ws % ", "❯ ") */
const PROMPT_ONLY = /^.{0,80}[$#%>❯›]\s*$/;

/**
 * The last lines of a pane's output for an error message: ANSI stripped, blank lines, the
 * multiplexer's own "Pane is dead" notice, trailing prompt-only lines and the echo of the typed
 * command (`typed`) dropped; the last `n` lines joined with " | ".
 */
export function lastOutput(text: string, n = 5, typed?: string, maxChars = 400): string {
  const lines = text
    .replace(ANSI_RE, "")
    .split(/\r?\n/)
    .map((l) => l.replace(/\r/g, "").trimEnd())
    .filter((l) => l.trim() !== "" && !/^Pane is dead \(/.test(l))
    .filter((l) => !typed || !l.endsWith(typed));
  while (lines.length > 0 && PROMPT_ONLY.test(lines[lines.length - 1]!)) lines.pop();
  if (lines.length === 0) return "(no output)";
  let s = lines.slice(-n).join(" | ");
  if (s.length > maxChars) s = `…${s.slice(s.length - maxChars)}`;
  return s;
}

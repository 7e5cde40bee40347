// Sending notifications to the user's sinks (docs/notifications.md): a desktop notification
// (notify-send), a webhook (a JSON POST: mam's shape, ntfy's or Slack's), a command (the
// notification as JSON on stdin and MAM_NOTIFY_* variables). Each notification goes once: its key is
// recorded in <home>/.local/state/mam/notify-sent.json under the notify lock before it is sent, so
// two daemons (two workspaces) or a daemon that starts again never send it twice. Each sink gets at
// most MAM_NOTIFY_PER_MIN a minute (default 6); what is held back is counted and said in the next
// one. A sink that fails is reported (`failed`), never with its URL or command line (secrets).
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile } from "../sys/atomic.ts";
import { withLock } from "../sys/lock-file.ts";
import { type Env, stateDir } from "../sys/paths.ts";
import { withoutSecrets } from "../sys/secrets.ts";
import { loadNotify, type Sink } from "./config.ts";
import { commandEnv, type Notification, webhookRequest } from "./message.ts";

const SENT_KEEP_MS = 7 * 86_400_000;
const WEBHOOK_MS = 5_000;
const COMMAND_MS = 10_000;
const DESKTOP_MS = 5_000;

/** notifications a sink may get per minute (MAM_NOTIFY_PER_MIN, whole ≥ 1; default 6) */
export function perMinute(env: Env): number {
  const v = env.MAM_NOTIFY_PER_MIN;
  return v !== undefined && /^\d+$/.test(v) && Number(v) >= 1 ? Number(v) : 6;
}

const sentPath = (env: Env) => join(stateDir(env), "notify-sent.json");

/** record `key` as sent unless it already is; true when it is new (the caller sends it) */
export async function claimKey(env: Env, key: string, now = Date.now()): Promise<boolean> {
  mkdirSync(stateDir(env), { recursive: true, mode: 0o700 });
  return withLock(join(stateDir(env), "notify.lock"), "notify", 10_000, () => {
    let sent: Record<string, number> = {};
    try {
      if (existsSync(sentPath(env))) sent = JSON.parse(readFileSync(sentPath(env), "utf8")) as Record<string, number>;
    } catch {} // a damaged record starts anew: at worst a notification goes twice
    if (typeof sent[key] === "number") return false;
    for (const [k, at] of Object.entries(sent)) if (typeof at !== "number" || now - at > SENT_KEEP_MS) delete sent[k];
    sent[key] = now;
    atomicWriteFile(sentPath(env), `${JSON.stringify(sent)}\n`, { mode: 0o600 });
    return true;
  });
}

/** a message about a sink without its secrets: its URL (any part of it) and its command line go */
function scrub(s: Sink, message: string): string {
  let m = message;
  if (s.type === "webhook") {
    m = m.replaceAll(s.url, "…");
    try {
      const u = new URL(s.url);
      for (const part of [u.pathname + u.search, u.pathname, u.search, u.username, u.password]) if (part.length > 1) m = m.replaceAll(part, "…");
    } catch {}
  }
  if (s.type === "command") m = m.replaceAll(s.command, "…");
  return m;
}

async function run(argv: string[], env: Env, stdin: string | undefined, ms: number): Promise<number | "timeout"> {
  const p = Bun.spawn(argv, { env: withoutSecrets(env) as Record<string, string>, stdin: stdin === undefined ? "ignore" : new Blob([stdin]), stdout: "ignore", stderr: "ignore" });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timedOut = new Promise<"timeout">((r) => (timer = setTimeout(() => r("timeout"), ms)));
  const got = await Promise.race([p.exited, timedOut]);
  clearTimeout(timer);
  if (got === "timeout") {
    p.kill("SIGKILL");
    await p.exited;
  }
  return got;
}

/** deliver one notification to one sink; throws an Error saying what failed (without secrets) */
export async function deliverTo(s: Sink, n: Notification, env: Env): Promise<void> {
  try {
    if (s.type === "webhook") {
      const req = webhookRequest(s.url, s.format, n);
      const r = await fetch(req.url, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify(req.body),
        redirect: "error",
        signal: AbortSignal.timeout(WEBHOOK_MS),
      });
      await r.arrayBuffer().catch(() => undefined);
      if (!r.ok) throw new Error(`HTTP ${r.status}`);
      return;
    }
    if (s.type === "desktop") {
      const bin = Bun.which("notify-send", { PATH: env.PATH ?? "" });
      if (!bin) throw new Error("notify-send is not installed (on Debian/Ubuntu: apt install libnotify-bin)");
      const urgency = n.kind === "dialog" || n.kind === "died" ? "critical" : "normal";
      const code = await run([bin, "--app-name=mam", `--urgency=${urgency}`, n.title, n.text], env, undefined, DESKTOP_MS);
      if (code !== 0) throw new Error(code === "timeout" ? "notify-send did not return" : `notify-send exited ${code}`);
      return;
    }
    const code = await run(["sh", "-c", s.command], { ...env, ...commandEnv(n) }, `${JSON.stringify({ source: "mam", ...n })}\n`, COMMAND_MS);
    if (code !== 0) throw new Error(code === "timeout" ? `the command did not end within ${COMMAND_MS / 1000} s (killed)` : `the command exited ${code}`);
  } catch (e) {
    throw new Error(scrub(s, e instanceof Error ? e.message : String(e)));
  }
}

export interface SinkOutcome {
  sink: string;
  type: Sink["type"];
  ok: boolean;
  /** why it failed (no secrets), or that it was held back */
  error?: string;
}

/**
 * The daemon's sender: each notification once (claimKey), to the sinks that take its kind, each
 * sink at most perMinute a minute; what it did, one line each, to `log`
 */
export class Notifier {
  private sent = new Map<string, number[]>();
  private held = new Map<string, number>();

  constructor(
    private env: Env,
    private log: (line: string) => void,
  ) {}

  /** send n (unless it was sent before); the outcome per sink (empty: no sink takes it, or not new) */
  async send(n: Notification): Promise<SinkOutcome[]> {
    let sinks: Sink[];
    try {
      sinks = loadNotify(this.env).sinks.filter((s) => n.kind === "test" || s.on.includes(n.kind));
    } catch (e) {
      this.log(`notify: ${(e as Error).message}`);
      return [];
    }
    if (sinks.length === 0) return [];
    if (!(await claimKey(this.env, n.key))) return [];
    const max = perMinute(this.env);
    const now = Date.now();
    const out: SinkOutcome[] = [];
    for (const s of sinks) {
      const times = (this.sent.get(s.id) ?? []).filter((t) => now - t < 60_000);
      if (times.length >= max) {
        this.held.set(s.id, (this.held.get(s.id) ?? 0) + 1);
        this.sent.set(s.id, times);
        this.log(`notify: sink ${s.id} (${s.type}) got ${max} notifications this minute; held back: ${n.title}`);
        out.push({ sink: s.id, type: s.type, ok: false, error: "rate limit" });
        continue;
      }
      times.push(now);
      this.sent.set(s.id, times);
      const held = this.held.get(s.id) ?? 0;
      const msg = held ? { ...n, text: `${n.text}\n(${held} earlier notification${held === 1 ? " was" : "s were"} held back by the rate limit)` } : n;
      try {
        await deliverTo(s, msg, this.env);
        this.held.delete(s.id);
        this.log(`notify: ${n.kind} → sink ${s.id} (${s.type}): ${n.title}`);
        out.push({ sink: s.id, type: s.type, ok: true });
      } catch (e) {
        this.log(`notify: sink ${s.id} (${s.type}) failed: ${(e as Error).message}`);
        out.push({ sink: s.id, type: s.type, ok: false, error: (e as Error).message });
      }
    }
    return out;
  }
}

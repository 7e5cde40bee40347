// Sending notifications to the user's sinks (docs/notifications.md): a desktop notification
// (notify-send), a webhook (a JSON POST: mam's shape, ntfy's or Slack's), a command (the
// notification as JSON on stdin and MAM_NOTIFY_* variables). Each notification goes once: its key is
// recorded in <home>/.local/state/mam/notify-sent.json under the notify lock before it is sent, so
// two daemons (two workspaces) or a daemon that starts again never send it twice. Each sink gets at
// most MAM_NOTIFY_PER_MIN a minute (default 6); what the limit holds back is not claimed: it waits
// and goes as soon as the limit allows. A sink that fails is reported (`failed`), never with its
// URL or command line (secrets).
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

/** `key` was claimed (sent) already; a read without the lock: atomic writes keep the file whole */
function claimed(env: Env, key: string): boolean {
  try {
    return typeof (JSON.parse(readFileSync(sentPath(env), "utf8")) as Record<string, unknown>)[key] === "number";
  } catch {
    return false;
  }
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
      const urgency = n.kind === "dialog" || n.kind === "died" || n.kind === "gave_up" ? "critical" : "normal";
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

/** at most this many notifications wait per sink for the rate limit (the oldest go first, logged) */
const MAX_WAITING = 100;

/**
 * The daemon's sender: each notification once per sink (claimKey of the notification's key and the
 * sink), to the sinks that take its kind, each sink at most perMinute a minute. One over the limit
 * is not claimed: it waits, in order, and goes as soon as the limit allows (a timer), unless
 * another daemon sent it meanwhile; what it did, one line each, to `log`. What waits lives in this
 * daemon's memory: a daemon stopped meanwhile does not send them.
 */
export class Notifier {
  private sent = new Map<string, number[]>();
  private waiting = new Map<string, { n: Notification; since: number }[]>();
  private timer: ReturnType<typeof setTimeout> | undefined;
  /** one send or flush at a time: the limit is counted in order */
  private chain: Promise<unknown> = Promise.resolve();

  constructor(
    private env: Env,
    private log: (line: string) => void,
    /** the rate limit's window */
    private windowMs = 60_000,
  ) {}

  /** send n (unless it was sent before); the outcome per sink (empty: no sink takes it, or not new) */
  send(n: Notification): Promise<SinkOutcome[]> {
    const next = this.chain.then(() => this.sendNow(n));
    this.chain = next.catch(() => undefined);
    return next;
  }

  /** how many notifications wait for the rate limit (all sinks) */
  private waitingCount(): number {
    return [...this.waiting.values()].reduce((a, w) => a + w.length, 0);
  }

  private sinks(n: Notification): Sink[] | undefined {
    try {
      return loadNotify(this.env).sinks.filter((s) => n.kind === "test" || s.on.includes(n.kind));
    } catch (e) {
      this.log(`notify: ${(e as Error).message}`);
      return undefined;
    }
  }

  private recent(id: string, now: number): number[] {
    const times = (this.sent.get(id) ?? []).filter((t) => now - t < this.windowMs);
    this.sent.set(id, times);
    return times;
  }

  private async sendNow(n: Notification): Promise<SinkOutcome[]> {
    const sinks = this.sinks(n);
    if (!sinks?.length) return [];
    const max = perMinute(this.env);
    const out: SinkOutcome[] = [];
    for (const s of sinks) {
      const key = `${n.key}\u0000${s.id}`;
      if (claimed(this.env, key)) continue; // sent before (by this daemon or another)
      const waiting = this.waiting.get(s.id) ?? [];
      // over the limit, or behind others that wait: it waits too, unclaimed (never lost to the limit)
      if (this.recent(s.id, Date.now()).length >= max || waiting.length > 0) {
        if (waiting.some((w) => w.n.key === n.key)) continue;
        waiting.push({ n, since: Date.now() });
        if (waiting.length > MAX_WAITING) this.log(`notify: sink ${s.id}: more than ${MAX_WAITING} notifications wait for the rate limit; not sent: ${waiting.shift()!.n.title}`);
        this.waiting.set(s.id, waiting);
        this.log(`notify: sink ${s.id} (${s.type}) got ${max} notifications this minute; ${n.title}: sent when the limit allows`);
        out.push({ sink: s.id, type: s.type, ok: false, error: "rate limit: sent when the limit allows" });
        this.schedule();
        continue;
      }
      const o = await this.deliver(s, n);
      if (o) out.push(o);
    }
    return out;
  }

  /** claim, then deliver to one sink; undefined when it was sent before (another daemon) */
  private async deliver(s: Sink, n: Notification): Promise<SinkOutcome | undefined> {
    if (!(await claimKey(this.env, `${n.key}\u0000${s.id}`))) return undefined;
    this.recent(s.id, Date.now()).push(Date.now());
    try {
      await deliverTo(s, n, this.env);
      this.log(`notify: ${n.kind} → sink ${s.id} (${s.type}): ${n.title}`);
      return { sink: s.id, type: s.type, ok: true };
    } catch (e) {
      this.log(`notify: sink ${s.id} (${s.type}) failed: ${(e as Error).message}`);
      return { sink: s.id, type: s.type, ok: false, error: (e as Error).message };
    }
  }

  /** a timer for when the first waiting sink has room again */
  private schedule(): void {
    if (this.timer || this.waitingCount() === 0) return;
    const now = Date.now();
    let at = Infinity;
    for (const id of this.waiting.keys()) {
      const times = this.recent(id, now);
      const max = perMinute(this.env);
      at = Math.min(at, times.length < max ? now : times[times.length - max]! + this.windowMs);
    }
    this.timer = setTimeout(
      () => {
        this.timer = undefined;
        const next = this.chain.then(() => this.flush());
        this.chain = next.catch(() => undefined);
      },
      Math.max(0, at - now) + 5,
    );
    (this.timer as { unref?: () => void }).unref?.();
  }

  /** send what waits, in order, as far as the limit allows; the rest waits for the next timer */
  private async flush(): Promise<void> {
    const max = perMinute(this.env);
    for (const [id, waiting] of this.waiting) {
      while (waiting.length > 0 && this.recent(id, Date.now()).length < max) {
        const { n, since } = waiting.shift()!;
        const s = this.sinks(n)?.find((x) => x.id === id);
        if (!s) continue; // the sink was removed meanwhile
        const late = Math.round((Date.now() - since) / 1000);
        await this.deliver(s, { ...n, text: `${n.text}\n(held back ${late} s by the rate limit of ${max} a minute)` });
      }
      if (waiting.length === 0) this.waiting.delete(id);
    }
    this.schedule();
  }
}

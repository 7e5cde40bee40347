// Where notifications go (docs/notifications.md): the user's sinks, kept in
// <home>/.local/state/mam/notify.json (0600, in a 0700 folder) for every workspace of this user on
// this machine. A webhook's URL and a command line may hold secrets (a Slack webhook is one, an
// ntfy topic or access token another): they are kept in that file only and never printed; what
// mam shows of a sink is `redacted`. Every change is a locked read-modify-write.
import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile } from "../sys/atomic.ts";
import { EXIT, MamError } from "../sys/errors.ts";
import { withLock } from "../sys/lock-file.ts";
import { type Env, stateDir } from "../sys/paths.ts";

/** what a notification is about */
export const NOTIFY_KINDS = ["dialog", "ended", "died", "offline", "queued", "limited", "gave_up"] as const;
/** what a sink hears about when `--on` is not given: all but `queued`, which is asked for (MAM_NOTIFY_QUEUED_MIN) */
export const DEFAULT_NOTIFY_KINDS: readonly NotifyKind[] = ["dialog", "ended", "died", "offline", "limited", "gave_up"];
export type NotifyKind = (typeof NOTIFY_KINDS)[number];

export const WEBHOOK_FORMATS = ["json", "ntfy", "slack"] as const;
export type WebhookFormat = (typeof WEBHOOK_FORMATS)[number];

interface SinkBase {
  id: string;
  /** the kinds this sink gets */
  on: NotifyKind[];
}

export type Sink =
  | (SinkBase & { type: "desktop" })
  | (SinkBase & { type: "webhook"; url: string; format: WebhookFormat })
  | (SinkBase & { type: "command"; command: string });

export interface NotifyConfig {
  schema_version: 1;
  sinks: Sink[];
}

export const notifyPath = (env: Env) => join(stateDir(env), "notify.json");
const lockPath = (env: Env) => join(stateDir(env), "notify.lock");

function check(v: unknown, where: string): NotifyConfig {
  const bad = (why: string) => new MamError(`${where}: ${why}`, EXIT.FAIL, "fix it by hand, or remove it and add the sinks again (mam notify add)");
  const c = v as Partial<NotifyConfig> | null;
  if (!c || typeof c !== "object" || !Array.isArray(c.sinks)) throw bad("not a list of sinks");
  const ids = new Set<string>();
  for (const s of c.sinks as Partial<Sink>[]) {
    if (!s || typeof s !== "object" || typeof s.id !== "string" || ids.has(s.id)) throw bad("a sink without an id of its own");
    ids.add(s.id);
    if (!Array.isArray(s.on) || s.on.some((k) => !(NOTIFY_KINDS as readonly string[]).includes(k))) throw bad(`sink ${s.id}: "on" is not a list of ${NOTIFY_KINDS.join(", ")}`);
    if (s.type === "webhook") {
      if (typeof (s as { url?: unknown }).url !== "string" || !(WEBHOOK_FORMATS as readonly string[]).includes((s as { format?: string }).format ?? "")) throw bad(`sink ${s.id}: a webhook needs a url and a format`);
    } else if (s.type === "command") {
      if (typeof (s as { command?: unknown }).command !== "string") throw bad(`sink ${s.id}: a command sink needs its command`);
    } else if (s.type !== "desktop") throw bad(`sink ${s.id}: unknown type ${JSON.stringify(s.type)}`);
  }
  return { schema_version: 1, sinks: c.sinks as Sink[] };
}

/** the user's sinks (none when the file does not exist) */
export function loadNotify(env: Env): NotifyConfig {
  const path = notifyPath(env);
  if (!existsSync(path)) return { schema_version: 1, sinks: [] };
  let v: unknown;
  try {
    v = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw new MamError(`${path} is not valid JSON (${(e as Error).message})`, EXIT.FAIL, "fix it by hand, or remove it and add the sinks again (mam notify add)");
  }
  return check(v, path);
}

/** change the sinks under the lock; the file is written 0600 (its folder 0700) */
export async function mutateNotify<T>(env: Env, fn: (c: NotifyConfig) => T): Promise<T> {
  mkdirSync(stateDir(env), { recursive: true, mode: 0o700 });
  return withLock(lockPath(env), "notify", 10_000, () => {
    const c = loadNotify(env);
    const out = fn(c);
    atomicWriteFile(notifyPath(env), `${JSON.stringify(c, null, 2)}\n`, { mode: 0o600, regularOnly: true });
    return out;
  });
}

/** the next free sink id: 1, 2, … */
export function nextSinkId(c: NotifyConfig): string {
  let n = 1;
  while (c.sinks.some((s) => s.id === String(n))) n++;
  return String(n);
}

/** a word that looks like a secret: a known token's prefix, a URL with a user or a password, a long key-like string */
const SECRET_WORD = /^(xox[a-z]-|gh[opsur]_|github_pat_|glpat-|sk-|sk_|pk_|AKIA|AIza|hooks\.slack\.com)|:\/\/[^/\s]*@|^[A-Za-z0-9_+\-]{24,}={0,2}$/;

/** the words of a command line as sh splits them, quotes taken off (a quoted value may hold spaces) */
function shellWords(command: string): string[] {
  const words: string[] = [];
  let w = "";
  let quote = "";
  let started = false;
  for (let i = 0; i < command.length; i++) {
    const c = command[i]!;
    if (quote) {
      if (c === quote) quote = "";
      else if (c === "\\" && quote === '"') w += command[++i] ?? "";
      else w += c;
    } else if (/\s/.test(c)) {
      if (started) words.push(w);
      w = "";
      started = false;
      continue;
    } else if (c === "'" || c === '"') quote = c;
    else if (c === "\\") w += command[++i] ?? "";
    else w += c;
    started = true;
  }
  if (started) words.push(w);
  return words;
}

/**
 * what mam shows of a command line (pure): its program, never its arguments (they may hold a
 * secret), and of the `VAR=value` assignments before it (`env` too) only the names:
 * `SLACK_TOKEN=xoxb-1 x.sh --to me` is shown `SLACK_TOKEN=… x.sh …`; a program that looks like a
 * secret itself shows as `…`
 */
export function commandShown(command: string): string {
  const words = shellWords(command);
  const out: string[] = [];
  let i = 0;
  if (words[0] === "env") out.push(words[i++]!);
  for (; i < words.length && /^[A-Za-z_][A-Za-z0-9_]*=/.test(words[i]!); i++) out.push(`${words[i]!.slice(0, words[i]!.indexOf("="))}=…`);
  const program = words[i] ?? "";
  out.push(program.includes("=") || SECRET_WORD.test(program) ? "…" : program, "…");
  return out.filter((w) => w !== "").join(" ");
}

/**
 * what mam shows of a sink, never its secrets: a webhook's scheme and host (its path and query
 * may be a token), a command's program (commandShown: its arguments and its variables' values
 * may hold one)
 */
export function redacted(s: Sink): string {
  if (s.type === "desktop") return "notify-send";
  if (s.type === "command") return commandShown(s.command);
  try {
    const u = new URL(s.url);
    return `${u.protocol}//${u.host}/… (${s.format})`;
  } catch {
    return `(a URL) (${s.format})`;
  }
}

// The notification sinks of this user (docs/notifications.md): add, list, remove, test. The sinks
// live in the user's state (lib/notify/config.ts, 0600); what these return shows a sink only
// redacted (a webhook's host, a command's program), never its URL or command line.
import { type NotifyKind, mutateNotify, nextSinkId, type Sink, loadNotify, redacted, type WebhookFormat } from "../notify/config.ts";
import { testNotice } from "../notify/message.ts";
import { deliverTo, type SinkOutcome } from "../notify/send.ts";
import { notFound, usageError } from "../sys/errors.ts";
import { field } from "../sys/fields.ts";
import { type Notice, note } from "../sys/notice.ts";
import { hostName } from "../team/host.ts";
import type { Deps } from "./deps.ts";

export interface SinkView {
  id: string;
  type: Sink["type"];
  on: NotifyKind[];
  /** where it goes, without its secrets */
  target: string;
}

export interface AddInput {
  type: Sink["type"];
  target?: string;
  format: WebhookFormat;
  on: NotifyKind[];
}

export const sinkView = (s: Sink): SinkView => ({ id: s.id, type: s.type, on: s.on, target: redacted(s) });

/** the sink an input describes (pure): a webhook needs an http(s) URL, a command its command line, a desktop neither */
export function sinkOf(id: string, i: AddInput): Sink {
  const on = [...new Set(i.on)];
  if (i.type === "desktop") {
    if (i.target !== undefined) throw usageError(`a desktop sink takes no ${field("target")} (it runs notify-send)`);
    return { id, type: "desktop", on };
  }
  const t = (i.target ?? "").trim();
  if (t === "") throw usageError(i.type === "webhook" ? `a webhook sink needs its URL as ${field("target")} (- reads it from stdin)` : `a command sink needs its command line as ${field("target")}`);
  if (i.type === "command") return { id, type: "command", command: t, on };
  let u: URL;
  try {
    u = new URL(t);
  } catch {
    throw usageError("the webhook URL is not a URL", "give http(s)://host/path");
  }
  if (u.protocol !== "https:" && u.protocol !== "http:") throw usageError(`the webhook URL must be http or https (got ${u.protocol})`);
  if (i.format === "ntfy" && u.pathname.split("/").filter((p) => p !== "").length === 0) throw usageError("an ntfy webhook names its topic: https://ntfy.sh/<topic>");
  return { id, type: "webhook", url: t, format: i.format, on };
}

export async function addSink(deps: Deps, i: AddInput): Promise<{ sink: SinkView; warnings: Notice[] }> {
  if (i.type !== "webhook" && i.format !== "json") throw usageError(`${field("format")} is a webhook's`);
  const s = await mutateNotify(deps.env, (c) => {
    const s = sinkOf(nextSinkId(c), i);
    c.sinks.push(s);
    return s;
  });
  const warnings: Notice[] = [];
  if (s.type === "desktop" && !Bun.which("notify-send", { PATH: deps.env.PATH ?? "" })) {
    warnings.push(note("notify-send is not installed here (on Debian/Ubuntu: apt install libnotify-bin); the daemon logs each notification it could not show"));
  }
  return { sink: sinkView(s), warnings };
}

export function listSinks(deps: Deps): { sinks: SinkView[] } {
  return { sinks: loadNotify(deps.env).sinks.map(sinkView) };
}

export async function removeSink(deps: Deps, id: string): Promise<{ removed: SinkView }> {
  const gone = await mutateNotify(deps.env, (c) => {
    const i = c.sinks.findIndex((s) => s.id === id);
    return i < 0 ? undefined : c.sinks.splice(i, 1)[0];
  });
  if (!gone) throw notFound(`no notification sink ${id}`, "see: mam notify list");
  return { removed: sinkView(gone) };
}

/** a test notification to every sink (or one), now: no once, no rate limit */
export async function testSinks(deps: Deps, id?: string): Promise<{ results: SinkOutcome[] }> {
  const sinks = loadNotify(deps.env).sinks.filter((s) => id === undefined || s.id === id);
  if (id !== undefined && sinks.length === 0) throw notFound(`no notification sink ${id}`, "see: mam notify list");
  if (sinks.length === 0) throw notFound("no notification sinks", "add one: mam notify add desktop | webhook URL | command CMD");
  const n = testNotice({ workspace: deps.ws, host: hostName(deps.env), at: new Date().toISOString() });
  const results: SinkOutcome[] = [];
  for (const s of sinks) {
    try {
      await deliverTo(s, n, deps.env);
      results.push({ sink: s.id, type: s.type, ok: true });
    } catch (e) {
      results.push({ sink: s.id, type: s.type, ok: false, error: (e as Error).message });
    }
  }
  return { results };
}

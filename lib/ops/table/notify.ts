// The notification operations: add, list, remove, test a sink (docs/notifications.md). The sinks
// are the user's (every workspace on this machine); the daemons send to them. Not MCP tools and
// not dashboard actions: where a person hears about their agents is that person's to set.
import * as z from "zod/mini";
import { DEFAULT_NOTIFY_KINDS, NOTIFY_KINDS, WEBHOOK_FORMATS } from "../../notify/config.ts";
import { choice, optional, text, withDefault } from "../input.ts";
import type { SinkView } from "../notify.ts";
import { type CommandGroup, defineOp } from "../op.ts";
import { sinkOut, str } from "../results.ts";
import type { SinkOutcome } from "../../notify/send.ts";
import { visible } from "../../sys/sanitize.ts";

/** `mam notify …`: its help (the commands come from the entries below) */
const NOTIFY: CommandGroup = {
  name: "notify",
  description: "where you hear about your agents: a job ended, an agent waits at a dialog or died, a host went offline (docs/notifications.md)",
  examples: ["mam notify add desktop", "mam notify add webhook https://ntfy.sh/my-topic --format ntfy", "mam notify list", "mam notify test"],
  group: "notifications",
  listed: "each",
};

const sinkLine = (s: SinkView) => `${s.id}  ${s.type.padEnd(8)} ${s.on.join(",").padEnd(26)} ${visible(s.target)}`;
const sinkId = (description: string) => z.string().check(z.regex(/^\d{1,6}$/, { error: (iss) => `invalid sink id '${String(iss.input).slice(0, 20)}' (a number, as mam notify list shows it)` }), z.describe(description));

export const notifyAdd = defineOp({
  name: "notify.add",
  summary: "add a notification sink for you: desktop (notify-send), webhook (JSON POST; ntfy, Slack) or command",
  readOnly: false,
  input: () => ({
    type: choice(["desktop", "webhook", "command"], "desktop, webhook or command"),
    target: optional(text("webhook: its URL (- reads it from stdin, out of ps); command: its command line (run with sh -c, the notification as JSON on stdin)")),
    format: withDefault(choice(WEBHOOK_FORMATS, "webhook: the body, json (mam's), ntfy (its JSON publishing; the URL names the topic) or slack (an incoming webhook)"), "json"),
    on: withDefault(
      z.array(z.enum(NOTIFY_KINDS)).check(z.minLength(1), z.describe(`what it hears about (repeatable; default all but queued): ${NOTIFY_KINDS.join(", ")}`)),
      [...DEFAULT_NOTIFY_KINDS],
    ),
  }),
  async run(deps, i) {
    const { addSink } = await import("../notify.ts");
    return addSink(deps, i);
  },
  result: () => z.looseObject({ sink: sinkOut() }),
  text: (r: { sink: SinkView }) => `added sink ${r.sink.id}: ${r.sink.type} → ${visible(r.sink.target)}, on ${r.sink.on.join(", ")}`,
  cli: {
    path: "notify add",
    under: NOTIFY,
    extra: "notify-stdin",
    positionals: ["type", "target"],
    flags: { target: { valueHint: "URL|-|CMD" }, format: { valueHint: "json|ntfy|slack" }, on: { valueHint: "KIND" } },
    examples: [
      "mam notify add desktop",
      "mam notify add webhook https://ntfy.sh/my-secret-topic --format ntfy --on dialog --on ended",
      "mam notify add webhook - --format slack < slack-webhook-url.txt   # the URL stays out of ps",
      "mam notify add command 'logger -t mam \"$MAM_NOTIFY_TITLE\"'",
    ],
  },
  mcp: false,
});

export const notifyList = defineOp({
  name: "notify.list",
  summary: "list your notification sinks (URLs and commands are shown without their secrets)",
  readOnly: true,
  input: () => ({}),
  async run(deps) {
    const { listSinks } = await import("../notify.ts");
    return listSinks(deps);
  },
  result: () => z.looseObject({ sinks: z.array(sinkOut()) }),
  text: (r: { sinks: SinkView[] }) => (r.sinks.length ? [`ID TYPE     ON${" ".repeat(25)}TARGET`, ...r.sinks.map(sinkLine)].join("\n") : "no notification sinks (add one: mam notify add desktop)"),
  cli: { path: "notify list", under: NOTIFY, textToStderr: (r) => (r as { sinks: SinkView[] }).sinks.length === 0, examples: ["mam notify list", "mam notify list --json"] },
  mcp: false,
});

export const notifyRemove = defineOp({
  name: "notify.remove",
  summary: "remove a notification sink",
  readOnly: false,
  input: () => ({ id: sinkId("the sink, as mam notify list shows it") }),
  async run(deps, i) {
    const { removeSink } = await import("../notify.ts");
    return removeSink(deps, i.id);
  },
  result: () => z.looseObject({ removed: sinkOut() }),
  text: (r: { removed: SinkView }) => `removed sink ${r.removed.id} (${r.removed.type} → ${visible(r.removed.target)})`,
  cli: { path: "notify remove", under: NOTIFY, positionals: ["id"], examples: ["mam notify remove 2"] },
  mcp: false,
});

export const notifyTest = defineOp({
  name: "notify.test",
  summary: "send a test notification to every sink (or one) now; exit 1 when one fails",
  readOnly: true,
  input: () => ({ id: optional(sinkId("only this sink")) }),
  async run(deps, i) {
    const { testSinks } = await import("../notify.ts");
    return testSinks(deps, i.id);
  },
  result: () => z.looseObject({ results: z.array(z.looseObject({ sink: str(), type: str(), ok: z.boolean(), error: z.optional(str()) })) }),
  text: (r: { results: SinkOutcome[] }) => r.results.map((o) => `sink ${o.sink} (${o.type}): ${o.ok ? "sent" : `FAILED: ${visible(o.error ?? "?")}`}`).join("\n"),
  exitCode: (r: { results: SinkOutcome[] }) => (r.results.every((o) => o.ok) ? 0 : 1),
  cli: { path: "notify test", under: NOTIFY, positionals: ["id"], examples: ["mam notify test", "mam notify test 2"] },
  mcp: false,
});

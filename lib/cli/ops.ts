// The commands of the operations table: a loop over lib/ops that makes each op with a `cli` block
// a command at its path (`stop`, `job submit`), grouped under its first word when it has two (the
// group's help is the entry's `cli.under`). A command that does more than its op on the command
// line (a watch, a follow, a wait after a submit, the daemon in the foreground) names its extra
// in its entry (`cli.extra`), carried out here; everything else about a command comes from its op.
import { OPS } from "../ops/index.ts";
import type { AnyOp, CliExtraName, CommandGroup, HelpGroup } from "../ops/op.ts";
import { usageError } from "../sys/errors.ts";
import { err, out, outJson, useColor } from "../sys/io.ts";
import { noticeLine, noticesOf } from "../sys/notice.ts";
import { type MamCommand, str } from "./command.ts";
import { type CliExtra, interruptible, opCommand, type OpRun, printResult } from "./op-command.ts";

/** a non-negative number of seconds given on the command line */
function secondsFlag(raw: string, flag: string): number {
  if (!/^\d+(\.\d+)?$/.test(raw)) throw usageError(`--${flag} must be a number of seconds >= 0 (got '${raw}')`);
  return Number(raw);
}

const statusWatch: CliExtra = {
  args: { watch: { type: "string", optionalValue: "2", description: "redraw every SECS seconds (default 2) until Ctrl-C", valueHint: "SECS" } },
  async run(c: OpRun) {
    const watch = str(c.ctx.args, "watch");
    if (watch === undefined) return c.run();
    if (!/^\d+(\.\d+)?$/.test(watch) || Number(watch) <= 0) throw usageError(`--watch takes a number of seconds > 0 (got '${watch}')`);
    if (c.json) throw usageError("--watch and --json do not go together");
    const everyMs = Number(watch) * 1000;
    const sig = interruptible();
    const tty = process.stdout.isTTY;
    try {
      while (!sig.signal.aborted) {
        const doc = await c.exec();
        const stamp = new Date().toISOString().replace(/\.\d+Z$/, "Z");
        out(`${tty ? "\u001b[H\u001b[2J" : ""}mam status — ${c.ws} — ${stamp} (every ${everyMs / 1000} s, Ctrl-C to stop)\n${OPS_BY_PATH.get("status")!.text(doc, { color: useColor() })}`);
        await new Promise<void>((r) => {
          const t = setTimeout(r, everyMs);
          sig.signal.addEventListener("abort", () => (clearTimeout(t), r()), { once: true });
        });
      }
      return sig.code();
    } finally {
      sig.dispose();
    }
  },
};

const stopModes: CliExtra = {
  args: {
    hard: { type: "boolean", description: "close the pane at once (status terminated)" },
    soft: { type: "boolean", description: "leave the pane running, archive the row (status archived); a later stop (graceful or --hard) of that row closes the pane" },
    yes: { type: "boolean", description: "confirm --purge-conversation" },
  },
  spell: (f, v) => (f === "mode" ? (v === "hard" ? "--hard" : v === "soft" ? "--soft" : "--hard or --soft") : undefined),
  toInput(args, raw) {
    if (args.hard === true && args.soft === true) throw usageError("--hard and --soft contradict each other");
    if (args.hard === true) raw.mode = "hard";
    else if (args.soft === true) raw.mode = "soft";
    if (raw.purge === true && raw.mode === "hard" && args.yes !== true) throw usageError("--purge-conversation deletes conversation files; add --yes to confirm");
  },
};

const submitWait: CliExtra = {
  args: { wait: { type: "boolean", description: "then wait for the job as `mam job wait` does" } },
  toInput(_args, raw) {
    // a relative brief file is relative to where the command runs
    if (typeof raw.brief_file === "string" && !raw.brief_file.startsWith("/")) raw.brief_file = `${process.cwd()}/${raw.brief_file}`;
  },
  async run(c) {
    if (c.ctx.args.wait !== true) return c.run();
    const submitted = (await c.exec()) as { record: { job_id: string } };
    for (const n of noticesOf(submitted)) err(noticeLine(n));
    const id = submitted.record.job_id;
    if (!c.json) out(id);
    const wait = OPS_BY_PATH.get("job wait")!;
    const sig = interruptible();
    try {
      const w = (await wait.run(await c.deps(), { job_ids: [id], mode: "all", return_on_permission: false }, { signal: sig.signal, progress: () => {}, surface: "cli", form: c.json ? "json" : "text" })) as {
        jobs: { status: string }[];
        exit_code: number;
      };
      if (sig.signal.aborted) return sig.code();
      if (!c.json) return printResult(wait, w, false);
      const [{ costedView }, { loadPrices }, deps] = await Promise.all([import("../jobs/query.ts"), import("../cost/prices.ts"), c.deps()]);
      outJson({ ...costedView(deps.jobs.require(id), deps.jobs.journal(id), loadPrices(deps.env)), status: w.jobs[0]!.status });
      return w.exit_code;
    } finally {
      sig.dispose();
    }
  },
};

const waitAny: CliExtra = {
  args: { any: { type: "boolean", description: "return when the first job ends" } },
  spell: (f, v) => (f === "mode" ? (v === "any" ? "--any" : "--any (or not)") : undefined),
  toInput(args, raw) {
    if (args.any === true) raw.mode = "any";
  },
};

const logsFollow: CliExtra = {
  args: { follow: { type: "boolean", description: "keep printing new events until the job ends" } },
  async run(c) {
    if (c.ctx.args.follow !== true) return c.run();
    if (c.json) throw usageError("--follow and --json do not go together");
    const id = c.input.job_id as string;
    const [{ JournalReader, JournalWatch }, { effectiveStatus }, { isFinal }, { eventLine, FOLLOW_WIDTHS }, deps] = await Promise.all([
      import("../jobs/wait.ts"),
      import("../jobs/store.ts"),
      import("../jobs/statuses.ts"),
      import("../jobs/render.ts"),
      c.deps(),
    ]);
    const rec = deps.jobs.require(id);
    const reader = new JournalReader(c.ws, id);
    reader.refresh();
    let shown = 0;
    const flush = () => {
      // fixed widths: the lines to come stay aligned with these
      for (; shown < reader.events.length; shown++) out(eventLine(reader.events[shown]!, { utc: c.input.utc === true, nowMs: Date.now(), widths: FOLLOW_WIDTHS }));
    };
    flush();
    const sig = interruptible();
    const watch = new JournalWatch(c.ws);
    try {
      while (!isFinal(effectiveStatus(rec, reader.events))) {
        await watch.sleep(1000, sig.signal);
        if (sig.signal.aborted) return sig.code();
        if (reader.refresh()) flush();
      }
    } finally {
      watch.close();
      sig.dispose();
    }
  },
};

const eventData: CliExtra = {
  toInput(args, raw) {
    const text = str(args, "data");
    if (text === undefined) return;
    let data: unknown;
    try {
      data = JSON.parse(text);
    } catch {
      throw usageError("--data is not valid JSON");
    }
    if (typeof data !== "object" || data === null || Array.isArray(data)) throw usageError("--data must be a JSON object");
    if ("hmac_sig" in data) throw usageError("--data must not contain hmac_sig (mam signs the event)");
    const { canonicalJson, CanonicalJsonError } = require("../jobs/canonical.ts") as typeof import("../jobs/canonical.ts");
    try {
      canonicalJson(data as never);
    } catch (e) {
      if (e instanceof CanonicalJsonError) throw usageError(`--data: ${e.message.replace(/^\$\.?/, "")}`);
      throw e;
    }
    raw.data = data;
  },
};

const reconcileSubscribe: CliExtra = {
  args: {
    once: { type: "boolean", description: "one pass, then exit (the default without --subscribe)" },
    subscribe: { type: "boolean", description: "run the subscriber daemon: MQTT job events, else polling; one per workspace (.mam/monitor.lock)" },
    "idle-timeout": { type: "string", description: "with --subscribe: exit after S seconds without an event or running work (default 3600; 0 = never)", valueHint: "S" },
    timeout: { type: "string", description: "with --subscribe: exit after S seconds in any case (default 0 = no limit)", valueHint: "S" },
  },
  async run(c) {
    const a = c.ctx.args;
    if (a.subscribe !== true) {
      for (const f of ["idle-timeout", "timeout"]) if (str(a, f) !== undefined) throw usageError(`--${f} goes with --subscribe`, "see: mam reconcile --help");
      return c.run();
    }
    for (const f of ["once", "dry-run", "json"]) if (a[f] === true) throw usageError(`--${f} does not go with --subscribe`);
    const idleTimeoutS = secondsFlag(str(a, "idle-timeout") ?? "3600", "idle-timeout");
    const timeoutS = secondsFlag(str(a, "timeout") ?? "0", "timeout");
    const [{ runDaemon }, { reactionHooks }] = await Promise.all([import("../daemon/loop.ts"), import("../daemon/feed.ts")]);
    return runDaemon({ ws: c.ws, idleTimeoutS, timeoutS, hooks: reactionHooks(await c.deps()) });
  },
};

const notifyStdin: CliExtra = {
  toInput(_args, raw) {
    // `-`: the webhook's URL from stdin, out of every other user's ps
    if (raw.target !== "-") return;
    const text = require("node:fs").readFileSync(0, "utf8") as string;
    raw.target = text.split("\n")[0]!.trim();
    if (raw.target === "") throw usageError("stdin gave no URL (the first line is read)");
  },
};

/**
 * `mam team join`: the code (the team's secret) from stdin (`-`) or a file (`--code-file`), out
 * of ps and shell history (review T1); as an argument it still works, with a NOTE
 */
const joinCodeFrom: CliExtra = {
  args: { "code-file": { type: "string", description: "read the join code from this file (its first line), out of ps and shell history", valueHint: "FILE" } },
  toInput(args, raw) {
    const file = str(args, "code-file");
    if (file !== undefined && raw.code !== undefined) throw usageError("give the join code once: as CODE, - (stdin) or --code-file FILE");
    const firstLine = (text: string, from: string) => {
      const c = text.split("\n").map((l) => l.trim()).find((l) => l !== "");
      if (c === undefined) throw usageError(`${from} gave no join code`, "paste the line mam team code prints");
      return c;
    };
    const fs = require("node:fs") as typeof import("node:fs");
    if (raw.code === "-") raw.code = firstLine(fs.readFileSync(0, "utf8"), "stdin");
    else if (file !== undefined) {
      let text: string;
      try {
        text = fs.readFileSync(file, "utf8");
      } catch (e) {
        throw usageError(`cannot read the join code file ${file} (${(e as Error).message})`);
      }
      raw.code = firstLine(text, `the file ${file}`);
    }
  },
  async run(c) {
    const a = c.ctx.args;
    const out = await c.exec();
    if (typeof a.code === "string" && a.code !== "-" && out && typeof out === "object" && Array.isArray((out as { warnings?: unknown }).warnings)) {
      const { note } = await import("../sys/notice.ts");
      (out as { warnings: unknown[] }).warnings.push(note("the join code (the team's secret) was an argument: ps and your shell's history saw it; next time use mam team join - (stdin) or --code-file FILE"));
    }
    return c.print(out);
  },
};

/** what a command does beyond its op, by the name its entry gives (`cli.extra`) */
const EXTRAS: Record<CliExtraName, CliExtra> = {
  "notify-stdin": notifyStdin,
  "join-code": joinCodeFrom,
  "status-watch": statusWatch,
  "stop-modes": stopModes,
  "submit-wait": submitWait,
  "wait-any": waitAny,
  "logs-follow": logsFollow,
  "event-data": eventData,
  "reconcile-subscribe": reconcileSubscribe,
};

const OPS_BY_PATH = new Map<string, AnyOp>(OPS.filter((o) => o.cli).map((o) => [(o.cli as { path: string }).path, o]));

/** the top-level commands of the table: one per single-word path, one group per first word of the others */
export function opCommands(): Record<string, MamCommand> {
  const top: Record<string, MamCommand> = {};
  const under = new Map<string, CommandGroup>();
  for (const op of OPS) {
    if (!op.cli) continue;
    const words = op.cli.path.split(" ");
    const cmd = opCommand(op, op.cli.extra ? EXTRAS[op.cli.extra] : undefined);
    if (words.length === 1) {
      top[words[0]!] = cmd;
      continue;
    }
    const g = words[0]!;
    const meta = op.cli.under;
    if (!meta || meta.name !== g) throw new Error(`op ${op.name}: its cli.under must be the help of the command group '${g}'`);
    if ((under.get(g) ?? meta) !== meta) throw new Error(`op ${op.name}: another op of '${g}' gives the group another help`);
    under.set(g, meta);
    top[g] ??= { meta: { name: g, description: meta.description, examples: meta.examples }, subCommands: {} };
    top[g].subCommands![words[1]!] = cmd;
  }
  return top;
}

/**
 * where `mam --help` lists the table's commands, in the table's order: [what it lists, its
 * section]; a group listed once is its first word (`worktree`), else each command (`job submit`)
 */
export function opGroups(): [string, HelpGroup][] {
  const m = new Map<string, HelpGroup>();
  for (const op of OPS) {
    if (!op.cli) continue;
    const u = op.cli.under;
    const group = u ? u.group : op.cli.group;
    if (!group) throw new Error(`op ${op.name}: no help section (cli.group)`);
    m.set(u && u.listed === "once" ? u.name : op.cli.path, group);
  }
  return [...m];
}

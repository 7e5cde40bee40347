// One daemon's life, from its first line to its exit status: how it logs, and how it ends. It
// ends once (finish): on SIGTERM (143) or SIGINT (130), on a stop from outside (tests: 0), or for a
// reason of its own (its lock or workspace gone, a timeout: 0). Every wait is a timer raced
// against the one AbortSignal that finish aborts (pause), so a signal ends the daemon within a
// second whatever it was doing.
import { cliSpelling, spellFields } from "../sys/fields.ts";
import { out } from "../sys/io.ts";
import type { Env } from "../sys/paths.ts";
import { visible } from "../sys/sanitize.ts";
import { logStamp } from "../sys/time.ts";
import type { DaemonOptions } from "./options.ts";

export interface Life {
  /** one log line, `<time> <message>` */
  log(message: string): void;
  /** logged only with MAM_DEBUG=1 */
  debug(message: string): void;
  /** where log lines go; once the daemon holds its lock, a log on .mam/monitor.log rotates (log-file.ts) */
  write: (line: string) => void;
  /** aborted once the daemon ends */
  signal: AbortSignal;
  /** resolves once the daemon ends */
  stopped: Promise<void>;
  /** end the daemon with this exit status, logging why; only the first call counts */
  finish(code: number, message?: string): void;
  /** the status finish gave (0 until then) */
  exitCode(): number;
  /** stop listening for signals and for the outer stop */
  close(): void;
}

/** the daemon's life begins: its log, and the signals that end it, heard from now on */
export function startLife(o: DaemonOptions, env: Env): Life {
  const stop = new AbortController();
  let exitCode = 0;
  const life: Life = {
    write: o.write ?? ((line: string) => out(line)),
    // one line per message, whatever it quotes: a topic or a detail with a newline cannot forge a
    // line, an escape sequence never reaches the file (or a terminal tailing it): sanitize.ts
    // an error a use case raised names its fields as {{field}}: the log spells them as the CLI does
    log: (m) => life.write(`${logStamp()} ${visible(spellFields(m, cliSpelling))}`),
    debug: (m) => {
      if (env.MAM_DEBUG === "1") life.log(`debug: ${m}`);
    },
    signal: stop.signal,
    stopped: new Promise<void>((r) => stop.signal.addEventListener("abort", () => r(), { once: true })),
    finish(code, message) {
      if (stop.signal.aborted) return;
      if (message) life.log(message);
      exitCode = code;
      stop.abort();
    },
    exitCode: () => exitCode,
    close: () => {},
  };
  life.close = listen(o, life);
  return life;
}

/** SIGTERM, SIGINT and the outer stop end the daemon; returns how to stop listening */
function listen(o: DaemonOptions, life: Life): () => void {
  // first thing: a signal that arrives while we start must still give 143/130, not a kill
  const onTerm = () => life.finish(143, "signal 15 received, exiting");
  const onInt = () => life.finish(130, "signal 2 received, exiting");
  if (o.handleSignals !== false) {
    process.on("SIGTERM", onTerm);
    process.on("SIGINT", onInt);
  }
  const onOuter = () => life.finish(0, "stop requested, exiting");
  o.stopSignal?.addEventListener("abort", onOuter, { once: true });
  return () => {
    if (o.handleSignals !== false) {
      process.off("SIGTERM", onTerm);
      process.off("SIGINT", onInt);
    }
    o.stopSignal?.removeEventListener("abort", onOuter);
  };
}

/** resolves after ms, or as soon as signal aborts */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const t = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

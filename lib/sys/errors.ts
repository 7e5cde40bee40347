// The one error type. Anything raised anywhere in mam is a MamError; only mam.ts turns it into
// an `ERROR: …` line and an exit code (SPEC §1).
import { cliSpelling, spellFields } from "./fields.ts";
import { visible } from "./sanitize.ts";

export const EXIT = {
  OK: 0,
  FAIL: 1, // operational failure: I/O, multiplexer or broker failure, malformed registry
  USAGE: 2,
  NOT_FOUND: 3,
  CONFLICT: 4,
  TIMEOUT: 5,
  /** `job wait`: a job ended over its budget (docs/cost.md) */
  BUDGET: 6,
  /** interrupted by SIGINT (Ctrl-C) / SIGTERM: 128 + the signal's number, as a shell reports it */
  SIGINT: 130,
  SIGTERM: 143,
} as const;

export type ExitCode = number;

export interface MamErrorOptions {
  /** print the ERROR line on stdout instead of stderr (create's conflict, SPEC §5.2) */
  stdout?: boolean;
  /** the underlying error, shown with MAM_DEBUG=1 */
  cause?: unknown;
}

export class MamError extends Error {
  readonly exitCode: ExitCode;
  readonly hint?: string;
  readonly toStdout: boolean;

  constructor(message: string, exitCode: ExitCode = EXIT.FAIL, hint?: string, opts: MamErrorOptions = {}) {
    super(message);
    this.name = "MamError";
    this.exitCode = exitCode;
    this.hint = hint;
    this.toStdout = opts.stdout ?? false;
    if (opts.cause !== undefined) (this as { cause?: unknown }).cause = opts.cause;
  }

  /** the same error with its message and hint rewritten (a front door spelling the {{field}}s it names) */
  spelled(fn: (text: string) => string): MamError {
    const e = new MamError(fn(this.message), this.exitCode, this.hint === undefined ? undefined : fn(this.hint), { stdout: this.toStdout });
    if (this.stack) e.stack = this.stack;
    return e;
  }

  /**
   * the single line printed for this error (what it quotes shown safe for a terminal: sanitize.ts);
   * a {{field}} no front door spelled reads as the command line spells it
   */
  render(): string {
    return visible(spellFields(`ERROR: ${this.message}${this.hint ? `; ${this.hint}` : ""}`, cliSpelling));
  }
}

export const usageError = (message: string, hint?: string) => new MamError(message, EXIT.USAGE, hint);
export const notFound = (message: string, hint?: string) => new MamError(message, EXIT.NOT_FOUND, hint);
export const conflict = (message: string, hint?: string) => new MamError(message, EXIT.CONFLICT, hint);

/** errno-style code of a Node/Bun system error, if any */
export function errCode(e: unknown): string | undefined {
  return typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : undefined;
}

/** the errno codes of a write the file system refused, as users read them */
const REFUSED: Record<string, string> = { EROFS: "read-only file system", EACCES: "permission denied", EPERM: "operation not permitted" };

/**
 * A write the file system refused (a read-only mount, a folder without write permission) as mam's
 * error: what could not be written (`target`, else the error's own path) and the way out, instead
 * of an internal error. undefined for any other error, so callers write
 * `throw writeRefused(e, dir) ?? e`.
 */
export function writeRefused(e: unknown, target?: string): MamError | undefined {
  const why = REFUSED[errCode(e) ?? ""];
  const own = typeof e === "object" && e !== null && typeof (e as { path?: unknown }).path === "string" ? (e as { path: string }).path : undefined;
  const path = target ?? own;
  if (why === undefined || path === undefined) return undefined;
  const hint = /\/\.local\/state\/mam(\/|$)/.test(path)
    ? "mam keeps its per-user state there (under HOME_DIR, else HOME): make it writable"
    : "make it writable, or work in a folder you can write (cd there, or set MAM_WORKSPACE)";
  return new MamError(`cannot write ${path} (${why})`, EXIT.FAIL, hint, { cause: e });
}

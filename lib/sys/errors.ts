// The one error type. Anything raised anywhere in mam is a MamError; only mam.ts turns it into
// an `ERROR: …` line and an exit code (SPEC §1).

export const EXIT = {
  OK: 0,
  FAIL: 1, // operational failure: I/O, multiplexer or broker failure, malformed registry
  USAGE: 2,
  NOT_FOUND: 3,
  CONFLICT: 4,
  TIMEOUT: 5,
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

  /** the single line printed for this error */
  render(): string {
    return `ERROR: ${this.message}${this.hint ? `; ${this.hint}` : ""}`;
  }
}

export const usageError = (message: string, hint?: string) => new MamError(message, EXIT.USAGE, hint);
export const notFound = (message: string, hint?: string) => new MamError(message, EXIT.NOT_FOUND, hint);
export const conflict = (message: string, hint?: string) => new MamError(message, EXIT.CONFLICT, hint);

/** errno-style code of a Node/Bun system error, if any */
export function errCode(e: unknown): string | undefined {
  return typeof e === "object" && e !== null && "code" in e ? String((e as { code: unknown }).code) : undefined;
}

// A long-running loop's failures, logged once: the daemon retries every job and every step at each
// poll, and a job that fails the same way each time must not fill the log (nor stop the others).
// A failure is logged when it is new or its message changed; ok() forgets it, so it is logged again
// should it come back. Pure: the caller gives the log line sink.

export class LogOnce {
  private last = new Map<string, string>();

  constructor(private log: (line: string) => void) {}

  /** log `<what>: <doing>: <message>` unless it is the line last logged for `what` doing `doing` */
  failed(what: string, e: unknown, doing?: string): void {
    const key = `${what}\u0000${doing ?? ""}`;
    const line = `${what}: ${doing ? `${doing}: ` : ""}${e instanceof Error ? e.message : String(e)}`;
    if (this.last.get(key) === line) return;
    this.last.set(key, line);
    this.log(`${line} (logged once; the daemon goes on with the rest)`);
  }

  /** `what` doing `doing` worked: a later failure of it is logged again */
  ok(what: string, doing?: string): void {
    this.last.delete(`${what}\u0000${doing ?? ""}`);
  }
}

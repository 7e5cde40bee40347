// Debug traces: one line on stderr, only with MAM_DEBUG=1 (how a registry write was made, …).
// Not output: a use case that has something to say to the user returns a notice instead.
export function debugLine(text: string, env: Record<string, string | undefined> = process.env): void {
  if (env.MAM_DEBUG === "1") process.stderr.write(`mam: ${text}\n`);
}

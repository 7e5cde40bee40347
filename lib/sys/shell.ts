// Quoting for a POSIX shell, for the command lines mam writes into texts an agent runs.

/** quote for a POSIX shell only when needed */
export function shq(s: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}

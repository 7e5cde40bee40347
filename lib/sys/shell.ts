// Quoting for a POSIX shell: the command lines mam types into panes (lib/mux), writes into texts an
// agent runs (job headers, hooks) and shows to users. The one quoting function in lib/.

/** one word quoted for a POSIX shell, only when needed (an empty word becomes '') */
export function shq(s: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(s) ? s : `'${s.replaceAll("'", `'\\''`)}'`;
}

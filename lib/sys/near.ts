// "did you mean …": the known words nearest to a mistyped one, for every front door and use case
// that refuses a word it does not know (a command, a flag, a session name, a role). Pure.
/** edit distance where swapping two neighbours counts as one edit (`stauts` is one from `status`) */
function distance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      let v = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, d[i - 2]![j - 2]! + 1);
      d[i]![j] = v;
    }
  }
  return d[a.length]![b.length]!;
}

/**
 * the known words nearest to a mistyped one (case-insensitive; a few edits at most, fewer for a
 * short word), else those it is the start of; [] when nothing is close
 */
export function nearest(word: string, known: Iterable<string>): string[] {
  const w = word.toLowerCase().replace(/^-+/, "");
  if (w === "") return [];
  const limit = w.length <= 3 ? 1 : w.length <= 7 ? 2 : 3;
  let best = Infinity;
  let hits: string[] = [];
  const all = [...new Set(known)];
  for (const k of all) {
    const d = distance(w, k.toLowerCase().replace(/^-+/, ""));
    if (d > limit || d > best) continue;
    if (d < best) (best = d), (hits = []);
    hits.push(k);
  }
  if (hits.length === 0 && w.length >= 3) hits = all.filter((k) => k.toLowerCase().replace(/^-+/, "").startsWith(w));
  return hits.slice(0, 3);
}

/** "did you mean X? " (or "X or Y"; each shown after `prefix`), or "" */
export function didYouMean(word: string, known: Iterable<string>, prefix = ""): string {
  const n = nearest(word, known);
  return n.length ? `did you mean ${n.map((k) => `${prefix}${k}`).join(" or ")}? ` : "";
}

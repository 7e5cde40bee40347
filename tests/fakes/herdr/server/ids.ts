// herdr's public ids (herdr.md §2.2): numbers in a bijective base-32 alphabet, w<N>, w<N>:t<M>,
// w<N>:p<K>; terminal ids term_<hex µs><hex counter>.

export const ID_ALPHABET = "123456789ABCDEFGHJKMNPQRSTVWXYZ0";

/** 1 → "1", 9 → "9", 10 → "A", 32 → "0", 33 → "11" */
export function encodeNumber(n: number): string {
  if (!Number.isInteger(n) || n < 1) throw new Error(`id numbers start at 1, got ${n}`);
  let s = "";
  while (n > 0) {
    n -= 1;
    s = ID_ALPHABET[n % 32] + s;
    n = Math.floor(n / 32);
  }
  return s;
}

export function decodeNumber(s: string): number | undefined {
  if (!s) return undefined;
  let n = 0;
  for (const ch of s) {
    const d = ID_ALPHABET.indexOf(ch);
    if (d < 0) return undefined;
    n = n * 32 + d + 1;
  }
  return n;
}

export const workspaceId = (n: number) => `w${encodeNumber(n)}`;
export const tabId = (ws: string, n: number) => `${ws}:t${encodeNumber(n)}`;
export const paneId = (ws: string, n: number) => `${ws}:p${encodeNumber(n)}`;

let termCounter = 0;

export function newTerminalId(): string {
  termCounter++;
  const micros = BigInt(Date.now()) * 1000n + BigInt(Math.floor((performance.now() % 1) * 1000));
  return `term_${micros.toString(16)}${termCounter.toString(16)}`;
}

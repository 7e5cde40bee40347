// Token counts by model (docs/cost.md): what the usage meter keeps for a session, a day or a job,
// and the sums of them. Pure.
import { noTokens, TOKEN_KINDS, type Tokens } from "../agents/usage.ts";

/** tokens per model name */
export type ByModel = Record<string, Tokens>;

export const totalOf = (t: Tokens): number => t.input + t.output + t.cache_write + t.cache_read;

export function addTokens(a: Tokens, b: Tokens): Tokens {
  return { input: a.input + b.input, output: a.output + b.output, cache_write: a.cache_write + b.cache_write, cache_read: a.cache_read + b.cache_read };
}

/** add `t` to `into[model]` (in place) */
export function addTo(into: ByModel, model: string, t: Tokens): void {
  into[model] = addTokens(into[model] ?? noTokens(), t);
}

/** several by-model counts as one */
export function mergeModels(...xs: (ByModel | undefined)[]): ByModel {
  const out: ByModel = {};
  for (const x of xs) for (const [m, t] of Object.entries(x ?? {})) addTo(out, m, t);
  return out;
}

/** every model's tokens summed */
export function tokensOf(m: ByModel): Tokens {
  return Object.values(m).reduce(addTokens, noTokens());
}

/** a Tokens as stored (four non-negative safe integers), else undefined */
export function asTokens(v: unknown): Tokens | undefined {
  if (!v || typeof v !== "object") return undefined;
  const o = v as Record<string, unknown>;
  for (const k of TOKEN_KINDS) if (!Number.isSafeInteger(o[k]) || (o[k] as number) < 0) return undefined;
  return { input: o.input as number, output: o.output as number, cache_write: o.cache_write as number, cache_read: o.cache_read as number };
}

/** a ByModel as stored; entries that are not token counts are left out */
export function asByModel(v: unknown): ByModel {
  const out: ByModel = {};
  if (!v || typeof v !== "object" || Array.isArray(v)) return out;
  for (const [m, t] of Object.entries(v as Record<string, unknown>)) {
    const tk = asTokens(t);
    if (tk) out[m] = tk;
  }
  return out;
}

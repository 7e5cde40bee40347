// Model prices as data (docs/cost.md): the table shipped with mam (prices.json next to this file,
// with the date it was read and its sources), and the user's own in <config>/mam/prices.json or
// prices.toml (config: XDG_CONFIG_HOME, else ~/.config), whose models replace or add to the
// shipped ones. USD per million tokens of each kind. A model with no price has tokens but no
// dollars (shown as unknown). A price file that is not valid is an error naming it; mam never
// writes one. The user's file is read at most MAX_PRICE_FILE bytes (Bun's TOML parse grows faster
// than the file: 10 MB took minutes, review P2), and only again when it changed (its size, time or
// inode): mam ui, the daemon and the MCP server ask for the table every second.
import { readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import type { Tokens } from "../agents/usage.ts";
import { errCode, EXIT, MamError } from "../sys/errors.ts";
import { configBase, type Env } from "../sys/paths.ts";
import shipped from "./prices.json" with { type: "json" };

export interface Price {
  input: number;
  output: number;
  cache_write: number;
  cache_read: number;
}

export interface PriceTable {
  /** the shipped table's date and sources */
  date: string;
  source: string[];
  /** the user's price file, when there is one */
  user: string | null;
  models: Record<string, Price>;
}

/** where the user's prices may live: <config>/mam/prices.json or prices.toml */
export function userPriceFiles(env: Env): string[] {
  const dir = join(configBase(env), "mam");
  return [join(dir, "prices.json"), join(dir, "prices.toml")];
}

const bad = (path: string, what: string) => new MamError(`${path} is not a valid price file (${what})`, EXIT.FAIL, "fix it or remove it (see docs/cost.md)");

const isPrice = (v: unknown) => typeof v === "number" && Number.isFinite(v) && v >= 0 && v < 1e6;

/**
 * the models of a price file's document: `models: {<name>: {input, output, cache_write?,
 * cache_read?}}`; cache prices default to the input price
 */
export function priceModels(doc: unknown, path: string): Record<string, Price> {
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) throw bad(path, "not an object");
  const models = (doc as Record<string, unknown>).models;
  if (!models || typeof models !== "object" || Array.isArray(models)) throw bad(path, "no `models` table");
  const out: Record<string, Price> = {};
  for (const [name, v] of Object.entries(models as Record<string, unknown>)) {
    if (name === "" || name.length > 200) throw bad(path, `model name '${name.slice(0, 40)}'`);
    if (!v || typeof v !== "object" || Array.isArray(v)) throw bad(path, `models.${name} is not a table`);
    const p = v as Record<string, unknown>;
    for (const k of ["input", "output"]) if (!isPrice(p[k])) throw bad(path, `models.${name}.${k} is not a number of dollars ≥ 0`);
    for (const k of ["cache_write", "cache_read"]) if (p[k] !== undefined && !isPrice(p[k])) throw bad(path, `models.${name}.${k} is not a number of dollars ≥ 0`);
    const input = p.input as number;
    out[name] = { input, output: p.output as number, cache_write: (p.cache_write as number | undefined) ?? input, cache_read: (p.cache_read as number | undefined) ?? input };
  }
  return out;
}

/** the largest price file mam reads: some hundreds of models (a price is a few lines); parsed in well under a second */
export const MAX_PRICE_FILE = 64 * 1024;

type Read = { sig: string; models?: Record<string, Price>; error?: MamError };
/** what each price file held when it was last read, by path; read again only when its signature changes */
const reads = new Map<string, Read>();

function readUser(path: string): Record<string, Price> | undefined {
  let sig: string;
  let size: number;
  try {
    const st = statSync(path);
    if (!st.isFile()) throw bad(path, "not a regular file");
    size = st.size;
    sig = `${st.size}:${st.mtimeMs}:${st.ino}`;
  } catch (e) {
    if (e instanceof MamError) throw e;
    if (errCode(e) === "ENOENT" || errCode(e) === "ENOTDIR") {
      reads.delete(path);
      return undefined;
    }
    throw new MamError(`cannot read ${path} (${(e as Error).message})`, EXIT.FAIL);
  }
  const last = reads.get(path);
  if (last?.sig !== sig) {
    const r: Read = { sig };
    try {
      r.models = parseUser(path, size);
    } catch (e) {
      if (!(e instanceof MamError)) throw e;
      r.error = e;
    }
    reads.set(path, r);
  }
  const r = reads.get(path)!;
  if (r.error) throw r.error;
  return r.models;
}

const tooBig = (path: string, n: number) =>
  new MamError(
    `not a valid price file: ${path} is ${n} bytes, over the limit of ${MAX_PRICE_FILE}`,
    EXIT.FAIL,
    "keep only the models you use in it (a price is a few lines), or remove it (see docs/cost.md)",
  );

/** the models of the user's price file of `size` bytes (as stat gave it), checked against the limit before parsing */
function parseUser(path: string, size: number): Record<string, Price> {
  if (size > MAX_PRICE_FILE) throw tooBig(path, size);
  let buf: Buffer;
  try {
    buf = readFileSync(path);
  } catch (e) {
    throw new MamError(`cannot read ${path} (${(e as Error).message})`, EXIT.FAIL);
  }
  // grown since the stat
  if (buf.length > MAX_PRICE_FILE) throw tooBig(path, buf.length);
  const text = buf.toString("utf8");
  let doc: unknown;
  try {
    doc = path.endsWith(".toml") ? Bun.TOML.parse(text) : JSON.parse(text);
  } catch (e) {
    throw bad(path, `not valid ${path.endsWith(".toml") ? "TOML" : "JSON"}: ${(e as Error).message}`);
  }
  return priceModels(doc, path);
}

/** the shipped table with the user's prices over it */
export function loadPrices(env: Env): PriceTable {
  const found = userPriceFiles(env)
    .map((p) => ({ p, models: readUser(p) }))
    .filter((x) => x.models !== undefined);
  if (found.length > 1) throw new MamError(`two price files: ${found.map((f) => f.p).join(" and ")}`, EXIT.FAIL, "keep one of them");
  return {
    date: shipped.date,
    source: shipped.source,
    user: found[0]?.p ?? null,
    models: { ...priceModels(shipped, "the shipped prices.json"), ...found[0]?.models },
  };
}

/** the shipped table only (what the daemon falls back to when the user's file is broken) */
export function shippedPrices(): PriceTable {
  return { date: shipped.date, source: shipped.source, user: null, models: priceModels(shipped, "the shipped prices.json") };
}

/**
 * the price of a model: its own entry, else the entry of its name without a context tag
 * (`[1m]`), a snapshot date (`-20250929`, `-2025-09-29`) or `-latest`
 */
export function priceOf(t: PriceTable, model: string): Price | undefined {
  const base = model.replace(/\[[^\]]*\]$/, "");
  for (const m of [model, base, base.replace(/-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$/, "")]) {
    if (Object.hasOwn(t.models, m)) return t.models[m];
  }
  return undefined;
}

/** what tokens cost at a price, in USD */
export function usdOf(p: Price, t: Tokens): number {
  return (t.input * p.input + t.output * p.output + t.cache_write * p.cache_write + t.cache_read * p.cache_read) / 1e6;
}

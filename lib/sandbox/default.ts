// The sandbox a workspace's creates get when they are given none (docs/sandbox.md#a-workspace-default):
// `mam sandbox default bwrap [--net N] [--allow HOST:PORT]…` keeps it in `.mam/sandbox.json`;
// `mam sandbox default none` forgets it. The order: the create's flags, then MAM_SANDBOX and
// MAM_SANDBOX_NET, then the workspace's, then none. A default can only confine an agent more than
// none does, yet one that does not read is an error, never "none": the user asked for a sandbox.
import { lstatSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile } from "../sys/atomic.ts";
import { MamError, EXIT } from "../sys/errors.ts";
import { ensureMamDir } from "../sys/mam-dir.ts";
import { mamDir } from "../sys/paths.ts";
import { NET_MODES, type NetMode, parseEndpoint } from "./plan.ts";

const FILE = "sandbox.json";

export interface SandboxDefault {
  sandbox: "bwrap";
  net?: NetMode;
  allow?: string[];
}

export const defaultPath = (ws: string) => join(mamDir(ws), FILE);

/** why `d` is not a default mam writes (undefined: it is one) */
export function badDefault(d: unknown): string | undefined {
  if (typeof d !== "object" || d === null || Array.isArray(d)) return "not a JSON object";
  const o = d as Record<string, unknown>;
  const extra = Object.keys(o).filter((k) => !["sandbox", "net", "allow"].includes(k));
  if (extra.length) return `unknown key '${extra[0]}'`;
  if (o.sandbox !== "bwrap") return `"sandbox" must be "bwrap"`;
  if (o.net !== undefined && !(NET_MODES as readonly unknown[]).includes(o.net)) return `"net" must be one of ${NET_MODES.join(", ")}`;
  if (o.allow !== undefined && !(Array.isArray(o.allow) && o.allow.every((a) => typeof a === "string" && parseEndpoint(a) !== undefined))) return `"allow" must be a list of HOST:PORT`;
  if (o.allow !== undefined && (o.net ?? "model") !== "model") return `"allow" goes with "net": "model"`;
  return undefined;
}

/** the workspace's default, else undefined; a file that does not read is an error */
export function readSandboxDefault(ws: string): SandboxDefault | undefined {
  const path = defaultPath(ws);
  try {
    if (!lstatSync(path).isFile()) throw new Error("not a regular file");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw broken(path, (e as Error).message);
  }
  let d: unknown;
  try {
    d = JSON.parse(readFileSync(path, "utf8"));
  } catch (e) {
    throw broken(path, `not JSON (${(e as Error).message})`);
  }
  const why = badDefault(d);
  if (why) throw broken(path, why);
  return d as SandboxDefault;
}

const broken = (path: string, why: string) => new MamError(`the workspace's sandbox default ${path} does not read: ${why}`, EXIT.FAIL, "set it again with mam sandbox default bwrap …, or forget it with mam sandbox default none");

/** keep `d` as the workspace's default (undefined: forget it) */
export function writeSandboxDefault(ws: string, d: SandboxDefault | undefined): void {
  if (d === undefined) return void rmSync(defaultPath(ws), { force: true });
  atomicWriteFile(join(ensureMamDir(ws), FILE), `${JSON.stringify(d, null, 2)}\n`);
}

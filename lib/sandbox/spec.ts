// A create's sandbox (docs/sandbox.md): the options it was given (or MAM_SANDBOX, MAM_SANDBOX_NET),
// checked before anything starts, into the spec its row keeps, and bwrap's path. Resume and the
// daemon's restart start the agent again in the spec its row keeps.
import { MamError, EXIT, usageError } from "../sys/errors.ts";
import { field } from "../sys/fields.ts";
import { homeDir, type Env } from "../sys/paths.ts";
import type { SandboxDefault } from "./default.ts";
import { agentStores, bwrapPath, probeBwrap } from "./inputs.ts";
import { NET_MODES, type NetMode, parseEndpoint, refusal, SANDBOX_MODES, type SandboxSpec } from "./plan.ts";

export interface SandboxInput {
  sandbox?: string;
  net?: string;
  allow?: string[];
}

/** HOST:PORT of a URL (its default port when it names none) */
function endpointOf(url: string | undefined): string | undefined {
  if (!url) return undefined;
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return undefined;
  }
  if (!u.hostname) return undefined;
  const port = u.port || (u.protocol === "http:" ? "80" : "443");
  const host = u.hostname.includes(":") ? `[${u.hostname.replace(/^\[|\]$/g, "")}]` : u.hostname;
  return `${host}:${port}`;
}

/** the model endpoint a kind reaches, from the environment it starts in (none known: []) */
export function modelEndpoints(kind: string, env: Env): string[] {
  if (kind === "claude") return [endpointOf(env.ANTHROPIC_BASE_URL) ?? "api.anthropic.com:443"];
  if (kind === "codex") return [endpointOf(env.OPENAI_BASE_URL) ?? "api.openai.com:443"];
  return [];
}

/**
 * the spec a create's options ask for (undefined: no sandbox); usage errors change nothing. In
 * order: the options, MAM_SANDBOX and MAM_SANDBOX_NET, the workspace's default (`wsDefault`,
 * ./default.ts: its net and endpoints count only when the sandbox is its)
 */
export function askedSpec(i: SandboxInput, kind: string, env: Env, wsDefault?: SandboxDefault): SandboxSpec | undefined {
  const fromWorkspace = i.sandbox === undefined && env.MAM_SANDBOX === undefined && wsDefault !== undefined;
  const mode = i.sandbox ?? env.MAM_SANDBOX ?? wsDefault?.sandbox ?? "none";
  if (!(SANDBOX_MODES as readonly string[]).includes(mode)) throw usageError(`${i.sandbox === undefined ? "MAM_SANDBOX" : field("sandbox")}: '${mode}' is not one of ${SANDBOX_MODES.join(", ")}`);
  if (mode === "none") {
    if (i.net !== undefined || (i.allow ?? []).length) throw usageError(`${field(i.net !== undefined ? "net" : "allow")} goes with ${field("sandbox", "bwrap")}`);
    return undefined;
  }
  const net = i.net ?? env.MAM_SANDBOX_NET ?? (fromWorkspace ? wsDefault?.net : undefined) ?? "model";
  if (!(NET_MODES as readonly string[]).includes(net)) throw usageError(`${i.net === undefined ? "MAM_SANDBOX_NET" : field("net")}: '${net}' is not one of ${NET_MODES.join(", ")}`);
  const allow = [...(fromWorkspace && net === "model" ? (wsDefault?.allow ?? []) : []), ...(i.allow ?? [])];
  for (const a of allow) if (!parseEndpoint(a)) throw usageError(`${field("allow")}: '${a}' is not HOST:PORT`, "e.g. api.anthropic.com:443 or 127.0.0.1:8080");
  if (allow.length && net !== "model") throw usageError(`${field("allow")} goes with ${field("net", "model")}`);
  agentStores(kind, env); // a kind mam cannot sandbox is refused here
  const spec: SandboxSpec = { mode: "bwrap", net: net as NetMode };
  if (net === "model") spec.allow = [...new Set([...modelEndpoints(kind, env), ...allow])];
  return spec;
}

/** the checks that look at the machine: the workspace, the multiplexer, bwrap itself */
export function checkSandbox(spec: SandboxSpec, o: { ws: string; backend: string }, env: Env): string {
  if (o.backend !== "tmux") throw usageError(`${field("sandbox", "bwrap")} runs on tmux only for now`, `give ${field("mux", "tmux")} (docs/sandbox.md)`);
  const why = refusal({ home: homeDir(env), ws: o.ws });
  if (why) throw new MamError(`${field("sandbox", "bwrap")}: ${why}`, EXIT.FAIL, "run the agent in a workspace below your home folder, or without a sandbox");
  const bwrap = bwrapPath(env);
  probeBwrap(bwrap, spec.net !== "all");
  return bwrap;
}

/** the sandbox a row keeps, checked (undefined: none); a malformed one is an error, never "none" */
export function rowSandbox(row: { name: string; sandbox?: unknown }): SandboxSpec | undefined {
  const s = row.sandbox as Partial<SandboxSpec> | undefined;
  if (s === undefined || s === null) return undefined;
  const ok =
    typeof s === "object" &&
    s.mode === "bwrap" &&
    (NET_MODES as readonly string[]).includes(String(s.net)) &&
    (s.allow === undefined || (Array.isArray(s.allow) && s.allow.every((a) => typeof a === "string" && parseEndpoint(a) !== undefined)));
  if (!ok) throw new MamError(`session '${row.name}': its sandbox in agent-sessions.yaml is malformed`, EXIT.FAIL, "it must be {mode: bwrap, net: none|model|all, allow: [HOST:PORT…]}; fix it, or create the session again");
  return { mode: "bwrap", net: s.net as NetMode, ...(s.allow ? { allow: [...s.allow] } : {}) };
}

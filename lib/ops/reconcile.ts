// One reconcile pass (docs/daemon.md): list the servers, classify, apply under the registry lock.
import { keepingPolicy } from "../fleet/policy.ts";
import { recordKey } from "../sys/record-key.ts";
import { basename, dirname, join } from "node:path";
import { applyActions } from "../fleet/apply.ts";
import { allRows } from "../registry/rows.ts";
import type { Action, Drift } from "../fleet/classify.ts";
import { customHerdrSocket, rememberSocket } from "../mux/herdr-socket.ts";
import { onPath } from "../mux/index.ts";
import type { Backend } from "../mux/types.ts";
import { isValidName } from "../sys/names.ts";
import { ambientHerdrServer, type Env } from "../sys/paths.ts";
import { isoUtc } from "../sys/time.ts";
import type { Deps } from "./deps.ts";
import { observe } from "./session/observe.ts";

export interface ReconcileReport {
  timestamp: string;
  yaml_path: string;
  /** herdr servers by name; tmux servers as "tmux:<name>" */
  servers: Record<string, { reachable: boolean; state: string; panes: number; detail?: string }>;
  drifts: Drift[];
  /** what was done (dry run: what would be done) */
  actions: Action[];
  dry_run: boolean;
}

/**
 * The server of the pane the caller runs in, when it runs in one: the herdr server (HERDR_SESSION /
 * HERDR_SOCKET_PATH), or the tmux server whose socket TMUX names, when that socket is where
 * `tmux -L <name>` looks ($TMUX_TMPDIR or /tmp, then tmux-<uid>/).
 */
export function callerServers(env: Env, uid: number = process.getuid?.() ?? 0): { backend: Backend; server: string }[] {
  const found: { backend: Backend; server: string }[] = [];
  if ((env.HERDR_SOCKET_PATH || env.HERDR_SESSION) && (env.MAM_HERDR_BIN || onPath("herdr", env))) {
    try {
      const custom = customHerdrSocket(env);
      found.push({ backend: "herdr", server: custom ? rememberSocket(custom, env) : ambientHerdrServer(env) });
    } catch {}
  }
  const socket = env.TMUX?.split(",")[0];
  if (socket && dirname(socket) === join(env.TMUX_TMPDIR || "/tmp", `tmux-${uid}`) && isValidName(basename(socket))) {
    found.push({ backend: "tmux", server: basename(socket) });
  }
  return found;
}

export async function reconcileOnce(deps: Deps, opts: { dry_run: boolean }): Promise<ReconcileReport> {
  const data = deps.registry.read();
  const obs = await observe(deps, data, callerServers(deps.env));
  const now = deps.clock.epoch();
  let actions = obs.actions;
  if (!opts.dry_run && actions.length > 0) {
    const planned = actions;
    // an id the agent reported (or mam found) keeps the mark of a policy this user's mam wrote
    const key = recordKey(deps.env, false);
    const r = await deps.registry.mutate((d) => keepingPolicy(allRows(d), key, deps.ws, () => applyActions(d, planned, now)));
    actions = r.result;
  }
  const servers: ReconcileReport["servers"] = {};
  for (const v of obs.views) {
    const key = v.backend === "herdr" ? v.server : `tmux:${v.server}`;
    servers[key] = {
      reachable: v.listing.state !== "unreachable",
      state: v.listing.state,
      panes: v.listing.state === "ok" ? v.listing.panes.length : 0,
      ...(v.listing.state !== "ok" ? { detail: v.listing.detail } : {}),
    };
  }
  return { timestamp: isoUtc(now), yaml_path: deps.registry.path, servers, drifts: obs.drifts, actions, dry_run: opts.dry_run };
}

/** one line per action, for humans and the daemon's log */
export function describeAction(a: Action): string {
  switch (a.type) {
    case "terminate":
      return `${a.name}: running → terminated (${a.reason})`;
    case "register":
      return `${a.row.name}: registered (${a.section === "herdr_sessions" ? "herdr" : "tmux"} pane ${a.row.pane?.id} on '${a.server}')`;
    case "fill-session-id":
      return `${a.name}: ${a.field} = ${a.value} (from ${a.source})`;
    case "update-pane":
      return `${a.name}: pane ${Object.entries(a.pane).map(([k, v]) => `${k}=${v}`).join(" ")}`;
  }
}

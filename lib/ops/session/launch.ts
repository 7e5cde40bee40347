// Claiming a pane and starting an agent in it, verified (SPEC §5.2 step 3): shared by create and
// resume. The caller writes its row and only then releases the pane-claim lock.
//
// What an agent's environment holds (agentEnv; issue 23, R1 and R3): who it is (MAM_SESSION,
// MAM_WORKSPACE) and a PATH with, on herdr, the herdr shim's folder first: a folder of mam's own
// (lib/mux/shim.ts), never one in the workspace. mam's secrets never reach it (the drivers leave
// them out; lib/sys/secrets.ts).
import { type AgentKind, commandLine } from "../../agents/kinds/index.ts";
import { isSocketServer } from "../../mux/herdr-socket.ts";
import { installAgentShim, withoutShimDirs } from "../../mux/shim.ts";
import { AgentPaneBusy, type Backend, type Mux, type MuxPane, type WorktreeSpec } from "../../mux/types.ts";
import { herdrAgentName } from "../../mux/herdr-proto.ts";
import type { HeldLock } from "../../sys/lock-file.ts";
import { claimPaneLock } from "../../sys/pane-lock.ts";
import type { Env } from "../../sys/paths.ts";
import { labelFor } from "../../mux/label.ts";
import type { Deps } from "../deps.ts";
import { adoptPane } from "../../fleet/adopt.ts";
import type { Section } from "../../registry/types.ts";
import type { SandboxSpec } from "../../sandbox/plan.ts";
import { sandboxedArgv } from "../../sandbox/supervise.ts";

export const PICK_ATTEMPTS = 3;

export interface LaunchSpec {
  name: string;
  kind: AgentKind;
  /** the session's role (tmux keeps it on the session, herdr in the pane's label: a killed create's pane is registered with it, registry rebuild gives it back) */
  role?: string;
  /** arguments after the kind's command (fresh or resume args, then the user's) */
  args: string[];
  backend: Backend;
  server: string;
  startServer: boolean;
  /** pane ids that running rows of this server hold (never picked) */
  taken: Set<string>;
  /** the folder the agent runs in (default: ws); its worktree when it has one */
  cwd?: string;
  /**
   * herdr: create this worktree through herdr (create), or show the existing one again (resume:
   * `open`), and start the agent in its workspace's root pane (tmux: mam made it already)
   */
  herdrWorktree?: WorktreeSpec & { open?: boolean };
  /**
   * what this launch made, for the caller to undo: `worktree` once herdr made the worktree; `pane`,
   * the pane it started the agent in (or tried to: the daemon may have registered it meanwhile)
   */
  made?: { worktree: boolean; pane?: string };
  /** the agent runs in this sandbox, with this bwrap (lib/sandbox/; tmux only) */
  sandbox?: { spec: SandboxSpec; bwrap: string };
}

export interface Launched {
  mux: Mux;
  pane: MuxPane;
  /** the pane-claim lock, still held: release it once the row is written */
  lock: HeldLock;
  argv: string[];
  agentName?: string;
  pid?: number;
  cmd?: string;
  cmdFull: string;
  /** herdr: the workspace herdr made for the worktree (herdrWorktree) */
  worktreeWorkspace?: string;
}

/** seconds an agent typed into a pane (or tmux) must stay up to count as started */
export function settleMs(env: Env): number {
  const v = Number(env.MAM_AGENT_SETTLE_S);
  return Number.isFinite(v) && v >= 0 && env.MAM_AGENT_SETTLE_S !== "" && env.MAM_AGENT_SETTLE_S !== undefined ? v * 1000 : 2000;
}

/**
 * the environment agents get besides their multiplexer's: who they are, and mam's PATH without
 * any shim folder (an older mam's `<ws>/.mam/bin` in it would still run a workspace's own git),
 * with `shimDir` (the herdr shim's, agentShimDir) first when given
 */
export function agentEnv(ws: string, name: string, env: Env, shimDir?: string): Record<string, string> {
  const path = withoutShimDirs(env.PATH ?? "/usr/bin:/bin", env);
  return { PATH: shimDir === undefined ? path : `${shimDir}:${path}`, MAM_SESSION: name, MAM_WORKSPACE: ws };
}

/** the lock that serialises claims on one multiplexer server (herdr: SPEC §4's per-server lock) */
export function claimLockName(backend: Backend, server: string): string {
  // a custom-socket server's panes take default.lock through the shim (SPEC §4.1): so does mam
  if (backend === "herdr" && isSocketServer(server)) return "default";
  return backend === "herdr" ? server : `tmux.${server}`;
}

/** herdr already shows this worktree as a workspace (then a pane is claimed in it as usual) */
async function worktreeShown(mux: Mux, path: string, listed: MuxPane[] | undefined): Promise<boolean> {
  if (listed) return listed.some((p) => p.cwd === path);
  const l = await mux.list();
  return l.state === "ok" && l.panes.some((p) => p.cwd === path);
}

export async function launch(deps: Pick<Deps, "ws" | "env" | "muxFor">, s: LaunchSpec): Promise<Launched> {
  const ws = deps.ws;
  const mux = deps.muxFor(s.backend, s.server);
  // herdr: the shim is written again every time (its folder is mam's; see lib/mux/shim.ts)
  const shimDir = s.backend === "herdr" ? installAgentShim(ws, deps.env) : undefined;
  const lock = await claimPaneLock(claimLockName(s.backend, s.server), deps.env);
  try {
    // under the lock: the listing that shows the server runs is the one the first claim picks from
    let listed = (await mux.ensureRunning(s.startServer)) ?? undefined;
    const bare = commandLine(s.kind, s.args);
    const argv = s.sandbox ? sandboxedArgv(s.sandbox.spec, { ws, name: s.name, kind: s.kind.kind, bwrap: s.sandbox.bwrap }, bare) : bare;
    const env = agentEnv(ws, s.name, deps.env, shimDir);
    const agentName = s.backend === "herdr" && s.kind.herdrKind ? herdrAgentName(s.name) : undefined;
    const spec = {
      session: s.name,
      agent: s.kind.kind,
      agentName,
      herdrKind: s.backend === "herdr" ? (s.kind.herdrKind ?? undefined) : undefined,
      argv,
      cwd: s.cwd ?? ws,
      workspace: ws,
      ...(s.role !== undefined ? { role: s.role } : {}),
      env,
      settleMs: settleMs(deps.env),
      // herdr: labelled once the claim is ours, never before (a pane another client wins must
      // not carry our label); the label carries the kind and role (lib/mux/label.ts), so a create
      // killed before its row, or a registry rebuild, gets them back
      label: labelFor(s.name, s.kind.kind, s.role),
    };
    let started: MuxPane | undefined;
    let worktreeWorkspace: string | undefined;
    if (s.backend === "tmux") {
      started = await mux.start(undefined, spec);
      if (s.made) s.made.pane = started.id;
    }
    else if (s.herdrWorktree && !(s.herdrWorktree.open && (await worktreeShown(mux, s.herdrWorktree.path, listed)))) {
      // a fresh workspace of its own: no other client picks its root pane, one attempt
      if (!mux.createWorktree || !mux.openWorktree) throw new Error("this multiplexer cannot make worktrees");
      const wt = s.herdrWorktree.open ? await mux.openWorktree(s.herdrWorktree) : await mux.createWorktree(s.herdrWorktree);
      if (s.made && !s.herdrWorktree.open) s.made.worktree = true;
      worktreeWorkspace = wt.workspaceId;
      if (s.made) s.made.pane = wt.pane.id;
      try {
        await mux.label(wt.pane.id, spec.label);
        started = await mux.start(wt.pane, spec);
      } catch (e) {
        // its workspace goes with its only pane; the caller removes the worktree itself
        await mux.close(wt.pane.id).catch(() => {});
        throw e;
      }
    } else {
      for (let attempt = 1; !started; attempt++) {
        const pane = await mux.claimPane(s.cwd ?? ws, (id) => s.taken.has(id), env, listed);
        listed = undefined; // a second pick lists again
        if (!pane) throw new Error("herdr claimPane returned no pane");
        if (s.made) s.made.pane = pane.id;
        try {
          started = await mux.start(pane, spec);
        } catch (e) {
          // another client won this pane between our pick and herdr's atomic claim (a pane this
          // claim created is only given up once someone else's agent is in it): pick again
          if (e instanceof AgentPaneBusy && attempt < PICK_ATTEMPTS) {
            s.taken.add(pane.id);
            continue;
          }
          // a pane this claim created must not outlive the failed start as an empty shell (a
          // failed start of an agent closes it itself); one another client won is theirs
          if (pane.fresh && !(e instanceof AgentPaneBusy)) await mux.close(pane.id).catch(() => {});
          throw e;
        }
      }
    }
    let pid = started.pid;
    let cmd = started.cmd;
    if (pid === undefined) {
      try {
        const info = await mux.processInfo(started.id);
        const fg = info.foreground.find((p) => p.pid !== info.shellPid) ?? info.foreground[0];
        pid = fg?.pid;
        cmd = fg?.name ?? cmd;
      } catch {}
    }
    // herdr may have started the agent under a derived name (the usual one was taken)
    return { mux, pane: started, lock, argv, agentName: started.agentName ?? agentName, pid, cmd, cmdFull: started.cmdFull ?? argv.join(" "), worktreeWorkspace };
  } catch (e) {
    lock.close();
    throw e;
  }
}

/**
 * after a failed start: the daemon's registrations, since `t0`, of the pane it was tried in go
 * (adoptPane), as they would have been taken over had it started; else a session the user never
 * made stays in the registry, and is reported dead once the pane is gone
 */
export async function forgetTriedPane(deps: Pick<Deps, "registry">, section: Section, server: string, pane: string | undefined, t0: number, name: string): Promise<void> {
  if (pane === undefined) return;
  try {
    await deps.registry.mutate((d) => void adoptPane(d, section, server, pane, t0, name));
  } catch {} // the failed start's own error is what the user needs to see
}

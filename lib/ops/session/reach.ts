// Reaching a session's agent (the JobRuntime of lib/jobs/runtime.ts): find the running row of a
// name and its pane (one listing of its server), look at the agent first (a bare shell left by
// an agent that exited, or a dialog, is never typed into), type a prompt at its input prompt, and
// show a notice on its server. Built from the registry and the multiplexers it is given. A name
// `name@host` is a session on another host of the team (docs/machines.md): found in what its host
// announces, and sent a delivery its host types (lib/team/offer.ts).
import { isHerdrManaged } from "../../agents/kinds/index.ts";
import { findPane } from "../../fleet/classify.ts";
import { isRemote, type JobRuntime } from "../../jobs/runtime.ts";
import type { JobStore } from "../../jobs/store.ts";
import type { MuxFactory } from "../../mux/types.ts";
import { backendOf, serverOf } from "../../registry/rows.ts";
import type { RegistryData } from "../../registry/types.ts";
import { EXIT, MamError } from "../../sys/errors.ts";
import type { Env } from "../../sys/paths.ts";
import { liveWorktreeOf } from "../../worktrees/plan.ts";
import { answerHint, lookAt, typeInto, waitingAt } from "./at-prompt.ts";
import { rowAgent } from "../../fleet/rows.ts";

/** typing into a pane: one text at a time in this process (the daemon types beside its hooks) */
const typing = new Map<string, Promise<void>>();

function onePerPane<T>(pane: string, fn: () => Promise<T>): Promise<T> {
  const next = (typing.get(pane) ?? Promise.resolve()).then(fn);
  const done = next.then(
    () => undefined,
    () => undefined,
  );
  typing.set(pane, done);
  void done.then(() => {
    if (typing.get(pane) === done) typing.delete(pane);
  });
  return next;
}

/** `ws`: the workspace, whose daemon's heard roster finds sessions on other hosts (lib/team/heard.ts) */
export function sessionReach(read: () => RegistryData, muxFor: MuxFactory, env: Env, jobs?: () => JobStore, ws?: string): JobRuntime {
  /** the running row of that name; with anyStatus, failing that any row of that name (a job's worker may end with its job) */
  const rowOf = (name: string, anyStatus = false) => {
    const data = read();
    for (const section of ["herdr_sessions", "tmux_sessions"] as const) {
      const row = data[section].find((r) => r.name === name && r.status === "running") ?? (anyStatus ? data[section].find((r) => r.name === name) : undefined);
      if (row) return { row, section, backend: backendOf(section), server: serverOf(row, section) };
    }
    return undefined;
  };
  return {
    async findSession(name) {
      if (name.includes("@")) {
        const { findRemoteSession } = await import("../../team/offer.ts");
        const { hostName } = await import("../../team/host.ts");
        const here = `@${hostName(env)}`;
        if (!name.endsWith(here)) return findRemoteSession(env, name, ws);
        name = name.slice(0, -here.length);
      }
      const r = rowOf(name);
      if (!r) return undefined;
      const mux = muxFor(r.backend, r.server);
      const l = await mux.list();
      const pane = l.state === "ok" ? findPane(r.row, l.panes, r.section) : undefined;
      if (!pane) return undefined;
      const agent = rowAgent(r.row) ?? "unknown";
      const st = await lookAt(mux, pane.id, agent, env, pane);
      const gone = st.at === "gone" ? st.why : undefined;
      const waiting = st.at === "dialog" ? `${waitingAt(st)} in ${pane.id} (answer it there: ${answerHint(r.backend, r.server, name, pane.id)})` : undefined;
      const wt = liveWorktreeOf(r.row);
      const worktree = wt ? { path: wt.path, branch: wt.branch, base: wt.base, base_commit: wt.base_commit } : undefined;
      const working = st.at === "working";
      return { name, backend: r.backend, server: r.server, paneId: pane.id, agent, ...(gone ? { gone } : {}), ...(waiting ? { waiting } : {}), ...(worktree ? { worktree } : {}), ...(working ? { working } : {}) };
    },
    async prompt(s, text, about, as) {
      if (isRemote(s)) {
        if (!about || !jobs) throw new MamError(`${s.name} is on another host: only a job's texts reach it`, EXIT.USAGE);
        const { offer } = await import("../../team/offer.ts");
        return offer(env, jobs(), s, about);
      }
      return onePerPane(`${s.backend}\t${s.server}\t${s.paneId}`, () => typeInto(muxFor(s.backend, s.server), s, text, isHerdrManaged(s.agent === "unknown" ? undefined : s.agent), env, as));
    },
    async noticeTarget(name) {
      const r = rowOf(name, true);
      return r ? { backend: r.backend, server: r.server } : undefined;
    },
    async notify(t, title, body) {
      const mux = muxFor(t.backend, t.server);
      if (!mux.notify) return false;
      return (await mux.notify({ title, body })).shown;
    },
  };
}

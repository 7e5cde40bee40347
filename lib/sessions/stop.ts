// mam stop (SPEC §5.3): graceful (the agent's own exit, then close), --hard, --soft; the
// conversation id is recorded first so resume can continue it.
import { rmSync } from "node:fs";
import { agentKind, idField, isHerdrManaged, KINDS, ownId } from "../agents/kinds.ts";
import { findPane } from "../monitor/classify.ts";
import { muxFor } from "../mux/index.ts";
import type { Mux, MuxPane } from "../mux/types.ts";
import { backendOf, serverOf } from "../registry/rows.ts";
import { mutateRegistry, readRegistry, registryPath } from "../registry/index.ts";
import type { RegistryData, Row, Section } from "../registry/types.ts";
import { SECTIONS } from "../registry/types.ts";
import { MamError, notFound, usageError } from "../sys/errors.ts";
import type { Env } from "../sys/paths.ts";
import { epochNow, isoUtc } from "../sys/time.ts";
import { nameFromLabel } from "./naming.ts";

export type StopMode = "graceful" | "hard" | "soft";

export interface StopOptions {
  ws: string;
  name: string;
  mode: StopMode;
  purge: boolean;
  reason: string;
  env: Env;
}

export interface Stopped {
  name: string;
  status: "stopped" | "terminated" | "archived";
  already: boolean;
  pane: string | null;
  session_id: string | null;
  purged: string[];
}

export interface RowRef {
  section: Section;
  row: Row;
}

/** the row a command about `name` acts on: the running one, else the last one of that name */
export function pickRow(data: RegistryData, name: string): RowRef | undefined {
  let last: RowRef | undefined;
  for (const section of SECTIONS) {
    for (const row of data[section]) {
      if (row.name !== name) continue;
      if (row.status === "running") return { section, row };
      last = { section, row };
    }
  }
  return last;
}

const until = async (cond: () => Promise<boolean>, ms: number, step = 100): Promise<boolean> => {
  const end = Date.now() + ms;
  for (;;) {
    if (await cond()) return true;
    if (Date.now() >= end) return false;
    await Bun.sleep(step);
  }
};

async function currentPane(mux: Mux, row: Row, section: Section): Promise<MuxPane | undefined> {
  const l = await mux.list();
  return l.state === "ok" ? findPane(row, l.panes, section) : undefined;
}

/** the agent has left the pane: no foreground process besides the shell, or the pane is gone */
async function agentLeft(mux: Mux, paneId: string): Promise<boolean> {
  try {
    const info = await mux.processInfo(paneId);
    return info.foreground.every((p) => p.pid === info.shellPid || /^(ba|z|da|fi|k|tc|c)?sh$/.test(p.name));
  } catch {
    return true;
  }
}

/** the conversation id to keep: the row's own, herdr's report, else this workspace's newest */
export function conversationId(row: Row, pane: MuxPane | undefined, ws: string, env: Env): string | undefined {
  const agent = typeof row.agent === "string" ? row.agent : undefined;
  if (!agent || !KINDS[agent]) return undefined;
  return ownId(row, agent) ?? pane?.agentSessionId ?? agentKind(agent).store?.newest(ws, env)?.id;
}

export async function stopSession(o: StopOptions): Promise<Stopped> {
  if (o.purge && o.mode !== "hard") throw usageError("--purge-conversation goes with --hard", "mam stop NAME --hard --purge-conversation --yes");
  const path = registryPath(o.ws, o.env);
  const ref = pickRow(readRegistry(path), o.name);
  if (!ref) throw notFound(`no session named '${o.name}' in ${path}`, "see: mam status");
  const { section, row } = ref;
  const agent = typeof row.agent === "string" ? row.agent : undefined;
  const base: Stopped = { name: o.name, status: "stopped", already: false, pane: null, session_id: agent ? (ownId(row, agent) ?? null) : null, purged: [] };
  if (row.status !== "running" && !(o.mode === "hard" && o.purge)) {
    return { ...base, status: row.status, already: true };
  }

  const server = serverOf(row, section);
  const mux = muxFor(backendOf(section), server, o.env);
  let pane: MuxPane | undefined;
  if (row.status === "running") {
    const l = await mux.list();
    // a multiplexer that answers garbage or times out says nothing about the pane: marking the
    // row stopped would hide an agent that may still run (a server that is not running owns no
    // panes, so that case goes on). --soft never touches the pane and goes on too.
    if (l.state === "unreachable" && o.mode !== "soft") {
      throw new MamError(`cannot stop ${o.name}: ${l.detail}`, 1, "nothing was changed; retry when the multiplexer answers, or archive the row with --soft");
    }
    pane = l.state === "ok" ? findPane(row, l.panes, section) : undefined;
  }
  // only ever a pane that carries our label, or the one the registry names
  const ours = pane && (nameFromLabel(pane.label) === o.name || pane.id === row.pane?.id);
  const sid = conversationId(row, pane, o.ws, o.env);

  if (o.mode === "graceful" && ours && pane) {
    const kind = agent && KINDS[agent] ? KINDS[agent] : undefined;
    if (kind) {
      // as a prompt to the agent: herdr refuses it when the agent is already gone (a bare shell
      // must not run the exit text)
      await mux.submit(pane.id, kind.exitText, isHerdrManaged(kind.kind)).catch(() => {});
      await until(() => agentLeft(mux, pane.id), 3000);
    }
  }
  if (o.mode !== "soft" && ours && pane) {
    await mux.close(pane.id);
    await until(async () => (await currentPane(mux, row, section))?.id !== pane.id, 5000);
  }

  const purged: string[] = [];
  if (o.purge && agent && sid) {
    const conv = agentKind(agent).store?.find(sid, o.ws, o.env);
    for (const f of conv?.files ?? []) {
      rmSync(f, { recursive: true, force: true });
      purged.push(f);
    }
  }

  const now = epochNow();
  const status: Stopped["status"] = o.mode === "graceful" ? "stopped" : o.mode === "hard" ? "terminated" : "archived";
  await mutateRegistry(path, (d) => {
    const r = d[section].find((x) => x.name === o.name && serverOf(x, section) === server && x.status === row.status);
    if (!r) return;
    if (agent && sid && !o.purge) r[idField(agent)] = sid;
    if (o.purge && agent) delete r[idField(agent)];
    r.status = status;
    r.last_visible_status = status;
    if (status === "stopped") {
      r.stopped_at = isoUtc(now);
      r.stopped_at_epoch = now;
      r.stop_reason = o.reason;
      r.resumable = sid !== undefined;
      r.last_visible_note = `stopped: ${o.reason}`;
    } else if (status === "terminated") {
      r.terminated_at = isoUtc(now);
      r.terminated_at_epoch = now;
      r.termination_mode = "hard";
      r.stop_reason = o.reason;
      r.last_visible_note = `terminated (hard): ${o.reason}`;
    } else {
      r.archived_at = isoUtc(now);
      r.stop_reason = o.reason;
      r.last_visible_note = `archived: ${o.reason}; the pane was left running`;
    }
  });
  return { ...base, status, pane: pane?.id ?? null, session_id: sid ?? null, purged };
}

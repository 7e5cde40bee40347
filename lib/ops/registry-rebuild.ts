// Rebuilding the registry from the panes (docs/registry.md): the way out of a registry that is
// broken with no usable backup, or gone (moved away), while its agents still run. mam labels
// every pane it starts (herdr: the pane label `mam:<name> (<kind>, <role>)`, lib/mux/label.ts;
// tmux: the session options @mam_name, @mam_agent, @mam_role), so the multiplexers still know
// which panes are this workspace's sessions: a pane with such a label, a valid name and its
// folder inside the workspace becomes a running row again.
//
// Where it looks: tmux, the server `mam` and every private server whose socket it finds where
// `tmux -L NAME` puts them ($TMUX_TMPDIR or /tmp, then tmux-<uid>/); herdr (when installed), the
// default server, the caller's, the ones the broken file or its backup name, and the ones given.
// What a row gets: the whole backup row of that name and server when it names the same pane (the
// same agent); else the kind and role mam started the pane with (tmux keeps them as @mam_agent and
// @mam_role, herdr in the pane's label `mam:<name> (<kind>, <role>)`: lib/mux/label.ts). Without
// them (an older mam's label `mam:<name>`): the kind herdr detects, else the backup row's, else
// the kind whose command is the pane's (tmux); the backup row's role, else `unknown` (guessRole).
// Reconcile fills the conversation id later.
// Sockets of tmux servers that are not running are not listed as servers looked at.
//
// Without `yes` it only says what it would do. With it, under the registry lock, a broken file is
// kept as `<file>.broken-<UTC time>` (never deleted), then the rows are written as any write is.
// A registry that reads fine and has rows is refused: `mam reconcile` registers what it lacks.
import { existsSync, lstatSync, readdirSync, readFileSync, renameSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { KINDS, idField } from "../agents/kinds/index.ts";
import { guessRole } from "../fleet/naming.ts";
import { nameFromLabel } from "../mux/label.ts";
import { onPath } from "../mux/index.ts";
import type { Backend, MuxPane } from "../mux/types.ts";
import { inspectRegistry, loadRegistryFile, MAX_REGISTRY_BYTES, normalize } from "../registry/load.ts";
import { registryBackupPath, registryLockPath } from "../registry/paths.ts";
import { emptyRegistry, sectionOf, serverOf } from "../registry/rows.ts";
import type { RegistryData, Row } from "../registry/types.ts";
import { SECTIONS } from "../registry/types.ts";
import { nameShown, validateRegistry } from "../registry/validate.ts";
import { fsyncDir } from "../sys/atomic.ts";
import { conflict, MamError } from "../sys/errors.ts";
import { withLock } from "../sys/lock-file.ts";
import { isValidName } from "../sys/names.ts";
import type { Env } from "../sys/paths.ts";
import { isoUtc } from "../sys/time.ts";
import type { Deps } from "./deps.ts";
import { callerServers } from "./reconcile.ts";
import { listServers } from "./session/observe.ts";

export const REBUILT_NOTE = "rebuilt from its pane by mam registry rebuild";

export interface RebuildInput {
  yes: boolean;
  /** herdr servers to look at besides the ones mam finds */
  herdr_servers: string[];
  /** private tmux servers to look at besides the ones mam finds */
  tmux_servers: string[];
}

interface ServerRef {
  backend: Backend;
  server: string;
}

export interface Rebuilt {
  path: string;
  dry_run: boolean;
  /** the registry as it was: missing, empty (no rows), or broken (why) */
  previous: { state: "missing" | "empty" | "broken"; error?: string; moved_to: string | null };
  servers: { mux: Backend; server: string; state: string; panes: number; detail?: string }[];
  registered: { name: string; mux: Backend; server: string; pane: string; agent: string | null; role: string; from_backup: boolean }[];
  /** panes with a mam label that did not become rows, and why */
  skipped: { label: string; mux: Backend; server: string; pane: string; why: string }[];
}

type Previous = { state: "missing" | "empty" } | { state: "broken"; error: string } | { state: "valid"; rows: number };

/** the registry file as it is now */
function previousOf(path: string): Previous {
  if (!existsSync(path)) return { state: "missing" };
  try {
    const ins = inspectRegistry(path, "");
    if (ins.problems.length) return { state: "broken", error: ins.problems[0]! };
    const rows = ins.rows.herdr_sessions + ins.rows.tmux_sessions;
    return rows === 0 ? { state: "empty" } : { state: "valid", rows };
  } catch (e) {
    if (!(e instanceof MamError)) throw e;
    return { state: "broken", error: e.message.startsWith(`${path} `) ? e.message.slice(path.length + 1) : e.message };
  }
}

/** the backup's rows, when it reads as a registry */
function backupRows(path: string): RegistryData {
  try {
    const f = loadRegistryFile(registryBackupPath(path), { hint: "" });
    if (f.exists && validateRegistry(f.raw, undefined, { parsed: true }).length === 0) return normalize(f.raw);
  } catch {}
  return emptyRegistry();
}

/** server names a broken file still shows (`herdr_server: X`, `tmux_server: Y`), however broken it is */
export function serversInText(text: string): ServerRef[] {
  const found: ServerRef[] = [];
  for (const m of text.matchAll(/\b(herdr_server|herdr_session|tmux_server)["']?\s*:\s*["']?([A-Za-z0-9][A-Za-z0-9._-]{0,63})/g)) {
    if (isValidName(m[2]!)) found.push({ backend: m[1] === "tmux_server" ? "tmux" : "herdr", server: m[2]! });
  }
  return found;
}

/** the private tmux servers whose sockets are where `tmux -L NAME` looks */
export function tmuxSockets(env: Env, uid: number = process.getuid?.() ?? 0): string[] {
  const dir = join(env.TMUX_TMPDIR || "/tmp", `tmux-${uid}`);
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  return names.filter((n) => {
    if (!isValidName(n)) return false;
    try {
      return lstatSync(join(dir, n)).isSocket();
    } catch {
      return false;
    }
  });
}

/** every server to look at, each once */
function serversToList(deps: Pick<Deps, "env">, path: string, bak: RegistryData, i: RebuildInput): ServerRef[] {
  const env = deps.env;
  const all: ServerRef[] = [];
  const hasTmux = onPath("tmux", env);
  const hasHerdr = Boolean(env.MAM_HERDR_BIN) || onPath("herdr", env);
  if (hasTmux) all.push({ backend: "tmux", server: "mam" }, ...tmuxSockets(env).map((server) => ({ backend: "tmux" as const, server })));
  if (hasHerdr) all.push({ backend: "herdr", server: "default" });
  all.push(...callerServers(env));
  try {
    const st = existsSync(path) ? lstatSync(path) : undefined;
    if (st?.isFile() && st.size <= MAX_REGISTRY_BYTES) all.push(...serversInText(readFileSync(path, "latin1")));
  } catch {}
  for (const s of SECTIONS) for (const r of bak[s]) all.push({ backend: s === "herdr_sessions" ? "herdr" : "tmux", server: serverOf(r, s) });
  all.push(...i.herdr_servers.map((server) => ({ backend: "herdr" as const, server })), ...i.tmux_servers.map((server) => ({ backend: "tmux" as const, server })));
  const seen = new Map<string, ServerRef>();
  for (const s of all) if ((s.backend === "tmux" ? hasTmux : hasHerdr) || i.herdr_servers.includes(s.server) || i.tmux_servers.includes(s.server)) seen.set(`${s.backend}:${s.server}`, s);
  return [...seen.values()];
}

/** the kind whose command a tmux pane runs (tmux sees no agent kinds: pane_current_command) */
function kindOfCommand(cmd: string | undefined): string | undefined {
  if (!cmd) return undefined;
  return Object.values(KINDS).find((k) => k.exe === cmd)?.kind;
}

/** a kind a label names, when mam knows it */
const knownKind = (k: string | undefined) => (k !== undefined && Object.hasOwn(KINDS, k) ? k : undefined);

const inside = (cwd: string | undefined, ws: string) => cwd !== undefined && (cwd === ws || cwd.startsWith(`${ws}/`));

/**
 * the rows the listings give back (pure): one per pane labelled `mam:<name>` with a valid name, an
 * agent in it and its folder inside the workspace, first come first served per name and server
 */
export function planRebuild(views: { backend: Backend; server: string; panes: MuxPane[] }[], ws: string, bak: RegistryData, now: number): { rows: { section: "herdr_sessions" | "tmux_sessions"; row: Row; fromBackup: boolean }[]; skipped: Rebuilt["skipped"] } {
  const rows: { section: "herdr_sessions" | "tmux_sessions"; row: Row; fromBackup: boolean }[] = [];
  const skipped: Rebuilt["skipped"] = [];
  for (const v of views) {
    const section = sectionOf(v.backend);
    for (const p of v.panes) {
      const name = nameFromLabel(p.label);
      if (name === undefined) continue; // not a pane mam started
      const skip = (why: string) => skipped.push({ label: p.label!, mux: v.backend, server: v.server, pane: p.id, why });
      if (!isValidName(name)) {
        skip("its label names no valid session");
        continue;
      }
      if (p.owner !== undefined && p.owner !== ws) {
        skip(`it belongs to workspace ${p.owner}`);
        continue;
      }
      if (!inside(p.cwd, ws)) {
        skip(`it runs in ${p.cwd ?? "an unknown folder"}, not in this workspace`);
        continue;
      }
      if (v.backend === "herdr" && p.agent === undefined && p.agentName === undefined) {
        skip("no agent runs in it any more");
        continue;
      }
      if (rows.some((r) => r.section === section && r.row.name === name && serverOf(r.row, section) === v.server)) {
        skip(`another pane on this server is ${name} already`);
        continue;
      }
      const old = bak[section].filter((r) => r.name === name && serverOf(r, section) === v.server).pop();
      const same = old !== undefined && old.pane?.id === p.id;
      // the kind: the one mam started in it (herdr: its label), else herdr's detection, the backup's, the pane's command
      const agent = knownKind(p.kind) ?? p.agent ?? (typeof old?.agent === "string" ? old.agent : undefined) ?? kindOfCommand(p.cmd);
      const pane = { id: p.id, ...(p.pid !== undefined ? { pid: p.pid } : {}), ...(p.cmd !== undefined ? { cmd: p.cmd } : {}), ...(p.cmdFull !== undefined ? { cmd_full: p.cmdFull } : {}), cwd: p.cwd };
      const row: Row = same
        ? { ...structuredClone(old), status: "running", pane: { ...(old.pane ?? {}), ...pane }, last_visible_status: "running", last_visible_note: REBUILT_NOTE }
        : {
            name,
            status: "running",
            // the role: the one mam started the pane with (tmux @mam_role, herdr's label), else the backup's, else a guess
            role: p.role !== undefined && /^[^\n\r\t]{1,64}$/.test(p.role) ? p.role : typeof old?.role === "string" ? old.role : guessRole(name),
            ...(agent ? { agent } : {}),
            ...(v.backend === "herdr"
              ? { herdr_session: v.server, herdr_server: v.server, herdr_session_created_at: isoUtc(now), herdr_session_epoch: now }
              : { tmux_server: v.server, tmux_session_created_at: isoUtc(now), tmux_session_epoch: now }),
            ...(p.agentName && p.agentName !== name ? { herdr_agent_name: p.agentName } : {}),
            pane,
            ...(agent && p.agentSessionId ? { [idField(agent)]: p.agentSessionId } : {}),
            last_visible_status: "running",
            last_visible_note: REBUILT_NOTE,
          };
      if (same) for (const k of ["stopped_at", "stopped_at_epoch", "stop_reason", "resumable", "terminated_at", "terminated_at_epoch", "termination_mode", "archived_at"]) delete row[k];
      rows.push({ section, row, fromBackup: old !== undefined });
    }
  }
  return { rows, skipped };
}

/** `20261201T162758Z`: a time for a file name */
const stamp = (epoch: number) => isoUtc(epoch).replace(/[-:]/g, "");

export async function rebuildRegistry(deps: Deps, i: RebuildInput): Promise<Rebuilt> {
  const path = deps.registry.path;
  const refuse = (rows: number) =>
    conflict(`${path} reads fine and has ${rows} row${rows === 1 ? "" : "s"}; nothing was rebuilt`, "mam reconcile registers the agent panes it lacks; to start over, move the file away first");
  const prev = previousOf(path);
  if (prev.state === "valid") throw refuse(prev.rows);
  const bak = backupRows(path);
  // every pane, another workspace's too: planRebuild says why it leaves one out
  const views = await listServers(emptyRegistry(), (b, s) => deps.muxFor(b, s, { allWorkspaces: true }), serversToList(deps, path, bak, i));
  const now = deps.clock.epoch();
  const plan = planRebuild(
    views.map((v) => ({ backend: v.backend, server: v.server, panes: v.listing.state === "ok" ? v.listing.panes : [] })),
    deps.ws,
    bak,
    now,
  );
  const doc: Rebuilt = {
    path,
    dry_run: !i.yes,
    previous: { state: prev.state, ...(prev.state === "broken" ? { error: prev.error } : {}), moved_to: null },
    // a socket of a tmux server that is not running (one that ended without removing it) is no server
    servers: views.filter((v) => !(v.backend === "tmux" && v.listing.state === "not-running" && !i.tmux_servers.includes(v.server))).map((v) => ({
      mux: v.backend,
      server: v.server,
      state: v.listing.state,
      panes: v.listing.state === "ok" ? v.listing.panes.length : 0,
      ...(v.listing.state === "unreachable" ? { detail: v.listing.detail } : {}),
    })),
    registered: plan.rows.map(({ section, row, fromBackup }) => ({
      name: row.name,
      mux: section === "herdr_sessions" ? "herdr" : "tmux",
      server: serverOf(row, section),
      pane: String(row.pane?.id),
      agent: typeof row.agent === "string" ? row.agent : null,
      role: String(row.role),
      from_backup: fromBackup,
    })),
    skipped: plan.skipped,
  };
  if (!i.yes) return doc;
  // under the lock, the file is looked at again: a writer may have made a good one meanwhile
  await withLock(registryLockPath(path), "registry", 60_000, () => {
    const now2 = previousOf(path);
    if (now2.state === "valid") throw refuse(now2.rows);
    doc.previous = { state: now2.state, ...(now2.state === "broken" ? { error: now2.error } : {}), moved_to: null };
    if (now2.state !== "broken") return;
    const kept = `${path}.broken-${stamp(now)}`;
    renameSync(path, kept);
    fsyncDir(dirname(path));
    doc.previous.moved_to = kept;
  });
  // then written as any write is (a create that ran meanwhile keeps its row: first come first served)
  const { result } = await deps.registry.mutate((d, tx) => {
    const added: string[] = [];
    for (const { section, row } of plan.rows) {
      const server = serverOf(row, section);
      const held = d[section].some((r) => serverOf(r, section) === server && ((r.name === row.name && r.status === "running") || (row.pane?.id !== undefined && r.pane?.id === row.pane.id && r.status === "running")));
      if (held) continue;
      tx.allowRoleChange(row.name);
      d[section].push(row);
      added.push(`${section}\u0000${server}\u0000${row.name}`);
    }
    return added;
  });
  doc.registered = doc.registered.filter((r) => result.includes(`${sectionOf(r.mux)}\u0000${r.server}\u0000${r.name}`));
  return doc;
}

export function rebuiltText(r: Rebuilt): string {
  const lines: string[] = [];
  const prev =
    r.previous.state === "missing"
      ? `${r.path}: missing`
      : r.previous.state === "empty"
        ? `${r.path}: no rows`
        : `${r.path}: ${r.previous.error}${r.previous.moved_to ? `; kept as ${basename(r.previous.moved_to)}` : r.dry_run ? `; would be kept as ${basename(r.path)}.broken-<time>` : ""}`;
  lines.push(prev);
  lines.push(`looked at: ${r.servers.length ? r.servers.map((s) => `${s.mux}:${s.server} (${s.state === "ok" ? `${s.panes} pane${s.panes === 1 ? "" : "s"}` : s.state})`).join(", ") : "no multiplexer (neither herdr nor tmux is on PATH)"}`);
  const n = r.registered.length;
  lines.push(`${r.dry_run ? "would register" : "registered"} ${n} session${n === 1 ? "" : "s"}${n ? ":" : ""}`);
  for (const s of r.registered) lines.push(`  ${s.name}  ${s.mux} pane ${s.pane} on ${s.server} (${s.agent ?? "agent unknown"}, role ${s.role}${s.from_backup ? ", from the backup" : ""})`);
  if (r.skipped.length) {
    lines.push(`left out ${r.skipped.length} pane${r.skipped.length === 1 ? "" : "s"} with a mam label:`);
    for (const s of r.skipped) lines.push(`  ${s.mux} pane ${s.pane} on ${s.server} (label ${nameShown(s.label)}): ${s.why}`);
  }
  if (r.dry_run) lines.push("dry run: nothing changed; run again with --yes to rebuild (a broken file is kept, never deleted)");
  return lines.join("\n");
}

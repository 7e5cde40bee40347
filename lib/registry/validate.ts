// Registry validation (SPEC §2.1): what a write must satisfy. Returns problems as lines, e.g.
//   herdr_sessions[2] 'api-worker' bad status 'runing'
//   role of session 'api-worker' cannot be modified from 'worker' to 'reviewer'
import type { RegistryData, Section } from "./types.ts";
import { SECTIONS, STATUSES } from "./types.ts";
import { backendOf, serverOf } from "./rows.ts";
import { isValidName } from "../sys/names.ts";
import { isPlainObject, repr, unstorable } from "./values.ts";

export interface ValidateOptions {
  /** names whose role may change in this write (create replacing a stopped row or adopting a monitor row) */
  allowRoleChange?: ReadonlySet<string> | readonly string[];
  /** the data comes straight from a YAML parser: skip the check for values YAML cannot store */
  parsed?: boolean;
}

const identity = (section: Section, server: string, name: string) => `${section}\u0000${server}\u0000${name}`;

/**
 * The problems of `data` (empty when it may be written). With `before` (the file as read) also
 * the role rule: a row keeps the role of the row of the same name and server in `before`.
 * `data` may be anything parsed from a file: null/undefined is an empty registry.
 */
export function validateRegistry(data: unknown, before?: RegistryData, opts: ValidateOptions = {}): string[] {
  const problems: string[] = [];
  if (data === null || data === undefined) return problems;
  if (!isPlainObject(data)) return ["the top level is not a mapping"];
  for (const section of SECTIONS) {
    const rows = data[section];
    if (rows === undefined || rows === null) continue;
    if (!Array.isArray(rows)) {
      problems.push(`${section} is not a list`);
      continue;
    }
    const running = new Map<string, number>();
    for (let i = 0; i < rows.length; i++) {
      const row: unknown = rows[i];
      const at = `${section}[${i}]`;
      if (!isPlainObject(row)) {
        problems.push(`${at} is not a mapping`);
        continue;
      }
      const name = row.name;
      if (typeof name !== "string" || name.trim() === "") {
        problems.push(`${at} missing name`);
        continue;
      }
      const id = `${at} ${repr(name)}`;
      const status = row.status;
      if (status === undefined || status === null || status === "") problems.push(`${id} missing status`);
      else if (!STATUSES.includes(status as never)) problems.push(`${id} bad status ${repr(status)}`);
      if (row.role !== undefined && (typeof row.role !== "string" || row.role.trim() === "")) problems.push(`${id} role must be a non-empty string`);
      if (row.pane !== undefined && !isPlainObject(row.pane)) problems.push(`${id} pane is not a mapping`);
      const wt = worktreeProblem(row.worktree);
      if (wt) problems.push(`${id} ${wt}`);
      const lim = limitProblem(row.limit);
      if (lim) problems.push(`${id} ${lim}`);
      const rs = restartProblem(row);
      if (rs) problems.push(`${id} ${rs}`);
      if (!opts.parsed) {
        const bad = unstorable(row);
        if (bad) problems.push(`${id} cannot be stored: ${bad}`);
      }
      if (status === "running") {
        const server = serverOf(row as never, section);
        const key = identity(section, server, name);
        const first = running.get(key);
        if (first === undefined) running.set(key, i);
        else problems.push(`${id} is running twice on ${backendOf(section)} server ${repr(server)} (also ${section}[${first}])`);
      }
    }
  }
  for (const k of opts.parsed ? [] : Object.keys(data)) {
    if ((SECTIONS as readonly string[]).includes(k)) continue;
    const bad = unstorable(data[k]);
    if (bad) problems.push(`top-level key ${repr(k)} cannot be stored: ${bad}`);
  }
  if (before) problems.push(...roleChanges(data as RegistryData, before, opts));
  return problems;
}

/** the `worktree` field of a row (issue 18): absent, or a mapping with an absolute path and a branch */
export function worktreeProblem(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  if (!isPlainObject(v)) return "worktree is not a mapping";
  if (typeof v.path !== "string" || !v.path.startsWith("/")) return "worktree.path must be an absolute path";
  if (typeof v.branch !== "string" || v.branch === "") return "worktree.branch must be a non-empty string";
  return undefined;
}

const isoTime = (v: unknown) => typeof v === "string" && /^\d{4}-\d\d-\d\dT/.test(v) && Number.isFinite(Date.parse(v));

/**
 * the `limit` field of a row (issue 34, written by the daemon): absent, or a mapping
 * { since: ISO time, resets_at: ISO time | null, reason: one line, source: records | screen,
 * used_percent?: a number from 0 }; the problem names the part that is wrong
 */
export function limitProblem(v: unknown): string | undefined {
  if (v === undefined) return undefined;
  const shape = "limit must be a mapping { since: <ISO time>, resets_at: <ISO time or null>, reason: <one line>, source: records|screen, used_percent?: <number> }";
  if (!isPlainObject(v)) return shape;
  const extra = Object.keys(v).filter((k) => !["since", "resets_at", "reason", "source", "used_percent"].includes(k));
  if (extra.length) return `${shape}; it has ${extra.map((k) => repr(k)).join(", ")}`;
  if (!isoTime(v.since)) return `limit.since must be an ISO time, got ${repr(v.since)}`;
  if (v.resets_at !== null && !isoTime(v.resets_at)) return `limit.resets_at must be an ISO time or null (unknown), got ${repr(v.resets_at)}`;
  if (typeof v.reason !== "string" || v.reason.trim() === "" || v.reason.includes("\n")) return "limit.reason must be one non-empty line";
  if (v.source !== "records" && v.source !== "screen") return `limit.source must be records or screen, got ${repr(v.source)}`;
  if (v.used_percent !== undefined && (typeof v.used_percent !== "number" || !Number.isFinite(v.used_percent) || v.used_percent < 0)) return `limit.used_percent must be a number from 0, got ${repr(v.used_percent)}`;
  return undefined;
}

/** a row's restart policy (lib/fleet/restart.ts): no (absent) or on-failure */
export const RESTART_POLICIES = ["no", "on-failure"] as const;
/** the most restarts per hour a row may allow */
export const MAX_MAX_RESTARTS = 100;

/** the problem of a row's restart fields (docs/unattended.md#dead-agents), or undefined */
export function restartProblem(row: Record<string, unknown>): string | undefined {
  if (row.restart !== undefined && !(RESTART_POLICIES as readonly unknown[]).includes(row.restart)) return `restart must be one of ${RESTART_POLICIES.join(", ")} (not ${repr(row.restart)})`;
  const m = row.max_restarts;
  if (m !== undefined && (typeof m !== "number" || !Number.isSafeInteger(m) || m < 1 || m > MAX_MAX_RESTARTS)) return `max_restarts must be a whole number from 1 to ${MAX_MAX_RESTARTS} (not ${repr(m)})`;
  if (row.restarts !== undefined && (!Array.isArray(row.restarts) || row.restarts.some((t) => typeof t !== "number"))) return "restarts must be a list of epoch seconds";
  // the mark of this user's mam over the row's policy (lib/fleet/policy.ts)
  if (row.policy_mac !== undefined && (typeof row.policy_mac !== "string" || !/^[0-9a-f]{64}$/.test(row.policy_mac))) return `policy_mac must be 64 hex digits (not ${repr(row.policy_mac)})`;
  return undefined;
}

/** rows whose role differs from every role the same name and server had in `before` */
export function roleChanges(data: RegistryData, before: RegistryData, opts: ValidateOptions = {}): string[] {
  const allowed = new Set(opts.allowRoleChange ?? []);
  const had = new Map<string, string[]>();
  for (const section of SECTIONS) {
    for (const row of before[section] ?? []) {
      if (!isPlainObject(row) || typeof row.name !== "string" || typeof row.role !== "string" || row.role === "") continue;
      const key = identity(section, serverOf(row, section), row.name);
      const roles = had.get(key);
      if (roles) roles.push(row.role);
      else had.set(key, [row.role]);
    }
  }
  const problems = new Set<string>();
  for (const section of SECTIONS) {
    const rows = data[section];
    if (!Array.isArray(rows)) continue;
    for (const row of rows) {
      if (!isPlainObject(row) || typeof row.name !== "string" || allowed.has(row.name)) continue;
      const roles = had.get(identity(section, serverOf(row as never, section), row.name));
      if (!roles) continue;
      const role = typeof row.role === "string" ? row.role : undefined;
      if (role !== undefined && roles.includes(role)) continue;
      problems.add(`role of session ${repr(row.name)} cannot be modified from ${repr(roles[0])} to ${role === undefined ? "nothing" : repr(role)}`);
    }
  }
  return [...problems];
}

/**
 * a name as it may be shown on a terminal, whatever it holds: quoted, every character outside
 * printable ASCII (controls, escapes, bidi overrides, line separators) as \u{…}, at most 80 shown
 */
export function nameShown(name: string): string {
  const cut = [...name];
  const body = cut
    .slice(0, 80)
    .map((c) => (c >= " " && c <= "~" && c !== "'" && c !== "\\" ? c : `\\u{${c.codePointAt(0)!.toString(16)}}`))
    .join("");
  return `'${body}${cut.length > 80 ? "…" : ""}'`;
}

/**
 * rows whose names mam would refuse (SPEC §1: 1-64 characters of [A-Za-z0-9._-], starting with a
 * letter or digit): a hand-edited `../../etc`, control or bidi characters, an over-long name.
 * Reported by `registry check` only: such a registry stays readable, and such a row is reached by
 * its pane (`mam stop --pane ID`, `mam resume --pane ID --rename NAME`).
 */
export function nameProblems(data: unknown): string[] {
  const problems: string[] = [];
  if (!isPlainObject(data)) return problems;
  for (const section of SECTIONS) {
    const rows = data[section];
    if (!Array.isArray(rows)) continue;
    rows.forEach((row: unknown, i) => {
      if (!isPlainObject(row) || typeof row.name !== "string" || row.name.trim() === "" || isValidName(row.name)) return;
      const pane = isPlainObject(row.pane) && typeof row.pane.id === "string" && /^[%A-Za-z0-9:._-]{1,64}$/.test(row.pane.id) ? row.pane.id : undefined;
      const reach = pane ? `reach it by its pane: mam stop --pane ${pane}, mam resume --pane ${pane} --rename NAME` : "it records no pane: fix the name in the file";
      problems.push(`${section}[${i}] ${nameShown(row.name)} is a name mam would refuse (1-64 characters of [A-Za-z0-9._-], starting with a letter or digit); ${reach}`);
    });
  }
  return problems;
}

// A row's restart and on-limit policy, marked (docs/security.md#shipped-files): `restart:
// on-failure` makes the daemon resume a dead agent (it starts a process), `on_limit: resume` types
// into it and `on_limit: failover` moves jobs. A workspace's `.mam/agent-sessions.yaml` can come
// from someone else (a cloned repository), so `mam create` marks the policy it writes with a MAC
// under this user's record key (lib/sys/record-key.ts), `policy_mac`, and the daemon acts on a
// row's policy only while the mark checks. A row without one has restart "no" and on_limit "wait".
// Pure: the key is given.
import { ownId } from "../agents/kinds/index.ts";
import { canonicalJson } from "../jobs/canonical.ts";
import type { Row } from "../registry/types.ts";
import { notOwn, recordMac } from "../sys/record-key.ts";

const KIND = "row-policy";

/** the row asks mam to act by itself: restart on-failure, or on_limit resume or failover */
export const hasPolicy = (row: Row): boolean => row.restart === "on-failure" || row.on_limit === "resume" || row.on_limit === "failover";

/**
 * what the mark covers: who, which conversation a resume loads, the policy, and where; and the
 * sandbox a restart starts it in (a row that had one and lost it must not come back without)
 */
function policyFields(row: Row, ws: string): unknown[] {
  const agent = typeof row.agent === "string" ? row.agent : null;
  const fields = [row.name, agent, agent ? (ownId(row, agent) ?? null) : null, row.restart ?? null, row.max_restarts ?? null, row.on_limit ?? null, ws];
  // appended only when there is one: the marks of rows without a sandbox stay as they were
  return row.sandbox === undefined ? fields : [...fields, canonicalJson(row.sandbox)];
}

/** write the row's mark (a row without a policy carries none) */
export function markPolicy(row: Row, key: string, ws: string): void {
  if (hasPolicy(row)) row.policy_mac = recordMac(key, KIND, policyFields(row, ws));
  else delete row.policy_mac;
}

/** why the row's policy was not written by this user's mam (undefined: it was, or it has none) */
export function policyNotOwn(row: Row, key: string | undefined, ws: string): string | undefined {
  if (!hasPolicy(row)) return undefined;
  return notOwn(key, KIND, policyFields(row, ws), row.policy_mac);
}

/**
 * run `change` on rows, keeping the mark of each whose policy was this user's before (a resume
 * that loads another conversation, the agent moving itself to one); never marks one that was not
 */
export function keepingPolicy<T>(rows: Row[], key: string | undefined, ws: string, change: () => T): T {
  const own = key === undefined ? [] : rows.filter((r) => hasPolicy(r) && policyNotOwn(r, key, ws) === undefined);
  const out = change();
  for (const r of own) if (policyNotOwn(r, key, ws) !== undefined) markPolicy(r, key!, ws);
  return out;
}

/** the row as the daemon acts on it: a policy that is not this user's is none (restart no, on_limit wait) */
export function policyView(row: Row, key: string | undefined, ws: string): Row {
  if (policyNotOwn(row, key, ws) === undefined) return row;
  const { restart: _r, max_restarts: _m, on_limit: _o, ...rest } = row;
  return rest as Row;
}

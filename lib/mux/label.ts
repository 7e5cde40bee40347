// The label mam gives every pane it starts an agent in (docs/registry.md#rebuilding-from-the-panes):
// what the multiplexer keeps of a session when mam's own files are gone, broken, or were never
// written (a `mam create` killed with kill -9 before its row).
//
//   mam:<name> (<kind>, <role>)     written since issue 39 item 12
//   mam:<name>                      written before; still read (the kind and role are then unknown)
//
// herdr keeps a pane's label as it was given, less leading and trailing blanks (0.8.2
// src/terminal/state.rs set_manual_label), returns it in every PaneInfo and keeps it across a
// server restart; it is free text and the only thing of a pane herdr keeps that mam can write
// (an agent's name is cleared when the agent exits, metadata tokens are not kept, env is not
// returned). The parentheses end the label, so a role's own blanks survive the trim; a session name
// holds no blank, a kind no blank, comma or parenthesis, so a role may hold any of them. tmux
// keeps the three in session options instead (@mam_name, @mam_agent, @mam_role: tmux.ts) and
// its listing gives back the short form.
export const MAM_LABEL_PREFIX = "mam:";

/** a kind's name as a label carries it (the kinds' table, lib/agents/kinds, is checked by the reader) */
const KIND_RE = /^[a-z][a-z0-9_-]{0,31}$/;

/**
 * a role as a label carries it: 1-64 characters, not all blank, no control character (a label is
 * anyone's to write on that server: a role read back is never an escape sequence)
 */
const ROLE_RE = /^[^\x00-\x1f\x7f-\x9f]{1,64}$/;

export interface LabelFacts {
  name: string;
  /** the kind mam started in the pane (new labels only) */
  kind?: string;
  /** the session's role (new labels only) */
  role?: string;
}

/** the label of session `name`; with its kind (and role) when given and representable */
export function labelFor(name: string, kind?: string, role?: string): string {
  const base = `${MAM_LABEL_PREFIX}${name}`;
  if (kind === undefined || !KIND_RE.test(kind)) return base;
  return role !== undefined && validRole(role) ? `${base} (${kind}, ${role})` : `${base} (${kind})`;
}

const validRole = (role: string) => ROLE_RE.test(role) && role.trim() !== "";

/**
 * what a label says: undefined for a label mam did not write (no `mam:` prefix); the name alone
 * for the short form (old labels, tmux's listing, or a tail this parser does not know: its text
 * then stays in the name, which is no valid session name)
 */
export function parseLabel(label: string | undefined): LabelFacts | undefined {
  if (label === undefined || !label.startsWith(MAM_LABEL_PREFIX)) return undefined;
  const rest = label.slice(MAM_LABEL_PREFIX.length);
  const m = /^([^\s()]+) \(([^\s,()]+)(?:, (.+))?\)$/.exec(rest);
  if (!m || !KIND_RE.test(m[2]!) || (m[3] !== undefined && !validRole(m[3]))) return { name: rest };
  return { name: m[1]!, kind: m[2]!, ...(m[3] !== undefined ? { role: m[3] } : {}) };
}

/** the session name in a `mam:` label (either form) */
export function nameFromLabel(label: string | undefined): string | undefined {
  return parseLabel(label)?.name;
}

// The agents' hook settings that make them report to mam (`mam hooks install|uninstall|status`):
// the edits of a settings document; which kinds have hooks, their events and files, are each
// kind's `hooks` (lib/agents/kinds/). Pure: a parsed settings document in, the changed document
// out. Both agents read the same shape:
//   {"hooks": {"<Event>": [{"matcher"?: "…", "hooks": [{"type": "command", "command": "…", "timeout": N}]}]}}
// mam's own entries are the command hooks whose command runs `agent-report --hook <kind>`; install
// replaces only those (idempotent), uninstall removes only those, and everything else in the file
// (the user's own hooks, other settings, key order) is kept as it was.
import { shq } from "../sys/shell.ts";
import { HOOK_KINDS } from "./kinds/index.ts";

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** the command line of mam's hook for a kind */
export function hookCommand(mam: string[], kind: string): string {
  return `${mam.map(shq).join(" ")} agent-report --hook ${kind}`;
}

/** is this hook handler one of mam's (for this kind)? */
export function isOurs(handler: unknown, kind: string): boolean {
  return isObj(handler) && typeof handler.command === "string" && new RegExp(`(^|\\s)agent-report --hook ${kind}(\\s|$)`).test(handler.command);
}

function groupsOf(doc: Json, event: string): unknown[] {
  const hooks = isObj(doc.hooks) ? doc.hooks : {};
  const g = hooks[event];
  return Array.isArray(g) ? g : [];
}

/** a settings document that is a JSON object with, if present, a `hooks` object of lists */
export function checkSettings(doc: unknown, path: string): Json {
  if (!isObj(doc)) throw new Error(`${path} is not a JSON object`);
  if (doc.hooks !== undefined && !isObj(doc.hooks)) throw new Error(`${path}: "hooks" is not an object`);
  for (const [ev, g] of Object.entries(isObj(doc.hooks) ? doc.hooks : {})) if (!Array.isArray(g)) throw new Error(`${path}: hooks.${ev} is not a list`);
  return doc;
}

/** the document without mam's hooks of `kind` (groups and events left empty are dropped) */
export function withoutOurs(doc: Json, kind: string): Json {
  if (!isObj(doc.hooks)) return doc;
  const hooks: Json = {};
  for (const [event, groups] of Object.entries(doc.hooks)) {
    const kept: unknown[] = [];
    for (const g of groups as unknown[]) {
      if (!isObj(g) || !Array.isArray(g.hooks)) {
        kept.push(g);
        continue;
      }
      const handlers = g.hooks.filter((h) => !isOurs(h, kind));
      if (handlers.length === g.hooks.length) kept.push(g);
      else if (handlers.length > 0) kept.push({ ...g, hooks: handlers });
    }
    if (kept.length > 0) hooks[event] = kept;
  }
  const out: Json = { ...doc, hooks };
  if (Object.keys(hooks).length === 0) delete out.hooks;
  return out;
}

/** the document with mam's hooks of `kind` (exactly one group per event, appended after the user's) */
export function withOurs(doc: Json, kind: string, command: string): Json {
  const hk = HOOK_KINDS[kind]!;
  const base = withoutOurs(doc, kind);
  const hooks: Json = isObj(base.hooks) ? { ...base.hooks } : {};
  for (const event of hk.events) hooks[event] = [...groupsOf(base, event), { hooks: [{ type: "command", command, timeout: 10 }] }];
  return { ...base, hooks };
}

/** the events that carry mam's hook of `kind`, and the command it runs */
export function oursIn(doc: Json, kind: string): { events: string[]; commands: string[] } {
  const events: string[] = [];
  const commands = new Set<string>();
  for (const [event, groups] of Object.entries(isObj(doc.hooks) ? doc.hooks : {})) {
    for (const g of groups as unknown[]) {
      const hs = isObj(g) && Array.isArray(g.hooks) ? g.hooks.filter((h) => isOurs(h, kind)) : [];
      if (hs.length) {
        events.push(event);
        for (const h of hs) commands.add((h as Json).command as string);
      }
    }
  }
  return { events: [...new Set(events)], commands: [...commands] };
}

// Screen-state rules: the data format of lib/agents/kinds/<kind>.screen.json, its validation and
// its compiled form. A rules file is a list of rules; each rule looks at one region of the screen
// and, when all its matchers hold, proposes a state with a priority. The highest priority among
// the matching rules wins (file order breaks ties); no match → "unknown".
//
// {
//   "kind": "claude",
//   "rules": [{
//     "id": "bash-permission",            // names the rule (tests, the reason fallback)
//     "state": "blocked",                 // working | blocked | idle | unknown
//     "dialog": "permission",             // blocked only: start (trust, sign-in, onboarding) | permission | limit (its usage-limit menu)
//     "priority": 90,                     // higher wins
//     "region": "last:25",                // title | screen | last:N (non-empty lines) | after-rule | prompt-box
//     "contains": ["do you want to proceed?"],   // every one must appear
//     "any": ["bash command", "❯ 1. yes"],       // at least one must appear
//     "not": ["esc to interrupt"],               // none may appear
//     "regex": ["^\\s*❯"],                       // every one must match (multi-line)
//     "reason": { "heading": "^(bash command|…)$", "detail": "^\\$ ", "question": "do you want to proceed\\?", "text": "…" },
//     "name": "trust this folder"         // blocked only: the dialog's name as the user knows it (mam's warnings)
//   }],
//   "input": { "region": "prompt-box", "line": "^[❯>]\\s?(.*)$" },  // optional: where the agent's input box is
//   "questions": [ … ],                   // optional: how to read its permission dialogs (question.ts)
//   "limits": [{                          // optional: how a usage or rate limit shows (docs/unattended.md)
//     "id": "hit-your-limit",
//     "region": "last:12",
//     "regex": "You'?ve hit your [^·\\n]*limit( · resets (?<t>[^\\n]+))?"   // its match is the reason; group t the reset time
//   }]
// }
// Text matchers and regexes are case-insensitive. `reason` (blocked rules) builds the one-line
// reason from the screen: "<heading>: <the line after it (the first matching `detail`)> — <question>",
// else `text`, else the id. `input` says where typed text waits before it is submitted: the last
// line of `region` that matches `line` holds it in its first group (lib/ops/session/at-prompt.ts checks
// with it that a text mam typed was submitted, not left in the box); `placeholder`, optional, is a
// regex of what the agent itself shows in an empty box (claude 2.1.332's dim "Resend your message
// to try again"): that is no typed text.

import { type QuestionSpec, validateQuestions } from "./question.ts";

export type ScreenState = "working" | "blocked" | "idle" | "unknown";
/** start: trust, sign-in, onboarding; permission: a tool call to allow; limit: the agent's own usage-limit menu (its limit explains it: journalled `limited`, never `permission_required`) */
export type DialogKind = "start" | "permission" | "limit";
export type Region = { type: "title" } | { type: "screen" } | { type: "last"; n: number } | { type: "after-rule" } | { type: "prompt-box" };

export interface ReasonSpec {
  heading?: string;
  /** the line after the heading to show (default: the first non-empty one) */
  detail?: string;
  question?: string;
  text?: string;
}

export interface RuleSpec {
  id: string;
  state: ScreenState;
  dialog?: DialogKind;
  priority: number;
  region: string;
  contains?: string[];
  any?: string[];
  not?: string[];
  regex?: string[];
  reason?: ReasonSpec;
  name?: string;
}

export interface InputSpec {
  region: string;
  line: string;
  placeholder?: string;
}

export interface RuleFile {
  kind: string;
  rules: RuleSpec[];
  input?: InputSpec;
  questions?: QuestionSpec[];
  limits?: LimitRuleSpec[];
}

/**
 * a limit line on the agent's screen: not a state of its own (a limited agent sits at its prompt,
 * idle), a fact next to it; the regex's match is the limit's reason, its group `t` the reset time
 * as the agent wrote it
 */
export interface LimitRuleSpec {
  id: string;
  region: string;
  regex: string;
}

export interface CompiledLimitRule {
  id: string;
  region: Region;
  regionKey: string;
  regex: RegExp;
}

export interface CompiledRule {
  id: string;
  state: ScreenState;
  dialog?: DialogKind;
  priority: number;
  region: Region;
  /** region key, so each region is computed once per screen */
  regionKey: string;
  contains: string[];
  any: string[];
  not: string[];
  regex: RegExp[];
  heading?: RegExp;
  detail?: RegExp;
  question?: RegExp;
  text?: string;
  name?: string;
}

/** the compiled input box of a kind: where typed text waits (region) and the line that holds it */
export interface CompiledInput {
  region: Region;
  line: RegExp;
  /** what the agent shows in an empty box: not typed text */
  placeholder?: RegExp;
}

const STATES = new Set(["working", "blocked", "idle", "unknown"]);
const KEYS = new Set(["id", "state", "dialog", "priority", "region", "contains", "any", "not", "regex", "reason", "name"]);

export function parseRegion(r: string): Region {
  if (r === "title" || r === "screen" || r === "after-rule" || r === "prompt-box") return { type: r };
  const m = /^last:([1-9]\d{0,2})$/.exec(r);
  if (m) return { type: "last", n: Number(m[1]) };
  throw new Error(`unknown region '${r}' (title, screen, last:N, after-rule, prompt-box)`);
}

function strings(v: unknown, what: string): string[] {
  if (v === undefined) return [];
  if (!Array.isArray(v) || v.some((x) => typeof x !== "string" || x === "")) throw new Error(`${what} must be a list of non-empty strings`);
  return v as string[];
}

function regex(src: string, what: string): RegExp {
  try {
    return new RegExp(src, "im");
  } catch (e) {
    throw new Error(`${what}: bad regex ${JSON.stringify(src)} (${(e as Error).message})`);
  }
}

/** check a parsed rules file; throws an Error naming the file's kind, the rule and the problem */
export function validateRuleFile(kind: string, doc: unknown): RuleFile {
  const fail = (m: string): never => {
    throw new Error(`screen rules for '${kind}': ${m}`);
  };
  if (!doc || typeof doc !== "object" || Array.isArray(doc)) fail("not a JSON object");
  const d = doc as Record<string, unknown>;
  if (d.kind !== kind) fail(`"kind" must be "${kind}" (the file name), got ${JSON.stringify(d.kind)}`);
  if (!Array.isArray(d.rules) || d.rules.length === 0) fail(`"rules" must be a non-empty list`);
  for (const k of Object.keys(d)) if (!["kind", "rules", "input", "questions", "limits"].includes(k)) fail(`unknown field "${k}"`);
  if (d.limits !== undefined) {
    if (!Array.isArray(d.limits) || d.limits.length === 0) fail(`"limits" must be a non-empty list`);
    (d.limits as unknown[]).forEach((l, i) => {
      const x = l as Record<string, unknown>;
      const at = `limit ${i + 1}`;
      if (!x || typeof x !== "object" || Array.isArray(x) || Object.keys(x).some((k) => !["id", "region", "regex"].includes(k))) fail(`${at} must be { "id", "region", "regex" }`);
      if (typeof x.id !== "string" || x.id === "" || typeof x.region !== "string" || typeof x.regex !== "string" || x.regex === "") fail(`${at}: "id", "region" and "regex" must be non-empty strings`);
      try {
        parseRegion(x.region as string);
        regex(x.regex as string, `"regex"`);
      } catch (e) {
        fail(`${at}: ${(e as Error).message}`);
      }
    });
  }
  if (d.questions !== undefined) {
    try {
      validateQuestions(d.questions);
    } catch (e) {
      fail((e as Error).message);
    }
  }
  if (d.input !== undefined) {
    const i = d.input as Record<string, unknown>;
    if (!i || typeof i !== "object" || Array.isArray(i) || typeof i.region !== "string" || typeof i.line !== "string" || (i.placeholder !== undefined && typeof i.placeholder !== "string") || Object.keys(i).some((k) => k !== "region" && k !== "line" && k !== "placeholder")) {
      fail(`"input" must be { "region": "…", "line": "<regex with one group>", "placeholder": "<regex>" (optional) }`);
    }
    try {
      parseRegion(i.region as string);
      if (!/\((?!\?)/.test(i.line as string)) throw new Error(`"line" needs a group: the typed text`);
      regex(i.line as string, `"input.line"`);
      if (i.placeholder !== undefined) regex(i.placeholder as string, `"input.placeholder"`);
    } catch (e) {
      fail(`"input": ${(e as Error).message}`);
    }
  }
  const ids = new Set<string>();
  (d.rules as unknown[]).forEach((r, i) => {
    const where = `rule ${i + 1}`;
    if (!r || typeof r !== "object" || Array.isArray(r)) fail(`${where} is not an object`);
    const x = r as Record<string, unknown>;
    for (const k of Object.keys(x)) if (!KEYS.has(k)) fail(`${where}: unknown field "${k}"`);
    if (typeof x.id !== "string" || x.id === "") fail(`${where}: "id" must be a non-empty string`);
    if (ids.has(x.id as string)) fail(`${where}: duplicate id "${x.id}"`);
    ids.add(x.id as string);
    const at = `rule "${x.id}"`;
    if (typeof x.state !== "string" || !STATES.has(x.state)) fail(`${at}: "state" must be working, blocked, idle or unknown`);
    if (x.dialog !== undefined && (x.state !== "blocked" || (x.dialog !== "start" && x.dialog !== "permission" && x.dialog !== "limit"))) {
      fail(`${at}: "dialog" (start, permission or limit) belongs to blocked rules only`);
    }
    if (x.name !== undefined && (x.state !== "blocked" || typeof x.name !== "string" || x.name === "")) fail(`${at}: "name" (a non-empty string) belongs to blocked rules only`);
    if (typeof x.priority !== "number" || !Number.isFinite(x.priority)) fail(`${at}: "priority" must be a number`);
    if (typeof x.region !== "string") fail(`${at}: "region" must be a string`);
    try {
      parseRegion(x.region as string);
      const n = ["contains", "any", "not", "regex"].reduce((s, k) => s + strings(x[k], `"${k}"`).length, 0);
      if (n === strings(x.not, "not").length) throw new Error(`needs at least one of "contains", "any", "regex"`);
      strings(x.regex, "regex").forEach((s) => regex(s, `"regex"`));
      if (x.reason !== undefined) {
        const rs = x.reason as Record<string, unknown>;
        if (!rs || typeof rs !== "object" || Array.isArray(rs)) throw new Error(`"reason" must be an object`);
        for (const k of Object.keys(rs)) {
          if (!["heading", "detail", "question", "text"].includes(k) || typeof rs[k] !== "string") throw new Error(`"reason.${k}" is not heading/detail/question/text as a string`);
          if (k !== "text") regex(rs[k] as string, `"reason.${k}"`);
        }
      }
    } catch (e) {
      fail(`${at}: ${(e as Error).message}`);
    }
  });
  return d as unknown as RuleFile;
}

/** rules ready to run: lower-cased needles, compiled regexes, highest priority first */
export function compileRules(file: RuleFile): CompiledRule[] {
  const out = file.rules.map((r, i): CompiledRule & { order: number } => {
    const region = parseRegion(r.region);
    return {
      order: i,
      id: r.id,
      state: r.state,
      ...(r.dialog ? { dialog: r.dialog } : {}),
      priority: r.priority,
      region,
      regionKey: r.region,
      contains: (r.contains ?? []).map((s) => s.toLowerCase()),
      any: (r.any ?? []).map((s) => s.toLowerCase()),
      not: (r.not ?? []).map((s) => s.toLowerCase()),
      regex: (r.regex ?? []).map((s) => regex(s, r.id)),
      ...(r.reason?.heading ? { heading: regex(r.reason.heading, r.id) } : {}),
      ...(r.reason?.detail ? { detail: regex(r.reason.detail, r.id) } : {}),
      ...(r.reason?.question ? { question: regex(r.reason.question, r.id) } : {}),
      ...(r.reason?.text ? { text: r.reason.text } : {}),
      ...(r.name ? { name: r.name } : {}),
    };
  });
  // stable: equal priorities keep file order
  out.sort((a, b) => b.priority - a.priority || a.order - b.order);
  return out.map(({ order: _o, ...r }) => r);
}

/** the kind's limit lines, compiled (empty: the file names none) */
export function compileLimits(file: RuleFile): CompiledLimitRule[] {
  return (file.limits ?? []).map((l) => ({ id: l.id, region: parseRegion(l.region), regionKey: l.region, regex: regex(l.regex, l.id) }));
}

/** the kind's input box, compiled (undefined: the file names none) */
export function compileInput(file: RuleFile): CompiledInput | undefined {
  return file.input ? { region: parseRegion(file.input.region), line: regex(file.input.line, "input"), ...(file.input.placeholder !== undefined ? { placeholder: regex(file.input.placeholder, "input.placeholder") } : {}) } : undefined;
}

// What an agent's permission dialog asks, as data: read from its visible screen with rules per kind
// (the `questions` of lib/agents/kinds/<kind>.screen.json, embedded with the screen rules), so that
// `mam status --json`, the `permission_required` event and `mam approve` all say the same thing:
//
//   { kind, rule, what, title, subject, body, notes, question,
//     choices: [{ n, label, key, role }], fingerprint }
//
// `title` is the dialog's heading ("Bash command"), `subject` what it asks about as the dialog shows
// it (the command, the file, the tool), `body` every line between the heading and the question (a
// command over several lines, an edit's diff), `notes` the dialog's own remarks ("Contains
// backslash-escaped whitespace"). Each choice has the key that picks it (claude: its number; codex:
// the letter it shows, or esc) and its role: `yes` (this once), `always` (allow it from now on,
// "don't ask again"), `no`, or `other`. The fingerprint is a hash of what the dialog asks (title,
// body, notes, question, choices), not of where it sits on the screen: the same question asked
// again has the same fingerprint, a different command, file, edit or set of choices another one.
// Pure: no I/O. A screen no rule reads gives undefined (never a guess).
//
// A question rule (all regexes case-insensitive; line regexes see the line with box edges dropped
// and its spaces collapsed):
// {
//   "id": "bash", "what": "command",                     // command | file | tool | other
//   "heading": "^bash command$",                          // the line that opens the dialog
//   "question": "^do you want to proceed\\?$",            // the question line (may be the heading)
//   "choice": "^(❯ )?(?<n>\\d+)\\. (?<label>.+?)( \\((?<key>[^()]+)\\))?$",   // one choice; named groups n, label, key
//   "body": "^ {3}",                                      // optional: raw lines that are the body (others are notes)
//   "subject": "all-but-last",                            // first | all | all-but-last | a regex with one group
//   "framed": true,                                       // optional: the body is what the dialog frames between two dashed rules (╌╌╌; claude 2.1.332's command), the rest notes; no frame, no match
//   "roles": { "always": "…", "no": "^no\\b", "yes": "^yes\\b" },   // on the label, in that order
//   "keys": { "esc": "esc" }                              // optional: a shown key name → the key to press
// }
import { sha256Hex } from "../../sys/digest.ts";
import { cleanLine, isRuleLine, plainText } from "./lines.ts";

export type QuestionWhat = "command" | "file" | "tool" | "other";
export type ChoiceRole = "yes" | "always" | "no" | "other";

export interface Choice {
  /** the number the dialog shows */
  n: number;
  label: string;
  /** the key that picks it, as mam presses it (a character, or a key name such as esc) */
  key: string;
  role: ChoiceRole;
}

export interface Question {
  kind: string;
  /** the rule that read it */
  rule: string;
  what: QuestionWhat;
  /** the dialog's heading, as shown */
  title: string;
  /** what it asks about (the command, the file, the tool), as shown; lines joined by \n */
  subject: string;
  /** the lines between the heading and the question, common indentation removed */
  body: string[];
  /** the dialog's own remarks (lines outside the body) */
  notes: string[];
  question: string;
  choices: Choice[];
  /** 16 hex digits: the same question gives the same fingerprint */
  fingerprint: string;
}

export interface QuestionSpec {
  id: string;
  what: QuestionWhat;
  heading: string;
  question: string;
  choice: string;
  body?: string;
  subject: string;
  framed?: boolean;
  roles: Partial<Record<Exclude<ChoiceRole, "other">, string>>;
  keys?: Record<string, string>;
}

export interface CompiledQuestion {
  id: string;
  what: QuestionWhat;
  heading: RegExp;
  question: RegExp;
  choice: RegExp;
  body?: RegExp;
  subject: "first" | "all" | "all-but-last" | RegExp;
  framed: boolean;
  roles: [Exclude<ChoiceRole, "other">, RegExp][];
  keys: Record<string, string>;
}

const WHATS = new Set(["command", "file", "tool", "other"]);
const ROLE_ORDER = ["always", "no", "yes"] as const;
const PICKS = new Set(["first", "all", "all-but-last"]);
const KEYS = new Set(["id", "what", "heading", "question", "choice", "body", "subject", "framed", "roles", "keys"]);
/** a dashed rule that frames a dialog's subject (claude's ╌╌╌) */
const DASHED = /^\s*╌{3,}\s*$/;
/** how far above the choices the question, and above it the heading, may be */
const REACH = 80;
/** at most this many body lines are shown (the fingerprint covers them all) */
const MAX_BODY = 60;
const MAX_LINE = 400;

function re(src: string, what: string): RegExp {
  try {
    return new RegExp(src, "i");
  } catch (e) {
    throw new Error(`${what}: bad regex ${JSON.stringify(src)} (${(e as Error).message})`);
  }
}

/** check the `questions` of a rules file; throws an Error naming the rule and the problem */
export function validateQuestions(v: unknown): QuestionSpec[] {
  if (!Array.isArray(v) || v.length === 0) throw new Error(`"questions" must be a non-empty list`);
  const ids = new Set<string>();
  v.forEach((q, i) => {
    const where = `question ${i + 1}`;
    if (!q || typeof q !== "object" || Array.isArray(q)) throw new Error(`${where} is not an object`);
    const x = q as Record<string, unknown>;
    for (const k of Object.keys(x)) if (!KEYS.has(k)) throw new Error(`${where}: unknown field "${k}"`);
    if (typeof x.id !== "string" || x.id === "" || ids.has(x.id)) throw new Error(`${where}: "id" must be a new non-empty string`);
    ids.add(x.id);
    const at = `question "${x.id}"`;
    if (typeof x.what !== "string" || !WHATS.has(x.what)) throw new Error(`${at}: "what" must be command, file, tool or other`);
    for (const k of ["heading", "question", "choice"]) if (typeof x[k] !== "string") throw new Error(`${at}: "${k}" must be a regex`);
    const choice = re(x.choice as string, `${at} "choice"`);
    re(x.heading as string, `${at} "heading"`);
    re(x.question as string, `${at} "question"`);
    if (!/\(\?<n>/.test(choice.source) || !/\(\?<label>/.test(choice.source)) throw new Error(`${at}: "choice" needs the named groups n and label`);
    if (x.body !== undefined && typeof x.body !== "string") throw new Error(`${at}: "body" must be a regex`);
    if (x.body !== undefined) re(x.body as string, `${at} "body"`);
    if (typeof x.subject !== "string") throw new Error(`${at}: "subject" must be first, all, all-but-last or a regex with one group`);
    if (x.framed !== undefined && typeof x.framed !== "boolean") throw new Error(`${at}: "framed" must be true or false`);
    if (!PICKS.has(x.subject) && !/\((?!\?)/.test(re(x.subject, `${at} "subject"`).source)) throw new Error(`${at}: "subject" as a regex needs a group`);
    const roles = x.roles as Record<string, unknown>;
    if (!roles || typeof roles !== "object" || Array.isArray(roles)) throw new Error(`${at}: "roles" must be an object`);
    for (const [k, r] of Object.entries(roles)) {
      if (!(ROLE_ORDER as readonly string[]).includes(k) || typeof r !== "string") throw new Error(`${at}: "roles.${k}" is not always/no/yes as a regex`);
      re(r, `${at} "roles.${k}"`);
    }
    if (typeof roles.yes !== "string" || typeof roles.no !== "string") throw new Error(`${at}: "roles" needs yes and no`);
    const keys = x.keys as Record<string, unknown> | undefined;
    if (keys !== undefined && (typeof keys !== "object" || Array.isArray(keys) || Object.values(keys).some((k) => typeof k !== "string" || k === ""))) {
      throw new Error(`${at}: "keys" must map a shown key to a key name`);
    }
  });
  return v as QuestionSpec[];
}

export function compileQuestions(specs: readonly QuestionSpec[]): CompiledQuestion[] {
  return specs.map((s) => ({
    id: s.id,
    what: s.what,
    heading: re(s.heading, s.id),
    question: re(s.question, s.id),
    choice: re(s.choice, s.id),
    ...(s.body ? { body: re(s.body, s.id) } : {}),
    subject: PICKS.has(s.subject) ? (s.subject as "first" | "all" | "all-but-last") : re(s.subject, s.id),
    framed: s.framed === true,
    roles: ROLE_ORDER.filter((r) => s.roles[r] !== undefined).map((r) => [r, re(s.roles[r]!, s.id)] as [Exclude<ChoiceRole, "other">, RegExp]),
    keys: Object.fromEntries(Object.entries(s.keys ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
  }));
}

/** the first rule that reads the screen's dialog, as a Question; undefined when none does */
export function readQuestion(kind: string, rules: readonly CompiledQuestion[], text: string): Question | undefined {
  // box edges (an older claude draws its dialog in a box) go; the indentation inside stays
  const raw = text.split("\n").map((l) => l.replace(/\r$/, "").trimEnd().replace(/^[│┃║]/, "").replace(/[│┃║]$/, "").trimEnd());
  // every rule sees look-alike characters as their ASCII (a curly apostrophe as '): lines.ts
  const clean = raw.map((l) => plainText(cleanLine(l)));
  for (const r of rules) {
    const q = readWith(kind, r, raw, clean);
    if (q) return q;
  }
  return undefined;
}

interface Found {
  n: number;
  label: string;
  shownKey?: string;
}

function choiceAt(r: CompiledQuestion, line: string): Found | undefined {
  const m = r.choice.exec(line);
  const g = m?.groups;
  if (!g?.n || !g.label) return undefined;
  return { n: Number(g.n), label: g.label.trim(), ...(g.key ? { shownKey: g.key.trim() } : {}) };
}

/** the choices at the bottom of the screen: numbered 1..k, a line between two of them continues a label */
function choicesBlock(r: CompiledQuestion, clean: readonly string[]): { first: number; choices: Found[] } | undefined {
  let last = -1;
  let seen = 0;
  for (let i = clean.length - 1; i >= 0 && last < 0; i--) {
    if (clean[i] === "") continue;
    if (choiceAt(r, clean[i]!)) last = i;
    else if (++seen > 8) return undefined; // the dialog's footer is a few lines at most
  }
  if (last < 0) return undefined;
  const found: { at: number; c: Found }[] = [];
  const extra: string[] = [];
  for (let i = last; i >= 0 && i > last - REACH; i--) {
    if (clean[i] === "") continue;
    const c = choiceAt(r, clean[i]!);
    if (!c) {
      extra.unshift(clean[i]!);
      if (extra.length > 2) return undefined;
      continue;
    }
    if (extra.length) {
      // a wrapped label: the lines below a choice, up to the one after it
      c.label = [c.label, ...extra].join(" ");
      extra.length = 0;
    }
    found.unshift({ at: i, c });
    if (c.n === 1) break;
  }
  const choices = found.map((f) => f.c);
  if (choices.length < 2 || choices.some((c, i) => c.n !== i + 1)) return undefined;
  return { first: found[0]!.at, choices };
}

function dedent(lines: string[]): string[] {
  const ind = Math.min(...lines.map((l) => /^ */.exec(l)![0].length));
  return lines.map((l) => l.slice(ind));
}

function subjectOf(r: CompiledQuestion, body: string[]): string {
  if (r.subject instanceof RegExp) {
    for (const l of body) {
      const m = (r.subject as RegExp).exec(l.trim());
      if (m) return (m[1] ?? m[0]).trim();
    }
    return body[0]?.trim() ?? "";
  }
  if (r.subject === "first") return body[0]?.trim() ?? "";
  const lines = r.subject === "all-but-last" && body.length > 1 ? body.slice(0, -1) : body;
  return lines.join("\n");
}

/**
 * the one-time yes labels of the kinds' real dialogs (claude: "Yes"; codex: "Yes, proceed"):
 * the only labels the `yes` role takes. It fails closed: a label the "always" rule misses but
 * `^yes` matches (a new wording) is `other`, and mam presses no default for it (review A6).
 */
const ONE_TIME_YES = new Set(["yes", "yes, proceed"]);

function roleOf(r: CompiledQuestion, label: string): ChoiceRole {
  for (const [role, rx] of r.roles) {
    if (!rx.test(label)) continue;
    return role === "yes" && !ONE_TIME_YES.has(label.trim().toLowerCase()) ? "other" : role;
  }
  return "other";
}

const clip = (s: string) => (s.length > MAX_LINE ? `${s.slice(0, MAX_LINE - 1)}…` : s);

function readWith(kind: string, r: CompiledQuestion, raw: readonly string[], clean: readonly string[]): Question | undefined {
  const block = choicesBlock(r, clean);
  if (!block) return undefined;
  let q = -1;
  for (let i = block.first - 1; i >= 0 && i >= block.first - REACH && q < 0; i--) if (r.question.test(clean[i]!)) q = i;
  if (q < 0) return undefined;
  let h = -1;
  for (let i = q; i >= 0 && i >= q - REACH && h < 0; i--) if (r.heading.test(clean[i]!)) h = i;
  if (h < 0) return undefined;
  // the body: between the heading and the question, or (a heading that is the question) between it and the choices
  const [from, to] = h < q ? [h + 1, q] : [q + 1, block.first];
  const kept = (l: string, i: number) => l.trim() !== "" && !isRuleLine(l) && clean[i] !== "";
  const inner = raw.slice(from, to).filter((l, i) => kept(l, from + i));
  let bodyRaw = r.body ? inner.filter((l) => r.body!.test(l)) : inner;
  let notes = r.body ? inner.filter((l) => !r.body!.test(l)).map(cleanLine) : [];
  if (r.framed) {
    // the body is what two dashed rules frame; a dialog without the frame is another rule's
    const dashes = raw.slice(from, to).flatMap((l, i) => (DASHED.test(l) ? [from + i] : []));
    if (dashes.length < 2) return undefined;
    const [a, b] = [dashes[0]!, dashes[1]!];
    bodyRaw = raw.slice(a + 1, b).filter((l, i) => kept(l, a + 1 + i));
    notes = raw
      .slice(from, to)
      .filter((l, i) => (from + i < a || from + i > b) && kept(l, from + i))
      .map(cleanLine);
  }
  const body = bodyRaw.length ? dedent(bodyRaw) : [];
  const choices: Choice[] = block.choices.map((c) => {
    const shown = c.shownKey?.toLowerCase();
    const key = shown === undefined ? String(c.n) : (r.keys[shown] ?? ([...shown].length === 1 ? shown : ""));
    return { n: c.n, label: c.label, key, role: roleOf(r, c.label) };
  });
  const title = clean[h]!;
  const question = clean[q]!;
  const fingerprint = sha256Hex(JSON.stringify([kind, r.id, title, body, notes, question, choices.map((c) => [c.n, c.label, c.key])])).slice(0, 16);
  const shownBody = body.length > MAX_BODY ? [...body.slice(0, MAX_BODY), `… (${body.length - MAX_BODY} more lines)`] : body;
  return {
    kind,
    rule: r.id,
    what: r.what,
    title,
    subject: clip(subjectOf(r, body)),
    body: shownBody.map(clip),
    notes: notes.map(clip),
    question,
    choices,
    fingerprint,
  };
}

/** the question on one line: "Bash command: touch x — Do you want to proceed?" */
export function questionLine(q: Pick<Question, "title" | "subject" | "question">): string {
  const subject = q.subject.split("\n")[0] ?? "";
  return q.title === q.question ? `${q.question} ${subject}`.trim() : `${q.title}: ${subject} — ${q.question}`;
}

/** the choice an answer picks: the numbered one, else the no (deny), else the one-time yes */
export function pickChoice(q: Pick<Question, "choices">, o: { deny?: boolean; choice?: number }): Choice | undefined {
  if (o.choice !== undefined) return q.choices.find((c) => c.n === o.choice);
  return q.choices.find((c) => c.role === (o.deny ? "no" : "yes"));
}

/** "1 Yes · 2 Yes, and don't ask again … (always) · 3 No": the choices on one line */
export function choicesLine(q: Pick<Question, "choices">): string {
  return q.choices.map((c) => `${c.n} ${c.label}${c.role === "always" ? " (always)" : ""}`).join(" · ");
}

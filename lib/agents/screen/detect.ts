// The screen-state detector: what an agent is doing, from its visible screen and pane title.
//
//   detectScreen(kind, { text, title? }) → { state: working|blocked|idle|unknown, reason?, dialog? }
//
// Pure and fast (a few µs per screen): the rules of each kind are data
// (lib/agents/kinds/<kind>.screen.json, format in rules.ts), embedded into the binary at build time
// by a Bun macro (embed.ts), compiled once per kind on first use. A kind without rules, or a screen
// no rule matches, is "unknown": never a guess. For "blocked" the verdict carries a one-line reason
// (the dialog's question) and whether it is a start dialog (trust, sign-in) or a permission prompt.
import { embeddedRules } from "./embed.ts" with { type: "macro" };
import { type CompiledInput, type CompiledLimitRule, type CompiledRule, compileInput, compileLimits, compileRules, type DialogKind, type RuleFile, type ScreenState } from "./rules.ts";
import { plainText } from "./lines.ts";
import { ruleReason, Regions } from "./regions.ts";
import { type CompiledQuestion, compileQuestions, type Question, questionLine, readQuestion } from "./question.ts";

export interface ScreenVerdict {
  state: ScreenState;
  reason?: string;
  dialog?: DialogKind;
  /** blocked: the dialog's name as the user knows it ("trust this folder"), when its rule gives one */
  name?: string;
}

export interface Screen {
  text: string;
  title?: string;
}

const RULES: Record<string, RuleFile> = embeddedRules() as Record<string, RuleFile>;
const compiled = new Map<string, CompiledRule[]>();

/** the kinds that have rules (one per rules file at build time) */
export function screenKinds(): string[] {
  return Object.keys(RULES).sort();
}

/** does this kind have screen rules (else its verdict is always unknown) */
export function hasScreenRules(kind: string): boolean {
  return Object.hasOwn(RULES, kind);
}

function rulesOf(kind: string): CompiledRule[] | undefined {
  let c = compiled.get(kind);
  if (!c && Object.hasOwn(RULES, kind)) compiled.set(kind, (c = compileRules(RULES[kind]!)));
  return c;
}

function matches(r: CompiledRule, rawText: string, rawLower: string): boolean {
  // rules see look-alike characters as their ASCII (lines.ts)
  const text = plainText(rawText);
  const lower = plainText(rawLower);
  for (const s of r.contains) if (!lower.includes(s)) return false;
  if (r.any.length > 0 && !r.any.some((s) => lower.includes(s))) return false;
  for (const s of r.not) if (lower.includes(s)) return false;
  for (const re of r.regex) if (!re.test(text)) return false;
  return true;
}

/** run compiled rules (highest priority first) over a screen */
export function detectWith(rules: readonly CompiledRule[], screen: Screen): ScreenVerdict {
  const regions = new Regions(screen.text, screen.title ?? "");
  for (const r of rules) {
    const { text, lower } = regions.get(r.region, r.regionKey);
    if (text === "" || !matches(r, text, lower)) continue;
    if (r.state !== "blocked") return { state: r.state };
    return { state: "blocked", reason: ruleReason(r, regions), ...(r.dialog ? { dialog: r.dialog } : {}), ...(r.name ? { name: r.name } : {}) };
  }
  return { state: "unknown" };
}

export function detectScreen(kind: string, screen: Screen): ScreenVerdict {
  const rules = rulesOf(kind);
  const v = rules ? detectWith(rules, screen) : { state: "unknown" as const };
  // the line after the heading is the dialog's own remark, not what it asks (claude 2.1.332 puts a
  // tip above its command): the reason names what the question reader reads instead
  if (v.state === "blocked" && v.dialog === "permission" && v.reason) {
    const q = questionOf(kind, screen);
    const named = plainText(v.reason);
    if (q && q.subject !== "" && q.notes.some((n) => named.startsWith(`${plainText(q.title)}: ${plainText(n)}`.slice(0, 60)))) return { ...v, reason: questionLine(q) };
  }
  return v;
}

const inputs = new Map<string, CompiledInput | null>();

/** does this kind's rules file say where its input box is */
export function hasInputBox(kind: string): boolean {
  return Object.hasOwn(RULES, kind) && RULES[kind]!.input !== undefined;
}

/**
 * the text waiting in the agent's input box (not submitted yet): "" when the box is empty (or
 * holds the agent's placeholder), undefined when the kind names no input box or none is on screen
 */
export function inputBoxText(kind: string, screen: Screen): string | undefined {
  let c = inputs.get(kind);
  if (c === undefined) inputs.set(kind, (c = Object.hasOwn(RULES, kind) ? (compileInput(RULES[kind]!) ?? null) : null));
  if (!c) return undefined;
  const lines = new Regions(screen.text, screen.title ?? "").linesOf(c.region);
  for (let i = lines.length - 1; i >= 0; i--) {
    const m = c.line.exec(lines[i]!);
    if (!m) continue;
    const typed = (m[1] ?? "").trim();
    return c.placeholder?.test(typed) ? "" : typed;
  }
  return undefined;
}

const questions = new Map<string, CompiledQuestion[]>();

/** does this kind's rules file say how to read its permission dialogs */
export function readsQuestions(kind: string): boolean {
  return Object.hasOwn(RULES, kind) && RULES[kind]!.questions !== undefined;
}

/**
 * what the agent's permission dialog on this screen asks, as data (question.ts): undefined when the
 * kind has no question rules or none of them reads the screen
 */
export function questionOf(kind: string, screen: Screen): Question | undefined {
  if (!readsQuestions(kind)) return undefined;
  let c = questions.get(kind);
  if (!c) questions.set(kind, (c = compileQuestions(RULES[kind]!.questions!)));
  return readQuestion(kind, c, screen.text);
}

const limitRules = new Map<string, CompiledLimitRule[]>();

/** does this kind's rules file say how a limit shows on its screen */
export function hasScreenLimits(kind: string): boolean {
  return Object.hasOwn(RULES, kind) && (RULES[kind]!.limits?.length ?? 0) > 0;
}

/**
 * the limit this screen shows, if one of the kind's limit lines is in its region (the rules file's
 * `limits`): the line as the reason (one line, look-alike characters as ASCII), and the reset time
 * as the agent wrote it (`t`), when it did. Whether the agent is still at that limit is the
 * caller's to judge (a line that stays in view after the limit lifted: the agent at work again).
 */
export function screenLimit(kind: string, screen: Screen): { id: string; reason: string; resets_text?: string } | undefined {
  if (!hasScreenLimits(kind)) return undefined;
  let c = limitRules.get(kind);
  if (!c) limitRules.set(kind, (c = compileLimits(RULES[kind]!)));
  const regions = new Regions(screen.text, screen.title ?? "");
  for (const r of c) {
    const text = plainText(regions.get(r.region, r.regionKey).text);
    // the last such line in the region: the newest
    const all = [...text.matchAll(new RegExp(r.regex.source, "gim"))];
    const m = all.at(-1);
    if (!m) continue;
    const reason = m[0].replace(/\s+/g, " ").trim();
    const t = m.groups?.t?.trim();
    return { id: r.id, reason, ...(t ? { resets_text: t } : {}) };
  }
  return undefined;
}

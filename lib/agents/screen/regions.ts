// The regions of a screen a rule can look at (rules.ts), each computed once per screen:
//   title        the pane title (OSC title; "" where the multiplexer has none)
//   screen       every line of the visible screen
//   last:N       the last N non-empty lines
//   after-rule   the lines after the last horizontal rule (a line of ─, ━, ═, - …)
//   prompt-box   the lines between the last two horizontal rules (an input box), box edges dropped
import { cleanLine, isRuleLine, plainText } from "./lines.ts";
import type { CompiledRule, Region } from "./rules.ts";


export class Regions {
  private readonly lines: string[];
  private readonly cache = new Map<string, { text: string; lower: string }>();

  constructor(
    text: string,
    private readonly title: string,
  ) {
    this.lines = text.split("\n").map((l) => l.replace(/\r$/, "").trimEnd());
  }

  /** the lines of a region */
  linesOf(region: Region): string[] {
    const nonEmpty = () => this.lines.filter((l) => l.trim() !== "");
    switch (region.type) {
      case "title":
        return this.title === "" ? [] : [this.title];
      case "screen":
        return this.lines;
      case "last":
        return nonEmpty().slice(-region.n);
      case "after-rule": {
        const i = this.lastRule(this.lines.length);
        return i < 0 ? [] : this.lines.slice(i + 1).filter((l) => l.trim() !== "");
      }
      case "prompt-box": {
        const end = this.lastRule(this.lines.length);
        if (end < 0) return [];
        const start = this.lastRule(end);
        return this.lines.slice(start + 1, end).map(cleanLine).filter((l) => l !== "");
      }
    }
  }

  private lastRule(before: number): number {
    for (let i = before - 1; i >= 0; i--) if (isRuleLine(this.lines[i]!)) return i;
    return -1;
  }

  get(region: Region, key: string): { text: string; lower: string } {
    let v = this.cache.get(key);
    if (!v) {
      const text = this.linesOf(region).join("\n");
      this.cache.set(key, (v = { text, lower: text.toLowerCase() }));
    }
    return v;
  }
}

const MAX_REASON = 200;

/**
 * The one-line reason of a blocked verdict: "<heading>: <detail> — <question>" from the rule's
 * region (what the question regex matched in its last matching line; the last heading line above
 * it, whole, and the next non-empty line after that, or the first one matching the rule's detail),
 * else the rule's fixed text, else its id.
 */
export function ruleReason(r: CompiledRule, regions: Regions): string {
  const lines = regions.linesOf(r.region).map((l) => plainText(cleanLine(l)));
  let q = -1;
  let question = "";
  if (r.question) {
    for (let i = lines.length - 1; i >= 0 && q < 0; i--) {
      const m = r.question.exec(lines[i]!);
      if (m) [q, question] = [i, m[0].trim()];
    }
  }
  const parts: string[] = [];
  if (r.heading) {
    for (let i = (q < 0 ? lines.length : q) - 1; i >= 0; i--) {
      if (!r.heading.test(lines[i]!)) continue;
      const after = lines.slice(i + 1, q < 0 || q <= i ? undefined : q).filter((l) => l !== "");
      const detail = (r.detail ? after.find((l) => r.detail!.test(l)) : undefined) ?? after[0];
      // "Bash command: touch x"; a heading that is itself a question or ends in ':' takes a space
      parts.push(detail ? `${lines[i]}${/[?:]$/.test(lines[i]!) ? " " : ": "}${detail}` : lines[i]!);
      break;
    }
  }
  if (question) parts.push(question);
  let reason = parts.join(" — ") || r.text || r.id;
  if (reason.length > MAX_REASON) reason = `${reason.slice(0, MAX_REASON - 1)}…`;
  return reason;
}

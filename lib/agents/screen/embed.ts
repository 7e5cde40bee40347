// The screen rules, read at BUILD time: detect.ts imports embeddedRules() as a Bun macro
// (`with { type: "macro" }`), so the bundler runs it and inlines the result, and the binary carries
// every lib/agents/screen/rules/<kind>.json without reading files at run time. A new kind is one
// new JSON file: the directory listing is taken at build time, no code names the kinds. An invalid
// file fails the build (and `bun test`), naming the file and the rule.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type RuleFile, validateRuleFile } from "./rules.ts";

export const RULES_DIR = join(import.meta.dir, "rules");

/** every <kind>.json in dir, validated: kind → rules file */
export function readRulesDir(dir: string): Record<string, RuleFile> {
  const out: Record<string, RuleFile> = {};
  for (const f of readdirSync(dir).filter((x) => x.endsWith(".json")).sort()) {
    const kind = f.slice(0, -".json".length);
    let doc: unknown;
    try {
      doc = JSON.parse(readFileSync(join(dir, f), "utf8"));
    } catch (e) {
      throw new Error(`${join(dir, f)}: not valid JSON (${(e as Error).message})`);
    }
    out[kind] = validateRuleFile(kind, doc);
  }
  return out;
}

/** the macro: the rules of every kind in lib/agents/screen/rules/ */
export function embeddedRules(): Record<string, RuleFile> {
  return readRulesDir(RULES_DIR);
}

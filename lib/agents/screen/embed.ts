// The screen rules, read at BUILD time: detect.ts imports embeddedRules() as a Bun macro
// (`with { type: "macro" }`), so the bundler runs it and inlines the result, and the binary carries
// every lib/agents/kinds/<kind>.screen.json without reading files at run time. A kind's rules sit
// next to its module and its entry names the file (`screenRules`); the directory listing is taken
// at build time, so no code here names the kinds. An invalid file fails the build (and `bun test`),
// naming the file and the rule.
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { type RuleFile, validateRuleFile } from "./rules.ts";

/** where the rules files are: next to the kinds' modules */
export const RULES_DIR = join(import.meta.dir, "..", "kinds");
/** a rules file is <kind><RULES_SUFFIX> */
export const RULES_SUFFIX = ".screen.json";

/** every <kind>.screen.json in dir, validated: kind → rules file */
export function readRulesDir(dir: string): Record<string, RuleFile> {
  const out: Record<string, RuleFile> = {};
  for (const f of readdirSync(dir).filter((x) => x.endsWith(RULES_SUFFIX)).sort()) {
    const kind = f.slice(0, -RULES_SUFFIX.length);
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

/** the macro: the rules of every kind in lib/agents/kinds/ */
export function embeddedRules(): Record<string, RuleFile> {
  return readRulesDir(RULES_DIR);
}

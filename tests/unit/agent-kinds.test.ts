// The agent kinds table (lib/agents/kinds/): each kind's module states every aspect of its kind,
// with null where it has none, and the table agrees with the screen rules embedded at build time
// and with the tables derived from it (hooks, MCP, grants, herdr).
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { agentMcpArgs, grantArgs, HOOK_KINDS, isHerdrManaged, KINDS, kindNames, MCP_AGENTS } from "../../lib/agents/kinds/index.ts";
import type { AgentKind } from "../../lib/agents/kinds/kind.ts";
import { hasScreenRules, screenKinds } from "../../lib/agents/screen/detect.ts";
import { RULES_DIR, RULES_SUFFIX } from "../../lib/agents/screen/embed.ts";
import { serverEntry } from "../../lib/sys/self.ts";

/** every field of an entry; the nullable ones say "none" with null, never by leaving it out */
const ASPECTS = ["kind", "exe", "command", "herdrKind", "freshArgs", "assignsId", "resumeArgs", "resumeNote", "startDialog", "resumeLoaded", "exitText", "reads", "store", "screenRules", "hooks", "grants", "mcp", "usage", "limits", "continueAtReset"] as const;
const NULLABLE = new Set(["command", "herdrKind", "resumeArgs", "resumeNote", "startDialog", "resumeLoaded", "exitText", "store", "screenRules", "hooks", "grants", "mcp", "usage", "limits", "continueAtReset"]);

/** a grant's file, kept in memory: its path names the file, the texts are kept for the checks */
const files = new Map<string, string>();
const memFile = (name: string, text: string) => {
  files.set(`/grants/${name}`, text);
  return `/grants/${name}`;
};

const isFn = (v: unknown) => typeof v === "function";
const isWords = (v: unknown) => Array.isArray(v) && v.every((w) => typeof w === "string" && w !== "");

/** what is wrong with one entry (empty: it states every aspect, each in its shape) */
function problems(name: string, k: AgentKind): string[] {
  const out: string[] = [];
  const e = k as unknown as Record<string, unknown>;
  for (const a of ASPECTS) {
    if (!Object.hasOwn(e, a) || e[a] === undefined) out.push(`${name}: does not state ${a}${NULLABLE.has(a) ? " (null for none)" : ""}`);
    else if (e[a] === null && !NULLABLE.has(a)) out.push(`${name}: ${a} cannot be null`);
  }
  for (const a of Object.keys(e)) if (!(ASPECTS as readonly string[]).includes(a)) out.push(`${name}: unknown field ${a}`);
  if (out.length) return out;
  if (k.kind !== name) out.push(`${name}: kind is '${k.kind}'`);
  if (typeof k.exe !== "string" || k.exe === "") out.push(`${name}: no exe`);
  if (k.command !== null && (!isFn(k.command) || !isWords(k.command()))) out.push(`${name}: command is not words`);
  if (k.herdrKind !== null && (typeof k.herdrKind !== "string" || k.herdrKind === "")) out.push(`${name}: herdrKind is not a name`);
  if (!isFn(k.freshArgs) || !isWords(k.freshArgs()) || !isWords(k.freshArgs("ID-1"))) out.push(`${name}: freshArgs are not words`);
  else if (k.freshArgs("ID-1").includes("ID-1") !== k.assignsId) out.push(`${name}: assignsId and freshArgs(id) disagree`);
  if (typeof k.assignsId !== "boolean") out.push(`${name}: assignsId is not a boolean`);
  if (k.resumeArgs !== null && (!isFn(k.resumeArgs) || !isWords(k.resumeArgs("ID-1")) || !k.resumeArgs("ID-1").includes("ID-1"))) out.push(`${name}: resumeArgs do not name the id`);
  if (k.resumeNote !== null && (!isFn(k.resumeNote) || k.resumeArgs === null)) out.push(`${name}: resumeNote is not a function of a kind that resumes`);
  if (k.exitText !== null && (typeof k.exitText !== "string" || k.exitText === "")) out.push(`${name}: exitText is not a text`);
  if (k.reads !== "prose" && k.reads !== "commands") out.push(`${name}: reads is neither prose nor commands`);
  if (k.store !== null && (!isFn(k.store.find) || !isFn(k.store.newest))) out.push(`${name}: store lacks find/newest`);
  if (k.screenRules !== null) {
    if (k.screenRules !== `${name}${RULES_SUFFIX}`) out.push(`${name}: screenRules must be ${name}${RULES_SUFFIX} (the macro keys rules by file name)`);
    else if (!existsSync(join(RULES_DIR, k.screenRules))) out.push(`${name}: ${k.screenRules} does not exist`);
  }
  if (k.hooks !== null && (!isWords(k.hooks.events) || k.hooks.events.length === 0 || typeof k.hooks.projectFile !== "string" || !isFn(k.hooks.globalFile))) out.push(`${name}: hooks incomplete`);
  if (k.grants !== null && (!isFn(k.grants) || !isWords(k.grants("MAM", memFile)) || !k.grants("MAM", memFile).some((g) => g.includes("MAM") || files.get(g)?.includes("MAM")))) out.push(`${name}: grants do not name mam`);
  if (k.mcp !== null && (!isFn(k.mcp.args) || !isFn(k.mcp.install) || !isFn(k.mcp.uninstall))) out.push(`${name}: mcp lacks args/install/uninstall`);
  if (k.limits !== null && (k.usage === null || !isFn(k.limits.parse) || !isWords(k.limits.markers) || k.limits.markers.length === 0)) out.push(`${name}: limits lacks parse/markers, or its records (usage) are not found`);
  if (k.usage !== null && (!isFn(k.usage.files) || !isFn(k.usage.parse) || !isWords(k.usage.markers) || k.usage.markers.length === 0)) out.push(`${name}: usage lacks files/parse/markers`);
  if (k.continueAtReset !== null && (typeof k.continueAtReset.text !== "string" || k.continueAtReset.text.trim() === "" || !(k.continueAtReset.autoContinueS >= 0))) out.push(`${name}: continueAtReset lacks its text`);
  return out;
}

describe("each kind states every aspect", () => {
  test.each(kindNames())("%s", (name) => {
    expect(problems(name, KINDS[name]!)).toEqual([]);
  });

  test("the checker itself: a missing aspect, an undefined one, a stray field and a wrong shape are caught", () => {
    const { hooks: _h, ...noHooks } = KINDS.shell!;
    expect(problems("shell", noHooks as AgentKind)).toEqual(["shell: does not state hooks (null for none)"]);
    expect(problems("shell", { ...KINDS.shell!, grants: undefined } as unknown as AgentKind)).toEqual(["shell: does not state grants (null for none)"]);
    expect(problems("shell", { ...KINDS.shell!, exe: null } as unknown as AgentKind)).toEqual(["shell: exe cannot be null"]);
    expect(problems("shell", { ...KINDS.shell!, exitText: "" })).toEqual(["shell: exitText is not a text"]);
    expect(problems("shell", { ...KINDS.shell!, resume: null } as unknown as AgentKind)).toEqual(["shell: unknown field resume"]);
    expect(problems("shell", { ...KINDS.shell!, screenRules: "bash.screen.json" })).toEqual([`shell: screenRules must be shell${RULES_SUFFIX} (the macro keys rules by file name)`]);
    expect(problems("claude", { ...KINDS.claude!, assignsId: false })).toEqual(["claude: assignsId and freshArgs(id) disagree"]);
    expect(problems("claude", { ...KINDS.claude!, resumeArgs: () => ["--continue"] })).toEqual(["claude: resumeArgs do not name the id"]);
  });
});

describe("the table and the screen rules agree", () => {
  const named = kindNames().filter((k) => KINDS[k]!.screenRules !== null);

  test("the rules embedded at build time are exactly those the kinds name", () => {
    expect(screenKinds()).toEqual([...named].sort());
    for (const k of kindNames()) expect({ k, rules: hasScreenRules(k) }).toEqual({ k, rules: KINDS[k]!.screenRules !== null });
  });

  test("every rules file next to the kinds belongs to a kind that names it", () => {
    const files = readdirSync(RULES_DIR).filter((f) => f.endsWith(RULES_SUFFIX)).sort();
    expect(files).toEqual(named.map((k) => KINDS[k]!.screenRules!).sort());
  });
});

describe("the tables derived from the kinds", () => {
  test("hooks: the kinds whose entry has them", () => {
    expect(Object.keys(HOOK_KINDS)).toEqual(kindNames().filter((k) => KINDS[k]!.hooks !== null));
    expect(Object.keys(HOOK_KINDS)).toEqual(["claude", "codex"]);
  });

  test("MCP: the kinds whose entry has it; the others are refused by --mcp", () => {
    expect([...MCP_AGENTS]).toEqual(["claude", "codex"]);
    const e = serverEntry("/w", ["/opt/mam"]);
    for (const k of kindNames()) {
      if (KINDS[k]!.mcp) expect(agentMcpArgs(k, e).length).toBeGreaterThan(0);
      else expect(() => agentMcpArgs(k, e)).toThrow(`--mcp works with claude and codex (not ${k})`);
    }
  });

  test("grants: none for a kind without them; an unknown kind gets none", () => {
    for (const k of kindNames()) expect({ k, granted: grantArgs(k, {}, "mam", memFile).length > 0 }).toEqual({ k, granted: KINDS[k]!.grants !== null });
    expect(grantArgs("gpt", {}, "mam", memFile)).toEqual([]);
  });

  test("herdr manages exactly the kinds with a herdr kind (and kinds mam does not know)", () => {
    for (const k of kindNames()) expect({ k, managed: isHerdrManaged(k) }).toEqual({ k, managed: KINDS[k]!.herdrKind !== null });
    expect(isHerdrManaged("pi")).toBe(true);
    expect(isHerdrManaged(undefined)).toBe(true);
  });
});

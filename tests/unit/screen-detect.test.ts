// The screen-state detector (lib/agents/screen): the fixture table (accuracy per kind, and the two
// mistakes that must never happen), the rules as build-time data, regions and reasons.
import { expect, test } from "bun:test";
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { detectScreen, detectWith, screenKinds, type ScreenVerdict } from "../../lib/agents/screen/detect.ts";
import { isVerified } from "../../lib/agents/kinds/index.ts";
import { readRulesDir, RULES_DIR, RULES_SUFFIX } from "../../lib/agents/screen/embed.ts";
import { Regions } from "../../lib/agents/screen/regions.ts";
import { compileRules, parseRegion, validateRuleFile } from "../../lib/agents/screen/rules.ts";
import { parseScreens } from "../../lib/mux/tmux.ts";

const FIXTURES = join(import.meta.dir, "..", "fixtures", "screens");

interface Fixture {
  kind: string;
  name: string;
  text: string;
  title: string;
  want: ScreenVerdict;
}

/** every tests/fixtures/screens/<kind>/<name>.txt with its .json verdict and optional .title */
export function loadFixtures(root = FIXTURES): Fixture[] {
  const out: Fixture[] = [];
  for (const kind of readdirSync(root).sort()) {
    const dir = join(root, kind);
    if (!existsSync(dir) || !readdirSync(dir).length) continue;
    for (const f of readdirSync(dir).filter((x) => x.endsWith(".txt")).sort()) {
      const name = f.slice(0, -4);
      const read = (ext: string) => (existsSync(join(dir, name + ext)) ? readFileSync(join(dir, name + ext), "utf8") : undefined);
      const want = JSON.parse(read(".json") ?? "null") as ScreenVerdict | null;
      if (!want) throw new Error(`fixture ${kind}/${name} has no .json verdict`);
      out.push({ kind, name, text: read(".txt")!, title: (read(".title") ?? "").replace(/\n$/, ""), want });
    }
  }
  return out;
}

function correct(got: ScreenVerdict, want: ScreenVerdict): boolean {
  if (got.state !== want.state) return false;
  if ((want.dialog ?? undefined) !== (got.dialog ?? undefined)) return false;
  return want.reason === undefined || got.reason === want.reason;
}

test("fixture table: ≥ 95 % per kind, 100 % for the verified kinds, no idle prompt called blocked, no dialog called idle", () => {
  const fixtures = loadFixtures();
  expect(fixtures.length).toBeGreaterThan(20);
  const perKind = new Map<string, { n: number; ok: number }>();
  const wrong: string[] = [];
  const fatal: string[] = [];
  for (const f of fixtures) {
    const got = detectScreen(f.kind, { text: f.text, title: f.title });
    const k = perKind.get(f.kind) ?? { n: 0, ok: 0 };
    k.n++;
    if (correct(got, f.want)) k.ok++;
    else wrong.push(`${f.kind}/${f.name}: want ${JSON.stringify(f.want)}, got ${JSON.stringify(got)}`);
    if (f.want.state === "idle" && got.state === "blocked") fatal.push(`${f.kind}/${f.name}: idle prompt called blocked`);
    if (f.want.state === "blocked" && got.state === "idle") fatal.push(`${f.kind}/${f.name}: dialog called idle`);
    perKind.set(f.kind, k);
  }
  const table = [...perKind].map(([kind, k]) => `${kind.padEnd(10)} ${String(k.ok).padStart(3)}/${String(k.n).padEnd(3)} ${((100 * k.ok) / k.n).toFixed(1)} %`);
  console.log(`screen fixtures, accuracy per kind:\n${table.join("\n")}${wrong.length ? `\nwrong:\n${wrong.join("\n")}` : ""}`);
  expect(fatal).toEqual([]);
  for (const [kind, k] of perKind) expect({ kind, accuracy: k.ok / k.n >= (isVerified(kind) ? 1 : 0.95) }).toEqual({ kind, accuracy: true });
  // a verified kind with rules has real screens (captured from the pinned CLI) of every state its rules give
  for (const kind of screenKinds().filter((k) => isVerified(k) && k !== "demo")) {
    const ruled = JSON.parse(readFileSync(join(RULES_DIR, `${kind}${RULES_SUFFIX}`), "utf8")) as { rules: { state: string }[] };
    const want = [...new Set(ruled.rules.map((r) => r.state))].filter((s) => s !== "unknown").sort();
    const real = new Set(fixtures.filter((f) => f.kind === kind && f.name.includes("-real-")).map((f) => f.want.state));
    expect({ kind, real: want.filter((s) => real.has(s as ScreenVerdict["state"])) }).toEqual({ kind, real: want });
  }
  // every kind with rules has fixtures for each state its rules can give (idle, working,
  // blocked: the demo agent asks only with --dialog)
  for (const kind of screenKinds()) {
    const states = new Set(fixtures.filter((f) => f.kind === kind).map((f) => f.want.state));
    const ruled = JSON.parse(readFileSync(join(RULES_DIR, `${kind}${RULES_SUFFIX}`), "utf8")) as { rules: { state: string }[] };
    const want = [...new Set(ruled.rules.map((r) => r.state))].filter((s) => s !== "unknown").sort();
    expect(want).toContain("idle");
    expect(want).toContain("working");
    expect({ kind, states: [...states].filter((s) => s !== "unknown").sort() as string[] }).toEqual({ kind, states: want });
  }
});

test("the rules are build-time data: every <kind>.screen.json is embedded, a new file is picked up without code", () => {
  const files = readdirSync(RULES_DIR).filter((f) => f.endsWith(RULES_SUFFIX)).map((f) => f.slice(0, -RULES_SUFFIX.length)).sort();
  expect(screenKinds()).toEqual(files);
  const tmp = mkdtempSync(join(tmpdir(), "mam-rules-"));
  try {
    cpSync(RULES_DIR, tmp, { recursive: true });
    writeFileSync(
      join(tmp, `newagent${RULES_SUFFIX}`),
      JSON.stringify({ kind: "newagent", rules: [{ id: "ask", state: "blocked", dialog: "permission", priority: 5, region: "last:3", any: ["proceed? [y/n]"], reason: { question: "^.*proceed\\?" } }] }),
    );
    const all = readRulesDir(tmp);
    expect(Object.keys(all).sort()).toEqual([...files, "newagent"].sort());
    const v = detectWith(compileRules(all.newagent!), { text: "working on it\nRun touch x, proceed? [y/n]\n" });
    expect(v).toEqual({ state: "blocked", dialog: "permission", reason: "Run touch x, proceed?" });
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

test("bad rules files are refused with the kind, the rule and the problem", () => {
  const bad = (doc: unknown) => () => validateRuleFile("k", doc);
  const rule = { id: "r", state: "idle", priority: 1, region: "screen", any: ["x"] };
  expect(validateRuleFile("k", { kind: "k", rules: [rule] }).rules.length).toBe(1);
  expect(bad({ kind: "other", rules: [rule] })).toThrow(/screen rules for 'k': "kind" must be "k"/);
  expect(bad({ kind: "k", rules: [] })).toThrow(/non-empty list/);
  expect(bad({ kind: "k", rules: [{ ...rule, region: "bottom" }] })).toThrow(/rule "r": unknown region 'bottom'/);
  expect(bad({ kind: "k", rules: [{ ...rule, dialog: "start" }] })).toThrow(/belongs to blocked rules only/);
  expect(bad({ kind: "k", rules: [{ ...rule, state: "busy" }] })).toThrow(/"state" must be/);
  expect(bad({ kind: "k", rules: [{ ...rule, colour: 1 }] })).toThrow(/unknown field "colour"/);
  expect(bad({ kind: "k", rules: [{ ...rule, any: undefined, not: ["x"] }] })).toThrow(/needs at least one of/);
  expect(bad({ kind: "k", rules: [{ ...rule, regex: ["("] }] })).toThrow(/bad regex/);
  expect(bad({ kind: "k", rules: [rule, rule] })).toThrow(/duplicate id "r"/);
  expect(() => parseRegion("last:0")).toThrow(/unknown region/);
});

test("regions: last N non-empty lines, after the last rule, the prompt box without its edges", () => {
  const text = ["intro", "", "──────────", "│ ❯ hello │", "╰──────────╯", "  ? for shortcuts", ""].join("\n");
  const r = new Regions(text, "t");
  expect(r.linesOf({ type: "last", n: 2 })).toEqual(["╰──────────╯", "  ? for shortcuts"]);
  expect(r.linesOf({ type: "after-rule" })).toEqual(["  ? for shortcuts"]);
  expect(r.linesOf({ type: "prompt-box" })).toEqual(["❯ hello"]);
  expect(r.linesOf({ type: "title" })).toEqual(["t"]);
  expect(new Regions("no rules here", "").linesOf({ type: "prompt-box" })).toEqual([]);
});

test("priority decides; a kind without rules and an empty screen are unknown", () => {
  expect(detectScreen("no-such-kind", { text: "Do you want to proceed?\n❯ 1. Yes" })).toEqual({ state: "unknown" });
  expect(detectScreen("claude", { text: "", title: "" })).toEqual({ state: "unknown" });
  // spinner title (working) and a permission dialog on screen: the dialog wins
  const dialog = "Bash command\n  rm -rf build\nDo you want to proceed?\n❯ 1. Yes\n  2. No";
  expect(detectScreen("claude", { text: dialog, title: "⠐ Clean" })).toEqual({ state: "blocked", dialog: "permission", reason: "Bash command: rm -rf build — Do you want to proceed?" });
  expect(detectScreen("claude", { text: "hello", title: "⠐ Clean" })).toEqual({ state: "working" });
});

test("tmux screens(): the chained capture output splits per pane on the nonce lines", () => {
  const out = "N\t%1\t⠐ Working title\nline a\n\nline b\nN\t%7\t\n❯ \n";
  const m = parseScreens(out, "N");
  expect(m.get("%1")).toEqual({ title: "⠐ Working title", text: "line a\n\nline b" });
  expect(m.get("%7")).toEqual({ title: "", text: "❯ \n" });
});

test("real permission screens: the reason names the command (claude 2.1.197, codex 0.171.0)", () => {
  const real = (kind: string, name: string) => loadFixtures().find((f) => f.kind === kind && f.name === name)!;
  const c = real("claude", "blocked-real-permission-bash");
  expect(detectScreen("claude", c).reason).toBe("Bash command: mkdir -p build && touch build/out.txt — Do you want to proceed?");
  const x = real("codex", "blocked-real-permission-command");
  expect(detectScreen("codex", x).reason).toBe("Would you like to run the following command? $ touch /var/tmp/mam-capture-escalated.txt");
  expect(detectScreen("claude", real("claude", "blocked-real-start-trust"))).toMatchObject({ dialog: "start", reason: "Is this a project you created or one you trust?" });
});

test("real permission screens and start dialogs of gemini 0.61.0, opencode 1.18.33, qwen 0.24.4, cline 3.0.65: the reason names the command, the dialog its name", () => {
  const real = (kind: string, name: string) => detectScreen(kind, loadFixtures().find((f) => f.kind === kind && f.name === name)!);
  expect(real("gemini", "blocked-real-permission-shell").reason).toBe("? Shell mkdir -p build && touch build/out.txt: mkdir -p build && touch build/out.txt — Allow execution of [Shell]?");
  expect(real("opencode", "blocked-real-permission-bash").reason).toBe("△ Permission required: $ mkdir -p build && touch build/out.txt");
  expect(real("qwen", "blocked-real-permission-shell").reason).toEndWith("mkdir -p build && touch build/out.txt — Allow execution of: 'mkdir, touch'?");
  expect(real("gemini", "blocked-real-start-trust")).toMatchObject({ dialog: "start", name: "trust this folder", reason: "Do you trust the files in this folder?" });
  expect(real("qwen", "blocked-real-start-provider")).toMatchObject({ dialog: "start", name: "connect a provider" });
  expect(real("cline", "blocked-real-permission-command").reason).toBe("Approve tool call? $ mkdir -p build && touch build/out.txt");
  expect(real("cline", "blocked-real-start-notice")).toMatchObject({ dialog: "start", name: "notice" });
  expect(real("cline", "blocked-real-start-sign-in")).toMatchObject({ dialog: "start", name: "sign-in" });
});

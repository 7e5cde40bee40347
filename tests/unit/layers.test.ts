// The layers test (issue 22): the real tree keeps the rules of tests/helpers/layers.ts (imports
// point down a layer, no import cycle, use cases do not print, exit codes are EXIT constants, no
// dead export), and the checker itself is shown to fail when a rule is broken and to pass when it
// is kept, on small synthetic trees. Exports read only in their own file are printed, not failed.
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import { checkLayers, RANKS, readSources, type Report } from "../helpers/layers.ts";

const ROOT = join(import.meta.dir, "..", "..");

describe("the real tree", () => {
  const sources = readSources(ROOT);
  const report = checkLayers(sources);

  test("every folder of lib/ has a rank, and the tree was read", () => {
    const lib = Object.keys(sources).filter((p) => p.startsWith("lib/"));
    expect(lib.length).toBeGreaterThan(100);
    const folders = new Set(lib.map((p) => (p.split("/").length > 2 ? p.split("/").slice(0, 2).join("/") : "lib")));
    expect([...folders].filter((f) => RANKS[f] === undefined)).toEqual([]);
  });

  test("imports in lib/ and mam.ts point down a layer, never into tests/, bench/ or scripts/", () => {
    expect(report.layers).toEqual([]);
  });
  test("no import cycle in lib/, mam.ts, scripts/, bench/", () => {
    expect(report.cycles).toEqual([]);
  });
  test("use cases do not print", () => {
    expect(report.printing).toEqual([]);
  });
  test("exit codes are EXIT constants, not numbers", () => {
    expect(report.exitCodes).toEqual([]);
  });
  test("no message below the front doors names a flag", () => {
    expect(report.flagWords).toEqual([]);
  });
  test("inside lib/ops, imports point down its ranks; use-case folders do not import each other", () => {
    expect(report.opsLayers).toEqual([]);
  });
  test("the reactions read no process.env", () => {
    expect(report.environment).toEqual([]);
  });
  test("only lib/jobs and wiring.ts call the job-file functions", () => {
    expect(report.jobFiles).toEqual([]);
  });
  test("no function in lib/daemon is longer than 100 lines", () => {
    expect(report.longFunctions).toEqual([]);
  });
  test("no dead export in lib/", () => {
    if (report.widerThanUsed.length) console.log(`exported wider than used (read only in their own file; not a failure):\n  ${report.widerThanUsed.join("\n  ")}`);
    expect(report.deadExports).toEqual([]);
  });
});

/** a tree where every rule holds; tests add one file or edit one to break one rule */
const CLEAN: Record<string, string> = {
  "lib/sys/errors.ts": `export const EXIT = { FAIL: 1, USAGE: 2 } as const;
export class MamError extends Error { constructor(m: string, readonly exitCode = 1) { super(m); } }
export const usageError = (m: string) => new MamError(m, 2);`,
  "lib/sys/io.ts": `export function out(t: string) { process.stdout.write(t); }
export function warn(t: string) { console.error(t); }`,
  "lib/mux/pane.ts": `import { MamError, EXIT } from "../sys/errors.ts";
export interface Pane { id: string }
export function paneOf(id: string): Pane { if (!id) throw new MamError("no id", EXIT.FAIL); return { id }; }`,
  "lib/ops/stop.ts": `import type { Pane } from "../mux/pane.ts";
import { paneOf } from "../mux/pane.ts";
import { usageError } from "../sys/errors.ts";
export function stop(id: string): { pane: Pane; warnings: string[] } { if (id === "-") throw usageError("bad"); return { pane: paneOf(id), warnings: [] }; }`,
  "lib/cli/stop.ts": `import { stop } from "../ops/stop.ts";
import { out, warn } from "../sys/io.ts";
export default function run(id: string) { const r = stop(id); for (const w of r.warnings) warn(w); out(r.pane.id); }`,
  "mam.ts": `const run = await import("./lib/cli/stop.ts");
run.default(process.argv[2] ?? "");`,
};

const check = (extra: Record<string, string> = {}): Report => checkLayers({ ...CLEAN, ...extra });
const empty: Report = { layers: [], cycles: [], printing: [], exitCodes: [], deadExports: [], flagWords: [], opsLayers: [], environment: [], jobFiles: [], longFunctions: [], widerThanUsed: [] };

test("the clean tree passes every rule", () => {
  expect(check()).toEqual(empty);
});

describe("rule 1: layers", () => {
  test("an upward import fails; taking it out passes again", () => {
    const up = { "lib/ops/stop.ts": `${CLEAN["lib/ops/stop.ts"]}\nimport run from "../cli/stop.ts";\nexport const again = run;` };
    expect(check(up).layers).toEqual(["lib/ops/stop.ts:5: imports lib/cli/stop.ts: upward (lib/ops is rank 8, lib/cli is rank 10)"]);
    expect(check().layers).toEqual([]);
  });

  test("every form of import counts: import type, export from, import(), require(), import types", () => {
    const forms = [
      `import type { X } from "../ops/stop.ts";`,
      `export { stop } from "../ops/stop.ts";`,
      `export async function f() { return (await import("../ops/stop.ts")).stop; }`,
      `export const { stop } = require("../ops/stop.ts") as typeof import("../ops/stop.ts");`,
      `export let s: import("../ops/stop.ts").Stop | undefined;`,
    ];
    for (const src of forms) expect(check({ "lib/mux/up.ts": src }).layers).toHaveLength(1);
  });

  test("mam.ts is the top: nothing in lib/ imports it", () => {
    expect(check({ "lib/cli/root.ts": `import "../../mam.ts";` }).layers).toEqual(["lib/cli/root.ts:1: imports mam.ts: upward (lib/cli is rank 10, mam.ts is rank 11)"]);
  });

  test("comments and strings are not imports", () => {
    const src = `// import { stop } from "../ops/stop.ts";
/* import("../cli/stop.ts") */
export const text = 'import { stop } from "../ops/stop.ts"' + \`require("../cli/stop.ts")\`;`;
    expect(check({ "lib/mux/quiet.ts": src }).layers).toEqual([]);
  });

  test("surfaces of the same rank never import each other", () => {
    const r = check({ "lib/ui/view.ts": `export const view = 1;`, "lib/mcp/tools.ts": `import { view } from "../ui/view.ts";\nexport const t = view;` });
    expect(r.layers).toEqual(["lib/mcp/tools.ts:1: imports lib/ui/view.ts: sideways (lib/mcp and lib/ui share rank 9 and never import each other)"]);
  });

  test("a subfolder belongs to its top folder", () => {
    const inner = { "lib/ops/session/create.ts": `import { stop } from "../stop.ts";\nexport const create = stop;` };
    expect(check(inner).layers).toEqual([]);
    const up = { "lib/ops/session/create.ts": `import { stop } from "../../cli/stop.ts";\nexport const create = stop;` };
    expect(check(up).layers).toEqual(["lib/ops/session/create.ts:1: imports lib/cli/stop.ts: upward (lib/ops is rank 8, lib/cli is rank 10)"]);
  });

  test("lib/ and mam.ts never import tests/ or bench/; scripts/ and bench/ may import anything", () => {
    const r = check({
      "tests/helpers/sandbox.ts": `export const sandbox = 1;`,
      "lib/ops/seam.ts": `import { sandbox } from "../../tests/helpers/sandbox.ts";\nexport const seam = sandbox;`,
      "mam.ts": `${CLEAN["mam.ts"]}\nawait import("./bench/main.ts");`,
      "bench/main.ts": `import { sandbox } from "../tests/helpers/sandbox.ts";\nimport run from "../lib/cli/stop.ts";\nrun(String(sandbox));`,
    });
    expect(r.layers).toEqual([
      "lib/ops/seam.ts:1: imports tests/helpers/sandbox.ts: nothing in lib/ or mam.ts imports tests/",
      "mam.ts:3: imports bench/main.ts: nothing in lib/ or mam.ts imports bench/",
    ]);
  });

  test("a folder of lib/ without a rank is a finding (add it to RANKS)", () => {
    const r = check({ "lib/queue/q.ts": `import { stop } from "../ops/stop.ts";\nexport const q = stop;` });
    expect(r.layers).toEqual(["lib/queue/q.ts:1: imports lib/ops/stop.ts: lib/queue has no rank in RANKS (tests/helpers/layers.ts)"]);
  });
});

describe("rule 2: cycles", () => {
  test("a cycle through static, type and dynamic imports is reported once, with its files", () => {
    const r = check({
      "lib/jobs/event.ts": `import type { Id } from "./identity.ts";\nexport interface Event { id: Id }`,
      "lib/jobs/identity.ts": `import { seqOf } from "./seq.ts";\nexport type Id = string;\nexport const idOf = seqOf;`,
      "lib/jobs/seq.ts": `export async function seqOf() { return (await import("./event.ts")) as unknown; }`,
    });
    expect(r.cycles).toEqual(["cycle: lib/jobs/event.ts:1 → lib/jobs/identity.ts:1 → lib/jobs/seq.ts:1 → lib/jobs/event.ts"]);
  });

  test("a knot of several cycles is one finding that names every file", () => {
    const r = check({
      "lib/jobs/a.ts": `import { b } from "./b.ts";\nexport const a = b;`,
      "lib/jobs/b.ts": `import { a } from "./a.ts";\nimport { c } from "./c.ts";\nexport const b = a + c;`,
      "lib/jobs/c.ts": `import { b } from "./b.ts";\nexport const c = b;`,
    });
    expect(r.cycles).toEqual(["cycle: lib/jobs/a.ts:1 → lib/jobs/b.ts:1 → lib/jobs/a.ts; the same knot holds lib/jobs/c.ts"]);
  });

  test("cycles count in scripts/ and bench/, not in tests/", () => {
    const loop = (dir: string) => ({ [`${dir}/main.ts`]: `import { x } from "./part.ts";\nexport const y = x;`, [`${dir}/part.ts`]: `import type { y } from "./main.ts";\nexport const x = 1 as unknown as typeof y;` });
    expect(check(loop("bench")).cycles).toEqual(["cycle: bench/main.ts:1 → bench/part.ts:1 → bench/main.ts"]);
    expect(check(loop("scripts")).cycles).toHaveLength(1);
    expect(check(loop("tests/helpers")).cycles).toEqual([]);
  });
});

describe("rule 3: use cases do not print", () => {
  test("out(), err(), outJson(), warn() of lib/sys/io.ts, console.* and process.stdout.write fail in use cases", () => {
    const r = check({
      "lib/ops/noisy.ts": `import { out, warn as say } from "../sys/io.ts";
import * as io from "../sys/io.ts";
export async function noisy() {
  out("a");
  say("b");
  io.warn("c");
  const { outJson } = await import("../sys/io.ts");
  outJson({});
  console.log("d");
  process.stdout.write("e");
  return [1].map(say);
}`,
    });
    expect(r.printing).toEqual([
      "lib/ops/noisy.ts:4: calls out() of lib/sys/io.ts: return the text (or a warning as data) to the caller",
      "lib/ops/noisy.ts:5: calls warn() of lib/sys/io.ts: return the text (or a warning as data) to the caller",
      "lib/ops/noisy.ts:6: uses warn() of lib/sys/io.ts: return the text (or a warning as data) to the caller",
      "lib/ops/noisy.ts:8: calls outJson() of lib/sys/io.ts: return the text (or a warning as data) to the caller",
      "lib/ops/noisy.ts:9: console.log: a use case does not print",
      "lib/ops/noisy.ts:10: process.stdout.write: a use case does not print",
      "lib/ops/noisy.ts:11: passes on warn() of lib/sys/io.ts: return the text (or a warning as data) to the caller",
    ]);
  });

  test("every folder of the list is covered; surfaces, lib/sys and look-alikes are not findings", () => {
    for (const dir of ["fleet", "jobs", "agents", "registry", "worktrees", "mux", "broker"]) {
      expect(check({ [`lib/${dir}/x.ts`]: `export const x = () => console.error("x");` }).printing).toHaveLength(1);
    }
    const r = check({
      "lib/ui/page.ts": `export const page = () => console.log("the UI may print");`,
      "lib/sys/log.ts": `export const log = (t: string) => process.stderr.write(t);`,
      "lib/ops/quiet.ts": `// console.log("in a comment")
const out = (t: string) => [t];
export const quiet = () => [...out("a local out()"), "console.log(1)"];`,
    });
    expect(r.printing).toEqual([]);
  });
});

describe("rule 4: literal exit codes", () => {
  test("new MamError(…, 2) and super(…, 1) fail; EXIT constants and helpers pass", () => {
    const r = check({
      "lib/jobs/store.ts": `import { EXIT, MamError, usageError } from "../sys/errors.ts";
export function check(id: string) {
  if (!id) throw new MamError(\`invalid job id '\${id}'\`, 2);
  if (id === "x") throw new MamError("x", EXIT.USAGE);
  throw usageError("y");
}
export class GoneError extends MamError {
  constructor(what: string) { super(\`\${what} is gone\`, 1); }
}`,
    });
    expect(r.exitCodes).toEqual([
      "lib/jobs/store.ts:3: new MamError(…, 2): write EXIT.USAGE (or a helper of lib/sys/errors.ts)",
      "lib/jobs/store.ts:8: super of a MamError(…, 1): write EXIT.FAIL (or a helper of lib/sys/errors.ts)",
    ]);
  });
});

describe("rule 5: dead exports", () => {
  const lib = {
    "lib/sys/util.ts": `export const named = 1, viaNs = 2, viaReexport = 3, viaAwait = 4, viaAll = 5, viaRequire = 6, viaThen = 7, viaTest = 8;
export type ViaImportType = string;
export const lazyDefault = 9;
export function dead() {}
export function wider() {}
export function user() { return wider(); }`,
  };
  const importers = {
    "lib/mux/a.ts": `import { named } from "../sys/util.ts";
import * as ns from "../sys/util.ts";
export { viaReexport } from "../sys/util.ts";
export const a = [named, ns.viaNs, ns.user];
export async function b() {
  const { viaAwait } = await import("../sys/util.ts");
  const [{ viaAll }, cmd] = await Promise.all([import("../sys/util.ts"), import("./c.ts")]);
  const { viaRequire } = require("../sys/util.ts") as typeof import("../sys/util.ts");
  void import("../sys/util.ts").then(({ viaThen }) => viaThen);
  let t: import("../sys/util.ts").ViaImportType | undefined;
  return [viaAwait, viaAll, viaRequire, t, cmd.default];
}`,
    "lib/mux/c.ts": `export default 1;`,
    "tests/unit/util.test.ts": `import { viaTest } from "../../lib/sys/util.ts";\nexport const seen = viaTest;`,
  };

  test("every way of importing a name counts as a reader; unread exports are dead, self-read ones wider", () => {
    const r = check({ ...lib, ...importers });
    expect(r.deadExports).toEqual([
      "lib/mux/a.ts:3: viaReexport: exported, read nowhere (re-export of lib/sys/util.ts)",
      "lib/mux/a.ts:4: a: exported, read nowhere",
      "lib/mux/a.ts:5: b: exported, read nowhere",
      "lib/sys/util.ts:3: lazyDefault: exported, read nowhere",
      "lib/sys/util.ts:4: dead: exported, read nowhere",
    ]);
    expect(r.widerThanUsed).toEqual(["lib/sys/util.ts:5: wider: exported, read only in its own file"]);
  });

  test("a default export loaded through a local lazy(() => import(…)) is read; its other names are not", () => {
    const r = check({
      "lib/cli/cmd.ts": `export default 1;\nexport const helper = 2;`,
      "mam.ts": `const lazy = (load: () => Promise<{ default: number }>) => () => load().then((m) => m.default);
export const commands = { cmd: lazy(() => import("./lib/cli/cmd.ts")) };`,
    });
    expect(r.deadExports.filter((d) => d.startsWith("lib/cli/cmd.ts"))).toEqual(["lib/cli/cmd.ts:2: helper: exported, read nowhere"]);
  });

  test("a namespace passed on as a whole reads every name", () => {
    const r = check({ "lib/sys/all.ts": `export const one = 1, two = 2;`, "lib/mux/use.ts": `import * as all from "../sys/all.ts";\nconsole.log(all);` });
    expect(r.deadExports).toEqual([]);
  });
});

describe("rule 6: no message below the front doors names a flag", () => {
  const stop = (msg: string) => ({ "lib/ops/stop.ts": CLEAN["lib/ops/stop.ts"]!.replace('usageError("bad")', msg) });

  test("a flag in an error's message or hint fails, in every way it is made; field() passes again", () => {
    expect(check(stop('usageError("invalid --base")')).flagWords).toEqual([
      'lib/ops/stop.ts:4: a message names the flag --base: name the input field as field("base") (lib/sys/fields.ts), each front door spells it',
    ]);
    expect(check(stop('usageError(`bad ${id}`, `or add --force`)')).flagWords.map((f) => f.split(": ")[1])).toEqual(["a message names the flag --force"]);
    const made = {
      "lib/mux/pane.ts": CLEAN["lib/mux/pane.ts"]!.replace('new MamError("no id", EXIT.FAIL)', 'new MamError("no id", EXIT.FAIL, "pass --pane")'),
    };
    expect(check(made).flagWords.map((f) => f.split(": ")[1])).toEqual(["a message names the flag --pane"]);
    expect(check(stop('usageError(`invalid ${"{{base}}"}`)')).flagWords).toEqual([]);
    expect(check().flagWords).toEqual([]);
  });

  test("a notice counts; a command line for the user, a front door, or a string that is no message does not", () => {
    const withNotice = {
      "lib/sys/notice.ts": `export const warning = (text: string) => ({ level: "warning", text });`,
      "lib/ops/note.ts": `import { warning } from "../sys/notice.ts";\nexport const w = () => [warning("give --broker"), warning("see: mam team init --help"), warning("see: git log --oneline")];\nexport const argv = ["tmux", "--version"];`,
      "lib/cli/stop.ts": `${CLEAN["lib/cli/stop.ts"]}\nimport { usageError } from "../sys/errors.ts";\nimport { w } from "../ops/note.ts";\nexport const e = () => [usageError("--hard and --soft contradict each other"), w];`,
    };
    expect(check(withNotice).flagWords.map((f) => f.split(": ").slice(0, 2).join(": "))).toEqual(["lib/ops/note.ts:2: a message names the flag --broker"]);
  });
});

describe("rule 7: ranks inside lib/ops", () => {
  const ops = {
    "lib/ops/deps.ts": `export interface Deps { ws: string }`,
    "lib/ops/job/submit.ts": `import type { Deps } from "../deps.ts";\nexport const submit = (d: Deps) => d.ws;`,
    "lib/ops/session/stop2.ts": `import type { Deps } from "../deps.ts";\nexport const stop2 = (d: Deps) => d.ws;`,
    "lib/ops/react/watch.ts": `import { submit } from "../job/submit.ts";\nimport { stop2 } from "../session/stop2.ts";\nexport const watch = [submit, stop2];`,
    "lib/ops/table/job.ts": `import { submit } from "../job/submit.ts";\nimport { watch } from "../react/watch.ts";\nexport const table = [submit, watch];`,
    "lib/cli/ops2.ts": `import { table } from "../ops/table/job.ts";\nexport default table;`,
    "mam.ts": `${CLEAN["mam.ts"]}\nimport t from "./lib/cli/ops2.ts";\nvoid t;`,
  };
  test("a use-case folder importing a sibling's use case fails; the reactions and the table calling use cases pass", () => {
    expect(check(ops).opsLayers).toEqual([]);
    const sideways = { ...ops, "lib/ops/session/stop2.ts": `import type { Deps } from "../deps.ts";\nimport { submit } from "../job/submit.ts";\nexport const stop2 = (d: Deps) => [d.ws, submit];` };
    expect(check(sideways).opsLayers).toEqual(["lib/ops/session/stop2.ts:2: imports lib/ops/job/submit.ts: sideways (lib/ops/session/ and lib/ops/job/ never import each other's use cases; shared pieces go below)"]);
  });
  test("a use case importing the table, or a reaction, fails (upward)", () => {
    const up = { ...ops, "lib/ops/job/submit.ts": `import type { Deps } from "../deps.ts";\nexport const submit = (d: Deps) => d.ws;\nexport const late = () => import("../react/watch.ts");` };
    expect(check(up).opsLayers).toEqual(["lib/ops/job/submit.ts:3: imports lib/ops/react/watch.ts: upward (lib/ops/job/ is rank 2 in lib/ops, lib/ops/react/ is rank 2.5)"]);
  });
});

describe("rule 8: the reactions read no process.env", () => {
  test("process.env in lib/ops/react fails; deps.env passes", () => {
    const base = { "lib/ops/react/r.ts": `export const r = (env: Record<string, string>) => env.MAM_X;` };
    expect(check(base).environment).toEqual([]);
    const bad = { "lib/ops/react/r.ts": `export const r = () => process.env.MAM_X;` };
    expect(check(bad).environment).toEqual(["lib/ops/react/r.ts:1: process.env: a reaction reads deps.env"]);
  });
});

describe("rule 9: job files only through the JobStore", () => {
  const store = {
    "lib/jobs/record-file.ts": `export function readRecord(ws: string, id: string) { return ws + id; }\nexport interface JobRecord { id: string }`,
    "lib/jobs/store.ts": `export * from "./record-file.ts";\nimport { readRecord } from "./record-file.ts";\nexport const jobStore = (ws: string) => ({ read: (id: string) => readRecord(ws, id) });`,
    "lib/ops/wiring.ts": `import { jobStore } from "../jobs/store.ts";\nexport const deps = jobStore("/w");`,
  };
  test("the daemon or the dashboard calling a job-file function fails, in each import form; a type, or the store, passes", () => {
    const ok = { ...store, "lib/daemon/d.ts": `import type { JobRecord } from "../jobs/store.ts";\nimport { deps } from "../ops/wiring.ts";\nexport const d = (r: JobRecord) => deps.read(r.id);` };
    expect(check(ok).jobFiles).toEqual([]);
    const named = { ...store, "lib/daemon/d.ts": `import { readRecord } from "../jobs/store.ts";\nexport const d = readRecord("/w", "1");` };
    expect(check(named).jobFiles).toEqual(["lib/daemon/d.ts:1: uses readRecord of lib/jobs/store.ts: go through the JobStore (deps.jobs)"]);
    const lazy = { ...store, "lib/ui/u.ts": `export async function u() { const { readRecord } = await import("../jobs/record-file.ts"); return readRecord("/w", "1"); }` };
    expect(check(lazy).jobFiles).toEqual(["lib/ui/u.ts:1: uses readRecord of lib/jobs/record-file.ts: go through the JobStore (deps.jobs)"]);
  });
});

describe("rule 10: no long function in lib/daemon", () => {
  /** a function of `n` lines in all (its first line and its closing brace included) */
  const body = (head: string, n: number, tail = "}") => [head, ...Array.from({ length: n - 2 }, (_, i) => `  x += ${i};`), tail].join("\n");
  test("101 lines fails, 100 passes, in each form of function; the line and the name are told", () => {
    for (const [head, tail, name] of [
      ["export async function run(): Promise<number> {", "}", "run"],
      ["export const step = (a: number) => {", "};", "step"],
      ["export const o = { go() {", "} };", "go"],
      ["export class D { private tick(): void {", "} }", "tick"],
      ["export const later = function () {", "};", "later"],
    ] as const) {
      const long = { "lib/daemon/loop.ts": `let x = 0;\n${body(head, 101, tail)}` };
      expect(check(long).longFunctions).toEqual([`lib/daemon/loop.ts:2: ${name} is 101 lines long (at most 100): split it into steps`]);
      expect(check({ "lib/daemon/loop.ts": `let x = 0;\n${body(head, 100, tail)}` }).longFunctions).toEqual([]);
    }
  });
  test("a nested function counts in its parent; braces in strings and comments do not fool it", () => {
    const inner = body("  const inner = () => {", 60, "  };");
    const src = `let x = 0;\nexport function outer() {\n  const s = "}}}"; // }\n${inner}\n${body("  const more = () => {", 40, "  };")}\n}`;
    expect(check({ "lib/daemon/loop.ts": src }).longFunctions).toEqual(["lib/daemon/loop.ts:2: outer is 103 lines long (at most 100): split it into steps"]);
  });
  test("outside lib/daemon a long function is not this rule's business", () => {
    expect(check({ "lib/ops/long.ts": `let x = 0;\n${body("export function long() {", 150)}` }).longFunctions).toEqual([]);
  });
});

// The layers checker (issue 22): checkLayers(sources) reads a tree of TypeScript sources, given as
// repository-relative paths ("lib/ops/stop.ts", "mam.ts") → text, and returns what breaks the
// rules below, one line per finding ("path:line: message"), sorted; an empty report is a pass.
// It is pure: no file system, so tests feed it small synthetic trees; readSources(root) reads the
// real one (lib/, scripts/, bench/, tests/, mam.ts). Sources are parsed with the TypeScript
// compiler's parser (an AST, no type checking; tests/helpers/module-facts.ts), so comments and
// strings never count as imports. `bun tests/helpers/layers.ts` prints the real tree's report.
//
// An import is any of: `import … from`, `import type`, `export … from`, `import x = require()`,
// `import("…")`, `require("…")` and the type `import("…").T`; only relative specifiers ("./",
// "../") are edges, packages and node:/bun: modules are not. Subfolders belong to their top
// folder under lib/ (lib/ops/session/x.ts is lib/ops).
//
// Rules (the tables right below are the data to adjust; the code reads only them):
//  1. layers: a file of lib/ or mam.ts imports a file of its own folder, or of a folder of lower
//     RANK; same rank in another folder is a violation (the surfaces never import each other), a
//     folder of lib/ missing from RANKS is one too. Nothing in lib/ or mam.ts imports a path
//     under PRODUCT_MAY_NOT_IMPORT.
//  2. cycles: no import cycle (static, dynamic and type imports alike) among the files under
//     CYCLE_SCOPE; each knot (strongly connected set of files) is reported once, with one cycle
//     through it and every file in it.
//  3. printing: files under USE_CASE_FOLDERS use none of PRINTERS.names imported from
//     PRINTERS.module (called or passed on), no console.*, nothing in PRINT_MEMBERS.
//  4. exit codes: outside ERRORS.module (in lib/ and mam.ts), no numeric literal as the exit code
//     of `new MamError(message, code, …)` nor of `super(message, code, …)` in a class that
//     extends MamError: write EXIT.X or a helper (usageError, notFound, conflict, …).
//  5. dead exports: an exported name of a lib/ file that no other file of the tree imports
//     (named, default, `ns.a` of `import * as ns` or of `const ns = await import()`, `export { a }
//     from`, destructuring of `await import()`, of `Promise.all([import(), …])`, of `.then()` and
//     of `require()`) and that its own file does not read either. Read only in its own file is
//     "exported wider than used": a softer list (widerThanUsed), not a failure.
//  6. flag words: below the FRONT_DOORS (a file of lib/ outside them), no message names a flag:
//     a string in the arguments of a MESSAGES maker (new MamError, usageError, warning(), …) has
//     no `--word` unless it is in a command line the user runs (COMMAND_LINE: `see: mam status
//     --help`, `git log --oneline`). A use case names an input field as field("x") ({{x}}), and each front door spells
//     it its own way (--x on the command line, x over MCP). FLAG_WORDS_ALLOWED lists the files
//     let off, each with why.
//  7. inside lib/ops: a file imports files of lower OPS_RANKS, or of its own unit (a use-case
//     folder, the reactions, the table); the use-case folders (job/, session/) never import each
//     other; the imports in OPS_DEBTS are known crossings, listed to go.
//  8. environment: files under NO_ENV read no `process.env` (deps.env is their environment).
//  9. job files: outside JOB_FILES.allowed (lib/jobs/, lib/ops/wiring.ts), no product file (the
//     daemon, the dashboard and the CLI included) calls the job-file functions of JOB_FILES.modules:
//     they go through the JobStore (deps.jobs).
// 10. long functions: no function under SHORT_FUNCTIONS.folders is longer than SHORT_FUNCTIONS.maxLines
//     lines, from the line its declaration starts on to the line of its closing brace, both counted
//     (a function declaration, a method, an accessor, a constructor, an arrow function, a function
//     expression; a nested function counts in its parent's lines too). lib/daemon is process
//     lifecycle only: what the daemon decides is a reaction (lib/ops/react), and the loop stays in
//     small steps one can read whole (issue 33).
import ts from "typescript";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { EXIT } from "../../lib/sys/errors.ts";
import { dotted, factsOf, lineOf, type ModuleFacts } from "./module-facts.ts";

// ---- the rules as data -------------------------------------------------------------------

/** rank of each folder of lib/ (and of mam.ts): imports go to a lower rank or stay in the folder */
export const RANKS: Record<string, number> = {
  "lib/sys": 0,
  "lib/assets": 0,
  "lib/mux": 1,
  "lib/registry": 2,
  "lib/agents": 3,
  "lib/worktrees": 4,
  "lib/broker": 5,
  "lib/cost": 5.5,
  "lib/jobs": 6,
  "lib/team": 6.5,
  "lib/notify": 6.7,
  "lib/sandbox": 6.8,
  "lib/fleet": 7,
  "lib/doctor": 7.5,
  "lib/ops": 8,
  "lib/daemon": 9,
  "lib/mcp": 9,
  "lib/ui": 9,
  "lib/demo": 9,
  "lib/cli": 10,
  "mam.ts": 11,
};

/** what the product (lib/, mam.ts) never imports */
export const PRODUCT_MAY_NOT_IMPORT = ["tests/", "bench/", "scripts/"];

/** where import cycles are looked for (tests/ may import in circles among its own helpers) */
export const CYCLE_SCOPE = ["lib/", "mam.ts", "scripts/", "bench/"];

/** the use cases and what sits below them: they return data and never print */
export const USE_CASE_FOLDERS = ["lib/ops", "lib/doctor", "lib/fleet", "lib/jobs", "lib/cost", "lib/team", "lib/notify", "lib/agents", "lib/registry", "lib/worktrees", "lib/mux", "lib/broker"];

/** the printing functions of the one output module */
export const PRINTERS = { module: "lib/sys/io.ts", names: ["out", "err", "outJson", "warn"] };

/** property chains that print, besides console.* */
export const PRINT_MEMBERS = ["process.stdout.write", "process.stderr.write", "Bun.stdout", "Bun.stderr"];

/** the one error type and the module that may spell exit codes as numbers */
export const ERRORS = { module: "lib/sys/errors.ts", errorClass: "MamError" };

/** rule 6: the front doors (they spell fields as their callers do), and the makers of messages, by module */
export const FRONT_DOORS = ["lib/cli/", "lib/mcp/", "lib/ui/", "mam.ts"];
export const MESSAGES: Record<string, string[]> = {
  "lib/sys/errors.ts": ["MamError", "usageError", "notFound", "conflict"],
  "lib/sys/notice.ts": ["warning", "note", "info", "failure"],
};
/** rule 6: a flag after one of these words is part of a command line the user runs, not a field of the front door */
export const COMMAND_LINE = /\b(mam|git) [^"'`;]*$|\bpgrep -af '[^']*$/;
/** rule 6: files let off, with why */
export const FLAG_WORDS_ALLOWED: Record<string, string> = {
  // the journal file's appendEvent (split from store.ts by issue 33 part 2): its --token / --detail
  // messages reach `mam job event` callers as they are; field() there waits for its tests to spell it
  "lib/jobs/journal-file.ts": "appendEvent's --token / --detail messages, as before the split",
  // tests call these in process and pin the rendered line with its --flag (tests/unit/agent-kinds.test.ts,
  // mcp-config.test.ts, tests/integration/mux-herdr.test.ts); field() there waits for those tests to spell it
  "lib/agents/kinds/index.ts": "unit tests pin --mcp in the message",
  "lib/mux/herdr-env.ts": "tests/integration/mux-herdr.test.ts pins --mux tmux in render()",
  "lib/mux/herdr-version.ts": "tests/unit/herdr-fidelity.test.ts pins --mux tmux in the message",
};

/** the folders whose files are importers for rule 5 (every file given counts; these are read) */
export const SOURCE_ROOTS = ["lib", "scripts", "bench", "tests", "mam.ts"];

/**
 * ranks inside lib/ops (rule 7), the first prefix that matches; a file no prefix matches is a
 * shared helper (OPS_HELPER_RANK). The reactions call use cases as the table does: above them.
 */
export const OPS_RANKS: [prefix: string, rank: number][] = [
  ["lib/ops/op.ts", 0],
  ["lib/ops/input.ts", 0],
  ["lib/ops/deps.ts", 0],
  ["lib/ops/job/", 2],
  ["lib/ops/session/", 2],
  ["lib/ops/react/", 2.5],
  ["lib/ops/table/", 3],
  ["lib/ops/index.ts", 4],
  ["lib/ops/wiring.ts", 4],
];
export const OPS_HELPER_RANK = 1;

/** imports inside lib/ops that break rule 7 today (from → to): known debts, each to go */
export const OPS_DEBTS: [from: string, to: string][] = [
  ["lib/ops/job/queue.ts", "lib/ops/session/observe.ts"],
  ["lib/ops/session/create.ts", "lib/ops/job/rules.ts"],
  ["lib/ops/session/create.ts", "lib/ops/job/submit.ts"],
  ["lib/ops/registry-rebuild.ts", "lib/ops/session/observe.ts"],
  ["lib/ops/reconcile.ts", "lib/ops/session/observe.ts"],
  ["lib/ops/team.ts", "lib/ops/session/status.ts"],
  ["lib/ops/team.ts", "lib/ops/session/status-run.ts"],
];

/** folders whose files never read process.env (rule 8): the daemon's reactions */
export const NO_ENV = ["lib/ops/react/"];

/** the job-file functions (rule 9) and who may call them */
export const JOB_FILES = {
  modules: ["lib/jobs/store.ts", "lib/jobs/record-file.ts", "lib/jobs/journal-file.ts"],
  functions: ["readRecord", "requireRecord", "readJournal", "listJobIds", "writeRecord", "registerJob", "importJob", "mutateRecord", "setJobUsages", "appendEvent", "journalAndUpdate", "settleLastSeq", "ownOrigin", "nextIdentity", "withJobsLock", "withDispatchLock"],
  allowed: ["lib/jobs/", "lib/ops/wiring.ts"],
};

/** rule 10: folders whose functions stay short, and how short */
export const SHORT_FUNCTIONS = { folders: ["lib/daemon/"], maxLines: 100 };

// ---- report ------------------------------------------------------------------------------

const CODE_EXT = /\.(c|m)?tsx?$/;

export interface Report {
  layers: string[];
  cycles: string[];
  printing: string[];
  exitCodes: string[];
  deadExports: string[];
  flagWords: string[];
  opsLayers: string[];
  environment: string[];
  jobFiles: string[];
  longFunctions: string[];
  /** softer: exported, read only in the exporting file */
  widerThanUsed: string[];
}

/** the report as text, one section per rule that has findings */
export function formatReport(r: Report): string {
  const parts: string[] = [];
  for (const [k, v] of Object.entries(r) as [keyof Report, string[]][]) if (v.length) parts.push(`${k} (${v.length}):\n  ${v.join("\n  ")}`);
  return parts.join("\n");
}

/** the sources of a tree on disk: every .ts file under SOURCE_ROOTS (no node_modules, no dot folders) */
export function readSources(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const e of readdirSync(join(root, rel), { withFileTypes: true })) {
      if (e.name === "node_modules" || e.name.startsWith(".")) continue;
      const p = `${rel}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (CODE_EXT.test(e.name) && !e.name.endsWith(".d.ts")) out[p] = readFileSync(join(root, p), "utf8");
    }
  };
  for (const r of SOURCE_ROOTS) {
    if (!existsSync(join(root, r))) continue; // a tree without bench/, say
    if (r.endsWith(".ts")) out[r] = readFileSync(join(root, r), "utf8");
    else walk(r);
  }
  return out;
}

// ---- the rules read in one file ---------------------------------------------------------

const isUseCase = (path: string) => USE_CASE_FOLDERS.some((f) => path.startsWith(`${f}/`));
const isProduct = (path: string) => path === "mam.ts" || path.startsWith("lib/");
const exitName = (code: number) => Object.entries(EXIT).find(([, v]) => v === code)?.[0];

/** rule 3 in one file of USE_CASE_FOLDERS */
function printingIn(f: ModuleFacts): string[] {
  if (!isUseCase(f.path)) return [];
  const out: string[] = [];
  const at = (n: ts.Node) => `${f.path}:${lineOf(f.sf, n)}`;
  const fix = `return the text (or a warning as data) to the caller`;
  for (const id of f.ids) {
    const b = f.bindings.get(id.text);
    if (b && b.target === PRINTERS.module && PRINTERS.names.includes(b.name)) {
      const called = ts.isCallExpression(id.parent) && id.parent.expression === id;
      out.push(`${at(id)}: ${called ? "calls" : "passes on"} ${b.name}() of ${PRINTERS.module}: ${fix}`);
    }
    if (id.text === "console" && !f.bindings.has("console")) {
      const m = ts.isPropertyAccessExpression(id.parent) && id.parent.expression === id ? `console.${id.parent.name.text}` : "console";
      out.push(`${at(id)}: ${m}: a use case does not print`);
    }
  }
  for (const m of f.members) {
    const d = dotted(m);
    if (d !== undefined && PRINT_MEMBERS.includes(d)) out.push(`${at(m)}: ${d}: a use case does not print`);
    const ns = ts.isIdentifier(m.expression) ? f.bindings.get(m.expression.text) : undefined;
    if (ns && ns.name === "*" && ns.target === PRINTERS.module && PRINTERS.names.includes(m.name.text)) out.push(`${at(m)}: uses ${m.name.text}() of ${PRINTERS.module}: ${fix}`);
  }
  return out;
}

/** rule 4 in one file of lib/ or mam.ts */
function exitCodesIn(f: ModuleFacts): string[] {
  if (!isProduct(f.path) || f.path === ERRORS.module) return [];
  const isErrorClass = (e: ts.Expression): boolean => {
    if (ts.isIdentifier(e)) {
      const b = f.bindings.get(e.text);
      return !!b && b.target === ERRORS.module && b.name === ERRORS.errorClass;
    }
    if (ts.isPropertyAccessExpression(e) && ts.isIdentifier(e.expression)) {
      const b = f.bindings.get(e.expression.text);
      return !!b && b.name === "*" && b.target === ERRORS.module && e.name.text === ERRORS.errorClass;
    }
    return false;
  };
  const literal = (a: ts.Expression | undefined): number | undefined => {
    if (a && ts.isNumericLiteral(a)) return Number(a.text);
    if (a && ts.isPrefixUnaryExpression(a) && a.operator === ts.SyntaxKind.MinusToken && ts.isNumericLiteral(a.operand)) return -Number(a.operand.text);
    return undefined;
  };
  const out: string[] = [];
  const report = (at: ts.Node, what: string, code: number) => {
    const name = exitName(code);
    out.push(`${f.path}:${lineOf(f.sf, at)}: ${what}(…, ${code}): write ${name ? `EXIT.${name}` : "an EXIT constant"} (or a helper of ${ERRORS.module})`);
  };
  for (const n of f.news) {
    const code = literal(n.arguments?.[1]);
    if (code !== undefined && isErrorClass(n.expression)) report(n, `new ${ERRORS.errorClass}`, code);
  }
  for (const s of f.supers) {
    const code = literal(s.arguments[1]);
    let c: ts.Node | undefined = s.parent;
    while (c && !ts.isClassLike(c)) c = c.parent;
    const base = c && ts.isClassLike(c) ? c.heritageClauses?.find((h) => h.token === ts.SyntaxKind.ExtendsKeyword)?.types[0]?.expression : undefined;
    if (code !== undefined && base && isErrorClass(base)) report(s, `super of a ${ERRORS.errorClass}`, code);
  }
  return out;
}

/** rule 6 in one file of lib/ below the front doors */
function flagWordsIn(f: ModuleFacts): string[] {
  if (!f.path.startsWith("lib/") || FRONT_DOORS.some((d) => f.path.startsWith(d)) || Object.hasOwn(FLAG_WORDS_ALLOWED, f.path)) return [];
  const isMaker = (e: ts.Expression): boolean => {
    if (ts.isIdentifier(e)) {
      const b = f.bindings.get(e.text);
      return !!b && (MESSAGES[b.target] ?? []).includes(b.name);
    }
    if (ts.isPropertyAccessExpression(e) && ts.isIdentifier(e.expression)) {
      const b = f.bindings.get(e.expression.text);
      return !!b && b.name === "*" && (MESSAGES[b.target] ?? []).includes(e.name.text);
    }
    return false;
  };
  const out: string[] = [];
  const flagIn = (text: string): string | undefined => {
    // a whole command line the user runs (`see: mam status --help`, `git log --oneline`) may name its flags
    for (const m of text.matchAll(/(^|[^\w-])(--[a-z][a-z0-9-]*)/g)) if (!COMMAND_LINE.test(text.slice(0, m.index))) return m[2];
    return undefined;
  };
  const texts = (n: ts.Node, acc: ts.Node[]): ts.Node[] => {
    if (ts.isStringLiteral(n) || ts.isNoSubstitutionTemplateLiteral(n) || ts.isTemplateHead(n) || ts.isTemplateMiddle(n) || ts.isTemplateTail(n)) acc.push(n);
    n.forEachChild((c) => void texts(c, acc));
    return acc;
  };
  const visit = (n: ts.Node) => {
    if ((ts.isCallExpression(n) || ts.isNewExpression(n)) && isMaker(n.expression)) {
      for (const a of n.arguments ?? [])
        for (const t of texts(a, [])) {
          const flag = flagIn((t as ts.LiteralLikeNode).text);
          if (flag) out.push(`${f.path}:${lineOf(f.sf, t)}: a message names the flag ${flag}: name the input field as field("${flag.slice(2).replace(/-/g, "_")}") (lib/sys/fields.ts), each front door spells it`);
        }
    }
    n.forEachChild(visit);
  };
  visit(f.sf);
  return out;
}

// ---- the rules over the whole tree ---------------------------------------------------------

function folderOf(path: string): string {
  if (!path.startsWith("lib/")) return path;
  const parts = path.split("/");
  return parts.length > 2 ? `${parts[0]}/${parts[1]}` : "lib";
}

function layerFindings(files: ModuleFacts[]): string[] {
  const out = new Set<string>();
  for (const f of files) {
    if (!isProduct(f.path)) continue;
    const from = folderOf(f.path);
    for (const e of f.edges) {
      const at = `${f.path}:${e.line}`;
      const banned = PRODUCT_MAY_NOT_IMPORT.find((p) => e.target.startsWith(p));
      if (banned) {
        out.add(`${at}: imports ${e.target}: nothing in lib/ or mam.ts imports ${banned}`);
        continue;
      }
      if (!isProduct(e.target)) continue;
      const to = folderOf(e.target);
      if (to === from) continue;
      const rf = RANKS[from];
      const rt = RANKS[to];
      if (rf === undefined || rt === undefined) {
        out.add(`${at}: imports ${e.target}: ${rf === undefined ? from : to} has no rank in RANKS (tests/helpers/layers.ts)`);
        continue;
      }
      if (rt < rf) continue;
      const how = rt === rf ? `sideways (${from} and ${to} share rank ${rf} and never import each other)` : `upward (${from} is rank ${rf}, ${to} is rank ${rt})`;
      out.add(`${at}: imports ${e.target}: ${how}`);
    }
  }
  return [...out];
}

function cycleFindings(files: ModuleFacts[]): string[] {
  const inScope = (p: string) => CYCLE_SCOPE.some((s) => (s.endsWith("/") ? p.startsWith(s) : p === s));
  const nodes = files.filter((f) => inScope(f.path)).map((f) => f.path).sort();
  const set = new Set(nodes);
  const next = new Map<string, Map<string, number>>(); // target → first line of the edge
  for (const f of files) {
    if (!set.has(f.path)) continue;
    const m = new Map<string, number>();
    for (const e of f.edges) if (set.has(e.target) && !m.has(e.target)) m.set(e.target, e.line);
    next.set(f.path, m);
  }
  // Tarjan's strongly connected components
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const on = new Set<string>();
  const knots: string[][] = [];
  const strong = (v: string): void => {
    index.set(v, counter);
    low.set(v, counter++);
    stack.push(v);
    on.add(v);
    for (const w of [...next.get(v)!.keys()].sort()) {
      if (!index.has(w)) {
        strong(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (on.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const c: string[] = [];
      let w: string;
      do {
        w = stack.pop()!;
        on.delete(w);
        c.push(w);
      } while (w !== v);
      if (c.length > 1 || next.get(v)!.has(v)) knots.push(c.sort());
    }
  };
  for (const v of nodes) if (!index.has(v)) strong(v);
  // one shortest cycle through the knot's first file, with the line of each import
  return knots.map((knot) => {
    const inKnot = new Set(knot);
    const start = knot[0]!;
    const prev = new Map<string, string>();
    const queue = [start];
    let end: string | undefined;
    while (queue.length && end === undefined) {
      const v = queue.shift()!;
      for (const w of [...next.get(v)!.keys()].sort()) {
        if (!inKnot.has(w)) continue;
        if (w === start) {
          end = v;
          break;
        }
        if (!prev.has(w)) {
          prev.set(w, v);
          queue.push(w);
        }
      }
    }
    const path = [end!];
    while (path[0] !== start) path.unshift(prev.get(path[0]!)!);
    const hops = path.map((p, i) => `${p}:${next.get(p)!.get(path[i + 1] ?? start)}`);
    const rest = knot.filter((p) => !path.includes(p));
    return `cycle: ${hops.join(" → ")} → ${start}${rest.length ? `; the same knot holds ${rest.join(", ")}` : ""}`;
  });
}

function exportFindings(files: ModuleFacts[]): { dead: string[]; wider: string[] } {
  const byPath = new Map(files.map((f) => [f.path, f]));
  const used = new Map<string, Set<string>>(); // path → names read by other files
  const mark = (path: string, name: string, seen = new Set<string>()): void => {
    const key = `${path}\u0000${name}`;
    if (seen.has(key)) return;
    seen.add(key);
    const f = byPath.get(path);
    if (!f) return;
    if (name === "*") {
      for (const n of f.exports.keys()) mark(path, n, seen);
      for (const s of f.starFrom) mark(s, "*", seen);
      return;
    }
    if (f.exports.has(name)) {
      if (!used.has(path)) used.set(path, new Set());
      used.get(path)!.add(name);
    } else for (const s of f.starFrom) mark(s, name, seen);
  };
  for (const f of files) for (const [target, names] of f.uses) if (target !== f.path) for (const n of names === "*" ? ["*"] : names) mark(target, n);
  const dead: string[] = [];
  const wider: string[] = [];
  for (const f of files) {
    if (!f.path.startsWith("lib/")) continue;
    for (const [name, e] of f.exports) {
      if (used.get(f.path)?.has(name)) continue;
      const at = `${f.path}:${e.line}: ${name}`;
      if (e.local !== undefined && (f.refs.get(e.local) ?? 0) > 0) wider.push(`${at}: exported, read only in its own file`);
      else dead.push(`${at}: exported, read nowhere${e.from ? ` (re-export of ${e.from})` : ""}`);
    }
  }
  return { dead, wider };
}

/** rule 7 in one file of lib/ops */
function opsRankOf(path: string): { rank: number; unit: string } {
  const hit = OPS_RANKS.find(([p]) => path.startsWith(p));
  return hit ? { rank: hit[1], unit: hit[0] } : { rank: OPS_HELPER_RANK, unit: "helpers" };
}

function opsLayersIn(f: ModuleFacts): string[] {
  if (!f.path.startsWith("lib/ops/")) return [];
  const from = opsRankOf(f.path);
  const out = new Set<string>();
  for (const e of f.edges) {
    if (!e.target.startsWith("lib/ops/") || OPS_DEBTS.some(([a, b]) => a === f.path && b === e.target)) continue;
    const to = opsRankOf(e.target);
    // files of one unit, and the single files of one rank (op.ts, input.ts, deps.ts), import each other
    if (to.unit === from.unit || to.rank < from.rank || (to.rank === from.rank && !(to.unit.endsWith("/") && from.unit.endsWith("/")))) continue;
    const how = to.rank === from.rank ? `sideways (${from.unit} and ${to.unit} never import each other's use cases; shared pieces go below)` : `upward (${from.unit} is rank ${from.rank} in lib/ops, ${to.unit} is rank ${to.rank})`;
    out.add(`${f.path}:${e.line}: imports ${e.target}: ${how}`);
  }
  return [...out];
}

/** rule 8 in one file */
function environmentIn(f: ModuleFacts): string[] {
  if (!NO_ENV.some((d) => f.path.startsWith(d))) return [];
  return f.members.filter((m) => dotted(m) === "process.env").map((m) => `${f.path}:${lineOf(f.sf, m)}: process.env: a reaction reads deps.env`);
}

/** a function's name for a finding: its own, its variable's or property's, else "a function" */
function functionName(n: ts.FunctionLikeDeclaration): string {
  if (n.name && (ts.isIdentifier(n.name) || ts.isStringLiteral(n.name) || ts.isPrivateIdentifier(n.name))) return n.name.text;
  if (ts.isConstructorDeclaration(n)) return "constructor";
  const p = n.parent;
  if ((ts.isVariableDeclaration(p) || ts.isPropertyAssignment(p) || ts.isPropertyDeclaration(p)) && ts.isIdentifier(p.name)) return p.name.text;
  return "a function";
}

/** rule 10 in one file */
function longFunctionsIn(f: ModuleFacts): string[] {
  if (!SHORT_FUNCTIONS.folders.some((d) => f.path.startsWith(d))) return [];
  const out: string[] = [];
  const visit = (n: ts.Node) => {
    if (ts.isFunctionLike(n) && (n as ts.FunctionLikeDeclaration).body) {
      const fn = n as ts.FunctionLikeDeclaration;
      const first = lineOf(f.sf, fn);
      const last = f.sf.getLineAndCharacterOfPosition(fn.getEnd()).line + 1;
      const lines = last - first + 1;
      if (lines > SHORT_FUNCTIONS.maxLines) out.push(`${f.path}:${first}: ${functionName(fn)} is ${lines} lines long (at most ${SHORT_FUNCTIONS.maxLines}): split it into steps`);
    }
    ts.forEachChild(n, visit);
  };
  visit(f.sf);
  return out;
}

/** rule 9 in one file */
function jobFilesIn(f: ModuleFacts): string[] {
  if (!isProduct(f.path) || JOB_FILES.allowed.some((a) => f.path.startsWith(a))) return [];
  const out: string[] = [];
  for (const [target, names] of f.uses) {
    if (!JOB_FILES.modules.includes(target)) continue;
    const called = names === "*" ? ["*"] : JOB_FILES.functions.filter((n) => names.has(n));
    if (called.length === 0) continue;
    const line = f.edges.find((e) => e.target === target)?.line ?? 0;
    out.push(`${f.path}:${line}: uses ${called.join(", ")} of ${target}: go through the JobStore (deps.jobs)`);
  }
  return out;
}

const byPlace = (a: string, b: string) => {
  const [pa, la] = a.split(":");
  const [pb, lb] = b.split(":");
  return pa === pb ? Number(la) - Number(lb) || a.localeCompare(b) : pa!.localeCompare(pb!);
};

/** check the tree: repository-relative path → source text (only code files are read) */
export function checkLayers(sources: Record<string, string> | Map<string, string>): Report {
  const entries = (sources instanceof Map ? [...sources] : Object.entries(sources)).filter(([p]) => CODE_EXT.test(p) && !p.endsWith(".d.ts"));
  const known = new Set(entries.map(([p]) => p));
  const files = entries.map(([p, t]) => factsOf(p, t, known));
  const { dead, wider } = exportFindings(files);
  return {
    layers: layerFindings(files).sort(byPlace),
    cycles: cycleFindings(files).sort(),
    printing: files.flatMap(printingIn).sort(byPlace),
    exitCodes: files.flatMap(exitCodesIn).sort(byPlace),
    deadExports: dead.sort(byPlace),
    flagWords: files.flatMap(flagWordsIn).sort(byPlace),
    opsLayers: files.flatMap(opsLayersIn).sort(byPlace),
    environment: files.flatMap(environmentIn).sort(byPlace),
    jobFiles: files.flatMap(jobFilesIn).sort(byPlace),
    longFunctions: files.flatMap(longFunctionsIn).sort(byPlace),
    widerThanUsed: wider.sort(byPlace),
  };
}

if (import.meta.main) {
  const report = checkLayers(readSources(join(import.meta.dir, "..", "..")));
  console.log(formatReport(report) || "no findings");
}

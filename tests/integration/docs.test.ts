// The documentation works as written: every runnable example in README.md, CONTRIBUTING.md and
// docs/*.md runs
// (contract: CONTRIBUTING.md, "Examples that run") and shows what it says it shows; every relative
// link and anchor resolves.
//
// One sandbox per file: temp HOME, a private tmux socket folder (TMUX_TMPDIR), the compiled
// binary first on PATH as `mam`, no broker (MQTT_PORT=9 refuses), the subscriber daemon allowed
// (as for a user). A file's console steps share one bash shell in its workspace, in order; each
// `sh runnable` block runs in its own `bash -e`. Afterwards the workspace's daemon is stopped and
// every tmux server of the sandbox killed.
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import { type Block, headingAnchors, headings, linkPath, localLinks, outputMatches, runnableBlocks } from "../helpers/docs.ts";
import { MAM_BIN, ROOT, run } from "../helpers/mam.ts";
import { makeSandbox } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN } from "../helpers/tmux.ts";

const DOCS = [join(ROOT, "README.md"), join(ROOT, "CONTRIBUTING.md"), ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => join(ROOT, "docs", f))];
const rel = (p: string) => relative(ROOT, p);

interface StepRun {
  block: Block;
  cmd: string;
  shown: string[];
  /** undefined: not run (an earlier step failed) */
  code?: number;
  out: string;
}

/** run the runnable blocks of one file in a fresh sandbox; returns each step's result */
async function runFile(file: string, blocks: Block[]): Promise<StepRun[]> {
  const sb = makeSandbox("mam-docs-");
  const dir = join(sb.root, "steps");
  const env = sb.with({ MAM_NO_SUBSCRIBER_DAEMON: undefined, TMUX_TMPDIR: sb.root, MAM_DOCS_TEST: "1" });
  symlinkSync(MAM_BIN!, join(sb.bin, "mam"));
  const steps: StepRun[] = [];
  const script: string[] = [`mkdir -p '${dir}'`, `cd '${sb.ws}'`];
  blocks.forEach((b, k) => {
    if (b.kind === "sh") {
      const f = join(sb.root, `block-${k}.sh`);
      writeFileSync(f, `${b.script}\n`);
      script.push(`bash -eo pipefail '${f}' > '${dir}/${steps.length}.out' 2>&1; echo $? > '${dir}/${steps.length}.rc'`);
      steps.push({ block: b, cmd: b.script, shown: [], out: "" });
    } else {
      for (const s of b.steps) {
        const f = join(sb.root, `step-${steps.length}.sh`);
        writeFileSync(f, `${s.cmd}\n`);
        // in this shell (variables and cd carry on); stop at the first failure
        script.push(`{ eval "$(cat '${f}')"; } > '${dir}/${steps.length}.out' 2>&1 < /dev/null; rc=$?; echo $rc > '${dir}/${steps.length}.rc'; [ $rc = 0 ] || exit 0`);
        steps.push({ block: b, cmd: s.cmd, shown: s.shown, out: "" });
      }
    }
  });
  try {
    const r = await run(["bash", "-c", script.join("\n")], { env, cwd: sb.ws, timeoutMs: 170_000 });
    if (r.code !== 0) throw new Error(`${rel(file)}: the example runner failed (${r.code}): ${r.stderr}`);
    steps.forEach((s, i) => {
      const rc = join(dir, `${i}.rc`);
      if (!existsSync(rc)) return;
      s.code = Number(readFileSync(rc, "utf8").trim());
      s.out = readFileSync(join(dir, `${i}.out`), "utf8");
    });
    return steps;
  } finally {
    await run([MAM_BIN!, "daemon", "stop", "--workspace", sb.ws], { env }).catch(() => undefined);
    const sockets = join(sb.root, `tmux-${process.getuid?.() ?? 0}`);
    if (existsSync(sockets)) for (const s of readdirSync(sockets)) await killTmuxServer(s, env, sb.root);
    await sb.cleanup();
  }
}

describe.skipIf(MAM_BIN === undefined || !TMUX_BIN)("runnable examples", () => {
  let total = 0;
  for (const file of DOCS) {
    const blocks = runnableBlocks(readFileSync(file, "utf8"));
    total += blocks.length;
    if (blocks.length === 0) continue;
    test(`${rel(file)}: ${blocks.length} runnable block(s) run and show what they say`, async () => {
      const steps = await runFile(file, blocks);
      for (const s of steps) {
        const where = `${rel(file)}:${s.block.line}: ${s.block.kind === "sh" ? "the sh runnable block" : `$ ${s.cmd}`}`;
        expect(s.code, `${where}: not run (an earlier step failed)`).toBeDefined();
        expect(s.code, `${where}: exit ${s.code}\n${s.out}`).toBe(0);
        if (s.shown.length) expect(outputMatches(s.shown, s.out), `${where}\n--- the docs show:\n${s.shown.join("\n")}\n--- it printed:\n${s.out}`).toBe(true);
      }
    }, 180_000);
  }
  test("the README and the topic docs have runnable examples", () => {
    expect(total).toBeGreaterThanOrEqual(5);
    expect(runnableBlocks(readFileSync(join(ROOT, "README.md"), "utf8")).length).toBeGreaterThan(0);
  });
});

test("every relative link and anchor in README.md, CONTRIBUTING.md and docs/*.md resolves", () => {
  const bad: string[] = [];
  let n = 0;
  for (const file of DOCS) {
    for (const l of localLinks(readFileSync(file, "utf8"))) {
      n++;
      const target = linkPath(file, l.target);
      const where = `${rel(file)}:${l.line}: ${l.target}${l.anchor !== undefined ? `#${l.anchor}` : ""}`;
      if (!existsSync(target)) {
        bad.push(`${where}: no such file`);
        continue;
      }
      if (l.anchor !== undefined && target.endsWith(".md") && !headingAnchors(readFileSync(target, "utf8")).has(l.anchor)) bad.push(`${where}: no such heading`);
    }
  }
  expect(bad).toEqual([]);
  expect(n).toBeGreaterThan(10);
});

test("the docs cite no SPEC section: the specification is not in the repository, a user cannot open it (issue 39 item 14)", () => {
  const cited = DOCS.flatMap((file) =>
    readFileSync(file, "utf8")
      .split("\n")
      .flatMap((line, i) => (/\bSPEC\b|§\s*\d/.test(line) ? [`${rel(file)}:${i + 1}: ${line.trim().slice(0, 120)}`] : [])),
  );
  expect(cited).toEqual([]);
});

test("README.md is at most 10 KB and has no section twice", () => {
  const md = readFileSync(join(ROOT, "README.md"), "utf8");
  expect(Buffer.byteLength(md)).toBeLessThanOrEqual(10 * 1024);
  const heads = headings(md).map((h) => h.toLowerCase());
  expect(heads.filter((h, i) => heads.indexOf(h) !== i)).toEqual([]);
});

test("CHANGELOG.md: a released version has its dated section and compare link, newest first", () => {
  const md = readFileSync(join(ROOT, "CHANGELOG.md"), "utf8");
  const { version } = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")) as { version: string };
  const sections = [...md.matchAll(/^## \[([^\]]+)\](?: - (\d{4}-\d{2}-\d{2}))?$/gm)].map((m) => ({ name: m[1]!, date: m[2] }));
  expect(sections[0]?.name).toBe("Unreleased");
  const released = sections.slice(1);
  expect(released.every((s) => s.date !== undefined)).toBe(true);
  // newest first: versions and dates both descend
  const key = (v: string) => v.split(".").map((n) => n.padStart(4, "0")).join(".");
  expect(released.map((s) => key(s.name))).toEqual(released.map((s) => key(s.name)).sort().reverse());
  expect(released.map((s) => s.date)).toEqual(released.map((s) => s.date).sort().reverse());
  // a version without a pre-release tag is one this file dates
  if (!version.includes("-")) expect(released[0]?.name).toBe(version);
  for (const s of sections) expect(md).toContain(`\n[${s.name}]: https://github.com/multi-agent-mux/mam/`);
  expect(md).toContain(`[Unreleased]: https://github.com/multi-agent-mux/mam/compare/v${released[0]?.name}...HEAD`);
});

// mam skills install (SPEC §8): six SKILL.md files, idempotent, user edits kept unless --force.
import { afterAll, expect, test } from "bun:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox } from "../helpers/sandbox.ts";

const sb = makeSandbox("mam-sk-");
afterAll(() => sb.cleanup());
const NAMES = ["create", "stop", "resume", "status", "monitor", "delegate-job"].map((n) => `multi-agent-mux-${n}`);

test("writes the six skills with front matter, under .claude too with --claude", async () => {
  const r = await runMam(["skills", "install", "--workspace", sb.ws, "--claude"], { env: sb.env });
  expect(r.code).toBe(0);
  for (const root of [".agents/skills", ".claude/skills"]) {
    for (const n of NAMES) {
      const text = readFileSync(join(sb.ws, root, n, "SKILL.md"), "utf8");
      expect(text).toMatch(new RegExp(`^---\\nname: ${n}\\ndescription: .{20,}\\n---\\n`));
      expect(text).toContain("mam ");
    }
  }
  expect(r.stdout.split("\n").filter((l) => l.endsWith(": written"))).toHaveLength(12);
});

test("idempotent, keeps a user's edit, --force overwrites it", async () => {
  const file = join(sb.ws, ".agents/skills/multi-agent-mux-stop/SKILL.md");
  let r = await runMam(["skills", "install", "--workspace", sb.ws], { env: sb.env });
  expect(r.stdout.split("\n").filter((l) => l.endsWith(": unchanged"))).toHaveLength(6);
  writeFileSync(file, "my own notes\n");
  r = await runMam(["skills", "install", "--workspace", sb.ws], { env: sb.env });
  expect(r.code).toBe(0);
  expect(readFileSync(file, "utf8")).toBe("my own notes\n");
  expect(r.stderr).toContain("multi-agent-mux-stop/SKILL.md: kept (edited by you; --force overwrites)");
  r = await runMam(["skills", "install", "--workspace", sb.ws, "--force", "--json"], { env: sb.env });
  const j = JSON.parse(r.stdout);
  expect(j.installed[join(sb.ws, ".agents/skills")]["multi-agent-mux-stop"]).toBe("updated");
  expect(readFileSync(file, "utf8")).toContain("name: multi-agent-mux-stop");
});

test("a missing workspace is a usage error and writes nothing", async () => {
  const r = await runMam(["skills", "install", "--workspace", join(sb.root, "nope")], { env: sb.env });
  expect(r.code).toBe(2);
  expect(existsSync(join(sb.root, "nope"))).toBe(false);
});

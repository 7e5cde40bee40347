// Port of seeds/test_issue50_pane_lock.py part A (A1, A2 × 4) against the compiled binary, a fake
// herdr server "t50-srv" and fake agents: create keeps its own pane when the monitor registered
// it first, and still refuses any other live session of its name.
import { afterEach, beforeEach, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeHerdrServer, installFakeAgents, startFakeHerdr } from "../helpers/herdr.ts";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

const SERVER = "t50-srv"; // the server _create names; a monitor row carries the server it found the pane on

let sb: Sandbox;
let herdr: FakeHerdrServer;
beforeEach(async () => {
  sb = makeSandbox("mam-t50-");
  installFakeAgents(sb.bin);
  herdr = await startFakeHerdr(sb, { session: SERVER });
});
afterEach(async () => {
  await herdr.stop();
  await sb.cleanup();
});

function seedRow(name: string, epoch: number, opts: { note?: string | null; job?: string; server?: string } = {}) {
  const server = opts.server ?? SERVER;
  const row: Record<string, unknown> = {
    name,
    status: "running",
    role: "creator",
    herdr_session_created_at: "2026-10-11T00:00:00Z",
    herdr_session_epoch: epoch,
    herdr_session: server,
    herdr_server: server,
    pane: { index: 0, pid: 9999, cmd: "claude", cmd_full: "claude", cwd: sb.ws },
    last_visible_status: "running",
  };
  const note = opts.note === undefined ? "auto-registered by monitor" : opts.note;
  if (note) row.last_visible_note = note;
  if (opts.job) row.delegate_job_id = opts.job;
  const yamlPath = join(sb.ws, ".mam", "agent-sessions.yaml");
  mkdirSync(join(sb.ws, ".mam"), { recursive: true });
  writeFileSync(yamlPath, `herdr_sessions:\n- ${JSON.stringify(row)}\n`);
  return yamlPath;
}

function create(name: string, role = "creator") {
  return runMam(["create", "--workspace", sb.ws, "--agent", "claude", "--role", role, "--session", name, "--herdr-session", SERVER, "--no-onboard"], {
    env: sb.env,
    cwd: sb.ws,
    timeoutMs: 300_000,
  });
}

function rows(yamlPath: string): Record<string, unknown>[] {
  return (Bun.YAML.parse(readFileSync(yamlPath, "utf8")) as { herdr_sessions: Record<string, unknown>[] }).herdr_sessions;
}

test("A1 create replaces the monitor's registration of its own pane", async () => {
  const name = "t50-adopted-creator-claude";
  const yamlPath = seedRow(name, Math.floor(Date.now() / 1000) + 60); // registered after this create began
  const res = await create(name, "Creator"); // the monitor guessed "creator" off the name
  expect(res.code, res.stdout + res.stderr).toBe(0);
  expect(res.stdout).toContain(`NOTE: the monitor registered ${name} while it was being created`);
  const mine = rows(yamlPath).filter((r) => r.name === name);
  expect(mine).toHaveLength(1);
  expect(mine[0]!.status).toBe("running");
  expect(mine[0]!.role).toBe("Creator");
  // create's own row: only create records how the claude id was chosen
  expect(mine[0]!.last_visible_note).not.toBe("auto-registered by monitor");
  expect(["assigned", "pending-discovery"]).toContain(mine[0]!.session_id_source as string);
});

describe("A2 another live session of that name is still refused", () => {
  for (const kind of ["real", "old-adoption", "adoption-with-job", "other-server"] as const) {
    test(kind, async () => {
      const name = "t50-taken-creator-claude";
      const now = Math.floor(Date.now() / 1000);
      const yamlPath =
        kind === "real"
          ? seedRow(name, now, { note: null })
          : kind === "old-adoption"
            ? seedRow(name, now - 3600) // a pane from before this create
            : kind === "other-server" // review 1e25cf2f F2: names are unique per server
              ? seedRow(name, now + 60, { server: "different-server" })
              : seedRow(name, now, { job: "deadbeef" });
      const before = readFileSync(yamlPath, "utf8");
      const res = await create(name);
      expect(res.code, res.stdout + res.stderr).toBe(4);
      expect(res.stdout).toContain(`ERROR: ${name} already running in agent-sessions.yaml`);
      const mine = rows(yamlPath).filter((r) => r.name === name);
      expect(mine).toHaveLength(1);
      expect(mine[0]!.status).toBe("running");
      // nothing changed, nothing spawned
      expect(readFileSync(yamlPath, "utf8")).toBe(before);
      const panes = (await herdr.call("pane.list", {})) as { panes: unknown[] };
      expect(panes.panes).toHaveLength(0);
    });
  }
});

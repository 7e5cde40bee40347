// mam reconcile [--once] [--dry-run] [--json] through the compiled binary (SPEC §6.1): every drift
// case on the fake herdr and on a real tmux (a private -L server per test), nothing changed for a
// server that failed, one listing call per server, and the pass at the end of mam create.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeHerdrServer, installFakeAgents, startFakeHerdr } from "../helpers/herdr.ts";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { killTmuxServer, TMUX_BIN, tmuxServerName, writeScript } from "../helpers/tmux.ts";

type Row = Record<string, unknown> & { name: string; status: string; pane?: Record<string, unknown> };
type Section = "herdr_sessions" | "tmux_sessions";

const yamlOf = (ws: string) => join(ws, ".mam", "agent-sessions.yaml");

function readRows(ws: string, section: Section = "herdr_sessions"): Row[] {
  if (!existsSync(yamlOf(ws))) return [];
  const doc = (Bun.YAML.parse(readFileSync(yamlOf(ws), "utf8")) ?? {}) as Record<string, Row[] | null>;
  return doc[section] ?? [];
}

const rowOf = (ws: string, name: string, section: Section = "herdr_sessions") => readRows(ws, section).find((r) => r.name === name);

/** write the registry as flow rows (valid YAML, as the original's JSON rows were) */
function writeRows(ws: string, rows: { herdr_sessions?: Row[]; tmux_sessions?: Row[] }): void {
  mkdirSync(join(ws, ".mam"), { recursive: true });
  const sec = (k: Section) => (rows[k]?.length ? `${k}:\n${rows[k]!.map((r) => `- ${JSON.stringify(r)}`).join("\n")}\n` : `${k}: []\n`);
  writeFileSync(yamlOf(ws), sec("herdr_sessions") + sec("tmux_sessions"));
}

function herdrRow(name: string, server: string, pane: string, ws: string, over: Record<string, unknown> = {}): Row {
  return {
    name,
    status: "running",
    role: "worker",
    agent: "claude",
    herdr_session: server,
    herdr_server: server,
    herdr_session_created_at: "2026-10-11T00:00:00Z",
    herdr_session_epoch: 1791590400,
    pane: { id: pane, pid: 999999, cmd: "claude", cwd: ws },
    session_id_source: "assigned",
    claude_session_id_own: `00000000-0000-4000-8000-${String(Math.floor(Math.random() * 1e12)).padStart(12, "0")}`,
    last_visible_status: "running",
    ...over,
  };
}

function fingerprint(ws: string): { text: string; mtime: number; files: string[] } {
  return { text: readFileSync(yamlOf(ws), "utf8"), mtime: statSync(yamlOf(ws)).mtimeMs, files: readdirSync(join(ws, ".mam")).sort() };
}

interface Report {
  timestamp: string;
  yaml_path: string;
  servers: Record<string, { reachable: boolean; panes: number; state: string; detail?: string }>;
  drifts: { name: string; kind: string; detail: string }[];
  actions: { type: string; name?: string; row?: Row; field?: string; value?: string; source?: string }[];
}

function parseReport(stdout: string): Report {
  return JSON.parse(stdout) as Report;
}

const claudeStore = (home: string, cwd: string) => join(home, ".claude", "projects", cwd.replace(/[^A-Za-z0-9]/g, "-"));

// ---------------------------------------------------------------------------------------------
// the fake herdr: one server for the block, a workspace folder per test
// ---------------------------------------------------------------------------------------------

describe("reconcile on the fake herdr", () => {
  const SERVER = "rc";
  let sb: Sandbox;
  let herdr: FakeHerdrServer;
  let n = 0;
  let ws: string;
  let env: Record<string, string>;

  beforeAll(async () => {
    sb = makeSandbox("mam-rc-");
    installFakeAgents(sb.bin);
    herdr = await startFakeHerdr(sb, { session: SERVER });
  });
  afterAll(async () => {
    await herdr.stop();
    await sb.cleanup();
  });
  beforeEach(() => {
    ws = join(sb.root, `ws${++n}`);
    mkdirSync(ws, { recursive: true });
    env = sb.with({ MAM_AGENT_SETTLE_S: "0.3" });
  });

  const mam = (args: string[], e: Record<string, string> = env, cwd = ws) => runMam([...args, "--workspace", cwd], { env: e, cwd });
  const reconcile = async (...extra: string[]) => {
    const r = await mam(["reconcile", "--json", ...extra]);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    return parseReport(r.stdout);
  };
  async function create(name: string, role = "worker", dir = ws): Promise<string> {
    const r = await mam(["create", "--agent", "claude", "--role", role, "--session", name, "--herdr-session", SERVER, "--no-onboard", "--json"], env, dir);
    if (r.code !== 0) throw new Error(`create ${name}: ${r.stdout}${r.stderr}`);
    return JSON.parse(r.stdout).pane;
  }
  async function panes(): Promise<{ pane_id: string; cwd?: string; label?: string }[]> {
    return ((await herdr.call("pane.list", {})) as { panes: { pane_id: string; cwd?: string; label?: string }[] }).panes;
  }

  test("a running row whose pane is gone → terminated (auto-detected); a live one is kept", async () => {
    const live = await create("rc-live-claude");
    const dying = await create("rc-dying-claude");
    // a row whose pane was never there any more (another run of the server)
    const rows = readRows(ws);
    rows.push(herdrRow("rc-ghost-claude", SERVER, "w99:p9", ws));
    writeRows(ws, { herdr_sessions: rows });
    // the agent of one pane dies (a crash): its pane goes
    await herdr.exitPane(dying);
    expect(await waitFor(async () => !(await panes()).some((p) => p.pane_id === dying), 10_000)).toBe(true);

    const r = await reconcile();
    const kinds = Object.fromEntries(r.drifts.map((d) => [d.name, d.kind]));
    expect(kinds["rc-dying-claude"]).toBe("pane-gone");
    expect(kinds["rc-ghost-claude"]).toBe("pane-gone");
    expect(kinds["rc-live-claude"]).toBeUndefined();
    expect(r.actions.filter((a) => a.type === "terminate").map((a) => a.name).sort()).toEqual(["rc-dying-claude", "rc-ghost-claude"]);
    for (const name of ["rc-dying-claude", "rc-ghost-claude"]) {
      const row = rowOf(ws, name)!;
      expect(row).toMatchObject({ status: "terminated", last_visible_status: "terminated", last_visible_note: "terminated (auto-detected)" });
      expect(row.terminated_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    }
    expect(rowOf(ws, "rc-live-claude")).toMatchObject({ status: "running", pane: { id: live } });
    // a second pass has nothing left to do: terminated rows whose pane is gone stay as they are
    const before = fingerprint(ws);
    const again = await reconcile();
    expect(again.actions).toEqual([]);
    expect(fingerprint(ws)).toEqual(before);
  });

  test("a server that is definitely not running: its running rows are terminated", async () => {
    writeRows(ws, { herdr_sessions: [herdrRow("down-a", "rc-down", "w1:p1", ws), herdrRow("down-b", "rc-down", "w1:p2", ws)] });
    const r = await reconcile();
    expect(r.servers["rc-down"]).toMatchObject({ state: "not-running", panes: 0 });
    expect(r.drifts.map((d) => [d.name, d.kind]).sort()).toEqual([
      ["down-a", "server-down"],
      ["down-b", "server-down"],
    ]);
    for (const name of ["down-a", "down-b"]) {
      expect(rowOf(ws, name)).toMatchObject({ status: "terminated", last_visible_status: "terminated", last_visible_note: "terminated (auto-detected)" });
    }
  });

  describe("a server that fails in any other way changes nothing (server-unreachable)", () => {
    const stubs: [string, string][] = [
      ["garbage on stdout, exit 0", `echo 'this is not json {'`],
      ["garbage on stderr, exit 1", `echo 'Segmentation fault' >&2; exit 1`],
      ["a protocol mismatch", `echo '{"id":"cli","error":{"code":"protocol_mismatch","message":"server speaks protocol 18, client 19"}}' >&2; exit 1`],
      ["permission denied", `echo '{"id":"cli","error":{"code":"permission_denied","message":"connect: permission denied"}}' >&2; exit 1`],
    ];
    for (const [what, body] of stubs) {
      test(what, async () => {
        const stub = writeScript(sb.root, `stub-herdr-${n}`, body);
        writeRows(ws, {
          herdr_sessions: [
            herdrRow("unr-worker", SERVER, "w77:p1", ws),
            herdrRow("unr-stopped", SERVER, "w77:p2", ws, { status: "stopped" }),
          ],
        });
        const before = fingerprint(ws);
        const r = await mam(["reconcile", "--json"], { ...env, MAM_HERDR_BIN: stub });
        expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
        const rep = parseReport(r.stdout);
        expect(rep.servers[SERVER]).toMatchObject({ reachable: false, state: "unreachable", panes: 0 });
        expect(rep.drifts).toEqual([{ name: "unr-worker", kind: "server-unreachable", detail: expect.any(String) }]);
        expect(rep.actions).toEqual([]);
        expect(fingerprint(ws)).toEqual(before);
        // the human form says so too
        const h = await mam(["reconcile"], { ...env, MAM_HERDR_BIN: stub });
        expect(h.code).toBe(0);
        expect(h.stdout).toContain(`server ${SERVER}: unreachable`);
        expect(fingerprint(ws)).toEqual(before);
      });
    }
  });

  test("stopped, terminated and archived rows are left alone, their panes gone or their server down", async () => {
    const rows = [
      herdrRow("keep-stopped", SERVER, "w88:p1", ws, { status: "stopped", stopped_at: "2026-10-11T00:00:00Z", resumable: true }),
      herdrRow("keep-terminated", SERVER, "w88:p2", ws, { status: "terminated", termination_mode: "hard" }),
      herdrRow("keep-archived", SERVER, "w88:p3", ws, { status: "archived", archived_at: "2026-10-11T00:00:00Z" }),
      herdrRow("keep-stopped-down", "rc-gone-srv", "w1:p1", ws, { status: "stopped" }),
    ];
    writeRows(ws, { herdr_sessions: rows });
    const before = fingerprint(ws);
    const r = await reconcile();
    expect(r.actions).toEqual([]);
    expect(r.drifts).toEqual([]);
    expect(fingerprint(ws)).toEqual(before);
  });

  test("a live agent pane of this folder without a row is auto-registered; other folders, plain shells and rows' panes are not", async () => {
    const t0 = Math.floor(Date.now() / 1000);
    const mine = await create("proj-creator-claude", "lead");
    const other = await create("proj-helper-claude");
    // another workspace's agent on the same server, and a plain shell in this folder
    const elsewhere = join(sb.root, `elsewhere${n}`);
    mkdirSync(elsewhere);
    await create("far-away-claude", "worker", elsewhere);
    const sh = await herdr.herdr(["workspace", "create", "--cwd", ws, "--no-focus"]);
    expect(sh.code).toBe(0);
    // the registry is lost (say, a fresh clone): only the helper is known
    writeRows(ws, { herdr_sessions: readRows(ws).filter((r) => r.name === "proj-helper-claude") });

    const r = await reconcile();
    const t1 = Math.floor(Date.now() / 1000);
    expect(r.actions.filter((a) => a.type === "register").map((a) => a.row!.name)).toEqual(["proj-creator-claude"]);
    expect(r.drifts).toContainEqual({ name: "proj-creator-claude", kind: "unregistered-pane", detail: expect.stringContaining(mine) });
    const row = rowOf(ws, "proj-creator-claude")!;
    expect(row).toMatchObject({
      status: "running",
      role: "lead", // the one it was created with, from its pane's label (an older mam's label: guessed from -creator-)
      agent: "claude",
      herdr_session: SERVER,
      herdr_server: SERVER,
      last_visible_status: "running",
      last_visible_note: "auto-registered by monitor",
      pane: { id: mine, cwd: ws },
    });
    expect(row.herdr_session_epoch as number).toBeGreaterThanOrEqual(t0);
    expect(row.herdr_session_epoch as number).toBeLessThanOrEqual(t1);
    expect(row.herdr_session_created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(row).not.toHaveProperty("session_id_source");
    expect(readRows(ws).map((x) => x.name).sort()).toEqual(["proj-creator-claude", "proj-helper-claude"]);
    expect(rowOf(ws, "proj-helper-claude")!.pane!.id).toBe(other);

    // a pane an older mam labelled (the name only) and a name without -creator-: role unknown
    expect((await herdr.herdr(["pane", "rename", other, "mam:proj-helper-claude"])).code).toBe(0);
    writeRows(ws, { herdr_sessions: readRows(ws).filter((x) => x.name === "proj-creator-claude") });
    await reconcile();
    expect(rowOf(ws, "proj-helper-claude")).toMatchObject({ role: "unknown", last_visible_note: "auto-registered by monitor" });
  });

  test("the conversation id is filled from the claude store of this workspace only", async () => {
    const pane = await create("conv-worker-claude");
    const own = rowOf(ws, "conv-worker-claude")!.claude_session_id_own as string;
    expect(existsSync(join(claudeStore(sb.home, ws), `${own}.jsonl`))).toBe(true);
    // the row lost its id (a monitor-registered row never had one)
    writeRows(ws, { herdr_sessions: readRows(ws).map(({ claude_session_id_own: _x, session_id_source: _y, ...r }) => r as Row) });
    const r = await reconcile();
    expect(r.actions).toContainEqual(expect.objectContaining({ type: "fill-session-id", name: "conv-worker-claude", field: "claude_session_id_own", value: own, source: "store" }));
    expect(rowOf(ws, "conv-worker-claude")).toMatchObject({ status: "running", claude_session_id_own: own, pane: { id: pane } });

    // a workspace whose own conversation is gone: another workspace's conversation is never taken
    const ws2 = join(sb.root, `conv-other${n}`);
    mkdirSync(ws2);
    await create("conv-other-claude", "worker", ws2);
    rmSync(claudeStore(sb.home, ws2), { recursive: true, force: true });
    writeRows(ws2, { herdr_sessions: readRows(ws2).map(({ claude_session_id_own: _x, ...r }) => r as Row) });
    const r2 = await mam(["reconcile", "--json"], env, ws2);
    expect(r2.code).toBe(0);
    const rep2 = parseReport(r2.stdout);
    expect(rep2.drifts).toContainEqual({ name: "conv-other-claude", kind: "missing-session-id", detail: "not found yet" });
    expect(rep2.actions.filter((a) => a.type === "fill-session-id")).toEqual([]);
    expect(rowOf(ws2, "conv-other-claude")!.claude_session_id_own).toBeUndefined();
  });

  test("--dry-run computes the same actions and writes nothing (bytes, mtime, no new file)", async () => {
    await create("dry-creator-claude");
    const rows = readRows(ws).filter(() => false); // lose the row: a pane to register
    rows.push(herdrRow("dry-ghost", SERVER, "w66:p6", ws)); // and a gone pane to terminate
    writeRows(ws, { herdr_sessions: rows });
    const before = fingerprint(ws);
    await Bun.sleep(20); // an mtime change would show
    const dry = await reconcile("--dry-run");
    expect(dry.actions.map((a) => a.type).sort()).toEqual(["register", "terminate"]);
    expect((dry as unknown as { dry_run: boolean }).dry_run).toBe(true);
    expect(fingerprint(ws)).toEqual(before);
    const human = await mam(["reconcile", "--dry-run"]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain("would do: dry-ghost: running → terminated");
    expect(human.stdout).toContain("would do: dry-creator-claude: registered");
    expect(fingerprint(ws)).toEqual(before);
    // then for real: the same actions
    const real = await reconcile();
    expect(real.actions.map((a) => a.type).sort()).toEqual(["register", "terminate"]);
    expect(fingerprint(ws).text).not.toBe(before.text);

    // a workspace without .mam: a dry run creates nothing at all
    const bare = join(sb.root, `bare${n}`);
    mkdirSync(bare);
    const b = await mam(["reconcile", "--dry-run", "--json"], env, bare);
    expect(b.code).toBe(0);
    expect(readdirSync(bare)).toEqual([]);
  });

  test("--json prints one document {timestamp, yaml_path, servers, drifts, actions}", async () => {
    const pane = await create("json-worker-claude");
    const rows = readRows(ws);
    rows.push(herdrRow("json-ghost", SERVER, "w55:p5", ws));
    writeRows(ws, { herdr_sessions: rows });
    const r = await mam(["reconcile", "--once", "--json"]);
    expect(r.code).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout.endsWith("}\n")).toBe(true);
    const doc = JSON.parse(r.stdout) as Record<string, unknown>;
    for (const k of ["timestamp", "yaml_path", "servers", "drifts", "actions"]) expect(doc).toHaveProperty(k);
    expect(doc.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(doc.yaml_path).toBe(yamlOf(ws));
    const servers = doc.servers as Report["servers"];
    expect(Object.keys(servers)).toEqual([SERVER]);
    expect(servers[SERVER]!.reachable).toBe(true);
    // the panes this workspace sees: its own; those of the earlier tests' workspaces on the same
    // server are another workspace's, left out (docs/security.md#a-hostile-workspace)
    const all = await panes();
    expect(servers[SERVER]!.panes).toBe(all.filter((p) => p.cwd === ws).length);
    expect(doc.drifts).toEqual([{ name: "json-ghost", kind: "pane-gone", detail: "pane w55:p5 is gone" }]);
    expect(doc.actions).toEqual([expect.objectContaining({ type: "terminate", name: "json-ghost", server: SERVER })]);
    expect(rowOf(ws, "json-worker-claude")!.pane!.id).toBe(pane);
    // no registry at all: an empty pass, still one document
    const bare = join(sb.root, `bare-json${n}`);
    mkdirSync(bare);
    const e = await mam(["reconcile", "--json"], env, bare);
    expect(e.code).toBe(0);
    expect(JSON.parse(e.stdout)).toMatchObject({ yaml_path: yamlOf(bare), servers: {}, drifts: [], actions: [] });
  });

  test("one listing call per server, however many rows (a logging wrapper around herdr)", async () => {
    const second = await startFakeHerdr(sb, { session: "rc2" });
    try {
      const log = join(sb.root, `herdr-calls-${n}.log`);
      const wrapper = writeScript(sb.root, `herdr-logging-${n}`, `printf '%s\\n' "$*" >>'${log}'\nexec '${herdr.bin}' "$@"`);
      await create("one-a-claude");
      await create("one-b-claude");
      const rows = readRows(ws);
      for (let i = 0; i < 12; i++) rows.push(herdrRow(`one-ghost-${i}`, SERVER, `w44:p${i}`, ws));
      for (let i = 0; i < 7; i++) rows.push(herdrRow(`two-ghost-${i}`, "rc2", `w1:p${i + 10}`, ws));
      for (let i = 0; i < 5; i++) rows.push(herdrRow(`down-ghost-${i}`, "rc-nowhere", `w1:p${i}`, ws));
      writeRows(ws, { herdr_sessions: rows });
      // the caller runs in a pane of rc2: still one call for it
      const r = await mam(["reconcile", "--json"], { ...env, MAM_HERDR_BIN: wrapper, HERDR_SESSION: "rc2" });
      expect(r.code).toBe(0);
      const rep = parseReport(r.stdout);
      expect(Object.keys(rep.servers).sort()).toEqual([SERVER, "rc-nowhere", "rc2"]);
      const calls = readFileSync(log, "utf8").trim().split("\n");
      const perServer = (s: string) => calls.filter((c) => c.includes(`--session ${s} `) || c.endsWith(`--session ${s}`)).length;
      expect({ total: calls.length, rc: perServer(SERVER), rc2: perServer("rc2"), down: perServer("rc-nowhere") }).toEqual({ total: 3, rc: 1, rc2: 1, down: 1 });
      expect(rep.actions.filter((a) => a.type === "terminate")).toHaveLength(24);
    } finally {
      await second.stop();
    }
  });

  test("the server of the caller's pane is listed even when no row names it", async () => {
    await create("amb-creator-claude");
    writeRows(ws, { herdr_sessions: [] }); // lost registry; the caller runs in a pane of that server
    const r = await mam(["reconcile", "--json"], { ...env, HERDR_SESSION: SERVER });
    expect(r.code).toBe(0);
    expect(parseReport(r.stdout).actions.map((a) => a.row?.name)).toEqual(["amb-creator-claude"]);
    expect(rowOf(ws, "amb-creator-claude")).toMatchObject({ last_visible_note: "auto-registered by monitor", herdr_server: SERVER });
  });

  test("mam create runs one pass at its end", async () => {
    writeRows(ws, { herdr_sessions: [herdrRow("end-ghost", SERVER, "w33:p3", ws), herdrRow("end-down", "rc-not-there", "w1:p1", ws)] });
    await create("end-worker-claude");
    expect(rowOf(ws, "end-ghost")).toMatchObject({ status: "terminated", last_visible_note: "terminated (auto-detected)" });
    expect(rowOf(ws, "end-down")).toMatchObject({ status: "terminated", last_visible_note: "terminated (auto-detected)" });
    expect(rowOf(ws, "end-worker-claude")).toMatchObject({ status: "running", last_visible_note: "created by mam create" });
  });
});

// ---------------------------------------------------------------------------------------------
// real tmux: a private -L server per test
// ---------------------------------------------------------------------------------------------

if (!TMUX_BIN) console.error("SKIPPING the tmux part of tests/integration/reconcile.test.ts: tmux is not installed (apt install tmux)");

describe.skipIf(!TMUX_BIN)("reconcile on real tmux", () => {
  let sb: Sandbox;
  let server: string;
  let env: Record<string, string>;
  beforeEach(() => {
    sb = makeSandbox("mam-rct-");
    installFakeAgents(sb.bin);
    server = tmuxServerName("mamrc");
    env = sb.with({ TMUX_TMPDIR: sb.root, MAM_AGENT_SETTLE_S: "0.3" });
  });
  afterEach(async () => {
    await killTmuxServer(server, env, sb.root);
    await sb.cleanup();
  });

  const mam = (args: string[], e = env) => runMam([...args, "--workspace", sb.ws], { env: e, cwd: sb.ws });
  const tmux = (...args: string[]) => Bun.spawnSync([TMUX_BIN!, "-L", server, ...args], { env });
  async function create(name: string): Promise<string> {
    const r = await mam(["create", "--agent", "claude", "--role", "worker", "--session", name, "--mux", "tmux", "--tmux-server", server, "--no-onboard", "--json"]);
    if (r.code !== 0) throw new Error(`create ${name}: ${r.stdout}${r.stderr}`);
    return JSON.parse(r.stdout).pane;
  }
  const reconcile = async (e = env) => {
    const r = await mam(["reconcile", "--json"], e);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    return parseReport(r.stdout);
  };
  const tmuxRow = (name: string, status: string, over: Record<string, unknown> = {}): Row => ({
    name,
    status,
    role: "worker",
    agent: "claude",
    tmux_server: server,
    tmux_session_created_at: "2026-10-11T00:00:00Z",
    tmux_session_epoch: 1791590400,
    pane: { id: "%999", cwd: sb.ws },
    ...over,
  });

  test("a session that ended → terminated; then the server stops → the rest are terminated too", async () => {
    const a = await create("tx-a");
    await create("tx-b");
    await create("tx-c");
    expect(tmux("kill-session", "-t", "tx-b").exitCode).toBe(0);
    const r1 = await reconcile();
    expect(r1.drifts.map((d) => [d.name, d.kind])).toEqual([["tx-b", "pane-gone"]]);
    expect(rowOf(sb.ws, "tx-b", "tmux_sessions")).toMatchObject({ status: "terminated", last_visible_status: "terminated", last_visible_note: "terminated (auto-detected)" });
    expect(rowOf(sb.ws, "tx-a", "tmux_sessions")).toMatchObject({ status: "running", pane: { id: a } });
    // the whole server goes: "no server running" is definite
    await killTmuxServer(server, env);
    const r2 = await reconcile();
    expect(r2.servers[`tmux:${server}`]).toMatchObject({ state: "not-running" });
    expect(r2.drifts.map((d) => [d.name, d.kind]).sort()).toEqual([
      ["tx-a", "server-down"],
      ["tx-c", "server-down"],
    ]);
    for (const name of ["tx-a", "tx-b", "tx-c"]) expect(rowOf(sb.ws, name, "tmux_sessions")!.status).toBe("terminated");
  });

  test("a tmux that fails otherwise changes nothing (server-unreachable)", async () => {
    await create("tx-unr");
    const before = fingerprint(sb.ws);
    const stubDir = join(sb.root, "stub");
    mkdirSync(stubDir);
    writeScript(stubDir, "tmux", `echo 'protocol version mismatch (client 8, server 7)' >&2; exit 1`);
    const r = await reconcile({ ...env, PATH: `${stubDir}:${env.PATH}` });
    expect(r.servers[`tmux:${server}`]).toMatchObject({ reachable: false, state: "unreachable" });
    expect(r.drifts).toEqual([{ name: "tx-unr", kind: "server-unreachable", detail: expect.stringContaining("protocol version mismatch") }]);
    expect(r.actions).toEqual([]);
    expect(fingerprint(sb.ws)).toEqual(before);
  });

  test("a server caught exiting ('server exited unexpectedly') is asked again: definite answers only", async () => {
    writeRows(sb.ws, { tmux_sessions: [tmuxRow("tx-exiting", "running")] });
    const stubDir = join(sb.root, "stub");
    mkdirSync(stubDir);
    const calls = join(sb.root, "stub-calls");
    // first call: the server is in the middle of exiting; then it is gone
    writeScript(stubDir, "tmux", `n=$(cat '${calls}' 2>/dev/null || echo 0); echo $((n + 1)) >'${calls}'\nif [ "$n" = 0 ]; then echo 'server exited unexpectedly' >&2; else echo "no server running on /tmp/tmux-0/x" >&2; fi\nexit 1`);
    const stubEnv = { ...env, PATH: `${stubDir}:${env.PATH}` };
    const r = await reconcile(stubEnv);
    expect(readFileSync(calls, "utf8").trim()).toBe("2");
    expect(r.drifts).toEqual([{ name: "tx-exiting", kind: "server-down", detail: expect.any(String) }]);
    expect(rowOf(sb.ws, "tx-exiting", "tmux_sessions")!.status).toBe("terminated");
    // a server that keeps dying under us is not a definite "not running": nothing changes
    writeRows(sb.ws, { tmux_sessions: [tmuxRow("tx-exiting", "running")] });
    writeScript(stubDir, "tmux", `echo 'server exited unexpectedly' >&2; exit 1`);
    const again = await reconcile(stubEnv);
    expect(again.drifts.map((d) => d.kind)).toEqual(["server-unreachable"]);
    expect(rowOf(sb.ws, "tx-exiting", "tmux_sessions")!.status).toBe("running");
  });

  test("stopped, terminated and archived rows are left alone", async () => {
    await create("tx-live");
    const rows = readRows(sb.ws, "tmux_sessions");
    rows.push(tmuxRow("tx-stopped", "stopped"), tmuxRow("tx-terminated", "terminated"), tmuxRow("tx-archived", "archived", { pane: { id: "%998" } }));
    writeRows(sb.ws, { tmux_sessions: rows });
    const before = fingerprint(sb.ws);
    const r = await reconcile();
    expect(r.actions).toEqual([]);
    expect(fingerprint(sb.ws)).toEqual(before);
    await killTmuxServer(server, env);
    const r2 = await reconcile();
    expect(r2.actions.map((a) => [a.type, a.name])).toEqual([["terminate", "tx-live"]]);
    for (const name of ["tx-stopped", "tx-terminated", "tx-archived"]) expect(rowOf(sb.ws, name, "tmux_sessions")).toEqual(rows.find((x) => x.name === name)!);
  });

  test("a labelled session of this folder without a row is auto-registered; --dry-run writes nothing", async () => {
    const t0 = Math.floor(Date.now() / 1000);
    const pane = await create("tx-creator-claude");
    // the registry lost the row; a stopped row still names the server
    writeRows(sb.ws, { tmux_sessions: [tmuxRow("tx-old", "stopped")] });
    const before = fingerprint(sb.ws);
    const dry = await mam(["reconcile", "--dry-run", "--json"]);
    expect(dry.code).toBe(0);
    expect(parseReport(dry.stdout).actions.map((a) => a.type)).toEqual(["register"]);
    expect(fingerprint(sb.ws)).toEqual(before);
    await reconcile();
    const row = rowOf(sb.ws, "tx-creator-claude", "tmux_sessions")!;
    // the kind and role the session was started with (@mam_agent, @mam_role: review R33), not a guess from the name
    expect(row).toMatchObject({ status: "running", role: "worker", agent: "claude", tmux_server: server, last_visible_note: "auto-registered by monitor", pane: { id: pane, cwd: sb.ws } });
    expect(row.tmux_session_epoch as number).toBeGreaterThanOrEqual(t0);
    expect(row).not.toHaveProperty("session_id_source");
    // a plain tmux session of this folder without a mam label is not an agent of ours
    expect(tmux("new-session", "-d", "-s", "plain", "-c", sb.ws).exitCode).toBe(0);
    const r = await reconcile();
    expect(r.actions.filter((a) => a.type === "register")).toEqual([]);
  });

  test("the conversation id is filled from the claude store", async () => {
    const pane = await create("tx-conv");
    const own = rowOf(sb.ws, "tx-conv", "tmux_sessions")!.claude_session_id_own as string;
    expect(own).toMatch(/^[0-9a-f-]{36}$/);
    writeRows(sb.ws, { tmux_sessions: readRows(sb.ws, "tmux_sessions").map(({ claude_session_id_own: _x, ...r }) => r as Row) });
    const r = await reconcile();
    expect(r.actions).toEqual([expect.objectContaining({ type: "fill-session-id", name: "tx-conv", value: own, source: "store" })]);
    expect(rowOf(sb.ws, "tx-conv", "tmux_sessions")).toMatchObject({ status: "running", claude_session_id_own: own, pane: { id: pane } });
  });

  test("the tmux server of the caller's pane is listed even when no row names it", async () => {
    const pane = await create("tx-amb-claude");
    writeRows(sb.ws, { tmux_sessions: [] });
    const none = await reconcile();
    expect(none.servers).toEqual({});
    // run from a pane of that server: TMUX names its socket
    const uid = process.getuid?.() ?? 0;
    const r = await reconcile({ ...env, TMUX: `${join(sb.root, `tmux-${uid}`, server)},4242,0`, TMUX_PANE: pane });
    expect(Object.keys(r.servers)).toEqual([`tmux:${server}`]);
    expect(r.actions.map((a) => a.row?.name)).toEqual(["tx-amb-claude"]);
    expect(rowOf(sb.ws, "tx-amb-claude", "tmux_sessions")).toMatchObject({ tmux_server: server, last_visible_note: "auto-registered by monitor" });
  });
});

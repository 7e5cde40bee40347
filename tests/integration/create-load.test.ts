// Concurrent creates under load (issue 23 item 20): ten `mam create`s at once on three herdr
// servers, with a CPU hog beside them, several times. Between herdr's `agent start` and the row
// create writes, the pane runs an agent with no mam label yet; another create's end-of-create
// reconcile (or the daemon) that lists the server then registers it under a name of its own
// (`claude-w1-p2`, role unknown), which the same-name adoption rule of the seed cannot see. The
// rule: a create takes over the daemon's registration of its own pane, whatever its name.
import { afterEach, beforeEach, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { type FakeHerdrServer, installFakeAgents, startFakeHerdr } from "../helpers/herdr.ts";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";

const SERVERS = ["ld-a", "ld-b", "ld-c"];
const ROUNDS = 3;

let sb: Sandbox;
let servers: FakeHerdrServer[] = [];
let hogs: ReturnType<typeof Bun.spawn>[] = [];

beforeEach(async () => {
  sb = makeSandbox("mam-load-");
  installFakeAgents(sb.bin);
  servers = await Promise.all(SERVERS.map((session) => startFakeHerdr(sb, { session, settleMs: 150 })));
});
afterEach(async () => {
  for (const h of hogs) h.kill("SIGKILL");
  await Promise.all(hogs.map((h) => h.exited));
  hogs = [];
  await Promise.all(servers.map((s) => s.stop()));
  await sb.cleanup();
});

/** a busy loop per core, for as long as the test runs */
function startHogs(n = 2): void {
  for (let i = 0; i < n; i++) hogs.push(Bun.spawn([process.execPath, "-e", "for(;;){}"], { stdio: ["ignore", "ignore", "ignore"] }));
}

type Row = { name: string; status: string; role: string; last_visible_note?: string; pane?: { id?: string }; herdr_server?: string };

function rows(): Row[] {
  const doc = Bun.YAML.parse(readFileSync(join(sb.ws, ".mam", "agent-sessions.yaml"), "utf8")) as { herdr_sessions?: Row[] };
  return doc.herdr_sessions ?? [];
}

test(`10 concurrent creates on 3 herdr servers beside a CPU hog, ${ROUNDS} rounds: exactly the 10 rows created, no ghost row`, async () => {
  startHogs();
  for (let round = 0; round < ROUNDS; round++) {
    const names = Array.from({ length: 10 }, (_, i) => `r${round}-w${i}`);
    const results = await Promise.all(
      names.map((name, i) =>
        runMam(["create", "--agent", "claude", "--role", "worker", "--session", name, "--herdr-session", SERVERS[i % SERVERS.length]!, "--no-onboard"], {
          env: sb.env,
          cwd: sb.ws,
          timeoutMs: 240_000,
        }),
      ),
    );
    for (const [i, r] of results.entries()) expect(r.code, `${names[i]}: ${r.stderr}`).toBe(0);
    // the daemon's passes after the creates, twice
    for (let k = 0; k < 2; k++) expect((await runMam(["reconcile"], { env: sb.env, cwd: sb.ws })).code).toBe(0);
    const all = rows();
    const ghosts = all.filter((r) => !r.name.startsWith("r"));
    const show = (r: Row) => `${r.name} ${r.status} ${r.herdr_server}/${r.pane?.id} ${r.last_visible_note ?? ""} ${(r as Record<string, unknown>).herdr_session_epoch}`;
    expect(ghosts.map(show), `round ${round}:\n${all.map(show).join("\n")}`).toEqual([]);
    const mine = all.filter((r) => names.includes(r.name));
    expect(mine.map((r) => [r.name, r.status, r.role]).sort()).toEqual(names.map((n) => [n, "running", "worker"]).sort());
    expect(mine.some((r) => r.last_visible_note === "auto-registered by monitor")).toBe(false);
    // one row per pane and server
    const panes = mine.map((r) => `${r.herdr_server}/${r.pane?.id}`);
    expect(new Set(panes).size).toBe(10);
  }
}, 600_000);

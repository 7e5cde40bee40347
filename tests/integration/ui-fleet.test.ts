// The dashboard's fleet (docs/ui.md, issue 24 item 6): `mam ui` on a machine in a team serves every
// host's agents from the broker's retained announcements, kept live on its event stream, with
// hosts that went away as offline (never dropped); a job says the host it runs on and how far its
// delivery got; a broker that stops answering is said, and the page still answers. Three hosts on
// one machine (tests/helpers/team.ts) share one real Mosquitto; without a team, mam ui shows no
// fleet and connects to no broker.
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { UiRoster, UiJob, UiState } from "../../lib/ui/model.ts";
import { freePort, mosquittoPath, startMosquitto, type TestBroker } from "../helpers/brokers.ts";
import { type RunningUi, startUiProcess, type UiFeed, uiFeed } from "../helpers/browser.ts";
import { runMam } from "../helpers/mam.ts";
import { makeSandbox, type Sandbox, waitFor } from "../helpers/sandbox.ts";
import { fleetWorld, type Host } from "../helpers/team.ts";
import { TMUX_BIN } from "../helpers/tmux.ts";

const skip = !mosquittoPath() || !TMUX_BIN;

/** the fleet as the page has it now: the newest `fleet` event, else the first full state's */
const fleetOf = (f: UiFeed): UiRoster | null | undefined => f.last<UiRoster>("fleet") ?? f.last<UiState>("full")?.fleet;
async function untilFleet(f: UiFeed, pred: (x: UiRoster) => boolean, timeoutMs = 20_000): Promise<UiRoster> {
  let got: UiRoster | null | undefined;
  const ok = await waitFor(() => {
    got = fleetOf(f);
    return !!got && pred(got);
  }, timeoutMs);
  if (!ok) throw new Error(`the fleet never became as expected; the last:\n${JSON.stringify(got, null, 1)}`);
  return got!;
}
const ws = (f: UiRoster, host: string) => f.workspaces.find((w) => w.host === host);

/** a sandbox whose broker address is a listener that takes connections, counts them and never answers */
async function withMuteBroker(prefix: string, fn: (w: { sb: Sandbox; port: number; env: Record<string, string>; connections: () => number; open(): Promise<{ ui: RunningUi; feed: UiFeed }> }) => Promise<void>): Promise<void> {
  const sb = makeSandbox(prefix);
  let connections = 0;
  const port = await freePort();
  const listener = Bun.listen({ hostname: "127.0.0.1", port, socket: { open: () => void connections++, data() {} } });
  const env = sb.with({ MQTT_PORT: String(port), MAM_HOST: "solo", MAM_UI_LIVE_MS: "300" });
  let ui: RunningUi | undefined;
  let feed: UiFeed | undefined;
  try {
    await fn({
      sb,
      port,
      env,
      connections: () => connections,
      async open() {
        ui = await startUiProcess(sb, env);
        feed = await uiFeed(ui);
        return { ui, feed };
      },
    });
  } finally {
    feed?.close();
    await ui?.stop("SIGKILL");
    listener.stop(true);
    await sb.cleanup();
  }
}
const stateOf = async (ui: RunningUi): Promise<UiState> => (await fetch(`http://127.0.0.1:${ui.port}/api/state?token=${ui.token}`)).json() as Promise<UiState>;

describe.skipIf(skip)("mam ui shows the team's fleet (three hosts, one Mosquitto)", () => {
  let sb: Sandbox;
  let broker: TestBroker;
  let A: Host;
  let B: Host;
  let C: Host;
  /** a second workspace of hostA (same HOME, same team) */
  let A2: Host;
  let ui: RunningUi;
  let feed: UiFeed;
  const state = () => stateOf(ui);

  beforeAll(async () => {
    sb = makeSandbox("mam-uifleet-");
    broker = await startMosquitto(join(sb.root, "broker"));
    ({ A, A2, B, C } = await fleetWorld(sb.root, broker.env));
    ui = await startUiProcess(sb, { ...A.env, MAM_UI_LIVE_MS: "300" }, [], A.ws);
    feed = await uiFeed(ui);
  }, 90_000);

  afterAll(async () => {
    feed?.close();
    await ui?.stop("SIGKILL");
    for (const h of [A, A2, B, C]) await h?.stop();
    await broker?.stop();
    await sb?.cleanup();
  }, 60_000);

  test("every host's agents, this workspace as it is now; the fleet is the same document as mam status --fleet --json", async () => {
    const f = await untilFleet(feed, (x) => x.reachable === true && ["hostB", "hostC"].every((h) => ws(x, h)?.online));
    expect(f).toMatchObject({ team: "lab", host: "hostA", broker: `127.0.0.1:${broker.port}`, topic_prefix: "mam/team/lab", warnings: [] });
    expect(f.read_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    // this host's two workspaces (sorted by path: hostA/ws before hostA2/ws), then the others
    expect(f.workspaces.map((w) => `${w.host}:${w.here}:${w.online}`)).toEqual(["hostA:true:true", "hostA:false:true", "hostB:false:true", "hostC:false:true"]);
    expect(f.workspaces[0]!).toMatchObject({ workspace: A.ws, agents: [{ address: "lead@hostA", agent: "demo", role: "lead" }] });
    expect(f.workspaces[1]!).toMatchObject({ workspace: A2.ws, agents: [{ address: "side@hostA", agent: "demo", role: "worker" }] });
    expect(ws(f, "hostB")).toMatchObject({ workspace: B.ws, agents: [{ name: "w", address: "w@hostB", agent: "demo", role: "worker" }] });
    expect(ws(f, "hostC")!.agents[0]).toMatchObject({ address: "r@hostC", agent: "demo", role: "reviewer" });
    expect(["idle", "working"]).toContain(ws(f, "hostB")!.agents[0]!.live);
    // the CLI's document, host for host and agent for agent
    const cli = JSON.parse(await A.ok(["status", "--fleet", "--json"]));
    const shape = (d: { workspaces: { host: string; workspace: string; online: boolean; agents: { address: string; agent: string | null; role: string | null }[] }[] }) =>
      d.workspaces.map((w) => ({ host: w.host, workspace: w.workspace, online: w.online, agents: w.agents.map((a) => `${a.address} ${a.agent} ${a.role}`) }));
    expect(shape(f)).toEqual(shape(cli));
    // /api/state carries it too; this workspace's own sessions stay in `sessions` (screens, actions)
    const s = await state();
    expect(s.fleet?.team).toBe("lab");
    expect(s.sessions.map((x) => x.name)).toEqual(["lead"]);
    // no secret reaches the page
    expect(JSON.stringify(s)).not.toContain(JSON.parse(await Bun.file(join(A.home, ".local", "state", "mam", "team.json")).text()).secret);
    // the feed sends the fleet when it changed, not at every read: after another read, no two
    // fleet events in a row say the same (but for the read's time and this workspace's, which is it)
    const before = (await state()).fleet!.read_at;
    expect(await waitFor(async () => (await state()).fleet!.read_at !== before, 10_000, 200)).toBe(true);
    const drawn = (x: UiRoster) => JSON.stringify({ ...x, read_at: null, workspaces: x.workspaces.map((w) => (w.here ? { ...w, last_seen: "" } : w)) });
    const sent = feed.events.filter((e) => e.event === "fleet").map((e) => drawn(e.data as UiRoster));
    expect(sent.filter((x, i) => i > 0 && x === sent[i - 1])).toEqual([]);
    // another host's agent has no screen here
    const scr = await fetch(`http://127.0.0.1:${ui.port}/api/screen?name=w@hostB&token=${ui.token}`);
    expect(scr.status).toBe(404);
  }, 60_000);

  test("a job to w@hostB says its host and each delivery stage as it lands; a job here says this host", async () => {
    const id = (await A.ok(["job", "submit", "--to", "w@hostB", "--from", "lead", "--prompt", "wave hello"])).trim();
    const job = () => feed.events.flatMap((e) => (e.event === "jobs" ? (e.data as { changed: UiJob[] }).changed : e.event === "full" ? (e.data as UiState).jobs : [])).filter((j) => j.id === id);
    expect(await waitFor(() => job().some((j) => j.delivery?.stage === "delivered" && j.status === "completed"), 30_000), JSON.stringify(job().at(-1))).toBe(true);
    // the stages arrived one after another (the record may come first, without one), never backwards
    const stagesSeen = [...new Set(job().map((j) => j.delivery?.stage).filter((x) => x !== undefined))];
    const order = ["offered", "received", "delivered"];
    expect(stagesSeen.every((x) => order.includes(x))).toBe(true);
    expect(stagesSeen.map((x) => order.indexOf(x))).toEqual(stagesSeen.map((x) => order.indexOf(x)).sort());
    expect(stagesSeen.at(-1)).toBe("delivered");
    expect(stagesSeen.length).toBeGreaterThanOrEqual(2);
    const last = job().at(-1)!;
    expect(last).toMatchObject({ to: "w@hostB", host: "hostB", delivery: { stage: "delivered", host: "hostB", purpose: "job" } });
    expect(last.delivery!.delivery).toMatch(new RegExp(`^${id}\\.[0-9a-f]{8}$`));
    // the fleet's row for w@hostB names the job once hostB announces it
    await untilFleet(feed, (f) => ws(f, "hostB")?.agents[0]?.job?.id === id);

    const here = (await A.ok(["job", "submit", "--to", "lead", "--prompt", "a note for the lead"])).trim();
    expect(await waitFor(async () => (await state()).jobs.some((j) => j.id === here), 10_000)).toBe(true);
    expect((await state()).jobs.find((j) => j.id === here)).toMatchObject({ to: "lead", host: "hostA", delivery: null });
  }, 60_000);

  test("a host that goes away stays, offline, with when it was last seen", async () => {
    const before = Date.now();
    await C.ok(["daemon", "stop"]);
    const f = await untilFleet(feed, (x) => ws(x, "hostC")?.online === false);
    const c = ws(f, "hostC")!;
    expect(c.agents).toEqual([expect.objectContaining({ address: "r@hostC", live: "offline" })]);
    expect(Date.parse(c.last_seen)).toBeGreaterThan(before - 120_000);
    expect(Date.parse(c.last_seen)).toBeLessThanOrEqual(Date.now());
    expect(ws(f, "hostB")!.online).toBe(true);
    // later reads keep it (the feed sends the fleet when it changed; /api/state has the newest read)
    const readAt = (await state()).fleet!.read_at;
    let g: UiRoster | null = null;
    expect(await waitFor(async () => (g = (await state()).fleet)!.read_at !== readAt, 15_000, 200)).toBe(true);
    expect(ws(g!, "hostC")).toMatchObject({ online: false, last_seen: c.last_seen });
  }, 60_000);

  test("the broker stops answering: the page says so, answers at once, and shows this workspace", async () => {
    await broker.stop();
    const f = await untilFleet(feed, (x) => x.reachable === false);
    expect(f.warnings).toEqual([`the team's broker 127.0.0.1:${broker.port} does not answer: only this workspace is shown`]);
    expect(f.workspaces.map((w) => w.host)).toEqual(["hostA"]);
    const t0 = performance.now();
    const s = await state();
    expect(performance.now() - t0).toBeLessThan(2000);
    expect(s.fleet?.reachable).toBe(false);
    expect(s.sessions.map((x) => x.name)).toEqual(["lead"]);
  }, 60_000);
});

describe("mam ui with a team whose broker takes the connection and never answers", () => {
  test("the page answers at once (reading…), then says the broker does not answer", async () => {
    await withMuteBroker("mam-uimute-", async (w) => {
      const made = await runMam(["team", "init", "lab"], { env: w.env, cwd: w.sb.ws });
      expect(made.code, made.stderr).toBe(0);
      const { ui, feed } = await w.open();
      const full = await feed.until<UiState>("full", () => true);
      expect(full.fleet).toMatchObject({ team: "lab", host: "solo", reachable: null, read_at: null, warnings: [] });
      expect(full.fleet!.workspaces.map((x) => `${x.host}:${x.here}`)).toEqual(["solo:true"]);
      // a read is under way and hangs on the silent broker; the page still answers at once
      expect(await waitFor(() => w.connections() > 0, 5000)).toBe(true);
      const t0 = performance.now();
      const s = await stateOf(ui);
      expect(performance.now() - t0).toBeLessThan(1000);
      expect(s.fleet?.reachable).toBeNull();
      const f = await feed.until<UiRoster>("fleet", (x) => x.reachable === false, 15_000);
      expect(f.warnings).toEqual([`the team's broker 127.0.0.1:${w.port} does not answer: only this workspace is shown`]);
    });
  }, 30_000);
});

describe("mam ui without a (readable) team", () => {
  test("no fleet, no fleet events, and no connection to any broker", async () => {
    await withMuteBroker("mam-uisolo-", async (w) => {
      const { ui, feed } = await w.open();
      const full = await feed.until<UiState>("full", () => true);
      expect(full.fleet).toBeNull();
      expect(full.problems).toEqual([]);
      await Bun.sleep(4500); // longer than the fleet's read interval
      expect((await stateOf(ui)).fleet).toBeNull();
      expect(feed.events.filter((e) => e.event === "fleet")).toEqual([]);
      expect(w.connections()).toBe(0);
      const page = await (await fetch(`http://127.0.0.1:${ui.port}/?token=${ui.token}`)).text();
      expect(page).toContain(`<div id="fleet" hidden>`);
    });
  }, 30_000);

  test("a team.json that does not read: a red line says why, the rest of the page is there", async () => {
    const sb = makeSandbox("mam-uibadteam-");
    const path = join(sb.home, ".local", "state", "mam", "team.json");
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, "{damaged");
    let ui: RunningUi | undefined;
    try {
      ui = await startUiProcess(sb, sb.with({}));
      const s = await stateOf(ui);
      expect(s.fleet).toBeNull();
      expect(s.problems).toEqual([expect.stringMatching(new RegExp(`^the team's fleet is not shown: ${path.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} is not valid JSON \\(.*\\); run mam team join CODE again, or mam team init for a new team$`))]);
      expect(s.sessions).toEqual([]);
    } finally {
      await ui?.stop("SIGKILL");
      await sb.cleanup();
    }
  }, 30_000);
});

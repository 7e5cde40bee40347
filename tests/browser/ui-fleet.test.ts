// `mam ui` on a machine in a team, in a real browser (docs/ui.md, the fleet): three hosts on one
// machine share one real Mosquitto (tests/helpers/team.ts). The page shows this workspace's
// sessions as before (screen buttons) and the other hosts as groups of read-only rows that say
// why; a job to w@hostB says where it runs and that it was delivered; a host whose daemon stops
// stays on the page as offline, last seen some seconds ago; a broker that goes away is said. A
// second workspace of this host is a read-only group of its own.
// Run by `npm run test:browser`, not by `npm test`.
import { afterAll, expect, test } from "bun:test";
import { join } from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { CHROMIUM, launchBrowser, type RunningUi, snap, startUiProcess } from "../helpers/browser.ts";
import { mosquittoPath, startMosquitto, type TestBroker } from "../helpers/brokers.ts";
import { makeSandbox, type Sandbox } from "../helpers/sandbox.ts";
import { fleetWorld, type Host } from "../helpers/team.ts";
import { TMUX_BIN } from "../helpers/tmux.ts";

if (!mosquittoPath()) console.error("\n*** SKIPPING the fleet browser test: mosquitto is not installed (apt-get install -y mosquitto) ***\n");
const it = CHROMIUM && TMUX_BIN && mosquittoPath() ? test : test.skip;

let sb: Sandbox | undefined;
let broker: TestBroker | undefined;
let hosts: Host[] = [];
let ui: RunningUi | undefined;
let browser: Browser | undefined;

/** end what the world started; also at the start of a retry, whose world would otherwise replace (and leak) the first one's */
async function cleanup(): Promise<void> {
  await ui?.stop("SIGKILL");
  await browser?.close().catch(() => {});
  for (const h of hosts) await h.stop();
  await broker?.stop();
  await sb?.cleanup();
  [ui, browser, hosts, broker, sb] = [undefined, undefined, [], undefined, undefined];
}

afterAll(cleanup, 60_000);

const text = (page: Page, sel: string) => page.$eval(sel, (e) => (e as unknown as { innerText: string }).innerText);

it("the fleet: hosts as groups, other hosts' agents read-only, a job's host and delivery, an offline host, a broker that does not answer", async () => {
  await cleanup();
  sb = makeSandbox("mam-uifleetb-");
  broker = await startMosquitto(join(sb.root, "broker"));
  const { A, A2, C, all } = await fleetWorld(sb.root, broker.env);
  hosts = all;
  ui = await startUiProcess(sb, { ...A.env, MAM_UI_LIVE_MS: "300" }, [], A.ws);
  browser = await launchBrowser(sb);
  const page = await browser.newPage();
  expect((await page.goto(ui.url))?.status()).toBe(200);
  await page.waitForSelector("body[data-ready='1']", { timeout: 15_000 });

  // this workspace: as before, under its host
  await page.waitForSelector("#team tr[data-session='lead'] [data-screen='lead']", { timeout: 15_000 });
  expect(await text(page, "#team .host-head")).toContain("hostA");
  expect(await text(page, "#team-name")).toBe("lab");
  // the other hosts, each a group with its agents
  await page.waitForSelector("#fleet .host[data-host='hostB'][data-online='true'] tr[data-address='w@hostB']", { timeout: 15_000 });
  await page.waitForSelector("#fleet .host[data-host='hostC'][data-online='true'] tr[data-address='r@hostC']", { timeout: 15_000 });
  const wRow = await text(page, "tr[data-address='w@hostB']");
  expect(wRow).toContain("demo");
  expect(wRow).toContain("worker");
  expect(wRow).toMatch(/idle|working/);
  expect(await text(page, "#fleet-head")).toContain(`team lab on 127.0.0.1:${broker.port}`);
  // read-only, and the page says so (a note and the rows' tooltip), never a screen or action button there
  expect(await page.$$("#fleet [data-screen], #fleet [data-act]")).toHaveLength(0);
  expect(await text(page, ".host[data-host='hostB'] .readonly-note")).toContain("read-only here: screens, stop and resume act only on this workspace's sessions (mam ui on hostB has them)");
  expect(await page.$eval("tr[data-address='w@hostB']", (e) => e.getAttribute("title"))).toContain("read-only here");
  // this host's other workspace: a group of its own, read-only too, pointing at its own mam ui
  await page.waitForSelector("#fleet .host[data-host='hostA'] tr[data-address='side@hostA']", { timeout: 15_000 });
  expect(await text(page, "#fleet .host[data-host='hostA'] .host-head")).toContain("this host, other workspaces");
  expect(await text(page, "#fleet .host[data-host='hostA'] .readonly-note")).toContain(`(mam ui --workspace ${A2.ws} has them)`);
  expect(await text(page, "#fleet-head")).toContain("2 other hosts");

  // a job to w@hostB: where it runs, and its delivery stage as the journal says
  const id = (await A.ok(["job", "submit", "--to", "w@hostB", "--from", "lead", "--prompt", "wave hello"])).trim();
  await page.waitForSelector(`[data-job='${id}'] [data-delivery='delivered']`, { timeout: 30_000 });
  expect(await text(page, `[data-job='${id}'] .job-host`)).toBe("on hostB");
  expect(await page.$eval(`[data-job='${id}'] [data-delivery]`, (e) => e.getAttribute("title"))).toContain("typed into the agent on hostB");
  // hostB announces the job on w's row; the job is here, so it is a link to its journal
  await page.waitForSelector(`tr[data-address='w@hostB'] a[data-open-job='${id}']`, { timeout: 15_000 });
  await page.click(`tr[data-address='w@hostB'] a[data-open-job='${id}']`);
  await page.waitForSelector("#panel-body table.journal", { timeout: 5_000 });
  expect(await text(page, "#panel-body")).toContain("received");
  await page.click("#panel-close");
  await page.setViewport({ width: 1400, height: 900 });
  await snap(page, "fleet");

  // hostC's daemon stops: hostC stays, offline, last seen a few seconds ago
  await C.ok(["daemon", "stop"]);
  await page.waitForSelector("#fleet .host[data-host='hostC'][data-online='false'] tr[data-address='r@hostC'][data-live='offline']", { timeout: 20_000 });
  expect(await text(page, ".host[data-host='hostC'] .host-head")).toMatch(/offline\s+last seen \d+s ago/);
  expect(await page.$("#fleet .host[data-host='hostB'][data-online='true']")).not.toBeNull();
  await snap(page, "fleet-offline");

  // the broker goes away: the page says so and keeps this workspace
  await broker.stop();
  await page.waitForSelector("#fleet-state[data-state='unreachable']", { timeout: 20_000 });
  expect(await text(page, "#fleet-state")).toContain("the team's broker does not answer");
  expect(await page.$("#fleet .host")).toBeNull();
  expect(await page.$("#team tr[data-session='lead']")).not.toBeNull();
  await snap(page, "fleet-broker-down");
  await page.close();
  expect(await ui.stop()).toBe(143);
}, 180_000);

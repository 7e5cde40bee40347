// What the bench areas that look at `mam ui` in a browser share (ui, fleet): the server and the
// system's chromium (puppeteer-core), page ready and event → page. Like common.ts, a module the
// areas import, never an area itself.
import { join } from "node:path";
import { appendEvent } from "../lib/jobs/store.ts";

type Browser = Awaited<ReturnType<(typeof import("puppeteer-core"))["default"]["launch"]>>;

export interface OpenUi {
  url: string;
  /** the `mam ui` server process */
  ui: ReturnType<typeof Bun.spawn>;
  browser: Browser;
  close(): Promise<void>;
}

/** the system's chromium (MAM_CHROMIUM, else chromium on PATH), or undefined */
export const chromiumPath = (): string | undefined => process.env.MAM_CHROMIUM || Bun.which("chromium") || Bun.which("chromium-browser") || undefined;

/** `mam ui --workspace ws` and a headless chromium (its profile under root); the page's URL from the server's first line */
export async function openUi(bin: string, ws: string, env: Record<string, string>, root: string, chromium: string): Promise<OpenUi> {
  const ui = Bun.spawn([bin, "ui", "--workspace", ws], { env, stdout: "pipe", stderr: "ignore", stdin: "ignore" });
  const { default: puppeteer } = await import("puppeteer-core");
  const browser = await puppeteer.launch({ executablePath: chromium, headless: true, userDataDir: join(root, "chromium"), args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"] });
  const close = async () => {
    await browser.close().catch(() => {});
    ui.kill("SIGTERM");
    await ui.exited;
  };
  try {
    const reader = (ui.stdout as ReadableStream<Uint8Array>).getReader();
    let buf = "";
    while (!buf.includes("\n")) {
      const r = await reader.read();
      if (r.done) throw new Error(`mam ui exited ${await ui.exited}`);
      buf += new TextDecoder().decode(r.value);
    }
    return { url: buf.split("\n")[0]!.trim(), ui, browser, close };
  } catch (e) {
    await close();
    throw e;
  }
}

/**
 * page ready: navigation start → two animation frames after the first full render, a fresh page
 * each time (chromium itself warm), `runs` after 2 warm-ups; each must show `jobs` jobs
 */
export async function pageReady(browser: Browser, url: string, jobs: number, runs: number): Promise<number[]> {
  const ready: number[] = [];
  for (let i = 0; i < runs + 2; i++) {
    const page = await browser.newPage();
    await page.goto(url, { waitUntil: "domcontentloaded" });
    // the page marks mam:painted two animation frames after it drew the first full state
    await page.waitForFunction(`performance.getEntriesByName("mam:painted").length > 0`, { timeout: 30_000, polling: 10 });
    const t = (await page.evaluate(`performance.getEntriesByName("mam:painted")[0].startTime`)) as number; // since navigation start
    const shown = (await page.$$eval("[data-job]", (xs) => xs.length)) as number;
    if (shown !== jobs) throw new Error(`the page shows ${shown} jobs, not ${jobs}`);
    if (i >= 2) ready.push(t);
    await page.close();
  }
  return ready;
}

/**
 * an event appended to job `id`'s journal (a job still running) → its count on an open page, `n`
 * times: the page stamps the moment a DOM mutation shows it, the bench the moment before the
 * append. Returns the latencies and the page, still open.
 */
export async function eventToPage(browser: Browser, url: string, ws: string, id: string, source: string, n: number) {
  const page = await browser.newPage();
  await page.goto(url);
  await page.waitForSelector("body[data-ready='1']");
  const lat: number[] = [];
  for (let i = 0; i < n; i++) {
    const want = ((await page.$eval(`[data-job='${id}']`, (e) => Number((e as unknown as { dataset: { events: string } }).dataset.events))) as number) + 1;
    // a page-side function (a string: this file is not compiled with the DOM's types)
    const seen = page.waitForFunction(`(() => { const e = document.querySelector("[data-job='${id}']"); return e && Number(e.dataset.events) >= ${want} ? Date.now() : false; })()`, { polling: "mutation", timeout: 10_000 });
    const t0 = Date.now();
    await appendEvent(ws, id, { event: "progress", source, detail: `step ${i}` });
    lat.push(((await (await seen).jsonValue()) as number) - t0);
    await Bun.sleep(50);
  }
  return { lat, page };
}

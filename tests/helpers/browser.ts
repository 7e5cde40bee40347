// Browser tests of `mam ui`: the system's chromium (Debian's package; MAM_CHROMIUM overrides)
// driven by puppeteer-core (never downloads a browser), with its profile inside the sandbox so
// the sandbox's reaper finds any chromium left behind; and `mam ui` started as users start it.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "puppeteer-core";
import { MAM_CMD } from "./mam.ts";
import type { Sandbox } from "./sandbox.ts";

export const CHROMIUM = process.env.MAM_CHROMIUM || Bun.which("chromium") || Bun.which("chromium-browser") || undefined;
export const ARTIFACTS = join(import.meta.dir, "..", "browser", "artifacts");

export async function launchBrowser(sb: Sandbox): Promise<Browser> {
  if (!CHROMIUM) throw new Error("chromium is not installed: the browser tests need it (apt-get install -y chromium, or MAM_CHROMIUM=/path)");
  const { default: puppeteer } = await import("puppeteer-core");
  return puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    userDataDir: join(sb.root, "chromium-profile"),
    // --no-sandbox: CI runs as root, where chromium's own sandbox cannot start
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run", "--window-size=1400,1000"],
    defaultViewport: { width: 1400, height: 1000 },
  });
}

/** a screenshot into tests/browser/artifacts/<name>.png (git-ignored) */
export async function snap(page: Page, name: string): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: path as `${string}.png`, fullPage: true });
  return path;
}

export interface RunningUi {
  url: string;
  port: number;
  token: string;
  proc: ReturnType<typeof Bun.spawn>;
  stderr(): string;
  /** send a signal and return the exit code */
  stop(sig?: NodeJS.Signals): Promise<number>;
}

/** start `mam ui` and read the URL it prints (its first stdout line) */
export async function startUiProcess(sb: Sandbox, env: Record<string, string>, args: string[] = [], ws = sb.ws): Promise<RunningUi> {
  const proc = Bun.spawn([...MAM_CMD, "ui", "--workspace", ws, ...args], { cwd: sb.ws, env, stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  let errText = "";
  void (async () => {
    const dec = new TextDecoder();
    for await (const c of proc.stderr as ReadableStream<Uint8Array>) errText += dec.decode(c, { stream: true });
  })();
  const reader = (proc.stdout as ReadableStream<Uint8Array>).getReader();
  const dec = new TextDecoder();
  let buf = "";
  const deadline = Date.now() + 15_000;
  while (!buf.includes("\n")) {
    const r = await Promise.race([reader.read(), Bun.sleep(Math.max(0, deadline - Date.now())).then(() => "timeout" as const)]);
    if (r === "timeout" || r.done) {
      proc.kill("SIGKILL");
      throw new Error(`mam ui printed no URL (exit ${proc.exitCode}): ${buf}${errText}`);
    }
    buf += dec.decode(r.value, { stream: true });
  }
  reader.releaseLock();
  const url = buf.split("\n")[0]!.trim();
  const m = /^http:\/\/127\.0\.0\.1:(\d+)\/\?token=([A-Za-z0-9_-]+)$/.exec(url);
  if (!m) throw new Error(`unexpected first line from mam ui: ${url}`);
  return {
    url,
    port: Number(m[1]),
    token: m[2]!,
    proc,
    stderr: () => errText,
    async stop(sig: NodeJS.Signals = "SIGTERM") {
      if (proc.exitCode === null) proc.kill(sig);
      return proc.exited;
    },
  };
}

/** one raw HTTP/1.1 GET with exactly these headers (fetch would set its own Host); the status code */
export async function rawGet(port: number, path: string, host: string): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    let got = "";
    Bun.connect({
      hostname: "127.0.0.1",
      port,
      socket: {
        open(s) {
          s.write(`GET ${path} HTTP/1.1\r\nHost: ${host}\r\nConnection: close\r\n\r\n`);
        },
        data(s, d) {
          got += d.toString();
          const m = /^HTTP\/1\.1 (\d{3})/.exec(got);
          if (m) {
            s.end();
            resolve(Number(m[1]));
          }
        },
        error(_s, e) {
          reject(e);
        },
        close() {
          if (!/^HTTP/.test(got)) reject(new Error(`no HTTP answer: ${got}`));
        },
      },
    }).catch(reject);
  });
}

export interface UiFeed {
  /** every event so far, in order */
  events: { event: string; data: unknown }[];
  /** the newest data of an event type */
  last<T = unknown>(event: string): T | undefined;
  /** wait until `pred` holds for the newest data of `event`; that data, or an error saying what came last */
  until<T = unknown>(event: string, pred: (d: T) => boolean, timeoutMs?: number): Promise<T>;
  close(): void;
}

/** read the page's server-sent event stream (/api/events) as the page does */
export async function uiFeed(ui: Pick<RunningUi, "port" | "token">): Promise<UiFeed> {
  const ctl = new AbortController();
  const res = await fetch(`http://127.0.0.1:${ui.port}/api/events?token=${ui.token}`, { signal: ctl.signal });
  if (res.status !== 200 || !res.headers.get("content-type")?.startsWith("text/event-stream")) throw new Error(`/api/events answered ${res.status}`);
  const events: { event: string; data: unknown }[] = [];
  void (async () => {
    const dec = new TextDecoder();
    let buf = "";
    try {
      for await (const c of res.body as ReadableStream<Uint8Array>) {
        buf += dec.decode(c, { stream: true });
        let i: number;
        while ((i = buf.indexOf("\n\n")) >= 0) {
          const block = buf.slice(0, i);
          buf = buf.slice(i + 2);
          const ev = /^event: (.*)$/m.exec(block)?.[1];
          const data = /^data: (.*)$/m.exec(block)?.[1];
          if (ev && data !== undefined) events.push({ event: ev, data: JSON.parse(data) });
        }
      }
    } catch {} // aborted
  })();
  const last = <T>(event: string): T | undefined => {
    for (let i = events.length - 1; i >= 0; i--) if (events[i]!.event === event) return events[i]!.data as T;
    return undefined;
  };
  return {
    events,
    last,
    async until<T>(event: string, pred: (d: T) => boolean, timeoutMs = 15_000): Promise<T> {
      const deadline = Date.now() + timeoutMs;
      for (;;) {
        const d = last<T>(event);
        if (d !== undefined && pred(d)) return d;
        if (Date.now() > deadline) throw new Error(`no '${event}' event as expected within ${timeoutMs} ms; the last: ${JSON.stringify(d)}`);
        await Bun.sleep(50);
      }
    },
    close: () => ctl.abort(),
  };
}

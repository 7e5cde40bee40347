// The `mam ui` server: one page and its live feed on 127.0.0.1, inside the mam binary (Bun.serve;
// the page's HTML, script and style are embedded text). Every request passes lib/ui/guard.ts
// (Host, token, and for POST: Origin, --allow-actions, JSON); the Host is checked before anything
// else reads the request, and a failure is a plain 500, never Bun's development page. The feed is server-sent events: the
// whole state once, then only what changed — jobs when their record or journal changes, the team
// when the registry changes and every liveMs while a page is open (LIVE comes from the
// multiplexers, which write no file), the daemon when its state or log changes. Files are watched
// (fs.watch) with a polling fallback; the browser never polls.
import { type FSWatcher, statSync, watch } from "node:fs";
import { dirname } from "node:path";
import { isRemote, type Reached } from "../jobs/runtime.ts";
import { heldFor, queuePositions, readQueue } from "../ops/job/queue.ts";
import { realDeps } from "../ops/wiring.ts";
import { BOARD_COLUMNS } from "../jobs/statuses.ts";
import { EXIT, MamError } from "../sys/errors.ts";
import { type Env, mamDir } from "../sys/paths.ts";
import { noteUi } from "../sys/ui-file.ts";
import { httpStatusOf, parseAction, runAction } from "./actions.ts";
import { checkRequest, hostAllowed, hostRefusal, newUiToken } from "./guard.ts";
import { jobsView, scheduleView, type UiDaemon, type UiRoster, type UiSchedule, type UiSession, type UiState } from "./model.ts";
import { DaemonWatch, JobCache, openRoster, readTeam } from "./state.ts";
import type { TeamRate } from "../cost/summary.ts";
import type { NeedItem } from "../ops/session/why.ts";
import { ledgerPath } from "../cost/ledger.ts";
import css from "./assets/app.css" with { type: "text" };
import htmlText from "./assets/index.html" with { type: "text" };
import js from "./assets/app.js" with { type: "text" };

export interface UiOptions {
  ws: string;
  env: Env;
  /** 0: a free port */
  port: number;
  actions: boolean;
  /** how often the team's LIVE column and an open screen are refreshed while a page is open */
  liveMs?: number;
  token?: string;
  /** mam's version, shown in the page's footer (lib/cli/version.ts) */
  version?: string;
}

export interface UiServer {
  url: string;
  port: number;
  token: string;
  /** the 0600 page that forwards to url (lib/sys/ui-file.ts), for an opener and notifications' links */
  page: string;
  stop(): Promise<void>;
}

/** MAM_UI_LIVE_MS: a whole number of milliseconds ≥ 200 (default 2000) */
export function liveMsFrom(env: Env): number {
  const v = env.MAM_UI_LIVE_MS;
  if (v === undefined || v === "") return 2000;
  if (!/^\d+$/.test(v) || Number(v) < 200) throw new MamError(`MAM_UI_LIVE_MS must be a whole number of milliseconds ≥ 200 (got '${v}')`, EXIT.USAGE, "unset it for the default 2000");
  return Number(v);
}

const SAFETY_POLL_MS = 5000;
const FALLBACK_POLL_MS = 1000;
const DEBOUNCE_MS = 20;
const HEARTBEAT_MS = 15_000;
/** the broker's retained announcements are read at most this often (while a page is open) */
const FLEET_MS = 3000;

const enc = new TextEncoder();
const sse = (event: string, data: unknown) => enc.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);

type Client = { push(chunk: Uint8Array): void; close(): void };

function sseStream(onOpen: (c: Client) => void, onClose: (c: Client) => void): ReadableStream<Uint8Array> {
  let client: Client | undefined;
  return new ReadableStream<Uint8Array>({
    start(ctrl) {
      client = {
        push(chunk) {
          try {
            ctrl.enqueue(chunk);
          } catch {
            onClose(client!);
          }
        },
        close() {
          try {
            ctrl.close();
          } catch {}
        },
      };
      onOpen(client);
    },
    cancel() {
      if (client) onClose(client);
    },
  });
}

const SECURITY_HEADERS = {
  "Cache-Control": "no-store",
  "Referrer-Policy": "no-referrer",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
};
const CSP = "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self' data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const text = (status: number, body: string, type = "text/plain; charset=utf-8", extra: Record<string, string> = {}) =>
  new Response(body, { status, headers: { ...SECURITY_HEADERS, "Content-Type": type, ...extra } });
const json = (status: number, v: unknown) => text(status, JSON.stringify(v), "application/json; charset=utf-8");

export async function startUi(o: UiOptions): Promise<UiServer> {
  const token = o.token ?? newUiToken();
  const liveMs = o.liveMs ?? liveMsFrom(o.env);
  const ws = o.ws;
  const deps = realDeps(ws, o.env, { warn: (l) => process.stderr.write(`${l}\n`) });
  const regPath = deps.registry.path;
  const fleetSrc = await openRoster(ws, o.env, FLEET_MS);
  const fleetCache = fleetSrc.cache;
  const jobs = new JobCache(deps.jobs, fleetCache?.self.host, o.env);
  const daemon = new DaemonWatch(ws);
  let team: { sessions: UiSession[]; registry: string; rate: TeamRate; needs: NeedItem[]; problem?: string } = { sessions: [], registry: regPath, rate: { usd_per_hour: 0, tokens_per_hour: 0, minutes: 0 }, needs: [] };
  let daemonState: UiDaemon = daemon.read();
  let problems: string[] = [];
  const fixedProblems = fleetSrc.problem ? [fleetSrc.problem] : [];
  const allProblems = () => [...(team.problem ? [team.problem] : []), ...fixedProblems, ...problems];
  const clients = new Set<Client>();
  const broadcast = (event: string, data: unknown) => {
    if (clients.size === 0) return;
    const chunk = sse(event, data);
    for (const c of clients) c.push(chunk);
  };

  const state = (): UiState => ({
    workspace: ws,
    registry: team.registry,
    actions: o.actions,
    generated_at: new Date().toISOString(),
    sessions: team.sessions,
    rate: team.rate,
    needs: team.needs,
    jobs: jobsView(jobs.all()),
    board_columns: BOARD_COLUMNS,
    daemon: daemonState,
    fleet: fleetCache ? fleetCache.view(team.sessions) : null,
    schedules,
    problems: allProblems(),
  });

  // ---- the schedules (a few small files, read with the team) --------------------------------
  let schedules: UiSchedule[] = [];
  let schedulesJson = "";
  const readSchedules = async () => {
    try {
      const { listSchedules } = await import("../ops/job/schedule.ts");
      schedules = listSchedules(ws).map(scheduleView);
    } catch {
      schedules = []; // a malformed schedule file: mam job list --scheduled names it
    }
    const j = JSON.stringify(schedules);
    if (j === schedulesJson) return;
    schedulesJson = j;
    broadcast("schedules", { schedules });
  };

  // ---- refreshing ------------------------------------------------------------------------
  let teamBusy: Promise<void> | undefined;
  let teamAgain = false;
  let teamJson = "";
  let teamAt = 0;
  const refreshTeam = (): Promise<void> => {
    if (teamBusy) {
      teamAgain = true;
      return teamBusy;
    }
    teamBusy = (async () => {
      do {
        teamAgain = false;
        teamAt = Date.now();
        team = await readTeam(deps, jobs.all());
        await readSchedules();
        const j = JSON.stringify(team);
        if (j !== teamJson) {
          teamJson = j;
          broadcast("team", { sessions: team.sessions, registry: team.registry, rate: team.rate, needs: team.needs });
          broadcast("problems", { problems: allProblems() });
          sendFleet(); // this workspace's row of the fleet
        }
      } while (teamAgain && !stopped);
    })().finally(() => (teamBusy = undefined));
    return teamBusy;
  };

  // ---- the fleet (a machine in a team) -----------------------------------------------------
  let fleetJson = "";
  const sendFleet = () => {
    if (!fleetCache) return;
    const f: UiRoster = fleetCache.view(team.sessions);
    // sent when what the page draws changed, not at every read (the read's time, and this
    // workspace's "last seen", which is that time, change every few seconds)
    const j = JSON.stringify({ ...f, read_at: null, workspaces: f.workspaces.map((w) => (w.here ? { ...w, last_seen: "" } : w)) });
    if (j === fleetJson) return;
    fleetJson = j;
    broadcast("fleet", f);
  };
  /** a read of the broker when one is due; nobody waits for it (a broker that does not answer holds up nothing) */
  const refreshFleet = () => {
    if (!fleetCache || stopped || !fleetCache.due()) return;
    void fleetCache.refresh().then(() => !stopped && sendFleet());
  };

  let regSig = "";
  let daemonJson = "";
  /**
   * the places in line of the jobs waiting their turn, and what those that run after others wait
   * for (as mam status --jobs says it), read only while some wait; undefined: the queue did not read
   */
  const queuePlaces = (): { positions: Map<string, number>; held: Map<string, string> } | undefined => {
    if (!jobs.anyQueued()) return { positions: new Map(), held: new Map() };
    try {
      const q = readQueue(deps.jobs, fleetCache?.self.host);
      return { positions: queuePositions(q, o.env), held: heldFor(q) };
    } catch {
      return undefined; // a job being written: the next change places them
    }
  };
  const refreshFiles = () => {
    const d = jobs.refresh();
    const changedProblems = d.problems.join("\n") !== problems.join("\n");
    problems = d.problems;
    if (changedProblems) broadcast("problems", { problems: allProblems() });
    // a job that moved up its line changed too (the one before it went), and one that waited for
    // jobs that moved on (its card says for what)
    const places = queuePlaces();
    const changed = [...new Map([...d.changed, ...(places ? jobs.place(places.positions, places.held) : [])].map((j) => [j.id, j])).values()];
    if (changed.length || d.removed.length) {
      broadcast("jobs", { changed, removed: d.removed });
      void refreshTeam(); // the JOB column
    }
    daemonState = daemon.read();
    const dj = JSON.stringify(daemonState);
    if (dj !== daemonJson) {
      daemonJson = dj;
      broadcast("daemon", daemonState);
    }
    // the registry, and the daemon's usage ledger (the sessions' costs)
    let s = "-";
    for (const p of [regPath, ledgerPath(ws)]) {
      try {
        const st = statSync(p);
        s += `${st.size}:${st.mtimeMs}:${st.ino}|`;
      } catch {}
    }
    if (s !== regSig) {
      regSig = s;
      void refreshTeam();
    }
  };

  // ---- watching --------------------------------------------------------------------------
  let stopped = false;
  let debounce: ReturnType<typeof setTimeout> | undefined;
  const schedule = () => {
    if (stopped || debounce) return;
    debounce = setTimeout(() => {
      debounce = undefined;
      if (!stopped) refreshFiles();
    }, DEBOUNCE_MS);
  };
  const watchers = new Map<string, FSWatcher>();
  const watchDirs = [...new Set([mamDir(ws), jobs.dir, dirname(regPath)])];
  const ensureWatchers = (): boolean => {
    let all = true;
    for (const d of watchDirs) {
      if (watchers.has(d)) continue;
      try {
        const w = watch(d, { persistent: false }, schedule);
        w.on("error", () => {
          w.close();
          watchers.delete(d);
        });
        watchers.set(d, w);
      } catch {
        all = false; // not there yet (no .mam/jobs before the first job): the poll retries
      }
    }
    return all;
  };
  let pollTimer: ReturnType<typeof setTimeout> | undefined;
  const poll = () => {
    if (stopped) return;
    const watching = ensureWatchers();
    refreshFiles();
    pollTimer = setTimeout(poll, watching ? SAFETY_POLL_MS : FALLBACK_POLL_MS);
  };
  const liveTimer = setInterval(() => {
    if (clients.size > 0 && team.sessions.length > 0) void refreshTeam();
  }, liveMs);
  const fleetTimer = setInterval(() => clients.size > 0 && refreshFleet(), 1000); // refreshFleet reads only when FLEET_MS have passed
  const heartbeat = setInterval(() => {
    const c = enc.encode(": keep-alive\n\n");
    for (const cl of clients) cl.push(c);
  }, HEARTBEAT_MS);

  refreshFiles();
  await refreshTeam();
  poll();

  // ---- screens ---------------------------------------------------------------------------
  const screenStream = (name: string) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let closed = false;
    let last = "";
    let ref: Reached | undefined;
    return sseStream(
      (c) => {
        const tick = async () => {
          if (closed || stopped) return;
          let msg: { name: string; text: string; title: string; error?: string };
          try {
            ref ??= await deps.runtime.findSession(name);
            if (!ref) msg = { name, text: "", title: "", error: `${name} has no running pane` };
            else if (isRemote(ref)) msg = { name, text: "", title: "", error: `${name} is on another host: its screen is shown by mam ui there` };
            else {
              const s = await deps.muxFor(ref.backend, ref.server).screen(ref.paneId);
              msg = { name, text: s.text, title: s.title };
            }
          } catch (e) {
            ref = undefined;
            msg = { name, text: "", title: "", error: (e as Error).message };
          }
          const j = JSON.stringify(msg);
          if (j !== last) {
            last = j;
            c.push(sse("screen", msg));
          }
          if (!closed) timer = setTimeout(tick, liveMs);
        };
        void tick();
      },
      () => {
        closed = true;
        clearTimeout(timer);
      },
    );
  };

  // ---- HTTP ------------------------------------------------------------------------------
  let port = 0;
  // a text import (bun-types types .html imports as bundles for Bun.serve routes)
  const shownVersion = (o.version ?? "").replace(/[^0-9A-Za-z.+-]/g, "");
  const page = () => (htmlText as unknown as string).replaceAll("__TOKEN__", token).replace("__VERSION__", shownVersion ? `mam ${shownVersion}` : "mam");
  const handle = async (req: Request): Promise<Response> => {
    // the Host first: Bun makes req.url from it, and a malformed one (`x:1:2`, `a b`) makes a URL
    // that does not parse; such a request never gets further than a 421
    const host = req.headers.get("host");
    if (!hostAllowed(host, port)) return text(421, `${hostRefusal(port)}\n`);
    let url: URL;
    try {
      url = new URL(req.url);
    } catch {
      return text(400, "bad request\n");
    }
    const isAction = url.pathname === "/api/action";
    const v = checkRequest(
      {
        method: req.method,
        host,
        origin: req.headers.get("origin"),
        token: url.searchParams.get("token") ?? req.headers.get("x-mam-token"),
        contentType: req.headers.get("content-type"),
      },
      port,
      token,
      { actions: o.actions, isAction },
    );
    if (!v.ok) return text(v.status, `${v.reason}\n`);
    switch (url.pathname) {
      case "/":
        return text(200, page(), "text/html; charset=utf-8", { "Content-Security-Policy": CSP });
      case "/app.js":
        return text(200, js, "text/javascript; charset=utf-8");
      case "/app.css":
        return text(200, css, "text/css; charset=utf-8");
      case "/api/state":
        refreshFleet(); // for the next ask: this one answers at once with what is known
        return json(200, state());
      case "/api/events": {
        const body = sseStream(
          (c) => {
            clients.add(c);
            c.push(sse("full", state()));
            if (Date.now() - teamAt > 1000) void refreshTeam(); // a fresh LIVE for the newcomer
            refreshFleet();
          },
          (c) => clients.delete(c),
        );
        return new Response(body, { headers: { ...SECURITY_HEADERS, "Content-Type": "text/event-stream" } });
      }
      case "/api/screen": {
        const name = url.searchParams.get("name") ?? "";
        if (!team.sessions.some((s) => s.name === name)) return text(404, `no session ${name} in ${team.registry}\n`);
        return new Response(screenStream(name), { headers: { ...SECURITY_HEADERS, "Content-Type": "text/event-stream" } });
      }
      case "/api/action": {
        if (req.method !== "POST") return text(405, "actions are POST requests\n", "text/plain; charset=utf-8", { Allow: "POST" });
        let body: unknown;
        try {
          body = await req.json();
        } catch {
          return json(400, { ok: false, error: "the action body is not JSON" });
        }
        try {
          const a = parseAction(body);
          const message = await runAction(deps, a);
          refreshFiles();
          void refreshTeam();
          return json(200, { ok: true, message });
        } catch (e) {
          const m = e instanceof MamError ? e.render().replace(/^ERROR: /, "") : (e as Error).message;
          return json(httpStatusOf(e), { ok: false, error: m });
        }
      }
      default:
        return text(404, "not found\n");
    }
  };

  let server: ReturnType<typeof Bun.serve>;
  /** every timer and watcher of the server stops (a failed start, or stop()) */
  const halt = () => {
    stopped = true;
    clearInterval(liveTimer);
    clearInterval(fleetTimer);
    clearInterval(heartbeat);
    clearTimeout(pollTimer);
    clearTimeout(debounce);
    for (const w of watchers.values()) w.close();
  };
  try {
    // never Bun's development error page (it shows the workspace's path and source lines to
    // anyone who reaches the port): a failure is a plain 500, its reason on the server's stderr
    server = Bun.serve({
      hostname: "127.0.0.1",
      port: o.port,
      idleTimeout: 0,
      development: false,
      fetch: handle,
      error(e) {
        process.stderr.write(`mam ui: internal error: ${e instanceof Error ? e.message : String(e)}\n`);
        return text(500, "internal error\n");
      },
    });
  } catch (e) {
    halt();
    const code = (e as { code?: string }).code;
    if (code === "EADDRINUSE") throw new MamError(`port ${o.port} on 127.0.0.1 is in use`, EXIT.FAIL, "pick another with --port N, or --port 0 for a free one");
    throw new MamError(`cannot listen on 127.0.0.1:${o.port} (${(e as Error).message})`, EXIT.FAIL);
  }
  port = server.port ?? o.port;
  const url = `http://127.0.0.1:${port}/?token=${token}`;
  let note: ReturnType<typeof noteUi>;
  try {
    note = noteUi(ws, url, port, o.env);
  } catch (e) {
    await server.stop(true);
    halt();
    throw e;
  }
  return {
    url,
    port,
    token,
    page: note.page,
    async stop() {
      note.stop();
      halt();
      for (const c of clients) c.close();
      clients.clear();
      await server.stop(true);
    },
  };
}

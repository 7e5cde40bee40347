// Where a running `mam ui` can be reached from outside it: the page that forwards to its URL (with
// its token) and the workspace's note of it. The token never enters another process's argv nor a
// notification (issue 23, R7): the forwarding page is a 0600 file in a 0700 folder of mam's
// per-user state, which `mam ui --open` hands the browser and a notification links to
// (`file://…/open-<port>.html#agent=NAME`; the page keeps the #agent part). The note,
// <workspace>/.mam/ui.json (0600), names that page; `.mam/ui.lock` is held (shared) by every mam ui
// of the workspace while it runs, so a note left by one that died is known for what it is.
import { closeSync, constants as C, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile, openRegular } from "./atomic.ts";
import { tryFlock } from "./flock.ts";
import { ensureMamDir } from "./mam-dir.ts";
import { type Env, mamDir, stateDir } from "./paths.ts";

const html = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** write the page that forwards to url (the token stays in the file, 0600); returns its path */
export function openerPage(url: string, port: number, env: Env): string {
  const dir = join(stateDir(env), "ui");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `open-${port}.html`);
  const u = html(url);
  // the script keeps a link's #agent=NAME (a meta refresh cannot); the refresh is for a browser without scripts
  const js = JSON.stringify(url).replace(/</g, "\\u003c");
  atomicWriteFile(
    path,
    `<!doctype html>\n<meta charset="utf-8">\n<meta name="referrer" content="no-referrer">\n<script>location.replace(${js} + location.hash)</script>\n<meta http-equiv="refresh" content="0;url=${u}">\n<title>mam ui</title>\n<p><a href="${u}">open the mam dashboard</a></p>\n`,
    { mode: 0o600 },
  );
  return path;
}

interface UiNote {
  pid: number;
  port: number;
  page: string;
}

const notePath = (ws: string) => join(mamDir(ws), "ui.json");
const lockPath = (ws: string) => join(mamDir(ws), "ui.lock");

/** a running mam ui notes itself in the workspace; stop() takes the note and the page away */
export function noteUi(ws: string, url: string, port: number, env: Env): { page: string; stop(): void } {
  const page = openerPage(url, port, env);
  ensureMamDir(ws);
  const fd = openRegular(lockPath(ws), C.O_WRONLY | C.O_APPEND | C.O_CREAT, 0o600);
  // shared with every other mam ui of the workspace; a look at it (dashboardLink) takes it for an instant
  for (let i = 0; i < 200 && !tryFlock(fd, false); i++) Bun.sleepSync(5);
  atomicWriteFile(notePath(ws), `${JSON.stringify({ pid: process.pid, port, page } satisfies UiNote)}\n`, { mode: 0o600, regularOnly: true });
  return {
    page,
    stop() {
      try {
        const n = JSON.parse(readFileSync(notePath(ws), "utf8")) as UiNote;
        if (n.pid === process.pid) rmSync(notePath(ws), { force: true });
      } catch {}
      rmSync(page, { force: true });
      closeSync(fd);
    },
  };
}

/** the dashboard's link to an agent, when a mam ui runs for the workspace (else undefined) */
export function dashboardLink(ws: string, session: string): string | undefined {
  let fd: number;
  try {
    fd = openRegular(lockPath(ws), C.O_RDONLY, 0o600);
  } catch {
    return undefined;
  }
  try {
    // a free lock: no mam ui holds it, whatever the note says
    if (tryFlock(fd, true)) return undefined;
    const n = JSON.parse(readFileSync(notePath(ws), "utf8")) as UiNote;
    return typeof n.page === "string" ? `file://${n.page}#agent=${encodeURIComponent(session)}` : undefined;
  } catch {
    return undefined;
  } finally {
    closeSync(fd);
  }
}

// mam ui: the live local dashboard (lib/ui/server.ts) — parse, start, print the URL, wait for a
// signal, stop. Loaded lazily: no other command pays for the server or its page.
//
// --open never puts the token into another process's argv (issue 23, R7: any user of the machine
// reads argv in ps, and a browser started by the opener keeps its argv for its whole life): the
// opener gets a page that forwards to the URL, written 0600 into a 0700 folder under mam's
// per-user state and removed when the server stops (openerPage).
import { mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { atomicWriteFile } from "../sys/atomic.ts";
import { usageError } from "../sys/errors.ts";
import { err, out } from "../sys/io.ts";
import { type Env, resolveWorkspace, stateDir } from "../sys/paths.ts";
import { withoutSecrets } from "../sys/secrets.ts";
import { bool, defineCommand, str, workspaceArg } from "./command.ts";

const html = (s: string) => s.replace(/&/g, "&amp;").replace(/"/g, "&quot;").replace(/</g, "&lt;").replace(/>/g, "&gt;");

/** write the page that forwards to url (the token stays in the file, 0600); returns its path */
export function openerPage(url: string, port: number, env: Env): string {
  const dir = join(stateDir(env), "ui");
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, `open-${port}.html`);
  const u = html(url);
  atomicWriteFile(
    path,
    `<!doctype html>\n<meta charset="utf-8">\n<meta name="referrer" content="no-referrer">\n<meta http-equiv="refresh" content="0;url=${u}">\n<title>mam ui</title>\n<p><a href="${u}">open the mam dashboard</a></p>\n`,
    { mode: 0o600 },
  );
  return path;
}

/** best-effort: open the page in the desktop's browser (never fails the command); returns the forwarding page to remove later */
function openBrowser(url: string, port: number): string | undefined {
  const cmd = process.platform === "darwin" ? "open" : "xdg-open";
  const bin = Bun.which(cmd);
  if (!bin) {
    err(`mam ui: ${cmd} not found; open the URL yourself`);
    return undefined;
  }
  let page: string;
  try {
    page = openerPage(url, port, process.env);
  } catch (e) {
    err(`mam ui: cannot write the page that opens the dashboard (${(e as Error).message}); open the URL yourself`);
    return undefined;
  }
  try {
    const p = Bun.spawn([bin, page], { env: withoutSecrets(process.env) as Record<string, string>, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    void p.exited.then((c) => c !== 0 && err(`mam ui: ${cmd} exited ${c}; open the URL yourself`));
  } catch (e) {
    err(`mam ui: could not run ${cmd} (${(e as Error).message}); open the URL yourself`);
  }
  return page;
}

export default defineCommand({
  meta: {
    name: "ui",
    description: "a live dashboard of the team and its jobs in your browser (127.0.0.1 only, token in the URL; read-only unless --allow-actions)",
    examples: [
      "mam ui                          # prints http://127.0.0.1:<port>/?token=…; Ctrl-C stops it",
      "mam ui --open                   # and opens it in the browser (xdg-open / open; the token stays out of their argv)",
      "mam ui --port 8765 --workspace ~/proj",
      "mam ui --allow-actions          # the page may stop / resume sessions, cancel jobs, send a line",
    ],
  },
  args: {
    ...workspaceArg,
    port: { type: "string", default: "0", description: "port on 127.0.0.1 (0: a free one)", valueHint: "N" },
    open: { type: "boolean", description: "open the page with xdg-open / open (best effort; they get a 0600 file that forwards to the URL, not the URL with its token)" },
    "allow-actions": { type: "boolean", description: "let the page stop / resume sessions, cancel jobs and send a line to an agent (each asks first)" },
  },
  async run({ args }) {
    const p = str(args, "port")!;
    if (!/^\d{1,5}$/.test(p) || Number(p) > 65535) throw usageError(`--port must be a port number 0-65535 (got '${p}')`);
    const ws = resolveWorkspace(str(args, "workspace"));
    const { startUi, liveMsFrom } = await import("../ui/server.ts");
    const actions = bool(args, "allow-actions");
    const ui = await startUi({ ws, env: process.env, port: Number(p), actions, liveMs: liveMsFrom(process.env) });
    out(ui.url);
    err(`mam ui: serving ${ws} on 127.0.0.1:${ui.port} (${actions ? "actions ON: the page can stop, resume, cancel and send" : "read-only; --allow-actions lets the page act"}); Ctrl-C stops it`);
    const page = bool(args, "open") ? openBrowser(ui.url, ui.port) : undefined;
    const code = await new Promise<number>((resolve) => {
      process.once("SIGINT", () => resolve(130));
      process.once("SIGTERM", () => resolve(143));
    });
    if (page) rmSync(page, { force: true });
    await ui.stop();
    return code;
  },
});

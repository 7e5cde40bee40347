// mam ui: the live local dashboard (lib/ui/server.ts) — parse, start, print the URL, wait for a
// signal, stop. Loaded lazily: no other command pays for the server or its page.
//
// --open never puts the token into another process's argv (issue 23, R7: any user of the machine
// reads argv in ps, and a browser started by the opener keeps its argv for its whole life): the
// opener gets the page that forwards to the URL, written 0600 into a 0700 folder under mam's
// per-user state while the server runs (lib/sys/ui-file.ts: notifications link to it too).
import { usageError } from "../sys/errors.ts";
import { err, out } from "../sys/io.ts";
import { resolveWorkspace } from "../sys/paths.ts";
import { withoutSecrets } from "../sys/secrets.ts";
import { bool, defineCommand, str, workspaceArg } from "./command.ts";
import { version } from "./version.ts";

/** best-effort: open the forwarding page in the desktop's browser (never fails the command) */
function openBrowser(page: string): void {
  const cmd = process.platform === "darwin" ? "open" : "xdg-open";
  const bin = Bun.which(cmd);
  if (!bin) {
    err(`mam ui: ${cmd} not found; open the URL yourself`);
    return;
  }
  try {
    const p = Bun.spawn([bin, page], { env: withoutSecrets(process.env) as Record<string, string>, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
    void p.exited.then((c) => c !== 0 && err(`mam ui: ${cmd} exited ${c}; open the URL yourself`));
  } catch (e) {
    err(`mam ui: could not run ${cmd} (${(e as Error).message}); open the URL yourself`);
  }
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
    const ui = await startUi({ ws, env: process.env, port: Number(p), actions, liveMs: liveMsFrom(process.env), version: version() });
    out(ui.url);
    err(`mam ui: serving ${ws} on 127.0.0.1:${ui.port} (${actions ? "actions ON: the page can stop, resume, cancel and send" : "read-only; --allow-actions lets the page act"}); Ctrl-C stops it`);
    if (bool(args, "open")) openBrowser(ui.page);
    const code = await new Promise<number>((resolve) => {
      process.once("SIGINT", () => resolve(130));
      process.once("SIGTERM", () => resolve(143));
    });
    await ui.stop();
    return code;
  },
});

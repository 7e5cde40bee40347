// mam ui: the live local dashboard (lib/ui/server.ts) — parse, start, print the URL, wait for a
// signal, stop. Loaded lazily: no other command pays for the server or its page.
import { usageError } from "../sys/errors.ts";
import { err, out } from "../sys/io.ts";
import { resolveWorkspace } from "../sys/paths.ts";
import { bool, defineCommand, str, workspaceArg } from "./command.ts";

/** best-effort: open the URL in the desktop's browser (never fails the command) */
function openBrowser(url: string): void {
  const cmd = process.platform === "darwin" ? "open" : "xdg-open";
  const bin = Bun.which(cmd);
  if (!bin) return err(`mam ui: ${cmd} not found; open the URL yourself`);
  try {
    const p = Bun.spawn([bin, url], { stdin: "ignore", stdout: "ignore", stderr: "ignore" });
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
      "mam ui --open                   # and opens it in the browser (xdg-open / open)",
      "mam ui --port 8765 --workspace ~/proj",
      "mam ui --allow-actions          # the page may stop / resume sessions, cancel jobs, send a line",
    ],
  },
  args: {
    ...workspaceArg,
    port: { type: "string", default: "0", description: "port on 127.0.0.1 (0: a free one)", valueHint: "N" },
    open: { type: "boolean", description: "open the page with xdg-open / open (best effort)" },
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
    if (bool(args, "open")) openBrowser(ui.url);
    const code = await new Promise<number>((resolve) => {
      process.once("SIGINT", () => resolve(130));
      process.once("SIGTERM", () => resolve(143));
    });
    await ui.stop();
    return code;
  },
});

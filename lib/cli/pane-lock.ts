// mam pane-lock path | acquire --fd N | wait-seconds (SPEC §4.1–4.2)
import { mkdirSync } from "node:fs";
import { acquireOnFd, paneClaimWaitSeconds } from "../sys/pane-lock.ts";
import { paneLockDir, paneLockPath, resolveHerdrServer } from "../sys/paths.ts";
import { out } from "../sys/io.ts";
import { defineCommand, str } from "./command.ts";

const path = defineCommand({
  meta: {
    name: "path",
    description: "print the pane-claim lock file of a herdr server (creates the lock folder, never the file)",
    examples: [
      'mam pane-lock path --session mam        # <home>/.local/state/mam/pane-lock/mam.lock',
      'mam pane-lock path                      # the server of the pane you run in, else default',
      'exec 9>>"$(mam pane-lock path --session mam)"; mam pane-lock acquire --fd 9',
    ],
  },
  args: {
    session: { type: "string", description: 'herdr server; empty, "default" or absent = the caller\'s own server', valueHint: "S" },
  },
  run({ args }) {
    const server = resolveHerdrServer(str(args, "session"));
    const p = paneLockPath(server);
    mkdirSync(paneLockDir(), { recursive: true, mode: 0o700 });
    out(p);
  },
});

const acquire = defineCommand({
  meta: {
    name: "acquire",
    description: "take an exclusive flock on an already-open descriptor; prints locked (exit 0) or timeout (exit 5)",
    examples: [
      'exec 9>>"$(mam pane-lock path --session mam)"',
      "mam pane-lock acquire --fd 9   # the lock stays with fd 9 of the calling shell",
      "exec 9>&-                      # release it",
    ],
  },
  args: {
    fd: { type: "string", required: true, description: "descriptor number, open in the calling process", valueHint: "N" },
  },
  async run({ args }) {
    const r = await acquireOnFd(str(args, "fd")!);
    out(r);
    return r === "locked" ? 0 : 5;
  },
});

const waitSeconds = defineCommand({
  meta: {
    name: "wait-seconds",
    description: "print the pane-claim wait budget in force (MAM_PANE_CLAIM_WAIT_S, decimal >= 1, else 120)",
  },
  run() {
    out(String(paneClaimWaitSeconds()));
  },
});

export default defineCommand({
  meta: {
    name: "pane-lock",
    description: "the per-herdr-server pane-claim lock (used by the herdr shim and by mam create)",
  },
  subCommands: { path, acquire, "wait-seconds": waitSeconds },
});

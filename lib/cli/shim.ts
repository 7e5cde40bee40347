// mam shim install [--dir DIR] [--workspace DIR]: write the herdr shim (SPEC §4.3); by default
// where mam's agents of the workspace find it (lib/mux/shim.ts: a folder of mam's, not the workspace's)
import { join, resolve } from "node:path";
import { out, outJson } from "../sys/io.ts";
import { resolveWorkspace } from "../sys/paths.ts";
import { installAgentShim, installShim } from "../mux/shim.ts";
import { bool, defineCommand, jsonArg, str, workspaceArg } from "./command.ts";

const install = defineCommand({
  meta: {
    name: "install",
    description: "write the herdr shim (an executable bash script named herdr) that serialises pane claims per server",
    examples: [
      "mam shim install                         # the one this workspace's agents use: ~/.local/state/mam/shims/<key>/herdr",
      "mam shim install --dir ~/.local/bin      # somewhere else",
      'export PATH="$(dirname "$(mam shim install)"):$PATH"   # this shell now goes through the shim',
      "mam shim install --json                  # {path}",
    ],
  },
  args: {
    dir: { type: "string", description: "folder to write herdr into (default: the folder of this workspace's agents' shim, under ~/.local/state/mam/shims/; created when missing)", valueHint: "DIR" },
    ...workspaceArg,
    ...jsonArg,
  },
  run({ args }) {
    const given = str(args, "dir");
    // --workspace is checked even when --dir decides where the shim goes
    const ws = resolveWorkspace(str(args, "workspace"));
    const path = given !== undefined && given !== "" ? installShim(resolve(given)) : join(installAgentShim(ws, process.env), "herdr");
    if (bool(args, "json")) outJson({ path });
    else out(path);
  },
});

export default defineCommand({
  meta: {
    name: "shim",
    description: "the herdr shim: a herdr stand-in for agents that takes the pane-claim lock around pane-claiming commands",
    examples: ["mam shim install", "mam shim install --dir /usr/local/lib/mam/bin"],
  },
  subCommands: { install },
});

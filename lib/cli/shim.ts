// mam shim install [--dir DIR] [--workspace DIR]: write the herdr shim (SPEC §4.3)
import { resolve } from "node:path";
import { EXIT, MamError } from "../sys/errors.ts";
import { out } from "../sys/io.ts";
import { ensureMamDir } from "../sys/mam-dir.ts";
import { mamDir, resolveWorkspace } from "../sys/paths.ts";
import { installShim } from "../mux/shim.ts";
import { defineCommand, str, workspaceArg } from "./command.ts";

const install = defineCommand({
  meta: {
    name: "install",
    description: "write the herdr shim (an executable bash script named herdr) that serialises pane claims per server",
    examples: [
      "mam shim install                         # <workspace>/.mam/bin/herdr",
      "mam shim install --dir ~/.local/bin      # somewhere else",
      'export PATH="$PWD/.mam/bin:$PATH"        # agents now go through the shim',
    ],
  },
  args: {
    dir: { type: "string", description: "folder to write herdr into (default: <workspace>/.mam/bin; created when missing)", valueHint: "DIR" },
    ...workspaceArg,
  },
  run({ args }) {
    const given = str(args, "dir");
    // --workspace is checked even when --dir decides where the shim goes
    const ws = resolveWorkspace(str(args, "workspace"));
    let dir: string;
    if (given !== undefined && given !== "") {
      dir = resolve(given);
    } else {
      const m = mamDir(ws);
      try {
        ensureMamDir(ws); // with its .gitignore
      } catch (e) {
        if (e instanceof MamError) throw e;
        throw new MamError(`cannot create ${m}: ${(e as Error).message}`, EXIT.FAIL);
      }
      dir = resolve(m, "bin");
    }
    out(installShim(dir));
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

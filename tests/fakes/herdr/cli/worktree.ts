// `herdr worktree list|create|open|remove` as herdr 0.8.0 parses them (src/cli/worktree.rs):
// `--flag value` pairs, `--workspace` and `--cwd` exclusive, `--json` a hidden no-op, the output
// always the JSON response.
import type { Json } from "../common/client.ts";
import { CliUsage, type Parsed, type Spec } from "./args.ts";

interface WorktreeCmd {
  spec: Spec;
  build: (p: Parsed) => { method: string; params: Json };
}

const drop = <T extends Json>(o: T): T => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;

const CREATE_USAGE = "usage: herdr worktree create [--workspace ID | --cwd PATH] [--branch NAME] [--base REF] [--path PATH] [--label TEXT] [--focus] [--no-focus]";
const OPEN_USAGE = "usage: herdr worktree open [--workspace ID | --cwd PATH] (--path PATH | --branch NAME) [--label TEXT] [--focus] [--no-focus]";

function exclusive(p: Parsed, usage: string): void {
  if (p.flags["--workspace"] !== undefined && p.flags["--cwd"] !== undefined) throw new CliUsage(usage);
}

/** herdr's --focus/--no-focus: the last one wins, default no focus */
const focus = (p: Parsed) => p.bools.has("--focus") && !p.bools.has("--no-focus");

export const worktreeCommands: Record<string, WorktreeCmd> = {
  list: {
    spec: { usage: "usage: herdr worktree list [--workspace ID | --cwd PATH]", flags: { "--workspace": "value", "--cwd": "value", "--json": "bool" } },
    build: (p) => {
      exclusive(p, "usage: herdr worktree list [--workspace ID | --cwd PATH]");
      return { method: "worktree.list", params: drop({ workspace_id: p.flags["--workspace"], cwd: p.flags["--cwd"] }) };
    },
  },
  create: {
    spec: {
      usage: CREATE_USAGE,
      flags: { "--workspace": "value", "--cwd": "value", "--branch": "value", "--base": "value", "--path": "value", "--label": "value", "--focus": "bool", "--no-focus": "bool", "--json": "bool" },
    },
    build: (p) => {
      exclusive(p, CREATE_USAGE);
      const f = p.flags;
      return { method: "worktree.create", params: drop({ workspace_id: f["--workspace"], cwd: f["--cwd"], branch: f["--branch"], base: f["--base"], path: f["--path"], label: f["--label"], focus: focus(p) }) };
    },
  },
  open: {
    spec: { usage: OPEN_USAGE, flags: { "--workspace": "value", "--cwd": "value", "--path": "value", "--branch": "value", "--label": "value", "--focus": "bool", "--no-focus": "bool", "--json": "bool" } },
    build: (p) => {
      exclusive(p, OPEN_USAGE);
      const f = p.flags;
      if ((f["--path"] === undefined) === (f["--branch"] === undefined)) throw new CliUsage(OPEN_USAGE);
      return { method: "worktree.open", params: drop({ workspace_id: f["--workspace"], cwd: f["--cwd"], path: f["--path"], branch: f["--branch"], label: f["--label"], focus: focus(p) }) };
    },
  },
  remove: {
    spec: { usage: "usage: herdr worktree remove --workspace ID [--force]", flags: { "--workspace": "value", "--force": "bool", "--json": "bool" } },
    build: (p) => {
      const id = p.flags["--workspace"];
      if (id === undefined) throw new CliUsage("usage: herdr worktree remove --workspace ID [--force]");
      return { method: "worktree.remove", params: { workspace_id: id, force: p.bools.has("--force") } };
    },
  },
};

// How mam runs itself: the compiled binary, or `bun mam.ts` from source (and, from that, the
// command an agent's MCP config runs to reach this mam's MCP server). Never process.argv[0/1]
// (in a compiled binary they are "bun" and a virtual /$bunfs path).
import { join } from "node:path";

export function selfCommand(): string[] {
  if (Bun.isStandaloneExecutable) return [process.execPath];
  // from source Bun.main may be a test file or a script that imported mam's modules
  const main = Bun.main.endsWith("/mam.ts") ? Bun.main : join(import.meta.dir, "..", "..", "mam.ts");
  return [process.execPath, main];
}

/** a command as an MCP client config names it: the program, then its arguments */
export interface ServerEntry {
  command: string;
  args: string[];
}

/** the command that runs this mam as the workspace's MCP server (`mam mcp --workspace <ws>`) */
export function serverEntry(ws: string, self: string[] = selfCommand()): ServerEntry {
  return { command: self[0]!, args: [...self.slice(1), "mcp", "--workspace", ws] };
}

/** the environment for a child mam, without the switch that turns any Bun binary into bun */
export function childEnv(env: Record<string, string | undefined> = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && k !== "BUN_BE_BUN") out[k] = v;
  return out;
}

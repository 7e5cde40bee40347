// Real tmux for tests: a private server per test (its socket under the sandbox through
// TMUX_TMPDIR), killed afterwards, and small agent scripts.
import { chmodSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { anchoredPids, waitFor } from "./sandbox.ts";

export const TMUX_BIN = Bun.which("tmux");

let n = 0;
/** a server name unique to this test process and call */
export function tmuxServerName(prefix = "mamt"): string {
  return `${prefix}-${process.pid}-${++n}`;
}

/** kill the server, then wait (bounded) until its processes anchored in root are gone */
export async function killTmuxServer(server: string, env: Record<string, string>, root?: string): Promise<void> {
  if (!TMUX_BIN) return;
  const p = Bun.spawn([TMUX_BIN, "-L", server, "kill-server"], { env, stdout: "ignore", stderr: "ignore" });
  await p.exited;
  if (root) await waitFor(() => anchoredPids(root).length === 0, 3000);
}

/** write an executable script into dir */
export function writeScript(dir: string, name: string, body: string): string {
  const p = join(dir, name);
  writeFileSync(p, body.startsWith("#!") ? body : `#!/usr/bin/env bash\n${body}\n`);
  chmodSync(p, 0o755);
  return p;
}

/** an agent that says it is ready, then echoes every line it reads, prefixed with "got: " */
export const ECHO_AGENT = `#!/usr/bin/env bash
echo "echo-agent ready in $PWD (MAM_TEST_VAR=\${MAM_TEST_VAR:-})"
while IFS= read -r line; do printf 'got: %s\\n' "$line"; done
`;

/** an agent that fails at once, like claude without network */
export const FAILING_AGENT = `#!/usr/bin/env bash
echo "starting up"
echo "Unable to connect to Anthropic services"
exit 1
`;

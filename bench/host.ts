// One workspace as tests/helpers/team.ts makes a host, for the bench areas that run the binary
// with its daemon and demo agents (queue, unattended, merge): its own HOME, tmux server and
// daemon with its default poll intervals (the helper's are for tests); no broker (the journals are
// the channel, as on a fresh machine). Everything it started is stopped and removed after.
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { makeSandbox, type Sandbox } from "../tests/helpers/sandbox.ts";
import { type Host, makeHost } from "../tests/helpers/team.ts";
import { NO_BROKER, type Row } from "./common.ts";

export async function onBenchHost(area: string, name: string, bin: string, extra: Record<string, string>, fn: (h: Host) => Promise<Row[]>): Promise<Row[]> {
  let sb: Sandbox | undefined;
  let h: Host | undefined;
  try {
    sb = makeSandbox(`mam-bench-${area}-`);
    h = makeHost(sb.root, name, NO_BROKER, { RECONCILE_POLL_INTERVAL: "15", ...extra }, [bin]);
    mkdirSync(join(h.ws, ".mam", "jobs"), { recursive: true, mode: 0o700 });
    return await fn(h);
  } finally {
    await h?.stop().catch((e) => console.error(`bench ${area}: stopping: ${(e as Error).message}`));
    await sb?.cleanup().catch((e) => console.error(`bench ${area}: ${(e as Error).message}`));
  }
}

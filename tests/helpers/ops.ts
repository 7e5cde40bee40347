// Running operations in a test process: Deps for a temp workspace (the real registry, job store,
// git and clock; fakes where a test hands them in), and an op run as the front doors run it
// (input checked by the op, then run).
import { parseInput } from "../../lib/ops/input.ts";
import type { Deps } from "../../lib/ops/deps.ts";
import type { AnyOp, OpContext } from "../../lib/ops/op.ts";
import { realDeps } from "../../lib/ops/wiring.ts";
import type { Env } from "../../lib/sys/paths.ts";

/** a daemon control that starts nothing and says it is off (as MAM_NO_SUBSCRIBER_DAEMON=1 does) */
export const noDaemon: Deps["daemon"] = {
  ensure: async () => ({ pid: undefined, started: false, disabled: true }),
  status: () => undefined,
  stop: async () => undefined,
};

/** Deps of a workspace: the real ones, with `over` in their place */
export function testDeps(ws: string, over: Partial<Deps> = {}, env: Env = { ...process.env, MAM_NO_SUBSCRIBER_DAEMON: "1" }): Deps {
  return { ...realDeps(ws, env), daemon: noDaemon, ...over };
}

export const testContext = (o: Partial<OpContext> = {}): OpContext => ({ signal: new AbortController().signal, progress: () => {}, surface: "internal", form: "json", ...o });

/** check `raw` as the op's input, then run the op */
export async function runOp<T = unknown>(op: AnyOp, deps: Deps, raw: Record<string, unknown>, ctx: Partial<OpContext> = {}): Promise<T> {
  return (await op.run(deps, parseInput(op, raw) as never, testContext(ctx))) as T;
}

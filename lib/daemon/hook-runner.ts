// How the daemon runs its hooks: one at a time, in order, each with a deadline (a hook that
// overruns is logged and left behind, its signal aborted), never awaited on the way out; and what
// a hook puts aside (HookContext.aside), one at a time per lane, beside the hooks.
import type { HookContext } from "../ops/react/context.ts";
import type { Life } from "./life.ts";

/** what every hook's context holds besides its own signal and `aside` */
type BaseContext = Omit<HookContext, "signal" | "aside">;

export interface HookRunner {
  /** run a hook after the ones before it: its result, or undefined when it failed, overran or the daemon stops */
  run<T>(name: string, fn: (ctx: HookContext) => Promise<T>): Promise<T | undefined>;
  /** run `fn` beside the hooks, after what was put aside on the same lane */
  aside(lane: string, name: string, fn: (ctx: HookContext) => Promise<void>): void;
}

/** the daemon's hook runner; `base` is asked for each hook's context as the hook starts */
export function hookRunner(life: Life, deadlineMs: number, base: () => BaseContext): HookRunner {
  let chain: Promise<unknown> = Promise.resolve();
  /** what hooks put aside, per lane: one at a time, in order, beside the hooks */
  const lanes = new Map<string, Promise<void>>();
  const runner: HookRunner = {
    run(name, fn) {
      const next = chain.then(() => runBody(name, fn));
      chain = next.catch(() => {});
      return next;
    },
    aside(lane, name, fn) {
      const next = (lanes.get(lane) ?? Promise.resolve()).then(() => runBody(name, fn)).then(
        () => undefined,
        () => undefined,
      );
      lanes.set(lane, next);
      void next.then(() => {
        if (lanes.get(lane) === next) lanes.delete(lane);
      });
    },
  };
  const aside = (lane: string, n: string, f: (ctx: HookContext) => Promise<void>) => runner.aside(lane, n, f);
  const ctxOf = (signal: AbortSignal): HookContext => ({ ...base(), signal, aside });
  const runBody = <T>(name: string, fn: (ctx: HookContext) => Promise<T>) => withDeadline(life, deadlineMs, name, fn, ctxOf);
  return runner;
}

/** one hook's run, with its context and deadline: undefined when it failed, overran or the daemon stops */
async function withDeadline<T>(life: Life, deadlineMs: number, name: string, fn: (ctx: HookContext) => Promise<T>, ctxOf: (signal: AbortSignal) => HookContext): Promise<T | undefined> {
  if (life.signal.aborted) return undefined;
  const ac = new AbortController();
  const onStop = () => ac.abort();
  life.signal.addEventListener("abort", onStop, { once: true });
  let timer: ReturnType<typeof setTimeout> | undefined;
  const overrun = new Promise<undefined>((r) => {
    timer = setTimeout(() => {
      life.log(`${name} did not finish within ${deadlineMs / 1000} s; moving on`);
      ac.abort();
      r(undefined);
    }, deadlineMs);
  });
  try {
    return await Promise.race([fn(ctxOf(ac.signal)), overrun, life.stopped.then(() => undefined)]);
  } catch (e) {
    if (!life.signal.aborted) life.log(`${name} failed: ${(e as Error)?.message ?? String(e)}`);
    return undefined;
  } finally {
    clearTimeout(timer);
    life.signal.removeEventListener("abort", onStop);
  }
}

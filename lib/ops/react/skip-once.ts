// What the daemon will not act on (a queued job or a schedule this user's mam did not write: a
// cloned repository's) is said once per file and reason, not every second.
import type { HookContext } from "./context.ts";

export class SkipOnce {
  private said = new Set<string>();
  /** log `line` unless `key` was logged before */
  say(ctx: HookContext, key: string, line: string): void {
    if (this.said.has(key)) return;
    this.said.add(key);
    ctx.log(line);
  }
}

// Runs in the bun test process before any test file. Children only see the env a test passes
// them (tests/helpers/sandbox.ts builds it from scratch), so this only tidies the test process.
process.env.NO_COLOR = "1";
delete process.env.TMUX;
delete process.env.TMUX_PANE;
delete process.env.BUN_BE_BUN;

// what a test that timed out started (its cleanup never ran) is killed once the file's tests end
import { afterAll } from "bun:test";
import { reapAbandoned } from "./helpers/sandbox.ts";

afterAll(async () => {
  const roots = await reapAbandoned();
  if (roots.length) console.error(`reaped what tests left running in ${roots.join(", ")}`);
});

// The harness itself: one real claude turn and one real codex turn against the scripted model
// endpoint, in a private tmux server, without mam. If these fail, the mam tests beside them
// cannot say anything.
import { afterEach, expect, test } from "bun:test";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { jobWorker } from "../fakes/model-api/scripts.ts";
import { codexDaemons, type RealAgentWorld, realAgentWorld, agentExe, typeAndSubmit, waitScreen, claudeFooter } from "../helpers/real-agents.ts";

let w: RealAgentWorld | undefined;
afterEach(async () => {
  await w?.cleanup();
  w = undefined;
});

async function startIn(w: RealAgentWorld, exe: string): Promise<string> {
  const env = Object.entries(w.env).map(([k, v]) => `${k}=${v}`);
  const r = await w.tmux(["new-session", "-d", "-P", "-F", "#{pane_id}", "-s", "h", "-x", "120", "-y", "40", "-c", w.sb.ws, "env", ...env, agentExe(exe)]);
  expect(r.code).toBe(0);
  return r.stdout.trim();
}

test("a real claude turn: prompt box, one message to the endpoint, the answer on screen", async () => {
  w = await realAgentWorld({ script: jobWorker({ answer: (t) => `echo of ${t.lastUserText.split("\n").pop()}` }) });
  const pane = await startIn(w, "claude");
  await waitScreen(w, pane, claudeFooter, "claude's prompt box");
  await typeAndSubmit(w, pane, "harness hello");
  await waitScreen(w, pane, (s) => s.includes("echo of harness hello"), "the scripted answer");
  const turns = w.api.turns("anthropic");
  expect(turns.length).toBe(1);
  expect(turns[0]!.lastUserText).toContain("harness hello");
  // the conversation file is in the test's own config dir
  expect(existsSync(join(w.claudeConfigDir, "projects"))).toBe(true);
}, 90_000);

test("a real codex turn: the custom provider, one message, the answer on screen; its app-server ends in teardown", async () => {
  w = await realAgentWorld({ script: jobWorker({ answer: (t) => `echo of ${t.lastUserText}` }) });
  const pane = await startIn(w, "codex");
  // codex is ready once its footer names the model (before that, typed text waits while it starts; SCREENS.md)
  await waitScreen(w, pane, (s) => s.includes("› ") && s.includes("mock-model"), "codex's prompt");
  await typeAndSubmit(w, pane, "harness hello");
  await waitScreen(w, pane, (s) => s.includes("echo of harness hello"), "the scripted answer");
  expect(w.api.turns("openai").map((t) => t.lastUserText)).toEqual(["harness hello"]);
  const home = w.codexHome;
  await w.cleanup();
  w = undefined;
  expect(codexDaemons(home)).toEqual([]);
}, 90_000);

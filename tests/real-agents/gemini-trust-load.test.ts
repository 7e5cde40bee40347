// gemini's trust dialog under load (issue 39 #0): Gemini CLI draws its input box before its "Do
// you trust the files in this folder?" dialog, for longer on a busy machine; the 1-second
// steady-prompt rule alone once typed an onboarding into the dialog (which saved TRUST_PARENT for
// the user). mam now asks gemini's own records first (settings.json, trustedFolders.json): while
// they say the folder is not trusted, it types nothing. Ten creates beside two CPU hogs: none
// answered (trustedFolders.json unchanged, no onboarding sent or shown in the dialog, nothing
// reaches the model).
import { afterEach, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { jobWorker } from "../fakes/model-api/scripts.ts";
import { geminiLeftovers, type RealAgentWorld, realAgentWorld } from "../helpers/real-agents.ts";
import { waitFor } from "../helpers/sandbox.ts";

let w: RealAgentWorld | undefined;
let hogs: ReturnType<typeof Bun.spawn>[] = [];
afterEach(async () => {
  for (const h of hogs) h.kill();
  hogs = [];
  await w?.cleanup();
  w = undefined;
});

/** the number of creates (MAM_TRUST_LOAD_RUNS: more runs to measure a rate) */
const RUNS = Number(process.env.MAM_TRUST_LOAD_RUNS ?? 10);

test(`real gemini in a folder it does not trust, ${RUNS} creates beside two CPU hogs: the trust dialog is never answered`, async () => {
  w = await realAgentWorld({ script: jobWorker(), trustGemini: false });
  const trusted = join(w.sb.with({}).HOME!, ".gemini", "trustedFolders.json");
  const before = readFileSync(trusted, "utf8");
  hogs = [0, 1].map(() => Bun.spawn(["sh", "-c", "exec yes > /dev/null"]));
  const answered: string[] = [];
  for (let i = 0; i < RUNS; i++) {
    const name = `g${i}`;
    const c = await w.mam(["create", "--agent", "gemini", "--mux", "tmux", "--tmux-server", w.server, "--session", name, "--json"]);
    expect(c.code, c.stdout + c.stderr).toBe(0);
    const r = JSON.parse(c.stdout);
    const screen = await w.screen(`=${name}:`);
    const now = readFileSync(trusted, "utf8");
    // anything but "waits at its trust dialog, nothing typed" is a loss of the race: mam took the
    // box gemini draws before its dialog for its prompt (and typed, or tried to)
    if (r.at_prompt !== false || r.waiting_at !== 'its "trust this folder" dialog' || r.onboarding !== "not sent" || now !== before || screen.includes(`You are ${name}`)) {
      answered.push(`${name}: at_prompt ${r.at_prompt}, onboarding ${r.onboarding}, ${r.warnings.join(" ")}; trustedFolders.json ${now === before ? "unchanged" : now}`);
    }
    // close it without a word typed (a stop would type /quit): its processes, then its pane
    const s = await w.mam(["stop", name, "--hard"]);
    expect(s.code, s.stdout + s.stderr).toBe(0);
    await waitFor(() => geminiLeftovers(w!.sb.root).length === 0, 10_000, 100);
  }
  for (const h of hogs) h.kill();
  hogs = [];
  expect(answered).toEqual([]);
  expect(readFileSync(trusted, "utf8")).toBe(before);
  expect(w.api.turns()).toHaveLength(0);
}, 900_000);

// On herdr a session's kind and role live in its pane's label, `mam:<name> (<kind>, <role>)`
// (lib/mux/label.ts; issue 39 item 12, review R33): herdr keeps a pane's label and gives it back in
// every listing, and it is the one thing of a pane herdr keeps that mam can write. So a
// `mam registry rebuild` keeps each agent's kind and role, and a `mam create` killed with kill -9
// after its agent started (before its row) leaves a pane the daemon registers whole, which stops
// and resumes as any session; a Ctrl-C or SIGTERM at that moment closes the pane, as on tmux
// (issue 39 item 2). A label an older mam wrote (`mam:<name>`) still reads: the role
// then comes from the .bak, else `unknown`, as before.
// The compiled binary against the fake herdr (tests/fakes/herdr) and the fake agents.
import { describe, expect, test } from "bun:test";
import { rmSync, writeFileSync } from "node:fs";
import { MAM_CMD, type RunResult } from "../helpers/mam.ts";
import { ok, SERVER, type World, withWorld } from "../helpers/herdr-world.ts";
import { waitFor } from "../helpers/sandbox.ts";

/** the pane herdr lists with this label, once it does */
async function paneLabelled(w: World, label: string): Promise<string | undefined> {
  return (await w.panes()).find((p) => p.label === label)?.pane_id;
}

describe.concurrent("herdr: the kind and role in the pane's label", () => {
  test("registry rebuild keeps each agent's kind and role; a pane an older mam labelled reads as before", async () => {
    await withWorld({}, async (w) => {
      ok(await w.create("claude", ["--role", "lead dev", "--session", "lead"]));
      ok(await w.create("codex", ["--role", "reviewer, (2nd)", "--session", "rev"]));
      ok(await w.create("claude", ["--role", "planner", "--session", "old"]));
      const panes = await w.panes();
      const id = Object.fromEntries(["lead", "rev", "old"].map((n) => [n, w.row(n).pane.id as string]));
      expect(panes.find((p) => p.pane_id === id.lead)?.label).toBe("mam:lead (claude, lead dev)");
      expect(panes.find((p) => p.pane_id === id.rev)?.label).toBe("mam:rev (codex, reviewer, (2nd))");
      // as an older mam labelled its panes: the session's name only
      await w.h.call("pane.rename", { pane_id: id.old, label: "mam:old" });
      // the registry broken, no .bak
      writeFileSync(w.reg, "garbage: [unclosed\n");
      rmSync(`${w.reg}.bak`, { force: true });

      const dry = ok(await w.mam(["registry", "rebuild", "--herdr-session", SERVER]));
      expect(dry.stdout).toContain("would register 3 sessions:\n");
      expect(dry.stdout).toContain(`  lead  herdr pane ${id.lead} on ${SERVER} (claude, role lead dev)\n`);
      expect(dry.stdout).toContain(`  rev  herdr pane ${id.rev} on ${SERVER} (codex, role reviewer, (2nd))\n`);
      expect(dry.stdout).toContain(`  old  herdr pane ${id.old} on ${SERVER} (claude, role unknown)\n`);

      const doc = JSON.parse(ok(await w.mam(["registry", "rebuild", "--yes", "--json", "--herdr-session", SERVER])).stdout);
      expect(doc.registered.map((r: Record<string, unknown>) => [r.name, r.agent, r.role]).sort()).toEqual([
        ["lead", "claude", "lead dev"],
        ["old", "claude", "unknown"],
        ["rev", "codex", "reviewer, (2nd)"],
      ]);
      expect(w.rows().map((r) => [r.name, r.status, r.agent, r.role, r.herdr_server]).sort()).toEqual([
        ["lead", "running", "claude", "lead dev", SERVER],
        ["old", "running", "claude", "unknown", SERVER],
        ["rev", "running", "codex", "reviewer, (2nd)", SERVER],
      ]);
      // reachable again: a job by role finds its agent
      const st = JSON.parse(ok(await w.mam(["status", "--json"])).stdout);
      expect(st.sessions.map((s: { name: string; role: string }) => [s.name, s.role]).sort()).toEqual([
        ["lead", "lead dev"],
        ["old", "unknown"],
        ["rev", "reviewer, (2nd)"],
      ]);
      for (const n of ["lead", "rev", "old"]) ok(await w.mam(["stop", n, "--hard"]));
    });
  }, 120_000);

  for (const [sig, code] of [["SIGINT", 130], ["SIGTERM", 143]] as const) {
    test(`${sig} to a create on herdr after its agent started, before its row: the pane is closed, no row, the daemon's pass registers nothing`, async () => {
      // the fake claude takes 4 s to reach its prompt: herdr's agent start waits for it, mam's row waits for that
      await withWorld({ herdrEnv: { FAKE_AGENT_START_DELAY_MS: "4000" } }, async (w) => {
        ok(await w.create("claude", ["--role", "base", "--session", "base"]));
        const label = "mam:intr (claude, lead)";
        const args = ["create", "--agent", "claude", "--herdr-session", SERVER, "--role", "lead", "--session", "intr", "--no-onboard", "--workspace", w.ws];
        const p = Bun.spawn([...MAM_CMD, ...args], { env: w.env, cwd: w.ws, stdout: "pipe", stderr: "pipe" });
        const stderr = new Response(p.stderr).text();
        const seen = await waitFor(async () => (await paneLabelled(w, label)) !== undefined, 20_000, 20);
        if (!seen) {
          p.kill("SIGKILL");
          throw new Error(`the create never labelled its pane: ${await stderr}`);
        }
        const pane = (await paneLabelled(w, label))!;
        p.kill(sig);
        expect(await p.exited).toBe(code);
        expect(await stderr).toContain(`ERROR: the create of 'intr' was interrupted by ${sig}: closed its agent's pane`);
        // its pane is gone, and no row names it; the daemon's pass finds nothing to register
        expect((await w.panes()).some((x) => x.pane_id === pane)).toBe(false);
        expect(w.rows().filter((r) => r.name === "intr")).toEqual([]);
        ok(await w.mam(["reconcile"]));
        expect(w.rows().filter((r) => r.name === "intr" || r.role === "unknown")).toEqual([]);
        ok(await w.mam(["stop", "base", "--hard"]));
      });
    }, 120_000);
  }

  test("a create killed with kill -9 after its agent started: the daemon's pass registers the pane with its kind and role, and it stops and resumes", async () => {
    // the fake claude takes 4 s to reach its prompt: herdr's agent start waits for it, mam's row waits for that
    await withWorld({ herdrEnv: { FAKE_AGENT_START_DELAY_MS: "4000" } }, async (w) => {
      // a session of the workspace on this server already: the daemon's pass looks at the servers of its rows
      ok(await w.create("claude", ["--role", "base", "--session", "base"]));
      const label = "mam:killed (claude, lead)";
      const args = ["create", "--agent", "claude", "--herdr-session", SERVER, "--role", "lead", "--session", "killed", "--no-onboard", "--workspace", w.ws];
      const p = Bun.spawn([...MAM_CMD, ...args], { env: w.env, cwd: w.ws, stdout: "pipe", stderr: "pipe" });
      const stderr = new Response(p.stderr).text();
      // the pane is labelled as soon as mam sees its agent in it, before herdr says it is ready
      const seen = await waitFor(async () => (await paneLabelled(w, label)) !== undefined, 20_000, 20);
      if (!seen) {
        p.kill("SIGKILL");
        throw new Error(`the create never labelled its pane: ${await stderr}`);
      }
      p.kill("SIGKILL");
      expect(await p.exited).toBe(137);
      const rowsNamed = () => {
        try {
          return w.rows().filter((r) => r.name === "killed");
        } catch {
          return []; // no registry file yet
        }
      };
      expect(rowsNamed()).toEqual([]);
      const pane = (await paneLabelled(w, label))!;
      // the agent runs on without a row; the daemon's reconcile pass finds it, with its kind and role
      const rec = ok(await w.mam(["reconcile"]));
      expect(rec.stdout).toContain("unregistered-pane");
      expect(rowsNamed()).toEqual([expect.objectContaining({ status: "running", role: "lead", agent: "claude", pane: expect.objectContaining({ id: pane }) })]);
      // once at its prompt, it can be stopped and resumed as any session (its conversation: the one herdr or its store names)
      expect(await waitFor(async () => (await w.panes()).find((x) => x.pane_id === pane)?.agent_status === "idle", 20_000, 100)).toBe(true);
      ok(await w.mam(["reconcile"]));
      const stop = await w.mam(["stop", "killed"]);
      expect(stop.code, `${stop.stdout}${stop.stderr}`).toBe(0);
      const resume: RunResult = await w.mam(["resume", "killed"]);
      expect(resume.code, `${resume.stdout}${resume.stderr}`).toBe(0);
      const row = w.row("killed");
      expect(row).toMatchObject({ status: "running", role: "lead", agent: "claude" });
      expect((await w.panes()).find((x) => x.pane_id === row.pane.id)?.label).toBe(label);
      for (const n of ["killed", "base"]) ok(await w.mam(["stop", n, "--hard"]));
    });
  }, 120_000);
});
